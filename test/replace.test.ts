/**
 * The replace and overwrite operations beyond the seed-000 walkthrough, through POST /api/v1/sql
 * and the typed JSON routes: identity rules of a replacement, INSERT OVERWRITE with PARTITION
 * specs and dynamic mode, REPLACE WHERE on data columns, REPLACE USING / ON (seed 004's daily
 * sales, NULL keys, empty sources, non-partition keys) and every error path, each asserting that
 * the table's version and rows did not change.
 */
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

type Result = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  version?: number;
};

let silt: SiltHarness;
const sql = (statement: string, conf?: Record<string, string>) =>
  silt.call("POST", "/api/v1/sql", { statement, catalog: "rt", ...(conf ? { conf } : {}) });
const ok = async (statement: string, conf?: Record<string, string>): Promise<Result> => {
  const res = await sql(statement, conf);
  expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Result;
};
const rowsOf = async (table: string, orderBy: string) =>
  (await ok(`SELECT * FROM ${table} ORDER BY ${orderBy}`)).rows;
const historyOf = async (table: string) => {
  const h = await ok(`DESCRIBE HISTORY ${table}`);
  const at = (n: string) => h.columns.findIndex((c) => c.name === n);
  return h.rows.map((r) => ({
    version: r[at("version")] as number,
    operation: r[at("operation")] as string,
    parameters: r[at("operationParameters")] as Record<string, string>,
    metrics: r[at("operationMetrics")] as Record<string, string>,
  }));
};
const latestVersion = async (table: string) => (await historyOf(table))[0].version;
const detailOf = async (table: string) => {
  const d = await ok(`DESCRIBE DETAIL ${table}`);
  const row = d.rows[0];
  const get = (n: string) => row[d.columns.findIndex((c) => c.name === n)];
  return {
    id: get("id") as string,
    location: get("location") as string,
    partitionColumns: get("partitionColumns") as string[],
    properties: get("properties") as Record<string, string>,
    tableFeatures: get("tableFeatures") as string[],
    numFiles: get("numFiles") as number,
    statistics: get("statistics") as Record<string, number>,
  };
};
/** Runs a statement that must fail, and checks the table is exactly as before. */
const failsUnchanged = async (
  table: string,
  orderBy: string,
  run: () => Promise<ApiResponse>,
): Promise<{ error_class: string; message: string }> => {
  const version = await latestVersion(table);
  const rows = await rowsOf(table, orderBy);
  const id = (await detailOf(table)).id;
  const res = await run();
  expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
  expect(await latestVersion(table)).toBe(version);
  expect(await rowsOf(table, orderBy)).toEqual(rows);
  expect((await detailOf(table)).id).toBe(id);
  return res.body;
};

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await ok("CREATE CATALOG rt");
  await ok("CREATE SCHEMA rt.s");
});
afterAll(() => silt.close());

