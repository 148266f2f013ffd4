/**
 * Privilege checks before operations (the rules are in ./privileges.ts). Table operations reach
 * their table through `authorizeTable` (lib/ops/open-table.ts calls it for every open), namespace
 * operations through the functions below, so the JSON routes and SQL share one check per kind of
 * operation.
 *
 * What a caller may learn follows the order of the checks:
 * 1. The catalog must exist. Catalog names are no secret: any caller may create a catalog and
 *    would learn that a name is taken from CATALOG_ALREADY_EXISTS anyway.
 * 2. To look inside a catalog the caller needs USE CATALOG on it; only then is a missing schema
 *    reported as SCHEMA_NOT_FOUND.
 * 3. To look inside a schema it needs USE SCHEMA; only then is a missing table reported as
 *    TABLE_OR_VIEW_NOT_FOUND, and an existing one without the operation's privilege as
 *    INSUFFICIENT_PERMISSIONS. So, as in Unity Catalog, a caller with USE on the containers can
 *    tell whether a table name exists, and a caller without it learns nothing of their contents.
 *
 * With `ctx.enforcePrivileges` off every check passes and tables are looked up the plain way.
 */
import {
  type CatalogEntry,
  catalogNotFound,
  type SchemaEntry,
  schemaNotFound,
  type TableEntry,
  tableNotFound,
} from "../catalog/catalog-store.ts";
import type { Grants } from "../catalog/grants.ts";
import { normalizeName, type QualifiedName } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { SiltError } from "../errors.ts";
import {
  ACCOUNT_USERS,
  effectivePrivileges,
  type Level,
  type Privilege,
  requireOwnership,
  requirePrivileges,
  type SecurableType,
} from "./privileges.ts";

/**
 * What an operation does to a table: reading rows needs SELECT, writing them MODIFY, changing
 * rows it first reads (UPDATE, DELETE, MERGE, REPLACE WHERE / USING) both, and dropping or
 * replacing the table ownership of it or of its schema or catalog.
 */
export type TableAccess = "read" | "write" | "readWrite" | "own";

const TABLE_PRIVILEGES: Record<Exclude<TableAccess, "own">, Privilege[]> = {
  read: ["SELECT"],
  write: ["MODIFY"],
  readWrite: ["MODIFY", "SELECT"],
};

/** A catalog, a schema in it, or a table in that. */
export interface SecurableName {
  catalog: string;
  schema?: string;
  table?: string;
}

/** A securable the checks let the caller reach, with the path down to it. */
export interface Reached {
  type: SecurableType;
  /** The id its grants are kept under. */
  id: string;
  path: Level[];
  catalog: CatalogEntry;
  schema?: SchemaEntry;
  table?: TableEntry;
}

const enforced = (ctx: SiltContext): boolean => ctx.enforcePrivileges === true;

/** The table an operation with `access` may use. */
export async function authorizeTable(
  ctx: SiltContext,
  qn: QualifiedName,
  access: TableAccess,
): Promise<TableEntry> {
  if (!enforced(ctx)) return ctx.catalog.getTable(qn.catalog, qn.schema, qn.table);
  const reached = await reach(ctx, qn);
  if (access === "own") requireOwnership(ctx.principal, reached.path, "drop or replace it");
  else requirePrivileges(ctx.principal, reached.path, ...TABLE_PRIVILEGES[access]);
  return reached.table as TableEntry;
}

/**
 * ALTER TABLE … RENAME TO: the owners of the table (or of a container of it) who may also create
 * tables in its schema, as Unity Catalog asks.
 */
export async function authorizeRename(ctx: SiltContext, qn: QualifiedName): Promise<TableEntry> {
  if (!enforced(ctx)) return ctx.catalog.getTable(qn.catalog, qn.schema, qn.table);
  const reached = await reach(ctx, qn);
  requireOwnership(ctx.principal, reached.path, "rename it");
  requirePrivileges(ctx.principal, reached.path.slice(0, -1), "USE SCHEMA", "CREATE TABLE");
  return reached.table as TableEntry;
}

/** The table if it exists, for CREATE OR REPLACE, once the caller may see into its schema. */
export async function findTable(
  ctx: SiltContext,
  qn: QualifiedName,
): Promise<TableEntry | undefined> {
  try {
    if (!enforced(ctx)) return await ctx.catalog.getTable(qn.catalog, qn.schema, qn.table);
    return (await reach(ctx, qn)).table;
  } catch (err) {
    if (err instanceof SiltError && err.errorClass === "TABLE_OR_VIEW_NOT_FOUND") return undefined;
    throw err;
  }
}

/** CREATE TABLE in a schema. */
export async function authorizeCreateTable(
  ctx: SiltContext,
  catalog: string,
  schema: string,
): Promise<void> {
  if (!enforced(ctx)) return;
  const { path } = await reach(ctx, { catalog, schema });
  requirePrivileges(ctx.principal, path, "USE SCHEMA", "CREATE TABLE");
}

/** CREATE SCHEMA in a catalog. Creating a catalog needs no privilege (see README). */
export async function authorizeCreateSchema(ctx: SiltContext, catalog: string): Promise<void> {
  if (!enforced(ctx)) return;
  const { path } = await reach(ctx, { catalog });
  requirePrivileges(ctx.principal, path, "USE CATALOG", "CREATE SCHEMA");
}

/**
 * Dropping a schema or catalog, or changing its comment or properties: owners of the object or of
 * its catalog. `action` completes "Only its owner … can ".
 */
export async function authorizeOwner(
  ctx: SiltContext,
  name: SecurableName,
  action: "drop it" | "change it",
): Promise<void> {
  if (!enforced(ctx)) return;
  const { path } = await reach(ctx, name);
  requireOwnership(ctx.principal, path, action);
}

