/**
 * The statements that replace a table or some of its rows, mapped onto their operations:
 *
 * - CREATE TABLE … AS SELECT, CREATE OR REPLACE TABLE, REPLACE TABLE -> ops/replace-table.ts
 * - INSERT OVERWRITE [PARTITION (…)] -> ops/overwrite.ts, or ops/replace-where.ts for static
 *   partition values (Spark turns them into an overwrite by filter)
 * - INSERT INTO … REPLACE WHERE -> ops/replace-where.ts
 * - INSERT INTO … REPLACE USING / ON -> ops/replace-using.ts
 * - INSERT INTO … PARTITION (p = v) -> ops/append.ts with the static values filled in
 * - RESTORE TABLE -> ops/restore.ts
 *
 * The table is opened before the source query runs, and the operation commits on that snapshot,
 * so `INSERT OVERWRITE t SELECT … FROM t` reads exactly the version it replaces.
 */

import * as arrow from "apache-arrow";
import type { SiltContext } from "../context.ts";
import { valuesToArrow } from "../data/json-to-arrow.ts";
import { combineChunks } from "../data/kernels.ts";
import type { DataType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { analyze, expressionSql } from "../expr/analyze.ts";
import type { Expr, Statement } from "../expr/ast.ts";
import { evaluateScalar } from "../expr/evaluate.ts";
import { fromScalar } from "../expr/scalar-json.ts";
import { appendRows } from "../ops/append.ts";
import { displayName, type OpenTable, openTable } from "../ops/open-table.ts";
import { overwriteRows } from "../ops/overwrite.ts";
import { createOrReplaceTable } from "../ops/replace-table.ts";
import { replaceUsing } from "../ops/replace-using.ts";
import { replaceWhere } from "../ops/replace-where.ts";
import { restoreTable } from "../ops/restore.ts";
import { WRITE_ACCESS, type WriteResult } from "../ops/write-commit.ts";
import { MILLIS_PER_DAY } from "../values/calendar.ts";
import { quoteIdent } from "../values/identifiers.ts";
import { checkManagedDelta, EMPTY, type SqlResult } from "./execute-ddl.ts";
import { type Relation, runQuery } from "./query.ts";
import { PARTITION_OVERWRITE_MODE, type SqlSession } from "./session.ts";

type CreateTableStatement = Extract<Statement, { kind: "createTable" }>;
type InsertStatement = Extract<Statement, { kind: "insert" }>;
type RestoreStatement = Extract<Statement, { kind: "restore" }>;

/** CTAS, CREATE OR REPLACE TABLE [AS SELECT], REPLACE TABLE [AS SELECT]. */
export async function executeCreateOrReplace(
  ctx: SiltContext,
  st: CreateTableStatement,
  session: SqlSession,
): Promise<SqlResult> {
  checkManagedDelta(st.name, st.using, st.location);
  if (st.columns !== undefined && st.asQuery !== undefined) {
    throw siltError("_LEGACY_ERROR_TEMP_0035");
  }
  const query = st.asQuery;
  const result = await createOrReplaceTable(ctx, {
    name: st.name,
    defaults: session.defaults,
    mode: st.mode,
    ifNotExists: st.ifNotExists,
    columns: st.columns?.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      comment: c.comment,
    })),
    partitionedBy: st.partitionedBy,
    properties: st.properties,
    using: st.using,
    comment: st.comment,
    source:
      query === undefined
        ? undefined
        : async () => {
            const r = await runQuery(ctx, query, session);
            return { columns: queryColumns(r), rows: { arrow: r.table } };
          },
  });
  return {
    ...EMPTY,
    version: result.version,
    tableId: result.tableId,
    created: result.created,
    replaced: result.replaced,
  };
}

/** A query's output as the columns of a new table: Spark makes every CTAS column nullable. */
function queryColumns(r: Relation) {
  return r.fields.map((f) => {
    if (f.type === "null") {
      throw siltError("UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE:VOID_NULL", {
        name: quoteIdent(f.name),
      });
    }
    return { name: f.name, type: f.type as DataType, nullable: true };
  });
}

