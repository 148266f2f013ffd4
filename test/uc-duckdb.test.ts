/**
 * Seed 002's DuckDB part through real DuckDB 1.5.5 with its unity_catalog, delta and httpfs
 * extensions against Silt's UC API: attach, read, insert, detach, re-attach, insert again. The
 * tables are made through Silt's own /api/v1 first: `items` as Spark leaves it in the seed
 * (apple 10, pear 9) and `restock` with 'delta.columnMapping.mode'='none', since DuckDB 1.5.5
 * writes logical column names (shared/reference/unity-catalog-api.md, hazard 1). Afterwards
 * Silt's own API reads what DuckDB wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientResult, ensureUcClients, runClient } from "./helpers/uc-clients.ts";
import { startUcTestServer, type UcTestServer } from "./helpers/uc-server.ts";

const COLUMNS = [
  { name: "sku", type: "STRING" },
  { name: "qty", type: "INT" },
];

let server: UcTestServer;

beforeAll(async () => {
  await ensureUcClients();
  server = await startUcTestServer();
  await server.createSchemas("inventory.stock");
  const items = await server.api("POST", "/api/v1/tables", {
    name: "inventory.stock.items",
    columns: COLUMNS,
  });
  expect(items.status).toBe(201);
  const rows = await server.api("POST", "/api/v1/tables/inventory.stock.items/insert", {
    rows: [
      { sku: "apple", qty: 10 },
      { sku: "pear", qty: 9 },
    ],
  });
  expect(rows.status).toBe(200);
  const restock = await server.api("POST", "/api/v1/tables", {
    name: "inventory.stock.restock",
    columns: COLUMNS,
    properties: { "delta.columnMapping.mode": "none" },
  });
  expect(restock.status).toBe(201);
}, 20 * 60_000);

afterAll(async () => {
  await server?.close();
});

function explain(r: ClientResult): string {
  return `exit ${r.code}\n${r.stdout}\n--- requests:\n${server.trace()}\n--- stderr:\n${r.stderr}`;
}

describe("seed 002 through DuckDB", () => {
  let run: ClientResult;
  let steps: Record<string, unknown>;

  it(
    "loads the extensions, attaches, reads items, inserts into restock twice",
    async () => {
      run = await runClient(
        "duckdb_seed_002.py",
        ["--uri", server.url, "--table", "restock", "--read-table", "items"],
        { timeoutMs: 5 * 60_000 },
      );
      expect(run.code, explain(run)).toBe(0);
      steps = (run.json as { steps: Record<string, unknown> }).steps;
      expect((steps.load as { loaded: string[] }).loaded).toEqual(
        expect.arrayContaining(["httpfs", "delta", "unity_catalog"]),
      );
      expect(steps.select).toEqual([
        ["apple", 10],
        ["pear", 9],
      ]);
      expect(steps.rows_after).toEqual([
        ["fig", 7],
        ["lime", 3],
      ]);
    },
    5 * 60_000,
  );

  it("commits each insert as one version that Silt's own API reads", async () => {
    const now = await server.rows("inventory.stock.restock");
    expect(now.version).toBe(2);
    expect([...now.rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ["fig", 7],
      ["lime", 3],
    ]);
    const v1 = await server.rows("inventory.stock.restock", 1);
    expect(v1.rows).toEqual([["fig", 7]]);
    const history = await server.history("inventory.stock.restock");
    expect(history.map(([v]) => v)).toEqual([0, 1, 2]);
    // DuckDB wrote nothing to items: Silt still reads its two rows at version 1.
    const items = await server.rows("inventory.stock.items");
    expect(items.version).toBe(1);
  });

  it("is refused when it writes logical column names into a column-mapped table", async () => {
    const refused = await runClient(
      "duckdb_seed_002.py",
      ["--uri", server.url, "--table", "items"],
      { timeoutMs: 5 * 60_000 },
    );
    const out = refused.json as { ok: boolean; failed_step: string; error: string };
    expect(out.ok, explain(refused)).toBe(false);
    expect(out.failed_step).toBe("insert_fig");
    expect(out.error).toContain("HTTP 400");
    expect(out.error).toContain("must name columns by their physical names");
    const items = await server.rows("inventory.stock.items");
    expect(items.version).toBe(1);
    expect(items.rows).toHaveLength(2);
  });

  it("sent its commits through the UC Delta API", () => {
    const commits = server.requests.filter(
      (r) =>
        r.method === "POST" &&
        r.url.endsWith(
          "/api/2.1/unity-catalog/delta/v1/catalogs/inventory/schemas/stock/tables/restock",
        ),
    );
    expect(commits.map((r) => r.status)).toEqual([200, 200]);
    const refusedCommits = server.requests.filter(
      (r) =>
        r.method === "POST" &&
        r.url.endsWith(
          "/api/2.1/unity-catalog/delta/v1/catalogs/inventory/schemas/stock/tables/items",
        ),
    );
    expect(refusedCommits.map((r) => r.status)).toEqual([400]);
  });
});
