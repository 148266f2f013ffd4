/**
 * One Lambda invocation's telemetry scope: every log line written while it runs carries the
 * invocation's request id (and what `fields` adds, e.g. the operation), and metrics
 * (lib/metrics.ts) are written as EMF lines through the given logger. Loggers and the context are
 * built once per container, so this is how per-request identity reaches them.
 */
import type { LogFields, Logger } from "../logger.ts";
import { withLogFields } from "../logger.ts";
import { withMetrics } from "../metrics.ts";

/** The part of the Lambda context object Silt's handlers use. */
export interface LambdaContextLike {
  awsRequestId: string;
  /** Milliseconds until Lambda stops the invocation. */
  getRemainingTimeInMillis(): number;
}

export function withInvocation<T>(
  logger: Logger,
  lambdaContext: LambdaContextLike | undefined,
  fields: LogFields,
  fn: () => Promise<T>,
): Promise<T> {
  return withLogFields({ requestId: lambdaContext?.awsRequestId, ...fields }, () =>
    withMetrics(logger, fn),
  );
}
