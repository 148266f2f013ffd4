/**
 * DELETE FROM t [WHERE cond], the way current Delta writes it: deletion vectors, not rewrites.
 *
 * 1. Open the table at its latest version. An append-only table refuses before anything is read,
 *    whether or not a row would match (as Delta does).
 * 2. No WHERE, or a condition that is TRUE without reading a row: every live file is removed
 *    without being opened; the row counts come from the files' statistics less their deletion
 *    vectors (Spark's metadata-only delete). A condition that is FALSE or NULL deletes nothing.
 * 3. Otherwise keep the files whose partition values and statistics can hold a match. A
 *    condition on partition columns only decides each of those files whole, without reading it;
 *    any other condition is evaluated over the rows of each file, reading only the columns it
 *    mentions.
 * 4. Files whose live rows all match are removed; the others get a deletion vector holding their
 *    old and new deleted rows (one new vector file for the commit; row-deletes.ts).
 * 5. Commit `DELETE` with Spark's `predicate` parameter and metrics. When no row matched there is
 *    nothing to commit and the table keeps its version, as in Delta.
 */
import type { TableRef } from "../catalog/names.ts";
import { READ_WHOLE_TABLE } from "../commit/conflicts.ts";
import type { SiltContext } from "../context.ts";
import { type Action, numRecordsOf } from "../delta/actions.ts";
import { expressionSql, referencedColumns, scopeOf } from "../expr/analyze.ts";
import type { Expr } from "../expr/ast.ts";
import { evaluatePredicate, evaluateScalar } from "../expr/evaluate.ts";
import type { Typed } from "../expr/typed.ts";
import {
  analyzeCondition,
  assertNotAppendOnly,
  commitDml,
  type DmlTarget,
  dvMetrics,
  elapsed,
  fileFilter,
  openDmlTarget,
  partitionDecider,
  stringMetrics,
} from "./dml-common.ts";
import { deleteActions, type FileMatch, findMatches, removeOf } from "./row-deletes.ts";

export interface DeleteRequest {
  /** The WHERE condition; absent deletes every row. */
  condition?: Expr;
  /** Alias the condition may qualify columns with (DELETE FROM t AS x WHERE x.a = 1). */
  alias?: string;
  defaults?: { catalog?: string; schema?: string };
  /** The statement's instant (epoch ms) for current_date()/current_timestamp(). */
  now?: number;
}

/** Files read at once. */
const FILES_AT_ONCE = 4;

export interface DeleteResult {
  /** The version committed, or the table's version when nothing matched. */
  version: number;
  committed: boolean;
  /** Rows deleted; -1 when whole files went and their statistics lack row counts (as Spark). */
  numDeletedRows: number;
  operationMetrics: Record<string, string>;
}

export async function deleteRows(
  ctx: SiltContext,
  name: TableRef,
  req: DeleteRequest = {},
): Promise<DeleteResult> {
  const started = performance.now();
  const target = await openDmlTarget(ctx, name, { defaults: req.defaults, alias: req.alias });
  assertNotAppendOnly(target);
  const now = BigInt(req.now ?? ctx.clock()) * 1000n;
  const predicate =
    req.condition === undefined
      ? undefined
      : analyzeCondition(req.condition, target.scope, "DELETE condition");
  const parameters = {
    predicate: JSON.stringify(req.condition === undefined ? [] : [expressionSql(req.condition)]),
  };
  const constant =
    predicate === undefined
      ? true
      : referencedColumns(predicate).length === 0
        ? evaluateScalar(predicate, { now }) === true
        : undefined;

  if (constant === false) return nothingDeleted(target);
  if (constant === true) return deleteEverything(ctx, target, parameters, started);
  const condition = req.condition as Expr;
  return deleteMatching(ctx, target, condition, predicate as Typed, parameters, now, started);
}

function nothingDeleted(target: DmlTarget): DeleteResult {
  return {
    version: target.t.snapshot.version,
    committed: false,
    numDeletedRows: 0,
    operationMetrics: {},
  };
}

