/**
 * OPTIMIZE through POST /api/v1/sql and the JSON route: bin-packing per partition with rows and
 * deletion vectors dropped, `dataChange: false` in the log, Spark's parameters and metrics, WHERE
 * on partition columns only, Z-order making statistics prune on every Z-ordered column, the
 * errors (each leaving the table unchanged), and the conflict rules against a concurrent append
 * (commits around it) and a concurrent DELETE of a compacted file (fails cleanly).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import type { SiltContext } from "../lib/context.ts";
import { type AddFile, commitFileName, parseActions } from "../lib/delta/actions.ts";
import { physicalName } from "../lib/delta/column-mapping.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { optimizeTable } from "../lib/ops/optimize.ts";
import { buildContext } from "../lib/runtime/context-factory.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { sqlClient } from "./helpers/sql-client.ts";
import { hookedStore, once } from "./helpers/store-hooks.ts";

let silt: SiltHarness;
const { sql, ok, history, rows, failsUnchanged } = sqlClient(() => silt, {
  catalog: "oc",
  schema: "s",
});
const files = async (table: string) => (await openTable(silt.ctx, `oc.s.${table}`)).snapshot.files;
/** The actions of one published commit. */
const commitActions = async (table: string, version: number) => {
  const t = await openTable(silt.ctx, `oc.s.${table}`);
  const bytes = await silt.ctx.store.get(
    `${t.entry.location}_delta_log/${commitFileName(version)}`,
  );
  return parseActions(new TextDecoder().decode(bytes));
};

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await ok("CREATE CATALOG oc");
  await ok("CREATE SCHEMA oc.s");
}, 60_000);
afterAll(async () => {
  await silt?.close();
});

