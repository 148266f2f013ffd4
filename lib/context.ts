/**
 * What every operation runs against. Built once per process (a Lambda container or the local
 * server) and passed in, never reached through globals, so ops run the same on S3 + DynamoDB and
 * on the embedded stand-ins.
 */
import type { Catalog } from "./catalog/catalog-store.ts";
import type { GrantStore } from "./catalog/grants.ts";
import type { CommitArbiter } from "./commit/arbiter.ts";
import type { PostCommitConfig } from "./commit/post-commit.ts";
import { budgetSeconds, Deadline, statementBudget } from "./deadline.ts";
import type { CommitIntent, IdempotencyStore } from "./kv/idempotency-store.ts";
import type { Logger } from "./logger.ts";
import type { ObjectStore } from "./storage/object-store.ts";
import type { TableCredentialVendor } from "./storage/prefix-credentials.ts";

export interface SiltContext {
  /** The storage root: table data lives under `tables/<table-uuid>/` in it. */
  store: ObjectStore;
  /** URI of the storage root as other engines name it (s3://bucket/prefix, file:///dir). */
  storageRootUri: string;
  arbiter: CommitArbiter;
  catalog: Catalog;
  clock: () => number;
  logger: Logger;
  /** What was granted on catalogs, schemas and tables (same DynamoDB table as `catalog`). */
  grants: GrantStore;
  /**
   * The caller, recorded as owner of what it creates. A container-wide context names the
   * configured principal (SILT_PRINCIPAL); the HTTP app derives one per request whose principal is
   * the authenticated caller (lib/api/app.ts).
   */
  principal: string;
  /**
   * Whether `principal`'s privileges are checked before each operation (lib/auth/authorize.ts).
   * Absent or false means every check passes: system callers (the ingest and maintenance
   * functions act as the service itself), local mode and the tests. The HTTP app sets it on the
   * per-request context when the deployment authenticates callers (SILT_AUTH=iam|jwt).
   */
  enforcePrivileges?: boolean;
  /** Issues storage credentials scoped to one table; absent where none are configured. */
  tableCredentials?: TableCredentialVendor;
  /**
   * The longest one request may run before its function is stopped (the Lambda timeout, which
   * the stack passes as SILT_REQUEST_TIMEOUT_MS); unset where nothing stops it (the local
   * server). Long work sizes itself to fit (optimizeTimeBudgetMs, a statement's budget:
   * withDeadline) and an Idempotency-Key claim lasts no longer (lib/kv/idempotency-store.ts).
   */
  requestTimeoutMs?: number;
  /**
   * The time budget of an OPTIMIZE request that gives none (lib/api/routes-maintenance.ts):
   * unset, no budget. The context factory derives it from requestTimeoutMs.
   */
  optimizeTimeBudgetMs?: number;
  /** Where Idempotency-Key records live; without it the header is ignored. */
  idempotency?: IdempotencyStore;
  /**
   * Set on the context of a request run under an Idempotency-Key (lib/api/idempotency.ts): the
   * commit builder (lib/ops/commit.ts) calls it before each commit for the txnId the commit
   * carries, which it first records, so a retry after this run dies can tell from the arbiter
   * whether the commit landed. It throws when the run no longer holds its key.
   */
  commitTxnId?: (commit: Omit<CommitIntent, "txnId">) => Promise<string>;
  /**
   * How commits made with this context run their post-commit work (automatic checkpoints: await,
   * background or off; logger; checkpoint options). Unset fields take the defaults
   * (lib/commit/post-commit.ts).
   */
  postCommit?: Partial<PostCommitConfig>;
  /**
   * The running statement's deadline (`withDeadline`), checked where its work loops; absent for
   * work that is not a caller's statement (ingest, maintenance).
   */
  deadline?: Deadline;
}

/**
 * `ctx` for one statement: a deadline `requested` seconds away (the default when undefined),
 * within the budget `ctx.requestTimeoutMs` leaves (lib/deadline.ts statementBudget). `setting`
 * says how the caller sets it, for the messages; `signal`, the caller's request, stops the
 * statement at its next check once aborted.
 */
export function withDeadline(
  ctx: SiltContext,
  requested: string | number | undefined,
  setting: string,
  signal?: AbortSignal,
): SiltContext {
  const budget = statementBudget(ctx.requestTimeoutMs);
  const seconds = budgetSeconds(requested, budget, setting);
  return { ...ctx, deadline: new Deadline(ctx.clock, seconds, budget, setting, signal) };
}

/** `storageRootUri` joined with a key relative to the root, without a trailing slash. */
export function locationUri(ctx: SiltContext, key: string): string {
  const root = ctx.storageRootUri.endsWith("/") ? ctx.storageRootUri : `${ctx.storageRootUri}/`;
  return `${root}${key}`.replace(/\/+$/, "");
}

/**
 * The key (relative to the storage root, without a trailing slash) that a location URI names, or
 * undefined when it lies outside the root. Engines spell one location several ways: Hadoop writes
 * `file:/dir` for `file:///dir`, and `s3a://` or `s3n://` for `s3://`.
 */
export function keyOfLocationUri(ctx: SiltContext, uri: string): string | undefined {
  const normalize = (u: string) =>
    u
      .replace(/^file:\/(?!\/)/, "file:///")
      .replace(/^s3[an]:\/\//, "s3://")
      .replace(/\/+$/, "");
  const root = `${normalize(ctx.storageRootUri)}/`;
  const given = normalize(uri);
  if (!given.startsWith(root)) return undefined;
  const key = given.slice(root.length);
  return key.split("/").some((s) => s === "" || s === "." || s === "..") ? undefined : key;
}
