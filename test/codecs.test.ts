import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  lastCheckpointCanonicalForm,
  lastCheckpointChecksum,
} from "../lib/delta/last-checkpoint-checksum.ts";
import {
  deserializeRowIndexes,
  NATIVE_MAGIC,
  PORTABLE_MAGIC,
  serializeRowIndexes,
} from "../lib/delta/roaring-bitmap-array.ts";
import { uuidToZ85, z85Decode, z85Encode, z85ToUuid } from "../lib/delta/z85.ts";
import { SiltError } from "../lib/errors.ts";

const FIXTURES = new URL("../../shared/fixtures/delta/", import.meta.url).pathname;
const TWO_32 = 2 ** 32;

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
/** vitest's deep equality is slow on large typed arrays; compare directly. */
function expectSameRows(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i])
      expect(`row ${i}: ${actual[i]}`).toBe(`row ${i}: ${expected[i]}`);
  }
}
const sortedUnique = (xs: number[]) => Float64Array.from([...new Set(xs)].sort((a, b) => a - b));

describe("z85", () => {
  it("matches the ZeroMQ reference vector", () => {
    const bytes = Uint8Array.from([0x86, 0x4f, 0xd2, 0x6f, 0xb5, 0x59, 0xf7, 0x5b]);
    expect(z85Encode(bytes)).toBe("HelloWorld");
    expect(hex(z85Decode("HelloWorld"))).toBe(hex(bytes));
  });

  it("converts the delta-rs DV UUID both ways", () => {
    expect(z85ToUuid("vBn[lx{q8@P<9BNH/isA")).toBe("61d16c75-6994-46b7-a15b-8b538852e50e");
    expect(uuidToZ85("61d16c75-6994-46b7-a15b-8b538852e50e")).toBe("vBn[lx{q8@P<9BNH/isA");
    expect(uuidToZ85("61D16C75-6994-46B7-A15B-8B538852E50E")).toBe("vBn[lx{q8@P<9BNH/isA");
  });

  it("encodes every alphabet digit and the extremes of a group", () => {
    expect(z85Encode(new Uint8Array(4))).toBe("00000");
    expect(z85Encode(Uint8Array.from([0xff, 0xff, 0xff, 0xff]))).toBe("%nSc0");
    expect(hex(z85Decode("%nSc0"))).toBe("ffffffff");
  });

  it("zero-pads to a multiple of 4 and truncates back with byteLength", () => {
    const bytes = Uint8Array.from([1, 2, 3, 4, 5]);
    const text = z85Encode(bytes);
    expect(text.length).toBe(10);
    expect(hex(z85Decode(text))).toBe("0102030405000000");
    expect(hex(z85Decode(text, 5))).toBe("0102030405");
    expect(z85Encode(new Uint8Array(0))).toBe("");
  });

  it("round-trips arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = z85Encode(bytes);
        expect(text.length).toBe(Math.ceil(bytes.length / 4) * 5);
        expect(hex(z85Decode(text, bytes.length))).toBe(hex(bytes));
      }),
      { numRuns: 200 },
    );
  });

  it("round-trips arbitrary UUIDs", () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        const z = uuidToZ85(uuid);
        expect(z).toHaveLength(20);
        expect(z85ToUuid(z)).toBe(uuid.toLowerCase());
      }),
      { numRuns: 200 },
    );
  });

  it("rejects invalid input with a clear error", () => {
    expect(() => z85Decode('abcd"')).toThrow(/Invalid Z85 character "\\"" at position 4/);
    expect(() => z85Decode("abcd\u00e9")).toThrow(/Invalid Z85 character/);
    expect(() => z85Decode("abcd")).toThrow(/not a multiple of 5/);
    expect(() => z85Decode("#####")).toThrow(/overflows/);
    expect(() => z85Decode("00000", 5)).toThrow(/byte length 5/);
    expect(() => z85ToUuid("vBn[lx{q8@P<9BNH/is")).toThrow(/20 characters/);
    expect(() => uuidToZ85("not-a-uuid")).toThrow(/Invalid UUID/);
    expect(() => z85Decode("ab cd")).toThrow(SiltError);
  });
});

