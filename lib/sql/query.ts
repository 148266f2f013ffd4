/**
 * Runs a query (SELECT, VALUES) to an Arrow table with typed output columns.
 *
 * 1. FROM: a Delta table (at a version or timestamp) read through the snapshot, opening only the
 *    files whose partition values and statistics can satisfy the WHERE clause and decoding only
 *    the columns the query mentions; an inline VALUES table; a subquery; or one empty row.
 * 2. WHERE filters the rows (three-valued logic: only TRUE keeps a row).
 * 3. Aggregation, when the query groups or calls an aggregate: rows are grouped by the GROUP BY
 *    values (one group without GROUP BY), each aggregate is computed per group, and the select
 *    list, HAVING and ORDER BY are evaluated over the groups with the aggregates as columns.
 * 4. Projection (expanding `*`), DISTINCT, ORDER BY (by output name or ordinal first, then by
 *    input expression), OFFSET and LIMIT.
 */

import * as arrow from "apache-arrow";
import type { SiltContext } from "../context.ts";
import { arrowValues } from "../data/arrow-to-json.ts";
import { valuesToArrow } from "../data/json-to-arrow.ts";
import { combineChunks, concatData, filterTable, sliceTable, takeRows } from "../data/kernels.ts";
import type { ParquetFooter } from "../data/parquet.ts";
import type { DataType, StructField } from "../delta/schema.ts";
import { SiltError, siltError } from "../errors.ts";
import {
  analyze,
  analyzePredicate,
  expressionSql,
  prettySql,
  type Scope,
  type ScopeRelation,
} from "../expr/analyze.ts";
import type { Expr, FromItem, OrderItem, Query, SelectItem, SqlType } from "../expr/ast.ts";
import {
  type EvalContext,
  evaluatePredicate,
  evaluateScalar,
  evaluateTable,
} from "../expr/evaluate.ts";
import { lookupFunction } from "../expr/functions.ts";
import { canMatchRowGroup, fileMatcher } from "../expr/prune.ts";
import { fromScalar, toScalar } from "../expr/scalar-json.ts";
import type { Typed } from "../expr/typed.ts";
import { quotedType, type Scalar, widerCommonType } from "../expr/types.ts";
import { openTable } from "../ops/open-table.ts";
import { readSnapshotRows, type ScanMetrics } from "../ops/read-files.ts";
import { inPathOrder } from "../ops/scan.ts";
import { MILLIS_PER_DAY } from "../values/calendar.ts";
import { GroupedAggregation } from "./aggregate.ts";
import type { SqlSession } from "./session.ts";
import { sortIndices } from "./sort.ts";

export interface ResultField {
  name: string;
  type: SqlType;
  nullable: boolean;
}

/** Rows with typed, named columns; `qualifier` is how a FROM item's columns may be qualified. */
export interface Relation {
  fields: ResultField[];
  table: arrow.Table;
  qualifier?: string[];
  /** For a table scan: what reading it touched. */
  scan?: ScanMetrics;
}

interface Env {
  ctx: SiltContext;
  session: SqlSession;
  evalCtx: EvalContext;
}

export async function runQuery(
  ctx: SiltContext,
  query: Query,
  session: SqlSession,
): Promise<Relation> {
  const evalCtx = { now: BigInt(session.now) * 1000n, deadline: ctx.deadline };
  return run({ ctx, session, evalCtx }, query);
}

async function run(env: Env, q: Query): Promise<Relation> {
  switch (q.kind) {
    case "values":
      return valuesRelation(env, q.rows, q.columns, q.alias);
    case "select":
      return runSelect(env, q);
    case "setOp":
      throw siltError("UNSUPPORTED_FEATURE.SET_OPERATION", { op: q.op.toUpperCase() });
  }
}

// ---------------------------------------------------------------------------------------------
// SELECT

