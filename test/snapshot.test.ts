import { cp, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFileName } from "../lib/delta/actions.ts";
import { readCheckpoint } from "../lib/delta/checkpoint-reader.ts";
import { listLog } from "../lib/delta/log-listing.ts";
import {
  loadSnapshot,
  parseTimestamp,
  readCommitInfos,
  type Snapshot,
  type SnapshotOptions,
  SUPPORTED_READER_FEATURES,
} from "../lib/delta/snapshot.ts";
import { SiltError } from "../lib/errors.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import type { ObjectInfo, ObjectStore } from "../lib/storage/object-store.ts";

const FIXTURES = path.resolve(import.meta.dirname, "../../shared/fixtures/delta");
const fixtures = new LocalObjectStore(FIXTURES);

/** Delegates to a store and counts the calls replay makes, to check that reads stay cheap. */
class CountingStore implements ObjectStore {
  gets: string[] = [];
  ranges: { key: string; start: number; end: number }[] = [];
  lists: { prefix: string; startAfter?: string }[] = [];
  heads = 0;
  constructor(private readonly inner: ObjectStore) {}
  get(key: string) {
    this.gets.push(key);
    return this.inner.get(key);
  }
  getRange(key: string, start: number, end: number) {
    this.ranges.push({ key, start, end });
    return this.inner.getRange(key, start, end);
  }
  getSuffix(key: string, length: number) {
    return this.inner.getSuffix(key, length);
  }
  head(key: string) {
    this.heads++;
    return this.inner.head(key);
  }
  put(key: string, body: Uint8Array) {
    return this.inner.put(key, body);
  }
  putIfAbsent(key: string, body: Uint8Array) {
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
}

type Json = Record<string, unknown>;

/**
 * An independent, deliberately simple replay of a fixture's JSON commits 0..version, read
 * straight from disk: the expected state for tables whose whole commit chain is present.
 */
async function naiveReplay(dir: string, version?: number) {
  const logDir = path.join(FIXTURES, dir, "_delta_log");
  const names = (await readdir(logDir)).filter((n) => /^\d{20}\.json$/.test(n)).sort();
  let protocol: Json | undefined;
  let metadata: Json | undefined;
  const live = new Map<string, Json>();
  let last = -1;
  for (const name of names) {
    const v = Number(name.slice(0, 20));
    if (v !== last + 1) throw new Error(`${dir}: naive replay needs contiguous commits from 0`);
    if (version !== undefined && v > version) break;
    last = v;
    const text = await readFile(path.join(logDir, name), "utf8");
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const obj = JSON.parse(line) as Json;
      const add = obj.add as Json | undefined;
      const remove = obj.remove as Json | undefined;
      const file = add ?? remove;
      if (file) {
        const dv = file.deletionVector as Json | undefined;
        const key = dv
          ? `${file.path}|${dv.storageType}${dv.pathOrInlineDv}@${dv.offset ?? ""}`
          : `${file.path}|`;
        if (add) live.set(key, add);
        else live.delete(key);
      }
      if (obj.protocol) protocol = obj.protocol as Json;
      if (obj.metaData) metadata = obj.metaData as Json;
    }
  }
  return { version: last, files: live, protocol, metadata };
}

const load = (dir: string, opts?: SnapshotOptions) => loadSnapshot(fixtures, `${dir}/`, opts);

