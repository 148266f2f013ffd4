/**
 * The write path below the API: concurrent appenders through the ops, recovery from a crash
 * between ratify and publish, file sizing, and data files other engines can read (DuckDB checks
 * the Parquet files, their physical column names and field ids, and the row counts in the log).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitTransaction } from "../lib/commit/transaction.ts";
import type { AddFile } from "../lib/delta/actions.ts";
import { parseSchema } from "../lib/delta/schema.ts";
import { appendRows } from "../lib/ops/append.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { createCatalog, createSchema } from "../lib/ops/namespaces.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { fileKey } from "../lib/ops/read-files.ts";
import { scanTable } from "../lib/ops/scan.ts";
import { listAll } from "../lib/storage/object-store.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

describe("write path", () => {
  let silt: SiltHarness;
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await createCatalog(silt.ctx, "w");
    await createSchema(silt.ctx, "w", "s");
  });
  afterAll(() => silt.close());

  it("16 concurrent appenders x 5 commits: contiguous versions, every row once, disjoint row ids", async () => {
    const { ctx } = silt;
    await createTable(ctx, {
      name: "w.s.race",
      columns: [
        { name: "writer", type: "INT" },
        { name: "seq", type: "INT" },
      ],
    });
    const writers = 16;
    const commits = 5;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < commits; i++) {
          await appendRows(ctx, "w.s.race", {
            rows: [
              [w, i],
              [w, i + 100],
            ],
          });
        }
      }),
    );
    const t = await openTable(ctx, "w.s.race");
    expect(t.snapshot.version).toBe(writers * commits);
    const logKeys = (await listAll(ctx.store, `${t.entry.location}_delta_log/`))
      .map((o) => o.key)
      .filter((k) => /\/\d{20}\.json$/.test(k));
    expect(logKeys).toHaveLength(writers * commits + 1);
    const { table } = await scanTable(ctx, "w.s.race");
    const seen = new Set<string>();
    for (let i = 0; i < table.numRows; i++) {
      seen.add(`${table.getChild("writer")!.get(i)}/${table.getChild("seq")!.get(i)}`);
    }
    expect(table.numRows).toBe(writers * commits * 2);
    expect(seen.size).toBe(writers * commits * 2);
    // Row tracking: every file's id range is disjoint from every other's.
    const ranges = t.snapshot.files
      .map((f) => [f.baseRowId!, f.baseRowId! + JSON.parse(f.stats!).numRecords - 1])
      .sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i][0]).toBeGreaterThan(ranges[i - 1][1]);
    const hwm = JSON.parse(t.snapshot.domainMetadata.get("delta.rowTracking")!.configuration);
    expect(hwm.rowIdHighWaterMark).toBe(ranges[ranges.length - 1][1]);
  });

  it("a commit that crashed after ratification is published by the next reader", async () => {
    const { ctx } = silt;
    await createTable(ctx, { name: "w.s.crash", columns: [{ name: "id", type: "INT" }] });
    const t = await openTable(ctx, "w.s.crash");
    await expect(
      commitTransaction({
        store: ctx.store,
        arbiter: ctx.arbiter,
        tableId: t.entry.tableId,
        tableRoot: t.entry.location,
        readVersion: 0,
        actions: [],
        commitInfo: {
          operation: "WRITE",
          operationParameters: { mode: "Append" },
          isBlindAppend: true,
        },
        hooks: {
          afterRatify: async () => {
            throw new Error("process died");
          },
        },
      }),
    ).rejects.toThrow("process died");
    const published = `${t.entry.location}_delta_log/00000000000000000001.json`;
    expect(await ctx.store.head(published)).toBeUndefined();

    const after = await openTable(ctx, "w.s.crash");
    expect(after.snapshot.version).toBe(1);
    expect(await ctx.store.head(published)).toBeDefined();
    const next = await appendRows(ctx, "w.s.crash", { rows: [[1]] });
    expect(next.version).toBe(2);
  });

  it("a crash before ratification leaves no visible trace", async () => {
    const { ctx } = silt;
    await createTable(ctx, { name: "w.s.early", columns: [{ name: "id", type: "INT" }] });
    const t = await openTable(ctx, "w.s.early");
    await expect(
      commitTransaction({
        store: ctx.store,
        arbiter: ctx.arbiter,
        tableId: t.entry.tableId,
        tableRoot: t.entry.location,
        readVersion: 0,
        actions: [],
        commitInfo: { operation: "WRITE", isBlindAppend: true },
        hooks: {
          afterStage: async () => {
            throw new Error("process died");
          },
        },
      }),
    ).rejects.toThrow("process died");
    expect((await openTable(ctx, "w.s.early")).snapshot.version).toBe(0);
    expect((await appendRows(ctx, "w.s.early", { rows: [[1]] })).version).toBe(1);
  });

  it("honours delta.targetFileSize", async () => {
    const { ctx } = silt;
    await createTable(ctx, {
      name: "w.s.sized",
      columns: [
        { name: "id", type: "BIGINT" },
        { name: "payload", type: "STRING" },
      ],
      properties: { "delta.targetFileSize": String(64 * 1024) },
    });
    const rows = Array.from({ length: 20_000 }, (_, i) => [i, `payload-${i}-${"x".repeat(20)}`]);
    const res = await appendRows(ctx, "w.s.sized", { rows });
    expect(res.numFiles).toBeGreaterThan(4);
    const { table } = await scanTable(ctx, "w.s.sized");
    expect(table.numRows).toBe(20_000);
  });

  it("writes Parquet that DuckDB reads, with physical names and field ids under column mapping", async () => {
    const { ctx } = silt;
    await createTable(ctx, {
      name: "w.s.mapped",
      columns: [
        { name: "order id", type: "INT" },
        { name: "amount", type: "DECIMAL(10,2)" },
        { name: "day", type: "DATE" },
      ],
      partitionedBy: ["day"],
    });
    await appendRows(ctx, "w.s.mapped", {
      rows: [
        [1, "9.50", "2026-10-01"],
        [2, "20.00", "2026-10-01"],
        [3, "3.25", "2026-10-02"],
      ],
    });
    const t = await openTable(ctx, "w.s.mapped");
    const schema = parseSchema(t.snapshot.metadata.schemaString);
    const physical = Object.fromEntries(
      schema.fields.map((f) => [f.name, f.metadata["delta.columnMapping.physicalName"] as string]),
    );
    const ids = Object.fromEntries(
      schema.fields.map((f) => [f.name, f.metadata["delta.columnMapping.id"] as number]),
    );
    expect(physical["order id"]).toMatch(/^col-[0-9a-f-]{36}$/);
    expect(t.snapshot.files).toHaveLength(2);
    for (const f of t.snapshot.files)
      expect(Object.keys(f.partitionValues)).toEqual([physical.day]);

    const dir = await mkdtemp(path.join(os.tmpdir(), "silt-duck-"));
    const db = await DuckDBInstance.create(":memory:");
    const con = await db.connect();
    try {
      let total = 0;
      let sum = 0;
      for (const [i, f] of t.snapshot.files.entries()) {
        const local = path.join(dir, `f${i}.parquet`);
        await writeFile(local, await ctx.store.get(fileKey(t.entry.location, f.path)));
        const fields = await con.runAndReadAll(
          `SELECT name, field_id FROM parquet_schema('${local}') WHERE name <> 'arrow_schema' AND num_children IS NULL`,
        );
        expect(
          Object.fromEntries(fields.getRowObjects().map((r) => [r.name, Number(r.field_id)])),
        ).toEqual({ [physical["order id"]]: ids["order id"], [physical.amount]: ids.amount });
        const agg = await con.runAndReadAll(
          `SELECT count(*)::INTEGER AS n, sum("${physical.amount}")::DOUBLE AS s FROM read_parquet('${local}')`,
        );
        const row = agg.getRowObjects()[0];
        expect(Number(row.n)).toBe(JSON.parse((f as AddFile).stats!).numRecords);
        total += Number(row.n);
        sum += Number(row.s);
      }
      expect(total).toBe(3);
      expect(sum).toBeCloseTo(32.75, 6);
    } finally {
      con.closeSync();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