async function runSelect(env: Env, q: Extract<Query, { kind: "select" }>): Promise<Relation> {
  const aggregating =
    q.groupBy.length > 0 ||
    q.items.some((i) => hasAggregate(i.expr)) ||
    (q.having !== undefined && hasAggregate(q.having));
  let out: Relation;
  let orderInput: { relation: Relation; orderBy: OrderItem[] };
  let scan: ScanMetrics | undefined;
  if (aggregating) {
    // Aggregation folds the rows batch by batch: a table is never read whole.
    const input =
      q.from?.kind === "table"
        ? await tableBatches(env, q.from, mentionedColumns(q), q.where)
        : relationBatches(
            env,
            q.from ? await fromRelation(env, q.from, mentionedColumns(q), q.where) : oneRow(),
            q.where,
          );
    const grouped = await aggregate(env, input, q);
    out = grouped.output;
    orderInput = { relation: grouped.groups, orderBy: grouped.orderBy };
    scan = input.scan;
  } else {
    let source = q.from ? await fromRelation(env, q.from, mentionedColumns(q), q.where) : oneRow();
    if (q.where) {
      const predicate = analyzePredicate(q.where, scopeFor(source));
      const mask = evaluatePredicate(predicate, source.table, env.evalCtx);
      source = { ...source, table: filterTable(source.table, mask) };
    }
    if (q.having) {
      throw siltError("MISSING_GROUP_BY");
    }
    out = project(env, source, q.items);
    orderInput = { relation: source, orderBy: q.orderBy };
    scan = source.scan;
  }
  if (q.distinct) out = distinct(out);
  if (orderInput.orderBy.length > 0) {
    out = order(env, out, orderInput.relation, orderInput.orderBy, q.distinct);
  }
  return { ...limitOffset(env, out, q.limit, q.offset), scan };
}

function scopeFor(...relations: Relation[]): Scope {
  return {
    relations: relations.map(
      (r): ScopeRelation => ({
        qualifier: r.qualifier,
        columns: r.fields.map((f) => ({
          name: f.name,
          type: f.type as DataType,
          nullable: f.nullable,
        })),
      }),
    ),
  };
}

function oneRow(): Relation {
  const schema = new arrow.Schema([]);
  const data = arrow.makeData({ type: new arrow.Struct([]), length: 1, children: [] });
  return { fields: [], table: new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]) };
}

// ---------------------------------------------------------------------------------------------
// FROM

async function fromRelation(
  env: Env,
  from: FromItem,
  mentioned: ReturnType<typeof mentionedColumns>,
  where: Expr | undefined,
): Promise<Relation> {
  switch (from.kind) {
    case "table":
      return tableRelation(env, from, mentioned, where);
    case "values":
      return valuesRelation(env, from.rows, from.columns, from.alias);
    case "subquery": {
      const inner = await run(env, from.query);
      return renameColumns(inner, from.columns, from.alias);
    }
    case "join":
      throw siltError("UNSUPPORTED_FEATURE.JOIN");
  }
}

async function tableRelation(
  env: Env,
  from: Extract<FromItem, { kind: "table" }>,
  mentioned: ReturnType<typeof mentionedColumns>,
  where: Expr | undefined,
): Promise<Relation> {
  const scan = await openScan(env, from, mentioned, where);
  const { schema, table, metrics } = await readSnapshotRows(
    env.ctx.store,
    scan.snapshot,
    scan.options,
  );
  return { fields: fieldsOf(schema.fields), table, qualifier: scan.qualifier, scan: metrics };
}

/** Files a few at a time, as the reader decodes them at once: one batch in memory. */
const FILES_PER_BATCH = 4;

/**
 * A table's rows, a few files at a time, already filtered by WHERE. The first part is read
 * before returning, since it gives the columns; an empty table still gives one (empty) part.
 */
