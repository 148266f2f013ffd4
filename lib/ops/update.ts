/**
 * UPDATE t SET col = expr [, …] [WHERE cond], the way current Delta writes it: the old rows are
 * marked deleted by deletion vectors and their new versions go to new files.
 *
 * 1. Open the table at its latest version; an append-only table refuses before anything is read.
 * 2. Resolve each SET target against the table (a column, or a nested field `a.b`), analyse each
 *    value over the table's columns and plan every column of the new rows: assigned ones get
 *    their value brought to the column's type (store-assignment rules, assignments.ts), the
 *    others keep the row's value. Errors surface here, before any file is read.
 * 3. Keep the files whose partition values and statistics can hold a row the condition matches.
 *    Read them a few at a time; in each, evaluate the condition over the live rows and compute
 *    the new values of the matching ones only (so a value that cannot be computed for a row that
 *    does not match raises nothing, as in Spark). Only the new rows stay in memory.
 * 4. The matched rows get deletion vectors (or the file is removed when every live row matched);
 *    the new rows are written as new files. Under row tracking they keep their row ids in the
 *    table's materialized row-id column, with a null commit version: changed by this commit.
 * 5. Commit `UPDATE` with Spark's `predicate` parameter and metrics; when no row matched there is
 *    nothing to commit and the table keeps its version, as in Delta.
 */

import type * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import { READ_WHOLE_TABLE } from "../commit/conflicts.ts";
import type { SiltContext } from "../context.ts";
import { concatTables } from "../data/kernels.ts";
import type { Action } from "../delta/actions.ts";
import {
  concatIdentities,
  freshIdentities,
  pickIdentities,
  type RowIdentities,
} from "../delta/row-tracking.ts";
import type { StructField } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import {
  analyze,
  containsAggregate,
  expressionSql,
  prettySql,
  referencedColumns,
  type Scope,
} from "../expr/analyze.ts";
import type { Expr, Assignment as SqlAssignment } from "../expr/ast.ts";
import { evaluatePredicate, evaluateScalar } from "../expr/evaluate.ts";
import type { Typed } from "../expr/typed.ts";
import {
  type Assignment,
  type ColumnPlan,
  checkNotNull,
  evaluatePlan,
  planColumns,
  tableOf,
} from "./assignments.ts";
import { takeBatch } from "./batches.ts";
import {
  analyzeCondition,
  assertNotAppendOnly,
  commitDml,
  dvMetrics,
  elapsed,
  fileFilter,
  openDmlTarget,
  stringMetrics,
} from "./dml-common.ts";
import { deleteActions, type FileMatch, findMatches } from "./row-deletes.ts";
import { writeDataFiles } from "./write-files.ts";

export interface UpdateRequest {
  /** SET targets (possibly qualified by the alias or the table name, possibly nested). */
  assignments: SqlAssignment[];
  /** The WHERE condition; absent updates every row. */
  condition?: Expr;
  alias?: string;
  defaults?: { catalog?: string; schema?: string };
  /** The statement's instant (epoch ms) for current_date()/current_timestamp(). */
  now?: number;
}

export interface UpdateResult {
  /** The version committed, or the table's version when nothing matched. */
  version: number;
  committed: boolean;
  numUpdatedRows: number;
  operationMetrics: Record<string, string>;
}

/**
 * Files read at once (every column of each); each is held in memory only while its matches are
 * computed.
 */
const FILES_AT_ONCE = 2;

