/**
 * Two writers on one table through Silt's UC API, where one arbiter ratifies every version
 * whichever engine wrote it (shared/reference/unity-catalog-api.md, sections 2 and 3).
 *
 * DuckDB vs DuckDB: two independent DuckDB 1.5.5 databases (test/clients/duckdb_session.py) each
 * BEGIN and INSERT into the same table, so both stage version 1; the first COMMIT wins and the
 * second is refused with HTTP 409. DuckDB neither retries nor reloads: its attachment keeps the
 * table as it loaded it, so even a new transaction in the same attachment is refused again, and
 * only a fresh ATTACH (a reload) lets the loser commit.
 *
 * Spark vs Silt: one Spark session (test/clients/spark_session.py, mode S, the UC Delta API) and
 * Silt's own writers append to a table Spark created. Two races are forced: the recording proxy
 * holds Spark's commit while Silt's API commits the same version (Spark gets 409, reloads and
 * retries at the next version), and a store hook pauses Silt's append after it read the table
 * while Spark commits (Silt rebases its blind append). Then both write freely in parallel. The
 * assertions hold for any interleaving: every acknowledged insert is present exactly once, the
 * versions are 0..n with one commit each, each commit carries its writer's engineInfo, and Spark,
 * Silt's API and `silt read` all read the same rows.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendRows } from "../lib/ops/append.ts";
import { hookedStore } from "./helpers/store-hooks.ts";
import { type ClientSession, ensureUcClients, startClient, tail } from "./helpers/uc-clients.ts";
import { startUcTestServer, type UcTestServer } from "./helpers/uc-server.ts";

const runFile = promisify(execFile);
const SILT_BIN = join(import.meta.dirname, "..", "bin", "silt.mjs");
const UC = "/api/2.1/unity-catalog";
const DELTA_TABLES = `${UC}/delta/v1/catalogs/inventory/schemas/stock/tables`;

let server: UcTestServer;
let duck: ClientSession;
let spark: ClientSession;
/** Spark's first statement, sent early so the JVM starts while the DuckDB race runs. */
let sparkCreated: Promise<SparkAnswer>;

interface DuckAnswer {
  ok: boolean;
  rows?: unknown[][];
  error_type?: string;
  error?: string;
}

interface SparkAnswer {
  ok: boolean;
  rows?: unknown[][];
  failed_step?: string;
  error?: string;
}

beforeAll(async () => {
  await ensureUcClients();
  server = await startUcTestServer();
  await server.createSchemas("inventory.stock");
  spark = await startClient("spark_session.py", ["--uri", server.url, "--catalog", "inventory"]);
  sparkCreated = spark.call<SparkAnswer>(
    { sql: "CREATE TABLE inventory.stock.mixed (id INT, src STRING) USING delta", mode: "S" },
    5 * 60_000,
  );
  sparkCreated.catch(() => {}); // awaited (and reported) by the Spark tests
  duck = await startClient("duckdb_session.py", ["--uri", server.url]);
}, 20 * 60_000);

afterAll(async () => {
  await duck?.close();
  await spark?.close();
  await server?.close();
});

/** The requests of the last `since` onwards, with their answers, for failure messages. */
function traceSince(since: number): string {
  return server.requests
    .slice(since)
    .map(
      (r) =>
        `${r.method} ${r.url} -> ${r.status} ${r.body.slice(0, 300)} => ${r.response.slice(0, 300)}`,
    )
    .join("\n");
}

async function sql(conn: string, statement: string): Promise<DuckAnswer> {
  return duck.call<DuckAnswer>({ conn, sql: statement }, 2 * 60_000);
}

/** A DuckDB statement that must succeed. */
async function duckOk(conn: string, statement: string): Promise<unknown[][]> {
  const before = server.requests.length;
  const a = await sql(conn, statement);
  if (!a.ok) {
    throw new Error(
      `${conn}: ${statement} failed: ${a.error_type}: ${a.error}\n--- requests:\n` +
        `${traceSince(before)}\n--- stderr:\n${tail(duck.stderr(), 30)}`,
    );
  }
  return a.rows ?? [];
}

async function duckOpen(conn: string): Promise<void> {
  const a = await duck.call<DuckAnswer>({ conn, open: true }, 2 * 60_000);
  expect(a.ok, `${a.error_type}: ${a.error}\n${tail(duck.stderr(), 30)}`).toBe(true);
}

/** A Spark statement that must succeed. */
async function sparkSql(statement: string): Promise<unknown[][]> {
  const before = server.requests.length;
  const a = await spark.call<SparkAnswer>({ sql: statement, mode: "S" }, 5 * 60_000);
  return sparkRows(a, statement, before);
}

