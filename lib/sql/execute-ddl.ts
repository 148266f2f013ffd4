/**
 * Statements about names rather than rows: CREATE/SHOW/DROP of catalogs, schemas and tables,
 * DESCRIBE. Each maps onto one operation in lib/ops and answers in the SQL result shape.
 */
import { qualifyNameParts } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { sparkTypeName } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import type { Statement } from "../expr/ast.ts";
import { assertDeltaFormat, createTable } from "../ops/create-table.ts";
import { describeDetail } from "../ops/detail.ts";
import { dropTable } from "../ops/drop-table.ts";
import { describeHistory } from "../ops/history.ts";
import {
  createCatalog,
  createSchema,
  dropCatalog,
  dropSchema,
  listCatalogs,
  listSchemas,
  listTables,
} from "../ops/namespaces.ts";
import { openTable } from "../ops/open-table.ts";
import { renameTable } from "../ops/rename-table.ts";
import type { ResultSet } from "../ops/result-set.ts";
import type { SqlSession } from "./session.ts";

export interface SqlResult extends ResultSet {
  /** What a statement that returns no rows did: the version it committed, rows it wrote, … */
  [detail: string]: unknown;
}

export const EMPTY: ResultSet = { columns: [], rows: [] };

type Ddl = Extract<
  Statement,
  {
    kind:
      | "createCatalog"
      | "createSchema"
      | "show"
      | "describeHistory"
      | "describeDetail"
      | "describeTable"
      | "dropTable"
      | "renameTable"
      | "dropSchema"
      | "dropCatalog";
  }
>;

export async function executeDdl(
  ctx: SiltContext,
  st: Ddl,
  session: SqlSession,
): Promise<SqlResult> {
  const defaults = session.defaults;
  switch (st.kind) {
    case "createCatalog":
      await createCatalog(ctx, st.name, { comment: st.comment, ifNotExists: st.ifNotExists });
      return { ...EMPTY };
    case "createSchema": {
      const [catalog, schema] = schemaParts(st.name, session);
      await createSchema(ctx, catalog, schema, {
        comment: st.comment,
        ifNotExists: st.ifNotExists,
      });
      return { ...EMPTY };
    }
    case "show":
      return show(ctx, st, session);
    case "describeHistory":
      return describeHistory(ctx, st.table, { limit: st.limit, defaults });
    case "describeDetail":
      return describeDetail(ctx, st.table, { defaults });
    case "describeTable":
      return describeTable(ctx, st.table, session);
    case "dropTable": {
      const res = await dropTable(ctx, st.table, { ifExists: st.ifExists, defaults });
      return { ...EMPTY, dropped: res.dropped };
    }
    case "renameTable":
      await renameTable(ctx, st.table, st.newName, { defaults });
      return { ...EMPTY };
    case "dropSchema": {
      const [catalog, schema] = schemaParts(st.name, session);
      const res = await dropSchema(ctx, catalog, schema, {
        ifExists: st.ifExists,
        cascade: st.cascade,
      });
      return { ...EMPTY, droppedTables: res.droppedTables };
    }
    case "dropCatalog": {
      const res = await dropCatalog(ctx, st.name, { ifExists: st.ifExists, cascade: st.cascade });
      return { ...EMPTY, droppedTables: res.droppedTables };
    }
  }
}

/** CREATE TABLE with a column list (CTAS and REPLACE belong to the replace operations). */
export async function executeCreateTable(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "createTable" }>,
  session: SqlSession,
): Promise<SqlResult> {
  checkManagedDelta(st.name, st.using, st.location);
  const result = await createTable(ctx, {
    name: st.name,
    defaults: session.defaults,
    columns: (st.columns ?? []).map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      comment: c.comment,
    })),
    partitionedBy: st.partitionedBy,
    properties: st.properties,
    ifNotExists: st.ifNotExists,
    using: st.using,
    comment: st.comment,
  });
  return { ...EMPTY, version: result.version, tableId: result.tableId, created: result.created };
}

/**
 * Managed tables are Delta tables at a location the catalog allocates (seed 000): without USING
 * DELTA Spark falls back to its default format, which Unity Catalog refuses.
 */
export function checkManagedDelta(name: string[], using: string | undefined, location?: string) {
  assertDeltaFormat(name.join("."), using);
  if (location !== undefined) {
    throw siltError("INVALID_PARAMETER_VALUE:MANAGED_LOCATION", { name: name.join(".") });
  }
}

function schemaParts(name: string[], session: SqlSession): [string, string] {
  const q = qualifyNameParts([...name, "_"], session.defaults);
  return [q.catalog, q.schema];
}

async function show(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "show" }>,
  session: SqlSession,
): Promise<SqlResult> {
  let result: ResultSet;
  let nameColumn: number;
  switch (st.what) {
    case "catalogs":
      result = await listCatalogs(ctx);
      result = {
        columns: [{ name: "catalog", type: "string" }],
        rows: result.rows.map((r) => [r[0]]),
      };
      nameColumn = 0;
      break;
    case "schemas": {
      const catalog = st.in?.[0] ?? session.defaults.catalog;
      if (catalog === undefined) {
        throw siltError("INVALID_SCHEMA_OR_RELATION_NAME:SHOW_SCHEMAS_NEEDS_CATALOG");
      }
      const listed = await listSchemas(ctx, catalog);
      result = {
        columns: [{ name: "namespace", type: "string" }],
        rows: listed.rows.map((r) => [r[1]]),
      };
      nameColumn = 0;
      break;
    }
    case "tables": {
      const [catalog, schema] = schemaParts(st.in ?? [], session);
      const listed = await listTables(ctx, catalog, schema);
      result = {
        columns: [
          { name: "namespace", type: "string" },
          { name: "tableName", type: "string" },
          { name: "isTemporary", type: "boolean" },
        ],
        rows: listed.rows.map((r) => [r[1], r[2], false]),
      };
      nameColumn = 1;
      break;
    }
  }
  if (st.like !== undefined) {
    const re = likePattern(st.like);
    result = { ...result, rows: result.rows.filter((r) => re.test(String(r[nameColumn]))) };
  }
  return result;
}

/** SHOW … LIKE patterns: `*` matches anything, `|` separates alternatives, case-insensitive. */
function likePattern(pattern: string): RegExp {
  const alternatives = pattern.split("|").map((p) =>
    p
      .trim()
      .replace(/[.+?^${}()[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*"),
  );
  return new RegExp(`^(?:${alternatives.join("|")})$`, "i");
}

async function describeTable(
  ctx: SiltContext,
  name: string[],
  session: SqlSession,
): Promise<SqlResult> {
  const t = await openTable(ctx, name, { defaults: session.defaults, access: "read" });
  const rows: unknown[][] = t.schema.fields.map((f) => [
    f.name,
    sparkTypeName(f.type),
    typeof f.metadata.comment === "string" ? f.metadata.comment : null,
  ]);
  const partitions = t.snapshot.metadata.partitionColumns;
  if (partitions.length > 0) {
    rows.push(["# Partition Information", "", ""], ["# col_name", "data_type", "comment"]);
    for (const p of partitions) {
      const f = t.schema.fields.find((x) => x.name === p)!;
      rows.push([f.name, sparkTypeName(f.type), null]);
    }
  }
  return {
    columns: [
      { name: "col_name", type: "string" },
      { name: "data_type", type: "string" },
      { name: "comment", type: "string" },
    ],
    rows,
  };
}