describe("crc32", () => {
  it("matches java.util.zip.CRC32 check values", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(new TextEncoder().encode("The quick brown fox jumps over the lazy dog"))).toBe(
      0x414fa339,
    );
  });

  it("matches the CRC stored in the delta-rs DV file", () => {
    const file = readFileSync(
      `${FIXTURES}delta-rs/table-with-dv-small/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin`,
    );
    expect(crc32(file.subarray(5, 41))).toBe(file.readUInt32BE(41));
  });

  it("agrees with a bitwise reference on every length and alignment, and chains", () => {
    const reference = (bytes: Uint8Array) => {
      let c = 0xffffffff;
      for (const b of bytes) {
        c ^= b;
        for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
      }
      return (c ^ 0xffffffff) >>> 0;
    };
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat(100), (bytes, cut) => {
        const split = Math.min(cut, bytes.length);
        expect(crc32(bytes)).toBe(reference(bytes));
        expect(crc32(bytes.subarray(split), crc32(bytes.subarray(0, split)))).toBe(
          reference(bytes),
        );
      }),
      { numRuns: 200 },
    );
  });
});

/** Test-side builder for RoaringFormatSpec bitmaps with run containers, which Silt never writes. */
type Container =
  | { key: number; kind: "array"; values: number[] }
  | { key: number; kind: "run"; runs: [number, number][] }
  | { key: number; kind: "bitmap"; values: number[] };

function roaring32WithRuns(containers: Container[]): Uint8Array {
  const n = containers.length;
  const parts: number[] = [];
  const u16 = (v: number) => parts.push(v & 0xff, v >>> 8);
  const u32 = (v: number) => parts.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
  u32(12347 | ((n - 1) << 16));
  const flags = new Array((n + 7) >> 3).fill(0);
  containers.forEach((c, i) => {
    if (c.kind === "run") flags[i >> 3] |= 1 << (i & 7);
  });
  parts.push(...flags);
  const card = (c: Container) =>
    c.kind === "run" ? c.runs.reduce((s, [a, b]) => s + b - a + 1, 0) : c.values.length;
  for (const c of containers) {
    u16(c.key);
    u16(card(c) - 1);
  }
  const body: number[][] = containers.map((c) => {
    const out: number[] = [];
    if (c.kind === "run") {
      out.push(c.runs.length & 0xff, c.runs.length >>> 8);
      for (const [a, b] of c.runs) out.push(a & 0xff, a >>> 8, (b - a) & 0xff, (b - a) >>> 8);
    } else if (c.kind === "array") {
      for (const v of c.values) out.push(v & 0xff, v >>> 8);
    } else {
      const bits = new Array(8192).fill(0);
      for (const v of c.values) bits[v >>> 3] |= 1 << (v & 7);
      out.push(...bits);
    }
    return out;
  });
  if (n >= 4) {
    let offset = parts.length + n * 4;
    for (const b of body) {
      u32(offset);
      offset += b.length;
    }
  }
  for (const b of body) parts.push(...b);
  return Uint8Array.from(parts);
}

