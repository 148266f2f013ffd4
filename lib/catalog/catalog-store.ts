/**
 * Catalogs, schemas and managed tables, kept in one DynamoDB table (reached through an item store,
 * lib/kv/item-store.ts, so tests can keep it in memory; the rules below are the same on both).
 *
 * Items (partition key `pk`, sort key `sk`, both strings; names are stored lower-cased):
 *   catalog   pk "CATALOG"              sk <catalog>
 *   schema    pk "SCHEMA#<c>"           sk <schema>
 *   table     pk "TABLE#<c>.<s>"        sk <table>     (names cannot contain '.', so no ambiguity)
 *   id index  pk "TABLEID#<tableId>"    sk "TABLEID"   points back at the table item
 *
 * DynamoDB transactions are off limits (dynalite lacks them), so every change is a sequence of
 * single-item conditional writes whose intermediate states are safe to crash in:
 *
 * Creating a table
 *   1. Put the table item in state CREATING with a fresh table id and location `tables/<id>/`, on
 *      the condition that the name is free — or held by a CREATING or DROPPING item whose last
 *      change is older than `staleAfterMs` (its writer is presumed dead; see "Recovery").
 *   2. Put the id-index item.
 *   3. Re-read the catalog and schema; if either was dropped meanwhile, undo 1-2 and fail.
 *   4. The caller writes the table's first commit, then `activateTable` flips CREATING -> ACTIVE
 *      on the condition that the item still carries our table id, or `abortCreateTable` removes
 *      the item if it is still ours. Only ACTIVE tables are visible to get/list.
 *
 * Dropping a table
 *   1. `beginDropTable`: ACTIVE -> DROPPING (the name disappears from get/list at once).
 *   2. The caller deletes the files under the location.
 *   3. `finishDropTable`: delete the id-index item, then the table item.
 *
 * Renaming a table (within its schema; the table's id, location, files and grants stay)
 *   The id-index item is the authority on a table's name. A table item carrying a rename token
 *   is visible only while the id index names it, so at every step exactly one name is visible:
 *   1. Claim the id index with a fresh rename token, on the condition that it names the table and
 *      no live rename holds it.
 *   2. Put the token on the source item (still ACTIVE, still the name the index gives).
 *   3. Put the target item: a copy under the new name carrying the token, on the condition that
 *      the name is free or abandoned. It is invisible: the index does not name it yet.
 *   4. Switch the id index to the new name, removing the token, on the condition that the token
 *      is still ours. This is the moment of the rename.
 *   5. Delete the source item, then 6. remove the token from the target, both on the condition
 *      that they still carry our token.
 *   A crash leaves token-carrying items behind; whichever of them the index names is the table,
 *   the other is an abandoned leftover once its token is stale (a create may take its name). A
 *   drop that meets a stale token first settles the rename: it takes the token off the index, so
 *   a stalled renamer's switch fails and it removes its own target.
 *
 * Dropping a schema or catalog
 *   1. Mark the item DROPPING with a random drop token. A DROPPING parent accepts no new children
 *      and looks like it does not exist.
 *   2. List the children. Without CASCADE any child makes the drop fail: the mark is reverted and
 *      SCHEMA_NOT_EMPTY / CATALOG_NOT_EMPTY is raised. With CASCADE the children are removed and
 *      returned so the caller can delete their files.
 *   3. Delete the item on the condition that our drop token is still on it.
 *   A child creator re-reads its parents after writing the child (step 3 of creating), so either
 *   the dropper's listing sees the child or the creator sees the mark and undoes its write.
 *
 * Recovery. Every intermediate state carries the time of its last change, and a state older than
 * `staleAfterMs` (default 30 minutes, twice the longest Lambda run) is presumed abandoned:
 *   - a stale CREATING or DROPPING table item may be overwritten by a new create of that name, and
 *     is removed by a drop of its schema; its old id-index item is deleted, so the files under its
 *     location are unreferenced and a storage sweep (`findTableById` answers undefined) may delete
 *     them;
 *   - a stale DROPPING mark on a schema or catalog counts as ACTIVE again: it is visible, accepts
 *     children (the first child creator reverts the mark), and can be dropped again;
 *   - a writer that outlives the window carries on unless someone took over; if someone did, its
 *     writes are conditional on its own table id or drop token and are rejected, so it fails
 *     rather than clobbering the newcomer.
 */
import { randomUUID } from "node:crypto";
import type { AttributeValue, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type SiltError, siltError } from "../errors.ts";
import { ensureTable } from "../kv/dynamo-item-store.ts";
import {
  and,
  attributeNotExists,
  CATALOG_TABLE_KEYS,
  type Condition,
  eq,
  type Item,
  type ItemStore,
  le,
  or,
  queryAll,
} from "../kv/item-store.ts";
import { formatQualifiedName, normalizeName } from "./names.ts";

export const DEFAULT_STALE_AFTER_MS = 30 * 60 * 1000;

/** Where every table's files live: `tables/<tableId>/`. */
export const TABLES_PREFIX = "tables/";

export type TableState = "CREATING" | "ACTIVE" | "DROPPING";

export interface CatalogEntry {
  name: string;
  id: string;
  owner: string;
  comment?: string;
  /** Free-form properties, as Unity Catalog keeps them (Spark's CREATE SCHEMA sets `owner`). */
  properties?: Record<string, string>;
  createdAt: number;
  /** Time of the last change of comment or properties, if there was one. */
  updatedAt?: number;
}

