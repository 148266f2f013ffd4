/**
 * Scheduled maintenance through the maintenance function's handler, on the stand-ins, with the
 * EventBridge "Scheduled Event" it receives: which steps each table's properties and log call
 * for, one table's failure not stopping the others, the Lambda time limit (stop, resume where it
 * stopped, round-robin), and the summary line that is also the metric record.
 */
import type { Context, ScheduledEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readLastCheckpoint } from "../lib/delta/checkpoint-reader.ts";
import { planMaintenance, roundRobin } from "../lib/ops/maintenance-plan.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { contextFromEnv } from "../lib/runtime/lambda.ts";
import { CURSOR_KEY, type MaintenanceRunResult } from "../lib/runtime/maintenance-handler.ts";
import {
  captureStdout,
  type HttpHandler,
  type LambdaEnv,
  lambdaContext,
  sqlThroughHandler,
  startLambdaEnv,
} from "./helpers/lambda-env.ts";

type MaintenanceHandler = (e: ScheduledEvent, c?: Context) => Promise<MaintenanceRunResult>;

const MINUTE = 60_000;
const scheduled: ScheduledEvent = {
  version: "0",
  id: "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
  "detail-type": "Scheduled Event",
  source: "aws.events",
  account: "123456789012",
  time: "2026-01-01T03:00:00Z",
  region: "us-east-1",
  resources: ["arn:aws:events:us-east-1:123456789012:rule/Silt-MaintenanceSchedule"],
  detail: {},
};

let env: LambdaEnv;
let sql: HttpHandler;
let maintain: MaintenanceHandler;

const { ok, operations } = sqlThroughHandler(() => sql);
const liveFiles = async (table: string) =>
  (await openTable(await contextFromEnv(), table)).snapshot.files;
const cursor = async () =>
  JSON.parse(new TextDecoder().decode(await (await contextFromEnv()).store.get(CURSOR_KEY))).next;

beforeAll(async () => {
  env = await startLambdaEnv();
  // Commit-time checkpoints off, so tables fall behind and the run has checkpoints to write
  // (the functions' context reads it; env.close() restores the environment).
  process.env.SILT_POST_COMMIT = "off";
  sql = (await import("../functions/sql.ts")).handler as unknown as HttpHandler;
  maintain = (await import("../functions/maintenance.ts")).handler as MaintenanceHandler;
  await ok("CREATE CATALOG maint");
  await ok("CREATE SCHEMA maint.s");
  await ok(
    "CREATE TABLE maint.s.busy (id INT, v STRING) USING DELTA TBLPROPERTIES (" +
      "'silt.maintenance.optimize' = 'true', 'silt.maintenance.vacuum' = 'LITE', " +
      "'delta.deletedFileRetentionDuration' = 'interval 0 hours', 'delta.checkpointInterval' = '3')",
  );
  await ok(
    "CREATE TABLE maint.s.quiet (id INT, v STRING) USING DELTA TBLPROPERTIES (" +
      "'silt.maintenance.optimize' = 'false', 'delta.checkpointInterval' = '3', " +
      "'delta.enableExpiredLogCleanup' = 'false')",
  );
  await ok(
    "CREATE TABLE maint.s.broken (id INT) USING DELTA TBLPROPERTIES (" +
      "'silt.maintenance.optimize' = 'true')",
  );
  for (let i = 1; i <= 4; i++) {
    await ok(`INSERT INTO maint.s.busy VALUES (${i}, 'b${i}')`);
    await ok(`INSERT INTO maint.s.quiet VALUES (${i}, 'q${i}')`);
  }
  await ok("INSERT INTO maint.s.broken VALUES (1)");
  await ok("INSERT INTO maint.s.broken VALUES (2)");
  // Fault injection: a data file of `broken` disappears behind the log's back.
  const ctx = await contextFromEnv();
  const broken = await openTable(ctx, "maint.s.broken");
  await ctx.store.delete(`${broken.entry.location}${broken.snapshot.files[0]!.path}`);
});
afterAll(async () => {
  await env?.close();
});

