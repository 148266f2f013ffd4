/**
 * Structured JSON logs, one object per line, so CloudWatch Logs Insights and local tails read the
 * same fields (requestId, table, operation, version, rows, bytes).
 *
 * Lines go straight to stdout rather than through `console`: under Lambda's JSON log format the
 * runtime wraps console output in its own envelope, which would bury our fields (and the
 * Embedded Metric Format lines of lib/metrics.ts, which CloudWatch only reads at the top level).
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/**
 * Fields of the unit of work in progress (a Lambda invocation: its request id and operation).
 * Loggers are built once per container, long before any request, so the request's identity
 * reaches them through the async context instead of through every call.
 */
const scope = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to every jsonLogger line written inside it (nested scopes add up). */
export function withLogFields<T>(fields: LogFields, fn: () => T): T {
  return scope.run({ ...scope.getStore(), ...fields }, fn);
}

export function jsonLogger(
  base: LogFields = {},
  write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Logger {
  const emit = (level: string, message: string, fields?: LogFields) =>
    write(
      JSON.stringify({
        level,
        time: new Date().toISOString(),
        message,
        ...base,
        ...scope.getStore(),
        ...fields,
      }),
    );
  return {
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => jsonLogger({ ...base, ...fields }, write),
  };
}

export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
