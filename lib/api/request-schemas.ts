/**
 * The request of every /api/v1 route, declared once: its query string and its JSON body, as strict
 * zod objects (nested ones too), so a misspelt field is refused instead of ignored. The routes
 * validate against these (request-validation.ts) and the OpenAPI document is generated from them
 * (openapi.ts). A new field is one entry in a shape below.
 *
 * The Unity Catalog routes (lib/api/uc/) are not here: they follow Unity Catalog's request shapes.
 */
import * as z from "zod";
import {
  columnSpec,
  count,
  fields,
  flag,
  mustBe,
  names,
  nonEmptyText,
  optional,
  sqlText,
  text,
  textMap,
} from "./request-fields.ts";

export interface RouteSpec {
  method: "get" | "post" | "patch" | "delete";
  /** Hono's form: `/api/v1/tables/:name/rows`. */
  path: string;
  /** What the route does, in Spark's terms where it has one. */
  summary: string;
  query: z.ZodObject;
  body?: z.ZodObject;
  /** An empty body reads as `{}`. */
  bodyOptional?: boolean;
  /**
   * `rows` may instead come as an Arrow IPC stream body; the body's other fields then travel in
   * the query string.
   */
  arrowRows?: boolean;
}

const spec = <const S extends RouteSpec>(s: S): S => s;

/** Defaults for names shorter than catalog.schema.table, in the query string or the body. */
const DEFAULTS = { catalog: optional(text()), schema: optional(text()) };
const NO_QUERY = fields({});
const DEFAULTS_QUERY = fields(DEFAULTS);

const rows = () => z.array(z.unknown(), mustBe("an array of rows (objects or arrays)"));

const NAMESPACE_BODY = fields({
  name: nonEmptyText(),
  comment: optional(text()),
  ifNotExists: optional(flag()),
});
const DROP_QUERY = fields({ ifExists: optional(flag()), cascade: optional(flag()) });

const CREATE_TABLE_BODY = fields({
  ...DEFAULTS,
  name: nonEmptyText(),
  columns: optional(
    z.array(
      columnSpec().extend({ comment: optional(text()) }),
      mustBe('an array like [{"name": "id", "type": "INT"}]'),
    ),
  ),
  partitionedBy: optional(names()),
  properties: optional(textMap()),
  ifNotExists: optional(flag()),
  using: optional(text()),
  comment: optional(text()),
  mode: optional(
    z.enum(
      ["create", "createOrReplace", "replace"],
      mustBe('"create", "createOrReplace" or "replace"'),
    ),
  ),
  rows: optional(rows()),
  query: optional(nonEmptyText()),
});

const READ_FIELDS = {
  ...DEFAULTS,
  columns: optional(names()),
  version: optional(count()),
  timestamp: optional(text()),
  limit: optional(count()),
  format: optional(
    z.enum(["json", "jsonl", "arrow"], mustBe('"json", "jsonl" (JSON lines) or "arrow"')),
  ),
  /** Seconds; the most a deployment allows is checked where the deadline is set (context.ts). */
  statement_timeout: optional(count(1)),
  /** Rows per page; with it the answer may carry a next_page_token (lib/ops/scan.ts). */
  max_rows: optional(count(1)),
  /** A previous page's next_page_token, as it came. */
  page_token: optional(nonEmptyText()),
};

const DYNAMIC = { dynamicPartitionOverwrite: optional(flag()) };

/** A merge clause's SET / INSERT map: column name -> SQL expression. */
const assignments = () =>
  z.record(z.string(), sqlText(), mustBe("an object of column name -> SQL expression"));

/** A clause list; a single clause is taken as a list of one. */
const clauses = <S extends z.ZodRawShape>(shape: S) => {
  const clause = fields({ condition: optional(sqlText()), ...shape });
  return optional(
    z
      .union([z.array(clause), clause], mustBe("an array of clause objects"))
      .transform((v) => (Array.isArray(v) ? v : [v])),
  );
};

const SOURCE_COLUMNS = {
  columns: optional(z.array(columnSpec(), mustBe('an array like [{"name": "id", "type": "INT"}]'))),
};

/** A MERGE source (merge-source.ts): exactly one kind, with that kind's options. */
const MERGE_SOURCE = z.union(
  [
    fields({ rows: rows(), ...SOURCE_COLUMNS }),
    fields({ arrow: nonEmptyText() }),
    fields({ table: nonEmptyText(), version: optional(count()), timestamp: optional(text()) }),
    fields({ parquet: nonEmptyText() }),
    fields({
      csv: nonEmptyText(),
      header: optional(flag()),
      delimiter: optional(text()),
      ...SOURCE_COLUMNS,
    }),
    fields({ json: nonEmptyText(), ...SOURCE_COLUMNS }),
  ],
  mustBe("an object with one of: rows, arrow, table, parquet, csv, json"),
);