export interface SchemaEntry extends CatalogEntry {
  catalog: string;
}

export interface TableEntry {
  catalog: string;
  schema: string;
  name: string;
  tableId: string;
  /** Key prefix relative to the storage root, always `tables/<tableId>/`. */
  location: string;
  owner: string;
  createdAt: number;
  /** Time of the last state change. */
  updatedAt: number;
  state: TableState;
  tableType: "MANAGED";
  dataSourceFormat: "DELTA";
  /**
   * A Unity Catalog client's staging entry (lib/ops/stage-table.ts): CREATING until the client
   * finalizes it, and taken over by the next create of its name if it never does.
   */
  staging?: boolean;
}

export interface CatalogOptions {
  /** Milliseconds since the epoch; injectable so tests can age intermediate states. */
  clock?: () => number;
  staleAfterMs?: number;
  newId?: () => string;
  /** Query page size (DynamoDB `Limit`); unset means DynamoDB's 1 MB pages. */
  queryPageSize?: number;
}

export interface CreateOptions {
  owner: string;
  comment?: string;
  properties?: Record<string, string>;
  ifNotExists?: boolean;
}

/** A change of a catalog's or schema's comment and properties; what is unsaid stays. */
export interface NamespaceChanges {
  comment?: string;
  /** Replaces the properties as a whole. */
  properties?: Record<string, string>;
}

export interface DropOptions {
  ifExists?: boolean;
  cascade?: boolean;
}

type ParentState = "ACTIVE" | "DROPPING";

const CATALOG_PK = "CATALOG";
const TABLEID_SK = "TABLEID";
const schemaPk = (catalog: string) => `SCHEMA#${catalog}`;
const tablePk = (catalog: string, schema: string) => `TABLE#${catalog}.${schema}`;
const tableIdPk = (tableId: string) => `TABLEID#${tableId}`;

// ---- errors ---------------------------------------------------------------------------------

export const catalogNotFound = (catalog: string): SiltError =>
  siltError("CATALOG_NOT_FOUND", { catalog: formatQualifiedName(catalog) });

export const schemaNotFound = (catalog: string, schema: string): SiltError =>
  siltError("SCHEMA_NOT_FOUND", { schemaName: formatQualifiedName(catalog, schema) });

export const tableNotFound = (catalog: string, schema: string, table: string): SiltError =>
  siltError("TABLE_OR_VIEW_NOT_FOUND:BY_NAME", {
    relationName: formatQualifiedName(catalog, schema, table),
  });

const tableIdNotFound = (tableId: string): SiltError =>
  siltError("TABLE_OR_VIEW_NOT_FOUND:BY_ID", { tableId: formatQualifiedName(tableId) });

export const catalogAlreadyExists = (catalog: string): SiltError =>
  siltError("CATALOG_ALREADY_EXISTS", { catalog: formatQualifiedName(catalog) });

export const schemaAlreadyExists = (catalog: string, schema: string): SiltError =>
  siltError("SCHEMA_ALREADY_EXISTS", { schemaName: formatQualifiedName(catalog, schema) });

export const tableAlreadyExists = (catalog: string, schema: string, table: string): SiltError =>
  siltError("TABLE_OR_VIEW_ALREADY_EXISTS", {
    tableName: formatQualifiedName(catalog, schema, table),
  });

/** Another rename of the table is under way (its token is fresh); retrying later succeeds. */
const tableBeingRenamed = (catalog: string, schema: string, table: string): SiltError =>
  siltError("TABLE_RENAME_IN_PROGRESS", {
    tableName: formatQualifiedName(catalog, schema, table),
  });

const schemaNotEmpty = (catalog: string, schema: string): SiltError =>
  siltError("SCHEMA_NOT_EMPTY", { schemaName: formatQualifiedName(catalog, schema) });

const catalogNotEmpty = (catalog: string): SiltError =>
  siltError("CATALOG_NOT_EMPTY", { catalog: formatQualifiedName(catalog) });

// ---- item helpers ---------------------------------------------------------------------------

const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number): AttributeValue => ({ N: String(value) });
const keyOf = (item: Item): Item => ({ pk: attr(item, "pk"), sk: attr(item, "sk") });
const tableIdKey = (tableId: string): Item => ({ pk: S(tableIdPk(tableId)), sk: S(TABLEID_SK) });
const tableKey = (catalog: string, schema: string, table: string): Item => ({
  pk: S(tablePk(catalog, schema)),
  sk: S(table),
});
/** The condition that an id-index item names this table item. */
const namesItem = (item: Item): Condition =>
  and(
    eq("catalog", attr(item, "catalog")),
    eq("schema", attr(item, "schema")),
    eq("name", attr(item, "name")),
  );

function attr(item: Item, key: string): AttributeValue {
  const value = item[key];
  if (value === undefined) throw siltError("CATALOG_CORRUPT:MISSING_ATTRIBUTE", { key });
  return value;
}

function str(item: Item, key: string): string {
  const value = item[key]?.S;
  if (value === undefined) throw siltError("CATALOG_CORRUPT:MISSING_ATTRIBUTE", { key });
  return value;
}

