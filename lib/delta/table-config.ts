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

const UNIT_MS: Record<string, number> = {
  week: 7 * MILLIS_PER_DAY,
  day: MILLIS_PER_DAY,
  hour: 3_600_000,
  minute: 60_000,
  second: 1_000,
  millisecond: 1,
  microsecond: 0.001,
};

/** Milliseconds of a Spark interval string; throws on text Delta would reject. */
export function parseIntervalMs(text: string): number {
  let s = text.trim().toLowerCase();
  if (s.startsWith("interval")) s = s.slice("interval".length).trim();
  if (s === "") throw new Error(`Not an interval: '${text}'`);
  const tokens = s.split(/\s+/);
  if (tokens.length % 2 !== 0) throw new Error(`Not an interval: '${text}'`);
  let ms = 0;
  for (let i = 0; i < tokens.length; i += 2) {
    const amount = tokens[i]!.replace(/^'(.*)'$/, "$1");
    const unit = tokens[i + 1]!.replace(/s$/, "");
    if (unit === "month" || unit === "year") {
      throw new Error(`Interval '${text}' uses ${unit}s, which have no fixed length`);
    }
    const per = UNIT_MS[unit];
    // Spark takes a fraction only on seconds; whole numbers everywhere else.
    const pattern = unit === "second" ? /^[+-]?\d+(\.\d+)?$/ : /^[+-]?\d+$/;
    if (per === undefined || !pattern.test(amount)) throw new Error(`Not an interval: '${text}'`);
    ms += Number(amount) * per;
  }
  if (ms < 0) throw new Error(`Interval '${text}' is negative`);
  return Math.floor(ms);
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
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return DEFAULT_CHECKPOINT_INTERVAL;
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