describe("CREATE OR REPLACE / REPLACE TABLE keep the table's identity", () => {
  beforeAll(async () => {
    await ok(
      "CREATE TABLE s.ident USING DELTA AS SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(k, v)",
    );
  });

  it("applies the catalog's deletion-vector requirement to a replacement as to a create", async () => {
    // The catalog's rule (seed 002): a create cannot turn deletion vectors off ...
    const created = await sql(`
      CREATE TABLE s.no_dv (k INT) USING DELTA
      TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')`);
    expect(created.status).toBe(400);
    expect(created.body.message).toBe(
      "Cannot create table rt.s.no_dv: catalog requires table property 'delta.enableDeletionVectors'='true' but the caller supplied 'delta.enableDeletionVectors'='false'. Remove the conflicting TBLPROPERTIES entry and retry.",
    );
    // ... and neither can a replacement: it is the exception to "other properties may change".
    const body = await failsUnchanged("s.ident", "k", () =>
      sql(`
        CREATE OR REPLACE TABLE s.ident USING DELTA
        TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')
        AS SELECT * FROM VALUES (3, 'c') AS t(k, v)`),
    );
    expect(body.error_class).toBe("INVALID_PARAMETER_VALUE");
    expect(body.message).toBe(
      "Cannot replace table rt.s.ident: catalog requires table property 'delta.enableDeletionVectors'='true' but the caller supplied 'delta.enableDeletionVectors'='false'. Remove the conflicting TBLPROPERTIES entry and retry.",
    );
    expect((await detailOf("s.ident")).properties["delta.enableDeletionVectors"]).toBe("true");
  });

  it("lets other properties change: the replacement's TBLPROPERTIES replace the old ones", async () => {
    const before = await detailOf("s.ident");
    await ok(`
      CREATE OR REPLACE TABLE s.ident USING DELTA
      TBLPROPERTIES ('team' = 'sales', 'delta.appendOnly' = 'false', 'delta.enableRowTracking' = 'false')
      AS SELECT * FROM s.ident`);
    const after = await detailOf("s.ident");
    expect(after.id).toBe(before.id);
    expect(after.location).toBe(before.location);
    expect(after.properties).toMatchObject({
      team: "sales",
      "delta.appendOnly": "false",
      "delta.enableRowTracking": "false",
      "delta.enableDeletionVectors": "true",
      "io.unitycatalog.tableId": before.id,
    });
    // Turning row tracking off stops nothing a reader relies on: the protocol is never lowered.
    expect(after.tableFeatures).toEqual(before.tableFeatures);
    expect(await rowsOf("s.ident", "k")).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    await ok("CREATE OR REPLACE TABLE s.ident USING DELTA AS SELECT * FROM s.ident");
    expect((await detailOf("s.ident")).properties.team).toBeUndefined();
  });

  it("refuses identity-changing replacements before committing", async () => {
    const refused: [string, string][] = [
      [
        "CREATE OR REPLACE TABLE s.ident USING DELTA LOCATION 's3://elsewhere/t' AS SELECT 1 AS k, 'x' AS v",
        "INVALID_PARAMETER_VALUE",
      ],
      [
        "CREATE OR REPLACE TABLE s.ident USING PARQUET AS SELECT 1 AS k, 'x' AS v",
        "INVALID_PARAMETER_VALUE",
      ],
      [
        "REPLACE TABLE s.ident (k INT) USING DELTA TBLPROPERTIES ('delta.feature.catalogManaged' = 'disabled')",
        "INVALID_PARAMETER_VALUE",
      ],
      [
        "REPLACE TABLE s.ident (k INT) USING DELTA TBLPROPERTIES ('io.unitycatalog.tableId' = '00000000-0000-0000-0000-000000000000')",
        "INVALID_PARAMETER_VALUE",
      ],
      [
        "REPLACE TABLE s.ident (k INT) USING DELTA TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'false')",
        "INVALID_PARAMETER_VALUE",
      ],
      [
        "REPLACE TABLE s.ident (k INT) USING DELTA TBLPROPERTIES ('delta.checkpointPolicy' = 'classic')",
        "INVALID_PARAMETER_VALUE",
      ],
      [
        "REPLACE TABLE s.ident (k INT) USING DELTA TBLPROPERTIES ('delta.columnMapping.mode' = 'none')",
        "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE",
      ],
      [
        "CREATE OR REPLACE TABLE s.ident (k INT) USING DELTA AS SELECT 1 AS k",
        "_LEGACY_ERROR_TEMP_0035",
      ],
    ];
    for (const [statement, errorClass] of refused) {
      const body = await failsUnchanged("s.ident", "k", () => sql(statement));
      expect(body.error_class, statement).toBe(errorClass);
    }
  });

  it("assigns fresh column-mapping ids above the old high-water mark", async () => {
    const maxId = async () =>
      Number((await detailOf("s.ident")).properties["delta.columnMapping.maxColumnId"]);
    const before = await maxId();
    await ok("CREATE OR REPLACE TABLE s.ident (k INT, v STRING, w DOUBLE) USING DELTA");
    expect(await maxId()).toBe(before + 3);
    expect(await rowsOf("s.ident", "k")).toEqual([]);
    const [last] = await historyOf("s.ident");
    expect(last.operation).toBe("CREATE OR REPLACE TABLE");
    expect(last.metrics).toEqual({});
    expect(last.parameters).toMatchObject({ partitionBy: "[]", isManaged: "true" });
  });

  it("REPLACE TABLE fails for a missing table; CREATE OR REPLACE creates it", async () => {
    const res = await sql("REPLACE TABLE s.missing USING DELTA AS SELECT 1 AS k");
    expect(res.status).toBe(404);
    expect(res.body.error_class).toBe("TABLE_OR_VIEW_NOT_FOUND");
    expect((await ok("SHOW TABLES IN rt.s LIKE 'missing'")).rows).toEqual([]);

    const created = await ok(
      "CREATE OR REPLACE TABLE s.fresh USING DELTA PARTITIONED BY (p) AS SELECT 1 AS k, 'x' AS p",
    );
    expect(created.version).toBe(0);
    const [v0] = await historyOf("s.fresh");
    expect(v0.operation).toBe("CREATE OR REPLACE TABLE AS SELECT");
    expect(v0.parameters.partitionBy).toBe('["p"]');

    const replaced = await ok("REPLACE TABLE s.fresh USING DELTA AS SELECT 2 AS k");
    expect(replaced.version).toBe(1);
    expect((await historyOf("s.fresh"))[0].operation).toBe("REPLACE TABLE AS SELECT");
    expect(await rowsOf("s.fresh", "k")).toEqual([[2]]);
    // Version 0 keeps its partition column and its row.
    expect((await ok("SELECT * FROM s.fresh VERSION AS OF 0")).rows).toEqual([[1, "x"]]);
  });

  it("CTAS on an existing table fails, and IF NOT EXISTS leaves it alone", async () => {
    const version = await latestVersion("s.fresh");
    const res = await sql("CREATE TABLE s.fresh USING DELTA AS SELECT 9 AS k");
    expect(res.status).toBe(409);
    expect(res.body.error_class).toBe("TABLE_OR_VIEW_ALREADY_EXISTS");
    await ok("CREATE TABLE IF NOT EXISTS s.fresh USING DELTA AS SELECT 9 AS k");
    expect(await latestVersion("s.fresh")).toBe(version);
    expect(await rowsOf("s.fresh", "k")).toEqual([[2]]);
  });
});

