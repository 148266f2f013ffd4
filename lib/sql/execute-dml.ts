/**
 * UPDATE, DELETE and MERGE statements: each maps onto its operation in lib/ops and answers as
 * Spark does, with the affected row counts as a one-row result (`num_affected_rows`, and for
 * MERGE also `num_updated_rows`, `num_deleted_rows`, `num_inserted_rows`), plus the version the
 * statement committed (the table's version when it changed nothing).
 */

import { resolveName } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import type { FromItem, Query, Statement } from "../expr/ast.ts";
import { deleteRows } from "../ops/delete.ts";
import { type MergeSource, mergeInto } from "../ops/merge.ts";
import { updateRows } from "../ops/update.ts";
import type { SqlResult } from "./execute-ddl.ts";
import { runQuery } from "./query.ts";
import { AUTO_MERGE_CONF, confFlag, type SqlSession } from "./session.ts";

export async function executeUpdate(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "update" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await updateRows(ctx, st.table, {
    assignments: st.assignments,
    condition: st.where,
    alias: st.alias,
    defaults: session.defaults,
    now: session.now,
  });
  return counts(result.version, [["num_affected_rows", result.numUpdatedRows]]);
}

export async function executeDelete(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "delete" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await deleteRows(ctx, st.table, {
    condition: st.where,
    alias: st.alias,
    defaults: session.defaults,
    now: session.now,
  });
  return counts(result.version, [["num_affected_rows", result.numDeletedRows]]);
}

export async function executeMerge(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "merge" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await mergeInto(ctx, st.target, {
    source: () => sourceOf(ctx, st.source, session),
    targetAlias: st.targetAlias,
    on: st.on,
    clauses: st.clauses,
    schemaEvolution: st.withSchemaEvolution || confFlag(session, AUTO_MERGE_CONF, false),
    defaults: session.defaults,
    now: session.now,
  });
  const updated = result.numTargetRowsUpdated;
  const deleted = result.numTargetRowsDeleted;
  const inserted = result.numTargetRowsInserted;
  return counts(result.version, [
    ["num_affected_rows", updated + deleted + inserted],
    ["num_updated_rows", updated],
    ["num_deleted_rows", deleted],
    ["num_inserted_rows", inserted],
  ]);
}

/** USING a table (at any version), a subquery or VALUES, run through the query engine. */
async function sourceOf(
  ctx: SiltContext,
  from: FromItem,
  session: SqlSession,
): Promise<MergeSource> {
  const query: Query = {
    kind: "select",
    distinct: false,
    items: [{ expr: { kind: "star", pos: from.pos } }],
    from,
    groupBy: [],
    orderBy: [],
    pos: from.pos,
  };
  const relation = await runQuery(ctx, query, session);
  let qualifier: string[] | undefined;
  if ("alias" in from && from.alias) qualifier = [from.alias];
  else if (from.kind === "table") {
    const qn = resolveName(from.name, session.defaults);
    qualifier = [qn.catalog, qn.schema, qn.table];
  }
  return { fields: relation.fields, table: relation.table, qualifier };
}

function counts(version: number, values: [string, number][]): SqlResult {
  return {
    columns: values.map(([name]) => ({ name, type: "bigint" })),
    rows: [values.map(([, v]) => v)],
    version,
  };
}
