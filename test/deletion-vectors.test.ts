import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { crc32 } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DeletionVectorDescriptor } from "../lib/delta/actions.ts";
import {
  deletedRowMask,
  dvFileKey,
  dvUniqueId,
  inlineDeletionVector,
  loadDeletionVector,
  unionRowIndexes,
  writeDeletionVectorFile,
} from "../lib/delta/deletion-vectors.ts";
import { serializeRowIndexes } from "../lib/delta/roaring-bitmap-array.ts";
import { uuidToZ85, z85ToUuid } from "../lib/delta/z85.ts";
import { SiltError } from "../lib/errors.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import {
  type ObjectInfo,
  ObjectNotFoundError,
  type ObjectStore,
} from "../lib/storage/object-store.ts";

const FIXTURES = new URL("../../shared/fixtures/delta/", import.meta.url).pathname;
const TWO_32 = 2 ** 32;

/** Enough of an ObjectStore for DV reads and writes, with the objects in a Map. */
class MemoryStore implements ObjectStore {
  readonly objects = new Map<string, Uint8Array>();
  rangeReads = 0;

  async get(key: string): Promise<Uint8Array> {
    const v = this.objects.get(key);
    if (!v) throw new ObjectNotFoundError(key);
    return v.slice();
  }
  async getRange(key: string, start: number, end: number): Promise<Uint8Array> {
    this.rangeReads++;
    return (await this.get(key)).slice(start, end);
  }
  async getSuffix(key: string, length: number): Promise<Uint8Array> {
    const v = await this.get(key);
    return v.slice(Math.max(0, v.length - length));
  }
  async head(key: string): Promise<ObjectInfo | undefined> {
    const v = this.objects.get(key);
    return v ? { key, size: v.length, lastModified: 0 } : undefined;
  }
  async put(key: string, body: Uint8Array): Promise<void> {
    this.objects.set(key, body.slice());
  }
  async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    if (this.objects.has(key)) return false;
    this.objects.set(key, body.slice());
    return true;
  }
  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    for (const key of [...this.objects.keys()].sort()) {
      if (key.startsWith(prefix))
        yield { key, size: this.objects.get(key)!.length, lastModified: 0 };
    }
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
  async deleteMany(keys: string[]): Promise<void> {
    for (const k of keys) this.objects.delete(k);
  }
  async copyIfAbsent(src: string, dst: string): Promise<boolean> {
    return this.putIfAbsent(dst, await this.get(src));
  }
}

/**
 * Spark's own test suite names DV files `test%dv%prefix-deletion_vector_<uuid>.bin` (a JVM-static
 * test setting, not recorded in the descriptor), so its fixtures need this name mapping to be read.
 */
class SparkTestPrefixStore extends LocalObjectStore {
  override async getRange(key: string, start: number, end: number): Promise<Uint8Array> {
    try {
      return await super.getRange(key, start, end);
    } catch (e) {
      if (!(e instanceof ObjectNotFoundError)) throw e;
      return super.getRange(
        key.replace(/deletion_vector_/, "test%dv%prefix-deletion_vector_"),
        start,
        end,
      );
    }
  }
}

/** Every DV descriptor referenced by add/remove actions in a table's JSON commits. */
async function logDescriptors(table: string): Promise<DeletionVectorDescriptor[]> {
  const logDir = path.join(FIXTURES, table, "_delta_log");
  const files = (await readdir(logDir)).filter((f) => /^\d{20}\.json$/.test(f)).sort();
  const out: DeletionVectorDescriptor[] = [];
  for (const f of files) {
    for (const line of (await readFile(path.join(logDir, f), "utf8")).split("\n")) {
      if (line.trim() === "") continue;
      const action = JSON.parse(line);
      const dv = (action.add ?? action.remove)?.deletionVector;
      if (dv) out.push(dv);
    }
  }
  return out;
}