describe("INSERT OVERWRITE", () => {
  beforeAll(async () => {
    await ok(`CREATE TABLE s.sales (id INT, amount DECIMAL(6,2), day DATE) USING DELTA
              PARTITIONED BY (day)`);
    await ok(`INSERT INTO s.sales VALUES
              (1, 1.00, DATE'2026-10-01'), (2, 2.00, DATE'2026-10-01'),
              (3, 3.00, DATE'2026-10-02'), (4, 4.00, DATE'2026-10-03')`);
  });

  it("overwrites one partition given by a static PARTITION value (recorded as a predicate)", async () => {
    const res = await ok(
      "INSERT OVERWRITE s.sales PARTITION (day = DATE'2026-10-01') SELECT 10, 10.50",
    );
    expect(await rowsOf("s.sales", "id")).toEqual([
      [3, "3.00", "2026-10-02"],
      [4, "4.00", "2026-10-03"],
      [10, "10.50", "2026-10-01"],
    ]);
    const [last] = await historyOf("s.sales");
    expect(last.version).toBe(res.version);
    expect(last.parameters).toEqual({
      mode: "Overwrite",
      partitionBy: '["day"]',
      predicate: "(day = DATE '2026-10-01')",
    });
  });

  it("appends into a static partition, converting the value to the column's type", async () => {
    await ok("INSERT INTO s.sales PARTITION (day = '2026-10-05') VALUES (11, 11.00)");
    expect((await ok("SELECT id, day FROM s.sales WHERE id = 11")).rows).toEqual([
      [11, "2026-10-05"],
    ]);
  });

  it("refuses a PARTITION clause naming a data column", async () => {
    const body = await failsUnchanged("s.sales", "id", () =>
      sql("INSERT OVERWRITE s.sales PARTITION (id = 1) SELECT 1.00, DATE'2026-10-01'"),
    );
    expect(body.error_class).toBe("NON_PARTITION_COLUMN");
  });

  it("with the dynamic mode replaces only the partitions written to", async () => {
    await ok(
      `INSERT OVERWRITE s.sales VALUES (20, 20.00, DATE'2026-10-02'), (21, 21.00, DATE'2026-10-09')`,
      { "spark.sql.sources.partitionOverwriteMode": "DYNAMIC" },
    );
    expect((await ok("SELECT id, day FROM s.sales ORDER BY id")).rows).toEqual([
      [4, "2026-10-03"],
      [10, "2026-10-01"],
      [11, "2026-10-05"],
      [20, "2026-10-02"],
      [21, "2026-10-09"],
    ]);
    const [last] = await historyOf("s.sales");
    expect(last.parameters.isDynamicPartitionOverwrite).toBe("true");
    expect(last.metrics).toMatchObject({ numFiles: "2", numOutputRows: "2", numRemovedFiles: "1" });
  });

  it("reads the table it overwrites at the version it replaces", async () => {
    await ok("INSERT OVERWRITE TABLE s.sales SELECT id + 100, amount, day FROM s.sales");
    expect((await ok("SELECT id FROM s.sales ORDER BY id")).rows).toEqual([
      [104],
      [110],
      [111],
      [120],
      [121],
    ]);
  });

  it("ignores the dynamic mode on an unpartitioned table (a full overwrite, as Spark)", async () => {
    await ok("CREATE TABLE s.flat (k INT, v STRING) USING DELTA");
    await ok("INSERT INTO s.flat VALUES (1, 'a'), (2, 'b')");
    await ok("INSERT OVERWRITE s.flat VALUES (3, 'c')", {
      "spark.sql.sources.partitionOverwriteMode": "dynamic",
    });
    expect(await rowsOf("s.flat", "k")).toEqual([[3, "c"]]);
    expect((await historyOf("s.flat"))[0].parameters).toEqual({
      mode: "Overwrite",
      partitionBy: "[]",
      isDynamicPartitionOverwrite: "true",
    });
  });

  it("fails on too many values with Spark's class, changing nothing", async () => {
    const body = await failsUnchanged("s.flat", "k", () =>
      sql("INSERT OVERWRITE s.flat VALUES (1, 'a', 'extra')"),
    );
    expect(body.error_class).toBe("INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS");
  });
});