async function expectError(p: Promise<unknown>, errorClass: string, message?: RegExp) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected ${errorClass}`).toBeInstanceOf(SiltError);
  expect((err as SiltError).errorClass).toBe(errorClass);
  if (message) expect((err as SiltError).message).toMatch(message);
  return err as SiltError;
}

function expectSameFiles(snapshot: Snapshot, expected: Map<string, Json>) {
  expect(snapshot.files.length).toBe(expected.size);
  const want = [...expected.values()].map((f) => f.path).sort();
  expect(snapshot.files.map((f) => f.path).sort()).toEqual(want);
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "silt-snapshot-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

let tableCounter = 0;
/** Copies a fixture table into the temp dir (writable, and with mtimes we control). */
async function copyFixture(dir: string, skip: (name: string) => boolean = () => false) {
  const dest = path.join(tmp, `t${tableCounter++}`);
  await cp(path.join(FIXTURES, dir), dest, {
    recursive: true,
    filter: (src) => !skip(path.basename(src)),
  });
  return dest;
}

/** Writes commits (arrays of actions) as `_delta_log/<v>.json` with the given mtimes. */
async function writeTable(commits: { actions: Json[]; mtime?: number }[]) {
  const dest = path.join(tmp, `t${tableCounter++}`);
  await mkdir(path.join(dest, "_delta_log"), { recursive: true });
  await Promise.all(
    commits.map(async (c, v) => {
      const file = path.join(dest, "_delta_log", commitFileName(v));
      await writeFile(file, `${c.actions.map((a) => JSON.stringify(a)).join("\n")}\n`);
      if (c.mtime !== undefined) await setMtime(file, c.mtime);
    }),
  );
  return dest;
}

/** Sets a file's mtime to `ms`; the half millisecond keeps float seconds from rounding below it. */
async function setMtime(file: string, ms: number) {
  await utimes(file, (ms + 0.5) / 1000, (ms + 0.5) / 1000);
}

const protocol11 = { protocol: { minReaderVersion: 1, minWriterVersion: 2 } };
const metaData = (configuration: Record<string, string> = {}) => ({
  metaData: {
    id: "test-table",
    format: { provider: "parquet", options: {} },
    schemaString:
      '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}',
    partitionColumns: [],
    configuration,
    createdTime: 1,
  },
});
const add = (p: string) => ({
  add: { path: p, partitionValues: {}, size: 10, modificationTime: 1, dataChange: true },
});
const remove = (p: string) => ({ remove: { path: p, deletionTimestamp: 2, dataChange: true } });

describe("checkpoints", () => {
  it("golden/checkpoint: classic checkpoint at 10 plus commits 11..14", async () => {
    const s = await load("golden/checkpoint");
    const naive = await naiveReplay("golden/checkpoint");
    expect(s.version).toBe(14);
    expect(s.checkpointVersion).toBe(10);
    expectSameFiles(s, naive.files);
    expect(s.protocol).toEqual(naive.protocol);
    expect(s.metadata.id).toBe("testId");
    // The generator removed files 1..10 before checkpointing; the checkpoint keeps them as tombstones.
    expect(s.tombstones.length).toBeGreaterThan(0);
  });

  it("golden/checkpoint time travel into and below the checkpoint", async () => {
    for (const v of [0, 5, 9, 10, 12]) {
      const s = await load("golden/checkpoint", { version: v });
      expect(s.version).toBe(v);
      expectSameFiles(s, (await naiveReplay("golden/checkpoint", v)).files);
      expect(s.checkpointVersion).toBe(v >= 10 ? 10 : undefined);
    }
  });

  it("lists from the _last_checkpoint hint when loading the latest version", async () => {
    const store = new CountingStore(fixtures);
    await loadSnapshot(store, "golden/checkpoint/");
    expect(store.lists).toHaveLength(1);
    expect(store.lists[0]!.startAfter).toBe(
      `golden/checkpoint/_delta_log/${"10".padStart(20, "0")}`,
    );
    // Commits below the checkpoint are not read.
    expect(store.gets.filter((k) => /\/0{18}0\d\.json$/.test(k))).toEqual([]);
  });

  it("golden/multi-part-checkpoint: two parts at version 1", async () => {
    const s = await load("golden/multi-part-checkpoint");
    expect(s.version).toBe(1);
    expect(s.checkpointVersion).toBe(1);
    expectSameFiles(s, (await naiveReplay("golden/multi-part-checkpoint")).files);
    // _last_checkpoint records numOfAddFiles 10 for this checkpoint.
    expect(s.files).toHaveLength(10);
  });

  it("an incomplete multi-part set is not a checkpoint", async () => {
    const dir = await copyFixture("golden/multi-part-checkpoint", (n) =>
      n.startsWith("00000000000000000001.checkpoint.0000000002."),
    );
    const listing = await listLog(new LocalObjectStore(dir), "");
    expect(listing.checkpoints).toEqual([]);
    const s = await loadSnapshot(new LocalObjectStore(dir), "");
    expect(s.version).toBe(1);
    expect(s.checkpointVersion).toBeUndefined();
    expect(s.files).toHaveLength(10);
  });

  it("golden/v2-checkpoint-json: JSON top level with two Parquet sidecars", async () => {
    const naive = await naiveReplay("golden/v2-checkpoint-json");
    const store = new CountingStore(fixtures);
    const s = await loadSnapshot(store, "golden/v2-checkpoint-json/");
    expect(s.version).toBe(2);
    expect(s.checkpointVersion).toBe(2);
    expectSameFiles(s, naive.files);
    expect(s.files).toHaveLength(4); // numOfAddFiles in _last_checkpoint
    expect(s.protocol.readerFeatures).toEqual(["v2Checkpoint"]);
    expect(s.metadata.configuration["delta.checkpointPolicy"]).toBe("v2");
    // The hint's nonFileActions stand in for the top-level file; only the sidecars are read.
    expect(store.gets.filter((k) => k.includes(".checkpoint."))).toHaveLength(2);
    expect(store.gets.every((k) => !k.endsWith("c550132b49.json"))).toBe(true);
  });

  it("v2 checkpoint without a hint reads the JSON top-level file", async () => {
    const dir = await copyFixture("golden/v2-checkpoint-json", (n) => n === "_last_checkpoint");
    const store = new LocalObjectStore(dir);
    const listing = await listLog(store, "");
    const ckpt = listing.checkpoints.find((c) => c.kind === "v2")!;
    expect(ckpt.format).toBe("json");
    const actions = await readCheckpoint(store, "", ckpt);
    expect(actions.filter((a) => "sidecar" in a)).toHaveLength(2);
    expect(actions.filter((a) => "checkpointMetadata" in a)).toHaveLength(1);
    expect(actions.filter((a) => "add" in a)).toHaveLength(4);
    const s = await loadSnapshot(store, "");
    expect(s.version).toBe(2);
    expect(s.files).toHaveLength(4);
  });

  it("falls back to commits when a checkpoint is unreadable", async () => {
    const dir = await copyFixture("golden/checkpoint");
    await writeFile(
      path.join(dir, "_delta_log", "00000000000000000010.checkpoint.parquet"),
      "not parquet",
    );
    const s = await loadSnapshot(new LocalObjectStore(dir), "");
    expect(s.version).toBe(14);
    expect(s.checkpointVersion).toBeUndefined();
    expectSameFiles(s, (await naiveReplay("golden/checkpoint")).files);
  });

  it("golden/corrupted-last-checkpoint and -kernel tolerate the hint", async () => {
    const a = await load("golden/corrupted-last-checkpoint");
    expect(a.version).toBe(10);
    expectSameFiles(a, (await naiveReplay("golden/corrupted-last-checkpoint")).files);
    // The -kernel variant's _last_checkpoint is an empty file.
    const b = await load("golden/corrupted-last-checkpoint-kernel");
    expect(b.version).toBe(11);
    expect(b.checkpointVersion).toBe(10);
    expectSameFiles(b, (await naiveReplay("golden/corrupted-last-checkpoint-kernel")).files);
  });

  it("a _last_checkpoint pointing past the log falls back to listing everything", async () => {
    const dir = await copyFixture("golden/checkpoint");
    await writeFile(path.join(dir, "_delta_log", "_last_checkpoint"), '{"version":99,"size":1}');
    const s = await loadSnapshot(new LocalObjectStore(dir), "");
    expect(s.version).toBe(14);
    expect(s.checkpointVersion).toBe(10);
  });

  it("golden/only-checkpoint-files", async () => {
    const s = await load("golden/only-checkpoint-files");
    expect(s.version).toBe(2);
    expect(s.checkpointVersion).toBe(2);
    expectSameFiles(s, (await naiveReplay("golden/only-checkpoint-files")).files);
    for (const v of [0, 1]) {
      const t = await load("golden/only-checkpoint-files", { version: v });
      expectSameFiles(t, (await naiveReplay("golden/only-checkpoint-files", v)).files);
    }
  });

  it("golden/dv-partitioned-with-checkpoint keeps DV descriptors from the checkpoint", async () => {
    const s = await load("golden/dv-partitioned-with-checkpoint");
    const naive = await naiveReplay("golden/dv-partitioned-with-checkpoint");
    expect(s.version).toBe(naive.version);
    expectSameFiles(s, naive.files);
    const withDv = s.files.filter((f) => f.deletionVector);
    const naiveWithDv = [...naive.files.values()].filter((f) => f.deletionVector);
    expect(withDv.length).toBe(naiveWithDv.length);
    for (const f of withDv) {
      const dv = f.deletionVector!;
      expect(typeof dv.cardinality).toBe("number");
      expect(typeof dv.sizeInBytes).toBe("number");
      expect(["u", "i", "p"]).toContain(dv.storageType);
    }
    for (const f of s.files) {
      expect(typeof f.size).toBe("number");
      expect(typeof f.stats).toBe("string");
      expect(Object.keys(f.partitionValues)).toEqual(["part"]);
    }
  });
});

describe("delta-rs checkpoint cases", () => {
  it("with_checkpoint_no_last_checkpoint", async () => {
    const s = await load("delta-rs/with_checkpoint_no_last_checkpoint");
    expect(s.version).toBe(3);
    expect(s.checkpointVersion).toBe(2);
    expectSameFiles(s, (await naiveReplay("delta-rs/with_checkpoint_no_last_checkpoint")).files);
  });

  it("latest_not_checkpointed", async () => {
    const s = await load("delta-rs/latest_not_checkpointed");
    expect(s.version).toBe(3);
    expect(s.checkpointVersion).toBe(2);
    expectSameFiles(s, (await naiveReplay("delta-rs/latest_not_checkpointed")).files);
  });

  it("table_failed_last_checkpoint_update: hint says 1, newest checkpoint is 3", async () => {
    const s = await load("delta-rs/table_failed_last_checkpoint_update");
    expect(s.version).toBe(3);
    expect(s.checkpointVersion).toBe(3);
    expectSameFiles(s, (await naiveReplay("delta-rs/table_failed_last_checkpoint_update")).files);
  });

  it("checkpoints_vacuumed: commits before 5 are gone", async () => {
    // delta-rs/checkpoints is the same table with its whole log (byte-identical commits), so its
    // naive replay gives the expected state at every version.
    const s = await load("delta-rs/checkpoints_vacuumed");
    expect(s.version).toBe(12);
    expect(s.checkpointVersion).toBe(10);
    expectSameFiles(s, (await naiveReplay("delta-rs/checkpoints")).files);
    for (const v of [5, 7, 10, 11]) {
      const t = await load("delta-rs/checkpoints_vacuumed", { version: v });
      expectSameFiles(t, (await naiveReplay("delta-rs/checkpoints", v)).files);
    }
    await expectError(
      load("delta-rs/checkpoints_vacuumed", { version: 4 }),
      "DELTA_VERSION_NOT_FOUND",
      /^Cannot time travel Delta table to version 4\. Available versions: \[5, 12\]\.$/,
    );
    await expectError(
      load("delta-rs/checkpoints_vacuumed", { version: 13 }),
      "DELTA_VERSION_NOT_FOUND",
      /Available versions: \[5, 12\]/,
    );
  });

  it("table-with-domain-metadata: a lone checkpoint at 108", async () => {
    const s = await load("delta-rs/table-with-domain-metadata");
    expect(s.version).toBe(108);
    expect(s.checkpointVersion).toBe(108);
    expect([...s.domainMetadata.keys()]).toContain("delta.clustering");
    expect(s.domainMetadata.get("delta.clustering")!.removed).toBe(false);
    expect(s.timestamp).toBeGreaterThan(0);
  });
});

describe("log replay rules", () => {
  it("golden/log-replay-latest-metadata-protocol: last protocol and metaData win", async () => {
    const s = await load("golden/log-replay-latest-metadata-protocol");
    expect(s.version).toBe(2);
    expect(s.protocol).toEqual({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: [],
      writerFeatures: ["appendOnly", "invariants"],
    });
    expect(JSON.parse(s.metadata.schemaString).fields.map((f: Json) => f.name)).toEqual([
      "col1",
      "col2",
    ]);
    expectSameFiles(s, (await naiveReplay("golden/log-replay-latest-metadata-protocol")).files);
  });

  it("versions-not-contiguous fails, version 0 still loads", async () => {
    await expectError(
      load("golden/versions-not-contiguous"),
      "DELTA_VERSIONS_NOT_CONTIGUOUS",
      /Versions \(0, 2\) are not contiguous/,
    );
    const s = await load("golden/versions-not-contiguous", { version: 0 });
    expect(s.files).toHaveLength(1);
  });

  it("deltalog-state-reconstruction-* name the missing action", async () => {
    const cases: [string, string][] = [
      ["deltalog-state-reconstruction-without-metadata", "Metadata"],
      ["deltalog-state-reconstruction-without-protocol", "Protocol"],
      ["deltalog-state-reconstruction-from-checkpoint-missing-metadata", "Metadata"],
      ["deltalog-state-reconstruction-from-checkpoint-missing-protocol", "Protocol"],
    ];
    for (const [dir, what] of cases) {
      const err = await expectError(
        load(`golden/${dir}`),
        "DELTA_STATE_RECOVER_ERROR",
        new RegExp(`The ${what} of your Delta table could not be recovered`),
      );
      expect(err.sqlstate).toBe("XXKDS");
    }
  });

  it("deltalog-invalid-protocol-version", async () => {
    const err = await expectError(
      load("golden/deltalog-invalid-protocol-version"),
      "DELTA_INVALID_PROTOCOL_VERSION",
      /reader version 99/,
    );
    expect(err.sqlstate).toBe("KD004");
  });

  it("spark-variant-checkpoint fails naming variantType", async () => {
    for (const dir of ["golden/spark-variant-checkpoint", "delta-rs/spark-variant-checkpoint"]) {
      const err = await expectError(
        load(dir),
        "DELTA_UNSUPPORTED_FEATURES_FOR_READ",
        /variantType/,
      );
      expect(err.sqlstate).toBe("56038");
    }
    expect(SUPPORTED_READER_FEATURES.has("variantType")).toBe(false);
    expect(SUPPORTED_READER_FEATURES.has("typeWidening")).toBe(false);
  });

  it("no _delta_log is DELTA_TABLE_NOT_FOUND", async () => {
    const err = await expectError(load("golden/no-delta-log-folder"), "DELTA_TABLE_NOT_FOUND");
    expect(err.status).toBe(404);
    await expectError(
      readCommitInfos(fixtures, "golden/no-delta-log-folder/"),
      "DELTA_TABLE_NOT_FOUND",
    );
  });

  it("a DV update is a remove of the old (path, DV) and an add of the new", async () => {
    for (const dir of ["delta-rs/table-with-dv-small", "spark/table-with-dv-small"]) {
      const s = await load(dir);
      const naive = await naiveReplay(dir);
      expectSameFiles(s, naive.files);
      expect(s.files).toHaveLength(1);
      // v1 is remove (no DV) + add (same path, DV with rows 0 and 9 deleted).
      expect(s.files[0]!.deletionVector).toEqual([...naive.files.values()][0]!.deletionVector);
      expect(s.files[0]!.deletionVector).toMatchObject({ offset: 1, cardinality: 2 });
      expect(s.tombstones.some((t) => t.path === s.files[0]!.path && !t.deletionVector)).toBe(true);
    }
  });

  it("same path with different DVs are different logical files; re-adding resurrects", async () => {
    const dv = (id: string) => ({
      storageType: "u",
      pathOrInlineDv: id,
      offset: 1,
      sizeInBytes: 36,
      cardinality: 1,
    });
    const addDv = (p: string, id: string) => ({ add: { ...add(p).add, deletionVector: dv(id) } });
    const removeDv = (p: string, id: string) => ({
      remove: { ...remove(p).remove, deletionVector: dv(id) },
    });
    const dir = await writeTable([
      { actions: [protocol11, metaData(), add("a"), add("b")] },
      { actions: [remove("a"), addDv("a", "d1")] },
      { actions: [removeDv("a", "d1"), addDv("a", "d2"), remove("b")] },
      { actions: [add("b")] },
    ]);
    const s = await loadSnapshot(new LocalObjectStore(dir), "");
    expect(s.files.map((f) => [f.path, f.deletionVector?.pathOrInlineDv]).sort()).toEqual([
      ["a", "d2"],
      ["b", undefined],
    ]);
    const tombstones = s.tombstones.map((t) => `${t.path}:${t.deletionVector?.pathOrInlineDv}`);
    expect(tombstones.sort()).toEqual(["a:d1", "a:undefined"]);
  });

  it("canonicalized paths: file:/x and /x are the same file", async () => {
    for (const dir of [
      "canonicalized-paths-normal-a",
      "canonicalized-paths-normal-b",
      "canonicalized-paths-special-a",
      "canonicalized-paths-special-b",
    ]) {
      // Each adds one absolute path in v0 and removes its file:-qualified form in v1; Spark's
      // golden test expects an empty table.
      const s = await load(`golden/${dir}`);
      expect(s.version).toBe(1);
      expect(s.files).toEqual([]);
    }
  });

  it("txns per appId and domain metadata per domain, tombstones dropped", async () => {
    const dir = await writeTable([
      {
        actions: [
          protocol11,
          metaData(),
          { txn: { appId: "app", version: 1 } },
          { domainMetadata: { domain: "x", configuration: "{}", removed: false } },
          { domainMetadata: { domain: "y", configuration: "{}", removed: false } },
        ],
      },
      {
        actions: [
          { txn: { appId: "app", version: 0, lastUpdated: 5 } },
          { txn: { appId: "other", version: 7 } },
          { domainMetadata: { domain: "x", configuration: '{"a":1}', removed: false } },
          { domainMetadata: { domain: "y", configuration: "{}", removed: true } },
        ],
      },
    ]);
    const s = await loadSnapshot(new LocalObjectStore(dir), "");
    expect(s.txns.get("app")).toEqual({ appId: "app", version: 0, lastUpdated: 5 });
    expect(s.txns.get("other")!.version).toBe(7);
    expect([...s.domainMetadata.keys()]).toEqual(["x"]);
    expect(s.domainMetadata.get("x")!.configuration).toBe('{"a":1}');
  });

  it("every fixture with a complete commit chain matches the naive replay", async () => {
    const skip = new Set([
      // Paths that only match after canonicalization (tested above).
      "golden/canonicalized-paths-normal-a",
      "golden/canonicalized-paths-normal-b",
      "golden/canonicalized-paths-special-a",
      "golden/canonicalized-paths-special-b",
    ]);
    const expectedErrors = new Set([
      "DELTA_STATE_RECOVER_ERROR",
      "DELTA_UNSUPPORTED_FEATURES_FOR_READ",
      "DELTA_INVALID_PROTOCOL_VERSION",
    ]);
    let checked = 0;
    for (const group of ["golden", "spark", "delta-rs", "catalog-managed"]) {
      for (const name of await readdir(path.join(FIXTURES, group))) {
        const dir = `${group}/${name}`;
        if (skip.has(dir)) continue;
        let names: string[];
        try {
          names = await readdir(path.join(FIXTURES, dir, "_delta_log"));
        } catch {
          continue;
        }
        const versions = names
          .filter((n) => /^\d{20}\.json$/.test(n))
          .map((n) => Number(n.slice(0, 20)))
          .sort((a, b) => a - b);
        if (versions.length === 0 || versions.some((v, i) => v !== i)) continue;
        const naive = await naiveReplay(dir);
        let s: Snapshot;
        try {
          s = await load(dir);
        } catch (e) {
          expect(e, dir).toBeInstanceOf(SiltError);
          expect(expectedErrors, `${dir}: ${(e as Error).message}`).toContain(
            (e as SiltError).errorClass,
          );
          continue;
        }
        expect(s.version, dir).toBe(naive.version);
        expect(s.files.map((f) => f.path).sort(), dir).toEqual(
          [...naive.files.values()].map((f) => f.path).sort(),
        );
        expect(s.metadata.id, dir).toBe(naive.metadata!.id);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(60);
  });
});

describe("catalog-managed tables", () => {
  const dir = "catalog-managed/catalog-owned-preview";
  const staged = {
    1: `${dir}/_delta_log/_staged_commits/00000000000000000001.4cb9708e-b478-44de-b203-53f9ba9b2876.json`,
    2: `${dir}/_delta_log/_staged_commits/00000000000000000002.5b9bba4a-0085-430d-a65e-b0d38c1afbe9.json`,
  };

  it("without the catalog only published version 0 is visible", async () => {
    const s = await load(dir);
    expect(s.version).toBe(0);
    expect(s.files).toEqual([]);
    expect(s.protocol.readerFeatures).toEqual(["catalogManaged"]);
    // v0 commitInfo's inCommitTimestamp; the table enables ICT.
    expect(s.timestamp).toBe(1749830855993);
  });

  it("ratified staged commits extend the table", async () => {
    const ratified = [
      { version: 1, key: staged[1] },
      { version: 2, key: staged[2] },
    ];
    const s = await load(dir, { ratified, latestRatified: 2 });
    expect(s.version).toBe(2);
    // info.txt: commit 1 inserts into part1=0, commit 2 into part1=1, one file each.
    expect(s.files.map((f) => f.partitionValues)).toEqual([{ part1: "0" }, { part1: "1" }]);
    expect(s.timestamp).toBe(1749830881799);

    const at1 = await load(dir, { ratified: ratified.slice(0, 1), latestRatified: 1 });
    expect(at1.version).toBe(1);
    expect(at1.files).toHaveLength(1);

    const travel = await load(dir, { ratified, latestRatified: 2, version: 1 });
    expect(travel.files).toHaveLength(1);

    const history = await readCommitInfos(fixtures, `${dir}/`, { ratified, latestRatified: 2 });
    expect(history.map((h) => [h.version, h.timestamp, h.commitInfo.operation])).toEqual([
      [2, 1749830881799, "WRITE"],
      [1, 1749830871085, "WRITE"],
      [0, 1749830855993, "CREATE TABLE"],
    ]);
  });

  it("a ratified version the catalog did not hand over is a gap", async () => {
    await expectError(
      load(dir, { ratified: [{ version: 2, key: staged[2] }], latestRatified: 2 }),
      "DELTA_VERSIONS_NOT_CONTIGUOUS",
    );
  });

  it("the catalog's commit wins over v.json, and files above latestRatified are ignored", async () => {
    const t = await writeTable([
      { actions: [protocol11, metaData(), add("a")] },
      { actions: [add("published-1")] },
      { actions: [add("published-2")] },
    ]);
    await mkdir(path.join(t, "_delta_log", "_staged_commits"), { recursive: true });
    const stagedKey = "_delta_log/_staged_commits/00000000000000000001.0000-uuid.json";
    await writeFile(path.join(t, stagedKey), `${JSON.stringify(add("staged-1"))}\n`);
    const store = new LocalObjectStore(t);
    const s = await loadSnapshot(store, "", {
      ratified: [{ version: 1, key: stagedKey }],
      latestRatified: 1,
    });
    expect(s.version).toBe(1);
    expect(s.files.map((f) => f.path)).toEqual(["a", "staged-1"]);
    // Without the cap, version 2 (published) builds on the catalog's version 1.
    const all = await loadSnapshot(store, "", { ratified: [{ version: 1, key: stagedKey }] });
    expect(all.files.map((f) => f.path)).toEqual(["a", "staged-1", "published-2"]);
    // A staged file cleaned up after publishing falls back to the published copy.
    const gone = await loadSnapshot(store, "", {
      ratified: [{ version: 1, key: "_delta_log/_staged_commits/00000000000000000001.gone.json" }],
      latestRatified: 1,
    });
    expect(gone.files.map((f) => f.path)).toEqual(["a", "published-1"]);
  });
});

describe("time travel", () => {
  it("time-travel-start*: version AS OF", async () => {
    // The generator wrote 10 rows per commit as two files, so each version adds two files.
    const tables: [string, number][] = [
      ["golden/time-travel-start", 0],
      ["golden/time-travel-start-start20", 1],
      ["golden/time-travel-start-start20-start40", 2],
    ];
    for (const [dir, latest] of tables) {
      for (let v = 0; v <= latest; v++) {
        const s = await load(dir, { version: v });
        expect(s.version).toBe(v);
        expectSameFiles(s, (await naiveReplay(dir, v)).files);
        expect(s.files).toHaveLength(2 * (v + 1));
      }
      await expectError(
        load(dir, { version: latest + 1 }),
        "DELTA_VERSION_NOT_FOUND",
        new RegExp(`Available versions: \\[0, ${latest}\\]\\.$`),
      );
    }
    await expectError(load("golden/time-travel-start", { version: -1 }), "DELTA_VERSION_NOT_FOUND");
  });

  /**
   * The fixture's files were copied, so their mtimes are the copy time. Restore what Spark saw:
   * each commit file's mtime equal to its commitInfo.timestamp.
   */
  async function timeTravelTable() {
    const dir = await copyFixture("golden/time-travel-start-start20-start40");
    const times: number[] = [];
    for (let v = 0; v <= 2; v++) {
      const file = path.join(dir, "_delta_log", commitFileName(v));
      const info = JSON.parse((await readFile(file, "utf8")).split("\n")[0]!).commitInfo;
      times.push(info.timestamp);
      await setMtime(file, info.timestamp);
    }
    return { store: new LocalObjectStore(dir), times };
  }

  it("timestamp AS OF by file modification time", async () => {
    const { store, times } = await timeTravelTable();
    expect(times).toEqual([1603724019870, 1603724021190, 1603724022561]);
    const at = (ts: number | string) => loadSnapshot(store, "", { timestamp: ts });
    expect((await at(times[0]!)).version).toBe(0);
    expect((await at(times[1]! - 1)).version).toBe(0);
    expect((await at(times[1]!)).version).toBe(1);
    expect((await at(times[2]! - 1)).version).toBe(1);
    expect((await at(times[2]!)).version).toBe(2);
    expect((await at("2020-10-26 14:53:41.190")).version).toBe(1);
    expect((await at("2020-10-26T14:53:41.19Z")).version).toBe(1);
    expect((await at("2020-10-26T16:53:41.189+02:00")).version).toBe(0);
    const s = await at(times[1]! + 5);
    expect(s.files).toHaveLength(4);
    expect(s.timestamp).toBe(times[1]);

    const late = await expectError(
      at(times[2]! + 1000),
      "DELTA_TIMESTAMP_GREATER_THAN_COMMIT",
      /^The provided timestamp \(2020-10-26 14:53:43\.561\) is after the latest version available to this table \(2020-10-26 14:53:42\.561\)\. Please use a timestamp before or at 2020-10-26 14:53:42\.$/,
    );
    expect(late.sqlstate).toBe("42816");
    expect(late.status).toBe(400);
    await expectError(
      at("2020-10-26"),
      "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION",
      /before the earliest version available to this table \(2020-10-26 14:53:39\.87\)/,
    );
    await expectError(at("yesterday"), "DELTA_TIMESTAMP_INVALID");
    await expectError(at("2020-02-30"), "DELTA_TIMESTAMP_INVALID");
  });

  it("file mtimes that go backwards are made monotonic", async () => {
    const { store, times } = await timeTravelTable();
    // v2 written "before" v1: it counts as 1 ms after v1.
    await setMtime(path.join(store.rootDir, "_delta_log", commitFileName(2)), times[1]! - 500);
    const s = await loadSnapshot(store, "", { timestamp: times[1]! + 1 });
    expect(s.version).toBe(2);
    expect((await loadSnapshot(store, "", { timestamp: times[1]! })).version).toBe(1);
  });

  it("cdc_ict_table: in-commit timestamps, not file times", async () => {
    const dir = "delta-rs/cdc_ict_table";
    // commitInfo.inCommitTimestamp of v0..v3 (v1's is hand-edited to go backwards).
    const ict = [1783874203271, 1683874206883, 1783874212175, 1783874213881];
    const latest = await load(dir);
    expect(latest.version).toBe(3);
    expect(latest.timestamp).toBe(ict[3]);
    expect((await load(dir, { timestamp: ict[2]! })).version).toBe(2);
    expect((await load(dir, { timestamp: ict[3]! - 1 })).version).toBe(2);
    expect((await load(dir, { timestamp: ict[3]! })).version).toBe(3);
    expect((await load(dir, { timestamp: new Date(ict[2]!).toISOString() })).version).toBe(2);
    expect((await load(dir, { version: 2 })).timestamp).toBe(ict[2]);
    await expectError(load(dir, { timestamp: ict[3]! + 1 }), "DELTA_TIMESTAMP_GREATER_THAN_COMMIT");
    await expectError(
      load(dir, { timestamp: ict[0]! - 1 }),
      "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION",
    );

    const history = await readCommitInfos(fixtures, `${dir}/`);
    expect(history.map((h) => h.version)).toEqual([3, 2, 1, 0]);
    expect(history.map((h) => h.timestamp)).toEqual([...ict].reverse());
    expect(history[0]!.commitInfo.operation).toBe("UPDATE");
  });

  it("ICT enabled later: older versions by mtime, newer by ICT", async () => {
    const t0 = Date.UTC(2024, 0, 1);
    const ictStart = t0 + 10 * 60_000;
    const dir = await writeTable([
      { actions: [protocol11, metaData(), add("a")], mtime: t0 },
      { actions: [add("b")], mtime: t0 + 60_000 },
      {
        actions: [
          { commitInfo: { inCommitTimestamp: ictStart, operation: "SET TBLPROPERTIES" } },
          metaData({
            "delta.enableInCommitTimestamps": "true",
            "delta.inCommitTimestampEnablementVersion": "2",
            "delta.inCommitTimestampEnablementTimestamp": String(ictStart),
          }),
        ],
        // Copies and clocks can make the file times meaningless once ICT is on.
        mtime: t0 + 99 * 60_000,
      },
      {
        actions: [{ commitInfo: { inCommitTimestamp: ictStart + 60_000 } }, add("c")],
        mtime: t0 + 1,
      },
    ]);
    const store = new LocalObjectStore(dir);
    const at = async (ts: number) => (await loadSnapshot(store, "", { timestamp: ts })).version;
    expect(await at(t0)).toBe(0);
    expect(await at(t0 + 60_000)).toBe(1);
    expect(await at(ictStart - 1)).toBe(1);
    expect(await at(ictStart)).toBe(2);
    expect(await at(ictStart + 60_000)).toBe(3);
    const latest = await loadSnapshot(store, "");
    expect(latest.timestamp).toBe(ictStart + 60_000);
    expect((await loadSnapshot(store, "", { version: 1 })).timestamp).toBe(t0 + 60_000);
    const history = await readCommitInfos(store, "", { limit: 3 });
    expect(history.map((h) => [h.version, h.timestamp])).toEqual([
      [3, ictStart + 60_000],
      [2, ictStart],
      [1, t0 + 60_000],
    ]);
  });

  it("both version and timestamp is an error", async () => {
    await expectError(
      load("golden/time-travel-start", { version: 0, timestamp: 0 }),
      "INVALID_TIME_TRAVEL_SPEC",
    );
  });

  it("parseTimestamp formats", () => {
    expect(parseTimestamp("2024-03-05")).toBe(Date.UTC(2024, 2, 5));
    expect(parseTimestamp("2024-03-05 01:02:03")).toBe(Date.UTC(2024, 2, 5, 1, 2, 3));
    expect(parseTimestamp("2024-03-05 01:02:03.456789")).toBe(Date.UTC(2024, 2, 5, 1, 2, 3, 456));
    expect(parseTimestamp("2024-03-05T01:02:03Z")).toBe(Date.UTC(2024, 2, 5, 1, 2, 3));
    expect(parseTimestamp("2024-03-05T01:02:03-0130")).toBe(Date.UTC(2024, 2, 5, 2, 32, 3));
    expect(parseTimestamp(1234.9)).toBe(1234);
  });
});

describe("history and cost", () => {
  it("readCommitInfos reads only the head of each commit file", async () => {
    const store = new CountingStore(new LocalObjectStore(await copyFixture("golden/checkpoint")));
    const history = await readCommitInfos(store, "", { limit: 3 });
    expect(history.map((h) => h.version)).toEqual([14, 13, 12]);
    expect(store.gets).toEqual(["_delta_log/_last_checkpoint"]);
    expect(store.ranges).toHaveLength(3);
    // Commits 12..14 lie above the checkpoint hint, so the listing starts there.
    expect(store.lists[0]!.startAfter).toBe(`_delta_log/${"10".padStart(20, "0")}`);
    const all = await readCommitInfos(store, "");
    expect(all.map((h) => h.version)).toEqual([14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
  });

  it("loads the latest of 1,000 commits without a checkpoint, one GET per commit", async () => {
    const commits: { actions: Json[] }[] = [{ actions: [protocol11, metaData(), add("f0")] }];
    for (let v = 1; v < 1000; v++) {
      const actions: Json[] = [{ commitInfo: { timestamp: v, operation: "WRITE" } }, add(`f${v}`)];
      if (v % 3 === 0) actions.push(remove(`f${v - 1}`));
      commits.push({ actions });
    }
    const dir = await writeTable(commits);
    const store = new CountingStore(new LocalObjectStore(dir));
    const s = await loadSnapshot(store, "");
    expect(s.version).toBe(999);
    expect(s.files).toHaveLength(1000 - 333);
    expect(store.gets.filter((k) => k.endsWith(".json"))).toHaveLength(1000);
  });
});