const expectSilt = async (p: Promise<unknown>, errorClass: string, status = 500) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SiltError);
  expect(err).toMatchObject({ errorClass, status });
};

const rowsOf = (xs: number[]) => Float64Array.from(xs);
const range = (from: number, n: number) => Float64Array.from({ length: n }, (_, i) => from + i);

describe("descriptor helpers", () => {
  const u: DeletionVectorDescriptor = {
    storageType: "u",
    pathOrInlineDv: "vBn[lx{q8@P<9BNH/isA",
    offset: 1,
    sizeInBytes: 36,
    cardinality: 2,
  };

  it("builds the unique id with and without an offset", () => {
    expect(dvUniqueId(u)).toBe("uvBn[lx{q8@P<9BNH/isA@1");
    expect(dvUniqueId({ ...u, offset: undefined })).toBe("uvBn[lx{q8@P<9BNH/isA");
    const inline = inlineDeletionVector([1, 2]);
    expect(dvUniqueId(inline)).toBe(`i${inline.pathOrInlineDv}`);
  });

  it("maps relative (u) descriptors to keys under the table root", () => {
    expect(dvFileKey(u, "")).toBe("deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin");
    expect(dvFileKey(u, "tables/t1/")).toBe(
      "tables/t1/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin",
    );
    expect(dvFileKey({ ...u, pathOrInlineDv: `ab${u.pathOrInlineDv}` }, "tables/t1/")).toBe(
      "tables/t1/ab/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin",
    );
    expect(() => dvFileKey(u, "tables/t1")).toThrow(/must be empty or end with "\/"/);
    expect(() => dvFileKey({ ...u, pathOrInlineDv: "short" }, "")).toThrow(SiltError);
    expect(() => dvFileKey(inlineDeletionVector([1]), "")).toThrow(/inline DV has no file/);
  });

  it("maps absolute (p) paths only when they lead into the table directory", () => {
    const p = (pathOrInlineDv: string): DeletionVectorDescriptor => ({
      storageType: "p",
      pathOrInlineDv,
      offset: 1,
      sizeInBytes: 34,
      cardinality: 1,
    });
    expect(dvFileKey(p("s3://bucket/tables/t1/deletion_vector_x.bin"), "tables/t1/")).toBe(
      "tables/t1/deletion_vector_x.bin",
    );
    expect(dvFileKey(p("s3a://bucket/root/tables/t1/ab/dv.bin"), "tables/t1/")).toBe(
      "tables/t1/ab/dv.bin",
    );
    expect(dvFileKey(p("file:///data/tables/t1/sub%20dir/dv%25x.bin"), "tables/t1/")).toBe(
      "tables/t1/sub dir/dv%x.bin",
    );
    expect(dvFileKey(p("file:/data/tables/t1/dv.bin"), "tables/t1/")).toBe("tables/t1/dv.bin");
    for (const bad of [
      "s3://bucket/tables/other/dv.bin",
      "file:/data/tables/t1/../t2/dv.bin",
      "file:/data/tables/t1/",
      "relative/tables/t1/dv.bin",
      "file:{{FOLDER_WITH_SPECIAL_CHAR}}/test%25dv%25prefix-deletion_vector_x.bin",
      "file:/data/tables/t1/%E0%A4%A.bin",
    ]) {
      expect(() => dvFileKey(p(bad), "tables/t1/"), bad).toThrow(
        expect.objectContaining({ errorClass: "DELTA_UNSUPPORTED_DELETION_VECTOR_PATH" }),
      );
    }
    expect(() => dvFileKey(p("file:/data/dv.bin"), "")).toThrow(/store root/);
  });
});

