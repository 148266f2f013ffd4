/**
 * INSERT INTO t REPLACE USING (c1, …) and INSERT INTO t REPLACE ON <condition> (Delta 4.3 /
 * Databricks): one atomic commit that deletes every target row for which some source row matches
 * and inserts all source rows.
 *
 * 1. Refuse the combinations Delta refuses (REPLACE WHERE or dynamic partition overwrite given as
 *    write options, USING together with ON).
 * 2. Open the table and convert the source rows to its schema (these are the rows inserted).
 * 3. Resolve the match:
 *    - USING: every column must exist in the table and in the source, at the same position
 *      unless the insert is BY NAME. A target row matches when a source row has equal values in
 *      all of them; NULL equals nothing (like JOIN USING), so NULL-keyed target rows stay and
 *      NULL-keyed source rows are only appended.
 *    - ON: a boolean condition over the target (its name or alias) and the source (its alias),
 *      evaluated against the source as the query produced it. A column that resolves on both
 *      sides is ambiguous, one that resolves on neither unresolved; both fail before any read.
 * 4. Find the matching target rows file by file: USING keys hashed; ON hashed on its equality
 *    conjuncts between a target-only and a source-only expression (`=` skips NULL keys, `<=>`
 *    keeps them) and the whole condition evaluated on the candidate pairs, or on every pair when
 *    it has no such conjunct. When all USING columns are partition columns, files are decided
 *    from their partition values without being opened. An empty source matches nothing.
 * 5. Write the new files, mark the matches deleted (file removal or deletion vectors), and commit
 *    one `WRITE` (mode Overwrite, `replaceUsingCols` or `replaceOnCond`) that read the whole table.
 */

import * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import { READ_WHOLE_TABLE } from "../commit/conflicts.ts";
import type { SiltContext } from "../context.ts";
import { arrowValues } from "../data/arrow-to-json.ts";
import { combineChunks, takeRows } from "../data/kernels.ts";
import { parsePartitionValue } from "../data/partition-values.ts";
import type { Action, AddFile } from "../delta/actions.ts";
import { physicalName } from "../delta/column-mapping.ts";
import type { DataType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import {
  analyze,
  analyzePredicate,
  expressionSql,
  referencedColumns,
  type Scope,
  type ScopeRelation,
} from "../expr/analyze.ts";
import type { Expr, Name, SqlType } from "../expr/ast.ts";
import { evaluatePredicate, evaluateTable } from "../expr/evaluate.ts";
import type { Typed } from "../expr/typed.ts";
import { quoteIdent } from "../values/identifiers.ts";
import type { InputRows } from "./input-rows.ts";
import type { OpenTable } from "./open-table.ts";
import { selectiveOverwriteMetrics } from "./replace-where.ts";
import { deleteActions, findMatches } from "./row-deletes.ts";
import {
  commitOverwrite,
  newRows,
  openWriteTarget,
  type TargetOptions,
  WRITE_ACCESS,
  type WriteResult,
} from "./write-commit.ts";
import { writeDataFiles } from "./write-files.ts";

export interface SourceField {
  name: string;
  type: SqlType;
  nullable: boolean;
}

export interface ReplaceUsingOptions extends TargetOptions {
  /** REPLACE USING (c1, …). */
  using?: string[];
  /** REPLACE ON condition, with the names that qualify each side. */
  on?: { condition: Expr; text?: string; targetAlias?: string; sourceAlias?: string };
  /**
   * The source as the condition sees it: the query's own columns and rows, before conversion
   * to the table's types. Default: the converted rows under the table's column names.
   */
  source?: { fields: SourceField[]; table: arrow.Table };
  /** INSERT … BY NAME: USING columns need not sit at the same position. */
  byName?: boolean;
  /** Refused combinations, as write options of the JSON routes. */
  predicate?: string;
  dynamicPartitionOverwrite?: boolean;
  /** The statement's instant in microseconds, for current_date()/current_timestamp(). */
  now?: bigint;
}

/** A target table's rows (all columns, schema order) -> 1 where some source row matches. */
type Matcher = (target: arrow.Table) => Uint8Array;

export async function replaceUsing(
  ctx: SiltContext,
  name: TableRef,
  input: InputRows,
  opts: ReplaceUsingOptions,
): Promise<WriteResult> {
  checkCombinations(opts);
  const target = await openWriteTarget(ctx, name, WRITE_ACCESS.replaceUsing, opts);
  const { t } = target;
  const sourceFields =
    opts.source?.fields ??
    t.schema.fields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable }));
  const evalCtx = { now: opts.now ?? BigInt(ctx.clock()) * 1000n };

  // Resolution errors are analysis errors: they come before any row is converted.
  let parameters: Record<string, string>;
  let using: UsingColumn[] | undefined;
  let condition: Typed | undefined;
  if (opts.using !== undefined) {
    using = resolveUsing(t, sourceFields, opts.using, opts.byName === true);
    parameters = { replaceUsingCols: `(${opts.using.join(", ")})` };
  } else {
    const on = opts.on!;
    const scope = onScope(t, sourceFields, on.targetAlias, on.sourceAlias);
    checkOnColumns(on.condition, scope);
    condition = analyzePredicate(on.condition, scope);
    parameters = { replaceOnCond: on.text ?? expressionSql(on.condition) };
  }

  const data = newRows(target, input);
  let matcher: Matcher;
  let byPartition: ((file: AddFile) => boolean | undefined) | undefined;
  if (using !== undefined) {
    const columns = using;
    const keys = sourceKeys(
      data,
      columns.map((c) => c.tableIndex),
      t,
    );
    matcher = (table) => usingMatches(table, columns, keys, t);
    byPartition = usingPartitionDecider(t, columns, keys);
  } else {
    const typed = condition!;
    const sourceTable = combineChunks(opts.source?.table ?? data);
    matcher = (table) => onMatches(typed, combineChunks(table), sourceTable, evalCtx);
  }

  const { snapshot } = t;
  const matches =
    data.numRows === 0
      ? []
      : await findMatches(ctx, snapshot, {
          byPartition,
          match: (table) => matcher(table),
        });
  const written = await writeDataFiles(ctx, {
    tableRoot: t.entry.location,
    metadata: snapshot.metadata,
    data,
    version: snapshot.version + 1,
    rowIdHighWaterMark: target.hwm,
  });
  const deleted = await deleteActions(ctx, t.entry.location, matches);
  const actions: Action[] = [...deleted.actions, ...written.actions];
  return commitOverwrite(ctx, target, {
    actions,
    parameters,
    metrics: selectiveOverwriteMetrics(written.metrics, deleted.metrics),
    readSet: READ_WHOLE_TABLE,
    kind: opts.using !== undefined ? "using" : "on",
  });
}

