import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { Catalog, DEFAULT_STALE_AFTER_MS, type TableEntry } from "../lib/catalog/catalog-store.ts";
import {
  MAX_NAME_LENGTH,
  normalizeName,
  parseQualifiedName,
  splitNameParts,
} from "../lib/catalog/names.ts";
import { SiltError } from "../lib/errors.ts";
import { CATALOG_TABLE_KEYS, type ItemStore } from "../lib/kv/item-store.ts";
import { hookedItemStore, itemStoreBackends, type StoreCall } from "./helpers/item-stores.ts";

const backends = itemStoreBackends();

afterAll(async () => {
  for (const backend of backends) await backend.close();
});

/** A fresh catalog table per test, with a clock the test moves by hand. */
interface Env {
  catalog: Catalog;
  items: ItemStore;
  clock: { now: number };
  make(items?: ItemStore, options?: { queryPageSize?: number }): Catalog;
  itemCount(): Promise<number>;
}

async function newEnv(backend: (typeof backends)[number]): Promise<Env> {
  const table = await backend.table("silt-catalog", CATALOG_TABLE_KEYS);
  const clock = { now: 1_700_000_000_000 };
  const make = (items: ItemStore = table.store, options: { queryPageSize?: number } = {}) =>
    new Catalog(items, { clock: () => clock.now, ...options });
  return {
    catalog: make(),
    items: table.store,
    clock,
    make,
    itemCount: () => table.itemCount(),
  };
}

/** The catalog table, running `hook` (once) before the first store call `matches` accepts. */
function hookedItems(
  env: Env,
  matches: (call: StoreCall) => boolean,
  hook: () => Promise<void>,
): ItemStore {
  return hookedItemStore(env.items, matches, hook);
}

const owner = { owner: "alice@example.com" };

async function expectSiltError(
  promise: Promise<unknown>,
  errorClass: string,
  status: number,
  sqlstate?: string,
): Promise<SiltError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SiltError);
  const silt = err as SiltError;
  expect({ errorClass: silt.errorClass, status: silt.status }).toEqual({ errorClass, status });
  if (sqlstate !== undefined) expect(silt.sqlstate).toBe(sqlstate);
  return silt;
}

async function createActiveTable(
  catalog: Catalog,
  c: string,
  s: string,
  t: string,
): Promise<TableEntry> {
  return catalog.activateTable(await catalog.beginCreateTable(c, s, t, owner));
}