describe("reading DVs written by other engines", () => {
  const fixtures = new SparkTestPrefixStore(FIXTURES);

  it("decodes the delta-rs table-with-dv-small DV to rows 0 and 9", async () => {
    const [d] = await logDescriptors("delta-rs/table-with-dv-small");
    expect(d).toEqual({
      storageType: "u",
      pathOrInlineDv: "vBn[lx{q8@P<9BNH/isA",
      offset: 1,
      sizeInBytes: 36,
      cardinality: 2,
    });
    const rows = await loadDeletionVector(fixtures, "delta-rs/table-with-dv-small/", d);
    expect(Array.from(rows)).toEqual([0, 9]);
    expect(Array.from(deletedRowMask(rows, 10))).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
  });

  for (const table of [
    "golden/dv-partitioned-with-checkpoint",
    "spark/table-with-dv-large",
    "spark/table-with-dv-small",
  ]) {
    it(`decodes every DV in ${table} to its declared cardinality`, async () => {
      const descriptors = await logDescriptors(table);
      expect(descriptors.length).toBeGreaterThan(0);
      for (const d of descriptors) {
        const rows = await loadDeletionVector(fixtures, `${table}/`, d);
        expect(rows.length, dvUniqueId(d)).toBe(d.cardinality);
        for (let i = 1; i < rows.length; i++) expect(rows[i]).toBeGreaterThan(rows[i - 1]);
      }
    });
  }

  it("reads the multi-DV Spark file at every offset its log references", async () => {
    const descriptors = (await logDescriptors("spark/table-with-dv-large")).filter(
      (d) => d.pathOrInlineDv === "UGM+pBY.mtVeP<X.WD9m",
    );
    const offsets = new Set(descriptors.map((d) => d.offset));
    expect(offsets.size).toBeGreaterThan(3);
    const key = dvFileKey(descriptors[0], "spark/table-with-dv-large/");
    expect(key).toMatch(/^spark\/table-with-dv-large\/deletion_vector_[0-9a-f-]{36}\.bin$/);
  });
});

describe("writing DVs", () => {
  it("writes several DVs into one file and reads each back", async () => {
    const store = new MemoryStore();
    const bitmaps = [
      rowsOf([0, 9]),
      range(100, 5000),
      rowsOf([]),
      rowsOf([3, 70000, TWO_32 + 5]),
      range(65530, 20),
    ];
    const ds = await writeDeletionVectorFile(store, "tables/t1/", bitmaps);
    expect(store.objects.size).toBe(1);
    const [[key, file]] = [...store.objects];
    expect(key).toMatch(/^tables\/t1\/deletion_vector_[0-9a-f-]{36}\.bin$/);
    expect(file[0]).toBe(1);

    expect(ds).toHaveLength(bitmaps.length);
    expect(ds[0].offset).toBe(1);
    let expectedOffset = 1;
    for (const [i, d] of ds.entries()) {
      expect(Object.keys(d)).toEqual([
        "storageType",
        "pathOrInlineDv",
        "offset",
        "sizeInBytes",
        "cardinality",
      ]);
      expect(d.storageType).toBe("u");
      expect(d.pathOrInlineDv).toBe(ds[0].pathOrInlineDv);
      expect(d.offset).toBe(expectedOffset);
      expect(d.cardinality).toBe(bitmaps[i].length);
      expect(d.sizeInBytes).toBe(serializeRowIndexes(bitmaps[i]).length);
      expectedOffset += 4 + d.sizeInBytes + 4;
      expect(dvFileKey(d, "tables/t1/")).toBe(key);
      expect(Array.from(await loadDeletionVector(store, "tables/t1/", d))).toEqual(
        Array.from(bitmaps[i]),
      );
    }
    expect(file.length).toBe(expectedOffset);
    expect(key).toContain(z85ToUuid(ds[0].pathOrInlineDv));
    expect(await writeDeletionVectorFile(store, "tables/t1/", [])).toEqual([]);
  });

  it("places the file under a prefix and round-trips through the local store", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "silt-dv-"));
    try {
      const store = new LocalObjectStore(dir);
      const rows = range(0, 10_000);
      const [d] = await writeDeletionVectorFile(store, "tables/t2/", [rows], { prefix: "x7" });
      expect(d.pathOrInlineDv.startsWith("x7")).toBe(true);
      expect(d.pathOrInlineDv).toHaveLength(22);
      expect(dvFileKey(d, "tables/t2/")).toMatch(/^tables\/t2\/x7\/deletion_vector_/);
      expect(await loadDeletionVector(store, "tables/t2/", d)).toEqual(rows);
      await expect(
        writeDeletionVectorFile(store, "tables/t2/", [rows], { prefix: "../x" }),
      ).rejects.toThrow(/prefix/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("retries with a fresh name when the file already exists", async () => {
    const store = new MemoryStore();
    const original = store.putIfAbsent.bind(store);
    let calls = 0;
    store.putIfAbsent = async (key, body) => (++calls === 1 ? false : original(key, body));
    const [d] = await writeDeletionVectorFile(store, "", [rowsOf([4])]);
    expect(calls).toBe(2);
    expect(Array.from(await loadDeletionVector(store, "", d))).toEqual([4]);
  });

  it("round-trips inline DVs", async () => {
    const store = new MemoryStore();
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.nat(200_000), { maxLength: 40 }),
        fc.boolean(),
        async (xs, far) => {
          const rows = Float64Array.from(
            xs.map((x) => (far && x % 2 ? x + TWO_32 : x)).sort((a, b) => a - b),
          );
          const d = inlineDeletionVector(rows);
          expect(d.storageType).toBe("i");
          expect(d.offset).toBeUndefined();
          expect(d.sizeInBytes).toBe(serializeRowIndexes(rows).length);
          expect(d.pathOrInlineDv.length).toBe(Math.ceil(d.sizeInBytes / 4) * 5);
          expect(await loadDeletionVector(store, "", d)).toEqual(rows);
        },
      ),
      { numRuns: 60 },
    );
    expect(store.rangeReads).toBe(0);
  });
});

