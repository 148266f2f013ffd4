/**
 * Table properties that maintenance reads: the checkpoint interval and the retention durations,
 * with Delta's defaults and Spark's interval syntax.
 *
 * 1. A duration is Spark calendar-interval text, `interval 30 days`, `interval 1 week 2 hours`,
 *    or the same without the `interval` keyword (Delta prepends it); units from weeks down to
 *    microseconds, singular or plural, case-insensitive.
 * 2. Months and years are refused, as Delta refuses them for these properties: a month has no
 *    fixed length, so a retention in months would not be a duration.
 * 3. A property that is absent or does not parse falls back to Delta's default, so a typo in an
 *    old table cannot stop maintenance (Delta validates these when they are set).
 */

import { MILLIS_PER_DAY } from "../values/calendar.ts";

/** Spark's defaults (DeltaConfigs). */
export const DEFAULT_CHECKPOINT_INTERVAL = 10;
export const DEFAULT_LOG_RETENTION = "interval 30 days";
export const DEFAULT_DELETED_FILE_RETENTION = "interval 1 week";

/** Spark's CalendarInterval: months, days and microseconds, kept apart as Spark keeps them. */
export interface CalendarInterval {
  months: number;
  days: number;
  micros: bigint;
}

const MICROS_PER_SECOND = 1_000_000n;
const MICROS_PER_DAY = BigInt(MILLIS_PER_DAY) * 1000n;

/** Where each unit's amount goes: months, days, or microseconds (per unit). */
const UNITS: Record<string, { months?: number; days?: number; micros?: bigint }> = {
  year: { months: 12 },
  month: { months: 1 },
  week: { days: 7 },
  day: { days: 1 },
  hour: { micros: 3_600n * MICROS_PER_SECOND },
  minute: { micros: 60n * MICROS_PER_SECOND },
  second: { micros: MICROS_PER_SECOND },
  millisecond: { micros: 1_000n },
  microsecond: { micros: 1n },
};

/**
 * A Spark interval string (step 1) as months, days and microseconds; undefined when it is not
 * one. Amounts are whole numbers, signed, optionally quoted; seconds also take up to six
 * fraction digits.
 */
export function parseCalendarInterval(text: string): CalendarInterval | undefined {
  let s = text.trim().toLowerCase();
  if (s.startsWith("interval")) s = s.slice("interval".length).trim();
  if (s === "") return undefined;
  const tokens = s.split(/\s+/);
  if (tokens.length % 2 !== 0) return undefined;
  const out: CalendarInterval = { months: 0, days: 0, micros: 0n };
  for (let i = 0; i < tokens.length; i += 2) {
    const amount = tokens[i]!.replace(/^'(.*)'$/, "$1");
    const unitName = tokens[i + 1]!.replace(/s$/, "");
    const unit = UNITS[unitName];
    if (unit === undefined) return undefined;
    if (unitName === "second") {
      const m = /^([+-]?)(\d+)(?:\.(\d{1,6}))?$/.exec(amount);
      if (m === null) return undefined;
      const micros = BigInt(m[2]!) * MICROS_PER_SECOND + BigInt((m[3] ?? "").padEnd(6, "0"));
      out.micros += m[1] === "-" ? -micros : micros;
      continue;
    }
    if (!/^[+-]?\d+$/.test(amount)) return undefined;
    const n = BigInt(amount);
    out.months += Number(n) * (unit.months ?? 0);
    out.days += Number(n) * (unit.days ?? 0);
    out.micros += n * (unit.micros ?? 0n);
  }
  return out;
}

/** The length of an interval without months, in microseconds. */
export const intervalMicros = (i: CalendarInterval): bigint =>
  BigInt(i.days) * MICROS_PER_DAY + i.micros;

/** Milliseconds of a Spark interval string; throws on text Delta would reject. */
export function parseIntervalMs(text: string): number {
  const interval = parseCalendarInterval(text);
  if (interval === undefined) throw new Error(`Not an interval: '${text}'`);
  if (interval.months !== 0) {
    throw new Error(`Interval '${text}' uses months or years, which have no fixed length`);
  }
  const micros = intervalMicros(interval);
  if (micros < 0n) throw new Error(`Interval '${text}' is negative`);
  return Number(micros / 1000n);
}

function durationMs(configuration: Record<string, string>, key: string, fallback: string): number {
  const raw = configuration[key];
  if (raw !== undefined) {
    try {
      return parseIntervalMs(raw);
    } catch {
      // Falls through to the default (step 3).
    }
  }
  return parseIntervalMs(fallback);
}

/** `delta.logRetentionDuration` in ms (30 days by default). */
export function logRetentionMs(configuration: Record<string, string>): number {
  return durationMs(configuration, "delta.logRetentionDuration", DEFAULT_LOG_RETENTION);
}

/** `delta.deletedFileRetentionDuration` in ms (1 week by default). */
export function deletedFileRetentionMs(configuration: Record<string, string>): number {
  return durationMs(
    configuration,
    "delta.deletedFileRetentionDuration",
    DEFAULT_DELETED_FILE_RETENTION,
  );
}

/** `delta.checkpointInterval`: commits between checkpoints (10 by default). */
export function checkpointInterval(configuration: Record<string, string>): number {
  const raw = configuration["delta.checkpointInterval"];
  if (raw === undefined || !/^\s*\+?\d+\s*$/.test(raw)) return DEFAULT_CHECKPOINT_INTERVAL;
  const n = Number(raw);
  return n >= 1 ? n : DEFAULT_CHECKPOINT_INTERVAL;
}

/**
 * `delta.isolationLevel`: WriteSerializable when the table says so, else Serializable (Delta's
 * default for writes).
 */
export function isolationLevelOf(
  configuration: Record<string, string>,
): "Serializable" | "WriteSerializable" {
  return configuration["delta.isolationLevel"] === "WriteSerializable"
    ? "WriteSerializable"
    : "Serializable";
}
