/**
 * Catalogs and schemas: create, list, drop. Dropping with CASCADE removes the tables inside, and
 * their files, as dropping each table would.
 */
import type { TableEntry } from "../catalog/catalog-store.ts";
import type { SiltContext } from "../context.ts";
import { deletePrefix } from "./drop-table.ts";
import { isoMicros, type ResultSet } from "./result-set.ts";

export interface NamespaceOptions {
  comment?: string;
  ifNotExists?: boolean;
}

export async function createCatalog(ctx: SiltContext, name: string, opts: NamespaceOptions = {}) {
  return ctx.catalog.createCatalog(name, { owner: ctx.principal, ...opts });
}

export async function createSchema(
  ctx: SiltContext,
  catalog: string,
  name: string,
  opts: NamespaceOptions = {},
) {
  return ctx.catalog.createSchema(catalog, name, { owner: ctx.principal, ...opts });
}

export async function listCatalogs(ctx: SiltContext): Promise<ResultSet> {
  const catalogs = await ctx.catalog.listCatalogs();
  return {
    columns: [
      { name: "catalog", type: "string" },
      { name: "owner", type: "string" },
      { name: "comment", type: "string" },
      { name: "createdAt", type: "timestamp" },
    ],
    rows: catalogs.map((c) => [c.name, c.owner, c.comment ?? null, isoMicros(c.createdAt)]),
  };
}

export async function listSchemas(ctx: SiltContext, catalog: string): Promise<ResultSet> {
  const schemas = await ctx.catalog.listSchemas(catalog);
  return {
    columns: [
      { name: "catalog", type: "string" },
      { name: "databaseName", type: "string" },
      { name: "owner", type: "string" },
      { name: "comment", type: "string" },
      { name: "createdAt", type: "timestamp" },
    ],
    rows: schemas.map((s) => [
      s.catalog,
      s.name,
      s.owner,
      s.comment ?? null,
      isoMicros(s.createdAt),
    ]),
  };
}

export async function listTables(
  ctx: SiltContext,
  catalog: string,
  schema: string,
): Promise<ResultSet> {
  const tables = await ctx.catalog.listTables(catalog, schema);
  return {
    columns: [
      { name: "catalog", type: "string" },
      { name: "namespace", type: "string" },
      { name: "tableName", type: "string" },
      { name: "tableId", type: "string" },
      { name: "owner", type: "string" },
      { name: "createdAt", type: "timestamp" },
    ],
    rows: tables.map((t) => [
      t.catalog,
      t.schema,
      t.name,
      t.tableId,
      t.owner,
      isoMicros(t.createdAt),
    ]),
  };
}

export async function dropCatalog(
  ctx: SiltContext,
  name: string,
  opts: { ifExists?: boolean; cascade?: boolean } = {},
): Promise<{ droppedTables: number }> {
  const removed = await ctx.catalog.dropCatalog(name, opts);
  await deleteTablesFiles(ctx, removed);
  return { droppedTables: removed.length };
}

export async function dropSchema(
  ctx: SiltContext,
  catalog: string,
  name: string,
  opts: { ifExists?: boolean; cascade?: boolean } = {},
): Promise<{ droppedTables: number }> {
  const removed = await ctx.catalog.dropSchema(catalog, name, opts);
  await deleteTablesFiles(ctx, removed);
  return { droppedTables: removed.length };
}

async function deleteTablesFiles(ctx: SiltContext, tables: TableEntry[]): Promise<void> {
  for (const t of tables) await deletePrefix(ctx, t.location);
}