describe("verification", () => {
  async function written() {
    const store = new MemoryStore();
    const ds = await writeDeletionVectorFile(store, "t/", [rowsOf([1, 5, 7]), rowsOf([2])]);
    const [key] = [...store.objects.keys()];
    return { store, ds, key, file: store.objects.get(key)! };
  }

  it("detects a corrupted bitmap through its CRC", async () => {
    const { store, ds, file } = await written();
    file[ds[0].offset! + 4 + 20] ^= 0x10;
    await expectSilt(
      loadDeletionVector(store, "t/", ds[0]),
      "DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH",
    );
    // The neighbour in the same file is intact.
    expect(Array.from(await loadDeletionVector(store, "t/", ds[1]))).toEqual([2]);
  });

  it("detects a corrupted stored checksum", async () => {
    const { store, ds, file } = await written();
    const d = ds[1];
    const crcAt = d.offset! + 4 + d.sizeInBytes;
    const bitmap = file.subarray(d.offset! + 4, crcAt);
    expect(new DataView(file.buffer).getUint32(crcAt, false)).toBe(crc32(bitmap));
    file[crcAt + 3] ^= 1;
    await expectSilt(loadDeletionVector(store, "t/", d), "DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH");
  });

  it("detects size mismatches and truncated files", async () => {
    const { store, ds, key, file } = await written();
    await expectSilt(
      loadDeletionVector(store, "t/", { ...ds[0], sizeInBytes: ds[0].sizeInBytes + 2 }),
      "DELTA_DELETION_VECTOR_SIZE_MISMATCH",
    );
    await expectSilt(
      loadDeletionVector(store, "t/", { ...ds[0], sizeInBytes: ds[0].sizeInBytes - 2 }),
      "DELTA_DELETION_VECTOR_SIZE_MISMATCH",
    );
    store.objects.set(key, file.subarray(0, file.length - 2));
    await expectSilt(loadDeletionVector(store, "t/", ds[1]), "DELTA_DELETION_VECTOR_SIZE_MISMATCH");
    const inline = inlineDeletionVector([1, 2, 3]);
    await expectSilt(
      loadDeletionVector(store, "t/", { ...inline, sizeInBytes: inline.sizeInBytes + 8 }),
      "DELTA_DELETION_VECTOR_SIZE_MISMATCH",
    );
  });

  it("detects a cardinality mismatch", async () => {
    const { store, ds } = await written();
    await expectSilt(
      loadDeletionVector(store, "t/", { ...ds[0], cardinality: 4 }),
      "DELTA_DELETION_VECTOR_CARDINALITY_MISMATCH",
    );
    await expectSilt(
      loadDeletionVector(store, "t/", { ...inlineDeletionVector([8]), cardinality: 0 }),
      "DELTA_DELETION_VECTOR_CARDINALITY_MISMATCH",
    );
  });

  it("reports a missing file, a bad offset and a malformed bitmap clearly", async () => {
    const { store, ds } = await written();
    await expectSilt(
      loadDeletionVector(store, "t/", { ...ds[0], pathOrInlineDv: uuidToZ85(randomUUID()) }),
      "DELTA_FILE_NOT_FOUND_DETAILED",
    );
    await expectSilt(
      loadDeletionVector(store, "t/", { ...ds[1], offset: ds[1].offset! + 1 }),
      "DELTA_DELETION_VECTOR_SIZE_MISMATCH",
    );
    const garbage = new MemoryStore();
    const bogus = Uint8Array.from([0xde, 0xad, 0xbe, 0xef]);
    const frame = new Uint8Array(1 + 4 + 4 + 4);
    const view = new DataView(frame.buffer);
    frame[0] = 1;
    view.setInt32(1, 4, false);
    frame.set(bogus, 5);
    view.setUint32(9, crc32(bogus), false);
    const uuid = randomUUID();
    await garbage.put(`deletion_vector_${uuid}.bin`, frame);
    await expectSilt(
      loadDeletionVector(garbage, "", {
        storageType: "u",
        pathOrInlineDv: uuidToZ85(uuid),
        offset: 1,
        sizeInBytes: 4,
        cardinality: 0,
      }),
      "DELTA_DELETION_VECTOR_INVALID_BITMAP",
    );
  });
});