/** INSERT OVERWRITE, INSERT INTO … REPLACE WHERE / USING / ON, INSERT … PARTITION (…). */
export async function executeInsertReplace(
  ctx: SiltContext,
  st: InsertStatement,
  session: SqlSession,
): Promise<SqlResult> {
  const replacesRows = st.replaceUsing !== undefined || st.replaceOn !== undefined;
  const access = replacesRows
    ? WRITE_ACCESS.replaceUsing
    : st.replaceWhere !== undefined
      ? WRITE_ACCESS.replaceWhere
      : WRITE_ACCESS.overwrite;
  const t = await openTable(ctx, st.table, { defaults: session.defaults, access });
  const tableName = displayName(t.name);
  const statics = staticPartitions(t, st, session);
  const source = await runQuery(ctx, st.query, session);
  const rows = { arrow: alignToTable(t, st, source, statics, tableName) };
  const now = BigInt(session.now) * 1000n;
  const common = { opened: t, defaults: session.defaults, now };

  let result: WriteResult;
  if (replacesRows) {
    result = await replaceUsing(ctx, st.table, rows, {
      ...common,
      using: st.replaceUsing,
      on: st.replaceOn && {
        condition: st.replaceOn.condition,
        targetAlias: st.alias,
        sourceAlias: st.replaceOn.sourceAlias ?? source.qualifier?.at(-1),
      },
      source: { fields: source.fields, table: source.table },
      byName: st.byName,
    });
  } else if (st.replaceWhere !== undefined) {
    // A session-wide dynamic mode does not apply: Spark lets REPLACE WHERE's own condition win.
    result = await replaceWhere(ctx, st.table, st.replaceWhere, rows, common);
  } else if (st.overwrite) {
    const dynamic =
      (session.conf[PARTITION_OVERWRITE_MODE] ?? "static").toLowerCase() === "dynamic";
    if (statics.length > 0 && !dynamic) {
      const predicate = statics
        .map(
          (s): Expr => ({
            kind: "binary",
            op: "=",
            left: { kind: "column", name: [s.column], pos: s.value.pos },
            right: s.value,
            pos: s.value.pos,
          }),
        )
        .reduce((a, b) => ({ kind: "binary", op: "and", left: a, right: b, pos: a.pos }));
      result = await replaceWhere(ctx, st.table, predicate, rows, common);
    } else {
      result = await overwriteRows(ctx, st.table, rows, {
        ...common,
        dynamicPartitionOverwrite: dynamic,
      });
    }
  } else {
    const appended = await appendRows(ctx, st.table, rows, { defaults: session.defaults });
    return { ...EMPTY, version: appended.version, numAffectedRows: appended.numOutputRows };
  }
  return {
    ...EMPTY,
    version: result.version,
    numAffectedRows: Number(result.metrics.numOutputRows ?? 0),
  };
}

interface StaticPartition {
  column: string;
  value: Expr;
  /** The value in the canonical JSON form of its own type. */
  json: unknown;
}

/** PARTITION (p = v, q): the entries with a value; every entry must name a partition column. */
function staticPartitions(t: OpenTable, st: InsertStatement, session: SqlSession) {
  const out: StaticPartition[] = [];
  const partitionColumns = t.snapshot.metadata.partitionColumns;
  for (const entry of st.partitionSpec ?? []) {
    const column = partitionColumns.find((p) => p.toLowerCase() === entry.column.toLowerCase());
    if (column === undefined) {
      throw siltError("NON_PARTITION_COLUMN", { column: quoteIdent(entry.column) });
    }
    if (entry.value === undefined) continue;
    const typed = analyze(entry.value, { relations: [] });
    const value = evaluateScalar(typed, { now: BigInt(session.now) * 1000n });
    out.push({ column, value: entry.value, json: fromScalar(value, typed.type) });
  }
  return out;
}