describe("names", () => {
  it("lower-cases valid names and keeps other characters", () => {
    expect(normalizeName("Sales_2024", "catalog")).toBe("sales_2024");
    expect(normalizeName("my table-ü", "table")).toBe("my table-ü");
    expect(normalizeName("x".repeat(MAX_NAME_LENGTH), "schema")).toHaveLength(MAX_NAME_LENGTH);
  });

  it.each([
    ["", "it is empty"],
    ["a/b", "'/'"],
    ["a\\b", "'\\'"],
    ["a.b", "'.'"],
    ["a\u0001b", "U+0001"],
    ["a\u007fb", "U+007F"],
    ["a\nb", "U+000A"],
    ["x".repeat(MAX_NAME_LENGTH + 1), "256 characters"],
  ])("rejects %j", (name, detail) => {
    let caught: unknown;
    try {
      normalizeName(name, "table");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(SiltError);
    const err = caught as SiltError;
    expect(err.errorClass).toBe("INVALID_SCHEMA_OR_RELATION_NAME");
    expect(err.status).toBe(400);
    expect(err.sqlstate).toBe("42602");
    expect(err.message).toContain(detail);
    expect(err.message).toContain("cannot contain '.', '/', '\\' or control characters");
  });

  it("parses one, two and three part names with defaults", () => {
    expect(parseQualifiedName("Inventory.Stock.Items")).toEqual({
      catalog: "inventory",
      schema: "stock",
      table: "items",
    });
    expect(parseQualifiedName("stock.items", { catalog: "inv" })).toEqual({
      catalog: "inv",
      schema: "stock",
      table: "items",
    });
    expect(parseQualifiedName(" items ", { catalog: "inv", schema: "Stock" })).toEqual({
      catalog: "inv",
      schema: "stock",
      table: "items",
    });
  });

  it("accepts back-quoted parts, with `` for a back-quote", () => {
    expect(parseQualifiedName("`My Cat`.`s-1`.`a``b`")).toEqual({
      catalog: "my cat",
      schema: "s-1",
      table: "a`b",
    });
    expect(splitNameParts("a . `b c` .d")).toEqual(["a", "b c", "d"]);
  });

  it("says which part is missing when there is no default", () => {
    const noSchema = (() => {
      try {
        parseQualifiedName("items", { catalog: "inv" });
      } catch (e) {
        return e as SiltError;
      }
    })();
    expect(noSchema?.errorClass).toBe("INVALID_SCHEMA_OR_RELATION_NAME");
    expect(noSchema?.message).toContain("no schema and no default schema is set");
    expect(() => parseQualifiedName("stock.items")).toThrow(/no catalog and no default catalog/);
  });

  it("rejects malformed qualified names", () => {
    const errorOf = (text: string) => {
      try {
        parseQualifiedName(text, { catalog: "c", schema: "s" });
      } catch (e) {
        return (e as SiltError).errorClass;
      }
      return undefined;
    };
    expect(errorOf("a..b")).toBe("INVALID_SCHEMA_OR_RELATION_NAME");
    expect(errorOf("a.b.")).toBe("INVALID_SCHEMA_OR_RELATION_NAME");
    expect(errorOf("``")).toBe("INVALID_SCHEMA_OR_RELATION_NAME");
    expect(errorOf("`a.b`")).toBe("INVALID_SCHEMA_OR_RELATION_NAME");
    expect(errorOf("`a/b`")).toBe("INVALID_SCHEMA_OR_RELATION_NAME");
    expect(errorOf("my-table")).toBe("INVALID_IDENTIFIER");
    expect(errorOf("a.b.c.d")).toBe("IDENTIFIER_TOO_MANY_NAME_PARTS");
    expect(errorOf("`abc")).toBe("INVALID_ATTRIBUTE_NAME_SYNTAX");
    expect(errorOf("`a`b")).toBe("INVALID_ATTRIBUTE_NAME_SYNTAX");
  });
});

describe.each(backends)("Catalog on $name", (backend) => {
  let env: Env;
  let catalog: Catalog;

  beforeEach(async () => {
    env = await newEnv(backend);
    catalog = env.catalog;
  });

  describe("catalogs", () => {
    it("creates, lists, gets and drops", async () => {
      const created = await catalog.createCatalog("Inventory", { ...owner, comment: "stock" });
      expect(created).toMatchObject({
        name: "inventory",
        owner: "alice@example.com",
        comment: "stock",
        createdAt: env.clock.now,
      });
      await catalog.createCatalog("archive", owner);
      expect((await catalog.listCatalogs()).map((c) => c.name)).toEqual(["archive", "inventory"]);
      expect(await catalog.getCatalog("INVENTORY")).toEqual(created);

      expect(await catalog.dropCatalog("Inventory")).toEqual([]);
      expect((await catalog.listCatalogs()).map((c) => c.name)).toEqual(["archive"]);
      await expectSiltError(catalog.getCatalog("inventory"), "CATALOG_NOT_FOUND", 404, "42P08");
    });

    it("rejects duplicates unless IF NOT EXISTS, case-insensitively", async () => {
      const first = await catalog.createCatalog("inventory", owner);
      const err = await expectSiltError(
        catalog.createCatalog("INVENTORY", { owner: "bob" }),
        "CATALOG_ALREADY_EXISTS",
        409,
        "42P04",
      );
      expect(err.message).toContain("Cannot create catalog `inventory` because it already exists.");
      expect(await catalog.createCatalog("Inventory", { owner: "bob", ifNotExists: true })).toEqual(
        first,
      );
      expect(await catalog.listCatalogs()).toHaveLength(1);
    });

    it("drops a missing catalog only with IF EXISTS", async () => {
      const err = await expectSiltError(catalog.dropCatalog("nope"), "CATALOG_NOT_FOUND", 404);
      expect(err.message).toContain("The catalog `nope` not found.");
      expect(await catalog.dropCatalog("nope", { ifExists: true })).toEqual([]);
    });

    it("refuses to drop a non-empty catalog without CASCADE", async () => {
      await catalog.createCatalog("inv", owner);
      await catalog.createSchema("inv", "stock", owner);
      const table = await createActiveTable(catalog, "inv", "stock", "items");
      await expectSiltError(catalog.dropCatalog("inv"), "CATALOG_NOT_EMPTY", 409, "2BP01");
      // The failed drop left everything usable.
      expect((await catalog.listCatalogs()).map((c) => c.name)).toEqual(["inv"]);
      expect(await catalog.getTable("inv", "stock", "items")).toEqual(table);
      await catalog.createSchema("inv", "more", owner);

      const removed = await catalog.dropCatalog("inv", { cascade: true });
      expect(removed.map((t) => t.tableId)).toEqual([table.tableId]);
      expect(await catalog.listCatalogs()).toEqual([]);
      expect(await catalog.findTableById(table.tableId)).toBeUndefined();
      expect(await env.itemCount()).toBe(0);
    });
  });

  describe("schemas", () => {
    beforeEach(async () => {
      await catalog.createCatalog("inv", owner);
    });

    it("creates, lists, gets and drops", async () => {
      const stock = await catalog.createSchema("INV", "Stock", owner);
      expect(stock).toMatchObject({ catalog: "inv", name: "stock", owner: "alice@example.com" });
      await catalog.createSchema("inv", "archive", owner);
      expect((await catalog.listSchemas("inv")).map((s) => s.name)).toEqual(["archive", "stock"]);
      expect(await catalog.getSchema("inv", "STOCK")).toEqual(stock);
      expect(await catalog.dropSchema("inv", "stock")).toEqual([]);
      expect((await catalog.listSchemas("inv")).map((s) => s.name)).toEqual(["archive"]);
    });

    it("rejects duplicates unless IF NOT EXISTS", async () => {
      const first = await catalog.createSchema("inv", "stock", owner);
      const err = await expectSiltError(
        catalog.createSchema("inv", "STOCK", owner),
        "SCHEMA_ALREADY_EXISTS",
        409,
        "42P06",
      );
      expect(err.message).toBe(
        "Cannot create schema `inv`.`stock` because it already exists.\nChoose a different " +
          "name, drop the existing schema, or add the IF NOT EXISTS clause to tolerate " +
          "pre-existing schema.",
      );
      expect(await catalog.createSchema("inv", "stock", { owner: "x", ifNotExists: true })).toEqual(
        first,
      );
    });

    it("reports the missing level", async () => {
      await expectSiltError(catalog.createSchema("nope", "s", owner), "CATALOG_NOT_FOUND", 404);
      await expectSiltError(catalog.listSchemas("nope"), "CATALOG_NOT_FOUND", 404);
      const err = await expectSiltError(
        catalog.getSchema("inv", "nope"),
        "SCHEMA_NOT_FOUND",
        404,
        "42704",
      );
      expect(err.message).toBe(
        "The schema `inv`.`nope` cannot be found. Verify the spelling and correctness of the " +
          "schema and catalog.\nIf you did not qualify the name with a catalog, verify the " +
          "current_schema() output, or qualify the name with the correct catalog.\nTo tolerate " +
          "the error on drop use DROP SCHEMA IF EXISTS.",
      );
      await expectSiltError(catalog.dropSchema("inv", "nope"), "SCHEMA_NOT_FOUND", 404);
      expect(await catalog.dropSchema("inv", "nope", { ifExists: true })).toEqual([]);
      // IF EXISTS covers the schema, not its catalog.
      await expectSiltError(
        catalog.dropSchema("nope", "s", { ifExists: true }),
        "CATALOG_NOT_FOUND",
        404,
      );
    });

    it("refuses to drop a non-empty schema without CASCADE", async () => {
      await catalog.createSchema("inv", "stock", owner);
      const a = await createActiveTable(catalog, "inv", "stock", "a");
      const b = await createActiveTable(catalog, "inv", "stock", "b");
      const err = await expectSiltError(
        catalog.dropSchema("inv", "stock"),
        "SCHEMA_NOT_EMPTY",
        409,
        "2BP01",
      );
      expect(err.message).toBe(
        "Cannot drop a schema `inv`.`stock` because it contains objects.\n" +
          "Use DROP SCHEMA ... CASCADE to drop the schema and all its objects.",
      );
      expect((await catalog.listTables("inv", "stock")).map((t) => t.name)).toEqual(["a", "b"]);
      // Still accepts new tables after the failed drop reverted its mark.
      await createActiveTable(catalog, "inv", "stock", "c");

      const removed = await catalog.dropSchema("inv", "stock", { cascade: true });
      expect(removed.map((t) => t.name)).toEqual(["a", "b", "c"]);
      expect(removed.map((t) => t.location)).toContain(a.location);
      expect(removed.map((t) => t.location)).toContain(b.location);
      await expectSiltError(catalog.listTables("inv", "stock"), "SCHEMA_NOT_FOUND", 404);
      // Only the catalog item is left.
      expect(await env.itemCount()).toBe(1);
    });
  });

  describe("tables", () => {
    beforeEach(async () => {
      await catalog.createCatalog("inv", owner);
      await catalog.createSchema("inv", "stock", owner);
    });

    it("creates in two steps and is invisible until activated", async () => {
      const pending = await catalog.beginCreateTable("Inv", "STOCK", "Items", owner);
      expect(pending).toMatchObject({
        catalog: "inv",
        schema: "stock",
        name: "items",
        state: "CREATING",
        owner: "alice@example.com",
        tableType: "MANAGED",
        dataSourceFormat: "DELTA",
        createdAt: env.clock.now,
      });
      expect(pending.tableId).toMatch(/^[0-9a-f-]{36}$/);
      expect(pending.location).toBe(`tables/${pending.tableId}/`);
      const missing = await expectSiltError(
        catalog.getTable("inv", "stock", "items"),
        "TABLE_OR_VIEW_NOT_FOUND",
        404,
      );
      expect(missing.parameters).toEqual({ relationName: "`inv`.`stock`.`items`" });
      expect(await catalog.listTables("inv", "stock")).toEqual([]);
      await expectSiltError(catalog.getTableById(pending.tableId), "TABLE_OR_VIEW_NOT_FOUND", 404);

      env.clock.now += 1000;
      const active = await catalog.activateTable(pending);
      expect(active).toEqual({ ...pending, state: "ACTIVE", updatedAt: env.clock.now });
      expect(await catalog.getTable("INV", "Stock", "ITEMS")).toEqual(active);
      expect(await catalog.getTableById(pending.tableId)).toEqual(active);
      expect(await catalog.listTables("inv", "stock")).toEqual([active]);
      // A retried activation is harmless.
      expect(await catalog.activateTable(pending)).toEqual(active);
    });

    it("rejects a duplicate name, case-insensitively", async () => {
      await createActiveTable(catalog, "inv", "stock", "items");
      const err = await expectSiltError(
        catalog.beginCreateTable("inv", "stock", "ITEMS", owner),
        "TABLE_OR_VIEW_ALREADY_EXISTS",
        409,
        "42P07",
      );
      expect(err.message).toBe(
        "Cannot create table or view `inv`.`stock`.`items` because it already exists.\n" +
          "Choose a different name, drop or replace the existing object, or add the IF NOT " +
          "EXISTS clause to tolerate pre-existing objects.",
      );
      expect(await catalog.listTables("inv", "stock")).toHaveLength(1);
    });

    it("reports the missing level", async () => {
      await expectSiltError(
        catalog.beginCreateTable("nope", "stock", "t", owner),
        "CATALOG_NOT_FOUND",
        404,
        "42P08",
      );
      await expectSiltError(
        catalog.beginCreateTable("inv", "nope", "t", owner),
        "SCHEMA_NOT_FOUND",
        404,
        "42704",
      );
      await expectSiltError(catalog.getTable("nope", "stock", "t"), "CATALOG_NOT_FOUND", 404);
      await expectSiltError(catalog.getTable("inv", "nope", "t"), "SCHEMA_NOT_FOUND", 404);
      await expectSiltError(catalog.listTables("inv", "nope"), "SCHEMA_NOT_FOUND", 404);
      const err = await expectSiltError(
        catalog.getTable("inv", "stock", "missing"),
        "TABLE_OR_VIEW_NOT_FOUND",
        404,
        "42P01",
      );
      expect(err.message).toBe(
        "The table or view `inv`.`stock`.`missing` cannot be found. Verify the spelling and " +
          "correctness of the schema and catalog.\nIf you did not qualify the name with a " +
          "schema, verify the current_schema() output, or qualify the name with the correct " +
          "schema and catalog.\nTo tolerate the error on drop use DROP VIEW IF EXISTS or DROP " +
          "TABLE IF EXISTS.",
      );
      await expectSiltError(catalog.getTableById("no-such-id"), "TABLE_OR_VIEW_NOT_FOUND", 404);
      expect(await catalog.findTableById("no-such-id")).toBeUndefined();
    });

    it("rejects invalid names at every level and writes nothing", async () => {
      const before = await env.itemCount();
      const bad = ["", "a/b", "a.b", "a\\b", "a\u0000b", "x".repeat(256)];
      for (const name of bad) {
        await expectSiltError(
          catalog.createCatalog(name, owner),
          "INVALID_SCHEMA_OR_RELATION_NAME",
          400,
        );
        await expectSiltError(
          catalog.createSchema("inv", name, owner),
          "INVALID_SCHEMA_OR_RELATION_NAME",
          400,
        );
        await expectSiltError(
          catalog.beginCreateTable("inv", "stock", name, owner),
          "INVALID_SCHEMA_OR_RELATION_NAME",
          400,
        );
        await expectSiltError(
          catalog.beginCreateTable(name, "stock", "t", owner),
          "INVALID_SCHEMA_OR_RELATION_NAME",
          400,
        );
      }
      expect(await env.itemCount()).toBe(before);
      expect((await catalog.listCatalogs()).map((c) => c.name)).toEqual(["inv"]);
      expect((await catalog.listSchemas("inv")).map((s) => s.name)).toEqual(["stock"]);
      expect(await catalog.listTables("inv", "stock")).toEqual([]);
    });

    it("drops in two steps", async () => {
      const table = await createActiveTable(catalog, "inv", "stock", "items");
      env.clock.now += 5;
      const dropping = await catalog.beginDropTable(table);
      expect(dropping).toMatchObject({ state: "DROPPING", tableId: table.tableId });
      // Gone from view at once, but the name stays reserved until the files are deleted.
      await expectSiltError(
        catalog.getTable("inv", "stock", "items"),
        "TABLE_OR_VIEW_NOT_FOUND",
        404,
      );
      await expectSiltError(catalog.getTableById(table.tableId), "TABLE_OR_VIEW_NOT_FOUND", 404);
      expect(await catalog.listTables("inv", "stock")).toEqual([]);
      expect((await catalog.findTableById(table.tableId))?.state).toBe("DROPPING");
      await expectSiltError(
        catalog.beginCreateTable("inv", "stock", "items", owner),
        "TABLE_OR_VIEW_ALREADY_EXISTS",
        409,
      );
      // A retried begin finds its own work done; a stale entry cannot start another drop.
      expect(await catalog.beginDropTable(table)).toEqual(dropping);

      await catalog.finishDropTable(dropping);
      await catalog.finishDropTable(dropping);
      expect(await catalog.findTableById(table.tableId)).toBeUndefined();
      await expectSiltError(catalog.beginDropTable(table), "TABLE_OR_VIEW_NOT_FOUND", 404);

      const again = await createActiveTable(catalog, "inv", "stock", "items");
      expect(again.tableId).not.toBe(table.tableId);
      expect(again.location).not.toBe(table.location);
      expect(await env.itemCount()).toBe(2 + 2);
    });

    it("releases an aborted create", async () => {
      const pending = await catalog.beginCreateTable("inv", "stock", "items", owner);
      expect(await catalog.abortCreateTable(pending)).toBe(true);
      expect(await catalog.findTableById(pending.tableId)).toBeUndefined();
      await createActiveTable(catalog, "inv", "stock", "items");
      // Aborting again must not touch the new table.
      expect(await catalog.abortCreateTable(pending)).toBe(false);
      expect(await catalog.listTables("inv", "stock")).toHaveLength(1);
    });

    it("recovers from a create that crashed before activation", async () => {
      const crashed = await catalog.beginCreateTable("inv", "stock", "items", owner);
      expect(await catalog.listTables("inv", "stock")).toEqual([]);
      await expectSiltError(
        catalog.getTable("inv", "stock", "items"),
        "TABLE_OR_VIEW_NOT_FOUND",
        404,
      );
      // Within the window the creator may still be alive, so the name stays reserved.
      env.clock.now += DEFAULT_STALE_AFTER_MS - 1;
      await expectSiltError(
        catalog.beginCreateTable("inv", "stock", "items", owner),
        "TABLE_OR_VIEW_ALREADY_EXISTS",
        409,
      );

      env.clock.now += 1;
      const fresh = await catalog.beginCreateTable("inv", "stock", "items", { owner: "bob" });
      expect(fresh.tableId).not.toBe(crashed.tableId);
      expect(await catalog.findTableById(crashed.tableId)).toBeUndefined();
      await catalog.activateTable(fresh);
      expect((await catalog.getTable("inv", "stock", "items")).owner).toBe("bob");

      // The original creator, if it wakes up, can neither activate nor remove the new table.
      await expectSiltError(catalog.activateTable(crashed), "TABLE_OR_VIEW_ALREADY_EXISTS", 409);
      expect(await catalog.abortCreateTable(crashed)).toBe(false);
      expect((await catalog.getTable("inv", "stock", "items")).tableId).toBe(fresh.tableId);
      expect(await catalog.listTables("inv", "stock")).toHaveLength(1);
    });

    it("recovers from a drop that crashed before finishing", async () => {
      const table = await createActiveTable(catalog, "inv", "stock", "items");
      await catalog.beginDropTable(table);
      env.clock.now += DEFAULT_STALE_AFTER_MS;
      const fresh = await createActiveTable(catalog, "inv", "stock", "items");
      expect(fresh.tableId).not.toBe(table.tableId);
      expect(await catalog.findTableById(table.tableId)).toBeUndefined();
      // The crashed dropper's late finish leaves the new table alone.
      await catalog.finishDropTable({ ...table, state: "DROPPING" });
      expect(await catalog.getTable("inv", "stock", "items")).toEqual(fresh);
    });

    it("lets an abandoned create not block dropping its schema", async () => {
      const crashed = await catalog.beginCreateTable("inv", "stock", "items", owner);
      await expectSiltError(catalog.dropSchema("inv", "stock"), "SCHEMA_NOT_EMPTY", 409);
      env.clock.now += DEFAULT_STALE_AFTER_MS;
      const removed = await catalog.dropSchema("inv", "stock");
      expect(removed.map((t) => t.tableId)).toEqual([crashed.tableId]);
      expect(await env.itemCount()).toBe(1);
    });

    it("lets exactly one of many concurrent creates of a name win", async () => {
      const racers = Array.from({ length: 8 }, () => env.make());
      const results = await Promise.allSettled(
        racers.map((c) => c.beginCreateTable("inv", "stock", "items", owner)),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r) => r.status === "rejected");
      expect(won).toHaveLength(1);
      for (const r of lost) {
        expect((r as PromiseRejectedResult).reason).toMatchObject({
          errorClass: "TABLE_OR_VIEW_ALREADY_EXISTS",
          status: 409,
        });
      }
      const winner = (won[0] as PromiseFulfilledResult<TableEntry>).value;
      await catalog.activateTable(winner);
      expect((await catalog.listTables("inv", "stock")).map((t) => t.tableId)).toEqual([
        winner.tableId,
      ]);
      // Losers wrote nothing: catalog, schema, one table item and its id index.
      expect(await env.itemCount()).toBe(4);
    });

    it("undoes a create whose schema was dropped while it was being written", async () => {
      // Between the table item and the id-index write, another session drops the schema.
      const creator = env.make(
        hookedItems(
          env,
          (call) => call.op === "put" && call.item.pk?.S?.startsWith("TABLEID#") === true,
          async () => {
            const removed = await env.make().dropSchema("inv", "stock", { cascade: true });
            expect(removed.map((t) => t.state)).toEqual(["CREATING"]);
          },
        ),
      );
      await expectSiltError(
        creator.beginCreateTable("inv", "stock", "items", owner),
        "SCHEMA_NOT_FOUND",
        404,
      );
      expect(await env.itemCount()).toBe(1);
    });

    it("keeps a parent whose dropper crashed usable after the window", async () => {
      // The dropper dies right after marking the schema, before listing its tables.
      const dropper = env.make(
        hookedItems(
          env,
          (call) => call.op === "query",
          async () => {
            throw new Error("simulated crash");
          },
        ),
      );
      await expect(dropper.dropSchema("inv", "stock")).rejects.toThrow("simulated crash");
      await expectSiltError(catalog.getSchema("inv", "stock"), "SCHEMA_NOT_FOUND", 404);
      await expectSiltError(
        catalog.beginCreateTable("inv", "stock", "t", owner),
        "SCHEMA_NOT_FOUND",
        404,
      );

      env.clock.now += DEFAULT_STALE_AFTER_MS;
      expect((await catalog.listSchemas("inv")).map((s) => s.name)).toEqual(["stock"]);
      await createActiveTable(catalog, "inv", "stock", "t");
      await expectSiltError(catalog.dropSchema("inv", "stock"), "SCHEMA_NOT_EMPTY", 409);
      expect(await catalog.dropSchema("inv", "stock", { cascade: true })).toHaveLength(1);
    });

    it("renames within the schema, keeping id, location, owner and creation time", async () => {
      const table = await createActiveTable(catalog, "inv", "stock", "items");
      env.clock.now += 1000;
      const renamed = await catalog.renameTable(table, "Goods");
      expect(renamed).toEqual({ ...table, name: "goods", updatedAt: env.clock.now });
      expect(await catalog.getTable("inv", "stock", "goods")).toEqual(renamed);
      await expectSiltError(
        catalog.getTable("inv", "stock", "items"),
        "TABLE_OR_VIEW_NOT_FOUND",
        404,
      );
      expect((await catalog.listTables("inv", "stock")).map((t) => t.name)).toEqual(["goods"]);
      expect(await catalog.getTableById(table.tableId)).toEqual(renamed);
      expect((await catalog.lookup("inv", "stock", "goods")).table).toEqual(renamed);
      // Catalog, schema, the table item and its id index: nothing left behind.
      expect(await env.itemCount()).toBe(4);
      await catalog.renameTable(renamed, "items");
      expect((await catalog.getTable("inv", "stock", "items")).tableId).toBe(table.tableId);
    });

    it("refuses a taken name, its own name and a missing table, changing nothing", async () => {
      const table = await createActiveTable(catalog, "inv", "stock", "items");
      const other = await createActiveTable(catalog, "inv", "stock", "other");
      await expectSiltError(
        catalog.renameTable(table, "OTHER"),
        "TABLE_OR_VIEW_ALREADY_EXISTS",
        409,
        "42P07",
      );
      await expectSiltError(
        catalog.renameTable(table, "items"),
        "TABLE_OR_VIEW_ALREADY_EXISTS",
        409,
      );
      expect(await catalog.getTable("inv", "stock", "items")).toEqual(table);
      expect(await catalog.getTable("inv", "stock", "other")).toEqual(other);
      expect(await env.itemCount()).toBe(6);
      // The refusal released the table: it renames and drops at once.
      const renamed = await catalog.renameTable(table, "third");
      await catalog.finishDropTable(await catalog.beginDropTable(renamed));
      await expectSiltError(catalog.renameTable(renamed, "fourth"), "TABLE_OR_VIEW_NOT_FOUND", 404);
      await expectSiltError(
        catalog.renameTable(table, "bad/name"),
        "INVALID_SCHEMA_OR_RELATION_NAME",
        400,
      );
      expect(await env.itemCount()).toBe(4);
    });

    const renameSteps = [
      "claim the id index",
      "mark the source",
      "put the target",
      "switch the id index",
      "delete the source",
      "unmark the target",
    ];
    it.each(renameSteps.map((step, i) => [i + 1, step] as const))(
      "shows exactly one name after a rename crashed before its step %i (%s), and recovers",
      async (step) => {
        const table = await createActiveTable(catalog, "inv", "stock", "items");
        let writes = 0;
        const renamer = env.make(
          hookedItems(
            env,
            (call) => call.op !== "get" && call.op !== "query" && ++writes === step,
            async () => {
              throw new Error("simulated crash");
            },
          ),
        );
        await expect(renamer.renameTable(table, "goods")).rejects.toThrow("simulated crash");
        const [visible, hidden] = step <= 4 ? ["items", "goods"] : ["goods", "items"];
        const current = await catalog.getTable("inv", "stock", visible);
        expect(current.tableId).toBe(table.tableId);
        await expectSiltError(
          catalog.getTable("inv", "stock", hidden),
          "TABLE_OR_VIEW_NOT_FOUND",
          404,
        );
        expect((await catalog.listTables("inv", "stock")).map((t) => t.name)).toEqual([visible]);
        expect((await catalog.findTableById(table.tableId))?.name).toBe(visible);
        expect((await catalog.lookup("inv", "stock", hidden)).table).toBeUndefined();
        if (step >= 2 && step <= 4) {
          // The crashed renamer may still be alive within the window.
          await expectSiltError(
            catalog.renameTable(current, "other"),
            "TABLE_RENAME_IN_PROGRESS",
            409,
          );
        }
        if (step >= 3) {
          await expectSiltError(catalog.beginDropTable(current), "TABLE_RENAME_IN_PROGRESS", 409);
        }

        env.clock.now += DEFAULT_STALE_AFTER_MS;
        const final = await catalog.renameTable(current, "final");
        expect((await catalog.listTables("inv", "stock")).map((t) => t.name)).toEqual(["final"]);
        // Leftovers hold no name, and taking one over leaves the renamed table's id alone.
        await createActiveTable(catalog, "inv", "stock", "items");
        await createActiveTable(catalog, "inv", "stock", "goods");
        expect(await catalog.getTableById(table.tableId)).toEqual(final);
        const removed = await catalog.dropSchema("inv", "stock", { cascade: true });
        expect(removed).toHaveLength(3);
        expect(new Set(removed.map((t) => t.tableId)).size).toBe(3);
        expect(await env.itemCount()).toBe(1);
      },
    );

    it("lets a drop settle a rename stalled past the window; the renamer then gives up", async () => {
      const table = await createActiveTable(catalog, "inv", "stock", "items");
      const renamer = env.make(
        hookedItems(
          env,
          (call) => call.op === "update" && call.update.set?.name !== undefined,
          async () => {
            env.clock.now += DEFAULT_STALE_AFTER_MS;
            const dropper = env.make();
            const seen = await dropper.getTable("inv", "stock", "items");
            await dropper.finishDropTable(await dropper.beginDropTable(seen));
          },
        ),
      );
      await expectSiltError(renamer.renameTable(table, "goods"), "TABLE_RENAME_IN_PROGRESS", 409);
      expect(await catalog.listTables("inv", "stock")).toEqual([]);
      expect(await catalog.findTableById(table.tableId)).toBeUndefined();
      expect(await env.itemCount()).toBe(2);
    });

    it("undoes a rename whose schema was dropped while it was being written", async () => {
      const table = await createActiveTable(catalog, "inv", "stock", "items");
      const renamer = env.make(
        hookedItems(
          env,
          (call) => call.op === "put" && call.item.name?.S === "goods",
          async () => {
            await env.make().dropSchema("inv", "stock", { cascade: true });
          },
        ),
      );
      await expectSiltError(renamer.renameTable(table, "goods"), "SCHEMA_NOT_FOUND", 404);
      expect(await env.itemCount()).toBe(1);
    });

    it("lists past DynamoDB page boundaries", async () => {
      const paged = env.make(env.items, { queryPageSize: 2 });
      const names = ["g", "c", "e", "a", "f", "b", "d"];
      for (const n of names) {
        await paged.createSchema("inv", `s_${n}`, owner);
        await createActiveTable(paged, "inv", "stock", n);
      }
      // One CREATING table in the middle is filtered out without ending the listing early.
      await paged.beginCreateTable("inv", "stock", "cc", owner);
      expect((await paged.listTables("inv", "stock")).map((t) => t.name)).toEqual(
        [...names].sort(),
      );
      expect((await paged.listSchemas("inv")).map((s) => s.name)).toEqual(
        [...names.map((n) => `s_${n}`), "stock"].sort(),
      );
    });
  });
});
