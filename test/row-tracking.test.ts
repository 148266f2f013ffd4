/**
 * Stable row ids under row tracking (on by default in Silt's table profile): UPDATE, MERGE and
 * OPTIMIZE move rows into new files, and each moved row keeps its row id through the table's
 * materialized row-id column; UPDATE and MERGE mark the rows changed (null materialized commit
 * version, so the new file's defaultRowCommitVersion applies), OPTIMIZE keeps their versions.
 * New rows get fresh ids above the high-water mark, no id is ever shared, and the hidden columns
 * stay out of query results and statistics while being real Parquet columns other engines read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readParquetFooter } from "../lib/data/parquet.ts";
import { commitFileName, parseActions } from "../lib/delta/actions.ts";
import { physicalName } from "../lib/delta/column-mapping.ts";
import { materializedColumns, UNKNOWN } from "../lib/delta/row-tracking.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { fileKey, readFileRows } from "../lib/ops/read-files.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { sqlClient } from "./helpers/sql-client.ts";

let silt: SiltHarness;
const { ok, rows } = sqlClient(() => silt, { catalog: "rt", schema: "s" });

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await ok("CREATE CATALOG rt");
  await ok("CREATE SCHEMA rt.s");
}, 60_000);
afterAll(async () => {
  await silt?.close();
});

interface Identity {
  rowId: bigint;
  version: bigint;
}

/** Every live row's (row id, row commit version), keyed by the table's `id` column. */
async function identities(table: string): Promise<Map<number, Identity>> {
  const t = await openTable(silt.ctx, `rt.s.${table}`);
  const out = new Map<number, Identity>();
  for (const file of t.snapshot.files) {
    const read = await readFileRows(silt.ctx.store, t.snapshot, file, {
      columns: ["id"],
      identities: true,
    });
    const ids = read.table.getChild("id")!;
    for (let r = 0; r < read.table.numRows; r++) {
      if (read.deleted?.[r]) continue;
      const rowId = read.identities!.ids[r];
      const version = read.identities!.versions[r];
      expect(rowId).not.toBe(UNKNOWN);
      expect(version).not.toBe(UNKNOWN);
      out.set(Number(ids.get(r)), { rowId, version });
    }
  }
  return out;
}

const versionOf = async (table: string) =>
  (await openTable(silt.ctx, `rt.s.${table}`)).snapshot.version;

const expectDistinct = (m: Map<number, Identity>) =>
  expect(new Set([...m.values()].map((i) => i.rowId)).size).toBe(m.size);

