/**
 * `POST /api/v1/sql`: one Spark SQL statement in, a result set out (DESIGN §6).
 *
 * 1. Parse the statement (PARSE_SYNTAX_ERROR with the position on bad input).
 * 2. Dispatch it: DDL to the catalog and table operations, queries to the query engine, INSERT
 *    to the query engine and then the append operation.
 * 3. Answer with typed columns and canonical JSON rows, or, for statements that return no rows,
 *    empty columns and rows plus what the statement did (the version it committed, …).
 */

import * as arrow from "apache-arrow";
import { type SiltContext, withDeadline } from "../context.ts";
import { sliceTable } from "../data/kernels.ts";
import { sparkTypeName } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import type { Statement } from "../expr/ast.ts";
import { appendRows } from "../ops/append.ts";
import { displayName, openTable } from "../ops/open-table.ts";
import { decodeQueryToken, encodePageToken, requestFingerprint } from "../ops/page-token.ts";
import { executeAlterColumns } from "./execute-alter-columns.ts";
import { EMPTY, executeCreateTable, executeDdl, type SqlResult } from "./execute-ddl.ts";
import { executeDelete, executeMerge, executeUpdate } from "./execute-dml.ts";
import { executeGrant, executeShowGrants } from "./execute-grants.ts";
import { executeOptimize, executeReorg, executeVacuum } from "./execute-maintenance.ts";
import { executeAlterProperties, executeShowProperties } from "./execute-properties.ts";
import {
  arity,
  executeCreateOrReplace,
  executeInsertReplace,
  executeRestore,
} from "./execute-replace.ts";
import { columnValues, type Relation, runQuery } from "./query.ts";
import { checkConf, type QueryPaging, type SqlSession, STATEMENT_TIMEOUT_CONF } from "./session.ts";
import { parseStatement } from "./statement-parser.ts";

export interface SqlRequest {
  statement: string;
  catalog?: string;
  schema?: string;
  conf?: Record<string, string>;
  /** Rows of a query's answer per page; with it the answer may end with a next page token. */
  maxRows?: number;
  /** Where the previous page of the same query ended. */
  pageToken?: string;
  /** The caller's request: aborted (Ctrl-C in `silt sql`), it stops the statement. */
  signal?: AbortSignal;
}

export async function executeSql(ctx: SiltContext, req: SqlRequest): Promise<SqlResult> {
  const conf = checkConf(req.conf ?? {});
  const timed = withDeadline(
    ctx,
    conf[STATEMENT_TIMEOUT_CONF],
    `the conf ${STATEMENT_TIMEOUT_CONF} (seconds)`,
    req.signal,
  );
  const session: SqlSession = {
    defaults: { catalog: req.catalog, schema: req.schema },
    conf,
    now: ctx.clock(),
  };
  const st = parseStatement(req.statement);
  if (st.kind === "query" && (req.maxRows !== undefined || req.pageToken !== undefined)) {
    return queryPage(timed, st, session, req);
  }
  // Only queries are paged: a token never reruns a statement that writes.
  if (req.pageToken !== undefined) throw siltError("INVALID_PAGE_TOKEN:OTHER_REQUEST");
  return executeStatement(timed, st, session);
}

/**
 * One page of a query's answer. Each page runs the query again, at the table versions the first
 * page read (session.ts QueryPaging) and at its instant, and answers rows [offset, offset +
 * maxRows) of it.
 */
async function queryPage(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "query" }>,
  session: SqlSession,
  req: SqlRequest,
): Promise<SqlResult> {
  const { [STATEMENT_TIMEOUT_CONF]: _budget, ...conf } = session.conf;
  const request = requestFingerprint({ ...session.defaults, statement: req.statement, conf });
  const from = req.pageToken === undefined ? undefined : decodeQueryToken(req.pageToken, request);
  const pinned = new Map(
    from?.pins.map(([name, tableId, version]) => [name, { tableId, version }]),
  );
  const paging: QueryPaging = { pinned, read: new Map() };
  const now = from?.now ?? session.now;
  const relation = await runQuery(ctx, st.query, { ...session, now, paging });
  const n = relation.table.numRows;
  const start = Math.min(from?.offset ?? 0, n);
  const end = req.maxRows === undefined ? n : Math.min(n, start + req.maxRows);
  const page = resultOf({ ...relation, table: sliceTable(relation.table, start, end) });
  if (end >= n) return page;
  const pins = [...paging.read].map(([name, t]): [string, string, number] => [
    name,
    t.tableId,
    t.version,
  ]);
  return { ...page, next_page_token: encodePageToken({ pins, now, offset: end }, request) };
}