async function tableBatches(
  env: Env,
  from: Extract<FromItem, { kind: "table" }>,
  mentioned: ReturnType<typeof mentionedColumns>,
  where: Expr | undefined,
): Promise<BatchInput> {
  const { snapshot, options, qualifier } = await openScan(env, from, mentioned, where);
  const scan: ScanMetrics = { filesRead: 0, rowGroupsRead: 0, rowGroupsSkipped: 0 };
  const chunks: (typeof snapshot.files)[] = [];
  for (let i = 0; i < snapshot.files.length; i += FILES_PER_BATCH) {
    chunks.push(snapshot.files.slice(i, i + FILES_PER_BATCH));
  }
  const read = async (files: typeof snapshot.files) => {
    const part = await readSnapshotRows(env.ctx.store, { ...snapshot, files }, options);
    scan.filesRead += part.metrics.filesRead;
    scan.rowGroupsRead += part.metrics.rowGroupsRead;
    scan.rowGroupsSkipped += part.metrics.rowGroupsSkipped;
    return part;
  };
  const first = await read(chunks[0] ?? []);
  const fields = fieldsOf(first.schema.fields);
  const predicate = where
    ? analyzePredicate(where, scopeFor({ fields, table: new arrow.Table(), qualifier }))
    : undefined;
  const filtered = (table: arrow.Table) =>
    predicate ? filterTable(table, evaluatePredicate(predicate, table, env.evalCtx)) : table;
  async function* batches(): AsyncGenerator<arrow.Table> {
    yield filtered(first.table);
    for (const files of chunks.slice(1)) yield filtered((await read(files)).table);
  }
  return { fields, qualifier, batches: batches(), scan };
}

/** Rows to aggregate: the columns, then the rows a batch at a time. */
interface BatchInput {
  fields: ResultField[];
  qualifier?: string[];
  batches: AsyncIterable<arrow.Table>;
  scan?: ScanMetrics;
}

/** A relation already in memory (VALUES, a subquery, no FROM), filtered by WHERE up front. */
function relationBatches(env: Env, source: Relation, where: Expr | undefined): BatchInput {
  let table = source.table;
  if (where) {
    const predicate = analyzePredicate(where, scopeFor(source));
    table = filterTable(table, evaluatePredicate(predicate, table, env.evalCtx));
  }
  async function* batches(): AsyncGenerator<arrow.Table> {
    yield table;
  }
  return {
    fields: source.fields,
    qualifier: source.qualifier,
    batches: batches(),
    scan: source.scan,
  };
}