describe("OPTIMIZE", () => {
  it("bin-packs each partition into one file, drops deleted rows, and records Spark's history", async () => {
    await ok("CREATE TABLE bp (id INT, v STRING, p STRING) USING DELTA PARTITIONED BY (p)");
    for (let i = 0; i < 4; i++) {
      await ok(
        `INSERT INTO bp VALUES (${i * 10 + 1}, 'a${i}', 'a'), (${i * 10 + 2}, 'b${i}', 'b')`,
      );
    }
    await ok("INSERT INTO bp VALUES (50, 'x', 'a'), (51, 'y', 'a'), (52, 'z', 'a')");
    await ok("DELETE FROM bp WHERE id = 51"); // a deletion vector on one of the files
    const before = await rows("bp");
    expect(await files("bp")).toHaveLength(9);

    const res = await ok("OPTIMIZE bp");
    expect(res.columns.map((c) => c.name)).toEqual(["path", "metrics"]);
    const metrics = res.rows[0]![1] as Record<string, unknown>;
    expect(metrics).toMatchObject({ numFilesAdded: 2, numFilesRemoved: 9, partitionsOptimized: 2 });
    expect(await rows("bp")).toEqual(before);
    const after = await files("bp");
    expect(after).toHaveLength(2);
    expect(after.every((f) => f.deletionVector == null)).toBe(true);

    const [h] = await history("bp");
    expect(h!.operation).toBe("OPTIMIZE");
    expect(h!.parameters).toEqual({
      predicate: "[]",
      zOrderBy: "[]",
      clusterBy: "[]",
      auto: "false",
    });
    expect(h!.metrics).toMatchObject({
      numAddedFiles: "2",
      numRemovedFiles: "9",
      numDeletionVectorsRemoved: "1",
    });
    for (const k of [
      "numAddedBytes",
      "numRemovedBytes",
      "minFileSize",
      "p50FileSize",
      "maxFileSize",
    ]) {
      expect(Number(h!.metrics[k]), k).toBeGreaterThan(0);
    }
    const added = JSON.parse(h!.metrics.filesAdded!);
    expect(added).toMatchObject({ totalFiles: 2, totalSize: Number(h!.metrics.numAddedBytes) });
    expect(JSON.parse(h!.metrics.filesRemoved!)).toMatchObject({ totalFiles: 9 });
    const actions = await commitActions("bp", h!.version);
    const changes = actions.filter((a) => "add" in a || "remove" in a);
    expect(changes).toHaveLength(11);
    for (const a of changes) {
      expect("add" in a ? a.add.dataChange : "remove" in a ? a.remove.dataChange : true).toBe(
        false,
      );
    }

    // Nothing left to compact: no commit.
    const again = await ok("OPTIMIZE bp");
    expect((again.rows[0]![1] as Record<string, unknown>).numFilesRemoved).toBe(0);
    expect((await history("bp"))[0]!.version).toBe(h!.version);
  });

  it("WHERE picks partitions, and may reference partition columns only", async () => {
    await ok("CREATE TABLE wh (id INT, p STRING) USING DELTA PARTITIONED BY (p)");
    for (let i = 0; i < 3; i++) await ok(`INSERT INTO wh VALUES (${i}, 'a'), (${i + 10}, 'b')`);
    const err = await failsUnchanged("wh", "DELTA_NON_PARTITION_COLUMN_REFERENCE", () =>
      sql("OPTIMIZE wh WHERE id > 1"),
    );
    expect(err.message).toBe(
      "Predicate references non-partition column 'id'. Only the partition columns may be referenced: [p]",
    );
    const res = await silt.call("POST", "/api/v1/tables/oc.s.wh/optimize", { where: "p = 'a'" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.metrics).toMatchObject({ numFilesRemoved: 3, numFilesAdded: 1 });
    const now = await files("wh");
    // Partition values are keyed by physical name under column mapping.
    const partOf = (f: AddFile) => Object.values(f.partitionValues)[0];
    expect(now.filter((f) => partOf(f) === "a")).toHaveLength(1);
    expect(now.filter((f) => partOf(f) === "b")).toHaveLength(3);
    expect((await history("wh"))[0]!.parameters.predicate).toBe(JSON.stringify(["(p = 'a')"]));
  });

  it("refuses Z-order on a partition column or a missing column", async () => {
    await ok("CREATE TABLE zerr (id INT, p STRING) USING DELTA PARTITIONED BY (p)");
    await ok("INSERT INTO zerr VALUES (1, 'a')");
    await ok("INSERT INTO zerr VALUES (2, 'a')");
    const onPartition = await failsUnchanged("zerr", "DELTA_ZORDERING_ON_PARTITION_COLUMN", () =>
      sql("OPTIMIZE zerr ZORDER BY (p)"),
    );
    expect(onPartition.message).toBe(
      "p is a partition column. Z-Ordering can only be performed on data columns",
    );
    await failsUnchanged("zerr", "DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST", () =>
      silt.call("POST", "/api/v1/tables/oc.s.zerr/optimize", { zorderBy: ["nope"] }),
    );
    await failsUnchanged("zerr", "TABLE_OR_VIEW_NOT_FOUND", () => sql("OPTIMIZE missing_t"));
  });

  it("Z-orders so that statistics prune on every Z-ordered column", async () => {
    // Small files, so the Z-ordered rows are cut into several.
    await ok(
      "CREATE TABLE zt (x INT, y INT) USING DELTA TBLPROPERTIES ('delta.targetFileSize' = '2048')",
    );
    // Each insert holds one stripe of x and every y.
    for (let k = 0; k < 4; k++) {
      const values: string[] = [];
      for (let x = k * 8; x < k * 8 + 8; x++)
        for (let y = 0; y < 32; y++) values.push(`(${x}, ${y})`);
      await ok(`INSERT INTO zt VALUES ${values.join(", ")}`);
    }
    const t = await openTable(silt.ctx, "oc.s.zt");
    const name = (c: string) =>
      physicalName(t.schema.fields.find((f) => f.name === c)!, t.mappingMode);
    const canHold = (fs: AddFile[], col: string, v: number) =>
      fs.filter((f) => {
        const s = JSON.parse(f.stats!);
        return s.minValues[name(col)] <= v && v <= s.maxValues[name(col)];
      }).length;
    const before = await files("zt");
    const beforeY = canHold(before, "y", 5) / before.length;
    expect(beforeY).toBe(1);
    const rowsBefore = await rows("zt");

    const res = await ok("OPTIMIZE zt ZORDER BY (x, y)");
    expect(res.rows[0]![1]).toMatchObject({ numFilesRemoved: before.length });
    const after = await files("zt");
    expect(after.length).toBeGreaterThan(1);
    expect(canHold(after, "y", 5)).toBeLessThan(after.length);
    expect(canHold(after, "x", 5)).toBeLessThan(after.length);
    expect(canHold(after, "y", 5) / after.length).toBeLessThan(beforeY);
    expect(await rows("zt")).toEqual(rowsBefore);
    const [h] = await history("zt");
    expect(h!.parameters.zOrderBy).toBe('["x","y"]');
    expect(JSON.parse(h!.metrics.zOrderStats!)).toMatchObject({ numOutputCubes: after.length });
  });

  it("within a time budget commits the bins done and leaves the rest for the next run", async () => {
    await ok("CREATE TABLE inc (id INT, p STRING) USING DELTA PARTITIONED BY (p)");
    for (let i = 0; i < 2; i++) await ok(`INSERT INTO inc VALUES (${i}, 'a'), (${i + 10}, 'b')`);
    const rowsBefore = await rows("inc");
    // A spent budget still runs one bin, so every run makes progress.
    const first = await silt.call("POST", "/api/v1/tables/oc.s.inc/optimize", { timeBudgetMs: 0 });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ committed: true, complete: false });
    expect(first.body.metrics).toMatchObject({ numFilesRemoved: 2, partitionsOptimized: 1 });
    expect(await files("inc")).toHaveLength(3);
    const second = await silt.call("POST", "/api/v1/tables/oc.s.inc/optimize", { timeBudgetMs: 0 });
    expect(second.body).toMatchObject({ committed: true, complete: true });
    expect(await files("inc")).toHaveLength(2);
    expect(await rows("inc")).toEqual(rowsBefore);
    const ops = (await history("inc")).map((h) => h.operation);
    expect(ops.slice(0, 2)).toEqual(["OPTIMIZE", "OPTIMIZE"]);
  });

  it("over HTTP without a budget, fits the request's timeout: commits the bins done, complete false", async () => {
    await ok("CREATE TABLE dflt (id INT, p STRING) USING DELTA PARTITIONED BY (p)");
    for (let i = 0; i < 2; i++) {
      await ok(`INSERT INTO dflt VALUES (${i}, 'a'), (${i + 10}, 'b'), (${i + 20}, 'c')`);
    }
    const rowsBefore = await rows("dflt");
    // A deployed function's context: the factory derives OPTIMIZE's budget from its timeout.
    const deployed = await buildContext({
      store: silt.ctx.store,
      storageRootUri: silt.ctx.storageRootUri,
      memory: true,
      requestTimeoutMs: 29_000,
    });
    expect(deployed.optimizeTimeBudgetMs).toBe(14_500);
    // Each bin's upload takes 10 s on this clock: the second bin ends past the budget.
    let now = Date.UTC(2026, 0, 1);
    const app = createApp({
      ...silt.ctx,
      optimizeTimeBudgetMs: deployed.optimizeTimeBudgetMs,
      clock: () => now,
      store: hookedStore(silt.ctx.store, async (key) => {
        if (key.endsWith(".parquet")) now += 10_000;
      }),
    });
    const call = async () => {
      const res = await app.request("http://silt.test/api/v1/tables/oc.s.dflt/optimize", {
        method: "POST",
        body: "{}",
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { committed: boolean; complete: boolean; metrics: object };
    };
    const first = await call();
    expect(first).toMatchObject({ committed: true, complete: false });
    expect(first.metrics).toMatchObject({ numFilesRemoved: 4, partitionsOptimized: 2 });
    expect(await files("dflt")).toHaveLength(4);
    expect(await rows("dflt")).toEqual(rowsBefore);
    const second = await call();
    expect(second).toMatchObject({ committed: true, complete: true });
    expect(await files("dflt")).toHaveLength(3);
    expect(await rows("dflt")).toEqual(rowsBefore);
  });

  it("REORG TABLE … APPLY (PURGE) rewrites only the files with deletion vectors", async () => {
    await ok("CREATE TABLE pg (id INT, v STRING) USING DELTA");
    await ok("INSERT INTO pg VALUES (1, 'keep'), (2, 'secret')");
    await ok("INSERT INTO pg VALUES (3, 'other')");
    await ok("DELETE FROM pg WHERE id = 2");
    const before = await files("pg");
    const withDv = before.filter((f) => f.deletionVector != null);
    expect(withDv).toHaveLength(1);
    const rowsBefore = await rows("pg");
    await failsUnchanged("pg", "DELTA_NON_PARTITION_COLUMN_REFERENCE", () =>
      sql("REORG TABLE pg WHERE id = 1 APPLY (PURGE)"),
    );
    const res = await ok("REORG TABLE pg APPLY (PURGE)");
    expect(res.rows[0]![1]).toMatchObject({ numFilesRemoved: 1, numFilesAdded: 1 });
    const after = await files("pg");
    expect(after.every((f) => f.deletionVector == null)).toBe(true);
    // The file without a vector is left alone.
    expect(after.map((f) => f.path)).toContain(before.find((f) => f.deletionVector == null)!.path);
    expect(after.map((f) => f.path)).not.toContain(withDv[0]!.path);
    expect(await rows("pg")).toEqual(rowsBefore);
    const [h] = await history("pg");
    expect(h!.operation).toBe("REORG");
    expect(h!.parameters).toEqual({ predicate: "[]", applyPurge: "true" });
    expect(h!.metrics).toMatchObject({ numDeletionVectorsRemoved: "1", numRemovedFiles: "1" });
    // The rewritten file holds only the live row.
    const added = after.find((f) => f.path !== before.find((g) => g.deletionVector == null)!.path)!;
    expect(JSON.parse(added.stats!).numRecords).toBe(1);
  });

  describe("against concurrent writers", () => {
    /** A context whose first data-file write runs `during` first: OPTIMIZE has read by then. */
    const interleaved = (during: () => Promise<void>): SiltContext => ({
      ...silt.ctx,
      store: hookedStore(
        silt.ctx.store,
        once((key) => key.endsWith(".parquet"), during),
      ),
    });

    it("commits around a concurrent append", async () => {
      await ok("CREATE TABLE ca (id INT) USING DELTA");
      await ok("INSERT INTO ca VALUES (1)");
      await ok("INSERT INTO ca VALUES (2)");
      const ctx = interleaved(async () => {
        await ok("INSERT INTO ca VALUES (3)");
      });
      const result = await optimizeTable(ctx, "oc.s.ca");
      expect(result.committed).toBe(true);
      expect(await rows("ca")).toEqual([[1], [2], [3]]);
      expect(await files("ca")).toHaveLength(2);
      expect((await history("ca")).map((h) => h.operation).slice(0, 2)).toEqual([
        "OPTIMIZE",
        "WRITE",
      ]);
    });

    it("fails with DELTA_CONCURRENT_DELETE_READ, changing nothing, when a concurrent DELETE gave a compacted file a deletion vector", async () => {
      await ok("CREATE TABLE cv (id INT) USING DELTA");
      await ok("INSERT INTO cv VALUES (1), (2)");
      await ok("INSERT INTO cv VALUES (3)");
      const ctx = interleaved(async () => {
        await ok("DELETE FROM cv WHERE id = 1");
      });
      const versionBefore = (await history("cv"))[0]!.version;
      await expect(optimizeTable(ctx, "oc.s.cv")).rejects.toMatchObject({
        errorClass: "DELTA_CONCURRENT_DELETE_READ",
        status: 409,
      });
      expect((await history("cv"))[0]!.version).toBe(versionBefore + 1);
      expect(await rows("cv")).toEqual([[2], [3]]);
      const after = await files("cv");
      expect(after).toHaveLength(2);
      expect(after.filter((f) => f.deletionVector != null)).toHaveLength(1);
    });

    it("commits the bins a concurrent DELETE did not touch, complete false, recorded as Delta records OPTIMIZE", async () => {
      await ok("CREATE TABLE cp (id INT, p STRING) USING DELTA PARTITIONED BY (p)");
      for (let i = 0; i < 2; i++) {
        await ok(`INSERT INTO cp VALUES (${i * 2}, 'a'), (${i * 2 + 1}, 'a'), (${i + 10}, 'b')`);
      }
      // Partition values are keyed by physical column name (column mapping).
      const partitionOf = (f: AddFile) => Object.values(f.partitionValues)[0];
      const before = await files("cp");
      const inA = before.filter((f) => partitionOf(f) === "a").map((f) => f.path);
      const ctx = interleaved(async () => {
        await ok("INSERT INTO cp VALUES (20, 'a'), (21, 'b')");
        await ok("DELETE FROM cp WHERE id = 0");
      });
      const result = await optimizeTable(ctx, "oc.s.cp");
      expect(result).toMatchObject({ committed: true, complete: false });
      expect(result.metrics).toMatchObject({ numFilesRemoved: 2, partitionsOptimized: 1 });
      expect(await rows("cp")).toEqual([
        [1, "a"],
        [2, "a"],
        [3, "a"],
        [10, "b"],
        [11, "b"],
        [20, "a"],
        [21, "b"],
      ]);
      const after = await files("cp");
      // Partition a keeps its files (one now with a deletion vector) and the appended one.
      expect(
        after
          .filter((f) => partitionOf(f) === "a")
          .map((f) => f.path)
          .sort(),
      ).toEqual(
        [...inA, after.find((f) => partitionOf(f) === "a" && !inA.includes(f.path))!.path].sort(),
      );
      expect(after.filter((f) => partitionOf(f) === "b")).toHaveLength(2);
      const [h] = await history("cp");
      expect(h!.operation).toBe("OPTIMIZE");
      const ci = (await commitActions("cp", h!.version)).find((a) => "commitInfo" in a);
      expect(ci).toMatchObject({ commitInfo: { isolationLevel: "SnapshotIsolation" } });
    });

    it("fails cleanly when a concurrent DELETE removed a file it compacted", async () => {
      await ok("CREATE TABLE cd (id INT) USING DELTA");
      await ok("INSERT INTO cd VALUES (1)");
      await ok("INSERT INTO cd VALUES (2)");
      const ctx = interleaved(async () => {
        await ok("DELETE FROM cd WHERE id = 1");
      });
      const before = await files("cd");
      const versionBefore = (await history("cd"))[0]!.version;
      await expect(optimizeTable(ctx, "oc.s.cd")).rejects.toMatchObject({
        errorClass: "DELTA_CONCURRENT_DELETE_READ",
      });
      // Only the DELETE committed; OPTIMIZE changed nothing a reader sees.
      expect((await history("cd"))[0]!.version).toBe(versionBefore + 1);
      expect(await rows("cd")).toEqual([[2]]);
      const remaining = (await files("cd")).map((f) => f.path);
      expect(remaining).toHaveLength(1);
      expect(before.map((f) => f.path)).toContain(remaining[0]);
    });
  });
});