function checkCombinations(opts: ReplaceUsingOptions): void {
  if (opts.using !== undefined && opts.on !== undefined) {
    throw siltError("DELTA_INCOMPATIBLE_DATAFRAME_OPTIONS");
  }
  if (opts.using === undefined && opts.on === undefined) {
    throw siltError("INVALID_REQUEST:REPLACE_WITHOUT_MATCH");
  }
  if (opts.using !== undefined && opts.using.length === 0) {
    throw siltError("INVALID_REQUEST:REPLACE_USING_EMPTY");
  }
  if (opts.predicate !== undefined) {
    throw siltError("DELTA_OVERWRITE_BY_FILTER_INCOMPATIBLE_REPLACE_ON_OR_USING");
  }
  if (opts.dynamicPartitionOverwrite) {
    throw siltError("DELTA_DYNAMIC_PARTITION_OVERWRITE_INCOMPATIBLE_REPLACE_ON_OR_USING");
  }
}

// ---------------------------------------------------------------------------------------------
// USING

interface UsingColumn {
  name: string;
  tableIndex: number;
}

function resolveUsing(
  t: OpenTable,
  sourceFields: SourceField[],
  using: string[],
  byName: boolean,
): UsingColumn[] {
  const tableNames = t.schema.fields.map((f) => f.name);
  const sourceNames = sourceFields.map((f) => f.name);
  const indexIn = (names: string[], n: string) =>
    names.findIndex((x) => x.toLowerCase() === n.toLowerCase());
  const suggestion = (names: string[]) =>
    [...names]
      .sort()
      .map((n) => quoteIdent(n))
      .join(", ");
  const out: UsingColumn[] = [];
  const misaligned: string[] = [];
  for (const col of using) {
    const ti = indexIn(tableNames, col);
    if (ti < 0) throw unresolvedUsing(col, "table", suggestion(tableNames));
    const si = indexIn(sourceNames, col);
    if (si < 0) throw unresolvedUsing(col, "query", suggestion(sourceNames));
    if (!byName && ti !== si) misaligned.push(quoteIdent(col));
    if (!out.some((c) => c.tableIndex === ti)) out.push({ name: tableNames[ti], tableIndex: ti });
  }
  if (misaligned.length > 0) {
    throw siltError("INSERT_REPLACE_USING_DISALLOW_MISALIGNED_COLUMNS", {
      misaligned: misaligned.join(", "),
    });
  }
  return out;
}

const unresolvedUsing = (col: string, relationType: string, suggestion: string) =>
  siltError("UNRESOLVED_INSERT_REPLACE_USING_COLUMN", {
    col: quoteIdent(col),
    relationType,
    suggestion,
  });

const keyText = (values: unknown[]): string =>
  JSON.stringify(values, (_, v) => (typeof v === "bigint" ? `${v}n` : v));

