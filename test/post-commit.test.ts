/**
 * Post-commit work as configured per context (SiltContext.postCommit) and per commit
 * (CommitOptions.postCommit), with no process-wide setting between tests: the automatic
 * checkpoint, CommitResult.checkpointWritten, and tombstone expiry on the context's clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READ_WHOLE_TABLE } from "../lib/commit/conflicts.ts";
import { appendOperation, dmlOperation } from "../lib/commit/operation.ts";
import type { PostCommitConfig } from "../lib/commit/post-commit.ts";
import type { SiltContext } from "../lib/context.ts";
import type { Action } from "../lib/delta/actions.ts";
import { readCheckpoint } from "../lib/delta/checkpoint-reader.ts";
import { listLog } from "../lib/delta/log-listing.ts";
import { type CommitOptions, commit } from "../lib/ops/commit.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { createCatalog, createSchema } from "../lib/ops/namespaces.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { MILLIS_PER_DAY } from "../lib/values/calendar.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

const HOUR_MS = 3_600_000;
// Far from the wall clock, so expiry measured by Date.now would drop every tombstone.
const BASE = Date.UTC(2024, 0, 1);

let silt: SiltHarness;

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await createCatalog(silt.ctx, "c");
  await createSchema(silt.ctx, "c", "s");
});
afterAll(() => silt.close());

const contextWith = (postCommit: Partial<PostCommitConfig>, clock = silt.ctx.clock) => ({
  ...silt.ctx,
  postCommit,
  clock,
});

async function newTable(ctx: SiltContext, name: string, properties: Record<string, string>) {
  await createTable(ctx, {
    name: `c.s.${name}`,
    columns: [{ name: "id", type: "INT" }],
    properties,
  });
  return (await silt.ctx.catalog.getTable("c", "s", name)).location;
}

const added = (path: string): Action => ({
  add: { path, partitionValues: {}, size: 1, modificationTime: BASE, dataChange: true },
});

/** Commits `actions` through the commit builder, as every Silt operation does. */
async function commitActions(
  ctx: SiltContext,
  name: string,
  actions: Action[],
  opts: CommitOptions = {},
) {
  const t = await openTable(ctx, `c.s.${name}`);
  const operation = actions.some((a) => "remove" in a)
    ? dmlOperation("DELETE", {}, {}, READ_WHOLE_TABLE)
    : appendOperation([], {});
  return commit(ctx, t, operation, actions, opts);
}

const checkpointVersions = async (ctx: SiltContext, root: string) =>
  (await listLog(ctx.store, root)).checkpoints.map((c) => c.version);

describe("the automatic checkpoint", () => {
  it("follows the context's settings: await writes one at the interval and says so", async () => {
    const ctx = contextWith({ mode: "await" });
    const root = await newTable(ctx, "awaited", { "delta.checkpointInterval": "2" });
    const v1 = await commitActions(ctx, "awaited", [added("a.parquet")]);
    expect(v1.checkpointWritten).toBe(false);
    const v2 = await commitActions(ctx, "awaited", [added("b.parquet")]);
    expect(v2.version).toBe(2);
    expect(v2.checkpointWritten).toBe(true);
    expect(await checkpointVersions(ctx, root)).toEqual([2]);
  });

  it("follows the context's settings: off writes none", async () => {
    const ctx = contextWith({ mode: "off" });
    const root = await newTable(ctx, "off", { "delta.checkpointInterval": "2" });
    await commitActions(ctx, "off", [added("a.parquet")]);
    const v2 = await commitActions(ctx, "off", [added("b.parquet")]);
    expect(v2.version).toBe(2);
    expect(v2.checkpointWritten).toBe(false);
    expect(await checkpointVersions(ctx, root)).toEqual([]);
  });

  it("takes a commit's own settings over the context's, either way", async () => {
    const off = contextWith({ mode: "off" });
    const awaiting = contextWith({ mode: "await" });
    // Created where checkpoints run, so the process has seen the table's interval: a commit
    // without a metaData checkpoints at the interval this process last saw (post-commit.ts).
    const root = await newTable(awaiting, "override", { "delta.checkpointInterval": "2" });
    await commitActions(off, "override", [added("a.parquet")]);
    const v2 = await commitActions(off, "override", [added("b.parquet")], {
      postCommit: { mode: "await" },
    });
    expect(v2.checkpointWritten).toBe(true);
    expect(await checkpointVersions(off, root)).toEqual([2]);

    await commitActions(awaiting, "override", [added("c.parquet")]);
    const v4 = await commitActions(awaiting, "override", [added("d.parquet")], {
      postCommit: { mode: "off" },
    });
    expect(v4.version).toBe(4);
    expect(v4.checkpointWritten).toBe(false);
    expect(await checkpointVersions(awaiting, root)).toEqual([2]);
  });
});

describe("tombstone expiry in the automatic checkpoint", () => {
  /**
   * Removes a file at BASE, then commits version 3 (the interval) `later` ms after: the
   * checkpoint's tombstones, as the context's clock expires them (retention one day).
   */
  async function tombstonesAt(name: string, later: number): Promise<string[]> {
    let now = BASE;
    const ctx = contextWith({ mode: "await" }, () => now);
    const root = await newTable(ctx, name, {
      "delta.checkpointInterval": "3",
      "delta.deletedFileRetentionDuration": "interval 1 days",
    });
    await commitActions(ctx, name, [added("a.parquet")]);
    await commitActions(ctx, name, [
      { remove: { path: "a.parquet", deletionTimestamp: now, dataChange: true } },
    ]);
    now = BASE + later;
    const v3 = await commitActions(ctx, name, [added("b.parquet")]);
    expect(v3.checkpointWritten).toBe(true);
    const [checkpoint] = (await listLog(ctx.store, root)).checkpoints;
    const actions = await readCheckpoint(ctx.store, root, checkpoint);
    return actions.flatMap((a) => ("remove" in a ? [a.remove.path] : []));
  }

  it("keeps a tombstone younger than the retention by the context's clock", async () => {
    expect(await tombstonesAt("young", HOUR_MS)).toEqual(["a.parquet"]);
  });

  it("drops a tombstone older than the retention by the context's clock", async () => {
    expect(await tombstonesAt("old", 2 * MILLIS_PER_DAY)).toEqual([]);
  });
});
