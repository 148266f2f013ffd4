/**
 * Structured JSON logs, one object per line, so CloudWatch Logs Insights and local tails read the
 * same fields (requestId, table, operation, version, rows, bytes).
 */
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export function jsonLogger(
  base: LogFields = {},
  write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Logger {
  const emit = (level: string, message: string, fields?: LogFields) =>
    write(JSON.stringify({ level, time: new Date().toISOString(), message, ...base, ...fields }));
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