/** Opens the table and plans its read: the columns needed and the files and row groups WHERE can match. */
async function openScan(
  env: Env,
  from: Extract<FromItem, { kind: "table" }>,
  mentioned: ReturnType<typeof mentionedColumns>,
  where: Expr | undefined,
) {
  const travel = from.timeTravel;
  let timestamp: string | number | undefined;
  if (travel?.timestamp) {
    const t = analyze(travel.timestamp, { relations: [] });
    const v = evaluateScalar(t, env.evalCtx);
    timestamp =
      typeof v === "bigint"
        ? Number(v / 1000n)
        : typeof v === "number"
          ? v * MILLIS_PER_DAY
          : String(v);
    if (t.type === "string") timestamp = String(v);
  }
  const paging = env.session.paging;
  const key = from.name.map((p) => p.toLowerCase()).join(".");
  const pin = travel === undefined ? paging?.pinned.get(key) : undefined;
  const t = await openTable(env.ctx, from.name, {
    access: "read",
    defaults: env.session.defaults,
    version: pin?.version ?? travel?.version,
    timestamp,
  });
  if (pin !== undefined && pin.tableId !== t.entry.tableId) {
    // Dropped and created again since the first page: not the table the pages were reading.
    throw siltError("INVALID_PAGE_TOKEN:OTHER_REQUEST");
  }
  paging?.read.set(key, { tableId: t.entry.tableId, version: t.snapshot.version });
  const qualifier = from.alias ? [from.alias] : [t.name.catalog, t.name.schema, t.name.table];
  const known = new Set(t.schema.fields.map((f) => f.name.toLowerCase()));
  // A name that is no column (a typo, or an output alias) needs every column in scope, so the
  // error lists them all as Spark's suggestions do.
  const columns =
    mentioned === "all" || [...mentioned.single].some((n) => !known.has(n))
      ? undefined
      : t.schema.fields.filter((f) => mentioned.parts.has(f.name.toLowerCase())).map((f) => f.name);
  let files = paging === undefined ? t.snapshot.files : inPathOrder(t.snapshot.files);
  let rowGroupFilter: ((footer: ParquetFooter) => number[]) | undefined;
  if (where) {
    const full: Scope = scopeFor({
      fields: fieldsOf(t.schema.fields),
      table: new arrow.Table(),
      qualifier,
    });
    const predicate = analyzePredicate(where, full);
    const toPhysical = physicalPath(t.schema.fields, t.mappingMode);
    const now = env.evalCtx.now;
    files = files.filter(
      fileMatcher(predicate, t.schema, t.snapshot.metadata.partitionColumns, { now, toPhysical }),
    );
    rowGroupFilter = (footer) =>
      footer.rowGroups.flatMap((rg, i) =>
        canMatchRowGroup(predicate, footer, rg, { now, toPhysical }) ? [i] : [],
      );
  }
  const options = { columns, rowGroupFilter, deadline: env.ctx.deadline };
  return { snapshot: { ...t.snapshot, files }, options, qualifier };
}

function physicalPath(fields: StructField[], mode: string) {
  return (path: readonly string[]): string[] => {
    if (mode === "none") return [...path];
    const out: string[] = [];
    let level: StructField[] | undefined = fields;
    for (const part of path) {
      const f: StructField | undefined = level?.find((x) => x.name === part);
      out.push((f?.metadata["delta.columnMapping.physicalName"] as string | undefined) ?? part);
      level =
        f && typeof f.type === "object" && f.type.type === "struct" ? f.type.fields : undefined;
    }
    return out;
  };
}

const fieldsOf = (fields: StructField[]): ResultField[] =>
  fields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable }));

/**
 * Lower-cased names the query's column references use: every part of qualified ones (so a
 * struct field reference keeps its column) and the single-part ones alone, or "all" for `*`.
 */
function mentionedColumns(
  q: Extract<Query, { kind: "select" }>,
): { parts: Set<string>; single: Set<string> } | "all" {
  const parts = new Set<string>();
  const single = new Set<string>();
  let star = false;
  const visit = (e: Expr): void => {
    switch (e.kind) {
      case "column":
        for (const p of e.name) parts.add(p.toLowerCase());
        if (e.name.length === 1) single.add(e.name[0].toLowerCase());
        return;
      case "star":
        // count(*) counts rows and reads no column; only `*` as a select item needs them all.
        if (q.items.some((i) => i.expr === e)) star = true;
        return;
      default:
        for (const c of exprChildren(e)) visit(c);
    }
  };
  for (const i of q.items) visit(i.expr);
  if (q.where) visit(q.where);
  for (const g of q.groupBy) visit(g);
  if (q.having) visit(q.having);
  for (const o of q.orderBy) visit(o.expr);
  return star ? "all" : { parts, single };
}

// ---------------------------------------------------------------------------------------------
// VALUES