function sparkRows(a: SparkAnswer, statement: string, before = 0): unknown[][] {
  if (!a.ok) {
    throw new Error(
      `Spark: ${statement} failed at ${a.failed_step}: ${a.error}\n--- requests:\n` +
        `${traceSince(before)}\n--- Spark stderr:\n${tail(spark.stderr(), 40)}`,
    );
  }
  return a.rows ?? [];
}

/** The commits a client sent for `table` through the UC Delta API: [version, status]. */
function deltaCommits(table: string, since = 0): Array<[number, number]> {
  return server.requests
    .slice(since)
    .filter((r) => r.method === "POST" && r.url === `${DELTA_TABLES}/${table}`)
    .map((r) => {
      const body = JSON.parse(r.body) as {
        updates: Array<{ action: string; commit?: { version: number } }>;
      };
      const add = body.updates.find((u) => u.action === "add-commit");
      return [add?.commit?.version ?? -1, r.status] as [number, number];
    });
}

interface HistoryRow {
  version: number;
  operation: string;
  engineInfo: string | null;
}

async function history(table: string): Promise<HistoryRow[]> {
  const { status, body } = await server.api<{
    columns: Array<{ name: string }>;
    rows: unknown[][];
  }>("GET", `/api/v1/tables/${table}/history`);
  expect(status, JSON.stringify(body)).toBe(200);
  const col = (n: string) => body.columns.findIndex((c) => c.name === n);
  return body.rows
    .map((r) => ({
      version: r[col("version")] as number,
      operation: r[col("operation")] as string,
      engineInfo: r[col("engineInfo")] as string | null,
    }))
    .sort((a, b) => a.version - b.version);
}

/** One commit per version, 0..last, no gaps and no repeats. */
function expectContiguous(h: HistoryRow[], last: number): void {
  expect(h.map((r) => r.version)).toEqual(Array.from({ length: last + 1 }, (_, i) => i));
}

/** The table's directory, from the UC TableInfo's `storage_location` (a file:// URL). */
async function tableDir(full: string): Promise<string> {
  const { status, body } = await server.api<{ storage_location: string }>(
    "GET",
    `${UC}/tables/${full}`,
  );
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.storage_location).toMatch(/^file:/);
  return fileURLToPath(body.storage_location);
}

/** `silt read <dir> --json`: the table read straight from its files. */
async function cliRead(dir: string): Promise<Array<Record<string, unknown>>> {
  const { stdout } = await runFile(process.execPath, [SILT_BIN, "read", dir, "--json"], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const byFirst = (rows: unknown[][]) =>
  [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0]), "en", { numeric: true }));

