/**
 * RESTORE and time travel, on S3 storage (the s3rver emulator) so that the existence checks
 * go through real HEAD requests: deletion vectors undone, schemas brought back across a
 * REPLACE, versions picked by timestamp, Spark's parameters and metrics, and the failures
 * (out of range, files gone) each leaving the table as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitTransaction } from "../lib/commit/transaction.ts";
import { SiltError } from "../lib/errors.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { fileKey } from "../lib/ops/read-files.ts";
import { restoreTable } from "../lib/ops/restore.ts";
import { deleteActions, findMatches } from "../lib/ops/row-deletes.ts";
import { rowTrackingHighWaterMark } from "../lib/ops/write-protocol.ts";
import { type ApiResponse, type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

type Result = { columns: { name: string; type: string }[]; rows: unknown[][]; version?: number };

let silt: SiltHarness;
const sql = (statement: string) =>
  silt.call("POST", "/api/v1/sql", { statement, catalog: "rs", schema: "s" });
const ok = async (statement: string): Promise<Result> => {
  const res = await sql(statement);
  expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Result;
};
const history = async (table: string) => {
  const h = await ok(`DESCRIBE HISTORY ${table}`);
  const at = (n: string) => h.columns.findIndex((c) => c.name === n);
  return h.rows.map((r) => ({
    version: r[at("version")] as number,
    timestamp: r[at("timestamp")] as string,
    operation: r[at("operation")] as string,
    parameters: r[at("operationParameters")] as Record<string, string | null>,
    metrics: r[at("operationMetrics")] as Record<string, string>,
  }));
};
const rows = async (table: string) => (await ok(`SELECT * FROM ${table} ORDER BY 1`)).rows;
const failsUnchanged = async (table: string, run: () => Promise<ApiResponse>) => {
  const before = { h: (await history(table))[0].version, rows: await rows(table) };
  const res = await run();
  expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
  expect((await history(table))[0].version).toBe(before.h);
  expect(await rows(table)).toEqual(before.rows);
  return res.body as { error_class: string; message: string; sqlstate?: string };
};

/** A DELETE-like commit: rows with an even id marked deleted through row-deletes.ts. */
async function deleteEvenIds(name: string): Promise<number> {
  const { ctx } = silt;
  const t = await openTable(ctx, name);
  const matches = await findMatches(ctx, t.snapshot, {
    match: (table) =>
      Uint8Array.from(table.getChild("id")!.toArray() as Int32Array, (id) =>
        id % 2 === 0 ? 1 : 0,
      ),
  });
  const deleted = await deleteActions(ctx, t.entry.location, matches);
  const result = await commitTransaction({
    store: ctx.store,
    arbiter: ctx.arbiter,
    tableId: t.entry.tableId,
    tableRoot: t.entry.location,
    readVersion: t.snapshot.version,
    previousTimestamp: t.snapshot.timestamp,
    actions: deleted.actions,
    commitInfo: {
      operation: "DELETE",
      operationParameters: { predicate: '["((id % 2) = 0)"]' },
      operationMetrics: { numDeletedRows: String(deleted.metrics.numDeletedRows) },
    },
    clock: ctx.clock,
    rowTracking: true,
    readRowIdHighWaterMark: rowTrackingHighWaterMark(t.snapshot),
  });
  return result.version;
}

beforeAll(async () => {
  silt = await startSilt("s3", { memory: true });
  await ok("CREATE CATALOG rs");
  await ok("CREATE SCHEMA rs.s");
});
afterAll(() => silt.close());