function valuesRelation(
  env: Env,
  rows: Expr[][],
  columns: string[] | undefined,
  alias: string | undefined,
): Relation {
  const width = rows[0]?.length ?? 0;
  rows.forEach((r, i) => {
    if (r.length !== width) {
      throw siltError("INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH", {
        expectedNumCols: width,
        actualNumCols: r.length,
        rowIndex: i,
      });
    }
  });
  const empty: Scope = { relations: [] };
  const typed = rows.map((r) => r.map((e) => analyze(e, empty)));
  const fields: ResultField[] = [];
  const children: arrow.Data[] = [];
  for (let c = 0; c < width; c++) {
    const type = widerCommonType(typed.map((r) => r[c].type));
    if (type === undefined) {
      throw siltError("INVALID_INLINE_TABLE.INCOMPATIBLE_TYPES_IN_INLINE_TABLE", {
        ordinal: c + 1,
      });
    }
    const values = typed.map((r) =>
      fromScalar(castTo(evaluateScalar(r[c], env.evalCtx), r[c].type, type), type),
    );
    fields.push({
      name: columns?.[c] ?? `col${c + 1}`,
      type,
      nullable: values.some((v) => v === null),
    });
    children.push(columnData(values, type));
  }
  if (columns && columns.length !== width) {
    throw siltError("ASSIGNMENT_ARITY_MISMATCH", { columnsCount: columns.length, width });
  }
  return {
    fields,
    table: tableOf(fields, children, rows.length),
    qualifier: alias ? [alias] : undefined,
  };
}

function castTo(v: Scalar | null, from: SqlType, to: SqlType): Scalar | null {
  if (v === null || from === to || JSON.stringify(from) === JSON.stringify(to)) return v;
  // Widening to the column's common type goes through the canonical value: exact for numbers,
  // decimals and datetimes alike.
  return toScalar(fromScalar(v, from), to);
}

function columnData(values: unknown[], type: SqlType): arrow.Data {
  if (type === "null") return arrow.makeData({ type: new arrow.Null(), length: values.length });
  return valuesToArrow(values, type);
}

function tableOf(fields: ResultField[], children: arrow.Data[], length: number): arrow.Table {
  const schema = new arrow.Schema(
    fields.map((f, i) => new arrow.Field(f.name, children[i].type, f.nullable)),
  );
  const data = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length,
    nullCount: 0,
    children,
  });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
}

