/**
 * The values Delta accepts for the table properties Silt honours, checked when TBLPROPERTIES are
 * given (CREATE, REPLACE, ALTER TABLE … SET), with Delta's messages (DeltaConfigs).
 *
 * 1. Booleans: `true` or `false`, any case, nothing around them (Scala's toBoolean).
 * 2. Integers as Java's Integer.parseInt reads them (sign, digits, 32 bits), then the range the
 *    property needs; `delta.targetFileSize`, bytes, takes any positive integer.
 * 3. Durations: a Spark interval (`interval 2 weeks`, or without `interval`), not blank, without
 *    months or years, not negative in all.
 * 4. The isolation level: Serializable or WriteSerializable, any case.
 * 5. After a change, the log's retention covers the deleted files' (`delta.logRetentionDuration`
 *    >= `delta.deletedFileRetentionDuration`, defaults filling in), as Delta requires, so log
 *    cleanup never removes the commits a VACUUM still needs.
 *
 * Accepted values are stored in one spelling (`TRUE` as `true`), since the readers compare text.
 */
import { siltError } from "../errors.ts";
import { formatDecimal } from "../values/decimal-text.ts";
import {
  type CalendarInterval,
  DEFAULT_DELETED_FILE_RETENTION,
  DEFAULT_LOG_RETENTION,
  intervalMicros,
  parseCalendarInterval,
} from "./table-config.ts";

const BOOLEAN_PROPERTIES = new Set([
  "delta.appendOnly",
  "delta.checkpoint.writeStatsAsJson",
  "delta.checkpoint.writeStatsAsStruct",
  "delta.enableChangeDataFeed",
  "delta.enableDeletionVectors",
  "delta.enableExpiredLogCleanup",
  "delta.enableInCommitTimestamps",
  "delta.enableRowTracking",
  "delta.randomizeFilePrefixes",
  "delta.tuneFileSizesForRewrites",
]);

const LOG_RETENTION = "delta.logRetentionDuration";
const DELETED_FILE_RETENTION = "delta.deletedFileRetentionDuration";

const DURATION_PROPERTIES = new Set([
  LOG_RETENTION,
  DELETED_FILE_RETENTION,
  "delta.checkpointRetentionDuration",
]);

const ISOLATION_LEVELS = ["Serializable", "WriteSerializable"];

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Steps 1-4: the value to store for `key`, or Delta's error for it. */
export function validPropertyValue(key: string, value: string): string {
  if (BOOLEAN_PROPERTIES.has(key)) {
    const lower = value.toLowerCase();
    if (lower !== "true" && lower !== "false") {
      throw siltError("INVALID_PARAMETER_VALUE:PROPERTY_NOT_BOOLEAN", { key, value });
    }
    return lower;
  }
  if (DURATION_PROPERTIES.has(key)) {
    checkDuration(key, value);
    return value;
  }
  switch (key) {
    case "delta.checkpointInterval":
      if (!(javaInt(value) >= 1)) {
        throw siltError("INVALID_PARAMETER_VALUE:PROPERTY_NOT_POSITIVE_INTEGER", { key });
      }
      return value;
    case "delta.targetFileSize": {
      const n = Number(value);
      if (!/^\+?\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
        throw siltError("INVALID_PARAMETER_VALUE:PROPERTY_NOT_POSITIVE_INTEGER", { key });
      }
      return value;
    }
    case "delta.dataSkippingNumIndexedCols":
      if (!(javaInt(value) >= -1)) {
        throw siltError("INVALID_PARAMETER_VALUE:PROPERTY_INDEXED_COLUMNS", { key });
      }
      return value;
    case "delta.isolationLevel": {
      const level = ISOLATION_LEVELS.find((l) => l.toLowerCase() === value.toLowerCase());
      if (level === undefined)
        throw siltError("DELTA_INVALID_ISOLATION_LEVEL", { isolationLevel: value });
      return level;
    }
  }
  return value;
}

/** Integer.parseInt: the number, or NaN for text it refuses. */
function javaInt(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) return Number.NaN;
  const n = Number(text);
  return n >= INT32_MIN && n <= INT32_MAX ? n : Number.NaN;
}

function checkDuration(key: string, value: string): CalendarInterval {
  if (value.trim() === "") throw siltError("DELTA_INVALID_CALENDAR_INTERVAL_EMPTY");
  const interval = parseCalendarInterval(value);
  if (interval === undefined) throw siltError("DELTA_INVALID_INTERVAL", { interval: value });
  if (interval.months !== 0 || intervalMicros(interval) < 0n) {
    throw siltError("INVALID_PARAMETER_VALUE:PROPERTY_NOT_DURATION", { key });
  }
  return interval;
}

/**
 * Step 5, for a configuration whose keys in `changed` were just set: Delta names the log's
 * retention when the change sets it, else the deleted files'.
 */
export function checkRetentionOrder(
  configuration: Record<string, string>,
  changed: ReadonlySet<string>,
): void {
  if (!changed.has(LOG_RETENTION) && !changed.has(DELETED_FILE_RETENTION)) return;
  const log = checkDuration(LOG_RETENTION, configuration[LOG_RETENTION] ?? DEFAULT_LOG_RETENTION);
  const deleted = checkDuration(
    DELETED_FILE_RETENTION,
    configuration[DELETED_FILE_RETENTION] ?? DEFAULT_DELETED_FILE_RETENTION,
  );
  if (intervalMicros(log) >= intervalMicros(deleted)) return;
  const params = {
    logKey: LOG_RETENTION,
    log: intervalText(log),
    deletedKey: DELETED_FILE_RETENTION,
    deleted: intervalText(deleted),
  };
  throw changed.has(LOG_RETENTION)
    ? siltError("INVALID_PARAMETER_VALUE:LOG_RETENTION_BELOW_DELETED_FILE_RETENTION", params)
    : siltError("INVALID_PARAMETER_VALUE:DELETED_FILE_RETENTION_ABOVE_LOG_RETENTION", params);
}

/**
 * An interval as Spark's CalendarInterval prints it: `7 days`, `1 days 30 seconds`,
 * `1 hours 30 minutes`, `1.5 seconds`, `0 seconds` (months never reach here).
 */
export function intervalText(i: CalendarInterval): string {
  const parts: string[] = [];
  const unit = (n: bigint | number, name: string) => {
    if (n !== 0 && n !== 0n) parts.push(`${n} ${name}`);
  };
  unit(i.days, "days");
  let rest = i.micros;
  unit(rest / 3_600_000_000n, "hours");
  rest %= 3_600_000_000n;
  unit(rest / 60_000_000n, "minutes");
  rest %= 60_000_000n;
  // Seconds with the fraction digits they need: 1.5, 0.000001.
  if (rest !== 0n) parts.push(`${formatDecimal(rest, 6).replace(/\.?0+$/, "")} seconds`);
  return parts.length === 0 ? "0 seconds" : parts.join(" ");
}