/**
 * The object of a GRANT, REVOKE or SHOW GRANTS. Changing privileges takes ownership of the object
 * or of a container of it; showing them also suits a caller asking about its own grants.
 */
export async function authorizePermissions(
  ctx: SiltContext,
  name: SecurableName,
  purpose: { change: true } | { change: false; principal?: string },
): Promise<Reached> {
  const reached = await reach(ctx, name);
  const ownGrants = !purpose.change && purpose.principal === ctx.principal;
  if (enforced(ctx) && !ownGrants) {
    requireOwnership(
      ctx.principal,
      reached.path,
      purpose.change ? "grant or revoke privileges on it" : "show all grants on it",
    );
  }
  return reached;
}

/** Catalogs the caller owns or holds a privilege on. */
export async function visibleCatalogs(
  ctx: SiltContext,
  catalogs: CatalogEntry[],
): Promise<CatalogEntry[]> {
  if (!enforced(ctx)) return catalogs;
  const levels = await Promise.all(catalogs.map((c) => catalogLevel(ctx, c)));
  return catalogs.filter((_, i) => sees(ctx, [levels[i]]));
}

/** The schemas of a catalog the caller can see: it needs USE CATALOG to list them at all. */
export async function visibleSchemas(
  ctx: SiltContext,
  catalog: string,
  load: () => Promise<SchemaEntry[]>,
): Promise<SchemaEntry[]> {
  if (!enforced(ctx)) return load();
  const { path } = await reach(ctx, { catalog });
  requirePrivileges(ctx.principal, path, "USE CATALOG");
  const schemas = await load();
  const levels = await Promise.all(schemas.map((s) => schemaLevel(ctx, s)));
  return schemas.filter((_, i) => sees(ctx, [...path, levels[i]]));
}

/** The tables of a schema the caller can see: it needs USE CATALOG and USE SCHEMA. */
export async function visibleTables(
  ctx: SiltContext,
  catalog: string,
  schema: string,
  load: () => Promise<TableEntry[]>,
): Promise<TableEntry[]> {
  if (!enforced(ctx)) return load();
  const { path } = await reach(ctx, { catalog, schema });
  requirePrivileges(ctx.principal, path, "USE SCHEMA");
  const tables = await load();
  const levels = await Promise.all(tables.map((t) => tableLevel(ctx, t)));
  return tables.filter((_, i) => sees(ctx, [...path, levels[i]]));
}

/** Owning an object or holding any privilege on it (directly or inherited) makes it visible. */
const sees = (ctx: SiltContext, path: Level[]): boolean =>
  effectivePrivileges(ctx.principal, path).size > 0;

/**
 * Steps 1-3 of the module comment: the entries down to `name`, USE checked on each container
 * above it, and the most specific missing level named only where the caller may see it.
 */
async function reach(ctx: SiltContext, name: SecurableName): Promise<Reached> {
  const catalogName = normalizeName(name.catalog, "catalog");
  const schemaName = name.schema === undefined ? undefined : normalizeName(name.schema, "schema");
  const tableName = name.table === undefined ? undefined : normalizeName(name.table, "table");
  const found = await ctx.catalog.lookup(catalogName, schemaName, tableName);
  if (found.catalog === undefined) throw catalogNotFound(catalogName);
  const [catalog, schema, table] = await Promise.all([
    catalogLevel(ctx, found.catalog),
    found.schema && schemaLevel(ctx, found.schema),
    found.table && tableLevel(ctx, found.table),
  ]);
  const reached: Reached = {
    type: "catalog",
    id: found.catalog.id,
    path: [catalog],
    catalog: found.catalog,
  };
  if (schemaName === undefined) return reached;
  if (enforced(ctx)) requirePrivileges(ctx.principal, reached.path, "USE CATALOG");
  if (found.schema === undefined || schema === undefined) {
    throw schemaNotFound(catalogName, schemaName);
  }
  Object.assign(reached, { type: "schema", id: found.schema.id, schema: found.schema });
  reached.path.push(schema);
  if (tableName === undefined) return reached;
  if (enforced(ctx)) requirePrivileges(ctx.principal, reached.path, "USE SCHEMA");
  if (found.table === undefined || table === undefined) {
    throw tableNotFound(catalogName, schemaName, tableName);
  }
  Object.assign(reached, { type: "table", id: found.table.tableId, table: found.table });
  reached.path.push(table);
  return reached;
}

const catalogLevel = async (ctx: SiltContext, c: CatalogEntry): Promise<Level> => ({
  type: "catalog",
  fullName: c.name,
  owner: c.owner,
  granted: await callerGrants(ctx, c.id),
});

const schemaLevel = async (ctx: SiltContext, s: SchemaEntry): Promise<Level> => ({
  type: "schema",
  fullName: `${s.catalog}.${s.name}`,
  owner: s.owner,
  granted: await callerGrants(ctx, s.id),
});

const tableLevel = async (ctx: SiltContext, t: TableEntry): Promise<Level> => ({
  type: "table",
  fullName: `${t.catalog}.${t.schema}.${t.name}`,
  owner: t.owner,
  granted: await callerGrants(ctx, t.tableId),
});

/** What was granted on an object to the caller or to everyone; nothing read when unchecked. */
async function callerGrants(ctx: SiltContext, objectId: string): Promise<Set<string>> {
  if (!enforced(ctx)) return new Set();
  const grants: Grants = await ctx.grants.grantsOn(objectId);
  return new Set([...(grants.get(ctx.principal) ?? []), ...(grants.get(ACCOUNT_USERS) ?? [])]);
}