describe("planning", () => {
  const state = (configuration: Record<string, string>, version = 5, checkpointVersion?: number) =>
    planMaintenance({ version, checkpointVersion, configuration });

  it("checkpoints a table an interval or more behind and cleans the log of tables with one", () => {
    expect(state({}, 9).steps).toEqual([]);
    expect(state({}, 10).steps).toEqual([{ kind: "checkpoint" }, { kind: "logCleanup" }]);
    expect(state({}, 19, 10).steps).toEqual([{ kind: "logCleanup" }]);
    expect(state({}, 20, 10).steps.map((s) => s.kind)).toEqual(["checkpoint", "logCleanup"]);
    expect(state({ "delta.checkpointInterval": "2" }, 2).steps.map((s) => s.kind)).toEqual([
      "checkpoint",
      "logCleanup",
    ]);
    expect(state({ "delta.enableExpiredLogCleanup": "false" }, 30, 20).steps).toEqual([
      { kind: "checkpoint" },
    ]);
  });

  it("runs OPTIMIZE and VACUUM only when the table's properties ask, in that order", () => {
    const plan = state({
      "silt.maintenance.vacuum": "true",
      "silt.maintenance.optimize": "TRUE",
    });
    expect(plan).toEqual({
      steps: [{ kind: "optimize" }, { kind: "vacuum", mode: "full" }],
      ignored: [],
    });
    expect(state({ "silt.maintenance.vacuum": " lite " }).steps).toEqual([
      { kind: "vacuum", mode: "lite" },
    ]);
    expect(
      state({ "silt.maintenance.optimize": "false", "silt.maintenance.vacuum": "false" }).steps,
    ).toEqual([]);
  });

  it("ignores unknown values, reporting them, instead of failing", () => {
    expect(state({ "silt.maintenance.optimize": "yes", "silt.maintenance.vacuum": "0" })).toEqual({
      steps: [],
      ignored: [
        { property: "silt.maintenance.optimize", value: "yes" },
        { property: "silt.maintenance.vacuum", value: "0" },
      ],
    });
  });

  it("orders tables round-robin from the cursor", () => {
    const tables = ["c.s.t3", "c.s.t1", "c.s.t2"];
    expect(roundRobin(tables, undefined)).toEqual(["c.s.t1", "c.s.t2", "c.s.t3"]);
    expect(roundRobin(tables, "c.s.t2")).toEqual(["c.s.t2", "c.s.t3", "c.s.t1"]);
    // The cursor's table was dropped: start at the next one.
    expect(roundRobin(tables, "c.s.t25")).toEqual(["c.s.t3", "c.s.t1", "c.s.t2"]);
    expect(roundRobin(tables, "c.s.t9")).toEqual(["c.s.t1", "c.s.t2", "c.s.t3"]);
  });
});