function num(item: Item, key: string): number {
  const value = item[key]?.N;
  if (value === undefined) throw siltError("CATALOG_CORRUPT:MISSING_ATTRIBUTE", { key });
  return Number(value);
}

function toCatalogEntry(item: Item): CatalogEntry {
  const entry: CatalogEntry = {
    name: str(item, "name"),
    id: str(item, "id"),
    owner: str(item, "owner"),
    createdAt: num(item, "createdAt"),
  };
  if (item.comment?.S !== undefined) entry.comment = item.comment.S;
  if (item.properties?.S !== undefined) entry.properties = JSON.parse(item.properties.S);
  if (item.updatedAt?.N !== undefined) entry.updatedAt = Number(item.updatedAt.N);
  return entry;
}

/** A schema item holds what a catalog item does, plus its catalog's name. */
function toSchemaEntry(item: Item): SchemaEntry {
  return { catalog: str(item, "catalog"), ...toCatalogEntry(item) };
}

function toTableEntry(item: Item): TableEntry {
  const entry: TableEntry = {
    catalog: str(item, "catalog"),
    schema: str(item, "schema"),
    name: str(item, "name"),
    tableId: str(item, "tableId"),
    location: str(item, "location"),
    owner: str(item, "owner"),
    createdAt: num(item, "createdAt"),
    updatedAt: num(item, "changedAt"),
    state: str(item, "state") as TableState,
    tableType: "MANAGED",
    dataSourceFormat: "DELTA",
  };
  if (item.staging?.BOOL === true) entry.staging = true;
  return entry;
}

/** Creates the catalog table (pk/sk strings, on-demand) if missing and waits until it is ACTIVE. */
export const ensureCatalogTable = (client: DynamoDBClient, tableName: string): Promise<void> =>
  ensureTable(client, tableName, CATALOG_TABLE_KEYS);

// ---- the catalog ----------------------------------------------------------------------------

export class Catalog {
  private readonly items: ItemStore;
  private readonly clock: () => number;
  private readonly staleAfterMs: number;
  private readonly newId: () => string;
  private readonly pageSize: number | undefined;

  /** `items`: the catalog table (CATALOG_TABLE_KEYS), in DynamoDB or in memory. */
  constructor(items: ItemStore, options: CatalogOptions = {}) {
    this.items = items;
    this.clock = options.clock ?? Date.now;
    this.staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    this.newId = options.newId ?? randomUUID;
    this.pageSize = options.queryPageSize;
  }

  // ---- catalogs ----

  async createCatalog(name: string, options: CreateOptions): Promise<CatalogEntry> {
    const catalog = normalizeName(name, "catalog");
    const now = this.clock();
    const item: Item = {
      pk: S(CATALOG_PK),
      sk: S(catalog),
      name: S(catalog),
      id: S(this.newId()),
      owner: S(options.owner),
      createdAt: N(now),
      state: S("ACTIVE"),
      changedAt: N(now),
    };
    if (options.comment !== undefined) item.comment = S(options.comment);
    if (options.properties !== undefined && Object.keys(options.properties).length > 0) {
      item.properties = S(JSON.stringify(options.properties));
    }
    // The loop only repeats when the holder of the name vanished between our put and our read.
    for (let attempt = 0; ; attempt++) {
      if (await this.putIfAbsent(item)) return toCatalogEntry(item);
      const existing = await this.get(CATALOG_PK, catalog);
      if (existing !== undefined) {
        if (options.ifNotExists && this.parentVisible(existing)) return toCatalogEntry(existing);
        throw catalogAlreadyExists(catalog);
      }
      if (attempt >= 2) throw catalogAlreadyExists(catalog);
    }
  }

  async getCatalog(name: string): Promise<CatalogEntry> {
    return toCatalogEntry(await this.requireCatalog(normalizeName(name, "catalog")));
  }

  async updateCatalog(name: string, changes: NamespaceChanges): Promise<CatalogEntry> {
    const catalog = normalizeName(name, "catalog");
    const item = await this.requireCatalog(catalog);
    return toCatalogEntry(await this.updateParent(item, changes, () => catalogNotFound(catalog)));
  }

  async listCatalogs(): Promise<CatalogEntry[]> {
    const items = await this.queryAll(CATALOG_PK);
    return items.filter((item) => this.parentVisible(item)).map(toCatalogEntry);
  }

  /**
   * Drops a catalog. Returns the tables removed by CASCADE; their files are the caller's to
   * delete (if it never does, they are unreferenced and a storage sweep may remove them).
   */
  async dropCatalog(name: string, options: DropOptions = {}): Promise<TableEntry[]> {
    const catalog = normalizeName(name, "catalog");
    const item = await this.get(CATALOG_PK, catalog);
    if (item === undefined || !this.parentVisible(item)) {
      if (options.ifExists) return [];
      throw catalogNotFound(catalog);
    }
    const token = await this.markDropping(item);
    if (token === undefined) {
      if (options.ifExists) return [];
      throw catalogNotFound(catalog);
    }
    const schemas = await this.queryAll(schemaPk(catalog));
    if (schemas.length > 0 && !options.cascade) {
      await this.revertDropping(item, token);
      throw catalogNotEmpty(catalog);
    }
    const removed: TableEntry[] = [];
    for (const schema of schemas) {
      // A schema another dropper holds is dropped along with the catalog anyway: we own the
      // catalog's mark, so nothing can be added beneath it.
      removed.push(...((await this.removeSchema(catalog, schema, true, true)) ?? []));
    }
    if (!(await this.deleteIfToken(item, token))) {
      // Only a child creator reverts a mark (after our lease ran out), so a child exists now.
      throw catalogNotEmpty(catalog);
    }
    return removed;
  }

