/**
 * Checkpoints and log cleanup: automatic V2 checkpoints written by the commit that crosses the
 * interval, their Parquet layout (read back by hyparquet through the reader, and by DuckDB as an
 * independent check), sidecars, `_last_checkpoint`, failure while checkpointing, and metadata
 * cleanup following PROTOCOL.md's rules with an explicit clock.
 */
import { cp, mkdtemp, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type CheckpointResult,
  CLASSIC_EVERY,
  type WriteCheckpointOptions,
  writeCheckpoint,
  writeCheckpointState,
} from "../lib/commit/checkpoint-writer.ts";
import { autoCheckpoint, flushPostCommitWork } from "../lib/commit/post-commit.ts";
import { commitTransaction } from "../lib/commit/transaction.ts";
import type { SiltContext } from "../lib/context.ts";
import {
  type Action,
  type AddFile,
  commitFileName,
  type DomainMetadata,
  LOG_DIR,
  type Metadata,
  type Protocol,
  parseActions,
  type RemoveFile,
  type Txn,
} from "../lib/delta/actions.ts";
import { readCheckpoint, readParquetActions } from "../lib/delta/checkpoint-reader.ts";
import { checkpointStateFromLog } from "../lib/delta/checkpoint-state.ts";
import { inlineDeletionVector } from "../lib/delta/deletion-vectors.ts";
import { lastCheckpointChecksum } from "../lib/delta/last-checkpoint-checksum.ts";
import { cleanupLog } from "../lib/delta/log-cleanup.ts";
import { listLog, padVersion } from "../lib/delta/log-listing.ts";
import { loadSnapshot, logicalFileKey, type Snapshot } from "../lib/delta/snapshot.ts";
import { checkpointInterval, logRetentionMs, parseIntervalMs } from "../lib/delta/table-config.ts";
import { SiltError } from "../lib/errors.ts";
import type { LogFields, Logger } from "../lib/logger.ts";
import { appendRows } from "../lib/ops/append.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { createCatalog, createSchema } from "../lib/ops/namespaces.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import { listAll, type ObjectInfo, type ObjectStore } from "../lib/storage/object-store.ts";
import { MILLIS_PER_DAY as DAY_MS } from "../lib/values/calendar.ts";
import { FIXTURES } from "./helpers/fixtures.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

// ---------------------------------------------------------------------------------------------
// Helpers

/** Delegates to a store, counting reads, and failing writes whose key matches `failPut`. */
class WrappedStore implements ObjectStore {
  gets: string[] = [];
  lists: { prefix: string; startAfter?: string }[] = [];
  failPut: RegExp | undefined;
  constructor(readonly inner: ObjectStore) {}
  get(key: string) {
    this.gets.push(key);
    return this.inner.get(key);
  }
  getRange(key: string, start: number, end: number) {
    return this.inner.getRange(key, start, end);
  }
  getSuffix(key: string, length: number) {
    return this.inner.getSuffix(key, length);
  }
  head(key: string) {
    return this.inner.head(key);
  }
  put(key: string, body: Uint8Array) {
    this.check(key);
    return this.inner.put(key, body);
  }
  putIfAbsent(key: string, body: Uint8Array) {
    this.check(key);
    return this.inner.putIfAbsent(key, body);
  }
  list(prefix: string, options?: { startAfter?: string }): AsyncIterable<ObjectInfo> {
    this.lists.push({ prefix, ...options });
    return this.inner.list(prefix, options);
  }
  delete(key: string) {
    return this.inner.delete(key);
  }
  deleteMany(keys: string[]) {
    return this.inner.deleteMany(keys);
  }
  copyIfAbsent(src: string, dst: string) {
    return this.inner.copyIfAbsent(src, dst);
  }
  private check(key: string) {
    if (this.failPut?.test(key)) throw new Error(`injected failure writing ${key}`);
  }
}

interface State {
  protocol: Protocol;
  metadata: Metadata;
  files: AddFile[];
  tombstones: RemoveFile[];
  txns: Txn[];
  domains: DomainMetadata[];
}

/**
 * An independent, deliberately plain replay of the JSON commits 0..version, read straight from
 * the store: the state every checkpoint-based load must equal.
 */
async function jsonReplay(store: ObjectStore, root: string, version: number): Promise<State> {
  let protocol: Protocol | undefined;
  let metadata: Metadata | undefined;
  const files = new Map<string, AddFile>();
  const tombstones = new Map<string, RemoveFile>();
  const txns = new Map<string, Txn>();
  const domains = new Map<string, DomainMetadata>();
  for (let v = 0; v <= version; v++) {
    const text = new TextDecoder().decode(await store.get(`${root}${LOG_DIR}${commitFileName(v)}`));
    for (const a of parseActions(text)) {
      if ("protocol" in a) protocol = a.protocol;
      else if ("metaData" in a) metadata = a.metaData;
      else if ("txn" in a) txns.set(a.txn.appId, a.txn);
      else if ("domainMetadata" in a) domains.set(a.domainMetadata.domain, a.domainMetadata);
      else if ("add" in a) {
        const key = logicalFileKey(a.add);
        tombstones.delete(key);
        files.set(key, a.add);
      } else if ("remove" in a) {
        const key = logicalFileKey(a.remove);
        files.delete(key);
        tombstones.set(key, a.remove);
      }
    }
  }
  return canonical({
    protocol: protocol!,
    metadata: metadata!,
    files: [...files.values()],
    tombstones: [...tombstones.values()],
    txns: [...txns.values()],
    domains: [...domains.values()].filter((d) => !d.removed),
  });
}

function stateOf(s: Snapshot): State {
  return canonical({
    protocol: s.protocol,
    metadata: s.metadata,
    files: s.files,
    tombstones: s.tombstones,
    txns: [...s.txns.values()],
    domains: [...s.domainMetadata.values()],
  });
}