export async function executeStatement(
  ctx: SiltContext,
  st: Statement,
  session: SqlSession,
): Promise<SqlResult> {
  switch (st.kind) {
    case "createCatalog":
    case "createSchema":
    case "show":
    case "describeHistory":
    case "describeDetail":
    case "describeTable":
    case "dropTable":
    case "renameTable":
    case "dropSchema":
    case "dropCatalog":
      return executeDdl(ctx, st, session);
    case "createTable":
      if (st.mode !== "create" || st.asQuery !== undefined) {
        return executeCreateOrReplace(ctx, st, session);
      }
      return executeCreateTable(ctx, st, session);
    case "query":
      return resultOf(await runQuery(ctx, st.query, session));
    case "insert":
      return executeInsert(ctx, st, session);
    case "set":
      return executeSet(st, session);
    case "update":
      return executeUpdate(ctx, st, session);
    case "delete":
      return executeDelete(ctx, st, session);
    case "merge":
      return executeMerge(ctx, st, session);
    case "restore":
      return executeRestore(ctx, st, session);
    case "optimize":
      return executeOptimize(ctx, st, session);
    case "vacuum":
      return executeVacuum(ctx, st, session);
    case "reorg":
      return executeReorg(ctx, st, session);
    case "grant":
      return executeGrant(ctx, st, session);
    case "showGrants":
      return executeShowGrants(ctx, st, session);
    case "alterProperties":
      return executeAlterProperties(ctx, st, session);
    case "showProperties":
      return executeShowProperties(ctx, st, session);
    case "alterColumns":
      return executeAlterColumns(ctx, st, session);
  }
}

/** A relation as the API answers it: Spark type names, canonical JSON values per row. */
export function resultOf(r: Relation): SqlResult {
  const columns = r.fields.map((f) => ({
    name: f.name,
    type: f.type === "null" ? "void" : sparkTypeName(f.type),
  }));
  const values = r.fields.map((f, i) => columnValues(r, i, f.type));
  const rows: unknown[][] = [];
  for (let i = 0; i < r.table.numRows; i++) rows.push(values.map((c) => c[i]));
  return { columns, rows };
}

async function executeInsert(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "insert" }>,
  session: SqlSession,
): Promise<SqlResult> {
  if (st.overwrite || st.replaceWhere || st.replaceUsing || st.replaceOn || st.partitionSpec) {
    return executeInsertReplace(ctx, st, session);
  }
  const t = await openTable(ctx, st.table, { defaults: session.defaults, access: "write" });
  const tableName = displayName(t.name);
  const source = await runQuery(ctx, st.query, session);
  const targetNames = t.schema.fields.map((f) => f.name);
  let names: string[];
  if (st.byName) {
    names = source.fields.map((f) => f.name);
  } else if (st.columns) {
    if (st.columns.length !== source.fields.length)
      throw arity(tableName, st.columns.length, source.fields.length);
    names = st.columns;
  } else {
    if (source.fields.length !== targetNames.length) {
      throw arity(tableName, targetNames.length, source.fields.length);
    }
    names = targetNames;
  }
  // The append converts by name with the table's store-assignment rules; renaming positionally
  // here is what makes INSERT positional.
  const renamed = new arrow.Table(
    new arrow.Schema(
      source.table.schema.fields.map((f, i) => new arrow.Field(names[i], f.type, f.nullable)),
    ),
    source.table.batches.map(
      (b) =>
        new arrow.RecordBatch(
          new arrow.Schema(
            b.schema.fields.map((f, i) => new arrow.Field(names[i], f.type, f.nullable)),
          ),
          b.data,
        ),
    ),
  );
  const result = await appendRows(
    ctx,
    st.table,
    { arrow: renamed },
    { defaults: session.defaults },
  );
  return { ...EMPTY, version: result.version, numAffectedRows: result.numOutputRows };
}

/**
 * SET on a stateless endpoint: settings travel with each request (`conf`), so SET reports the
 * request's settings (all of them, or one) and refuses to set one, which would last only for this
 * statement.
 */
function executeSet(st: Extract<Statement, { kind: "set" }>, session: SqlSession): SqlResult {
  if (st.key === "__use__" || st.key === "__use_catalog__") {
    throw siltError("UNSUPPORTED_FEATURE.USE", { value: st.value });
  }
  if (st.value !== undefined) {
    throw siltError("UNSUPPORTED_FEATURE.SET", { key: st.key ?? "", value: st.value });
  }
  const entries =
    st.key === undefined || st.key === "-v"
      ? Object.entries(session.conf).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      : [[st.key, session.conf[st.key] ?? "<undefined>"]];
  return {
    columns: [
      { name: "key", type: "string" },
      { name: "value", type: "string" },
    ],
    rows: entries,
  };
}