  // ---- schemas ----

  async createSchema(
    catalogName: string,
    schemaName: string,
    options: CreateOptions,
  ): Promise<SchemaEntry> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = normalizeName(schemaName, "schema");
    const catalogItem = await this.requireCatalog(catalog);
    const now = this.clock();
    const item: Item = {
      pk: S(schemaPk(catalog)),
      sk: S(schema),
      catalog: S(catalog),
      name: S(schema),
      id: S(this.newId()),
      owner: S(options.owner),
      createdAt: N(now),
      state: S("ACTIVE"),
      changedAt: N(now),
    };
    if (options.comment !== undefined) item.comment = S(options.comment);
    if (options.properties !== undefined && Object.keys(options.properties).length > 0) {
      item.properties = S(JSON.stringify(options.properties));
    }
    for (let attempt = 0; ; attempt++) {
      if (await this.putIfAbsent(item)) break;
      const existing = await this.get(schemaPk(catalog), schema);
      if (existing !== undefined) {
        if (options.ifNotExists && this.parentVisible(existing)) return toSchemaEntry(existing);
        throw schemaAlreadyExists(catalog, schema);
      }
      if (attempt >= 2) throw schemaAlreadyExists(catalog, schema);
    }
    if (!(await this.parentsStillThere([catalogItem]))) {
      await this.deleteIfAttr(item, "id", item.id);
      throw catalogNotFound(catalog);
    }
    return toSchemaEntry(item);
  }

  async getSchema(catalogName: string, schemaName: string): Promise<SchemaEntry> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = normalizeName(schemaName, "schema");
    const { schemaItem } = await this.requireSchema(catalog, schema);
    return toSchemaEntry(schemaItem);
  }

  async updateSchema(
    catalogName: string,
    schemaName: string,
    changes: NamespaceChanges,
  ): Promise<SchemaEntry> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = normalizeName(schemaName, "schema");
    const { schemaItem } = await this.requireSchema(catalog, schema);
    const updated = await this.updateParent(schemaItem, changes, () =>
      schemaNotFound(catalog, schema),
    );
    return toSchemaEntry(updated);
  }

  async listSchemas(catalogName: string): Promise<SchemaEntry[]> {
    const catalog = normalizeName(catalogName, "catalog");
    await this.requireCatalog(catalog);
    const items = await this.queryAll(schemaPk(catalog));
    return items.filter((item) => this.parentVisible(item)).map(toSchemaEntry);
  }

  /** Drops a schema. Returns the tables removed by CASCADE (see `dropCatalog`). */
  async dropSchema(
    catalogName: string,
    schemaName: string,
    options: DropOptions = {},
  ): Promise<TableEntry[]> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = normalizeName(schemaName, "schema");
    // As in Spark, IF EXISTS tolerates a missing schema, not a missing catalog.
    await this.requireCatalog(catalog);
    const item = await this.get(schemaPk(catalog), schema);
    if (item === undefined || !this.parentVisible(item)) {
      if (options.ifExists) return [];
      throw schemaNotFound(catalog, schema);
    }
    const removed = await this.removeSchema(catalog, item, options.cascade ?? false, false);
    if (removed === undefined) {
      if (options.ifExists) return [];
      throw schemaNotFound(catalog, schema);
    }
    return removed;
  }

  // ---- tables ----

  /**
   * Reserves a table name and allocates a fresh id and location. The entry stays invisible
   * (state CREATING) until `activateTable`.
   */
  async beginCreateTable(
    catalogName: string,
    schemaName: string,
    tableName: string,
    options: { owner: string; staging?: boolean },
  ): Promise<TableEntry> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = normalizeName(schemaName, "schema");
    const table = normalizeName(tableName, "table");
    const { catalogItem, schemaItem } = await this.requireSchema(catalog, schema);
    const tableId = this.newId();
    const pk = tablePk(catalog, schema);
    const now = this.clock();
    const item: Item = {
      pk: S(pk),
      sk: S(table),
      catalog: S(catalog),
      schema: S(schema),
      name: S(table),
      tableId: S(tableId),
      location: S(`${TABLES_PREFIX}${tableId}/`),
      owner: S(options.owner),
      createdAt: N(now),
      state: S("CREATING"),
      changedAt: N(now),
    };
    if (options.staging) item.staging = { BOOL: true };
    if (!(await this.takeName(item))) throw tableAlreadyExists(catalog, schema, table);
    await this.items.put({
      pk: S(tableIdPk(tableId)),
      sk: S(TABLEID_SK),
      catalog: S(catalog),
      schema: S(schema),
      name: S(table),
    });
    if (!(await this.parentsStillThere([catalogItem, schemaItem]))) {
      await this.deleteIdIndex(tableId);
      await this.deleteIfAttr(item, "tableId", item.tableId);
      const catalogNow = await this.get(CATALOG_PK, catalog);
      throw catalogNow === undefined || !this.parentVisible(catalogNow)
        ? catalogNotFound(catalog)
        : schemaNotFound(catalog, schema);
    }
    return toTableEntry(item);
  }

  /** CREATING -> ACTIVE, if the name is still reserved for this entry's table id. */
  async activateTable(entry: TableEntry): Promise<TableEntry> {
    const now = this.clock();
    const activated = await this.items.update(
      { pk: S(tablePk(entry.catalog, entry.schema)), sk: S(entry.name) },
      { set: { state: S("ACTIVE"), changedAt: N(now) }, remove: ["staging"] },
      and(eq("tableId", S(entry.tableId)), eq("state", S("CREATING"))),
    );
    if (activated) {
      const { staging: _, ...active } = entry;
      return { ...active, state: "ACTIVE", updatedAt: now };
    }
    const current = await this.get(tablePk(entry.catalog, entry.schema), entry.name);
    if (current !== undefined && str(current, "tableId") === entry.tableId) {
      // A retried activation after a lost response finds its own work done.
      if (str(current, "state") === "ACTIVE") return toTableEntry(current);
      throw tableNotFound(entry.catalog, entry.schema, entry.name);
    }
    if (current !== undefined) throw tableAlreadyExists(entry.catalog, entry.schema, entry.name);
    await this.requireSchema(entry.catalog, entry.schema);
    throw tableNotFound(entry.catalog, entry.schema, entry.name);
  }

  /**
   * Releases a name reserved by `beginCreateTable`. Returns false when the reservation was no
   * longer ours (taken over, or removed by a schema drop); the caller deletes its files either way.
   */
  async abortCreateTable(entry: TableEntry): Promise<boolean> {
    const pk = tablePk(entry.catalog, entry.schema);
    const deleted = await this.items.delete(
      { pk: S(pk), sk: S(entry.name) },
      and(eq("tableId", S(entry.tableId)), eq("state", S("CREATING"))),
    );
    if (deleted) {
      await this.deleteIdIndex(entry.tableId);
      return true;
    }
    const current = await this.get(pk, entry.name);
    if (current !== undefined && str(current, "tableId") === entry.tableId) {
      throw siltError("CATALOG_INVALID_STATE:ABORT_CREATE", {
        tableId: entry.tableId,
        state: str(current, "state"),
      });
    }
    await this.deleteIdIndex(entry.tableId);
    return false;
  }

  /** An ACTIVE table by name; tables being created or dropped are not found. */
  async getTable(catalogName: string, schemaName: string, tableName: string): Promise<TableEntry> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = normalizeName(schemaName, "schema");
    const table = normalizeName(tableName, "table");
    const item = await this.get(tablePk(catalog, schema), table);
    if (item !== undefined && (await this.tableVisible(item))) return toTableEntry(item);
    // Name the most specific missing level, as Spark does.
    await this.requireSchema(catalog, schema);
    throw tableNotFound(catalog, schema, table);
  }

  /**
   * The visible entries along `catalog[.schema[.table]]`, each undefined when it (or a container
   * of it) does not exist, read in parallel: for callers that decide what a requester may learn
   * before naming what is missing (lib/auth/authorize.ts).
   */
  async lookup(
    catalogName: string,
    schemaName?: string,
    tableName?: string,
  ): Promise<{ catalog?: CatalogEntry; schema?: SchemaEntry; table?: TableEntry }> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = schemaName === undefined ? undefined : normalizeName(schemaName, "schema");
    const table = tableName === undefined ? undefined : normalizeName(tableName, "table");
    const [c, s, t] = await Promise.all([
      this.get(CATALOG_PK, catalog),
      schema === undefined ? undefined : this.get(schemaPk(catalog), schema),
      schema === undefined || table === undefined
        ? undefined
        : this.get(tablePk(catalog, schema), table),
    ]);
    if (c === undefined || !this.parentVisible(c)) return {};
    if (s === undefined || !this.parentVisible(s)) return { catalog: toCatalogEntry(c) };
    return {
      catalog: toCatalogEntry(c),
      schema: toSchemaEntry(s),
      table: t !== undefined && (await this.tableVisible(t)) ? toTableEntry(t) : undefined,
    };
  }

  /** An ACTIVE table by id. */
  async getTableById(tableId: string): Promise<TableEntry> {
    const entry = await this.findTableById(tableId);
    if (entry === undefined || entry.state !== "ACTIVE") throw tableIdNotFound(tableId);
    return entry;
  }

  /**
   * The entry that currently owns a table id, in any state, or undefined. A storage sweep may
   * delete `tables/<id>/` when this answers undefined and the files are older than the stale
   * window (a create in progress writes its first file only after its id resolves).
   */
  async findTableById(tableId: string): Promise<TableEntry | undefined> {
    if (tableId.length === 0) return undefined;
    const index = await this.get(tableIdPk(tableId), TABLEID_SK);
    if (index === undefined) return undefined;
    const item = await this.get(
      tablePk(str(index, "catalog"), str(index, "schema")),
      str(index, "name"),
    );
    if (item === undefined || str(item, "tableId") !== tableId) return undefined;
    return toTableEntry(item);
  }

  /**
   * Whether an entry in an intermediate state (CREATING, including staging entries, or DROPPING)
   * has not changed for the stale window: its writer is presumed dead (see "Recovery").
   */
  isAbandoned(entry: TableEntry): boolean {
    return entry.state !== "ACTIVE" && entry.updatedAt + this.staleAfterMs <= this.clock();
  }

  /** How long an intermediate state may last before it counts as abandoned. */
  get staleWindowMs(): number {
    return this.staleAfterMs;
  }

  /** ACTIVE tables of a schema, in name order. */
  async listTables(catalogName: string, schemaName: string): Promise<TableEntry[]> {
    const catalog = normalizeName(catalogName, "catalog");
    const schema = normalizeName(schemaName, "schema");
    await this.requireSchema(catalog, schema);
    const items = await this.queryAll(tablePk(catalog, schema), "ACTIVE");
    const visible = await Promise.all(items.map((item) => this.tableVisible(item)));
    return items.filter((_, i) => visible[i]).map(toTableEntry);
  }

  /** ACTIVE -> DROPPING: the name disappears; the caller then deletes the files. */
  async beginDropTable(entry: TableEntry): Promise<TableEntry> {
    const key = tableKey(entry.catalog, entry.schema, entry.name);
    for (let attempt = 0; ; attempt++) {
      const now = this.clock();
      const marked = await this.items.update(
        key,
        { set: { state: S("DROPPING"), changedAt: N(now) } },
        and(
          eq("tableId", S(entry.tableId)),
          eq("state", S("ACTIVE")),
          attributeNotExists("renameToken"),
        ),
      );
      if (marked) return { ...entry, state: "DROPPING", updatedAt: now };
      const current = await this.items.get(key);
      if (current === undefined || str(current, "tableId") !== entry.tableId) break;
      if (str(current, "state") === "DROPPING") return toTableEntry(current);
      if (current.renameToken === undefined || attempt >= 2) break;
      if (!this.isStale(current)) throw tableBeingRenamed(entry.catalog, entry.schema, entry.name);
      await this.settleRename(current);
    }
    throw tableNotFound(entry.catalog, entry.schema, entry.name);
  }

  /**
   * Renames an ACTIVE table within its schema, by the protocol in the header, and answers its
   * entry under the new name. Renaming to the name it has fails as Spark does: the name is taken.
   */
  async renameTable(entry: TableEntry, newName: string): Promise<TableEntry> {
    const { catalog, schema, name: from, tableId } = entry;
    const to = normalizeName(newName, "table");
    if (to === from) throw tableAlreadyExists(catalog, schema, to);
    const { catalogItem, schemaItem } = await this.requireSchema(catalog, schema);
    const token = S(this.newId());
    const ours = eq("renameToken", token);
    const now = this.clock();
    const mark = { set: { renameToken: token, changedAt: N(now) } };
    const unmark = { remove: ["renameToken"] };

    // 1. Claim the id index.
    const index = tableIdKey(tableId);
    const claimed = await this.items.update(
      index,
      mark,
      and(
        eq("catalog", S(catalog)),
        eq("schema", S(schema)),
        eq("name", S(from)),
        or(attributeNotExists("renameToken"), le("changedAt", N(now - this.staleAfterMs))),
      ),
    );
    if (!claimed) {
      const current = await this.items.get(index);
      if (current?.name?.S !== from) throw tableNotFound(catalog, schema, from);
      throw tableBeingRenamed(catalog, schema, from);
    }
    const release = () => this.items.update(index, unmark, ours);

    // 2. Mark the source.
    const source = tableKey(catalog, schema, from);
    const sourceMarked = await this.items.update(
      source,
      mark,
      and(eq("tableId", S(tableId)), eq("state", S("ACTIVE"))),
    );
    const sourceItem = sourceMarked ? await this.items.get(source) : undefined;
    if (sourceItem === undefined) {
      await release();
      throw tableNotFound(catalog, schema, from);
    }
    const giveUp = async (error: SiltError): Promise<never> => {
      await this.items.update(source, unmark, ours);
      await release();
      throw error;
    };

    // 3. Put the target, still invisible.
    const target: Item = { ...sourceItem, sk: S(to), name: S(to) };
    if (!(await this.takeName(target))) return giveUp(tableAlreadyExists(catalog, schema, to));
    if (!(await this.parentsStillThere([catalogItem, schemaItem]))) {
      await this.items.delete(keyOf(target), ours);
      return giveUp(schemaNotFound(catalog, schema));
    }

    // 4. Switch the index: from here on the table answers to its new name.
    const switched = await this.items.update(
      index,
      { set: { name: S(to), changedAt: N(this.clock()) }, remove: ["renameToken"] },
      ours,
    );
    if (!switched) {
      // Someone settled this rename as abandoned (we stalled past the stale window).
      await this.items.delete(keyOf(target), ours);
      throw tableBeingRenamed(catalog, schema, from);
    }

    // 5-6. Tidy up; a failure here leaves leftovers that readers and creators already handle.
    await this.items.delete(source, ours);
    await this.items.update(keyOf(target), unmark, ours);
    const { renameToken: _, ...renamed } = target;
    return toTableEntry(renamed);
  }

  /** Removes a DROPPING table's entries once its files are gone. Idempotent. */
  async finishDropTable(entry: TableEntry): Promise<void> {
    const pk = tablePk(entry.catalog, entry.schema);
    const current = await this.get(pk, entry.name);
    if (current !== undefined && str(current, "tableId") === entry.tableId) {
      if (str(current, "state") !== "DROPPING") {
        throw siltError("CATALOG_INVALID_STATE:FINISH_DROP", {
          tableId: entry.tableId,
          state: str(current, "state"),
        });
      }
      // Index first: a crash in between leaves a DROPPING item, which recovery knows how to
      // reclaim; the reverse would leave an index item nothing ever looks at.
      await this.deleteIdIndex(entry.tableId);
      await this.deleteIfAttr(current, "tableId", current.tableId);
      return;
    }
    await this.deleteIdIndex(entry.tableId);
  }

  // ---- internals ----

  private isStale(item: Item): boolean {
    return num(item, "changedAt") + this.staleAfterMs <= this.clock();
  }

  /** ACTIVE, or DROPPING by a dropper whose lease ran out. */
  private parentVisible(item: Item): boolean {
    const state = str(item, "state") as ParentState;
    return state === "ACTIVE" || this.isStale(item);
  }

  /**
   * A stale intermediate state, a staging entry, or the leftover of a crashed rename. A Unity
   * Catalog client that staged a table and failed its own checks never comes back to finalize it
   * (seed 002's refused CREATE), so a staging entry holds its name only until someone else
   * creates the table.
   */
  private async isAbandonedTable(item: Item): Promise<boolean> {
    const state = str(item, "state");
    if (state === "CREATING" && item.staging?.BOOL === true) return true;
    if (state !== "ACTIVE") return this.isStale(item);
    return item.renameToken !== undefined && this.isStale(item) && !(await this.indexNames(item));
  }

  /** ACTIVE, and if a rename has touched it, the name its id index gives. */
  private async tableVisible(item: Item): Promise<boolean> {
    if (str(item, "state") !== "ACTIVE") return false;
    return item.renameToken === undefined || this.indexNames(item);
  }

  private async indexNames(item: Item): Promise<boolean> {
    const index = await this.items.get(tableIdKey(str(item, "tableId")));
    return (
      index !== undefined &&
      index.catalog?.S === str(item, "catalog") &&
      index.schema?.S === str(item, "schema") &&
      index.name?.S === str(item, "name")
    );
  }

  /**
   * Settles a rename whose token went stale on `item`: the token comes off the id index first,
   * so the stalled renamer can no longer switch it; then the item keeps its name if the index
   * gives it, and is removed as a leftover if not.
   */
  private async settleRename(item: Item): Promise<void> {
    const ours = eq("renameToken", attr(item, "renameToken"));
    await this.items.update(tableIdKey(str(item, "tableId")), { remove: ["renameToken"] }, ours);
    if (await this.indexNames(item)) {
      await this.items.update(keyOf(item), { remove: ["renameToken"] }, ours);
    } else {
      await this.items.delete(keyOf(item), ours);
    }
  }

  private async requireCatalog(catalog: string): Promise<Item> {
    const item = await this.get(CATALOG_PK, catalog);
    if (item === undefined || !this.parentVisible(item)) throw catalogNotFound(catalog);
    return item;
  }

  private async requireSchema(
    catalog: string,
    schema: string,
  ): Promise<{ catalogItem: Item; schemaItem: Item }> {
    const catalogItem = await this.requireCatalog(catalog);
    const schemaItem = await this.get(schemaPk(catalog), schema);
    if (schemaItem === undefined || !this.parentVisible(schemaItem)) {
      throw schemaNotFound(catalog, schema);
    }
    return { catalogItem, schemaItem };
  }

  /**
   * After writing a child: are the parents read before the write still the same, undropped
   * items? A parent whose drop lease expired gets its mark reverted, which also makes that
   * stalled dropper's final delete fail.
   */
  private async parentsStillThere(parents: Item[]): Promise<boolean> {
    for (const seen of parents) {
      const pk = str(seen, "pk");
      const sk = str(seen, "sk");
      for (let attempt = 0; ; attempt++) {
        const current = await this.get(pk, sk);
        if (current === undefined || str(current, "id") !== str(seen, "id")) return false;
        if (str(current, "state") === "ACTIVE") break;
        if (!this.isStale(current)) return false;
        if (await this.revertDropping(current, str(current, "dropToken"))) break;
        if (attempt >= 2) return false;
      }
    }
    return true;
  }

  /**
   * Removes a schema item and, with cascade, its tables. Under a catalog this caller has already
   * marked DROPPING, no writer can add to the schema, so it is not marked itself. Returns undefined
   * when the schema changed hands before it could be marked (vanished, or another dropper).
   */
  private async removeSchema(
    catalog: string,
    item: Item,
    cascade: boolean,
    underDroppedCatalog: boolean,
  ): Promise<TableEntry[] | undefined> {
    const schema = str(item, "name");
    let token: string | undefined;
    if (!underDroppedCatalog) {
      token = await this.markDropping(item);
      if (token === undefined) return undefined;
    }
    const tables = await this.queryAll(tablePk(catalog, schema));
    // Abandoned creates, drops and renames are garbage, not contents.
    const abandoned = await Promise.all(tables.map((t) => this.isAbandonedTable(t)));
    const live = tables.filter((_, i) => !abandoned[i]);
    if (live.length > 0 && !cascade && token !== undefined) {
      await this.revertDropping(item, token);
      throw schemaNotEmpty(catalog, schema);
    }
    const removed = new Map<string, TableEntry>();
    for (const table of tables) {
      const tableId = str(table, "tableId");
      await this.deleteIdIndex(tableId);
      // Both items of an interrupted rename name one table: report it once.
      if (await this.deleteIfAttr(table, "tableId", table.tableId)) {
        removed.set(tableId, toTableEntry(table));
      }
    }
    if (token === undefined) {
      await this.items.delete(keyOf(item));
    } else if (!(await this.deleteIfToken(item, token))) {
      throw schemaNotEmpty(catalog, schema);
    }
    return [...removed.values()];
  }

  /**
   * Writes a comment and/or properties onto the catalog or schema item read as `item`, on the
   * condition that it is still that object in that state (not dropped or marked meanwhile).
   */
  private async updateParent(
    item: Item,
    changes: NamespaceChanges,
    missing: () => SiltError,
  ): Promise<Item> {
    const set: Item = { updatedAt: N(this.clock()) };
    const remove: string[] = [];
    if (changes.comment !== undefined) set.comment = S(changes.comment);
    if (changes.properties !== undefined) {
      if (Object.keys(changes.properties).length > 0) {
        set.properties = S(JSON.stringify(changes.properties));
      } else {
        remove.push("properties");
      }
    }
    const updated = await this.items.update(
      keyOf(item),
      { set, remove },
      and(eq("id", attr(item, "id")), eq("state", attr(item, "state"))),
    );
    if (!updated) throw missing();
    const { properties: _, ...rest } = item;
    return { ...(remove.length > 0 ? rest : item), ...set };
  }

  /** Marks a parent DROPPING under a fresh token; undefined if someone else changed it first. */
  private async markDropping(item: Item): Promise<string | undefined> {
    const token = this.newId();
    const now = this.clock();
    const marked = await this.items.update(
      keyOf(item),
      { set: { state: S("DROPPING"), dropToken: S(token), changedAt: N(now) } },
      and(
        eq("id", attr(item, "id")),
        or(
          eq("state", S("ACTIVE")),
          and(eq("state", S("DROPPING")), le("changedAt", N(now - this.staleAfterMs))),
        ),
      ),
    );
    return marked ? token : undefined;
  }

  private async revertDropping(item: Item, token: string): Promise<boolean> {
    return this.items.update(
      keyOf(item),
      { set: { state: S("ACTIVE"), changedAt: N(this.clock()) }, remove: ["dropToken"] },
      and(eq("state", S("DROPPING")), eq("dropToken", S(token))),
    );
  }

  private async deleteIfToken(item: Item, token: string): Promise<boolean> {
    return this.items.delete(
      keyOf(item),
      and(eq("state", S("DROPPING")), eq("dropToken", S(token))),
    );
  }

  /** Deletes `item`'s key if the attribute `name` still holds `value`. */
  private async deleteIfAttr(
    item: Item,
    name: "id" | "tableId",
    value: AttributeValue | undefined,
  ): Promise<boolean> {
    if (value === undefined) throw siltError("CATALOG_CORRUPT:MISSING_ID");
    return this.items.delete(keyOf(item), eq(name, value));
  }

  private async deleteIdIndex(tableId: string): Promise<void> {
    await this.items.delete(tableIdKey(tableId));
  }

  /**
   * Writes a table item under its name if the name is free, or held by an abandoned item
   * (isAbandonedTable), which it replaces exactly; false when a live table holds the name. The
   * loop only repeats when the holder changed between our read and our write.
   */
  private async takeName(item: Item): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const prior = await this.items.get(keyOf(item));
      if (prior !== undefined && !(await this.isAbandonedTable(prior))) return false;
      const written =
        prior === undefined ? await this.putIfAbsent(item) : await this.putReplacing(item, prior);
      if (written) {
        // The abandoned table's files become unreferenced once its id no longer resolves.
        if (prior !== undefined) await this.releaseIdIndex(prior);
        return true;
      }
    }
    return false;
  }

  /** Deletes the id index of a table item taken over, unless it now names another item. */
  private async releaseIdIndex(prior: Item): Promise<void> {
    await this.items.delete(tableIdKey(str(prior, "tableId")), namesItem(prior));
  }

  private async putIfAbsent(item: Item): Promise<boolean> {
    return this.items.put(item, attributeNotExists("pk"));
  }

  /** Overwrites exactly the abandoned item `prior` (same id, state and change time). */
  private async putReplacing(item: Item, prior: Item): Promise<boolean> {
    return this.items.put(
      item,
      and(
        eq("tableId", attr(prior, "tableId")),
        eq("state", attr(prior, "state")),
        eq("changedAt", attr(prior, "changedAt")),
      ),
    );
  }

  private async get(pk: string, sk: string): Promise<Item | undefined> {
    return this.items.get({ pk: S(pk), sk: S(sk) });
  }

  /** Every item of a partition (only those in `onlyState` if given), page after page. */
  private async queryAll(pk: string, onlyState?: TableState): Promise<Item[]> {
    return queryAll(this.items, {
      partition: S(pk),
      ...(onlyState === undefined ? {} : { filter: eq("state", S(onlyState)) }),
      ...(this.pageSize === undefined ? {} : { limit: this.pageSize }),
    });
  }
}
