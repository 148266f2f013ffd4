/**
 * Catalogs and schemas: create, list, change, drop. Dropping with CASCADE removes the tables inside, and
 * their files, as dropping each table would; a dropped object's grants go with it.
 *
 * Privileges (lib/auth/authorize.ts): any caller may create a catalog (Unity Catalog asks for
 * CREATE CATALOG on the metastore, which Silt does not model) and owns what it creates; creating a
 * schema takes USE CATALOG and CREATE SCHEMA; dropping, or changing a comment or properties,
 * takes ownership of the object or of its catalog; lists show only what the caller owns or holds a privilege on.
 */
import {
  authorizeCreateSchema,
  authorizeOwner,
  visibleCatalogs,
  visibleSchemas,
  visibleTables,
} from "../auth/authorize.ts";
import type {
  CatalogEntry,
  NamespaceChanges,
  SchemaEntry,
  TableEntry,
} from "../catalog/catalog-store.ts";
import type { SiltContext } from "../context.ts";
import { SiltError, siltError } from "../errors.ts";
import { deletePrefix } from "./drop-table.ts";
import { isoMicros, type ResultSet } from "./result-set.ts";

export interface NamespaceOptions {
  comment?: string;
  properties?: Record<string, string>;
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
  await authorizeCreateSchema(ctx, catalog);
  return ctx.catalog.createSchema(catalog, name, { owner: ctx.principal, ...opts });
}

/** Sets a catalog's comment and/or replaces its properties. */
export async function alterCatalog(
  ctx: SiltContext,
  name: string,
  changes: NamespaceChanges,
): Promise<CatalogEntry> {
  await authorizeOwner(ctx, { catalog: name }, "change it");
  return ctx.catalog.updateCatalog(name, changes);
}

/** Sets a schema's comment and/or replaces its properties. */
export async function alterSchema(
  ctx: SiltContext,
  catalog: string,
  name: string,
  changes: NamespaceChanges,
): Promise<SchemaEntry> {
  await authorizeOwner(ctx, { catalog, schema: name }, "change it");
  return ctx.catalog.updateSchema(catalog, name, changes);
}

/** The catalogs the caller may see (it owns them or holds a privilege on them). */
export async function catalogsOf(ctx: SiltContext): Promise<CatalogEntry[]> {
  return visibleCatalogs(ctx, await ctx.catalog.listCatalogs());
}

/** The schemas of a catalog the caller may see (it needs USE CATALOG to list them at all). */
export async function schemasOf(ctx: SiltContext, catalog: string): Promise<SchemaEntry[]> {
  return visibleSchemas(ctx, catalog, () => ctx.catalog.listSchemas(catalog));
}

/** The tables of a schema the caller may see (it needs USE CATALOG and USE SCHEMA). */
export async function tablesOf(
  ctx: SiltContext,
  catalog: string,
  schema: string,
): Promise<TableEntry[]> {
  return visibleTables(ctx, catalog, schema, () => ctx.catalog.listTables(catalog, schema));
}

/** One catalog, if the caller may see it; otherwise the refusal a missing privilege gets. */
export async function describeCatalog(ctx: SiltContext, name: string): Promise<CatalogEntry> {
  const entry = await ctx.catalog.getCatalog(name);
  if ((await visibleCatalogs(ctx, [entry])).length === 0)
    throw invisible(ctx, "Catalog", entry.name);
  return entry;
}

/** One schema, if the caller may see it (USE CATALOG, and a privilege on the schema). */
export async function describeSchema(
  ctx: SiltContext,
  catalog: string,
  name: string,
): Promise<SchemaEntry> {
  const [entry] = await visibleSchemas(ctx, catalog, async () => [
    await ctx.catalog.getSchema(catalog, name),
  ]);
  if (entry === undefined) throw invisible(ctx, "Schema", `${catalog}.${name}`);
  return entry;
}

const invisible = (ctx: SiltContext, kind: string, name: string) =>
  siltError("INSUFFICIENT_PERMISSIONS:NO_PRIVILEGE", { principal: ctx.principal, kind, name });

export async function listCatalogs(ctx: SiltContext): Promise<ResultSet> {
  const catalogs = await catalogsOf(ctx);
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
  const schemas = await schemasOf(ctx, catalog);
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
  const tables = await tablesOf(ctx, catalog, schema);
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
  if (!(await mayDrop(ctx, { catalog: name }, opts.ifExists, "CATALOG_NOT_FOUND"))) {
    return { droppedTables: 0 };
  }
  // The ids whose grants go, read before the drop removes them. A schema created in between is
  // dropped by CASCADE too and its grants stay behind, inert: ids are never reused.
  const catalog = await ctx.catalog.getCatalog(name).catch(ifMissing(undefined));
  const schemas = opts.cascade ? await ctx.catalog.listSchemas(name).catch(ifMissing([])) : [];
  const removed = await ctx.catalog.dropCatalog(name, opts);
  await deleteTablesFiles(ctx, removed);
  await removeGrants(ctx, [...removed.map((t) => t.tableId), ...schemas.map((s) => s.id)]);
  if (catalog !== undefined) await ctx.grants.removeAll(catalog.id);
  return { droppedTables: removed.length };
}

export async function dropSchema(
  ctx: SiltContext,
  catalog: string,
  name: string,
  opts: { ifExists?: boolean; cascade?: boolean } = {},
): Promise<{ droppedTables: number }> {
  // As in Spark, IF EXISTS tolerates a missing schema, not a missing catalog.
  if (!(await mayDrop(ctx, { catalog, schema: name }, opts.ifExists, "SCHEMA_NOT_FOUND"))) {
    return { droppedTables: 0 };
  }
  const schema = await ctx.catalog.getSchema(catalog, name).catch(ifMissing(undefined));
  const removed = await ctx.catalog.dropSchema(catalog, name, opts);
  await deleteTablesFiles(ctx, removed);
  await removeGrants(
    ctx,
    removed.map((t) => t.tableId),
  );
  if (schema !== undefined) await ctx.grants.removeAll(schema.id);
  return { droppedTables: removed.length };
}

/** The ownership check of a drop; false when the object is missing and IF EXISTS forgives it. */
async function mayDrop(
  ctx: SiltContext,
  name: { catalog: string; schema?: string },
  ifExists: boolean | undefined,
  missing: "CATALOG_NOT_FOUND" | "SCHEMA_NOT_FOUND",
): Promise<boolean> {
  try {
    await authorizeOwner(ctx, name, "drop it");
    return true;
  } catch (err) {
    if (ifExists && err instanceof SiltError && err.errorClass === missing) return false;
    throw err;
  }
}

/** A not-found becomes `value` (the drop then says what IF EXISTS allows); other errors pass. */
const ifMissing =
  <T>(value: T) =>
  (err: unknown): T => {
    if (err instanceof SiltError && err.status === 404) return value;
    throw err;
  };

async function removeGrants(ctx: SiltContext, ids: string[]): Promise<void> {
  await Promise.all(ids.map((id) => ctx.grants.removeAll(id)));
}

async function deleteTablesFiles(ctx: SiltContext, tables: TableEntry[]): Promise<void> {
  for (const t of tables) await deletePrefix(ctx, t.location);
}