/**
 * The query's rows under the table's column names, as INSERT matches them: by name (BY NAME),
 * by the listed columns, or by position over the columns without a static partition value; the
 * static values are added as constant columns. Types are converted by the operation.
 */
function alignToTable(
  t: OpenTable,
  st: InsertStatement,
  source: Relation,
  statics: StaticPartition[],
  tableName: string,
): arrow.Table {
  const isStatic = (name: string) => statics.some((s) => s.column === name);
  const expected = t.schema.fields.filter((f) => !isStatic(f.name)).map((f) => f.name);
  const width = source.fields.length;
  let names: string[];
  if (st.byName) {
    names = source.fields.map((f) => f.name);
  } else if (st.columns) {
    if (st.columns.length !== width) throw arity(tableName, st.columns.length, width);
    names = st.columns;
  } else {
    if (width !== expected.length) throw arity(tableName, expected.length, width);
    names = expected;
  }
  const table = combineChunks(source.table);
  const n = table.numRows;
  const extra = statics.map((s) => {
    const type = t.schema.fields.find((f) => f.name === s.column)!.type;
    return { name: s.column, data: valuesToArrow(new Array(n).fill(s.json), type) };
  });
  const fields = [
    ...table.schema.fields.map((f, i) => new arrow.Field(names[i], f.type, f.nullable)),
    ...extra.map((e) => new arrow.Field(e.name, e.data.type, true)),
  ];
  const schema = new arrow.Schema(fields);
  const batch = table.batches[0];
  if (batch === undefined) return new arrow.Table(schema);
  const children = [...batch.data.children, ...extra.map((e) => e.data)];
  const data = arrow.makeData({
    type: new arrow.Struct(fields),
    length: n,
    nullCount: 0,
    children,
  });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
}

/** An INSERT whose data has fewer or more columns than the target it names. */
export function arity(table: string, target: number, data: number) {
  return data < target
    ? siltError("DELTA_INSERT_COLUMN_ARITY_MISMATCH:TOP_LEVEL", {
        table,
        targetColumns: target,
        dataColumns: data,
      })
    : siltError("INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS:COLUMN_COUNTS", {
        table,
        targetColumns: target,
        dataColumns: data,
      });
}

export const RESTORE_COLUMNS = [
  { name: "table_size_after_restore", type: "bigint" },
  { name: "num_of_files_after_restore", type: "bigint" },
  { name: "num_removed_files", type: "bigint" },
  { name: "num_restored_files", type: "bigint" },
  { name: "removed_files_size", type: "bigint" },
  { name: "restored_files_size", type: "bigint" },
];

/** RESTORE TABLE t TO VERSION AS OF n | TIMESTAMP AS OF expr: Spark's one row of metrics. */
export async function executeRestore(
  ctx: SiltContext,
  st: RestoreStatement,
  session: SqlSession,
): Promise<SqlResult> {
  let timestamp: string | number | undefined;
  if (st.timestamp !== undefined) {
    const typed = analyze(st.timestamp, { relations: [] });
    const v = evaluateScalar(typed, { now: BigInt(session.now) * 1000n });
    if (v === null) {
      throw siltError("DELTA_TIMESTAMP_INVALID", { text: expressionSql(st.timestamp) });
    }
    if (typed.type === "string") timestamp = String(v);
    else if (typeof v === "bigint") timestamp = Number(v / 1000n);
    else if (typed.type === "date" && typeof v === "number") timestamp = v * MILLIS_PER_DAY;
    else timestamp = String(v);
  }
  const result = await restoreTable(ctx, st.table, {
    version: st.version,
    timestamp,
    defaults: session.defaults,
  });
  const m = result.metrics;
  return {
    columns: RESTORE_COLUMNS,
    rows: [
      [
        m.tableSizeAfterRestore,
        m.numOfFilesAfterRestore,
        m.numRemovedFiles,
        m.numRestoredFiles,
        m.removedFilesSize,
        m.restoredFilesSize,
      ],
    ],
    version: result.version,
  };
}
