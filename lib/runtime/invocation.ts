/**
 * One Lambda invocation's telemetry scope: every log line written while it runs carries the
 * invocation's request id (and what `fields` adds, e.g. the operation), and metrics
 * (lib/metrics.ts) are written as EMF lines through the given logger. Loggers and the context are
 * built once per container, so this is how per-request identity reaches them.
 */
import type { Context } from "aws-lambda";
import type { LogFields, Logger } from "../logger.ts";
import { withLogFields } from "../logger.ts";
import { withMetrics } from "../metrics.ts";

export function withInvocation<T>(
  logger: Logger,
  lambdaContext: Pick<Context, "awsRequestId"> | undefined,
  fields: LogFields,
  fn: () => Promise<T>,
): Promise<T> {
  return withLogFields({ requestId: lambdaContext?.awsRequestId, ...fields }, () =>
    withMetrics(logger, fn),
  );
}
