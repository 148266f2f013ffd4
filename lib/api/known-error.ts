/**
 * What a caller is told of a failure: a SiltError as raised; a stack exhausted by a flat
 * expression as STATEMENT_TOO_COMPLEX; anything else as INTERNAL_ERROR naming the request, its
 * details logged, never sent.
 */
import type { Context } from "hono";
import { SiltError, siltError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { Env } from "./http.ts";

export function knownError(caught: unknown, c: Context<Env>, logger: Logger): SiltError {
  // Analysis and evaluation recurse over expression trees, whose depth the parser bounds only
  // for nesting: a flat chain of thousands of OR terms can still exhaust the stack. The input
  // is at fault, and nothing was half done (a commit is not recursive).
  if (caught instanceof RangeError && caught.message.includes("call stack")) {
    return siltError("STATEMENT_TOO_COMPLEX");
  }
  if (caught instanceof SiltError) return caught;
  logger.error("unhandled error", {
    requestId: c.get("requestId"),
    route: c.req.path,
    error: caught instanceof Error ? `${caught.name}: ${caught.message}` : String(caught),
    stack: caught instanceof Error ? caught.stack : undefined,
  });
  return siltError("INTERNAL_ERROR:UNEXPECTED_FAILURE", { requestId: c.get("requestId") });
}
