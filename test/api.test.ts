/**
 * The engine core end to end through the HTTP API: catalogs, schemas, tables, appends, reads at
 * any version, history, detail and drop, on S3 (emulated) and on the local filesystem, plus the
 * bad-input paths, each of which must answer with an error and change nothing.
 */
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAll } from "../lib/storage/object-store.ts";
import { type SiltHarness, type StorageKind, startSilt } from "./helpers/silt-harness.ts";

describe.each<StorageKind>(["local", "s3"])("HTTP API on %s storage", (storage) => {
  let silt: SiltHarness;
  beforeAll(async () => {
    silt = await startSilt(storage);
    expect((await silt.call("POST", "/api/v1/catalogs", { name: "inventory" })).status).toBe(201);
    expect(
      (await silt.call("POST", "/api/v1/catalogs/inventory/schemas", { name: "stock" })).status,
    ).toBe(201);
  });
  afterAll(() => silt.close());

  const rowsOf = async (name: string, query = "") => {
    const res = await silt.call("GET", `/api/v1/tables/${name}/rows${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as {
      version: number;
      columns: { name: string; type: string }[];
      rows: unknown[][];
    };
  };
  const sorted = (rows: unknown[][]) =>
    [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])));

  it("health answers 200", async () => {
    const res = await silt.call("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });

  it("creates a catalog-managed table with the catalog's protocol", async () => {
    const res = await silt.call("POST", "/api/v1/tables", {
      name: "inventory.stock.items",
      columns: [
        { name: "sku", type: "STRING" },
        { name: "qty", type: "INT" },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.version).toBe(0);

    const detail = await silt.call("GET", "/api/v1/tables/inventory.stock.items/detail");
    expect(detail.status).toBe(200);
    const cols = detail.body.columns.map((c: { name: string }) => c.name);
    const row = Object.fromEntries(cols.map((c: string, i: number) => [c, detail.body.rows[0][i]]));
    expect(row.format).toBe("delta");
    expect(row.id).toBe(res.body.tableId);
    expect(row.name).toBe("inventory.stock.items");
    expect(row.location).toMatch(new RegExp(`tables/${res.body.tableId}$`));
    expect(row.minReaderVersion).toBe(3);
    expect(row.minWriterVersion).toBe(7);
    expect(row.numFiles).toBe(0);
    expect(row.partitionColumns).toEqual([]);
    for (const f of [
      "catalogManaged",
      "deletionVectors",
      "v2Checkpoint",
      "vacuumProtocolCheck",
      "inCommitTimestamp",
      "columnMapping",
      "rowTracking",
      "domainMetadata",
    ]) {
      expect(row.tableFeatures).toContain(f);
    }
    expect(row.properties["io.unitycatalog.tableId"]).toBe(res.body.tableId);
    expect(row.properties["delta.enableDeletionVectors"]).toBe("true");
    expect(row.properties["delta.columnMapping.mode"]).toBe("name");
  });

  it("refuses to turn off a required feature, with the catalog's message, and creates nothing", async () => {
    const res = await silt.call("POST", "/api/v1/tables", {
      name: "inventory.stock.returns",
      columns: [
        { name: "sku", type: "STRING" },
        { name: "qty", type: "INT" },
      ],
      properties: { "delta.enableDeletionVectors": "false" },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      "Cannot create table inventory.stock.returns: catalog requires table property 'delta.enableDeletionVectors'='true' but the caller supplied 'delta.enableDeletionVectors'='false'. Remove the conflicting TBLPROPERTIES entry and retry.",
    );
    expect(res.body.message_parameters).toEqual({
      verb: "create",
      tableName: "inventory.stock.returns",
      key: "delta.enableDeletionVectors",
      required: "true",
      supplied: "false",
    });
    const list = await silt.call("GET", "/api/v1/catalogs/inventory/schemas/stock/tables");
    expect(list.body.rows.map((r: unknown[]) => r[2])).not.toContain("returns");
    const read = await silt.call("GET", "/api/v1/tables/inventory.stock.returns/rows");
    expect(read.status).toBe(404);
    expect(read.body.error_class).toBe("TABLE_OR_VIEW_NOT_FOUND");
    // The values the message names, for callers that act on them without parsing text.
    expect(read.body.message_parameters).toEqual({ relationName: "`inventory`.`stock`.`returns`" });
  });

  it("lets a caller override a suggestion", async () => {
    const res = await silt.call("POST", "/api/v1/tables", {
      name: "inventory.stock.plain",
      columns: [{ name: "id", type: "BIGINT" }],
      properties: { "delta.columnMapping.mode": "none", "delta.enableRowTracking": "false" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const detail = await silt.call("GET", "/api/v1/tables/inventory.stock.plain/detail");
    const features = detail.body.rows[0][14] as string[];
    expect(features).not.toContain("columnMapping");
    expect(features).not.toContain("rowTracking");
    expect(features).toContain("catalogManaged");
  });

  it("appends rows, reads them back at every version, and records history", async () => {
    const first = await silt.call("POST", "/api/v1/tables/inventory.stock.items/insert", {
      rows: [["apple", 10], ["pear", 4], { sku: "plum", qty: 0 }],
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.version).toBe(1);
    expect(first.body.numOutputRows).toBe(3);

    const second = await silt.call("POST", "/api/v1/tables/inventory.stock.items/insert", {
      rows: [{ SKU: "fig", qty: null }],
    });
    expect(second.body.version).toBe(2);

    const latest = await rowsOf("inventory.stock.items");
    expect(latest.version).toBe(2);
    expect(latest.columns).toEqual([
      { name: "sku", type: "string" },
      { name: "qty", type: "int" },
    ]);
    expect(sorted(latest.rows)).toEqual([
      ["apple", 10],
      ["fig", null],
      ["pear", 4],
      ["plum", 0],
    ]);
    const v1 = await rowsOf("inventory.stock.items", "?version=1");
    expect(v1.version).toBe(1);
    expect(sorted(v1.rows)).toEqual([
      ["apple", 10],
      ["pear", 4],
      ["plum", 0],
    ]);
    expect((await rowsOf("inventory.stock.items", "?version=0")).rows).toEqual([]);
    const projected = await rowsOf("inventory.stock.items", "?columns=qty&version=1");
    expect(projected.columns).toEqual([{ name: "qty", type: "int" }]);
    expect(projected.rows.map((r) => r[0]).sort()).toEqual([0, 10, 4]);
    expect((await rowsOf("inventory.stock.items", "?limit=2")).rows).toHaveLength(2);

    const history = await silt.call("GET", "/api/v1/tables/inventory.stock.items/history");
    expect(history.status).toBe(200);
    const h = history.body;
    const col = (name: string) => h.columns.findIndex((c: { name: string }) => c.name === name);
    expect(h.rows.map((r: unknown[]) => r[col("version")])).toEqual([2, 1, 0]);
    expect(h.rows.map((r: unknown[]) => r[col("operation")])).toEqual([
      "WRITE",
      "WRITE",
      "CREATE TABLE",
    ]);
    const write = h.rows[1];
    expect(write[col("operationParameters")]).toEqual({ mode: "Append", partitionBy: "[]" });
    expect(write[col("operationMetrics")].numOutputRows).toBe("3");
    expect(write[col("operationMetrics")].numFiles).toBe("1");
    expect(write[col("readVersion")]).toBe(0);
    expect(write[col("isBlindAppend")]).toBe(true);
    expect(write[col("isolationLevel")]).toBe("Serializable");
    const times = h.rows.map((r: unknown[]) => Date.parse(r[col("timestamp")] as string));
    expect(times[0]).toBeGreaterThan(times[1]);
    expect(times[1]).toBeGreaterThan(times[2]);
    const limited = await silt.call("GET", "/api/v1/tables/inventory.stock.items/history?limit=1");
    expect(limited.body.rows).toHaveLength(1);

    // Timestamp travel: the instant of version 1's commit reads version 1.
    const atV1 = await rowsOf(
      "inventory.stock.items",
      `?timestamp=${encodeURIComponent(h.rows[1][col("timestamp")])}`,
    );
    expect(atV1.version).toBe(1);
  });

  it("writes a genuine Delta log: commitInfo first with ICT and txnId, protocol and metaData at 0", async () => {
    const detail = await silt.call("GET", "/api/v1/tables/inventory.stock.items/detail");
    const tableId = detail.body.rows[0][1] as string;
    const logKeys = (await listAll(silt.ctx.store, `tables/${tableId}/_delta_log/`)).map(
      (o) => o.key,
    );
    const published = logKeys.filter((k) => /_delta_log\/\d{20}\.json$/.test(k));
    expect(published.map((k) => k.slice(-25))).toEqual([
      "00000000000000000000.json",
      "00000000000000000001.json",
      "00000000000000000002.json",
    ]);
    const decode = async (key: string) =>
      new TextDecoder()
        .decode(await silt.ctx.store.get(key))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
    const v0 = await decode(published[0]);
    expect(Object.keys(v0[0])).toEqual(["commitInfo"]);
    expect(typeof v0[0].commitInfo.inCommitTimestamp).toBe("number");
    expect(typeof v0[0].commitInfo.txnId).toBe("string");
    const protocol = v0.find((a) => a.protocol).protocol;
    expect(protocol.minReaderVersion).toBe(3);
    expect(protocol.readerFeatures).toEqual(
      expect.arrayContaining([
        "catalogManaged",
        "vacuumProtocolCheck",
        "v2Checkpoint",
        "deletionVectors",
      ]),
    );
    expect(protocol.writerFeatures).toEqual(
      expect.arrayContaining(["catalogManaged", "inCommitTimestamp", "vacuumProtocolCheck"]),
    );
    const metaData = v0.find((a) => a.metaData).metaData;
    expect(metaData.id).toBe(tableId);
    const v1 = await decode(published[1]);
    const adds = v1.filter((a) => a.add).map((a) => a.add);
    expect(adds).toHaveLength(1);
    expect(JSON.parse(adds[0].stats).numRecords).toBe(3);
    expect(adds[0].baseRowId).toBe(0);
    expect(adds[0].defaultRowCommitVersion).toBe(1);
    const hwm = v1.find((a) => a.domainMetadata)?.domainMetadata;
    expect(JSON.parse(hwm.configuration)).toEqual({ rowIdHighWaterMark: 2 });
    expect(v1[0].commitInfo.inCommitTimestamp).toBeGreaterThan(v0[0].commitInfo.inCommitTimestamp);
    // The staged file the arbiter ratified is the published commit, byte for byte.
    const staged = logKeys.filter((k) => k.includes("_staged_commits/00000000000000000001."));
    expect(staged).toHaveLength(1);
    expect(await silt.ctx.store.get(staged[0])).toEqual(await silt.ctx.store.get(published[1]));
  });

  it("accepts and returns Arrow IPC streams", async () => {
    const input = arrow.tableFromArrays({
      sku: ["kiwi", "lime"],
      qty: Int32Array.from([7, 3]),
    });
    const res = await silt.call(
      "POST",
      "/api/v1/tables/inventory.stock.items/insert",
      arrow.tableToIPC(input, "stream"),
      { "content-type": "application/vnd.apache.arrow.stream" },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const back = await silt.call("GET", "/api/v1/tables/inventory.stock.items/rows?format=arrow");
    expect(back.headers.get("content-type")).toBe("application/vnd.apache.arrow.stream");
    const table = arrow.tableFromIPC(back.raw);
    expect(table.numRows).toBe(6);
    expect(table.getChild("sku")?.toArray().sort()).toEqual([
      "apple",
      "fig",
      "kiwi",
      "lime",
      "pear",
      "plum",
    ]);
    // Bytes that are not a stream are refused, not committed as an empty append.
    const history = async () =>
      (await silt.call("GET", "/api/v1/tables/inventory.stock.items/history")).body.rows.length;
    const before = await history();
    for (const body of [new TextEncoder().encode("garbage"), new Uint8Array()]) {
      const bad = await silt.call("POST", "/api/v1/tables/inventory.stock.items/insert", body, {
        "content-type": "application/vnd.apache.arrow.stream",
      });
      expect([bad.status, bad.body.error_class]).toEqual([400, "MALFORMED_REQUEST"]);
      expect(bad.body.message).toContain("not a valid Arrow IPC stream");
    }
    expect(await history()).toBe(before);
  });

  it("partitions by typed columns and reads them back", async () => {
    const created = await silt.call("POST", "/api/v1/tables", {
      name: "inventory.stock.orders",
      columns: [
        { name: "order_id", type: "INT" },
        { name: "amount", type: "DECIMAL(5,2)" },
        { name: "day", type: "DATE" },
        { name: "region", type: "STRING" },
      ],
      partitionedBy: ["day", "region"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const ins = await silt.call("POST", "/api/v1/tables/inventory.stock.orders/insert", {
      rows: [
        [1, "9.50", "2026-10-01", "eu/west"],
        [2, "20.00", "2026-10-01", "eu/west"],
        [3, "3.25", "2026-10-02", null],
      ],
    });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
    expect(ins.body.numFiles).toBe(2);
    const rows = await rowsOf("inventory.stock.orders");
    expect(sorted(rows.rows)).toEqual([
      [1, "9.50", "2026-10-01", "eu/west"],
      [2, "20.00", "2026-10-01", "eu/west"],
      [3, "3.25", "2026-10-02", null],
    ]);
    const detail = await silt.call("GET", "/api/v1/tables/inventory.stock.orders/detail");
    expect(detail.body.rows[0][7]).toEqual(["day", "region"]);
  });

  describe("bad input changes nothing", () => {
    const versionOf = async (name: string) => (await rowsOf(name)).version;

    it.each([
      ["unknown catalog", "nope.stock.items", 404, "CATALOG_NOT_FOUND"],
      ["unknown schema", "inventory.nope.items", 404, "SCHEMA_NOT_FOUND"],
      ["unknown table", "inventory.stock.nope", 404, "TABLE_OR_VIEW_NOT_FOUND"],
      ["empty name part", "inventory..items", 400, undefined],
    ])("%s", async (_what, name, status, errorClass) => {
      const res = await silt.call("GET", `/api/v1/tables/${name}/rows`);
      expect(res.status).toBe(status);
      if (errorClass) expect(res.body.error_class).toBe(errorClass);
      expect(typeof res.body.message).toBe("string");
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
    });

    it("duplicate catalog, schema and table names are 409 and keep the original", async () => {
      expect((await silt.call("POST", "/api/v1/catalogs", { name: "inventory" })).status).toBe(409);
      expect(
        (await silt.call("POST", "/api/v1/catalogs/inventory/schemas", { name: "STOCK" })).status,
      ).toBe(409);
      const before = await versionOf("inventory.stock.items");
      const dup = await silt.call("POST", "/api/v1/tables", {
        name: "inventory.stock.items",
        columns: [{ name: "x", type: "INT" }],
      });
      expect(dup.status).toBe(409);
      expect(dup.body.error_class).toBe("TABLE_OR_VIEW_ALREADY_EXISTS");
      expect(await versionOf("inventory.stock.items")).toBe(before);
      const again = await silt.call("POST", "/api/v1/tables", {
        name: "inventory.stock.items",
        columns: [{ name: "x", type: "INT" }],
        ifNotExists: true,
      });
      expect(again.status).toBe(200);
      expect(again.body.created).toBe(false);
      expect((await rowsOf("inventory.stock.items")).columns.map((c) => c.name)).toEqual([
        "sku",
        "qty",
      ]);
    });

    it("invalid names are rejected before anything is written", async () => {
      for (const name of ["bad/name", "a.b", ""]) {
        const res = await silt.call("POST", "/api/v1/catalogs", { name });
        expect(res.status).toBe(400);
      }
      const cats = await silt.call("GET", "/api/v1/catalogs");
      expect(cats.body.rows.map((r: unknown[]) => r[0])).toEqual(["inventory"]);
      const res = await silt.call("POST", "/api/v1/tables", {
        name: "inventory.stock.bad/table",
        columns: [{ name: "x", type: "INT" }],
      });
      expect(res.status).toBe(400);
    });

    it.each([
      ["too few values", { rows: [["apple"]] }, "DELTA_INSERT_COLUMN_ARITY_MISMATCH"],
      [
        "too many values",
        { rows: [["apple", 1, 2]] },
        "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS",
      ],
      [
        "unknown column",
        { rows: [{ sku: "a", qty: 1, colour: "red" }] },
        "UNRESOLVED_COLUMN.WITH_SUGGESTION",
      ],
      ["wrong type", { rows: [["apple", "ten"]] }, undefined],
      ["fraction for an int", { rows: [["apple", 1.5]] }, undefined],
      ["not an array", { rows: "apple" }, "INVALID_REQUEST"],
    ])("%s", async (_what, body, errorClass) => {
      const before = await rowsOf("inventory.stock.items");
      const res = await silt.call("POST", "/api/v1/tables/inventory.stock.items/insert", body);
      expect(res.status).toBe(400);
      if (errorClass) expect(res.body.error_class).toBe(errorClass);
      expect(res.body.message.length).toBeGreaterThan(10);
      const after = await rowsOf("inventory.stock.items");
      expect(after.version).toBe(before.version);
      expect(sorted(after.rows)).toEqual(sorted(before.rows));
    });

    it("a null for a NOT NULL column is refused", async () => {
      const created = await silt.call("POST", "/api/v1/tables", {
        name: "inventory.stock.strict",
        columns: [
          { name: "id", type: "INT", nullable: false },
          { name: "note", type: "STRING" },
        ],
      });
      expect(created.status).toBe(201);
      const res = await silt.call("POST", "/api/v1/tables/inventory.stock.strict/insert", {
        rows: [
          [1, "ok"],
          [null, "bad"],
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body.error_class).toBe("DELTA_NOT_NULL_CONSTRAINT_VIOLATED");
      expect(res.body.message).toBe("NOT NULL constraint violated for column: id.");
      const after = await rowsOf("inventory.stock.strict");
      expect(after.version).toBe(0);
      expect(after.rows).toEqual([]);
    });

    it("bad column definitions and malformed bodies are 400", async () => {
      const cases = [
        { name: "inventory.stock.t1", columns: [] },
        {
          name: "inventory.stock.t2",
          columns: [
            { name: "a", type: "INT" },
            { name: "A", type: "INT" },
          ],
        },
        { name: "inventory.stock.t3", columns: [{ name: "a", type: "NOT_A_TYPE" }] },
        { name: "inventory.stock.t4", columns: [{ name: "a", type: "INT" }], partitionedBy: ["b"] },
        { name: "inventory.stock.t5", columns: [{ name: "a", type: "INT" }], using: "parquet" },
        {
          name: "inventory.stock.t6",
          columns: [{ name: "a", type: "INT" }],
          properties: { "delta.nope": "1" },
        },
      ];
      for (const body of cases) {
        const res = await silt.call("POST", "/api/v1/tables", body);
        expect(res.status, JSON.stringify(body)).toBe(400);
      }
      const malformed = await silt.call(
        "POST",
        "/api/v1/tables",
        new TextEncoder().encode("{nope"),
        {
          "content-type": "application/json",
        },
      );
      expect(malformed.status).toBe(400);
      const list = await silt.call("GET", "/api/v1/catalogs/inventory/schemas/stock/tables");
      const names = list.body.rows.map((r: unknown[]) => r[2]);
      for (const n of ["t1", "t2", "t3", "t4", "t5", "t6"]) expect(names).not.toContain(n);
    });

    it("time travel out of range names the available versions", async () => {
      const res = await silt.call("GET", "/api/v1/tables/inventory.stock.items/rows?version=99");
      expect(res.status).toBe(400);
      expect(res.body.error_class).toBe("DELTA_VERSION_NOT_FOUND");
      expect(res.body.message).toMatch(/Available versions: \[0, \d+\]/);
    });
  });

  it("drops a table and its files", async () => {
    const created = await silt.call("POST", "/api/v1/tables", {
      name: "inventory.stock.temp",
      columns: [{ name: "id", type: "INT" }],
    });
    await silt.call("POST", "/api/v1/tables/inventory.stock.temp/insert", { rows: [[1], [2]] });
    const prefix = `tables/${created.body.tableId}/`;
    expect((await listAll(silt.ctx.store, prefix)).length).toBeGreaterThan(0);
    const dropped = await silt.call("DELETE", "/api/v1/tables/inventory.stock.temp");
    expect(dropped.status).toBe(200);
    expect(dropped.body.dropped).toBe(true);
    expect(await listAll(silt.ctx.store, prefix)).toEqual([]);
    expect((await silt.call("GET", "/api/v1/tables/inventory.stock.temp/rows")).status).toBe(404);
    expect((await silt.call("DELETE", "/api/v1/tables/inventory.stock.temp")).status).toBe(404);
    const ifExists = await silt.call("DELETE", "/api/v1/tables/inventory.stock.temp?ifExists=true");
    expect(ifExists.status).toBe(200);
    expect(ifExists.body.dropped).toBe(false);
  });
});
