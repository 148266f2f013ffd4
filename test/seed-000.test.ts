/**
 * Seed 000, "Replace or overwrite a managed Delta table", statement by statement through
 * POST /api/v1/sql with the session the seed uses (default catalog replace_demo, tables named
 * sales.orders), producing what the seed prints; plus the failures it describes, each leaving
 * the table's version and rows as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

type Result = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  version?: number;
  tableId?: string;
};

describe("seed 000: replace or overwrite a managed Delta table", () => {
  let silt: SiltHarness;
  const sql = (statement: string, conf?: Record<string, string>) =>
    silt.call("POST", "/api/v1/sql", {
      statement,
      catalog: "replace_demo",
      ...(conf ? { conf } : {}),
    });
  const ok = async (statement: string, conf?: Record<string, string>): Promise<Result> => {
    const res = await sql(statement, conf);
    expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
    return res.body as Result;
  };
  const column = (r: Result, name: string) => r.columns.findIndex((c) => c.name === name);
  /** Everything a failed statement must leave alone: the version and every row. */
  const state = async () => {
    const history = await ok("DESCRIBE HISTORY sales.orders LIMIT 1");
    const rows = await ok("SELECT * FROM sales.orders ORDER BY order_id");
    return { version: history.rows[0][0], rows: rows.rows };
  };
  const detail = async () => {
    const d = await ok("DESCRIBE DETAIL sales.orders");
    const row = d.rows[0];
    return {
      id: row[column(d, "id")] as string,
      location: row[column(d, "location")] as string,
      partitionColumns: row[column(d, "partitionColumns")] as string[],
      properties: row[column(d, "properties")] as Record<string, string>,
      tableFeatures: row[column(d, "tableFeatures")] as string[],
    };
  };

  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await ok("CREATE CATALOG replace_demo");
    await ok("CREATE SCHEMA replace_demo.sales");
  });
  afterAll(() => silt.close());

  let tableId: string;
  let location: string;

  it("creates a table from a query (version 0, CREATE TABLE AS SELECT)", async () => {
    const res = await ok(`
    CREATE TABLE sales.orders USING DELTA AS
    SELECT * FROM VALUES
        (1, 'ada',   9.50,  DATE'2026-10-01'),
        (2, 'grace', 20.00, DATE'2026-10-01'),
        (3, 'linus', 3.25,  DATE'2026-10-02')
    AS t(order_id, customer, amount, day)
`);
    expect(res.version).toBe(0);
    const d = await detail();
    tableId = d.id;
    location = d.location;
    // "It takes its four columns from the query and has no partition columns."
    expect(d.partitionColumns).toEqual([]);
    const described = await ok("DESCRIBE TABLE sales.orders");
    expect(described.rows).toEqual([
      ["order_id", "int", null],
      ["customer", "string", null],
      ["amount", "decimal(4,2)", null],
      ["day", "date", null],
    ]);
    const rows = await ok("SELECT * FROM sales.orders ORDER BY order_id");
    expect(rows.rows).toEqual([
      [1, "ada", "9.50", "2026-10-01"],
      [2, "grace", "20.00", "2026-10-01"],
      [3, "linus", "3.25", "2026-10-02"],
    ]);
    // The catalog-managed protocol, as CREATE TABLE gives it.
    expect(d.tableFeatures).toEqual(
      expect.arrayContaining(["catalogManaged", "deletionVectors", "inCommitTimestamp"]),
    );
  });

  it("refuses CTAS without USING DELTA with the seed's message", async () => {
    const res = await sql(`
    CREATE TABLE sales.orders_copy AS
    SELECT * FROM VALUES (1, 'ada') AS t(order_id, customer)
`);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("Unity Catalog does not support non-Delta managed table");
    const tables = await ok("SHOW TABLES IN replace_demo.sales");
    expect(tables.rows.map((r) => r[1])).toEqual(["orders"]);
  });

  it("replaces definition and rows in one commit, reading the table it replaces", async () => {
    const res = await ok(`
    CREATE OR REPLACE TABLE sales.orders USING DELTA
    PARTITIONED BY (day) AS
    SELECT *, amount * 0.20 AS tax FROM sales.orders
`);
    expect(res.version).toBe(1);
    const d = await detail();
    // "The result is version 1 of the same table, with the same table ID and location."
    expect(d.id).toBe(tableId);
    expect(d.location).toBe(location);
    expect(d.properties["io.unitycatalog.tableId"]).toBe(tableId);
    expect(d.partitionColumns).toEqual(["day"]);
    const rows = await ok("SELECT * FROM sales.orders ORDER BY order_id");
    expect(rows.columns.map((c) => `${c.name} ${c.type}`)).toEqual([
      "order_id int",
      "customer string",
      "amount decimal(4,2)",
      "day date",
      "tax decimal(7,4)",
    ]);
    expect(rows.rows).toEqual([
      [1, "ada", "9.50", "2026-10-01", "1.9000"],
      [2, "grace", "20.00", "2026-10-01", "4.0000"],
      [3, "linus", "3.25", "2026-10-02", "0.6500"],
    ]);
    // "Version 0 still reads with its old four columns."
    const v0 = await ok("SELECT * FROM sales.orders VERSION AS OF 0 ORDER BY order_id");
    expect(v0.columns.map((c) => c.name)).toEqual(["order_id", "customer", "amount", "day"]);
    expect(v0.rows).toEqual([
      [1, "ada", "9.50", "2026-10-01"],
      [2, "grace", "20.00", "2026-10-01"],
      [3, "linus", "3.25", "2026-10-02"],
    ]);
  });

  it("overwrites all rows, keeping the columns", async () => {
    const res = await ok(`
    INSERT OVERWRITE sales.orders VALUES
        (4, 'ada',   12.00, DATE'2026-10-03', 2.40),
        (5, 'grace', 8.00,  DATE'2026-10-03', 1.60),
        (6, 'linus', 5.00,  DATE'2026-10-04', 1.00)
`);
    expect(res.version).toBe(2);
    const rows = await ok("SELECT order_id, tax FROM sales.orders ORDER BY order_id");
    expect(rows.rows).toEqual([
      [4, "2.4000"],
      [5, "1.6000"],
      [6, "1.0000"],
    ]);
  });

  it("fails an overwrite with too few values with DELTA_INSERT_COLUMN_ARITY_MISMATCH", async () => {
    const before = await state();
    const res = await sql("INSERT OVERWRITE sales.orders VALUES (9, 'ada')");
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("DELTA_INSERT_COLUMN_ARITY_MISMATCH");
    expect(res.body.message).toContain(
      "target table has 5 column(s) but the inserted data has 2 column(s)",
    );
    expect(await state()).toEqual(before);
  });

  it("replaces the rows matching a condition", async () => {
    const res = await ok(`
    INSERT INTO sales.orders
    REPLACE WHERE day = DATE'2026-10-03'
    VALUES (7, 'ada', 30.00, DATE'2026-10-03', 6.00)
`);
    expect(res.version).toBe(3);
    const rows = await ok("SELECT order_id, day FROM sales.orders ORDER BY order_id");
    // "Order 6, from October 4, stays."
    expect(rows.rows).toEqual([
      [6, "2026-10-04"],
      [7, "2026-10-03"],
    ]);
  });

  it("fails the whole REPLACE WHERE when a new row is outside the condition", async () => {
    const before = await state();
    const res = await sql(`
    INSERT INTO sales.orders
    REPLACE WHERE day = DATE'2026-10-03'
    VALUES (9, 'ada', 1.00, DATE'2026-10-03', 0.20),
           (10, 'grace', 2.00, DATE'2026-10-05', 0.40)
`);
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("DELTA_REPLACE_WHERE_MISMATCH");
    expect(res.body.sqlstate).toBe("44000");
    expect(res.body.message).toContain(
      "Written data does not conform to partial table overwrite condition or constraint",
    );
    expect(res.body.message).toContain("day : 2026-10-05");
    expect(await state()).toEqual(before);
  });

  it("overwrites only the partitions the new rows land in when the mode is dynamic", async () => {
    const res = await ok(
      `
    INSERT OVERWRITE sales.orders VALUES
        (8, 'grace', 4.00, DATE'2026-10-04', 0.80)
`,
      { "spark.sql.sources.partitionOverwriteMode": "dynamic" },
    );
    expect(res.version).toBe(4);
    const rows = await ok("SELECT order_id, day FROM sales.orders ORDER BY order_id");
    // "The new order replaces order 6 in the October 4 partition. Order 7, on October 3, stays."
    expect(rows.rows).toEqual([
      [7, "2026-10-03"],
      [8, "2026-10-04"],
    ]);
  });

  it("lists the history the seed prints, told apart by operationParameters", async () => {
    const history = await ok("DESCRIBE HISTORY sales.orders");
    const at = (name: string) => column(history, name);
    expect(history.rows.map((r) => [r[at("version")], r[at("operation")]])).toEqual([
      [4, "WRITE"],
      [3, "WRITE"],
      [2, "WRITE"],
      [1, "CREATE OR REPLACE TABLE AS SELECT"],
      [0, "CREATE TABLE AS SELECT"],
    ]);
    const params = Object.fromEntries(
      history.rows.map((r) => [r[at("version")], r[at("operationParameters")]]),
    ) as Record<number, Record<string, string>>;
    expect(params[2]).toEqual({ mode: "Overwrite", partitionBy: '["day"]' });
    expect(params[3]).toEqual({
      mode: "Overwrite",
      partitionBy: '["day"]',
      predicate: "(day = DATE '2026-10-03')",
    });
    expect(params[4]).toEqual({
      mode: "Overwrite",
      partitionBy: '["day"]',
      isDynamicPartitionOverwrite: "true",
    });
    expect(params[1]).toMatchObject({ partitionBy: '["day"]', isManaged: "true" });
    expect(params[0]).toMatchObject({ partitionBy: "[]", isManaged: "true" });
    const metrics = Object.fromEntries(
      history.rows.map((r) => [r[at("version")], r[at("operationMetrics")]]),
    ) as Record<number, Record<string, string>>;
    expect(metrics[0]).toMatchObject({ numFiles: "1", numOutputRows: "3" });
    expect(metrics[1]).toMatchObject({ numFiles: "2", numOutputRows: "3", numRemovedFiles: "1" });
    expect(metrics[2]).toMatchObject({ numOutputRows: "3", numRemovedFiles: "2" });
    expect(metrics[3]).toMatchObject({
      numOutputRows: "1",
      numDeletedRows: "2",
      numCopiedRows: "0",
      numRemovedFiles: "1",
    });
    expect(metrics[4]).toMatchObject({ numOutputRows: "1", numRemovedFiles: "1" });
    for (const [version, r] of history.rows.entries()) {
      expect(r[at("isBlindAppend")], `version ${4 - version}`).toBe(version === 4);
    }
  });

  it("reads an earlier version", async () => {
    const res = await ok(
      "SELECT order_id, day FROM sales.orders VERSION AS OF 3 ORDER BY order_id",
    );
    expect(res.columns).toEqual([
      { name: "order_id", type: "int" },
      { name: "day", type: "date" },
    ]);
    expect(res.rows).toEqual([
      [6, "2026-10-04"],
      [7, "2026-10-03"],
    ]);
  });

  it("restores version 3 as version 5, keeping 3 and 4 in the history", async () => {
    const res = await ok("RESTORE TABLE sales.orders TO VERSION AS OF 3");
    expect(res.version).toBe(5);
    const rows = await ok("SELECT order_id, day FROM sales.orders ORDER BY order_id");
    expect(rows.rows).toEqual([
      [6, "2026-10-04"],
      [7, "2026-10-03"],
    ]);
    const history = await ok("DESCRIBE HISTORY sales.orders");
    const at = (name: string) => column(history, name);
    expect(history.rows.map((r) => [r[at("version")], r[at("operation")]])).toEqual([
      [5, "RESTORE"],
      [4, "WRITE"],
      [3, "WRITE"],
      [2, "WRITE"],
      [1, "CREATE OR REPLACE TABLE AS SELECT"],
      [0, "CREATE TABLE AS SELECT"],
    ]);
    expect(history.rows[0][at("operationParameters")]).toEqual({
      version: "3",
      timestamp: null,
    });
    expect(history.rows[0][at("operationMetrics")]).toEqual({
      tableSizeAfterRestore: expect.stringMatching(/^\d+$/),
      numOfFilesAfterRestore: "2",
      numRemovedFiles: "1",
      numRestoredFiles: "1",
      removedFilesSize: expect.stringMatching(/^\d+$/),
      restoredFilesSize: expect.stringMatching(/^\d+$/),
    });
  });
});