/** What a written checkpoint holds, sidecars followed, in the form `canonical` compares. */
async function checkpointContent(
  store: ObjectStore,
  root: string,
  written: CheckpointResult,
): Promise<State & { numOfAddFiles: string | undefined }> {
  const actions = await readCheckpoint(store, root, {
    version: written.version,
    kind: "v2",
    format: "parquet",
    keys: [written.key],
    size: written.sizeInBytes,
    lastModified: 0,
  });
  const pick = <K extends string, T>(key: K) =>
    actions.flatMap((a) => (key in a ? [(a as Record<K, T>)[key]] : []));
  return {
    ...canonical({
      protocol: pick<"protocol", Protocol>("protocol")[0]!,
      metadata: pick<"metaData", Metadata>("metaData")[0]!,
      files: pick<"add", AddFile>("add"),
      tombstones: pick<"remove", RemoveFile>("remove"),
      txns: pick<"txn", Txn>("txn"),
      domains: pick<"domainMetadata", DomainMetadata>("domainMetadata"),
    }),
    numOfAddFiles: actions.find((a) => "checkpointMetadata" in a)?.checkpointMetadata.tags
      ?.numOfAddFiles,
  };
}

/**
 * The checkpoint of `version` written both ways: from the loaded snapshot (every file in memory)
 * and streamed from the previous checkpoint plus the commits after it, through `reads` (so the
 * caller can see what the stream read). The snapshot is loaded first, so neither path can start
 * from the other's checkpoint.
 */
async function checkpointBothWays(
  store: ObjectStore,
  reads: ObjectStore,
  root: string,
  version: number,
  opts: WriteCheckpointOptions,
): Promise<{ fromMemory: CheckpointResult; streamed: CheckpointResult }> {
  const snapshot = await loadSnapshot(store, root, { version });
  const state = await checkpointStateFromLog(reads, root, version);
  expect(state, "a previous checkpoint to stream from").toBeDefined();
  const fromMemory = await writeCheckpoint(store, root, snapshot, opts);
  const streamed = await writeCheckpointState(reads, root, state!, opts);
  for (const k of ["numOfAddFiles", "numTombstones", "numActions"] as const) {
    expect(streamed[k], k).toBe(fromMemory[k]);
  }
  expect(await checkpointContent(store, root, streamed)).toEqual(
    await checkpointContent(store, root, fromMemory),
  );
  return { fromMemory, streamed };
}

/**
 * Order-free, and with null optional fields dropped (JSON writes `"description":null`, Parquet
 * has a null that reads back as absent; Delta treats both alike). Checkpoint tombstones carry no
 * stats or tags by design, so neither side keeps them.
 */
function canonical(s: State): State {
  const strip = <T>(v: T): T =>
    JSON.parse(JSON.stringify(v), (_k, x) => (x === null ? undefined : x)) as T;
  const byKey = <T extends AddFile | RemoveFile>(a: T, b: T) =>
    logicalFileKey(a) < logicalFileKey(b) ? -1 : 1;
  return {
    protocol: strip(s.protocol),
    metadata: strip(s.metadata),
    files: strip([...s.files].sort(byKey)),
    tombstones: strip(
      [...s.tombstones].map(({ stats: _s, tags: _t, ...rest }) => rest as RemoveFile).sort(byKey),
    ),
    txns: strip([...s.txns].sort((a, b) => (a.appId < b.appId ? -1 : 1))),
    domains: strip([...s.domains].sort((a, b) => (a.domain < b.domain ? -1 : 1))),
  };
}

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

async function logNames(store: ObjectStore, root: string): Promise<string[]> {
  const prefix = `${root}${LOG_DIR}`;
  return (await listAll(store, prefix)).map((o) => o.key.slice(prefix.length));
}

const checkpointNames = (names: string[]) =>
  names.filter((n) => /^\d{20}\.checkpoint\./.test(n)).sort();

