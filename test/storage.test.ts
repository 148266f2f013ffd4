import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import {
  listAll,
  type ObjectInfo,
  ObjectNotFoundError,
  type ObjectStore,
} from "../lib/storage/object-store.ts";
import { S3ObjectStore } from "../lib/storage/s3-store.ts";
import { type S3TestEndpoint, startS3Emulator } from "./helpers/s3-emulator.ts";

/** Hands out stores that share nothing, so every test starts from an empty namespace. */
interface Backend {
  name: string;
  setup(): Promise<void>;
  fresh(): ObjectStore;
  teardown(): Promise<void>;
}

function localBackend(): Backend {
  let root = "";
  let n = 0;
  return {
    name: "local",
    async setup() {
      root = await mkdtemp(path.join(os.tmpdir(), "silt-local-store-"));
    },
    fresh: () => new LocalObjectStore(path.join(root, `store-${n++}`)),
    async teardown() {
      if (root) await rm(root, { recursive: true, force: true });
    },
  };
}

function s3Backend(): Backend {
  let s3: S3TestEndpoint | undefined;
  let n = 0;
  return {
    name: "s3",
    async setup() {
      s3 = await startS3Emulator();
    },
    fresh: () => {
      if (!s3) throw new Error("S3 emulator not started");
      return new S3ObjectStore({
        client: s3.client,
        bucket: s3.bucket,
        prefix: `${s3.prefix}store-${n++}`,
      });
    },
    async teardown() {
      await s3?.close();
    },
  };
}

const text = (s: string) => new TextEncoder().encode(s);
const bytes = (n: number, from = 0) => Uint8Array.from({ length: n }, (_, i) => (from + i) % 256);
const keysOf = (infos: ObjectInfo[]) => infos.map((i) => i.key);
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function putAll(store: ObjectStore, keys: string[], batch = 100): Promise<void> {
  for (let i = 0; i < keys.length; i += batch) {
    await Promise.all(keys.slice(i, i + batch).map((k) => store.put(k, text(k))));
  }
}

