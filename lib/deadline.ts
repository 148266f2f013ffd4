/**
 * A statement's time budget. JavaScript cannot pre-empt a running statement, so the loops that do
 * its work (files and row groups read, batches evaluated and aggregated, sort comparisons, files
 * written, commit attempts) call `check()`, which throws once the budget is spent. Nothing is
 * committed after a failed check: the commit loop checks before each attempt.
 */
import { siltError } from "./errors.ts";

/** What a deployment allows: the budget a statement gets unless it asks, and the most it may ask. */
export interface StatementBudget {
  defaultSeconds: number;
  maxSeconds: number;
}

/**
 * How much of the function's timeout a statement's budget leaves over: for what runs before the
 * deadline starts (the invocation, the Idempotency-Key claim), for the work in flight when it
 * passes (a data file being read or written finishes before the next check), and for answering
 * the 408, so the platform never cuts a request off unanswered.
 */
const ANSWER_HEADROOM_MS = 4_000;

/**
 * Where nothing stops a request (the local server, the tests): a caller may ask for up to an
 * hour. The default is what the stack's API functions (a 29 s timeout) give, so a statement that
 * runs out of time deployed runs out locally too.
 */
export const LOCAL_BUDGET: StatementBudget = { defaultSeconds: 25, maxSeconds: 3600 };

/**
 * The budget where a request may run `requestTimeoutMs` (SiltContext.requestTimeoutMs, the
 * function's timeout): all of it but the headroom, by default and at most, since a statement
 * that asked for more would be killed unanswered. Unset, LOCAL_BUDGET.
 */
export function statementBudget(requestTimeoutMs: number | undefined): StatementBudget {
  if (requestTimeoutMs === undefined) return LOCAL_BUDGET;
  const seconds = Math.max(1, Math.floor((requestTimeoutMs - ANSWER_HEADROOM_MS) / 1000));
  return { defaultSeconds: seconds, maxSeconds: seconds };
}

export class Deadline {
  private readonly endsAt: number;

  constructor(
    private readonly clock: () => number,
    readonly seconds: number,
    private readonly budget: StatementBudget,
    /** How the caller sets the budget, for the message. */
    private readonly setting: string,
    /** The caller's request: once it is aborted (the client went away), the statement stops. */
    private readonly signal?: AbortSignal,
  ) {
    this.endsAt = clock() + seconds * 1000;
  }

  /** What is left of the budget, in milliseconds (0 once it is spent). */
  remainingMs(): number {
    return Math.max(0, this.endsAt - this.clock());
  }

  check(): void {
    if (this.signal?.aborted) throw siltError("OPERATION_CANCELED");
    if (this.clock() <= this.endsAt) return;
    throw siltError("QUERY_EXECUTION_TIMEOUT_EXCEEDED", {
      timeoutSec: this.seconds,
      maxSec: this.budget.maxSeconds,
      setting: this.setting,
    });
  }
}

/**
 * The budget in seconds a request asks for (`requested`, as the caller wrote it, e.g. a conf
 * value), within the deployment's limits; the default when it asks for none.
 */
export function budgetSeconds(
  requested: string | number | undefined,
  budget: StatementBudget,
  setting: string,
): number {
  if (requested === undefined) return budget.defaultSeconds;
  const text = String(requested).trim();
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= budget.maxSeconds)) {
    throw siltError("INVALID_STATEMENT_TIMEOUT", {
      value: text,
      setting,
      maxSec: budget.maxSeconds,
    });
  }
  return n;
}
