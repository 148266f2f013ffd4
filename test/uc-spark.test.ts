/**
 * Seeds 002 and 000 through real Spark 4.1 + delta-spark 4.3.1 + the UC connector against Silt's
 * UC API, in both of the connector's modes: S (the UC Delta API, the seeds' default) and SL
 * (`deltaRestApi.enabled=false`, the legacy API). One JVM serves the file: SL runs in a
 * newSession() of the S session with the catalog setting changed. Afterwards Silt's own
 * /api/v1 reads what Spark wrote. First run: installs the clients (test/helpers/uc-clients.ts)
 * and downloads ~170 MB of jars into the Ivy cache.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientSession, ensureUcClients, startClient, tail } from "./helpers/uc-clients.ts";
import { startUcTestServer, type UcTestServer } from "./helpers/uc-server.ts";

const SEED_002_REFUSAL =
  "Cannot create table inventory.stock.returns: catalog requires table property " +
  "'delta.enableDeletionVectors'='true' but the caller supplied " +
  "'delta.enableDeletionVectors'='false'. Remove the conflicting TBLPROPERTIES entry and retry.";

interface StepsResult {
  ok: boolean;
  steps: Record<string, unknown>;
  failed_step?: string;
  error?: string;
  ms: number;
  session_start_ms: number | null;
}

let server: UcTestServer;
let spark: ClientSession;

beforeAll(async () => {
  await ensureUcClients();
  server = await startUcTestServer();
  await server.createSchemas("inventory.stock", "replace_demo.sales");
  spark = await startClient("spark_session.py", [
    "--uri",
    server.url,
    "--catalog",
    "inventory",
    "--catalog",
    "replace_demo",
  ]);
}, 20 * 60_000);

afterAll(async () => {
  await spark?.close();
  await server?.close();
});

/** Runs a request in the Spark session and fails with the client's error, requests and log. */
async function call(request: Record<string, unknown>): Promise<StepsResult> {
  const before = server.requests.length;
  const result = await spark.call<StepsResult>(request, 15 * 60_000);
  if (!result.ok) {
    const trace = server.requests
      .slice(before)
      .map((r) => `${r.method} ${r.url} -> ${r.status} ${r.response.slice(0, 300)}`)
      .join("\n");
    throw new Error(
      `${JSON.stringify(request)} failed at ${result.failed_step}: ${result.error}\n` +
        `--- requests:\n${trace}\n--- Spark stderr:\n${tail(spark.stderr(), 40)}`,
    );
  }
  return result;
}

const ids = (rows: unknown) => (rows as unknown[][]).map((r) => Number(r[0]));

describe.each(["S", "SL"])("seed 002 through Spark, mode %s", (mode) => {
  let run: StepsResult;

  it(
    "creates, writes, reads, time-travels and lists the history of inventory.stock.items",
    async () => {
      run = await call({ run: "spark_seed_002", fn: "run", mode });
      const s = run.steps;
      const detail = s.detail as Record<string, unknown>;
      expect(detail.minReaderVersion).toBe(3);
      expect(detail.minWriterVersion).toBe(7);
      expect(detail.tableFeatures).toEqual(
        expect.arrayContaining([
          "catalogManaged",
          "deletionVectors",
          "inCommitTimestamp",
          "v2Checkpoint",
          "vacuumProtocolCheck",
        ]),
      );
      expect(s.select).toEqual([
        ["apple", 10],
        ["pear", 9],
      ]);
      expect(s.version_1).toEqual([
        ["apple", 10],
        ["pear", 4],
        ["plum", 0],
      ]);
      expect(s.history).toEqual([
        [0, "CREATE TABLE"],
        [1, "WRITE"],
        [2, "UPDATE"],
        [3, "DELETE"],
      ]);
    },
    15 * 60_000,
  );

  it("refuses the CREATE that turns deletion vectors off, with the seed's text", () => {
    const refusal = run.steps.create_without_dvs as { refused: boolean; error?: string };
    expect(refusal.refused).toBe(true);
    expect(refusal.error).toContain(SEED_002_REFUSAL);
  });

  it("reads the same rows and history through Silt's own API", async () => {
    const now = await server.rows("inventory.stock.items");
    expect(now.version).toBe(3);
    expect(sortRows(now.rows)).toEqual([
      ["apple", 10],
      ["pear", 9],
    ]);
    const v1 = await server.rows("inventory.stock.items", 1);
    expect(sortRows(v1.rows)).toEqual([
      ["apple", 10],
      ["pear", 4],
      ["plum", 0],
    ]);
    expect(await server.history("inventory.stock.items")).toEqual(run.steps.history);
    const returns = await server.api("GET", "/api/v1/tables/inventory.stock.returns/detail");
    expect(returns.status).toBe(404);
  });

  it(
    "drops the table",
    async () => {
      const dropped = await call({ run: "spark_seed_002", fn: "drop", mode });
      expect(dropped.steps.tables_after).not.toContain("items");
      const detail = await server.api("GET", "/api/v1/tables/inventory.stock.items/detail");
      expect(detail.status).toBe(404);
    },
    5 * 60_000,
  );
});