const TABLE = "/api/v1/tables/:name";

export const ROUTES = {
  health: spec({
    method: "get",
    path: "/api/v1/health",
    summary: "200 once the server is ready",
    query: NO_QUERY,
  }),
  openapi: spec({
    method: "get",
    path: "/api/v1/openapi.json",
    summary: "this document",
    query: NO_QUERY,
  }),
  createCatalog: spec({
    method: "post",
    path: "/api/v1/catalogs",
    summary: "CREATE CATALOG",
    query: NO_QUERY,
    body: NAMESPACE_BODY,
  }),
  listCatalogs: spec({
    method: "get",
    path: "/api/v1/catalogs",
    summary: "SHOW CATALOGS",
    query: NO_QUERY,
  }),
  dropCatalog: spec({
    method: "delete",
    path: "/api/v1/catalogs/:catalog",
    summary: "DROP CATALOG",
    query: DROP_QUERY,
  }),
  createSchema: spec({
    method: "post",
    path: "/api/v1/catalogs/:catalog/schemas",
    summary: "CREATE SCHEMA",
    query: NO_QUERY,
    body: NAMESPACE_BODY,
  }),
  listSchemas: spec({
    method: "get",
    path: "/api/v1/catalogs/:catalog/schemas",
    summary: "SHOW SCHEMAS",
    query: NO_QUERY,
  }),
  dropSchema: spec({
    method: "delete",
    path: "/api/v1/catalogs/:catalog/schemas/:schema",
    summary: "DROP SCHEMA",
    query: DROP_QUERY,
  }),
  listTables: spec({
    method: "get",
    path: "/api/v1/catalogs/:catalog/schemas/:schema/tables",
    summary: "SHOW TABLES",
    query: NO_QUERY,
  }),
  createTable: spec({
    method: "post",
    path: "/api/v1/tables",
    summary: "CREATE TABLE; with mode, rows or query: CTAS, CREATE OR REPLACE, REPLACE",
    query: DEFAULTS_QUERY,
    body: CREATE_TABLE_BODY,
  }),
  insert: spec({
    method: "post",
    path: `${TABLE}/insert`,
    summary: "INSERT INTO",
    query: DEFAULTS_QUERY,
    body: fields({ ...DEFAULTS, rows: rows() }),
    arrowRows: true,
  }),
  readRows: spec({
    method: "get",
    path: `${TABLE}/rows`,
    summary: "read rows (SELECT, with time travel)",
    query: fields(READ_FIELDS),
  }),
  readRowsPost: spec({
    method: "post",
    path: `${TABLE}/rows`,
    summary: "read rows, the fields as JSON",
    query: DEFAULTS_QUERY,
    body: fields(READ_FIELDS),
    bodyOptional: true,
  }),
  history: spec({
    method: "get",
    path: `${TABLE}/history`,
    summary: "DESCRIBE HISTORY",
    query: fields({ ...DEFAULTS, limit: optional(count(1)) }),
  }),
  detail: spec({
    method: "get",
    path: `${TABLE}/detail`,
    summary: "DESCRIBE DETAIL",
    query: DEFAULTS_QUERY,
  }),
  dropTable: spec({
    method: "delete",
    path: TABLE,
    summary: "DROP TABLE",
    query: fields({ ...DEFAULTS, ifExists: optional(flag()) }),
  }),
  sql: spec({
    method: "post",
    path: "/api/v1/sql",
    summary: "one Spark SQL statement",
    query: NO_QUERY,
    body: fields({
      statement: nonEmptyText(),
      ...DEFAULTS,
      /** STATEMENT_TIMEOUT (seconds) among them: lib/sql/session.ts. */
      conf: optional(textMap()),
      /** Rows per page of a query's answer; with it the answer may carry a next_page_token. */
      max_rows: optional(count(1)),
      /** A previous page's next_page_token, with the same statement, defaults and conf. */
      page_token: optional(nonEmptyText()),
    }),
  }),
  overwrite: spec({
    method: "post",
    path: `${TABLE}/overwrite`,
    summary: "INSERT OVERWRITE",
    query: DEFAULTS_QUERY,
    body: fields({ ...DEFAULTS, rows: rows(), ...DYNAMIC }),
    arrowRows: true,
  }),
  replaceWhere: spec({
    method: "post",
    path: `${TABLE}/replace-where`,
    summary: "INSERT INTO … REPLACE WHERE",
    query: DEFAULTS_QUERY,
    body: fields({ ...DEFAULTS, rows: rows(), predicate: sqlText(), ...DYNAMIC }),
    arrowRows: true,
  }),
  replaceUsing: spec({
    method: "post",
    path: `${TABLE}/replace-using`,
    summary: "INSERT INTO … REPLACE USING (…) / REPLACE ON …",
    query: DEFAULTS_QUERY,
    body: fields({
      ...DEFAULTS,
      rows: rows(),
      columns: optional(names()),
      on: optional(sqlText()),
      targetAlias: optional(nonEmptyText()),
      sourceAlias: optional(nonEmptyText()),
      predicate: optional(sqlText()),
      ...DYNAMIC,
    }),
    arrowRows: true,
  }),
  restore: spec({
    method: "post",
    path: `${TABLE}/restore`,
    summary: "RESTORE TABLE … TO VERSION | TIMESTAMP AS OF",
    query: DEFAULTS_QUERY,
    body: fields({
      ...DEFAULTS,
      version: optional(count()),
      timestamp: optional(
        z.union(
          [z.string(), z.number()],
          mustBe("a timestamp string ('2026-10-03 12:00:00', ISO-8601) or epoch milliseconds"),
        ),
      ),
    }),
  }),
  update: spec({
    method: "post",
    path: `${TABLE}/update`,
    summary: "UPDATE",
    query: DEFAULTS_QUERY,
    body: fields({ ...DEFAULTS, condition: optional(sqlText()), set: assignments() }),
  }),
  delete: spec({
    method: "post",
    path: `${TABLE}/delete`,
    summary: "DELETE",
    query: DEFAULTS_QUERY,
    body: fields({ ...DEFAULTS, condition: optional(sqlText()) }),
    bodyOptional: true,
  }),
  merge: spec({
    method: "post",
    path: `${TABLE}/merge`,
    summary: "MERGE INTO",
    query: DEFAULTS_QUERY,
    body: fields({
      ...DEFAULTS,
      source: MERGE_SOURCE,
      on: sqlText(),
      targetAlias: optional(nonEmptyText()),
      sourceAlias: optional(nonEmptyText()),
      whenMatched: clauses({
        update: optional(assignments()),
        updateAll: optional(flag()),
        delete: optional(flag()),
      }),
      whenNotMatched: clauses({ insert: optional(assignments()), insertAll: optional(flag()) }),
      whenNotMatchedBySource: clauses({
        update: optional(assignments()),
        delete: optional(flag()),
      }),
      schemaEvolution: optional(flag()),
      conf: optional(textMap()),
    }),
  }),
  optimize: spec({
    method: "post",
    path: `${TABLE}/optimize`,
    summary: "OPTIMIZE [ZORDER BY]",
    query: DEFAULTS_QUERY,
    body: fields({
      ...DEFAULTS,
      where: optional(sqlText()),
      zorderBy: optional(names()),
      timeBudgetMs: optional(count()),
    }),
    bodyOptional: true,
  }),
  vacuum: spec({
    method: "post",
    path: `${TABLE}/vacuum`,
    summary: "VACUUM",
    query: DEFAULTS_QUERY,
    body: fields({
      ...DEFAULTS,
      retainHours: optional(z.number(mustBe("a number of hours"))),
      dryRun: optional(flag()),
      mode: optional(
        z
          .string(mustBe('"lite" or "full"'))
          .transform((s) => s.toLowerCase())
          .pipe(z.enum(["lite", "full"], mustBe('"lite" or "full"'))),
      ),
      conf: optional(textMap()),
    }),
    bodyOptional: true,
  }),
  showGrants: spec({
    method: "get",
    path: "/api/v1/permissions/:securable_type/:full_name",
    summary: "SHOW GRANTS",
    query: fields({ principal: optional(text()) }),
  }),
  changeGrants: spec({
    method: "patch",
    path: "/api/v1/permissions/:securable_type/:full_name",
    summary: "GRANT / REVOKE",
    query: NO_QUERY,
    body: fields({
      changes: z
        .array(
          fields({
            principal: nonEmptyText(),
            add: optional(z.array(z.string(mustBe("a privilege name")))),
            remove: optional(z.array(z.string(mustBe("a privilege name")))),
          }),
          mustBe('a list like [{"principal": "alice", "add": ["SELECT"], "remove": []}]'),
        )
        .min(1, mustBe('a list like [{"principal": "alice", "add": ["SELECT"], "remove": []}]')),
    }),
  }),
  temporaryTableCredentials: spec({
    method: "post",
    path: "/api/v1/temporary-table-credentials",
    summary: "credentials scoped to one table's files",
    query: DEFAULTS_QUERY,
    body: fields({
      ...DEFAULTS,
      table_id: optional(text()),
      table_name: optional(text()),
      operation: optional(text()),
    }),
  }),
};