describe("RESTORE", () => {
  beforeAll(async () => {
    await ok("CREATE TABLE events (id INT, v STRING) USING DELTA");
    await ok("INSERT INTO events VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')");
  });

  it("brings back rows a deletion vector removed", async () => {
    const deleteVersion = await deleteEvenIds("rs.s.events");
    expect(deleteVersion).toBe(2);
    expect(await rows("events")).toEqual([
      [1, "a"],
      [3, "c"],
    ]);
    const detail = await ok("DESCRIBE DETAIL events");
    const stats = detail.rows[0][detail.columns.findIndex((c) => c.name === "statistics")];
    expect(stats).toEqual({ numRowsDeletedByDeletionVectors: 2, numDeletionVectors: 1 });

    const res = await ok("RESTORE TABLE events TO VERSION AS OF 1");
    expect(res.version).toBe(3);
    expect(res.columns.map((c) => c.name)).toEqual([
      "table_size_after_restore",
      "num_of_files_after_restore",
      "num_removed_files",
      "num_restored_files",
      "removed_files_size",
      "restored_files_size",
    ]);
    // The same data file comes back without its deletion vector: one add, one remove.
    expect(res.rows[0].slice(1, 4)).toEqual([1, 1, 1]);
    expect(await rows("events")).toEqual([
      [1, "a"],
      [2, "b"],
      [3, "c"],
      [4, "d"],
    ]);
    const [last] = await history("events");
    expect(last).toMatchObject({
      version: 3,
      operation: "RESTORE",
      parameters: { version: "1", timestamp: null },
    });
    expect(Object.keys(last.metrics).sort()).toEqual([
      "numOfFilesAfterRestore",
      "numRemovedFiles",
      "numRestoredFiles",
      "removedFilesSize",
      "restoredFilesSize",
      "tableSizeAfterRestore",
    ]);
  });

  it("restores the deletion vector too, going forward again", async () => {
    await ok("RESTORE events TO VERSION AS OF 2");
    expect(await rows("events")).toEqual([
      [1, "a"],
      [3, "c"],
    ]);
  });

  it("reads and restores by timestamp", async () => {
    const h = await history("events");
    const v1 = h.find((e) => e.version === 1)!.timestamp;
    const travelled = await ok(`SELECT * FROM events TIMESTAMP AS OF '${v1}' ORDER BY id`);
    expect(travelled.rows).toHaveLength(4);
    const res = await ok(`RESTORE TABLE events TO TIMESTAMP AS OF '${v1}'`);
    expect(await rows("events")).toHaveLength(4);
    const [last] = await history("events");
    expect(last.version).toBe(res.version);
    expect(last.parameters.version).toBeNull();
    expect(last.parameters.timestamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+$/);
  });

  it("fails outside the table's versions and times, changing nothing", async () => {
    const latest = (await history("events"))[0].version;
    const version = await failsUnchanged("events", () =>
      sql("RESTORE TABLE events TO VERSION AS OF 99"),
    );
    expect(version).toMatchObject({
      error_class: "DELTA_CANNOT_RESTORE_TABLE_VERSION",
      message: `Cannot restore table to version 99. Available versions: [0, ${latest}].`,
      sqlstate: "22003",
    });
    const later = await failsUnchanged("events", () =>
      sql("RESTORE TABLE events TO TIMESTAMP AS OF '2999-01-01 00:00:00'"),
    );
    expect(later.error_class).toBe("DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER");
    const earlier = await failsUnchanged("events", () =>
      sql("RESTORE TABLE events TO TIMESTAMP AS OF '2000-01-01'"),
    );
    expect(earlier.error_class).toBe("DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER");
    expect(earlier.message).toMatch(/^Cannot restore table to timestamp \(2000-01-01 00:00:00.0\)/);
  });

  it("carries the version range as parameters: time travel, then RESTORE from it", async () => {
    const latest = (await history("events"))[0].version;
    const travel = await openTable(silt.ctx, "rs.s.events", { version: 99 }).catch((e) => e);
    expect(travel).toBeInstanceOf(SiltError);
    expect(travel.errorClass).toBe("DELTA_VERSION_NOT_FOUND");
    expect(travel.parameters).toEqual({ userVersion: 99, earliest: 0, latest });
    const restore = await restoreTable(silt.ctx, "rs.s.events", { version: 99 }).catch((e) => e);
    expect(restore).toBeInstanceOf(SiltError);
    expect(restore.errorClass).toBe("DELTA_CANNOT_RESTORE_TABLE_VERSION");
    expect(restore.parameters).toEqual({ version: 99, startVersion: 0, endVersion: latest });
  });

  it("fails clearly when a file to bring back is gone (vacuumed), changing nothing", async () => {
    await ok("CREATE TABLE gone (id INT) USING DELTA");
    await ok("INSERT INTO gone VALUES (1), (2)");
    await ok("INSERT OVERWRITE gone VALUES (3)");
    const v1 = await openTable(silt.ctx, "rs.s.gone", { version: 1 });
    const key = fileKey(v1.snapshot.tableRoot, v1.snapshot.files[0].path);
    await silt.ctx.store.delete(key);
    const body = await failsUnchanged("gone", () => sql("RESTORE TABLE gone TO VERSION AS OF 1"));
    expect(body.error_class).toBe("SILT_RESTORE_FILES_MISSING");
    expect(body.message).toContain("Not all files from version 1 are available");
    expect(body.message).toContain(v1.snapshot.files[0].path);
  });

  it("brings back the schema and partitioning a replacement changed", async () => {
    await ok("CREATE TABLE shape (id INT, name STRING) USING DELTA");
    await ok("INSERT INTO shape VALUES (1, 'one'), (2, 'two')");
    await ok(`CREATE OR REPLACE TABLE shape USING DELTA PARTITIONED BY (bucket)
              AS SELECT id * 1.5 AS score, id % 2 AS bucket FROM shape`);
    const maxId = async () => {
      const d = await ok("DESCRIBE DETAIL shape");
      const props = d.rows[0][d.columns.findIndex((c) => c.name === "properties")] as Record<
        string,
        string
      >;
      return Number(props["delta.columnMapping.maxColumnId"]);
    };
    const replacedMax = await maxId();
    await ok("RESTORE TABLE shape TO VERSION AS OF 1");
    expect((await ok("DESCRIBE TABLE shape")).rows).toEqual([
      ["id", "int", null],
      ["name", "string", null],
    ]);
    expect(await rows("shape")).toEqual([
      [1, "one"],
      [2, "two"],
    ]);
    // Column ids never go back, so a later replacement cannot reuse one.
    expect(await maxId()).toBe(replacedMax);
    await ok("INSERT INTO shape VALUES (3, 'three')");
    expect(await rows("shape")).toHaveLength(3);
  });

  it("works as a JSON route", async () => {
    const res = await silt.call("POST", "/api/v1/tables/rs.s.shape/restore", { version: 2 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      restoredVersion: 2,
      metrics: { numOfFilesAfterRestore: 2, numRestoredFiles: 2 },
    });
    expect((await ok("SELECT score, bucket FROM shape ORDER BY score")).rows).toEqual([
      ["1.5", 1],
      ["3.0", 0],
    ]);
    const both = await silt.call("POST", "/api/v1/tables/rs.s.shape/restore", {
      version: 1,
      timestamp: "2026-10-03",
    });
    expect(both.status).toBe(400);
  });
});