export async function updateRows(
  ctx: SiltContext,
  name: TableRef,
  req: UpdateRequest,
): Promise<UpdateResult> {
  const started = performance.now();
  const target = await openDmlTarget(ctx, name, { defaults: req.defaults, alias: req.alias });
  assertNotAppendOnly(target);
  const { t } = target;
  const now = BigInt(req.now ?? ctx.clock()) * 1000n;
  const evalCtx = { now };

  // Step 2.
  const fields = t.schema.fields;
  const assignments = req.assignments.map((a) => resolveAssignment(a, target.scope));
  const plans = planColumns(fields, assignments, {
    base: (f, i) => ({
      kind: "column",
      type: f.type,
      nullable: f.nullable,
      relation: 0,
      index: i,
      ordinal: i,
      name: f.name,
      qualifier: target.qualifier,
    }),
  });
  const predicate =
    req.condition === undefined
      ? undefined
      : analyzeCondition(req.condition, target.scope, "UPDATE condition");
  const parameters = {
    predicate: JSON.stringify(req.condition === undefined ? [] : [expressionSql(req.condition)]),
  };
  const unchanged = (): UpdateResult => ({
    version: t.snapshot.version,
    committed: false,
    numUpdatedRows: 0,
    operationMetrics: {},
  });
  if (
    predicate !== undefined &&
    referencedColumns(predicate).length === 0 &&
    evaluateScalar(predicate, evalCtx) !== true
  ) {
    return unchanged();
  }

  // Step 3.
  const canMatch = predicate === undefined ? () => true : fileFilter(target, predicate, now);
  const candidates = t.snapshot.files.filter(canMatch);
  const scanStart = performance.now();
  const matches: FileMatch[] = [];
  const updated: arrow.Table[] = [];
  const identities: RowIdentities[] = [];
  for (let i = 0; i < candidates.length; i += FILES_AT_ONCE) {
    const found = await findMatches(ctx, t.snapshot, {
      candidates: candidates.slice(i, i + FILES_AT_ONCE),
      identities: target.rowTracking,
      match: (table) =>
        predicate === undefined
          ? new Uint8Array(table.numRows).fill(1)
          : evaluatePredicate(predicate, table, evalCtx),
      concurrency: FILES_AT_ONCE,
    });
    for (const m of found) {
      updated.push(newRows(m, fields, plans, evalCtx));
      identities.push(
        m.identities === undefined
          ? freshIdentities(m.rows.length)
          : pickIdentities(m.identities, m.rows, false),
      );
      matches.push({ ...m, table: undefined, identities: undefined });
    }
  }
  const scanTimeMs = elapsed(scanStart);
  if (matches.length === 0) return unchanged();

  // Step 4.
  const rewriteStart = performance.now();
  const { actions: deletes, metrics: m } = await deleteActions(ctx, t.entry.location, matches);
  const data = concatTables(updated);
  const written = await writeDataFiles(ctx, {
    tableRoot: t.entry.location,
    metadata: t.snapshot.metadata,
    data,
    version: t.snapshot.version + 1,
    rowIdHighWaterMark: target.hwm,
    identities: concatIdentities(identities),
  });
  const rewriteTimeMs = elapsed(rewriteStart);
  const actions: Action[] = [...deletes, ...written.actions];

  // Step 5. Spark counts every remove of an UPDATE as a removed file, and as removed bytes only
  // the files it does not add back.
  const dv = dvMetrics(m);
  const metrics = stringMetrics({
    numAddedFiles: written.adds.length,
    numRemovedFiles: matches.length,
    numAddedChangeFiles: 0,
    numDeletionVectorsAdded: dv.added,
    numDeletionVectorsRemoved: dv.removed,
    numDeletionVectorsUpdated: dv.updated,
    numUpdatedRows: data.numRows,
    numCopiedRows: 0,
    executionTimeMs: elapsed(started),
    scanTimeMs,
    rewriteTimeMs,
    numRemovedBytes: m.numRemovedBytes,
    numAddedBytes: Number(written.metrics.numOutputBytes),
  });
  const commit = await commitDml(ctx, target, {
    actions,
    operation: "UPDATE",
    parameters,
    metrics,
    readSet:
      predicate === undefined
        ? READ_WHOLE_TABLE
        : {
            readWholeTable: false,
            readFilePaths: new Set(candidates.map((f) => f.path)),
            readPredicate: canMatch,
          },
  });
  return { ...commit, numUpdatedRows: data.numRows, operationMetrics: metrics };
}

/**
 * A SET target resolved as Spark resolves it: against the table's columns (qualified by the alias
 * or the table name, or not at all), down nested struct fields.
 */
export function resolveAssignment(a: SqlAssignment, scope: Scope): Assignment {
  const column = analyze({ kind: "column", name: a.column, pos: a.value.pos }, scope);
  const path: string[] = [];
  let node: Typed = column;
  while (node.kind === "field") {
    path.unshift(node.name);
    node = node.operand;
  }
  if (node.kind !== "column") {
    throw siltError("UNRESOLVED_COLUMN.WITH_SUGGESTION:NAME", {
      key: a.column.map((p) => `\`${p}\``).join("."),
      suggestions: scope.relations[0].columns.map((c) => `\`${c.name}\``).join(", "),
    });
  }
  path.unshift(node.name);
  const value = analyze(a.value, scope);
  if (containsAggregate(value)) {
    throw siltError("DELTA_AGGREGATION_NOT_SUPPORTED:UPDATE_ASSIGNMENT", {
      path: path.join("."),
      value: prettySql(value),
    });
  }
  return { path, value };
}

/** The matched rows of one file, with their new values. */
function newRows(
  m: FileMatch,
  fields: readonly StructField[],
  plans: ColumnPlan[],
  evalCtx: { now: bigint },
): arrow.Table {
  const source = m.table as arrow.Table;
  const rows = Uint32Array.from(m.rows);
  const batch = takeBatch(source, rows);
  const columns = plans.map((p) => evaluatePlan(p, batch, evalCtx));
  checkNotNull(fields, columns);
  return tableOf(fields, columns, rows.length);
}
