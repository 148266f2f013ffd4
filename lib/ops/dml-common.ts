/**
 * What DELETE, UPDATE and MERGE share: the table they change and the rules they check before
 * reading it, the pruning of files by a condition, the metrics Spark records for deletion
 * vectors, and the commit.
 *
 * 1. Open the table at its latest version, check Silt can write its protocol, and that it may
 *    write deletion vectors (`delta.enableDeletionVectors`, which Silt's catalog requires).
 * 2. A condition over the table becomes a file test on partition values and statistics, and, when
 *    it reads partition columns only, an exact per-file decision that needs no data.
 * 3. Commit the removes, deletion vectors, new files (and, for a merge that evolves the schema,
 *    the new metadata) as one version whose read set names what the operation read. A change
 *    that touches nothing commits nothing, as Spark's `commitIfNeeded` skips empty commits.
 */
import type { TableRef } from "../catalog/names.ts";
import type { ReadSet } from "../commit/conflicts.ts";
import { dmlOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import { parsePartitionValue } from "../data/partition-values.ts";
import type { Action, AddFile } from "../delta/actions.ts";
import { physicalName } from "../delta/column-mapping.ts";
import type { StructField } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import {
  analyzePredicate,
  containsAggregate,
  prettySql,
  referencedColumns,
  type Scope,
  scopeOf,
} from "../expr/analyze.ts";
import type { Expr, SqlType } from "../expr/ast.ts";
import { evaluateRows } from "../expr/evaluate.ts";
import { fileMatcher } from "../expr/prune.ts";
import type { Typed } from "../expr/typed.ts";
import { commit } from "./commit.ts";
import { displayName, type OpenTable, openTable } from "./open-table.ts";
import type { DeleteMetrics } from "./row-deletes.ts";
import { checkWriteProtocol, rowTrackingHighWaterMark } from "./write-protocol.ts";

export interface DmlTarget {
  t: OpenTable;
  tableName: string;
  rowTracking: boolean;
  /** Row-id high-water mark of the snapshot; undefined without row tracking. */
  hwm: number | undefined;
  /** How the table's columns may be qualified: the alias, else catalog.schema.table. */
  qualifier: string[];
  /** The table's columns as one relation, qualified as above. */
  scope: Scope;
}

export async function openDmlTarget(
  ctx: SiltContext,
  name: TableRef,
  opts: { defaults?: { catalog?: string; schema?: string }; alias?: string },
): Promise<DmlTarget> {
  const t = await openTable(ctx, name, { defaults: opts.defaults, access: "readWrite" });
  const rowTracking = checkWriteProtocol(t.snapshot.protocol, t.snapshot.metadata);
  const tableName = displayName(t.name);
  if (t.snapshot.metadata.configuration["delta.enableDeletionVectors"] !== "true") {
    // Silt changes rows only through deletion vectors, and a writer may add them only while the
    // property is on; Silt's catalog never lets a table turn it off.
    throw siltError("DELTA_UNSUPPORTED_DML_WITHOUT_DELETION_VECTORS", { tableName });
  }
  const qualifier = opts.alias ? [opts.alias] : [t.name.catalog, t.name.schema, t.name.table];
  return {
    t,
    tableName,
    rowTracking,
    hwm: rowTracking ? rowTrackingHighWaterMark(t.snapshot) : undefined,
    qualifier,
    scope: scopeOf(t.schema.fields, qualifier),
  };
}

/** Delta refuses to remove or rewrite rows of an append-only table (`delta.appendOnly`). */
export function assertNotAppendOnly(target: DmlTarget): void {
  if (target.t.snapshot.metadata.configuration["delta.appendOnly"] === "true") {
    throw siltError("DELTA_CANNOT_MODIFY_APPEND_ONLY", { tableName: target.tableName });
  }
}

/** A WHERE-like condition of `operation`, analysed over `scope`. */
export function analyzeCondition(expr: Expr, scope: Scope, operation: string): Typed {
  const t = analyzePredicate(expr, scope);
  if (containsAggregate(t)) {
    throw siltError("DELTA_AGGREGATION_NOT_SUPPORTED:OPERATION_CONDITION", {
      operation,
      condition: prettySql(t),
    });
  }
  return t;
}

/** Logical path -> physical path (column mapping), what statistics and footers are keyed by. */
export function physicalPath(target: DmlTarget) {
  const fields = target.t.schema.fields;
  const mode = target.t.mappingMode;
  return (path: readonly string[]): string[] => {
    const out: string[] = [];
    let level: StructField[] | undefined = fields;
    for (const part of path) {
      const f: StructField | undefined = level?.find((x) => x.name === part);
      out.push(f ? physicalName(f, mode) : part);
      level =
        f && typeof f.type === "object" && f.type.type === "struct" ? f.type.fields : undefined;
    }
    return out;
  };
}

/** Whether a file's partition values and statistics allow a row satisfying `predicate`. */
export function fileFilter(target: DmlTarget, predicate: Typed, now: bigint) {
  const { t } = target;
  return fileMatcher(predicate, t.schema, t.snapshot.metadata.partitionColumns, {
    now,
    toPhysical: physicalPath(target),
  });
}

/**
 * For a condition that reads partition columns only: each file matches entirely or not at all,
 * decided from its partition values. Undefined when the condition reads any data column.
 */
export function partitionDecider(
  target: DmlTarget,
  predicate: Typed,
  now: bigint,
): ((file: AddFile) => boolean) | undefined {
  const { t } = target;
  const partitionColumns = t.snapshot.metadata.partitionColumns.map((c) => c.toLowerCase());
  const columns = referencedColumns(predicate);
  if (columns.length === 0) return undefined;
  if (!columns.every((c) => partitionColumns.includes(c.name.toLowerCase()))) return undefined;
  const types: SqlType[] = [];
  for (const c of columns) types[c.ordinal] = c.type;
  return (file) => {
    const row: unknown[] = [];
    for (const c of columns) {
      const field = t.schema.fields[c.index];
      const raw = file.partitionValues[physicalName(field, t.mappingMode)];
      row[c.ordinal] = parsePartitionValue(raw, field.type, field.name);
    }
    return evaluateRows(predicate, [row], types, { now })[0] === true;
  };
}

/**
 * The deletion-vector metrics as Spark records them: every add carrying a vector counts as
 * added and every remove carrying one as removed, so an updated vector counts in all three.
 */
export function dvMetrics(m: DeleteMetrics) {
  return {
    added: m.numDeletionVectorsAdded + m.numDeletionVectorsUpdated,
    removed: m.numDeletionVectorsRemoved + m.numDeletionVectorsUpdated,
    updated: m.numDeletionVectorsUpdated,
  };
}

export interface DmlCommit {
  /** The version committed, or the version read when there was nothing to commit. */
  version: number;
  committed: boolean;
}

export async function commitDml(
  ctx: SiltContext,
  target: DmlTarget,
  req: {
    actions: Action[];
    operation: string;
    parameters: Record<string, unknown>;
    metrics: Record<string, string>;
    readSet: ReadSet;
  },
): Promise<DmlCommit> {
  const { t } = target;
  if (req.actions.length === 0) return { version: t.snapshot.version, committed: false };
  const result = await commit(
    ctx,
    t,
    dmlOperation(req.operation, req.parameters, req.metrics, req.readSet),
    req.actions,
  );
  return { version: result.version, committed: true };
}

/** Metric values as the log stores them: strings. */
export function stringMetrics(m: Record<string, number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) out[k] = String(v);
  return out;
}

/** Milliseconds since `start` (performance.now()), whole. */
export const elapsed = (start: number): number =>
  Math.max(0, Math.round(performance.now() - start));