async function duckCount(file: string, where = "true"): Promise<number> {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const r = await conn.runAndReadAll(
      `SELECT count(*) FROM read_parquet('${file.replaceAll("'", "''")}') WHERE ${where}`,
    );
    return Number(r.getRows()[0]![0]);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

function capturingLogger(): Logger & {
  lines: { level: string; message: string; f?: LogFields }[];
} {
  const lines: { level: string; message: string; f?: LogFields }[] = [];
  const logger = {
    lines,
    info: (message: string, f?: LogFields) => lines.push({ level: "info", message, f }),
    warn: (message: string, f?: LogFields) => lines.push({ level: "warn", message, f }),
    error: (message: string, f?: LogFields) => lines.push({ level: "error", message, f }),
    child: () => logger,
  };
  return logger;
}

// ---------------------------------------------------------------------------------------------

describe("checkpoints", () => {
  let silt: SiltHarness;
  let ctx: SiltContext;
  let store: LocalObjectStore;

  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    ctx = silt.ctx;
    store = ctx.store as LocalObjectStore;
    await createCatalog(ctx, "c");
    await createSchema(ctx, "c", "s");
  });
  afterAll(() => silt.close());
  afterEach(async () => {
    await flushPostCommitWork();
    ctx = silt.ctx;
  });

  async function newTable(
    name: string,
    properties: Record<string, string> = {},
    c: SiltContext = ctx,
  ): Promise<{ root: string; tableId: string }> {
    await createTable(c, {
      name: `c.s.${name}`,
      columns: [
        { name: "id", type: "INT" },
        { name: "part", type: "STRING" },
      ],
      partitionedBy: ["part"],
      properties,
    });
    const entry = await ctx.catalog.getTable("c", "s", name);
    return { root: entry.location, tableId: entry.tableId };
  }

  /** A raw commit through the real commit loop, for actions no op writes yet. */
  async function commitRaw(name: string, actions: Action[], c: SiltContext = ctx) {
    const t = await openTable(c, `c.s.${name}`);
    return commitTransaction({
      store: c.store,
      arbiter: c.arbiter,
      tableId: t.entry.tableId,
      tableRoot: t.entry.location,
      readVersion: t.snapshot.version,
      previousTimestamp: t.snapshot.timestamp,
      actions,
      commitInfo: { operation: "MANUAL UPDATE" },
      clock: c.clock,
      postCommit: c.postCommit,
    });
  }

  /** Replaces a live file by itself with a deletion vector over `rows` (what DELETE commits). */
  async function addDeletionVector(name: string, index: number, rows: number[]) {
    const t = await openTable(ctx, `c.s.${name}`);
    const file = t.snapshot.files
      .filter((f) => !f.deletionVector)
      .sort((a, b) => (a.path < b.path ? -1 : 1))[index]!;
    const now = ctx.clock();
    return commitRaw(name, [
      {
        remove: {
          path: file.path,
          deletionTimestamp: now,
          dataChange: true,
          extendedFileMetadata: true,
          partitionValues: file.partitionValues,
          size: file.size,
          stats: file.stats ?? null,
          tags: { note: "tombstone tag" },
          deletionVector: file.deletionVector ?? null,
          baseRowId: file.baseRowId ?? null,
          defaultRowCommitVersion: file.defaultRowCommitVersion ?? null,
        },
      },
      { add: { ...file, dataChange: true, deletionVector: inlineDeletionVector(rows) } },
    ]);
  }

  it("parses Spark interval syntax and reads the table's durations", () => {
    expect(parseIntervalMs("interval 30 days")).toBe(30 * DAY_MS);
    expect(parseIntervalMs("INTERVAL 1 WEEK")).toBe(7 * DAY_MS);
    expect(parseIntervalMs("interval 1 day 2 hours")).toBe(DAY_MS + 7_200_000);
    expect(parseIntervalMs("2 hours")).toBe(7_200_000);
    expect(parseIntervalMs("interval 1.5 seconds")).toBe(1500);
    expect(() => parseIntervalMs("interval 1 month")).toThrow(/fixed length/);
    expect(() => parseIntervalMs("interval -1 days")).toThrow(/negative/);
    expect(() => parseIntervalMs("soon")).toThrow();
    expect(logRetentionMs({})).toBe(30 * DAY_MS);
    expect(logRetentionMs({ "delta.logRetentionDuration": "interval 3 days" })).toBe(3 * DAY_MS);
    expect(logRetentionMs({ "delta.logRetentionDuration": "garbage" })).toBe(30 * DAY_MS);
    expect(checkpointInterval({})).toBe(10);
    expect(checkpointInterval({ "delta.checkpointInterval": "3" })).toBe(3);
    // Written as Java's Integer.parseInt reads it, which Delta (and Silt's validation) accept.
    expect(checkpointInterval({ "delta.checkpointInterval": "+5" })).toBe(5);
    expect(checkpointInterval({ "delta.checkpointInterval": "0" })).toBe(10);
  });

  it("writes a V2 checkpoint at versions 10 and 20 whose state equals a replay of every commit", async () => {
    const { root } = await newTable("auto");
    const txnApps: string[] = [];
    for (let i = 1; i <= 23; i++) {
      if (i === 4 || i === 13) {
        await commitRaw("auto", [
          { txn: { appId: `app-${i}`, version: i, lastUpdated: 1000 + i } },
          {
            domainMetadata: {
              domain: `custom.d${i}`,
              configuration: JSON.stringify({ i }),
              removed: false,
            },
          },
        ]);
        txnApps.push(`app-${i}`);
      } else if (i === 7 || i === 16) {
        await addDeletionVector("auto", 1, [0]);
      } else if (i === 18) {
        // A domain removed after the checkpoint at 10 kept it.
        await commitRaw("auto", [
          { domainMetadata: { domain: "custom.d4", configuration: "", removed: true } },
          { txn: { appId: "app-4", version: 99 } },
        ]);
      } else {
        await appendRows(ctx, "c.s.auto", {
          rows: [
            [i, `p${i % 3}`],
            [i + 100, `p${(i + 1) % 3}`],
          ],
        });
      }
    }
    const names = await logNames(store, root);
    const checkpoints = checkpointNames(names);
    expect(checkpoints).toHaveLength(2);
    expect(checkpoints[0]).toMatch(
      new RegExp(`^${padVersion(10)}\\.checkpoint\\.[0-9a-f-]{36}\\.parquet$`),
    );
    expect(checkpoints[1]).toMatch(
      new RegExp(`^${padVersion(20)}\\.checkpoint\\.[0-9a-f-]{36}\\.parquet$`),
    );
    expect(names.some((n) => n.startsWith("_sidecars/"))).toBe(false);

    // _last_checkpoint: Spark's keys, the checksum, and the file it names.
    const last = JSON.parse(decode(await store.get(`${root}${LOG_DIR}_last_checkpoint`)));
    expect(Object.keys(last)).toEqual([
      "version",
      "size",
      "sizeInBytes",
      "numOfAddFiles",
      "v2Checkpoint",
      "checksum",
    ]);
    expect(last.checksum).toBe(lastCheckpointChecksum(last));
    expect(last.version).toBe(20);
    expect(last.v2Checkpoint.path).toBe(checkpoints[1]);
    const topKey = `${root}${LOG_DIR}${checkpoints[1]}`;
    const info = (await store.head(topKey))!;
    expect(last.v2Checkpoint.sizeInBytes).toBe(info.size);
    expect(last.sizeInBytes).toBe(info.size);
    expect(last.v2Checkpoint.modificationTime).toBe(info.lastModified);
    // Inline checkpoints keep their file actions out of the hint (the reader would miss them).
    expect(last.v2Checkpoint.nonFileActions).toBeUndefined();

    // The file itself, decoded by hyparquet through the reader.
    const actions = await readParquetActions(await store.get(topKey));
    const kinds = actions.map((a) => Object.keys(a)[0]);
    expect(kinds.filter((k) => k === "checkpointMetadata")).toHaveLength(1);
    expect(kinds.filter((k) => k === "protocol")).toHaveLength(1);
    expect(kinds.filter((k) => k === "metaData")).toHaveLength(1);
    expect(kinds).not.toContain("commitInfo");
    expect(kinds).not.toContain("sidecar");
    const cm = actions.find((a) => "checkpointMetadata" in a) as {
      checkpointMetadata: { version: number };
    };
    expect(cm.checkpointMetadata.version).toBe(20);
    const snap20 = await loadSnapshot(store, root, { version: 20 });
    expect(kinds.filter((k) => k === "add")).toHaveLength(snap20.files.length);
    expect(last.numOfAddFiles).toBe(snap20.files.length);
    expect(last.size).toBe(actions.length);
    for (const a of actions) {
      if ("remove" in a) {
        expect(a.remove.stats).toBeUndefined();
        expect(a.remove.tags).toBeUndefined();
      }
    }

    // Latest, and time travel before, at and after each checkpoint, all equal the JSON replay.
    const latest = await loadSnapshot(store, root);
    expect(latest.version).toBe(23);
    expect(latest.checkpointVersion).toBe(20);
    expect(stateOf(latest)).toEqual(await jsonReplay(store, root, 23));
    for (const v of [5, 9, 10, 11, 15, 19, 20, 22]) {
      const s = await loadSnapshot(store, root, { version: v });
      expect(s.checkpointVersion).toBe(v >= 20 ? 20 : v >= 10 ? 10 : undefined);
      expect(stateOf(s), `version ${v}`).toEqual(await jsonReplay(store, root, v));
    }
    // What the replay covers: DVs, tombstones with stats stripped, txns, domains and a removal.
    const expected = await jsonReplay(store, root, 20);
    expect(expected.files.some((f) => f.deletionVector?.storageType === "i")).toBe(true);
    expect(expected.files.every((f) => f.baseRowId !== undefined && f.stats !== undefined)).toBe(
      true,
    );
    expect(expected.tombstones.length).toBeGreaterThan(0);
    expect(expected.txns.map((t) => [t.appId, t.version])).toEqual([
      ["app-13", 13],
      ["app-4", 99],
    ]);
    expect(expected.domains.map((d) => d.domain)).toContain("custom.d13");
    expect(expected.domains.map((d) => d.domain)).not.toContain("custom.d4");
    expect(expected.domains.map((d) => d.domain)).toContain("delta.rowTracking");

    // DuckDB reads the same file: one row per action, adds with their partition values.
    const file = path.join(store.rootDir, topKey);
    expect(await duckCount(file)).toBe(actions.length);
    expect(await duckCount(file, "add IS NOT NULL")).toBe(snap20.files.length);
    expect(await duckCount(file, "checkpointMetadata.version = 20")).toBe(1);
    expect(await duckCount(file, "protocol.minReaderVersion = 3")).toBe(1);
    expect(await duckCount(file, "add IS NOT NULL AND cardinality(add.partitionValues) = 1")).toBe(
      snap20.files.length,
    );
    expect(await duckCount(file, "add.deletionVector.storageType = 'i'")).toBe(
      snap20.files.filter((f) => f.deletionVector).length,
    );
  });

  it("drops tombstones past delta.deletedFileRetentionDuration", async () => {
    const { root } = await newTable("expiry");
    for (let i = 0; i < 3; i++) await appendRows(ctx, "c.s.expiry", { rows: [[i, "a"]] });
    await addDeletionVector("expiry", 0, [0]);
    const s = await loadSnapshot(store, root);
    expect(s.tombstones).toHaveLength(1);
    const kept = await writeCheckpoint(store, root, s, { now: ctx.clock() });
    expect(kept.numTombstones).toBe(1);
    const later = await writeCheckpoint(store, root, s, { now: ctx.clock() + 8 * DAY_MS });
    expect(later.numTombstones).toBe(0);
    expect(later.numOfAddFiles).toBe(s.files.length);
    const reread = await readParquetActions(await store.get(later.key));
    expect(reread.filter((a) => "remove" in a)).toHaveLength(0);
    expect(reread.filter((a) => "add" in a)).toHaveLength(s.files.length);
  });

  it("round-trips sidecars, written one bounded chunk at a time", async () => {
    const { root } = await newTable("sidecars");
    for (let i = 0; i < 6; i++) {
      await appendRows(ctx, "c.s.sidecars", {
        rows: [
          [i, "a"],
          [i, "b"],
        ],
      });
    }
    await addDeletionVector("sidecars", 2, [0]);
    const s = await loadSnapshot(store, root);
    const n = s.files.length + s.tombstones.length;
    expect(n).toBe(13);
    const result = await writeCheckpoint(store, root, s, {
      sidecarThreshold: 5,
      actionsPerSidecar: 4,
    });
    expect(result.sidecars.map((x) => x.path)).toHaveLength(Math.ceil(n / 4));
    for (const sc of result.sidecars) expect(sc.path).toMatch(/^[0-9a-f-]{36}\.parquet$/);

    // The top-level file: non-file actions and sidecar rows, no file actions.
    const top = await readParquetActions(await store.get(result.key));
    expect(top.filter((a) => "add" in a || "remove" in a)).toHaveLength(0);
    expect(top.filter((a) => "sidecar" in a)).toHaveLength(result.sidecars.length);
    const cm = top.find((a) => "checkpointMetadata" in a) as {
      checkpointMetadata: { tags: Record<string, string> };
    };
    expect(cm.checkpointMetadata.tags.sidecarNumActions).toBe(String(n));
    expect(cm.checkpointMetadata.tags.numOfAddFiles).toBe(String(s.files.length));
    expect(
      JSON.parse(cm.checkpointMetadata.tags.sidecarFileSchema!).fields.map(
        (f: { name: string }) => f.name,
      ),
    ).toEqual(["add", "remove"]);
    let fromSidecars = 0;
    for (const sc of result.sidecars) {
      const key = `${root}${LOG_DIR}_sidecars/${sc.path}`;
      const actions = await readParquetActions(await store.get(key));
      expect(actions.length).toBeLessThanOrEqual(4);
      expect(actions.every((a) => "add" in a || "remove" in a)).toBe(true);
      fromSidecars += actions.length;
      expect(await duckCount(path.join(store.rootDir, key))).toBe(actions.length);
    }
    expect(fromSidecars).toBe(n);
    expect(await duckCount(path.join(store.rootDir, result.key), "sidecar IS NOT NULL")).toBe(
      result.sidecars.length,
    );

    // _last_checkpoint carries the non-file actions and sidecars, so a load skips the top file.
    const last = JSON.parse(decode(await store.get(`${root}${LOG_DIR}_last_checkpoint`)));
    expect(last.checksum).toBe(lastCheckpointChecksum(last));
    expect(last.v2Checkpoint.sidecarFiles).toHaveLength(result.sidecars.length);
    expect(last.v2Checkpoint.nonFileActions[0].checkpointMetadata.version).toBe(s.version);
    const counting = new WrappedStore(store);
    const loaded = await loadSnapshot(counting, root);
    expect(loaded.checkpointVersion).toBe(s.version);
    expect(stateOf(loaded)).toEqual(await jsonReplay(store, root, s.version));
    expect(counting.gets).not.toContain(result.key);
    expect(counting.gets.filter((k) => k.includes("/_sidecars/"))).toHaveLength(
      result.sidecars.length,
    );
  });

  it("streams the next automatic checkpoint from the previous one's sidecars", async () => {
    ctx = {
      ...silt.ctx,
      postCommit: { checkpoint: { sidecarThreshold: 3, actionsPerSidecar: 3 } },
    };
    const { root } = await newTable("stream", { "delta.checkpointInterval": "4" });
    for (let v = 1; v <= 13; v++) {
      if (v === 6 || v === 10) await addDeletionVector("stream", v === 6 ? 0 : 3, [0]);
      else await appendRows(ctx, "c.s.stream", { rows: [[v, `p${v % 2}`]] });
    }
    const checkpoints = checkpointNames(await logNames(store, root));
    expect(checkpoints.map((n) => Number(n.slice(0, 20)))).toEqual([4, 8, 12]);
    // The state at 12 as the writer streams it equals the replay, and so does the load.
    const state = (await checkpointStateFromLog(store, root, 12))!;
    const streamed: Action[] = [];
    for await (const a of state.fileActions) streamed.push(a);
    const expected = await jsonReplay(store, root, 12);
    expect(streamed.filter((a) => "add" in a)).toHaveLength(expected.files.length);
    for (const v of [8, 12, 13]) {
      const s = await loadSnapshot(store, root, { version: v });
      expect(s.checkpointVersion).toBe(v >= 12 ? 12 : 8);
      expect(stateOf(s), `version ${v}`).toEqual(await jsonReplay(store, root, v));
    }
    const last = JSON.parse(decode(await store.get(`${root}${LOG_DIR}_last_checkpoint`)));
    expect(last.version).toBe(12);
    expect(last.v2Checkpoint.sidecarFiles.length).toBeGreaterThan(1);
  });

  it("streams from a multi-sidecar base and the commits after it to the checkpoint the in-memory path writes", async () => {
    ctx = { ...silt.ctx, postCommit: { mode: "off" } };
    const name = "streambase";
    const { root } = await newTable(name);
    for (let i = 0; i < 6; i++) {
      await appendRows(ctx, `c.s.${name}`, {
        rows: [
          [i, `p${i % 3}`],
          [i + 10, `p${(i + 1) % 3}`],
        ],
      });
    }
    await addDeletionVector(name, 0, [0]);
    const removeFile = async (index: number) => {
      const t = await openTable(ctx, `c.s.${name}`);
      const file = t.snapshot.files
        .filter((f) => !f.deletionVector)
        .sort((a, b) => (a.path < b.path ? -1 : 1))[index]!;
      await commitRaw(name, [
        {
          remove: {
            path: file.path,
            deletionTimestamp: ctx.clock(),
            dataChange: true,
            extendedFileMetadata: true,
            partitionValues: file.partitionValues,
            size: file.size,
          },
        },
      ]);
    };
    await removeFile(4);
    const before = await loadSnapshot(store, root);
    const base = await writeCheckpoint(store, root, before, {
      sidecarThreshold: 2,
      actionsPerSidecar: 3,
      now: ctx.clock(),
    });
    expect(base.sidecars.length).toBeGreaterThan(2);
    expect(base.numTombstones).toBe(2);

    // After the base: a DV on a base file, a second DV replacing one the base holds, a base file
    // removed, new files, a txn and a domain, and a property change.
    await addDeletionVector(name, 2, [1]);
    const t = await openTable(ctx, `c.s.${name}`);
    const withDv = t.snapshot.files.find((f) => f.deletionVector)!;
    await commitRaw(name, [
      {
        remove: {
          path: withDv.path,
          deletionTimestamp: ctx.clock(),
          deletionVector: withDv.deletionVector,
          dataChange: true,
        },
      },
      { add: { ...withDv, deletionVector: inlineDeletionVector([0, 1]) } },
    ]);
    await removeFile(0);
    await appendRows(ctx, `c.s.${name}`, { rows: [[50, "p9"]] });
    await commitRaw(name, [
      { txn: { appId: "etl", version: 7 } },
      { domainMetadata: { domain: "custom.x", configuration: "{}", removed: false } },
      {
        metaData: {
          ...t.snapshot.metadata,
          configuration: { ...t.snapshot.metadata.configuration, "custom.note": "after base" },
        },
      },
    ]);
    const version = (await loadSnapshot(store, root)).version;
    expect(version).toBe(before.version + 5);

    const reads = new WrappedStore(store);
    const { streamed } = await checkpointBothWays(store, reads, root, version, {
      sidecarThreshold: 4,
      actionsPerSidecar: 5,
      now: ctx.clock(),
    });
    expect(streamed.sidecars.length).toBeGreaterThan(1);
    // The stream read the base's sidecars and only the commits after it: no replay.
    expect(reads.gets.filter((k) => k.includes("/_sidecars/")).sort()).toEqual(
      base.sidecars.map((sc) => `${root}${LOG_DIR}_sidecars/${sc.path}`).sort(),
    );
    expect(
      reads.gets.flatMap((k) => (/\/(\d{20})\.json$/.exec(k) ? [Number(k.slice(-25, -5))] : [])),
    ).toEqual([1, 2, 3, 4, 5].map((i) => before.version + i));
    // What the streamed checkpoint loads is what every commit says.
    const loaded = await loadSnapshot(store, root);
    expect(loaded.checkpointVersion).toBe(version);
    const expected = await jsonReplay(store, root, version);
    expect(stateOf(loaded)).toEqual(expected);
    expect(expected.metadata.configuration["custom.note"]).toBe("after base");
    expect(expected.files.filter((f) => f.deletionVector).length).toBeGreaterThan(1);
    expect(expected.files.every((f) => f.stats !== undefined)).toBe(true);
    expect(new Set(expected.files.map((f) => Object.values(f.partitionValues)[0])).size).toBe(4);
  });

  it("streams from Spark's classic and multi-part checkpoints, whose file actions are inline", async () => {
    // Copies: the writer adds files to the log it reads.
    const dir = await mkdtemp(path.join(tmpdir(), "silt-spark-ckpt-"));
    try {
      for (const [fixture, version] of [
        ["golden/dv-partitioned-with-checkpoint", 15],
        ["golden/basic-with-inserts-deletes-checkpoint", 13],
        ["golden/multi-part-checkpoint", 1],
      ] as const) {
        const root = `${fixture}/`;
        await cp(
          path.join(FIXTURES, fixture, "_delta_log"),
          path.join(dir, fixture, "_delta_log"),
          { recursive: true },
        );
        const copy = new LocalObjectStore(dir);
        const kinds = (await listLog(copy, root)).checkpoints.map((c) => c.kind);
        expect(kinds, fixture).toEqual([version === 1 ? "multipart" : "classic"]);
        const reads = new WrappedStore(copy);
        const { timestamp } = await loadSnapshot(copy, root, { version });
        await checkpointBothWays(copy, reads, root, version, { now: timestamp });
        expect(reads.gets.some((k) => k.includes("/_sidecars/"))).toBe(false);
        const loaded = await loadSnapshot(copy, root);
        expect(loaded.checkpointVersion).toBe(version);
        // Spark's checkpoints store dataChange=false; the commits said true.
        const live = (files: AddFile[]) => files.map(({ dataChange: _, ...f }) => f);
        expect(live(stateOf(loaded).files), fixture).toEqual(
          live((await jsonReplay(copy, root, version)).files),
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("runs in the background when configured, and the commit returns first", async () => {
    ctx = { ...silt.ctx, postCommit: { mode: "background" } };
    const { root } = await newTable("bg", { "delta.checkpointInterval": "2" });
    await appendRows(ctx, "c.s.bg", { rows: [[1, "a"]] });
    await appendRows(ctx, "c.s.bg", { rows: [[2, "a"]] });
    await flushPostCommitWork();
    expect(checkpointNames(await logNames(store, root)).map((n) => n.slice(0, 20))).toEqual([
      padVersion(2),
    ]);
  });

  it("survives a failure while checkpointing: the commit stands, the table reads, the next interval retries", async () => {
    const logger = capturingLogger();
    const failing = new WrappedStore(store);
    let fctx: SiltContext = { ...ctx, store: failing, postCommit: { logger } };
    const { root } = await newTable("fail", { "delta.checkpointInterval": "3" }, fctx);
    await appendRows(fctx, "c.s.fail", { rows: [[1, "a"]] });
    await appendRows(fctx, "c.s.fail", { rows: [[2, "a"]] });
    // Version 3: the top-level file fails to write.
    failing.failPut = /\.checkpoint\.[^/]*\.parquet$/;
    const r3 = await appendRows(fctx, "c.s.fail", { rows: [[3, "a"]] });
    expect(r3.version).toBe(3);
    expect(await store.head(`${root}${LOG_DIR}${commitFileName(3)}`)).toBeDefined();
    expect(checkpointNames(await logNames(store, root))).toEqual([]);
    expect(logger.lines.map((l) => [l.level, l.f?.version])).toEqual([["warn", 3]]);
    expect(String(logger.lines[0]!.f?.error)).toMatch(/injected failure/);
    // Version 6, sidecar mode: sidecars land, then the top-level file fails; they are orphans.
    fctx = {
      ...fctx,
      postCommit: { logger, checkpoint: { sidecarThreshold: 1, actionsPerSidecar: 2 } },
    };
    for (let i = 4; i <= 6; i++) await appendRows(fctx, "c.s.fail", { rows: [[i, "b"]] });
    const orphans = (await logNames(store, root)).filter((n) => n.startsWith("_sidecars/"));
    expect(orphans.length).toBeGreaterThan(0);
    expect(checkpointNames(await logNames(store, root))).toEqual([]);
    expect(logger.lines.filter((l) => l.level === "warn")).toHaveLength(2);
    // Still readable, by the ops and by replay.
    const t = await openTable(fctx, "c.s.fail");
    expect(t.snapshot.version).toBe(6);
    expect(stateOf(t.snapshot)).toEqual(await jsonReplay(store, root, 6));
    // Version 9 succeeds once the store recovers.
    failing.failPut = undefined;
    for (let i = 7; i <= 9; i++) await appendRows(fctx, "c.s.fail", { rows: [[i, "c"]] });
    expect(checkpointNames(await logNames(store, root)).map((n) => Number(n.slice(0, 20)))).toEqual(
      [9],
    );
    expect(stateOf(await loadSnapshot(store, root))).toEqual(await jsonReplay(store, root, 9));
    // Orphans are left for log cleanup, which removes them once a day old (and not before).
    const now = ctx.clock();
    const early = await cleanupLog(store, root, { now: now + 3_600_000 });
    expect(early.deleted).toEqual([]);
    const late = await cleanupLog(store, root, { now: now + 2 * DAY_MS });
    expect(late.checkpointVersion).toBeUndefined();
    expect(late.deleted.sort()).toEqual(orphans.map((n) => `${root}${LOG_DIR}${n}`).sort());
    expect(stateOf(await loadSnapshot(store, root))).toEqual(await jsonReplay(store, root, 9));
  });

  it("refuses to checkpoint a version that is not published", async () => {
    const { root } = await newTable("unpublished");
    await appendRows(ctx, "c.s.unpublished", { rows: [[1, "a"]] });
    const s = await loadSnapshot(store, root);
    await expect(writeCheckpoint(store, root, { ...s, version: 2 })).rejects.toThrow(
      /not published/,
    );
  });

  it("loads the latest of 1,000 commits from the last checkpoint and the commits after it", async () => {
    // The log is written directly (ops would take minutes) and each commit runs the same
    // post-commit step the commit loop runs, as the writer that crossed the interval would.
    const root = "tables/thousand/";
    const protocol: Protocol = {
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ["deletionVectors", "v2Checkpoint"],
      writerFeatures: ["deletionVectors", "v2Checkpoint", "inCommitTimestamp"],
    };
    const metadata: Metadata = {
      id: "thousand",
      format: { provider: "parquet", options: {} },
      schemaString:
        '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}',
      partitionColumns: [],
      configuration: { "delta.enableInCommitTimestamps": "true" },
      createdTime: 1,
    };
    const t0 = Date.UTC(2024, 0, 1);
    const add = (v: number): Action => ({
      add: {
        path: `f${v}.parquet`,
        partitionValues: {},
        size: 100 + v,
        modificationTime: t0 + v,
        dataChange: true,
        stats: JSON.stringify({ numRecords: 1, minValues: { id: v }, maxValues: { id: v } }),
      },
    });
    const written: number[] = [];
    for (let v = 0; v <= 1004; v++) {
      const actions: Action[] = v === 0 ? [{ protocol }, { metaData: metadata }] : [];
      actions.push(add(v));
      if (v % 3 === 0 && v > 0) {
        actions.push({
          remove: { path: `f${v - 1}.parquet`, deletionTimestamp: t0 + v, dataChange: true },
        });
      }
      if (v % 100 === 50) actions.push({ txn: { appId: "etl", version: v } });
      const commitInfo = {
        inCommitTimestamp: t0 + v * 1000,
        timestamp: t0 + v * 1000,
        operation: "WRITE",
      };
      const body = [{ commitInfo }, ...actions].map((a) => JSON.stringify(a)).join("\n");
      await store.putIfAbsent(
        `${root}${LOG_DIR}${commitFileName(v)}`,
        new TextEncoder().encode(`${body}\n`),
      );
      const r = await autoCheckpoint({ store, tableRoot: root, version: v, actions }, { now: t0 });
      if (r !== undefined) written.push(v);
    }
    expect(written).toEqual(Array.from({ length: 100 }, (_, i) => (i + 1) * 10));
    const names = checkpointNames(await logNames(store, root));
    const classic = names.filter((n) => n.endsWith(".checkpoint.parquet"));
    expect(classic.map((n) => Number(n.slice(0, 20)))).toEqual(
      Array.from({ length: 1000 / (10 * CLASSIC_EVERY) }, (_, i) => (i + 1) * 10 * CLASSIC_EVERY),
    );
    // The classic-named file is the same V2 checkpoint, readable by name alone.
    const classicActions = await readParquetActions(
      await store.get(`${root}${LOG_DIR}${classic.at(-1)}`),
    );
    expect(classicActions.filter((a) => "checkpointMetadata" in a)).toHaveLength(1);
    expect(await duckCount(path.join(store.rootDir, `${root}${LOG_DIR}${classic.at(-1)}`))).toBe(
      classicActions.length,
    );

    const counting = new WrappedStore(store);
    const s = await loadSnapshot(counting, root);
    expect(s.version).toBe(1004);
    expect(s.checkpointVersion).toBe(1000);
    const listed = await listLog(store, root);
    const ckpt1000 = listed.checkpoints.filter((c) => c.version === 1000 && c.kind === "v2");
    expect(counting.gets).toEqual([
      `${root}${LOG_DIR}_last_checkpoint`,
      ckpt1000[0]!.keys[0],
      ...[1001, 1002, 1003, 1004].map((v) => `${root}${LOG_DIR}${commitFileName(v)}`),
    ]);
    expect(counting.lists).toEqual([
      { prefix: `${root}${LOG_DIR}`, startAfter: `${root}${LOG_DIR}${padVersion(1000)}` },
    ]);
    expect(stateOf(s)).toEqual(await jsonReplay(store, root, 1004));
    expect(s.files).toHaveLength(1005 - 334);
    expect(s.txns.get("etl")?.version).toBe(950);
  });
});

describe("log cleanup", () => {
  let silt: SiltHarness;
  let ctx: SiltContext;
  let store: LocalObjectStore;
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    ctx = silt.ctx;
    store = ctx.store as LocalObjectStore;
    await createCatalog(ctx, "c");
    await createSchema(ctx, "c", "s");
  });
  afterAll(() => silt.close());

  const base = Date.UTC(2024, 0, 1);
  const at = (day: number, hour = 1) => base + day * DAY_MS + hour * 3_600_000;

  it("keeps the newest checkpoint before the cutoff, its commit and everything after (§5.5)", async () => {
    // Commit timestamps come from the clock (in-commit timestamps): days 0..2 for versions
    // 0..24, day 40 after that.
    let clock = at(0);
    const c: SiltContext = {
      ...ctx,
      clock: () => clock,
      postCommit: { checkpoint: { sidecarThreshold: 2, actionsPerSidecar: 4, now: at(0) } },
    };
    await createTable(c, {
      name: "c.s.clean",
      columns: [{ name: "id", type: "INT" }],
      properties: { "delta.logRetentionDuration": "interval 30 days" },
    });
    const entry = await ctx.catalog.getTable("c", "s", "clean");
    const root = entry.location;
    const logDir = `${root}${LOG_DIR}`;
    for (let v = 1; v <= 29; v++) {
      clock = v < 25 ? at(Math.floor(v / 10), v % 10) : at(40, v - 24);
      await appendRows(c, "c.s.clean", { rows: [[v]] });
    }
    const before = await logNames(store, root);
    expect(checkpointNames(before).map((n) => Number(n.slice(0, 20)))).toEqual([10, 20]);
    // Extra files the rules name: version checksums and log compactions.
    const extra = [
      `${padVersion(3)}.crc`,
      `${padVersion(20)}.crc`,
      `${padVersion(2)}.${padVersion(5)}.compacted.json`,
      `${padVersion(20)}.${padVersion(22)}.compacted.json`,
      `${padVersion(21)}.${padVersion(23)}.compacted.json`,
    ];
    for (const name of extra) await store.put(`${logDir}${name}`, new TextEncoder().encode("{}\n"));
    // Sidecars: those of the retained checkpoint 20 made old, an old orphan, a fresh orphan.
    const sidecarsOf = async (version: number) => {
      const name = checkpointNames(await logNames(store, root)).find((n) =>
        n.startsWith(padVersion(version)),
      )!;
      const top = await readParquetActions(await store.get(`${logDir}${name}`));
      return top.flatMap((a) => ("sidecar" in a ? [`${logDir}_sidecars/${a.sidecar.path}`] : []));
    };
    const kept20 = await sidecarsOf(20);
    const dropped10 = await sidecarsOf(10);
    expect(kept20.length).toBeGreaterThan(0);
    expect(dropped10.length).toBeGreaterThan(0);
    const oldOrphan = `${logDir}_sidecars/old-orphan.parquet`;
    const newOrphan = `${logDir}_sidecars/new-orphan.parquet`;
    await store.put(oldOrphan, new Uint8Array([1]));
    await store.put(newOrphan, new Uint8Array([1]));
    const now = at(52, 6);
    const setMtime = (key: string, ms: number) =>
      utimes(path.join(store.rootDir, key), ms / 1000, ms / 1000);
    for (const key of [...kept20, ...dropped10, oldOrphan]) await setMtime(key, at(3));
    await setMtime(newOrphan, now - 3_600_000);

    // now − 30 days = day 22, 06:00 → cutoff midnight of day 22: versions 0..24 are older.
    // Newest checkpoint at or before the cutoff commit (24) is 20.
    const result = await cleanupLog(store, root, { now });
    expect(result.cutoff).toBe(base + 22 * DAY_MS);
    expect(result.checkpointVersion).toBe(20);

    const after = new Set(await logNames(store, root));
    const expectGone = [
      ...Array.from({ length: 20 }, (_, v) => commitFileName(v)),
      checkpointNames(before).find((n) => n.startsWith(padVersion(10)))!,
      `${padVersion(3)}.crc`,
      `${padVersion(2)}.${padVersion(5)}.compacted.json`,
      `${padVersion(20)}.${padVersion(22)}.compacted.json`,
      ...before.filter((n) => {
        const m = /^_staged_commits\/(\d{20})\./.exec(n);
        return m !== null && Number(m[1]) <= 20;
      }),
      ...[...dropped10, oldOrphan].map((k) => k.slice(logDir.length)),
    ];
    const expectKept = [
      ...Array.from({ length: 10 }, (_, i) => commitFileName(20 + i)),
      checkpointNames(before).find((n) => n.startsWith(padVersion(20)))!,
      `${padVersion(20)}.crc`,
      `${padVersion(21)}.${padVersion(23)}.compacted.json`,
      "_last_checkpoint",
      ...before.filter((n) => {
        const m = /^_staged_commits\/(\d{20})\./.exec(n);
        return m !== null && Number(m[1]) > 20;
      }),
      ...[...kept20, newOrphan].map((k) => k.slice(logDir.length)),
    ];
    for (const n of expectGone) expect(after.has(n), `${n} deleted`).toBe(false);
    for (const n of expectKept) expect(after.has(n), `${n} kept`).toBe(true);
    expect(new Set([...expectGone, ...expectKept])).toEqual(
      new Set(
        before.concat(extra, [oldOrphan.slice(logDir.length), newOrphan.slice(logDir.length)]),
      ),
    );
    expect(result.deleted.map((k) => k.slice(logDir.length)).sort()).toEqual(
      [...expectGone].sort(),
    );

    // Time travel within retention (and back to the kept checkpoint) still works; older fails.
    for (const v of [20, 21, 24, 25, 29]) {
      const s = await loadSnapshot(store, root, { version: v });
      expect(s.version).toBe(v);
      expect(s.timestamp).toBe(v < 25 ? at(Math.floor(v / 10), v % 10) : at(40, v - 24));
    }
    const at22 = await loadSnapshot(store, root, { timestamp: at(2, 2) });
    expect(at22.version).toBe(22);
    await expect(loadSnapshot(store, root, { version: 19 })).rejects.toSatisfy(
      (e: unknown) => e instanceof SiltError && e.errorClass === "DELTA_VERSION_NOT_FOUND",
    );
    const latest = await openTable(ctx, "c.s.clean");
    expect(latest.snapshot.version).toBe(29);

    // Running again deletes nothing: the newest checkpoint before the cutoff is still 20.
    const again = await cleanupLog(store, root, { now });
    expect(again.checkpointVersion).toBe(20);
    expect(again.deleted).toEqual([]);
    // A day on, the fresh orphan sidecar is old enough to go as well.
    expect((await cleanupLog(store, root, { now: at(100) })).deleted).toEqual([newOrphan]);
  });

  it("never starts the log at a checkpoint it cannot read", async () => {
    let clock = at(0);
    const c: SiltContext = {
      ...ctx,
      clock: () => clock,
      postCommit: { checkpoint: { sidecarThreshold: 1, actionsPerSidecar: 2 } },
    };
    await createTable(c, {
      name: "c.s.broken",
      columns: [{ name: "id", type: "INT" }],
      properties: { "delta.checkpointInterval": "2" },
    });
    const root = (await ctx.catalog.getTable("c", "s", "broken")).location;
    const logDir = `${root}${LOG_DIR}`;
    for (let v = 1; v <= 7; v++) {
      clock = at(v);
      await appendRows(c, "c.s.broken", { rows: [[v]] });
    }
    const names = checkpointNames(await logNames(store, root));
    expect(names.map((n) => Number(n.slice(0, 20)))).toEqual([2, 4, 6]);
    const expected = await jsonReplay(store, root, 7);
    // Checkpoint 6 loses a sidecar, checkpoint 4's top-level file is garbage: K must be 2.
    const six = await readParquetActions(await store.get(`${logDir}${names[2]}`));
    const sidecar = six.find((a) => "sidecar" in a) as { sidecar: { path: string } };
    await store.delete(`${logDir}_sidecars/${sidecar.sidecar.path}`);
    await store.put(`${logDir}${names[1]}`, new TextEncoder().encode("not parquet"));
    const r = await cleanupLog(store, root, { now: at(100), retentionMs: 10 * DAY_MS });
    expect(r.checkpointVersion).toBe(2);
    expect(r.deleted.filter((k) => /\/\d{20}\.json$/.test(k))).toHaveLength(2);
    expect(await store.head(`${logDir}${names[1]}`)).toBeDefined();
    // The reader falls back the same way and still sees every version from 2 on.
    expect(stateOf(await loadSnapshot(store, root))).toEqual(expected);
    expect((await loadSnapshot(store, root, { version: 2 })).checkpointVersion).toBe(2);
  });

  it("deletes nothing while no checkpoint is older than the cutoff", async () => {
    let clock = at(0);
    const c: SiltContext = { ...ctx, clock: () => clock };
    await createTable(c, {
      name: "c.s.young",
      columns: [{ name: "id", type: "INT" }],
      // Delta keeps the deleted files' retention within the log's.
      properties: {
        "delta.logRetentionDuration": "interval 3 days",
        "delta.deletedFileRetentionDuration": "interval 1 day",
      },
    });
    const root = (await ctx.catalog.getTable("c", "s", "young")).location;
    for (let v = 1; v <= 12; v++) {
      clock = at(v < 10 ? 0 : 5);
      await appendRows(c, "c.s.young", { rows: [[v]] });
    }
    const before = await logNames(store, root);
    // Cutoff day 4 (table retention 3 days): the only checkpoint, 10, is on day 5.
    const r = await cleanupLog(store, root, { now: at(7, 12) });
    expect(r.cutoff).toBe(base + 4 * DAY_MS);
    expect(r.checkpointVersion).toBeUndefined();
    expect(r.deleted).toEqual([]);
    expect(await logNames(store, root)).toEqual(before);
    // An explicit retention overrides the table's: cutoff day 6 reaches checkpoint 10.
    const r2 = await cleanupLog(store, root, { now: at(7, 12), retentionMs: DAY_MS });
    expect(r2.checkpointVersion).toBe(10);
    expect(r2.deleted.filter((k) => /\/\d{20}\.json$/.test(k))).toHaveLength(10);
    expect((await loadSnapshot(store, root)).version).toBe(12);
    await expect(loadSnapshot(store, root, { version: 9 })).rejects.toThrow(/version 9/);
  });
});
