/**
 * The storage sweep that scheduled maintenance runs after the tables (lib/ops/sweep-orphans.ts):
 * staging entries a Unity Catalog client never finalized, creates and drops whose writer died,
 * and files no table owns are released and deleted once the catalog's stale window has passed;
 * live tables, recent files and what is not a table's are left alone.
 */
import { mkdtemp, rm, utimes } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_STALE_AFTER_MS } from "../lib/catalog/catalog-store.ts";
import type { SiltContext } from "../lib/context.ts";
import { silentLogger } from "../lib/logger.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { stageTable } from "../lib/ops/stage-table.ts";
import { sweepOrphans } from "../lib/ops/sweep-orphans.ts";
import { buildContext } from "../lib/runtime/context-factory.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import { listAll } from "../lib/storage/object-store.ts";

let dir: string;
let ctx: SiltContext;
/** How far the context's clock runs ahead of the file system's. */
let ahead = 0;

const columns = [{ name: "id", type: "INT" }];
const keysUnder = async (prefix: string) => (await listAll(ctx.store, prefix)).map((o) => o.key);
const plenty = { remainingMs: () => 60 * 60_000, minMs: 1000 };

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "silt-sweep-"));
  ctx = await buildContext({
    memory: true,
    store: new LocalObjectStore(dir),
    storageRootUri: pathToFileURL(dir).href,
    logger: silentLogger,
    clock: () => Date.now() + ahead,
  });
  await ctx.catalog.createCatalog("c", { owner: "silt" });
  await ctx.catalog.createSchema("c", "s", { owner: "silt" });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the storage sweep", () => {
  it("releases and deletes only what the stale window has given up", async () => {
    const live = await createTable(ctx, { name: "c.s.live", columns });
    const liveEntry = await ctx.catalog.getTable("c", "s", "live");
    // A client staged a table and wrote its version 0, then never finalized it.
    const staged = await stageTable(ctx, { catalog: "c", schema: "s", table: "staged" });
    const v0 = `${staged.entry.location}_delta_log/00000000000000000000.json`;
    await ctx.store.put(v0, new TextEncoder().encode("{}\n"));
    // Another client's staging entry was taken over by a create of its name: its files are
    // nobody's now.
    const lost = await stageTable(ctx, { catalog: "c", schema: "s", table: "taken" });
    await ctx.store.put(`${lost.entry.location}_delta_log/x.json`, new TextEncoder().encode("{}"));
    await createTable(ctx, { name: "c.s.taken", columns });
    expect(await ctx.catalog.findTableById(lost.entry.tableId)).toBeUndefined();
    // A drop that died after marking the table.
    await createTable(ctx, { name: "c.s.doomed", columns });
    const doomed = await ctx.catalog.beginDropTable(await ctx.catalog.getTable("c", "s", "doomed"));
    await ctx.store.put("tables/loose.txt", new TextEncoder().encode("not a table"));

    const before = await keysUnder("tables/");
    const early = await sweepOrphans(ctx, plenty);
    expect(early).toEqual({
      prefixes: 5,
      entriesReleased: 0,
      prefixesDeleted: 0,
      objectsDeleted: 0,
      complete: true,
    });
    expect(await keysUnder("tables/")).toEqual(before);

    ahead = DEFAULT_STALE_AFTER_MS + 60_000;
    // One orphan was written to just now (by the clock's reckoning): it stays a while longer.
    const fresh = "tables/0fresh/part-0.parquet";
    await ctx.store.put(fresh, new TextEncoder().encode("recent"));
    const future = new Date(Date.now() + ahead);
    await utimes(path.join(dir, fresh), future, future);

    const swept = await sweepOrphans(ctx, plenty);
    expect(swept).toMatchObject({
      prefixes: 6,
      entriesReleased: 2,
      prefixesDeleted: 3,
      complete: true,
    });
    expect(await keysUnder(staged.entry.location)).toEqual([]);
    expect(await keysUnder(lost.entry.location)).toEqual([]);
    expect(await keysUnder(doomed.location)).toEqual([]);
    expect(await ctx.catalog.findTableById(staged.entry.tableId)).toBeUndefined();
    expect(await ctx.catalog.findTableById(doomed.tableId)).toBeUndefined();
    expect(await keysUnder("tables/0fresh/")).toEqual([fresh]);
    expect(await keysUnder("tables/loose.txt")).toEqual(["tables/loose.txt"]);
    // The live tables are whole, and the released name can be created again.
    expect((await openTable(ctx, "c.s.live")).snapshot.version).toBe(live.version);
    expect(await ctx.catalog.getTable("c", "s", "live")).toEqual(liveEntry);
    expect((await openTable(ctx, "c.s.taken")).snapshot.version).toBe(0);
    await createTable(ctx, { name: "c.s.staged", columns });
    await createTable(ctx, { name: "c.s.doomed", columns });
  });

  it("looks at nothing when no time is left, and says it did not finish", async () => {
    const before = await keysUnder("tables/");
    const none = await sweepOrphans(ctx, { remainingMs: () => 0, minMs: 1000 });
    expect(none).toMatchObject({ prefixes: 0, prefixesDeleted: 0, complete: false });
    expect(await keysUnder("tables/")).toEqual(before);
  });
});