describe("row sets", () => {
  it("builds a deletion mask and rejects rows past the end", () => {
    expect(Array.from(deletedRowMask(rowsOf([]), 3))).toEqual([0, 0, 0]);
    expect(Array.from(deletedRowMask(rowsOf([1, 2]), 4))).toEqual([0, 1, 1, 0]);
    expect(() => deletedRowMask(rowsOf([4]), 4)).toThrow(/outside the file's 4 rows/);
  });

  it("unions two sorted sets", () => {
    expect(Array.from(unionRowIndexes(rowsOf([1, 3, 5]), rowsOf([2, 3, 6])))).toEqual([
      1, 2, 3, 5, 6,
    ]);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.nat(1000), { maxLength: 50 }),
        fc.uniqueArray(fc.nat(1000), { maxLength: 50 }),
        (a, b) => {
          const sort = (xs: number[]) => Float64Array.from(xs.sort((x, y) => x - y));
          const expected = Array.from(new Set([...a, ...b])).sort((x, y) => x - y);
          expect(Array.from(unionRowIndexes(sort(a), sort(b)))).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("loads a million-row DV and masks it", async () => {
    const store = new MemoryStore();
    const rows = new Float64Array(1_000_000);
    for (let i = 0; i < rows.length; i++) rows[i] = i * 2 + (i % 7 === 0 ? 1 : 0);
    const [d] = await writeDeletionVectorFile(store, "", [rows]);
    const loaded = await loadDeletionVector(store, "", d);
    const mask = deletedRowMask(loaded, 2_000_000);
    expect(loaded.length).toBe(rows.length);
    let deleted = 0;
    for (let i = 0; i < mask.length; i++) deleted += mask[i];
    expect(deleted).toBe(rows.length);
  });
});