/** Keys of the source rows, in the table's types; rows with a NULL key match nothing. */
function sourceKeys(data: arrow.Table, indexes: number[], t: OpenTable): Set<string> {
  const columns = indexes.map((i) =>
    arrowValues(data.getChildAt(i)!, t.schema.fields[i].type as DataType),
  );
  const keys = new Set<string>();
  for (let r = 0; r < data.numRows; r++) {
    const key = columns.map((c) => c[r]);
    if (key.some((v) => v === null)) continue;
    keys.add(keyText(key));
  }
  return keys;
}

function usingMatches(
  table: arrow.Table,
  columns: UsingColumn[],
  keys: Set<string>,
  t: OpenTable,
): Uint8Array {
  const out = new Uint8Array(table.numRows);
  if (keys.size === 0) return out;
  const values = columns.map((c) =>
    arrowValues(table.getChildAt(c.tableIndex)!, t.schema.fields[c.tableIndex].type),
  );
  for (let r = 0; r < table.numRows; r++) {
    const key = values.map((v) => v[r]);
    if (key.some((v) => v === null)) continue;
    if (keys.has(keyText(key))) out[r] = 1;
  }
  return out;
}

/** When every USING column partitions the table, a file's partition values decide it. */
function usingPartitionDecider(t: OpenTable, columns: UsingColumn[], keys: Set<string>) {
  const partitionColumns = t.snapshot.metadata.partitionColumns;
  if (!columns.every((c) => partitionColumns.includes(c.name))) return undefined;
  return (file: AddFile): boolean => {
    const key = columns.map((c) => {
      const f = t.schema.fields[c.tableIndex];
      const physical = physicalName(f, t.mappingMode);
      const values = file.partitionValues ?? {};
      const raw = Object.hasOwn(values, physical) ? values[physical] : values[f.name];
      return parsePartitionValue(raw ?? null, f.type, f.name);
    });
    return !key.some((v) => v === null) && keys.has(keyText(key));
  };
}

// ---------------------------------------------------------------------------------------------
// ON

function onScope(
  t: OpenTable,
  sourceFields: SourceField[],
  targetAlias: string | undefined,
  sourceAlias: string | undefined,
): Scope {
  return {
    relations: [
      {
        qualifier: targetAlias ? [targetAlias] : [t.name.catalog, t.name.schema, t.name.table],
        columns: t.schema.fields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable })),
      },
      {
        qualifier: sourceAlias ? [sourceAlias] : [],
        columns: sourceFields.map((f) => ({
          name: f.name,
          // An all-NULL column of a VALUES list has NULL's own type; it compares as any type.
          type: f.type as DataType,
          nullable: f.nullable,
        })),
      },
    ],
  };
}

/** Delta's own resolution errors: each column must resolve on exactly one side. */
function checkOnColumns(condition: Expr, scope: Scope): void {
  const resolvesIn = (relation: ScopeRelation, name: Name): boolean => {
    try {
      analyze({ kind: "column", name, pos: { line: 1, column: 1 } }, { relations: [relation] });
      return true;
    } catch {
      return false;
    }
  };
  const ambiguous: string[] = [];
  const unresolved: string[] = [];
  for (const name of columnNames(condition)) {
    const inTarget = resolvesIn(scope.relations[0], name);
    const inSource = resolvesIn(scope.relations[1], name);
    const sql = name.map((p) => quoteIdent(p)).join(".");
    if (inTarget && inSource && !ambiguous.includes(sql)) ambiguous.push(sql);
    if (!inTarget && !inSource && !unresolved.includes(sql)) unresolved.push(sql);
  }
  if (ambiguous.length > 0) {
    throw siltError("DELTA_INSERT_REPLACE_ON_AMBIGUOUS_COLUMNS_IN_CONDITION", {
      ambiguous: ambiguous.join(", "),
    });
  }
  if (unresolved.length > 0) {
    throw siltError("DELTA_INSERT_REPLACE_ON_UNRESOLVED_COLUMNS_IN_CONDITION", {
      unresolved: unresolved.join(", "),
    });
  }
}

/** Every column reference in an expression, as written. */
function columnNames(e: Expr): Name[] {
  const out: Name[] = [];
  const visit = (x: Expr): void => {
    switch (x.kind) {
      case "column":
        out.push(x.name);
        return;
      case "literal":
      case "star":
      case "exists":
      case "scalarSubquery":
        return;
      case "unary":
      case "isNull":
      case "isBool":
      case "cast":
      case "inSubquery":
        visit(x.operand);
        return;
      case "binary":
      case "isDistinctFrom":
        visit(x.left);
        visit(x.right);
        return;
      case "in":
        visit(x.operand);
        x.list.forEach(visit);
        return;
      case "between":
        visit(x.operand);
        visit(x.low);
        visit(x.high);
        return;
      case "like":
        visit(x.operand);
        visit(x.pattern);
        return;
      case "case":
        if (x.operand) visit(x.operand);
        for (const b of x.branches) {
          visit(b.when);
          visit(b.then);
        }
        if (x.otherwise) visit(x.otherwise);
        return;
      case "call":
        x.args.forEach(visit);
        return;
    }
  };
  visit(e);
  return out;
}