describe("a scheduled run", () => {
  it("maintains each table as asked, and one table's failure does not stop the others", async () => {
    const busyFiles = await liveFiles("maint.s.busy");
    const quietFiles = await liveFiles("maint.s.quiet");
    expect(busyFiles).toHaveLength(4);
    const store = (await contextFromEnv()).store;
    const busyLocation = (await openTable(await contextFromEnv(), "maint.s.busy")).entry.location;

    const { result, lines } = await captureStdout(() =>
      maintain(
        scheduled,
        lambdaContext("maint-1", () => 14 * MINUTE),
      ),
    );
    const outcome = Object.fromEntries(result.tables.map((t) => [t.table, t]));
    expect(Object.keys(outcome).sort()).toEqual([
      "maint.s.broken",
      "maint.s.busy",
      "maint.s.quiet",
    ]);
    expect(result.notReached).toBe(0);
    // Every table reached with time left: the storage sweep ran, and found nothing abandoned.
    expect(result.sweep).toMatchObject({
      prefixes: 3,
      entriesReleased: 0,
      prefixesDeleted: 0,
      complete: true,
    });

    // busy: checkpoint, OPTIMIZE of the four small files, VACUUM of the files it replaced.
    expect(outcome["maint.s.busy"]).toMatchObject({
      finished: true,
      steps: [
        { step: "checkpoint", ok: true, detail: { version: 4 } },
        { step: "optimize", ok: true, detail: { committed: true, numFilesRemoved: 4 } },
        { step: "vacuum", ok: true, detail: { mode: "lite", numDeletedFiles: 4 } },
        { step: "logCleanup", ok: true },
      ],
    });
    expect(await operations("maint.s.busy")).toEqual([
      "VACUUM END",
      "VACUUM START",
      "OPTIMIZE",
      "WRITE",
      "WRITE",
      "WRITE",
      "WRITE",
      "CREATE TABLE",
    ]);
    expect((await ok("SELECT * FROM maint.s.busy ORDER BY id")).rows).toEqual([
      [1, "b1"],
      [2, "b2"],
      [3, "b3"],
      [4, "b4"],
    ]);
    expect(await liveFiles("maint.s.busy")).toHaveLength(1);
    for (const f of busyFiles) expect(await store.head(`${busyLocation}${f.path}`)).toBeUndefined();

    // quiet: asked for nothing (and turned log cleanup off), so only the missing checkpoint.
    expect(outcome["maint.s.quiet"]!.steps.map((s) => [s.step, s.ok])).toEqual([
      ["checkpoint", true],
    ]);
    expect(await operations("maint.s.quiet")).toEqual([
      "WRITE",
      "WRITE",
      "WRITE",
      "WRITE",
      "CREATE TABLE",
    ]);
    expect((await liveFiles("maint.s.quiet")).map((f) => f.path)).toEqual(
      quietFiles.map((f) => f.path),
    );
    const quietLocation = (await openTable(await contextFromEnv(), "maint.s.quiet")).entry.location;
    expect((await readLastCheckpoint(store, quietLocation))?.version).toBe(4);

    // broken: its OPTIMIZE failed; logged and counted, nothing committed.
    expect(outcome["maint.s.broken"]).toMatchObject({
      finished: true,
      steps: [{ step: "optimize", ok: false }],
    });
    expect(await operations("maint.s.broken")).toEqual(["WRITE", "WRITE", "CREATE TABLE"]);
    expect(
      lines.find((l) => l.message === "maintenance step failed" && l.table === "maint.s.broken"),
    ).toMatchObject({ level: "error", step: "optimize", requestId: "maint-1" });

    // The summary is the run's metric record; commits were reported as they happened.
    const summary = lines.find((l) => l.message === "maintenance run done");
    expect(summary).toMatchObject({
      requestId: "maint-1",
      scheduledTime: "2026-01-01T03:00:00Z",
      Operation: "MAINTENANCE",
      TablesMaintained: 3,
      MaintenanceFailures: 1,
      tablesInCatalog: 3,
      notReached: 0,
    });
    expect(lines.filter((l) => l.message === "commit").map((l) => [l.table, l.Operation])).toEqual([
      ["maint.s.busy", "OPTIMIZE"],
      ["maint.s.busy", "VACUUM START"],
      ["maint.s.busy", "VACUUM END"],
    ]);
    // A full pass: the next run starts from the beginning again.
    expect(await cursor()).toBe(result.tables[0]!.table);
  });

  it("commits nothing when there is nothing to compact or delete: no empty VACUUM pair", async () => {
    const before = await operations("maint.s.busy");
    const result = await maintain(
      scheduled,
      lambdaContext("maint-2", () => 14 * MINUTE),
    );
    const busy = result.tables.find((t) => t.table === "maint.s.busy")!;
    expect(busy.steps).toMatchObject([
      // The last run's three commits put it an interval (3) past its checkpoint again.
      { step: "checkpoint", ok: true, detail: { version: 7 } },
      { step: "optimize", ok: true, detail: { committed: false } },
      { step: "vacuum", ok: true, detail: { numDeletedFiles: 0 } },
      { step: "logCleanup", ok: true },
    ]);
    expect(await operations("maint.s.busy")).toEqual(before);
  });

  it("stops within the time limit and resumes where it stopped", async () => {
    await ok("INSERT INTO maint.s.quiet VALUES (5, 'q5')");
    await ok("INSERT INTO maint.s.quiet VALUES (6, 'q6')");
    await ok("INSERT INTO maint.s.quiet VALUES (7, 'q7')");
    const start = await cursor();
    // Too little time to start anything: nothing done, the cursor stays.
    const idle = await maintain(
      scheduled,
      lambdaContext("maint-3", () => MINUTE),
    );
    expect(idle).toMatchObject({ tables: [], notReached: 3 });
    expect(idle.sweep).toBeUndefined();
    expect(await cursor()).toBe(start);

    // Time for one table to start, not for its steps: it is where the next run starts.
    let calls = 0;
    const cut = await maintain(
      scheduled,
      lambdaContext("maint-4", () => (calls++ === 0 ? 10 * MINUTE : MINUTE)),
    );
    expect(cut.tables).toEqual([{ table: start, steps: [], finished: false }]);
    expect(cut.notReached).toBe(2);
    expect(await cursor()).toBe(start);

    const resumed = await maintain(
      scheduled,
      lambdaContext("maint-5", () => 14 * MINUTE),
    );
    expect(resumed.tables.map((t) => t.table)).toEqual(
      roundRobin(["maint.s.broken", "maint.s.busy", "maint.s.quiet"], start),
    );
    const quiet = resumed.tables.find((t) => t.table === "maint.s.quiet")!;
    expect(quiet.steps.map((s) => s.step)).toEqual(["checkpoint"]);
    const store = (await contextFromEnv()).store;
    const location = (await openTable(await contextFromEnv(), "maint.s.quiet")).entry.location;
    expect((await readLastCheckpoint(store, location))?.version).toBe(7);
  });
});