describe("row tracking keeps row ids when rows move", () => {
  it("UPDATE keeps the updated rows' ids and marks them changed by its commit", async () => {
    await ok("CREATE TABLE u (id INT, v STRING) USING DELTA");
    await ok("INSERT INTO u VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    await ok("INSERT INTO u VALUES (4, 'd'), (5, 'e')");
    const before = await identities("u");
    expectDistinct(before);
    expect([...before.values()].map((i) => i.version)).toEqual([1n, 1n, 1n, 2n, 2n]);

    await ok("UPDATE u SET v = 'x' WHERE id IN (2, 5)");
    const v3 = await versionOf("u");
    const after = await identities("u");
    for (const id of [1, 2, 3, 4, 5]) {
      expect(after.get(id)!.rowId, `row ${id}`).toBe(before.get(id)!.rowId);
    }
    expect(after.get(2)!.version).toBe(BigInt(v3));
    expect(after.get(5)!.version).toBe(BigInt(v3));
    expect(after.get(1)!.version).toBe(1n);
    const t = await openTable(silt.ctx, "rt.s.u");
    const log = await silt.ctx.store.get(`${t.snapshot.tableRoot}_delta_log/${commitFileName(v3)}`);
    const commitInfo = parseActions(new TextDecoder().decode(log)).find((a) => "commitInfo" in a);
    expect(commitInfo).toMatchObject({
      commitInfo: { operation: "UPDATE", tags: { "delta.rowTracking.preserved": "true" } },
    });

    // A row updated twice is read from the materialized column the first UPDATE wrote.
    await ok("UPDATE u SET v = 'y' WHERE id = 2");
    const again = await identities("u");
    expect(again.get(2)!.rowId).toBe(before.get(2)!.rowId);
    expect(again.get(2)!.version).toBe(BigInt(await versionOf("u")));
    expectDistinct(again);
    expect(await rows("u")).toEqual([
      [1, "a"],
      [2, "y"],
      [3, "c"],
      [4, "d"],
      [5, "x"],
    ]);
  });

  it("MERGE keeps the ids of updated target rows and gives inserted rows fresh ones", async () => {
    await ok("CREATE TABLE m (id INT, v STRING) USING DELTA");
    await ok("INSERT INTO m VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    const before = await identities("m");
    await ok(
      "MERGE INTO m USING (SELECT * FROM VALUES (2, 'B'), (9, 'new') AS s(id, v)) s ON m.id = s.id " +
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    );
    const version = BigInt(await versionOf("m"));
    const after = await identities("m");
    expect(after.get(2)!.rowId).toBe(before.get(2)!.rowId);
    expect(after.get(2)!.version).toBe(version);
    expect(after.get(9)!.version).toBe(version);
    const maxBefore = [...before.values()].reduce((a, b) => (b.rowId > a ? b.rowId : a), -1n);
    expect(after.get(9)!.rowId).toBeGreaterThan(maxBefore);
    expectDistinct(after);
  });

  it("OPTIMIZE and ZORDER keep both ids and commit versions", async () => {
    await ok("CREATE TABLE o (id INT, k INT) USING DELTA");
    for (let i = 0; i < 4; i++) {
      await ok(
        `INSERT INTO o VALUES (${i * 3 + 1}, ${9 - i}), (${i * 3 + 2}, ${i}), (${i * 3 + 3}, 5)`,
      );
    }
    await ok("DELETE FROM o WHERE id = 5");
    await ok("UPDATE o SET k = 100 WHERE id = 7");
    const before = await identities("o");
    await ok("OPTIMIZE o ZORDER BY (k)");
    expect((await openTable(silt.ctx, "rt.s.o")).snapshot.files).toHaveLength(1);
    expect(await identities("o")).toEqual(before);
    await ok("REORG TABLE o APPLY (PURGE)");
    expect(await identities("o")).toEqual(before);
  });

  it("writes the ids as a real Parquet column, hidden from queries and statistics", async () => {
    const t = await openTable(silt.ctx, "rt.s.u");
    const names = materializedColumns(t.snapshot.metadata)!;
    expect(names.rowId).toMatch(/^_row-id-col-/);
    const updatedFile = t.snapshot.files.find((f) => f.stats?.includes('"y"'))!;
    const footer = await readParquetFooter(
      await silt.ctx.store.get(fileKey(t.snapshot.tableRoot, updatedFile.path)),
    );
    // Column mapping is on too: data columns carry physical names, the hidden ones their own.
    const physical = t.schema.fields.map((f) => physicalName(f, "name"));
    expect(footer.schema.map((n) => n.name)).toEqual([
      ...physical,
      names.rowId,
      names.commitVersion,
    ]);
    expect(Object.keys(JSON.parse(updatedFile.stats!).minValues)).toEqual(physical);
    const all = await ok("SELECT * FROM u");
    expect(all.columns.map((c) => c.name)).toEqual(["id", "v"]);
  });

  it("writes no hidden column on a table without row tracking", async () => {
    await ok(
      "CREATE TABLE n (id INT, v STRING) USING DELTA TBLPROPERTIES ('delta.enableRowTracking' = 'false')",
    );
    await ok("INSERT INTO n VALUES (1, 'a'), (2, 'b')");
    await ok("UPDATE n SET v = 'z' WHERE id = 1");
    const t = await openTable(silt.ctx, "rt.s.n");
    for (const file of t.snapshot.files) {
      const footer = await readParquetFooter(
        await silt.ctx.store.get(fileKey(t.snapshot.tableRoot, file.path)),
      );
      expect(footer.schema.map((n) => n.name)).toEqual(
        t.schema.fields.map((f) => physicalName(f, "name")),
      );
    }
  });
});