interface EquiKey {
  target: Typed;
  source: Typed;
  nullSafe: boolean;
}

/** Conjuncts `targetExpr = sourceExpr` (or `<=>`), usable as hash keys. */
function equiKeys(t: Typed): EquiKey[] {
  const conjuncts: Typed[] = [];
  const split = (x: Typed) => {
    if (x.kind === "and") {
      split(x.left);
      split(x.right);
    } else conjuncts.push(x);
  };
  split(t);
  const sideOf = (x: Typed): number | undefined => {
    const rels = new Set(referencedColumns(x).map((c) => c.relation));
    return rels.size === 1 ? [...rels][0] : undefined;
  };
  const out: EquiKey[] = [];
  for (const c of conjuncts) {
    if (c.kind !== "compare" || (c.op !== "=" && c.op !== "<=>")) continue;
    const l = sideOf(c.left);
    const r = sideOf(c.right);
    if (l === 0 && r === 1) out.push({ target: c.left, source: c.right, nullSafe: c.op === "<=>" });
    else if (l === 1 && r === 0)
      out.push({ target: c.right, source: c.left, nullSafe: c.op === "<=>" });
  }
  return out;
}

/** Pairs evaluated at once, bounding the memory of a block of the cross product. */
const PAIR_BLOCK = 65_536;

function onMatches(
  condition: Typed,
  target: arrow.Table,
  source: arrow.Table,
  evalCtx: { now: bigint },
): Uint8Array {
  const n = target.numRows;
  const m = source.numRows;
  const out = new Uint8Array(n);
  if (n === 0 || m === 0) return out;
  const keys = equiKeys(condition);
  // Candidate source rows per target row: the hash bucket of its key, or every source row.
  let candidates: (r: number) => number[] | undefined;
  if (keys.length > 0) {
    const keyValues = (side: "target" | "source", table: arrow.Table, relation: number) =>
      keys.map((k) => {
        const expr = k[side];
        const col = evaluateTable(expr, table, {
          ...evalCtx,
          column: (c) => {
            if (c.relation !== relation) throw new Error("equality key reads the other side");
            return table.getChildAt(c.index)!;
          },
        });
        return arrowValues(col, expr.type as DataType);
      });
    const keyAt = (values: unknown[][], r: number): string | undefined => {
      const key = values.map((v) => v[r]);
      if (key.some((v, i) => v === null && !keys[i].nullSafe)) return undefined;
      return keyText(key);
    };
    const sourceValues = keyValues("source", source, 1);
    const buckets = new Map<string, number[]>();
    for (let s = 0; s < m; s++) {
      const key = keyAt(sourceValues, s);
      if (key === undefined) continue;
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        bucket = [];
        buckets.set(key, bucket);
      }
      bucket.push(s);
    }
    const targetValues = keyValues("target", target, 0);
    candidates = (r) => {
      const key = keyAt(targetValues, r);
      return key === undefined ? undefined : buckets.get(key);
    };
  } else {
    const all = Array.from({ length: m }, (_, s) => s);
    candidates = () => all;
  }

  let ti: number[] = [];
  let si: number[] = [];
  const flush = () => {
    if (ti.length === 0) return;
    const mask = evaluatePairs(condition, target, source, ti, si, evalCtx);
    for (let i = 0; i < ti.length; i++) if (mask[i]) out[ti[i]] = 1;
    ti = [];
    si = [];
  };
  for (let r = 0; r < n; r++) {
    const bucket = candidates(r);
    if (bucket === undefined) continue;
    for (const s of bucket) {
      ti.push(r);
      si.push(s);
    }
    if (ti.length >= PAIR_BLOCK) flush();
  }
  flush();
  return out;
}

function evaluatePairs(
  condition: Typed,
  target: arrow.Table,
  source: arrow.Table,
  ti: number[],
  si: number[],
  evalCtx: { now: bigint },
): Uint8Array {
  const left = combineChunks(takeRows(target, ti));
  const right = combineChunks(takeRows(source, si));
  const schema = new arrow.Schema([]);
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({ type: new arrow.Struct([]), length: ti.length, children: [] }),
  );
  return evaluatePredicate(condition, batch, {
    ...evalCtx,
    column: (c) => (c.relation === 0 ? left : right).getChildAt(c.index)!,
  });
}