describe.each(["S", "SL"])("seed 000 through Spark, mode %s", (mode) => {
  let run: StepsResult;

  it(
    "replaces and overwrites replace_demo.sales.orders as the seed shows",
    async () => {
      run = await call({ run: "spark_seed_000", fn: "run", mode });
      const s = run.steps;
      expect(ids(s.after_ctas)).toEqual([1, 2, 3]);
      const replaced = s.after_create_or_replace as unknown[][];
      expect(replaced.map((r) => [Number(r[0]), Number(r[4])])).toEqual([
        [1, 1.9],
        [2, 4],
        [3, 0.65],
      ]);
      expect(ids(s.after_insert_overwrite)).toEqual([4, 5, 6]);
      expect(ids(s.after_replace_where)).toEqual([6, 7]);
      expect(ids(s.after_dynamic_overwrite)).toEqual([7, 8]);
      expect(s.history).toEqual([
        [0, "CREATE TABLE AS SELECT"],
        [1, "CREATE OR REPLACE TABLE AS SELECT"],
        [2, "WRITE"],
        [3, "WRITE"],
        [4, "WRITE"],
      ]);
      expect(s.version_3).toEqual([
        [6, "2026-10-04"],
        [7, "2026-10-03"],
      ]);
      expect(ids(s.after_restore)).toEqual([6, 7]);
      expect((s.history_after_restore as unknown[][]).at(-1)).toEqual([5, "RESTORE"]);
    },
    15 * 60_000,
  );

  it("fails the two-value overwrite with DELTA_INSERT_COLUMN_ARITY_MISMATCH", () => {
    const refusal = run.steps.arity_error as { refused: boolean; error?: string };
    expect(refusal.refused).toBe(true);
    expect(refusal.error).toContain("DELTA_INSERT_COLUMN_ARITY_MISMATCH");
    expect(refusal.error).toContain(
      "target table has 5 column(s) but the inserted data has 2 column(s)",
    );
  });

  it("reads the same rows and history through Silt's own API", async () => {
    const now = await server.rows("replace_demo.sales.orders");
    expect(now.version).toBe(5);
    expect(now.columns.map((c) => c.name)).toEqual([
      "order_id",
      "customer",
      "amount",
      "day",
      "tax",
    ]);
    expect(sortRows(now.rows).map((r) => Number(r[0]))).toEqual([6, 7]);
    const v4 = await server.rows("replace_demo.sales.orders", 4);
    expect(sortRows(v4.rows).map((r) => Number(r[0]))).toEqual([7, 8]);
    const v0 = await server.rows("replace_demo.sales.orders", 0);
    expect(v0.columns.map((c) => c.name)).toEqual(["order_id", "customer", "amount", "day"]);
    expect(await server.history("replace_demo.sales.orders")).toEqual(
      run.steps.history_after_restore,
    );
  });

  it(
    "drops the table for the next mode",
    async () => {
      const dropped = await call({ sql: "DROP TABLE replace_demo.sales.orders", mode });
      expect(dropped.ok).toBe(true);
    },
    5 * 60_000,
  );
});

function sortRows(rows: unknown[][]): unknown[][] {
  return [...rows].sort((a, b) =>
    String(a[0]).localeCompare(String(b[0]), "en", { numeric: true }),
  );
}
