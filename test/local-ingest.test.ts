/**
 * Local ingestion and maintenance on a data directory opened in process: CSV, JSON-lines and
 * Parquet files dropped under storage/ingest/ ingested once each (again after reopening the
 * directory, and with the ledger lost), a bad file rejected, recorded and committing nothing,
 * the maintenance pass compacting as the table's properties ask, and the interval's parsing.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as arrow from "apache-arrow";
import { afterAll, describe, expect, it } from "vitest";
import { writeParquet } from "../lib/data/parquet.ts";
import { describeOutcome } from "../lib/runtime/local-ingest.ts";
import { maintainLocally, maintenanceIntervalOf } from "../lib/runtime/local-maintenance.ts";
import { type LocalDataDir, openLocalDataDir } from "../lib/runtime/local-server.ts";

const dataDir = mkdtempSync(path.join(tmpdir(), "silt-local-ingest-"));
const folder = path.join(dataDir, "storage", "ingest", "main", "default", "events");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function sql(local: LocalDataDir, statement: string): Promise<unknown[][]> {
  const res = await local.fetch(
    new Request("http://silt.local/api/v1/sql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ statement }),
    }),
  );
  const body = (await res.json()) as { rows: unknown[][] };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.rows;
}

async function withDir<T>(work: (local: LocalDataDir) => Promise<T>): Promise<T> {
  const local = await openLocalDataDir({ dataDir });
  try {
    return await work(local);
  } finally {
    await local.close();
  }
}

describe("local ingestion", () => {
  it("ingests CSV, JSON lines and Parquet once each, and rejects a bad file", async () => {
    await withDir(async (local) => {
      await sql(local, "CREATE CATALOG main");
      await sql(local, "CREATE SCHEMA main.default");
      await sql(local, "CREATE TABLE main.default.events (id INT, name STRING) USING DELTA");
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, "a.csv"), "id,name\n1,one\n2,two\n");
      writeFileSync(path.join(folder, "b.json"), '{"id":3,"name":"three"}\n');
      const parquet = arrow.tableFromArrays({
        id: Int32Array.from([4]),
        name: ["four"],
      });
      writeFileSync(path.join(folder, "c.parquet"), await writeParquet(parquet));
      const first = (await local.work.ingest()).map(describeOutcome);
      expect(first).toEqual([
        "ingest/main/default/events/a.csv: ingested 2 rows into version 1",
        "ingest/main/default/events/b.json: ingested 1 rows into version 1",
        "ingest/main/default/events/c.parquet: ingested 1 rows into version 1",
      ]);
      expect(await local.work.ingest()).toEqual([]);

      writeFileSync(path.join(folder, "d.csv"), "id,colour\n5,red\n");
      const [bad] = await local.work.ingest();
      expect(bad).toMatchObject({ status: "rejected", errorClass: "DELTA_SCHEMA_MISMATCH" });
      const record = path.join(
        dataDir,
        "storage",
        "_ingest_rejected",
        "ingest/main/default/events/d.csv.local.json",
      );
      expect(existsSync(record)).toBe(true);
      expect(await sql(local, "SELECT id FROM main.default.events ORDER BY id")).toEqual([
        [1],
        [2],
        [3],
        [4],
      ]);
      expect(await local.work.ingest()).toEqual([]);
    });
  });

  it("ingests nothing twice after reopening the directory, even with the ledger lost", async () => {
    await withDir(async (local) => {
      expect(await local.work.ingest()).toEqual([]);
      rmSync(path.join(dataDir, "storage", "_ingest_local"), { recursive: true });
      const again = await local.work.ingest({
        catalog: "main",
        schema: "default",
        table: "events",
      });
      expect(again.map((o) => o.status)).toEqual([
        "alreadyIngested",
        "alreadyIngested",
        "alreadyIngested",
        "rejected",
      ]);
      expect(await sql(local, "SELECT count(*) FROM main.default.events")).toEqual([[4]]);
    });
  });

  it("maintains a table as its properties ask, reporting progress", async () => {
    await withDir(async (local) => {
      await sql(
        local,
        "ALTER TABLE main.default.events SET TBLPROPERTIES ('silt.maintenance.optimize' = 'true')",
      );
      await sql(local, "INSERT INTO main.default.events VALUES (5, 'five')");
      const progress: number[] = [];
      const result = await maintainLocally(local.ctx, {
        table: { catalog: "main", schema: "default", table: "events" },
        onProgress: (_t, _s, p) => progress.push(p.filesDone),
      });
      const optimize = result.tables[0]!.steps.find((s) => s.step === "optimize");
      expect(optimize).toMatchObject({ ok: true, detail: { numFilesRemoved: 2 } });
      expect(progress).toEqual([0, 1, 2]);
      expect(await sql(local, "SELECT count(*) FROM main.default.events")).toEqual([[5]]);
    });
  });
});

describe("SILT_MAINTENANCE_INTERVAL", () => {
  it("takes seconds or a unit, unset means never", () => {
    expect(maintenanceIntervalOf({})).toBeUndefined();
    expect(maintenanceIntervalOf({ SILT_MAINTENANCE_INTERVAL: "90" })).toBe(90_000);
    expect(maintenanceIntervalOf({ SILT_MAINTENANCE_INTERVAL: "10m" })).toBe(600_000);
    expect(maintenanceIntervalOf({ SILT_MAINTENANCE_INTERVAL: "1h" })).toBe(3_600_000);
  });
  it.each(["0", "-5", "10 minutes", "1.5m", "abc"])("refuses %s", (value) => {
    expect(() => maintenanceIntervalOf({ SILT_MAINTENANCE_INTERVAL: value })).toThrow(
      /SILT_MAINTENANCE_INTERVAL must be a whole number of seconds/,
    );
  });
});
