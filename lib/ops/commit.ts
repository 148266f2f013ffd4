/**
 * The commit builder every operation commits through, the way delta-rs's CommitBuilder takes a
 * snapshot reference: the opened table supplies everything the commit loop
 * (lib/commit/transaction.ts) needs besides the operation and its actions.
 *
 * 1. The operation (lib/commit/operation.ts) says what the commit is and what it read.
 * 2. From the context: object store, arbiter, clock, post-commit settings (checkpoints), and the
 *    logger the commit's one report line goes to outside Lambda (commit-report.ts).
 * 3. From the opened table: table id, root and display name; the read version (the snapshot's,
 *    unless the operation read a later one it committed itself, as VACUUM END does) and, when it
 *    is the snapshot's, the snapshot's in-commit timestamp; the isolation level
 *    (`delta.isolationLevel`); whether the table tracks rows and the row-id high-water mark it
 *    built on.
 * 4. An operation whose commit leaves the table with other properties or protocol (ALTER, REPLACE)
 *    says so through the options.
 * 5. Creating a table (`commitNewTable`) has no snapshot: read version -1, high-water mark -1.
 * 6. A request run under an Idempotency-Key has the context name the commit's txnId
 *    (SiltContext.commitTxnId), which it records first so a retry can find the commit.
 */
import type { TableEntry } from "../catalog/catalog-store.ts";
import type { QualifiedName } from "../catalog/names.ts";
import type { IsolationLevel } from "../commit/conflicts.ts";
import type { Operation } from "../commit/operation.ts";
import type { PostCommitConfig } from "../commit/post-commit.ts";
import {
  type CommitHooks,
  type CommitRequest,
  type CommitResult,
  commitTransaction,
} from "../commit/transaction.ts";
import type { SiltContext } from "../context.ts";
import type { Action } from "../delta/actions.ts";
import { isolationLevelOf } from "../delta/table-config.ts";
import { displayName, type OpenTable } from "./open-table.ts";
import { rowTrackingEnabled, rowTrackingHighWaterMark } from "./write-protocol.ts";

export interface CommitOptions {
  /** The version the actions were computed from when it is not the snapshot's. */
  readVersion?: number;
  /** Default: the snapshot's `delta.isolationLevel`. */
  isolationLevel?: IsolationLevel;
  /** Default: whether the snapshot tracks rows. */
  rowTracking?: boolean;
  retryBudgetMs?: number;
  backoff?: CommitRequest["backoff"];
  hooks?: CommitHooks;
  /** Post-commit settings of this commit, over the context's (SiltContext.postCommit). */
  postCommit?: Partial<PostCommitConfig>;
}

/** Commits `actions` on the table `t` was opened at (module comment, steps 1–4). */
export async function commit(
  ctx: SiltContext,
  t: OpenTable,
  operation: Operation,
  actions: Action[],
  opts: CommitOptions = {},
): Promise<CommitResult> {
  const { snapshot } = t;
  const readVersion = opts.readVersion ?? snapshot.version;
  const rowTracking = opts.rowTracking ?? rowTrackingEnabled(snapshot.protocol, snapshot.metadata);
  return commitTransaction({
    ...loopOptions(ctx, opts),
    txnId: await ctx.commitTxnId?.({ tableId: t.entry.tableId, readVersion }),
    tableId: t.entry.tableId,
    tableRoot: t.entry.location,
    tableName: displayName(t.name),
    readVersion,
    previousTimestamp: readVersion === snapshot.version ? snapshot.timestamp : undefined,
    actions,
    operation,
    isolationLevel: opts.isolationLevel ?? isolationLevelOf(snapshot.metadata.configuration),
    rowTracking,
    readRowIdHighWaterMark: rowTracking ? rowTrackingHighWaterMark(snapshot) : undefined,
  });
}

/** Commits version 0 of a table the catalog has reserved (module comment, step 5). */
export async function commitNewTable(
  ctx: SiltContext,
  table: { name: QualifiedName; entry: TableEntry },
  operation: Operation,
  actions: Action[],
  opts: Omit<CommitOptions, "readVersion" | "isolationLevel"> & { rowTracking: boolean },
): Promise<CommitResult> {
  return commitTransaction({
    ...loopOptions(ctx, opts),
    txnId: await ctx.commitTxnId?.({ tableId: table.entry.tableId, readVersion: -1 }),
    tableId: table.entry.tableId,
    tableRoot: table.entry.location,
    tableName: displayName(table.name),
    readVersion: -1,
    actions,
    operation,
    rowTracking: opts.rowTracking,
    readRowIdHighWaterMark: -1,
  });
}

function loopOptions(ctx: SiltContext, opts: CommitOptions) {
  return {
    store: ctx.store,
    arbiter: ctx.arbiter,
    clock: ctx.clock,
    deadline: ctx.deadline,
    retryBudgetMs: opts.retryBudgetMs,
    backoff: opts.backoff,
    hooks: opts.hooks,
    postCommit: { ...ctx.postCommit, ...opts.postCommit },
    logger: ctx.logger,
  };
}