function renameColumns(
  r: Relation,
  columns: string[] | undefined,
  alias: string | undefined,
): Relation {
  if (columns && columns.length !== r.fields.length) {
    throw siltError("ASSIGNMENT_ARITY_MISMATCH", {
      columnsCount: columns.length,
      width: r.fields.length,
    });
  }
  const fields = r.fields.map((f, i) => ({ ...f, name: columns?.[i] ?? f.name }));
  const table = combineChunks(r.table);
  const children = table.batches[0]?.data.children ?? fields.map((f) => columnData([], f.type));
  return {
    fields,
    table: tableOf(fields, children as arrow.Data[], table.numRows),
    qualifier: alias ? [alias] : undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Projection

function project(env: Env, source: Relation, items: SelectItem[]): Relation {
  const scope = scopeFor(source);
  const fields: ResultField[] = [];
  const children: arrow.Data[] = [];
  const table = combineChunks(source.table);
  for (const item of items) {
    if (item.expr.kind === "star") {
      const cols = starColumns(source, item.expr.qualifier);
      for (const i of cols) {
        fields.push(source.fields[i]);
        children.push(columnOf(table, i, source.fields[i].type));
      }
      continue;
    }
    const typed = analyze(item.expr, scope);
    fields.push({
      name: item.alias ?? outputName(item.expr),
      type: typed.type,
      nullable: typed.nullable,
    });
    children.push(vectorData(evaluateTable(typed, table, env.evalCtx), typed.type, table.numRows));
  }
  return { fields, table: tableOf(fields, children, table.numRows) };
}

function starColumns(source: Relation, qualifier: string[] | undefined): number[] {
  if (qualifier) {
    const q = qualifier.map((p) => p.toLowerCase());
    const own = (source.qualifier ?? []).map((p) => p.toLowerCase());
    const matches =
      q.length <= own.length && q.every((p, i) => p === own[own.length - q.length + i]);
    if (!matches) {
      throw siltError("CANNOT_RESOLVE_STAR_EXPAND", {
        qualifier: qualifier.map((p) => `\`${p}\``).join("."),
        fields: source.fields.map((f) => `\`${f.name}\``).join(", "),
      });
    }
  }
  return source.fields.map((_, i) => i);
}

/** Spark's name for an unaliased select item: the column's name, else the expression's text. */
function outputName(e: Expr): string {
  if (e.kind === "column") return e.name[e.name.length - 1];
  const sql = expressionSql(e);
  return sql.startsWith("(") && sql.endsWith(")") ? sql.slice(1, -1) : sql;
}

function columnOf(table: arrow.Table, i: number, type: SqlType): arrow.Data {
  const child = table.batches[0]?.data.children[i];
  return (child as arrow.Data | undefined) ?? columnData([], type);
}

function vectorData(v: arrow.Vector, type: SqlType, n: number): arrow.Data {
  if (v.data.length === 0) return columnData([], type);
  if (v.data.length === 1) return v.data[0];
  const joined = concatData(v.data as arrow.Data[]);
  return joined.length === n ? joined : joined.slice(0, n);
}

// ---------------------------------------------------------------------------------------------
// Aggregation

function hasAggregate(e: Expr): boolean {
  if (e.kind === "call" && lookupFunction(e.name)?.kind === "aggregate") return true;
  return exprChildren(e).some(hasAggregate);
}

interface Grouped {
  /** One row per group: group keys then aggregates, as columns `__g<i>` and `__a<i>`. */
  groups: Relation;
  output: Relation;
  orderBy: OrderItem[];
}

async function aggregate(
  env: Env,
  input: BatchInput,
  q: Extract<Query, { kind: "select" }>,
): Promise<Grouped> {
  const scope = scopeFor({
    fields: input.fields,
    table: new arrow.Table(),
    qualifier: input.qualifier,
  });
  const keyTyped = q.groupBy.map((g) => analyze(g, scope));

  // Every aggregate call in the select list, HAVING and ORDER BY becomes a column of the groups.
  const aggCalls: Expr[] = [];
  const rewrite = (e: Expr): Expr => {
    const k = q.groupBy.findIndex((g) => sameExpr(g, e));
    if (k >= 0) return { kind: "column", name: [`__g${k}`], pos: e.pos };
    if (e.kind === "call" && lookupFunction(e.name)?.kind === "aggregate") {
      let a = aggCalls.findIndex((x) => sameExpr(x, e));
      if (a < 0) a = aggCalls.push(e) - 1;
      return { kind: "column", name: [`__a${a}`], pos: e.pos };
    }
    return mapExpr(e, rewrite);
  };
  const items = q.items.map((i) => ({ ...i, expr: rewrite(i.expr), original: i.expr }));
  const having = q.having ? rewrite(q.having) : undefined;
  const orderBy = q.orderBy.map((o) => ({ ...o, expr: rewrite(o.expr) }));

  const aggTyped = aggCalls.map((call) => {
    const typed = analyze(call, scope);
    if (typed.kind !== "aggregate")
      throw new Error("aggregate call did not analyze to an aggregate");
    return typed;
  });
  const folding = new GroupedAggregation(keyTyped, aggTyped, env.evalCtx);
  for await (const table of input.batches) {
    for (const batch of table.batches) {
      env.ctx.deadline?.check();
      folding.add(batch);
    }
  }
  const result = folding.finish();
  const numGroups = result.numGroups;
  const fields: ResultField[] = [];
  const children: arrow.Data[] = [];
  keyTyped.forEach((t, k) => {
    fields.push({ name: `__g${k}`, type: t.type, nullable: t.nullable });
    children.push(columnData(result.keys[k], t.type));
  });
  aggTyped.forEach((typed, a) => {
    fields.push({ name: `__a${a}`, type: typed.type, nullable: typed.nullable });
    children.push(columnData(result.aggregates[a], typed.type));
  });
  let groups: Relation = { fields, table: tableOf(fields, children, numGroups) };
  if (having) {
    const mask = evaluatePredicate(
      analyzePredicate(having, scopeFor(groups)),
      groups.table,
      env.evalCtx,
    );
    groups = { ...groups, table: filterTable(groups.table, mask) };
  }
  for (const item of items) {
    if (item.expr.kind === "star") {
      throw siltError("MISSING_AGGREGATION");
    }
  }
  const output = project(
    env,
    groups,
    items.map((i) => ({ expr: i.expr, alias: i.alias ?? outputName(i.original) })),
  );
  return { groups, output, orderBy };
}

// ---------------------------------------------------------------------------------------------
// DISTINCT, ORDER BY, LIMIT

function distinct(r: Relation): Relation {
  const cols = r.fields.map((f, i) => columnValues(r, i, f.type));
  const seen = new Set<string>();
  const keep: number[] = [];
  for (let i = 0; i < r.table.numRows; i++) {
    const key = JSON.stringify(cols.map((c) => c[i]));
    if (!seen.has(key)) {
      seen.add(key);
      keep.push(i);
    }
  }
  return keep.length === r.table.numRows ? r : { ...r, table: takeRows(r.table, keep) };
}

function order(
  env: Env,
  out: Relation,
  input: Relation,
  orderBy: OrderItem[],
  distinctOutput: boolean,
): Relation {
  const n = out.table.numRows;
  const keys = orderBy.map((o) => {
    const outputIndex = outputReference(out, o.expr);
    if (outputIndex !== undefined) {
      const type = out.fields[outputIndex].type;
      return {
        values: columnValues(out, outputIndex, type),
        type,
        descending: o.descending,
        nullsFirst: o.nullsFirst,
      };
    }
    if (distinctOutput || input.table.numRows !== n) {
      throw siltError("UNRESOLVED_COLUMN.WITH_SUGGESTION:NAME", {
        key: expressionSql(o.expr),
        suggestions: out.fields.map((f) => `\`${f.name}\``).join(", "),
      });
    }
    const typed = analyze(o.expr, scopeFor(input));
    const values = arrowValues(
      evaluateTable(typed, combineChunks(input.table), env.evalCtx),
      typed.type as DataType,
    );
    return { values, type: typed.type, descending: o.descending, nullsFirst: o.nullsFirst };
  });
  return { ...out, table: takeRows(out.table, sortIndices(keys, n, env.ctx.deadline)) };
}

/** ORDER BY 2, or ORDER BY a name the select list outputs. */
function outputReference(out: Relation, e: Expr): number | undefined {
  if (e.kind === "literal" && typeof e.value === "number" && Number.isInteger(e.value)) {
    if (e.value < 1 || e.value > out.fields.length) {
      throw siltError("ORDER_BY_POS_OUT_OF_RANGE", {
        value: e.value,
        fieldsCount: out.fields.length,
      });
    }
    return e.value - 1;
  }
  if (e.kind === "column" && e.name.length === 1) {
    const name = e.name[0].toLowerCase();
    const matches = out.fields.flatMap((f, i) => (f.name.toLowerCase() === name ? [i] : []));
    if (matches.length === 1) return matches[0];
  }
  return undefined;
}

function limitOffset(env: Env, r: Relation, limit?: Expr, offset?: Expr): Relation {
  const start = offset ? limitLikeValue(env, r, offset, "offset") : 0;
  const end = limit ? start + limitLikeValue(env, r, limit, "limit") : r.table.numRows;
  if (start === 0 && end >= r.table.numRows) return r;
  return { ...r, table: sliceTable(r.table, start, Math.min(end, r.table.numRows)) };
}

/**
 * A LIMIT or OFFSET count, checked in the order of Spark's checkLimitLikeClause: a constant (a
 * column of the rows it limits is not one), of type INT (so not 1.5, '2', 2L or 3000000000),
 * not NULL, not negative. The expression and type go in double quotes, as Spark passes them.
 */
function limitLikeValue(env: Env, r: Relation, e: Expr, name: "limit" | "offset"): number {
  let typed: Typed;
  try {
    typed = analyze(e, { relations: [] });
  } catch (err) {
    if (!(err instanceof SiltError && err.errorClass.startsWith("UNRESOLVED_COLUMN"))) throw err;
    // Resolving against the rows it limits tells a column (not constant) from a typo.
    typed = analyze(e, scopeFor(r));
    throw siltError("INVALID_LIMIT_LIKE_EXPRESSION.IS_UNFOLDABLE", {
      expr: `"${prettySql(typed)}"`,
      name,
    });
  }
  const expr = `"${prettySql(typed)}"`;
  if (typed.type !== "integer") {
    throw siltError("INVALID_LIMIT_LIKE_EXPRESSION.DATA_TYPE", {
      expr,
      name,
      dataType: quotedType(typed.type),
    });
  }
  const v = evaluateScalar(typed, env.evalCtx) as number | null;
  if (v === null) throw siltError("INVALID_LIMIT_LIKE_EXPRESSION.IS_NULL", { expr, name });
  if (v < 0)
    throw siltError("INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE:EXPRESSION", { expr, name, v });
  return v;
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Canonical JSON values of output column `i`. */
export function columnValues(r: Relation, i: number, type: SqlType): unknown[] {
  if (type === "null") return new Array(r.table.numRows).fill(null);
  const vector = r.table.getChildAt(i);
  return vector ? arrowValues(vector, type) : [];
}

function sameExpr(a: Expr, b: Expr): boolean {
  return expressionSql(a).toLowerCase() === expressionSql(b).toLowerCase();
}

function exprChildren(e: Expr): Expr[] {
  switch (e.kind) {
    case "literal":
    case "column":
    case "star":
    case "exists":
    case "scalarSubquery":
      return [];
    case "unary":
    case "isNull":
    case "isBool":
    case "cast":
    case "inSubquery":
      return [e.operand];
    case "binary":
    case "isDistinctFrom":
      return [e.left, e.right];
    case "in":
      return [e.operand, ...e.list];
    case "between":
      return [e.operand, e.low, e.high];
    case "like":
      return [e.operand, e.pattern];
    case "case":
      return [
        ...(e.operand ? [e.operand] : []),
        ...e.branches.flatMap((b) => [b.when, b.then]),
        ...(e.otherwise ? [e.otherwise] : []),
      ];
    case "call":
      return e.args;
  }
}

/** `e` with each direct child replaced by `f(child)`. */
function mapExpr(e: Expr, f: (x: Expr) => Expr): Expr {
  switch (e.kind) {
    case "literal":
    case "column":
    case "star":
    case "exists":
    case "scalarSubquery":
      return e;
    case "unary":
    case "isNull":
    case "isBool":
    case "cast":
    case "inSubquery":
      return { ...e, operand: f(e.operand) } as Expr;
    case "binary":
    case "isDistinctFrom":
      return { ...e, left: f(e.left), right: f(e.right) };
    case "in":
      return { ...e, operand: f(e.operand), list: e.list.map(f) };
    case "between":
      return { ...e, operand: f(e.operand), low: f(e.low), high: f(e.high) };
    case "like":
      return { ...e, operand: f(e.operand), pattern: f(e.pattern) };
    case "case":
      return {
        ...e,
        operand: e.operand ? f(e.operand) : undefined,
        // biome-ignore lint/suspicious/noThenProperty: CASE … WHEN … THEN, as the AST names it.
        branches: e.branches.map((b) => ({ when: f(b.when), then: f(b.then) })),
        otherwise: e.otherwise ? f(e.otherwise) : undefined,
      };
    case "call":
      return { ...e, args: e.args.map(f) };
  }
}