describe.each([localBackend(), s3Backend()])("$name object store", (backend) => {
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());

  it("gets what was put, and a put replaces the whole object", async () => {
    const store = backend.fresh();
    const all = bytes(256);
    await store.put("t/_delta_log/00000000000000000000.json", all);
    expect(await store.get("t/_delta_log/00000000000000000000.json")).toEqual(all);

    await store.put("t/_delta_log/00000000000000000000.json", text("short"));
    const got = await store.get("t/_delta_log/00000000000000000000.json");
    expect(got).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(got)).toBe("short");

    await store.put("t/empty", new Uint8Array(0));
    expect((await store.get("t/empty")).length).toBe(0);
  });

  it("heads existing objects and answers undefined for missing ones", async () => {
    const store = backend.fresh();
    const before = Date.now();
    await store.put("a/b.parquet", bytes(1234));
    const info = await store.head("a/b.parquet");
    expect(info).toBeDefined();
    expect(info?.key).toBe("a/b.parquet");
    expect(info?.size).toBe(1234);
    // S3 keeps whole seconds; allow for that plus clock skew with a remote endpoint.
    expect(info?.lastModified).toBeGreaterThan(before - 60_000);
    expect(info?.lastModified).toBeLessThan(Date.now() + 60_000);

    expect(await store.head("a/missing")).toBeUndefined();
    expect(await store.head("a")).toBeUndefined();
  });

  it("throws ObjectNotFoundError for reads of a missing key", async () => {
    const store = backend.fresh();
    await expect(store.get("nope/x.json")).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(store.get("nope/x.json")).rejects.toMatchObject({ key: "nope/x.json" });
    await expect(store.getRange("nope/x.json", 0, 10)).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(store.getRange("nope/x.json", 5, 5)).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(store.getSuffix("nope/x.json", 8)).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it("reads byte ranges, clamping the end to the object size", async () => {
    const store = backend.fresh();
    const all = bytes(100);
    await store.put("r", all);
    expect(await store.getRange("r", 10, 20)).toEqual(all.slice(10, 20));
    expect(await store.getRange("r", 0, 1)).toEqual(all.slice(0, 1));
    expect(await store.getRange("r", 99, 100)).toEqual(all.slice(99, 100));
    expect(await store.getRange("r", 90, 1000)).toEqual(all.slice(90));
    expect(await store.getRange("r", 0, 100)).toEqual(all);
    expect((await store.getRange("r", 100, 110)).length).toBe(0);
    expect((await store.getRange("r", 500, 600)).length).toBe(0);
    expect((await store.getRange("r", 7, 7)).length).toBe(0);
  });

  it("reads suffixes, whole object when asked for more than it has", async () => {
    const store = backend.fresh();
    const all = bytes(100, 7);
    await store.put("s", all);
    expect(await store.getSuffix("s", 8)).toEqual(all.slice(92));
    expect(await store.getSuffix("s", 1)).toEqual(all.slice(99));
    expect(await store.getSuffix("s", 100)).toEqual(all);
    expect(await store.getSuffix("s", 5000)).toEqual(all);
    expect((await store.getSuffix("s", 0)).length).toBe(0);

    await store.put("empty", new Uint8Array(0));
    expect((await store.getSuffix("empty", 8)).length).toBe(0);
  });

  it("putIfAbsent writes once and then leaves the object alone", async () => {
    const store = backend.fresh();
    expect(await store.putIfAbsent("log/00001.json", text("first"))).toBe(true);
    expect(await store.putIfAbsent("log/00001.json", text("second, longer"))).toBe(false);
    expect(new TextDecoder().decode(await store.get("log/00001.json"))).toBe("first");

    await store.put("log/00002.json", text("plain put"));
    expect(await store.putIfAbsent("log/00002.json", text("other"))).toBe(false);
    expect(new TextDecoder().decode(await store.get("log/00002.json"))).toBe("plain put");
  });

  it("lets exactly one of 20 concurrent putIfAbsent calls win, and keeps its body", async () => {
    const store = backend.fresh();
    const bodies = Array.from({ length: 20 }, (_, i) => text(`writer ${i} `.repeat(i + 1)));
    const results = await Promise.all(bodies.map((b) => store.putIfAbsent("race/00005.json", b)));
    const winners = results.flatMap((won, i) => (won ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(await store.get("race/00005.json")).toEqual(bodies[winners[0]]);
  });

  it("lists only keys under the prefix, with sizes", async () => {
    const store = backend.fresh();
    await store.put("logs/a", bytes(3));
    await store.put("logs/sub/b", bytes(5));
    await store.put("logsX/c", bytes(7));
    await store.put("log", bytes(11));
    await store.put("other/logs/d", bytes(13));

    const under = await listAll(store, "logs/");
    expect(keysOf(under)).toEqual(["logs/a", "logs/sub/b"]);
    expect(under.map((i) => i.size)).toEqual([3, 5]);
    expect(keysOf(await listAll(store, "logs"))).toEqual(["logs/a", "logs/sub/b", "logsX/c"]);
    expect(keysOf(await listAll(store, "log"))).toEqual(["log", "logs/a", "logs/sub/b", "logsX/c"]);
    expect(keysOf(await listAll(store, "logs/s"))).toEqual(["logs/sub/b"]);
    expect(keysOf(await listAll(store, "nothing/"))).toEqual([]);
    // The whole store holds exactly what was written: no temp files, no other store's keys.
    expect(keysOf(await listAll(store, ""))).toEqual([
      "log",
      "logs/a",
      "logs/sub/b",
      "logsX/c",
      "other/logs/d",
    ]);

    const info = (await listAll(store, "logsX/"))[0];
    const headed = await store.head("logsX/c");
    expect(Math.abs(info.lastModified - (headed?.lastModified ?? 0))).toBeLessThan(1000);
  });

  it("lists in byte order of the full key, not directory or UTF-16 order", async () => {
    const store = backend.fresh();
    const keys = [
      "x/a/b",
      "x/a.b",
      "x/a-b",
      "x/a0",
      "x/ab",
      "x/a/a/z",
      "x/B",
      "x/\u00e9",
      "x/\u{1F600}",
      "x/\uFFFD",
      "x/~",
    ];
    await putAll(store, keys);
    const expected = [...keys].sort(byteOrder);
    // Pin the two places where naive orders differ, so a broken byteOrder cannot hide a bug.
    expect(expected.indexOf("x/a.b")).toBeLessThan(expected.indexOf("x/a/b"));
    expect(expected.indexOf("x/\uFFFD")).toBeLessThan(expected.indexOf("x/\u{1F600}"));
    expect(keysOf(await listAll(store, "x/"))).toEqual(expected);
  });

  it("starts after the given key, whether or not it exists", async () => {
    const store = backend.fresh();
    const keys = ["p/0", "p/1", "p/2/a", "p/2/b", "p/3", "q/0"];
    await putAll(store, keys);
    expect(keysOf(await listAll(store, "p/", { startAfter: "p/1" }))).toEqual([
      "p/2/a",
      "p/2/b",
      "p/3",
    ]);
    expect(keysOf(await listAll(store, "p/", { startAfter: "p/2/a" }))).toEqual(["p/2/b", "p/3"]);
    expect(keysOf(await listAll(store, "p/", { startAfter: "p/15" }))).toEqual([
      "p/2/a",
      "p/2/b",
      "p/3",
    ]);
    expect(keysOf(await listAll(store, "p/", { startAfter: "a" }))).toHaveLength(5);
    expect(keysOf(await listAll(store, "p/", { startAfter: "p/3" }))).toEqual([]);
    expect(keysOf(await listAll(store, "", { startAfter: "p/3" }))).toEqual(["q/0"]);
  });

  it("lists past 1000 keys across pages, in order, without gaps or repeats", async () => {
    const store = backend.fresh();
    // Files next to same-named directories ("00007.json", "00007/part") make a directory walk
    // disagree with key order on every page.
    const keys = Array.from({ length: 1205 }, (_, i) => {
      const stem = `many/${String(i >> 1).padStart(5, "0")}`;
      return i % 2 === 0 ? `${stem}.json` : `${stem}/part`;
    }).sort(byteOrder);
    await putAll(store, [...keys].reverse());
    const listed = keysOf(await listAll(store, "many/"));
    expect(listed).toHaveLength(1205);
    expect(listed).toEqual(keys);
    expect(keysOf(await listAll(store, "many/", { startAfter: keys[999] }))).toEqual(
      keys.slice(1000),
    );
    expect(keysOf(await listAll(store, "many/", { startAfter: keys[3] }))).toEqual(keys.slice(4));
  });

  it("deletes single and many objects, ignoring absent ones", async () => {
    const store = backend.fresh();
    await putAll(store, ["d/1", "d/2", "d/3", "d/keep"]);
    await store.delete("d/1");
    await expect(store.get("d/1")).rejects.toBeInstanceOf(ObjectNotFoundError);
    await store.delete("d/1");
    await store.delete("never/was");

    await store.deleteMany(["d/2", "d/3", "d/absent", "d/2"]);
    await store.deleteMany([]);
    expect(keysOf(await listAll(store, "d/"))).toEqual(["d/keep"]);
    expect(await store.head("d/2")).toBeUndefined();
  });

  it("copyIfAbsent copies once and never overwrites the destination", async () => {
    const store = backend.fresh();
    await store.put("staged/00003.abc.json", text("v1"));
    expect(await store.copyIfAbsent("staged/00003.abc.json", "log/00003.json")).toBe(true);
    expect(new TextDecoder().decode(await store.get("log/00003.json"))).toBe("v1");

    await store.put("staged/00003.abc.json", text("v2 differs"));
    expect(await store.copyIfAbsent("staged/00003.abc.json", "log/00003.json")).toBe(false);
    expect(new TextDecoder().decode(await store.get("log/00003.json"))).toBe("v1");
    // The copy is independent of its source.
    await store.delete("staged/00003.abc.json");
    expect(new TextDecoder().decode(await store.get("log/00003.json"))).toBe("v1");

    await expect(store.copyIfAbsent("staged/missing", "log/00004.json")).rejects.toBeInstanceOf(
      ObjectNotFoundError,
    );
    expect(await store.head("log/00004.json")).toBeUndefined();
  });

  it("keeps separate stores separate", async () => {
    const one = backend.fresh();
    const two = backend.fresh();
    await one.put("same/key", text("one"));
    expect(await two.head("same/key")).toBeUndefined();
    await two.put("same/key", text("two"));
    expect(new TextDecoder().decode(await one.get("same/key"))).toBe("one");
    expect(keysOf(await listAll(two, ""))).toEqual(["same/key"]);
  });
});

describe("LocalObjectStore specifics", () => {
  const backend = localBackend();
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());

  it("never lists temp files, even ones a crashed writer left behind", async () => {
    const store = backend.fresh() as LocalObjectStore;
    await store.put("a", text("a"));
    await writeFile(path.join(store.rootDir, ".silt-tmp", "left-over"), text("partial"));
    expect(keysOf(await listAll(store, ""))).toEqual(["a"]);
    expect(keysOf(await listAll(store, "."))).toEqual([]);
  });

  it("refuses keys that could escape the root or reach the temp directory", async () => {
    const store = backend.fresh();
    for (const key of ["", "/abs", "a//b", "a/../b", "./a", "a/", ".silt-tmp/x"]) {
      await expect(store.put(key, text("x")), key).rejects.toThrow(/Invalid object key/);
    }
  });
});