/** Step 2: every file goes, none is read. */
async function deleteEverything(
  ctx: SiltContext,
  target: DmlTarget,
  parameters: Record<string, string>,
  started: number,
): Promise<DeleteResult> {
  const files = target.t.snapshot.files;
  if (files.length === 0) return nothingDeleted(target);
  const now = ctx.clock();
  const actions: Action[] = files.map((f) => ({ remove: removeOf(f, now) }));
  let rows: number | undefined = 0;
  let bytes = 0;
  let withVectors = 0;
  for (const f of files) {
    bytes += f.size;
    if (f.deletionVector) withVectors++;
    const n = numRecordsOf(f);
    rows =
      rows === undefined || n === undefined
        ? undefined
        : rows + n - (f.deletionVector?.cardinality ?? 0);
  }
  // Spark leaves the row-level counts out when the statistics cannot give them.
  const counts =
    rows === undefined ? {} : { numAddedFiles: 0, numDeletedRows: rows, numCopiedRows: 0 };
  const metrics = deleteMetrics({
    ...counts,
    numRemovedFiles: files.length,
    numDeletionVectorsAdded: 0,
    numDeletionVectorsRemoved: withVectors,
    numDeletionVectorsUpdated: 0,
    numAddedChangeFiles: 0,
    executionTimeMs: elapsed(started),
    scanTimeMs: 0,
    rewriteTimeMs: 0,
    numRemovedBytes: bytes,
    numAddedBytes: 0,
  });
  const commit = await commitDml(ctx, target, {
    actions,
    operation: "DELETE",
    parameters,
    metrics,
    readSet: READ_WHOLE_TABLE,
  });
  return { ...commit, numDeletedRows: rows ?? -1, operationMetrics: metrics };
}

/** Steps 3-5. */
async function deleteMatching(
  ctx: SiltContext,
  target: DmlTarget,
  condition: Expr,
  predicate: Typed,
  parameters: Record<string, string>,
  now: bigint,
  started: number,
): Promise<DeleteResult> {
  const { t } = target;
  const canMatch = fileFilter(target, predicate, now);
  const candidates = t.snapshot.files.filter(canMatch);
  const byPartition = partitionDecider(target, predicate, now);
  // Only the columns the condition mentions are decoded; the condition is analysed again over
  // that projection so its column ordinals index the decoded table.
  const mentioned = new Set(referencedColumns(predicate).map((c) => c.index));
  const fields = t.schema.fields.filter((_, i) => mentioned.has(i));
  const projected = analyzeCondition(
    condition,
    scopeOf(fields, target.qualifier),
    "DELETE condition",
  );
  const scanStart = performance.now();
  const matches: FileMatch[] = [];
  // A few files at a time, keeping only the matched row indexes of each, so a delete that
  // touches every file of a large table never holds more than a few files' columns.
  for (let i = 0; i < candidates.length; i += FILES_AT_ONCE) {
    const found = await findMatches(ctx, t.snapshot, {
      candidates: candidates.slice(i, i + FILES_AT_ONCE),
      byPartition,
      columns: fields.map((f) => f.name),
      match: (table) => evaluatePredicate(projected, table, { now }),
      concurrency: FILES_AT_ONCE,
    });
    for (const m of found) matches.push({ ...m, table: undefined });
  }
  const scanTimeMs = elapsed(scanStart);
  if (matches.length === 0) return nothingDeleted(target);

  const rewriteStart = performance.now();
  const { actions, metrics: m } = await deleteActions(ctx, t.entry.location, matches);
  const rewriteTimeMs = elapsed(rewriteStart);
  const dv = dvMetrics(m);
  const metrics = deleteMetrics({
    numAddedFiles: 0,
    numRemovedFiles: m.numRemovedFiles,
    numDeletionVectorsAdded: dv.added,
    numDeletionVectorsRemoved: dv.removed,
    numDeletionVectorsUpdated: dv.updated,
    numAddedChangeFiles: 0,
    numDeletedRows: m.numDeletedRows,
    numCopiedRows: 0,
    executionTimeMs: elapsed(started),
    scanTimeMs,
    rewriteTimeMs,
    numRemovedBytes: m.numRemovedBytes,
    numAddedBytes: 0,
  });
  const commit = await commitDml(ctx, target, {
    actions,
    operation: "DELETE",
    parameters,
    metrics,
    readSet: {
      readWholeTable: false,
      readFilePaths: new Set(candidates.map((f) => f.path)),
      readPredicate: canMatch,
    },
  });
  return { ...commit, numDeletedRows: m.numDeletedRows, operationMetrics: metrics };
}

/** Spark's DELETE metrics, in the order its history shows them; absent ones are left out. */
const DELETE_METRICS = [
  "numAddedFiles",
  "numRemovedFiles",
  "numDeletionVectorsAdded",
  "numDeletionVectorsRemoved",
  "numDeletionVectorsUpdated",
  "numAddedChangeFiles",
  "numDeletedRows",
  "numCopiedRows",
  "executionTimeMs",
  "scanTimeMs",
  "rewriteTimeMs",
  "numRemovedBytes",
  "numAddedBytes",
] as const;

function deleteMetrics(
  m: Partial<Record<(typeof DELETE_METRICS)[number], number>>,
): Record<string, string> {
  const out: Record<string, number> = {};
  for (const k of DELETE_METRICS) if (m[k] !== undefined) out[k] = m[k];
  return stringMetrics(out);
}
