/**
 * The `unitycatalog-client` 0.7.0 Python SDK (UC's generated async client of the legacy API)
 * against Silt's UC API: catalogs and schemas created, read, listed, changed and deleted; a table made
 * through Silt's own /api/v1 listed and read; temporary credentials for it; and the 404s for
 * what is not there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientResult, ensureUcClients, runClient } from "./helpers/uc-clients.ts";
import { startUcTestServer, type UcTestServer } from "./helpers/uc-server.ts";

let server: UcTestServer;
let tableId: string;

beforeAll(async () => {
  await ensureUcClients();
  server = await startUcTestServer();
  await server.createSchemas("inventory.stock");
  const created = await server.api<{ tableId: string }>("POST", "/api/v1/tables", {
    name: "inventory.stock.restock",
    columns: [
      { name: "sku", type: "STRING" },
      { name: "qty", type: "INT" },
    ],
    properties: { "delta.columnMapping.mode": "none" },
  });
  expect(created.status).toBe(201);
  tableId = created.body.tableId;
}, 20 * 60_000);

afterAll(async () => {
  await server?.close();
});

type Json = Record<string, unknown>;

describe("the UC Python SDK", () => {
  let run: ClientResult;
  let s: Record<string, Json>;

  it(
    "runs every call",
    async () => {
      run = await runClient("sdk_basics.py", ["--uri", server.url], { timeoutMs: 2 * 60_000 });
      expect(run.code, `${run.stdout}\n${server.trace()}\n${run.stderr}`).toBe(0);
      s = (run.json as { steps: Record<string, Json> }).steps;
    },
    2 * 60_000,
  );

  it("creates, reads and lists a catalog and a schema", () => {
    expect(s.create_catalog).toMatchObject({
      name: "sdk_cat",
      comment: "made by the SDK",
      properties: { team: "silt" },
    });
    expect(s.get_catalog).toMatchObject({ name: "sdk_cat", comment: "made by the SDK" });
    const catalogs = (s.list_catalogs.catalogs as Json[]).map((c) => c.name);
    expect(catalogs).toEqual(expect.arrayContaining(["inventory", "sdk_cat"]));
    expect(s.create_schema).toMatchObject({
      name: "sdk_schema",
      catalog_name: "sdk_cat",
      full_name: "sdk_cat.sdk_schema",
      comment: "schema by the SDK",
    });
    expect(s.get_schema).toMatchObject({ full_name: "sdk_cat.sdk_schema" });
    expect((s.list_schemas.schemas as Json[]).map((x) => x.name)).toContain("sdk_schema");
  });

  it("changes a catalog's and a schema's comment and properties, and refuses a new name", () => {
    expect(s.update_catalog).toMatchObject({
      name: "sdk_cat",
      comment: "changed by the SDK",
      properties: { team: "core", tier: "gold" },
    });
    expect(Number(s.update_catalog.updated_at)).toBeGreaterThanOrEqual(
      Number(s.create_catalog.created_at),
    );
    // Properties left out of a change stay as they were.
    expect(s.update_schema).toMatchObject({ comment: "schema changed" });
    expect(s.get_updated_schema).toMatchObject({
      full_name: "sdk_cat.sdk_schema",
      comment: "schema changed",
    });
    expect(s.rename_catalog).toMatchObject({ refused: true, status: 501 });
    expect(JSON.parse(String(s.rename_catalog.body))).toMatchObject({
      error_code: "UNIMPLEMENTED",
    });
    expect(s.get_updated_catalog).toMatchObject({
      name: "sdk_cat",
      comment: "changed by the SDK",
      properties: { team: "core", tier: "gold" },
    });
  });

  it("lists and reads the table with its columns, id and location", () => {
    const listed = (s.list_tables.tables as Json[]).find((t) => t.name === "restock");
    expect(listed).toMatchObject({
      catalog_name: "inventory",
      schema_name: "stock",
      table_type: "MANAGED",
      data_source_format: "DELTA",
      table_id: tableId,
    });
    const table = s.get_table;
    expect(table).toMatchObject({
      name: "restock",
      catalog_name: "inventory",
      schema_name: "stock",
      table_type: "MANAGED",
      data_source_format: "DELTA",
      table_id: tableId,
    });
    expect(String(table.storage_location)).toMatch(/^file:/);
    expect(
      (table.columns as Json[]).map((c) => [c.name, c.type_text, c.type_name, c.position]),
    ).toEqual([
      ["sku", "string", "STRING", 0],
      ["qty", "int", "INT", 1],
    ]);
    expect(table.properties).toMatchObject({
      "delta.feature.catalogManaged": "supported",
      "io.unitycatalog.tableId": tableId,
    });
  });

  it("vends temporary credentials for the table's location", () => {
    const normalize = (u: unknown) =>
      String(u)
        .replace(/^file:\/(?!\/)/, "file:///")
        .replace(/\/$/, "");
    expect(normalize(s.temporary_table_credentials.url)).toBe(
      normalize(s.get_table.storage_location),
    );
  });

  it("answers 404 for a missing table, schema and deleted catalog", () => {
    for (const [step, code] of [
      ["get_missing_table", "TABLE_NOT_FOUND"],
      ["get_missing_schema", "SCHEMA_NOT_FOUND"],
      ["get_deleted_catalog", "CATALOG_NOT_FOUND"],
    ]) {
      const refusal = s[step];
      expect(refusal, step).toMatchObject({
        refused: true,
        error_type: "NotFoundException",
        status: 404,
      });
      expect(JSON.parse(String(refusal.body)), step).toMatchObject({ error_code: code });
    }
  });

  it("deleted the catalog and schema in Silt", async () => {
    const deletes = server.requests.filter((r) => r.method === "DELETE");
    expect(deletes.map((r) => [r.url.replace(/\?.*/, ""), r.status])).toEqual([
      ["/api/2.1/unity-catalog/schemas/sdk_cat.sdk_schema", 200],
      ["/api/2.1/unity-catalog/catalogs/sdk_cat", 200],
    ]);
    const catalogs = await server.api<unknown>("GET", "/api/v1/catalogs");
    expect(JSON.stringify(catalogs.body)).not.toContain("sdk_cat");
  });
});