describe("REPLACE WHERE", () => {
  beforeAll(async () => {
    await ok("CREATE TABLE s.events (id INT, kind STRING) USING DELTA");
    await ok("INSERT INTO s.events VALUES (1, 'a'), (2, 'b'), (3, 'a'), (4, 'c')");
  });

  it("replaces rows by a data-column condition with a deletion vector", async () => {
    await ok("INSERT INTO s.events REPLACE WHERE kind = 'a' VALUES (5, 'a')");
    expect(await rowsOf("s.events", "id")).toEqual([
      [2, "b"],
      [4, "c"],
      [5, "a"],
    ]);
    const d = await detailOf("s.events");
    expect(d.statistics.numDeletionVectors).toBe(1);
    expect(d.statistics.numRowsDeletedByDeletionVectors).toBe(2);
    const [last] = await historyOf("s.events");
    expect(last.parameters.predicate).toBe("(kind = 'a')");
    expect(last.metrics).toMatchObject({ numDeletedRows: "2", numRemovedFiles: "0" });
  });

  it("ignores a session-wide dynamic mode: the condition decides (as Spark)", async () => {
    await ok("INSERT INTO s.events REPLACE WHERE id >= 5 SELECT 6, 'd'", {
      "spark.sql.sources.partitionOverwriteMode": "dynamic",
    });
    expect(await rowsOf("s.events", "id")).toEqual([
      [2, "b"],
      [4, "c"],
      [6, "d"],
    ]);
  });

  it("refuses the dynamic mode as a write option of the JSON route", async () => {
    const body = await failsUnchanged("s.events", "id", () =>
      silt.call("POST", "/api/v1/tables/rt.s.events/replace-where", {
        predicate: "id = 2",
        rows: [[2, "z"]],
        dynamicPartitionOverwrite: true,
      }),
    );
    expect(body.error_class).toBe("DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE");
  });

  it("treats a row for which the condition is NULL as outside it", async () => {
    const body = await failsUnchanged("s.events", "id", () =>
      sql("INSERT INTO s.events REPLACE WHERE kind = 'b' VALUES (7, NULL)"),
    );
    expect(body.error_class).toBe("DELTA_REPLACE_WHERE_MISMATCH");
  });

  it("deletes the matching rows when the new rows are none", async () => {
    await ok("INSERT INTO s.events REPLACE WHERE kind = 'c' SELECT * FROM s.events WHERE id < 0");
    expect(await rowsOf("s.events", "id")).toEqual([
      [2, "b"],
      [6, "d"],
    ]);
  });

  it("works as a JSON route, recording the predicate as given", async () => {
    const res = await silt.call("POST", "/api/v1/tables/rt.s.events/replace-where", {
      predicate: "kind = 'b'",
      rows: [{ id: 8, kind: "b" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ committed: true, metrics: { numDeletedRows: 1 } });
    expect(await rowsOf("s.events", "id")).toEqual([
      [6, "d"],
      [8, "b"],
    ]);
    expect((await historyOf("s.events"))[0].parameters.predicate).toBe("kind = 'b'");
  });
});

describe("REPLACE USING / REPLACE ON", () => {
  describe("seed 004: daily sales, late data for days 9 and 10, then 10 and 11", () => {
    beforeAll(async () => {
      await ok(`CREATE TABLE s.history_store_sales (date DATE, item STRING, quantity INT)
                USING DELTA PARTITIONED BY (date)`);
      await ok(`INSERT INTO s.history_store_sales VALUES
                (DATE'2025-06-08', 'spoon', 3),
                (DATE'2025-06-09', 'spoon', 4),
                (DATE'2025-06-10', 'fork', 2)`);
      await ok(`CREATE TABLE s.latest_updated_sales (date DATE, item STRING, quantity INT)
                USING DELTA`);
    });
    const refresh =
      "INSERT INTO s.history_store_sales REPLACE USING (date) SELECT * FROM s.latest_updated_sales";

    it("replaces days 9 and 10 with the late data, leaving day 8", async () => {
      await ok(`INSERT OVERWRITE s.latest_updated_sales VALUES
                (DATE'2025-06-09', 'spoon', 5),
                (DATE'2025-06-10', 'fork', 3),
                (DATE'2025-06-10', 'knife', 4)`);
      await ok(refresh);
      expect(await rowsOf("s.history_store_sales", "date, item")).toEqual([
        ["2025-06-08", "spoon", 3],
        ["2025-06-09", "spoon", 5],
        ["2025-06-10", "fork", 3],
        ["2025-06-10", "knife", 4],
      ]);
      const [last] = await historyOf("s.history_store_sales");
      expect(last.operation).toBe("WRITE");
      expect(last.parameters).toEqual({
        mode: "Overwrite",
        partitionBy: '["date"]',
        replaceUsingCols: "(date)",
      });
      // Whole partitions: the old day-9 and day-10 files are removed, not rewritten.
      expect(last.metrics).toMatchObject({
        numRemovedFiles: "2",
        numDeletedRows: "2",
        numOutputRows: "3",
      });
    });

    it("then replaces all of day 10 (even the fork no new row names) and adds day 11", async () => {
      await ok(`INSERT OVERWRITE s.latest_updated_sales VALUES
                (DATE'2025-06-10', 'knife', 2),
                (DATE'2025-06-10', 'spork', 2),
                (DATE'2025-06-11', 'scoop', 6)`);
      await ok(refresh);
      expect(await rowsOf("s.history_store_sales", "date, item")).toEqual([
        ["2025-06-08", "spoon", 3],
        ["2025-06-09", "spoon", 5],
        ["2025-06-10", "knife", 2],
        ["2025-06-10", "spork", 2],
        ["2025-06-11", "scoop", 6],
      ]);
    });

    it("does the same with REPLACE ON, aliases on both sides", async () => {
      await ok(`INSERT INTO s.history_store_sales h REPLACE ON h.date <=> l.date
                (SELECT * FROM s.latest_updated_sales WHERE date = DATE'2025-06-11') l`);
      expect((await ok("SELECT count(*) FROM s.history_store_sales")).rows).toEqual([[5]]);
      expect((await historyOf("s.history_store_sales"))[0].parameters.replaceOnCond).toBe(
        "(h.date <=> l.date)",
      );
    });
  });

  describe("NULL keys, empty sources, keys that are not partition columns", () => {
    beforeEach0();

    it("USING: NULL never matches, on either side", async () => {
      await ok(
        "INSERT INTO s.kv REPLACE USING (k) SELECT * FROM VALUES (1, 'a2'), (NULL, 'n2') AS s(k, v)",
      );
      expect(await rowsOf("s.kv", "k NULLS FIRST, v")).toEqual([
        [null, "n1"],
        [null, "n2"],
        [1, "a2"],
        [2, "b"],
        [3, "c"],
      ]);
    });

    it("ON with <=>: NULL keys match each other", async () => {
      await ok(`INSERT INTO s.kv t REPLACE ON t.k <=> s.k
                (SELECT * FROM VALUES (NULL, 'n3') AS v(k, v)) s`);
      expect(await rowsOf("s.kv", "k NULLS FIRST, v")).toEqual([
        [null, "n3"],
        [1, "a2"],
        [2, "b"],
        [3, "c"],
      ]);
    });

    it("ON with any condition: a range, on a data column", async () => {
      await ok(`INSERT INTO s.kv t REPLACE ON t.k >= s.lo
                (SELECT 2 AS lo, 'x' AS v) s`);
      expect(await rowsOf("s.kv", "k NULLS FIRST, v")).toEqual([
        [null, "n3"],
        [1, "a2"],
        [2, "x"],
      ]);
    });

    it("an empty source deletes nothing and commits nothing", async () => {
      const version = await latestVersion("s.kv");
      const rows = await rowsOf("s.kv", "k NULLS FIRST, v");
      await ok("INSERT INTO s.kv REPLACE USING (k) SELECT * FROM s.kv WHERE k > 100");
      await ok("INSERT INTO s.kv t REPLACE ON t.k = s.k (SELECT * FROM s.kv WHERE k > 100) s");
      expect(await latestVersion("s.kv")).toBe(version);
      expect(await rowsOf("s.kv", "k NULLS FIRST, v")).toEqual(rows);
    });

    it("matches on several columns, by name", async () => {
      await ok("CREATE TABLE s.multi (a INT, b STRING, c INT) USING DELTA");
      await ok("INSERT INTO s.multi VALUES (1, 'x', 10), (1, 'y', 11), (2, 'x', 12)");
      await ok(`INSERT INTO s.multi BY NAME REPLACE USING (b, a)
                SELECT 99 AS c, 'x' AS b, 1 AS a`);
      expect(await rowsOf("s.multi", "a, b")).toEqual([
        [1, "x", 99],
        [1, "y", 11],
        [2, "x", 12],
      ]);
    });

    it("works through the JSON route with columns or a condition", async () => {
      const using = await silt.call("POST", "/api/v1/tables/rt.s.kv/replace-using", {
        columns: ["k"],
        rows: [{ k: 1, v: "json" }],
      });
      expect(using.status, JSON.stringify(using.body)).toBe(200);
      const on = await silt.call("POST", "/api/v1/tables/rt.s.kv/replace-using", {
        on: "t.k <=> s.k",
        rows: [[null, "json-null"]],
      });
      expect(on.status, JSON.stringify(on.body)).toBe(200);
      expect(on.body.metrics).toMatchObject({ numDeletedRows: 1, numOutputRows: 1 });
      expect(await rowsOf("s.kv", "k NULLS FIRST, v")).toEqual([
        [null, "json-null"],
        [1, "json"],
        [2, "x"],
      ]);
      expect((await historyOf("s.kv"))[0].parameters.replaceOnCond).toBe("t.k <=> s.k");
    });
  });

  describe("errors", () => {
    beforeAll(async () => {
      await ok("CREATE TABLE s.err (k INT, v STRING, p STRING) USING DELTA PARTITIONED BY (p)");
      await ok("INSERT INTO s.err VALUES (1, 'a', 'x'), (2, 'b', 'y')");
    });
    const cases: [string, () => Promise<ApiResponse>, string][] = [
      [
        "USING column missing from the table",
        () => sql("INSERT INTO s.err REPLACE USING (nope) VALUES (1, 'a', 'x')"),
        "UNRESOLVED_INSERT_REPLACE_USING_COLUMN",
      ],
      [
        // A bare VALUES list names its columns col1, col2, …: name them to match on them.
        "USING column not named by a bare VALUES list",
        () => sql("INSERT INTO s.err REPLACE USING (k) VALUES (1, 'a', 'x')"),
        "UNRESOLVED_INSERT_REPLACE_USING_COLUMN",
      ],
      [
        "USING column missing from the query",
        () => sql("INSERT INTO s.err REPLACE USING (k) SELECT 1 AS kk, 'a' AS v, 'x' AS p"),
        "UNRESOLVED_INSERT_REPLACE_USING_COLUMN",
      ],
      [
        "USING column at another position in the query",
        () => sql("INSERT INTO s.err REPLACE USING (k) SELECT 'a' AS v, 1 AS k, 'x' AS p"),
        "INSERT_REPLACE_USING_DISALLOW_MISALIGNED_COLUMNS",
      ],
      [
        "ON column on both sides",
        () =>
          sql(
            "INSERT INTO s.err REPLACE ON k = k SELECT * FROM VALUES (1, 'a', 'x') AS s(k, v, p)",
          ),
        "DELTA_INSERT_REPLACE_ON_AMBIGUOUS_COLUMNS_IN_CONDITION",
      ],
      [
        "ON column on neither side",
        () =>
          sql("INSERT INTO s.err t REPLACE ON t.k = s.nope (SELECT 1 AS k, 'a' AS v, 'x' AS p) s"),
        "DELTA_INSERT_REPLACE_ON_UNRESOLVED_COLUMNS_IN_CONDITION",
      ],
      [
        "REPLACE USING with a replaceWhere write option",
        () =>
          silt.call("POST", "/api/v1/tables/rt.s.err/replace-using", {
            columns: ["k"],
            predicate: "k = 1",
            rows: [[1, "z", "x"]],
          }),
        "DELTA_OVERWRITE_BY_FILTER_INCOMPATIBLE_REPLACE_ON_OR_USING",
      ],
      [
        "REPLACE ON with a dynamic partition overwrite write option",
        () =>
          silt.call("POST", "/api/v1/tables/rt.s.err/replace-using", {
            on: "t.p = s.p",
            dynamicPartitionOverwrite: true,
            rows: [[1, "z", "x"]],
          }),
        "DELTA_DYNAMIC_PARTITION_OVERWRITE_INCOMPATIBLE_REPLACE_ON_OR_USING",
      ],
      [
        "USING and ON together",
        () =>
          silt.call("POST", "/api/v1/tables/rt.s.err/replace-using", {
            columns: ["k"],
            on: "t.k = s.k",
            rows: [[1, "z", "x"]],
          }),
        "DELTA_INCOMPATIBLE_DATAFRAME_OPTIONS",
      ],
    ];
    for (const [what, run, errorClass] of cases) {
      it(`${what}: ${errorClass}, nothing changes`, async () => {
        const body = await failsUnchanged("s.err", "k", run);
        expect(body.error_class).toBe(errorClass);
      });
    }
  });
});

describe("JSON routes: overwrite and create modes", () => {
  it("creates a table from rows, replaces it from a query, then overwrites it", async () => {
    const created = await silt.call("POST", "/api/v1/tables", {
      name: "rt.s.api",
      columns: [
        { name: "id", type: "INT" },
        { name: "day", type: "DATE" },
      ],
      partitionedBy: ["day"],
      rows: [
        [1, "2026-10-01"],
        [2, "2026-10-02"],
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ created: true, version: 0 });
    expect((await historyOf("s.api"))[0].operation).toBe("CREATE TABLE AS SELECT");

    const replaced = await silt.call("POST", "/api/v1/tables", {
      name: "api",
      catalog: "rt",
      schema: "s",
      mode: "createOrReplace",
      partitionedBy: ["day"],
      query: "SELECT id * 10 AS id, day, 'new' AS tag FROM rt.s.api",
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ replaced: true, version: 1 });
    expect(replaced.body.tableId).toBe(created.body.tableId);
    expect(await rowsOf("s.api", "id")).toEqual([
      [10, "2026-10-01", "new"],
      [20, "2026-10-02", "new"],
    ]);

    const dynamic = await silt.call("POST", "/api/v1/tables/rt.s.api/overwrite", {
      rows: [{ id: 30, day: "2026-10-02", tag: "late" }],
      dynamicPartitionOverwrite: true,
    });
    expect(dynamic.status, JSON.stringify(dynamic.body)).toBe(200);
    expect(dynamic.body).toMatchObject({
      version: 2,
      committed: true,
      metrics: { numRemovedFiles: 1, numOutputRows: 1 },
    });
    expect(await rowsOf("s.api", "id")).toEqual([
      [10, "2026-10-01", "new"],
      [30, "2026-10-02", "late"],
    ]);

    // Arrow IPC body: the whole table.
    const table = arrow.tableFromArrays({
      id: Int32Array.from([40]),
      day: ["2026-10-04"],
      tag: ["arrow"],
    });
    const full = await silt.call(
      "POST",
      "/api/v1/tables/rt.s.api/overwrite",
      arrow.tableToIPC(table, "stream"),
      { "content-type": "application/vnd.apache.arrow.stream" },
    );
    expect(full.status, JSON.stringify(full.body)).toBe(200);
    expect(await rowsOf("s.api", "id")).toEqual([[40, "2026-10-04", "arrow"]]);

    const missing = await silt.call("POST", "/api/v1/tables", {
      name: "rt.s.nothere",
      mode: "replace",
      columns: [{ name: "id", type: "INT" }],
    });
    expect(missing.status).toBe(404);
  });
});

/** A small unpartitioned key/value table with a NULL key, shared by the NULL-key tests. */
function beforeEach0() {
  beforeAll(async () => {
    await ok("CREATE TABLE s.kv (k INT, v STRING) USING DELTA");
    await ok("INSERT INTO s.kv VALUES (1, 'a'), (2, 'b'), (3, 'c'), (NULL, 'n1')");
  });
}