describe("two DuckDB databases racing on one table", () => {
  const table = "race";
  const full = `inventory.stock.${table}`;

  beforeAll(async () => {
    const created = await server.api("POST", "/api/v1/tables", {
      name: full,
      columns: [
        { name: "sku", type: "STRING" },
        { name: "qty", type: "INT" },
      ],
      // DuckDB 1.5.5 writes logical column names (unity-catalog-api.md, hazard 1).
      properties: { "delta.columnMapping.mode": "none" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await duckOpen("a");
    await duckOpen("b");
  }, 5 * 60_000);

  it(
    "both stage version 1; the first COMMIT wins and the second gets DuckDB's HTTP 409",
    async () => {
      const before = server.requests.length;
      await duckOk("a", "BEGIN");
      await duckOk("b", "BEGIN");
      await duckOk("a", `INSERT INTO ${full} VALUES ('a1', 1), ('a2', 2)`);
      await duckOk("b", `INSERT INTO ${full} VALUES ('b1', 10)`);
      await duckOk("a", "COMMIT");
      const lost = await sql("b", "COMMIT");
      expect(lost.ok, traceSince(before)).toBe(false);
      expect(lost.error_type).toBe("TransactionException");
      expect(lost.error).toMatch(
        new RegExp(
          `Failed to commit: Request to '.*${DELTA_TABLES}/${table}' failed \\(HTTP 409\\)`,
        ),
      );
      expect(lost.error).toContain("UpdateRequirementConflictException");
      // Both read version 0 and asked for version 1: the winner got it, the loser a 409.
      expect(deltaCommits(table, before)).toEqual([
        [1, 200],
        [1, 409],
      ]);

      const h = await history(full);
      expectContiguous(h, 1);
      const now = await server.rows(full);
      expect(now.version).toBe(1);
      expect(byFirst(now.rows)).toEqual([
        ["a1", 1],
        ["a2", 2],
      ]);
    },
    3 * 60_000,
  );

  it(
    "the loser is refused again in its stale attachment, and commits after re-attaching",
    async () => {
      // DuckDB keeps the table as its ATTACH loaded it: b still sees version 0 and, in a new
      // transaction, asks for version 1 again with its old etag, so Silt refuses it again.
      expect(await duckOk("b", `SELECT sku, qty FROM ${full}`)).toEqual([]);
      const before = server.requests.length;
      const again = await sql("b", `INSERT INTO ${full} VALUES ('b1', 10)`);
      expect(again.ok).toBe(false);
      expect(again.error).toMatch(/Failed to commit: .*\(HTTP 409\)/);
      expect(deltaCommits(table, before)).toEqual([[1, 409]]);
      expectContiguous(await history(full), 1);

      // A new ATTACH reloads the table at version 1; the retry commits version 2.
      await duckOpen("b");
      const retry = server.requests.length;
      await duckOk("b", "BEGIN");
      await duckOk("b", `INSERT INTO ${full} VALUES ('b1', 10)`);
      await duckOk("b", "COMMIT");
      expect(deltaCommits(table, retry)).toEqual([[2, 200]]);
      expect(byFirst(await duckOk("b", `SELECT sku, qty FROM ${full}`))).toEqual([
        ["a1", 1],
        ["a2", 2],
        ["b1", 10],
      ]);

      const h = await history(full);
      expectContiguous(h, 2);
      // DuckDB (delta-kernel-rs) names no operation in its commitInfo.
      expect(h.map((r) => r.operation)).toEqual(["CREATE TABLE", "UNKNOWN", "UNKNOWN"]);
      const now = await server.rows(full);
      expect(now.version).toBe(2);
      expect(byFirst(now.rows)).toEqual([
        ["a1", 1],
        ["a2", 2],
        ["b1", 10],
      ]);
      // The losers' staged commits are not part of the table read from its files either.
      const fromFiles = await cliRead(await tableDir(full));
      expect(byFirst(fromFiles.map((r) => [r.sku, r.qty]))).toEqual([
        ["a1", 1],
        ["a2", 2],
        ["b1", 10],
      ]);
    },
    3 * 60_000,
  );
});

describe("Spark and Silt's own writers on one table", () => {
  const table = "mixed";
  const full = `inventory.stock.${table}`;
  /** Every acknowledged insert: who wrote it, its ids, and the version Silt answered. */
  const acked: Array<{ writer: "spark" | "silt"; ids: number[]; version?: number }> = [];
  let nextId = 1;
  const newIds = (n: number) => Array.from({ length: n }, () => nextId++);

  async function sparkInsert(ids: number[]): Promise<void> {
    const values = ids.map((id) => `(${id}, 'spark')`).join(", ");
    await sparkSql(`INSERT INTO ${full} VALUES ${values}`);
    acked.push({ writer: "spark", ids });
  }

  async function siltInsert(ids: number[]): Promise<number> {
    const { status, body } = await server.api<{ version: number }>(
      "POST",
      `/api/v1/tables/${full}/insert`,
      { rows: ids.map((id) => ({ id, src: "silt" })) },
    );
    expect(status, JSON.stringify(body)).toBe(200);
    acked.push({ writer: "silt", ids, version: body.version });
    return body.version;
  }

  const isSparkCommit = (method: string, url: string, body: string) =>
    method === "POST" && url === `${DELTA_TABLES}/${table}` && body.includes('"add-commit"');

  it(
    "Spark creates the table through the UC Delta API",
    async () => {
      sparkRows(await sparkCreated, "CREATE TABLE");
      const h = await history(full);
      expectContiguous(h, 0);
      expect(h[0].engineInfo).toMatch(/^Apache-Spark\/.* Delta-Lake\//);
    },
    6 * 60_000,
  );

  it(
    "Spark loses a version to Silt's API, gets 409, and retries at the next version",
    async () => {
      const before = server.requests.length;
      const hold = server.holdNext(isSparkCommit);
      const ids = newIds(2);
      const insert = sparkInsert(ids);
      insert.catch(() => {});
      const held = await hold.held;
      const version = (
        JSON.parse(held.body) as { updates: Array<{ commit?: { version: number } }> }
      ).updates.find((u) => u.commit)?.commit?.version as number;
      // Silt's API commits the version Spark's held commit asks for.
      expect(await siltInsert(newIds(2))).toBe(version);
      hold.release();
      await insert;
      // The first answer to Spark was 409; it reloaded, rechecked and committed the next version.
      const commits = deltaCommits(table, before);
      expect(commits[0]).toEqual([version, 409]);
      expect(commits.at(-1)).toEqual([version + 1, 200]);
      expect(commits.filter(([, s]) => s === 200)).toEqual([[version + 1, 200]]);
      const h = await history(full);
      expectContiguous(h, version + 1);
      expect(h[version].engineInfo).toMatch(/^Silt\//);
      expect(h[version + 1].engineInfo).toMatch(/^Apache-Spark\//);
    },
    3 * 60_000,
  );

  it(
    "Silt's writer loses a version to Spark after it read the table, and rebases its append",
    async () => {
      const tableId = (await server.api<{ table_id: string }>("GET", `${UC}/tables/${full}`)).body
        .table_id;
      const start = (await history(full)).length - 1;
      let sparkVersion = -1;
      let fired = false;
      const ctx = {
        ...server.ctx,
        store: hookedStore(server.ctx.store, async (key) => {
          // Silt's append has read the table and now writes its data file: Spark commits first.
          if (fired || !key.includes(tableId) || !key.endsWith(".parquet")) return;
          fired = true;
          await sparkInsert(newIds(2));
          sparkVersion = (await history(full)).length - 1;
        }),
      };
      const ids = newIds(2);
      const result = await appendRows(ctx, full, { rows: ids.map((id) => ({ id, src: "silt" })) });
      acked.push({ writer: "silt", ids, version: result.version });
      expect(fired).toBe(true);
      expect(sparkVersion).toBe(start + 1);
      expect(result.version).toBe(start + 2);
      const h = await history(full);
      expectContiguous(h, start + 2);
      expect(h[start + 1].engineInfo).toMatch(/^Apache-Spark\//);
      expect(h[start + 2].engineInfo).toMatch(/^Silt\//);
    },
    3 * 60_000,
  );

  it(
    "Spark and Silt's API append in parallel; each acknowledged insert lands exactly once",
    async () => {
      const N = 3;
      const M = 4;
      const before = server.requests.length;
      let sparkDone = false;
      const sparkChain = (async () => {
        try {
          for (let i = 0; i < N; i++) await sparkInsert(newIds(2));
        } finally {
          sparkDone = true;
        }
      })();
      // Two chains of Silt appends, each waiting for Spark to touch the table again between its
      // appends (or for Spark to finish), so they fall between Spark's loads and commits.
      const sparkRequests = () =>
        server.requests.slice(before).filter((r) => r.url.startsWith(`${DELTA_TABLES}/${table}`))
          .length;
      const siltChain = async (count: number) => {
        for (let j = 0; j < count; j++) {
          const seen = sparkRequests();
          while (!sparkDone && sparkRequests() === seen) {
            await new Promise((r) => setTimeout(r, 20));
          }
          await siltInsert(newIds(3));
        }
      };
      await Promise.all([sparkChain, siltChain(M / 2), siltChain(M / 2)]);
      const conflicts = deltaCommits(table, before).filter(([, s]) => s === 409).length;
      console.log(`parallel appends: Spark's commits refused with 409 and retried: ${conflicts}`);
    },
    5 * 60_000,
  );

  it("has versions 0..n with one commit each, and each carries its writer's engineInfo", async () => {
    const h = await history(full);
    expectContiguous(h, acked.length);
    const siltVersions = acked
      .filter((a) => a.writer === "silt")
      .map((a) => a.version)
      .sort((a, b) => (a as number) - (b as number));
    expect(new Set(siltVersions).size).toBe(siltVersions.length);
    expect(h.filter((r) => r.engineInfo?.startsWith("Silt/")).map((r) => r.version)).toEqual(
      siltVersions,
    );
    const sparkCommits = h.filter((r) => /^Apache-Spark\/.* Delta-Lake\//.test(r.engineInfo ?? ""));
    expect(sparkCommits.length).toBe(acked.filter((a) => a.writer === "spark").length + 1);
    expect(sparkCommits.length + siltVersions.length).toBe(h.length);
    expect(h.slice(1).every((r) => r.operation === "WRITE")).toBe(true);
  });

  /** Every acknowledged row, sorted by id: [id, writer]. */
  const expected = () =>
    acked
      .flatMap((a) => a.ids.map((id) => [id, a.writer]))
      .sort((a, b) => (a[0] as number) - (b[0] as number));

  it("Silt's API and `silt read` read every acknowledged row exactly once", async () => {
    const now = await server.rows(full);
    expect(now.version).toBe(acked.length);
    expect(now.columns.map((c) => c.name)).toEqual(["id", "src"]);
    const rows = [...now.rows].sort((a, b) => (a[0] as number) - (b[0] as number));
    expect(rows).toEqual(expected());
    const fromFiles = await cliRead(await tableDir(full));
    expect(
      fromFiles.map((r) => [r.id, r.src]).sort((a, b) => (a[0] as number) - (b[0] as number)),
    ).toEqual(expected());
  });

  it(
    "Spark reads every row, Silt's included, and the same history",
    async () => {
      const rows = await sparkSql(`SELECT id, src FROM ${full} ORDER BY id`);
      expect(rows).toEqual(expected());
      // DESCRIBE HISTORY's last column is engineInfo.
      const sparkHistory = (await sparkSql(`DESCRIBE HISTORY ${full}`))
        .map((r) => [Number(r[0]), r.at(-1)])
        .sort((a, b) => (a[0] as number) - (b[0] as number));
      expect(sparkHistory).toEqual((await history(full)).map((r) => [r.version, r.engineInfo]));
    },
    3 * 60_000,
  );
});
