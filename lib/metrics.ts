/**
 * Metrics as CloudWatch Embedded Metric Format (EMF) log lines: a JSON log line whose `_aws`
 * member names the metrics it carries, so CloudWatch Logs extracts them from the function's log
 * group without any API call, agent or dependency (what Powertools' Metrics does).
 *
 * Each metric line is also an ordinary structured log line (message, request id, table, …): one
 * line per event both counts it and says what happened.
 *
 * The only dimension is `Operation` (WRITE, MERGE, OPTIMIZE, INGEST, MAINTENANCE, …), a short
 * closed list. Never a table name: every distinct dimension value is a separately billed custom
 * metric, and tables are unbounded.
 *
 * Lines are written only inside `withMetrics` (a Lambda invocation, lib/runtime/invocation.ts);
 * elsewhere (tests, the local server) `emitMetrics` writes the line, without its metrics, to the
 * fallback logger it is given, if any.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { LogFields, Logger } from "./logger.ts";

export const METRICS_NAMESPACE = "Silt";
export const METRICS_DIMENSION = "Operation";

/** Every metric Silt emits, with its CloudWatch unit. */
export const METRIC_UNITS = {
  /** Commits ratified (lib/commit/commit-report.ts). */
  CommitsCommitted: "Count",
  /** Rows in the data files a commit added. */
  RowsWritten: "Count",
  /** Bytes of the data files a commit added. */
  BytesWritten: "Bytes",
  /** Objects under ingest/ committed into their table. */
  IngestedObjects: "Count",
  /** Objects under ingest/ refused (bad format, schema mismatch, missing table). */
  RejectedObjects: "Count",
  /** Tables a scheduled maintenance run finished. */
  TablesMaintained: "Count",
  /** Maintenance steps (checkpoint, OPTIMIZE, VACUUM, log cleanup) that failed. */
  MaintenanceFailures: "Count",
} as const;

export type MetricName = keyof typeof METRIC_UNITS;
export type MetricValues = Partial<Record<MetricName, number>>;

/** The EMF members of one log line: `_aws` metadata, the dimension and the values. */
export function emfFields(operation: string, values: MetricValues, timestamp: number): LogFields {
  const names = (Object.keys(values) as MetricName[]).filter((n) => values[n] !== undefined);
  return {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [[METRICS_DIMENSION]],
          Metrics: names.map((n) => ({ Name: n, Unit: METRIC_UNITS[n] })),
        },
      ],
    },
    [METRICS_DIMENSION]: operation,
    ...Object.fromEntries(names.map((n) => [n, values[n]])),
  };
}

const sink = new AsyncLocalStorage<Logger>();

/** Runs `fn` with metric lines written through `logger`. */
export function withMetrics<T>(logger: Logger, fn: () => T): T {
  return sink.run(logger, fn);
}

/**
 * Writes one info line `message` with `fields` that is also an EMF record of `values` under the
 * given operation. Outside `withMetrics`, the line goes to `fallback` without the EMF members
 * (nowhere without one).
 */
export function emitMetrics(
  message: string,
  operation: string,
  values: MetricValues,
  fields: LogFields = {},
  fallback?: Logger,
): void {
  const logger = sink.getStore();
  if (logger !== undefined) {
    logger.info(message, { ...fields, ...emfFields(operation, values, Date.now()) });
  } else {
    fallback?.info(message, fields);
  }
}