function portable(buckets: [number, Uint8Array][]): Uint8Array {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(PORTABLE_MAGIC, 0);
  head.writeUInt32LE(buckets.length, 4);
  const chunks: Uint8Array[] = [head];
  for (const [key, bytes] of buckets) {
    const k = Buffer.alloc(4);
    k.writeUInt32LE(key, 0);
    chunks.push(k, bytes);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

describe("RoaringBitmapArray", () => {
  it("serializes {0, 9} byte for byte like the delta-rs fixture", () => {
    const file = readFileSync(
      `${FIXTURES}delta-rs/table-with-dv-small/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin`,
    );
    const bitmap = new Uint8Array(file.subarray(5, 41));
    expect(hex(serializeRowIndexes([0, 9]))).toBe(hex(bitmap));
    expect(Array.from(deserializeRowIndexes(bitmap))).toEqual([0, 9]);
  });

  it("serializes the empty set as zero buckets", () => {
    const bytes = serializeRowIndexes([]);
    expect(hex(bytes)).toBe("d1d33964" + "0000000000000000");
    expect(deserializeRowIndexes(bytes)).toHaveLength(0);
  });

  it("writes one bucket per key up to the highest, empty ones included", () => {
    const bytes = serializeRowIndexes([TWO_32 + 5]);
    const view = new DataView(bytes.buffer);
    expect(view.getUint32(4, true)).toBe(2);
    // Bucket 0: key 0, cookie 12346, no containers.
    expect(view.getUint32(12, true)).toBe(0);
    expect(view.getUint32(16, true)).toBe(12346);
    expect(view.getUint32(20, true)).toBe(0);
    expect(view.getUint32(24, true)).toBe(1);
    expect(Array.from(deserializeRowIndexes(bytes))).toEqual([TWO_32 + 5]);
  });

  it("uses an array container up to 4096 values and a bitmap container beyond", () => {
    const range = (n: number) => Float64Array.from({ length: n }, (_, i) => i * 2);
    // magic + count + key + cookie + container count + header + offset = 32 bytes of framing.
    expect(serializeRowIndexes(range(4096)).length).toBe(32 + 4096 * 2);
    expect(serializeRowIndexes(range(4097)).length).toBe(32 + 8192);
    for (const n of [4096, 4097, 65536]) {
      const rows = Float64Array.from({ length: n }, (_, i) => Math.floor((i * 65536) / n));
      expectSameRows(deserializeRowIndexes(serializeRowIndexes(rows)), rows);
    }
  });

  const rowSets = fc.oneof(
    // Sparse values anywhere below 2^53.
    fc
      .uniqueArray(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { maxLength: 50 })
      .map(sortedUnique),
    // Clusters around container and bucket boundaries.
    fc
      .array(
        fc.tuple(
          fc.constantFrom(0, 65536, 3 * 65536 - 3, TWO_32 - 10, TWO_32, TWO_32 + 5, 3 * TWO_32),
          fc.nat(20),
        ),
        { maxLength: 60 },
      )
      .map((pairs) => sortedUnique(pairs.map(([b, o]) => b + o))),
    // A dense range (bitmap container) plus sparse extras, possibly spanning containers/buckets.
    fc
      .tuple(
        fc.constantFrom(0, 60000, TWO_32 - 3000, 2 * TWO_32 + 100),
        fc.integer({ min: 4097, max: 20000 }),
        fc.array(fc.nat(200000), { maxLength: 30 }),
      )
      .map(([start, len, extra]) =>
        sortedUnique([...Array.from({ length: len }, (_, i) => start + i), ...extra]),
      ),
  );

  it("round-trips random row sets", () => {
    fc.assert(
      fc.property(rowSets, (rows) => {
        const bytes = serializeRowIndexes(rows);
        expectSameRows(deserializeRowIndexes(bytes), rows);
      }),
      { numRuns: 80 },
    );
  });

  it("decodes run containers, with and without the offset header", () => {
    const three = roaring32WithRuns([
      {
        key: 0,
        kind: "run",
        runs: [
          [10, 19],
          [100, 100],
        ],
      },
      { key: 1, kind: "array", values: [0, 7] },
      { key: 2, kind: "run", runs: [[0, 65535]] },
    ]);
    const expected = [
      ...Array.from({ length: 10 }, (_, i) => 10 + i),
      100,
      65536,
      65543,
      ...Array.from({ length: 65536 }, (_, i) => 2 * 65536 + i),
    ];
    expectSameRows(deserializeRowIndexes(portable([[0, three]])), expected);

    const dense = Array.from({ length: 5000 }, (_, i) => i * 13);
    const four = roaring32WithRuns([
      { key: 0, kind: "array", values: [1] },
      { key: 5, kind: "run", runs: [[3, 4]] },
      { key: 6, kind: "bitmap", values: dense },
      { key: 9, kind: "run", runs: [[65530, 65535]] },
    ]);
    const high = 7 * TWO_32;
    const expected4 = [
      1,
      5 * 65536 + 3,
      5 * 65536 + 4,
      ...dense.map((v) => 6 * 65536 + v),
      ...[0, 1, 2, 3, 4, 5].map((i) => 9 * 65536 + 65530 + i),
    ];
    expectSameRows(
      deserializeRowIndexes(portable([[7, four]])),
      expected4.map((v) => v + high),
    );
  });

  it("decodes the legacy native format (little-endian framing, as Spark writes it)", () => {
    const b0 = serializeRowIndexes([3, 70000]).subarray(16);
    const b1 = serializeRowIndexes([4]).subarray(16);
    const head = Buffer.alloc(8);
    head.writeUInt32LE(NATIVE_MAGIC, 0);
    head.writeUInt32LE(2, 4);
    const size = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(n, 0);
      return b;
    };
    const bytes = Buffer.concat([head, size(b0.length), b0, size(b1.length), b1]);
    expect(Array.from(deserializeRowIndexes(new Uint8Array(bytes)))).toEqual([
      3,
      70000,
      TWO_32 + 4,
    ]);
  });

  it("decodes PROTOCOL.md's inline example (native format, big-endian framing)", () => {
    const bytes = z85Decode("wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L");
    expect(Array.from(deserializeRowIndexes(bytes))).toEqual([3, 4, 7, 11, 18, 29]);
  });

  it("rejects invalid row indexes when serializing", () => {
    expect(() => serializeRowIndexes([3, 3])).toThrow(/strictly ascending/);
    expect(() => serializeRowIndexes([5, 2])).toThrow(/strictly ascending/);
    expect(() => serializeRowIndexes([-1])).toThrow(/Invalid deletion vector row index/);
    expect(() => serializeRowIndexes([1.5])).toThrow(/Invalid deletion vector row index/);
    expect(() => serializeRowIndexes([2 ** 53])).toThrow(/Invalid deletion vector row index/);
  });

  it("rejects malformed bitmaps with a clear error", () => {
    const valid = serializeRowIndexes([1, 2, TWO_32 + 9, TWO_32 + 70000]);
    for (let cut = 0; cut < valid.length; cut++) {
      expect(() => deserializeRowIndexes(valid.subarray(0, cut))).toThrow(SiltError);
    }
    const trailing = new Uint8Array(valid.length + 1);
    trailing.set(valid);
    expect(() => deserializeRowIndexes(trailing)).toThrow(/unexpected bytes/);

    const badMagic = valid.slice();
    badMagic[1] ^= 0x80;
    expect(() => deserializeRowIndexes(badMagic)).toThrow(/unexpected magic number/);

    const hugeCount = valid.slice();
    new DataView(hugeCount.buffer).setUint32(8, 1, true);
    expect(() => deserializeRowIndexes(hugeCount)).toThrow(/bucket count .* exceeds the data/);

    const badCookie = valid.slice();
    new DataView(badCookie.buffer).setUint32(16, 4242, true);
    expect(() => deserializeRowIndexes(badCookie)).toThrow(/unknown Roaring cookie 4242/);

    const lyingCard = serializeRowIndexes([1, 2]);
    new DataView(lyingCard.buffer).setUint16(26, 5, true);
    expect(() => deserializeRowIndexes(lyingCard)).toThrow(SiltError);

    const unsorted = serializeRowIndexes([1, 2]);
    new DataView(unsorted.buffer).setUint16(32, 9, true);
    expect(() => deserializeRowIndexes(unsorted)).toThrow(/not ascending/);

    const tooHigh = portable([[2 ** 21, serializeRowIndexes([1]).subarray(16)]]);
    expect(() => deserializeRowIndexes(tooHigh)).toThrow(/2\^53/);

    // A run container can only claim as many values as its header declares.
    const lyingRuns = roaring32WithRuns([{ key: 0, kind: "run", runs: [[0, 10]] }]);
    new DataView(lyingRuns.buffer).setUint16(7, 3, true);
    expect(() => deserializeRowIndexes(portable([[0, lyingRuns]]))).toThrow(/runs hold/);
  });

  it("terminates with a value or a SiltError on arbitrary bytes", () => {
    const magicLE = Uint8Array.from([0xd1, 0xd3, 0x39, 0x64]);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), (tail, withMagic) => {
        const bytes = withMagic ? new Uint8Array([...magicLE, ...tail]) : tail;
        try {
          const rows = deserializeRowIndexes(bytes);
          for (let i = 1; i < rows.length; i++) expect(rows[i]).toBeGreaterThan(rows[i - 1]);
        } catch (e) {
          expect(e).toBeInstanceOf(SiltError);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("decodes a million rows", () => {
    const rows = new Float64Array(1_000_000);
    for (let i = 0; i < rows.length; i++) rows[i] = i * 2 + (i % 3 === 0 ? 1 : 0);
    const bytes = serializeRowIndexes(rows);
    const back = deserializeRowIndexes(bytes);
    expectSameRows(back, rows);
  });
});

describe("_last_checkpoint checksum", () => {
  const md5 = (s: string) => createHash("md5").update(s).digest("hex");

  it("matches the PROTOCOL.md test vector", () => {
    const json = JSON.parse(
      `{"k0":"'v 0'", "checksum": "adsaskfljadfkjadfkj", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}`,
    );
    expect(lastCheckpointCanonicalForm(json)).toBe(
      `"k0"="%27v%200%27","k1"+"k2"=2,"k1"+"k3"+0="v3","k1"+"k3"+1+0=1,"k1"+"k3"+1+1=2,` +
        `"k1"+"k3"+2+"k4"="v4","k1"+"k3"+2+"k5"+0="v5","k1"+"k3"+2+"k5"+1="v6","k1"+"k3"+2+"k5"+2="v7"`,
    );
    expect(lastCheckpointChecksum(json)).toBe("6a92d155a59bf2eecbd4b4ec7fd1f875");
  });

  it("canonicalizes literals, numbers, nesting and encoding like Delta's test suite", () => {
    const cases: [string, string][] = [
      [
        `{"k1":"v1","k4":"v4","k3":23.45,"k2":123,"k6":null,"k5":true}`,
        `"k1"="v1","k2"=123,"k3"=23.45,"k4"="v4","k5"=true,"k6"=null`,
      ],
      [
        `{"k1":"v1","k4":{"k41":"v41","k40":{"k401":401,"k402":"402"}},"k3":23.45,"k2":123}`,
        `"k1"="v1","k2"=123,"k3"=23.45,"k4"+"k40"+"k401"=401,"k4"+"k40"+"k402"="402","k4"+"k41"="v41"`,
      ],
      [
        `{"stuff":[{"hx": "wx","h1":"w1"}, {"h2": "w2"}],"id":1}`,
        `"id"=1,"stuff"+0+"h1"="w1","stuff"+0+"hx"="wx","stuff"+1+"h2"="w2"`,
      ],
      [`{"k1":"v1","checksum":"daswefdssfd","k3":23.45,"k2":123}`, `"k1"="v1","k2"=123,"k3"=23.45`],
      [`{    }`, ``],
      [
        `{"k0":"normal","k1":"'v1'","k4":"'v4","k3":":hello","k2":"\\"double quote str\\""}`,
        `"k0"="normal","k1"="%27v1%27","k2"="%22double%20quote%20str%22","k3"="%3Ahello","k4"="%27v4"`,
      ],
      [
        `{"k0":"normal","k1":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%'\`~!@#$%^&*()_+-={[}]|\\\\;:'\\"\\/?.>,<"}`,
        `"k0"="normal","k1"="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789` +
          `%25%27%60~%21%40%23%24%25%5E%26%2A%28%29_%2B-%3D%7B%5B%7D%5D%7C%5C%3B%3A%27%22%2F%3F.%3E%2C%3C"`,
      ],
      [`{"k0":"normal","k1":"a\u20ac+"}`, `"k0"="normal","k1"="a%E2%82%AC%2B"`],
      [`{"a key":{"b/c":1}}`, `"a%20key"+"b%2Fc"=1`],
      [`{"x":{"checksum":"kept"}}`, `"x"+"checksum"="kept"`],
      [
        `{"d":[0.5, 1.0e-5, 12345678.5, -2.5e-20]}`,
        `"d"+0=0.5,"d"+1=1.0E-5,"d"+2=1.23456785E7,"d"+3=-2.5E-20`,
      ],
    ];
    for (const [json, canonical] of cases) {
      const obj = JSON.parse(json);
      expect(lastCheckpointCanonicalForm(obj)).toBe(canonical);
      expect(lastCheckpointChecksum(obj)).toBe(md5(canonical));
    }
  });

  it("orders whole path=value strings as Spark does (+10= before +1=)", () => {
    const arr = Array.from({ length: 11 }, (_, i) => i);
    const canonical = lastCheckpointCanonicalForm({ a: arr });
    expect(canonical.startsWith(`"a"+0=0,"a"+10=10,"a"+1=1,"a"+2=2`)).toBe(true);
  });

  it("reproduces the checksum of every Spark-written _last_checkpoint fixture", () => {
    const files = [
      "golden/checkpoint",
      "golden/multi-part-checkpoint",
      "golden/dv-partitioned-with-checkpoint",
      "golden/v2-checkpoint-json",
      "golden/basic-with-inserts-deletes-checkpoint",
      "delta-rs/checkpoint-cdf-table",
    ];
    for (const table of files) {
      const obj = JSON.parse(
        readFileSync(`${FIXTURES}${table}/_delta_log/_last_checkpoint`, "utf8"),
      );
      expect(typeof obj.checksum).toBe("string");
      expect(lastCheckpointChecksum(obj)).toBe(obj.checksum);
      // The stored checksum never feeds into itself.
      expect(lastCheckpointChecksum({ ...obj, checksum: "x" })).toBe(obj.checksum);
    }
  });
});
