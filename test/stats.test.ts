import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readParquet } from "../lib/data/parquet.ts";
import {
  computeFileStats,
  DecimalValue,
  type DeltaFileStats,
  serializeStats,
  truncateMax,
  truncateMin,
} from "../lib/data/stats.ts";
import { shortestFloat32 } from "../lib/values/float-text.ts";

const GOLDEN = join(import.meta.dirname, "../../shared/fixtures/delta/golden");

/** Each data file of a golden table with the stats string Spark logged for it. */
function loggedFiles(table: string): { path: string; stats: string }[] {
  const out: { path: string; stats: string }[] = [];
  const log = join(GOLDEN, table, "_delta_log");
  for (const f of readdirSync(log)
    .filter((n) => n.endsWith(".json"))
    .sort()) {
    for (const line of readFileSync(join(log, f), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const action = JSON.parse(line);
      if (action.add?.stats) {
        out.push({
          path: join(GOLDEN, table, decodeURIComponent(action.add.path)),
          stats: action.add.stats,
        });
      }
    }
  }
  return out;
}

/**
 * Spark wrote these TIMESTAMP columns as INT96, which reads back as zone-less nanoseconds; the
 * Delta schema says they are UTC instants, which is what a scan casts them to.
 */
function asUtcTimestamps(t: arrow.Table, names: string[]): arrow.Table {
  const fields = t.schema.fields.map((f) =>
    names.includes(f.name) && arrow.DataType.isTimestamp(f.type)
      ? new arrow.Field(f.name, new arrow.Timestamp(f.type.unit, "UTC"), f.nullable, f.metadata)
      : f,
  );
  const schema = new arrow.Schema(fields);
  return new arrow.Table(
    schema,
    t.batches.map(
      (b) =>
        new arrow.RecordBatch(
          schema,
          arrow.makeData({
            type: new arrow.Struct(fields),
            length: b.numRows,
            nullCount: 0,
            children: b.data.children.map((c, i) => c.clone(fields[i].type)),
          }),
        ),
    ),
  );
}

/** Spark prints timestamps in the session zone; compare instants. */
function normalizeInstants(tree: unknown): unknown {
  if (typeof tree === "string" && /^\d{4}-\d\d-\d\dT.*([+-]\d\d:\d\d|Z)$/.test(tree)) {
    return new Date(tree).toISOString();
  }
  if (tree && typeof tree === "object") {
    return Object.fromEntries(Object.entries(tree).map(([k, v]) => [k, normalizeInstants(v)]));
  }
  return tree;
}

function parsedStats(s: DeltaFileStats) {
  return JSON.parse(serializeStats(s));
}

function tableOf(columns: Record<string, arrow.Vector | arrow.Data>): arrow.Table {
  const fields: arrow.Field[] = [];
  const children: arrow.Data[] = [];
  let length = 0;
  for (const [name, c] of Object.entries(columns)) {
    const d = c instanceof arrow.Data ? c : c.data[0];
    fields.push(new arrow.Field(name, d.type, true));
    children.push(d);
    length = d.length;
  }
  const schema = new arrow.Schema(fields);
  return new arrow.Table(schema, [
    new arrow.RecordBatch(
      schema,
      arrow.makeData({ type: new arrow.Struct(fields), length, nullCount: 0, children }),
    ),
  ]);
}

function int64Data(type: arrow.DataType, values: (bigint | null)[]): arrow.Data {
  const bits = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v !== null) bits[i >> 3] |= 1 << (i & 7);
  });
  return new arrow.Data(type, 0, values.length, values.filter((v) => v === null).length, [
    undefined,
    BigInt64Array.from(values, (v) => v ?? 0n),
    bits,
  ] as never);
}

function decimalData(values: (bigint | null)[], precision: number, scale: number): arrow.Data {
  const words = new Uint32Array(values.length * 4);
  const bits = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v !== null) bits[i >> 3] |= 1 << (i & 7);
    let x = BigInt.asUintN(128, v ?? 0n);
    for (let k = 0; k < 4; k++) {
      words[i * 4 + k] = Number(x & 0xffffffffn);
      x >>= 32n;
    }
  });
  return new arrow.Data(
    new arrow.Decimal(scale, precision, 128),
    0,
    values.length,
    values.filter((v) => v === null).length,
    [undefined, words, bits] as never,
  );
}

function bigMin(xs: bigint[]): bigint {
  let m = xs[0];
  for (const x of xs) if (x < m) m = x;
  return m;
}

function bigMax(xs: bigint[]): bigint {
  let m = xs[0];
  for (const x of xs) if (x > m) m = x;
  return m;
}

/** Splits a table into batches at the given row counts (to exercise cross-batch merging). */
function rebatch(t: arrow.Table, cuts: number[]): arrow.Table {
  const batches: arrow.RecordBatch[] = [];
  let start = 0;
  for (const c of [...cuts, t.numRows]) {
    const end = Math.min(Math.max(c, start), t.numRows);
    if (end > start) batches.push(...t.slice(start, end).batches);
    start = end;
  }
  return new arrow.Table(t.schema, batches);
}

describe("computeFileStats against stats Spark wrote", () => {
  it("matches parquet-all-types (every Delta type, nested structs, arrays, maps)", async () => {
    const [file] = loggedFiles("parquet-all-types");
    const t = asUtcTimestamps(await readParquet(new Uint8Array(readFileSync(file.path))), [
      "TimestampType",
    ]);
    const ours = parsedStats(computeFileStats(t));
    const spark = JSON.parse(file.stats);
    expect(ours.numRecords).toBe(spark.numRecords);
    expect(ours.minValues).toEqual(spark.minValues);
    expect(ours.maxValues).toEqual(spark.maxValues);
    expect(ours.nullCount).toEqual(spark.nullCount);
    expect(ours.tightBounds).toBe(true);
  });

  it("matches data-skipping-basic-stats-all-types, also with physical column names", async () => {
    for (const table of [
      "data-skipping-basic-stats-all-types",
      "data-skipping-basic-stats-all-types-columnmapping-name",
      "data-skipping-basic-stats-all-types-columnmapping-id",
    ]) {
      const files = loggedFiles(table);
      expect(files.length, table).toBeGreaterThan(0);
      for (const file of files) {
        const raw = await readParquet(new Uint8Array(readFileSync(file.path)));
        const ts = raw.schema.fields
          .filter((f) => arrow.DataType.isTimestamp(f.type))
          .map((f) => f.name);
        const ours = parsedStats(computeFileStats(asUtcTimestamps(raw, ts)));
        const spark = JSON.parse(file.stats);
        expect(normalizeInstants(ours.minValues), table).toEqual(
          normalizeInstants(spark.minValues),
        );
        expect(normalizeInstants(ours.maxValues), table).toEqual(
          normalizeInstants(spark.maxValues),
        );
        expect(ours.nullCount, table).toEqual(spark.nullCount);
        expect(ours.numRecords).toBe(spark.numRecords);
      }
    }
  });

  it("prints decimals exactly as Spark does (decimal-various-scale-precision)", async () => {
    const [file] = loggedFiles("decimal-various-scale-precision");
    const t = await readParquet(new Uint8Array(readFileSync(file.path)));
    const ours = serializeStats(computeFileStats(t, { numIndexedCols: -1 }));
    expect(ours.replace(',"tightBounds":true', "")).toBe(file.stats);
  });
});

describe("DecimalValue", () => {
  it.each([
    [950n, 2, "9.50"],
    [-950n, 2, "-9.50"],
    [0n, 10, "0E-10"],
    [5925n, 12, "5.925E-9"],
    [-12345n, 0, "-12345"],
    [1n, 7, "1E-7"],
    [123n, 7, "0.0000123"],
    [152896000n, 18, "1.52896000E-10"],
    [12345n, -2, "1.2345E+6"],
    [7n, 1, "0.7"],
  ])("%s scale %s prints %s", (unscaled, scale, text) => {
    expect(new DecimalValue(unscaled, scale).toString()).toBe(text);
  });

  it("compares across scales and converts to numbers", () => {
    expect(new DecimalValue(950n, 2).compareTo(new DecimalValue(95n, 1))).toBe(0);
    expect(new DecimalValue(-1n, 0).compareTo(new DecimalValue(5n, 3))).toBe(-1);
    expect(new DecimalValue(950n, 2).toNumber()).toBe(9.5);
  });
});

describe("string truncation", () => {
  const a32 = "a".repeat(32);

  it("keeps the first 32 code points for min", () => {
    expect(truncateMin("a".repeat(40), 32)).toBe(a32);
    expect(truncateMin("😀".repeat(40), 32)).toBe("😀".repeat(32));
    expect(truncateMin("short", 32)).toBe("short");
  });

  it("appends the U+FFFD tie-breaker for max, after any chars at or above it", () => {
    expect(truncateMax("a".repeat(40), 32)).toBe(`${a32}\ufffd`);
    expect(truncateMax(`${a32}\uffff\ufffeb`, 32)).toBe(`${a32}\uffff\ufffe\ufffd`);
    expect(truncateMax(`${a32}\ufffd`, 32)).toBe(`${a32}\ufffd\ufffd`);
    expect(truncateMax(a32, 32)).toBe(a32);
    expect(truncateMax(`${"a".repeat(31)}😀bbb`, 32)).toBe(`${"a".repeat(31)}😀\ufffd`);
    expect(truncateMax(`${a32}😀b`, 32)).toBe(`${a32}😀\ufffd`);
  });

  it("yields bounds in UTF-8 byte order, whatever the string", () => {
    const enc = new TextEncoder();
    const utf8Cmp = (x: string, y: string) => Buffer.compare(enc.encode(x), enc.encode(y));
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 60 }),
        fc.integer({ min: 1, max: 40 }),
        (s, prefix) => {
          expect(utf8Cmp(truncateMin(s, prefix), s)).toBeLessThanOrEqual(0);
          expect(utf8Cmp(truncateMax(s, prefix), s)).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });

  it("applies to the stats of long strings", () => {
    const long = `${"m".repeat(40)}`;
    const s = computeFileStats(
      tableOf({ s: arrow.vectorFromArray(["b", long, "a".repeat(50)], new arrow.Utf8()) }),
    );
    expect(s.minValues.s).toBe(a32);
    expect(s.maxValues.s).toBe(`${"m".repeat(32)}\ufffd`);
  });
});

describe("computeFileStats", () => {
  it("follows Spark for each type", () => {
    const t = tableOf({
      i: arrow.vectorFromArray([3, null, -7], new arrow.Int32()),
      l: int64Data(new arrow.Int64(), [2n ** 62n, -5n, null]),
      f: arrow.vectorFromArray([1.5, Number.NaN, -2], new arrow.Float64()),
      f32: arrow.vectorFromArray([0.1, 46.566, null], new arrow.Float32()),
      nan: arrow.vectorFromArray([Number.NaN, null, Number.NaN], new arrow.Float64()),
      inf: arrow.vectorFromArray(
        [Number.POSITIVE_INFINITY, 1, Number.NEGATIVE_INFINITY],
        new arrow.Float64(),
      ),
      b: arrow.vectorFromArray([true, null, false], new arrow.Bool()),
      bin: arrow.vectorFromArray([Uint8Array.of(1), null, null], new arrow.Binary()),
      d: arrow.vectorFromArray(
        [new Date(Date.UTC(2024, 1, 29)), null, new Date(Date.UTC(1969, 11, 31))],
        new arrow.DateDay(),
      ),
      ts: int64Data(new arrow.TimestampMicrosecond("UTC"), [1_700_000_000_123_999n, -1n, null]),
      ntz: int64Data(new arrow.TimestampMicrosecond(), [1_700_000_000_123_999n, 5n, null]),
      tsns: int64Data(new arrow.TimestampNanosecond("UTC"), [1_999_999n, -1n, null]),
      tss: int64Data(new arrow.TimestampSecond("UTC"), [1n, 2n, null]),
      dec: decimalData([950n, -1n, null], 5, 2),
      s: arrow.vectorFromArray(["b", null, "aé"], new arrow.Utf8()),
      allnull: arrow.vectorFromArray([null, null, null], new arrow.Utf8()),
      li: arrow.vectorFromArray(
        [[1], null, []],
        new arrow.List(new arrow.Field("e", new arrow.Int32())),
      ),
    });
    const s = computeFileStats(t);
    expect(s.numRecords).toBe(3);
    expect(s.minValues).toEqual({
      i: -7,
      l: -5,
      f: -2,
      f32: 0.1,
      nan: Number.NaN,
      inf: Number.NEGATIVE_INFINITY,
      d: "1969-12-31",
      ts: "1969-12-31T23:59:59.999Z",
      ntz: "1970-01-01T00:00:00.000",
      tsns: "1969-12-31T23:59:59.999Z",
      tss: "1970-01-01T00:00:01.000Z",
      dec: new DecimalValue(-1n, 2),
      s: "aé",
    });
    expect(s.maxValues).toEqual({
      i: 3,
      l: 2n ** 62n,
      f: Number.NaN,
      f32: 46.566,
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      d: "2024-02-29",
      ts: "2023-11-14T22:13:20.123Z",
      ntz: "2023-11-14T22:13:20.123",
      tsns: "1970-01-01T00:00:00.001Z",
      tss: "1970-01-01T00:00:02.000Z",
      dec: new DecimalValue(950n, 2),
      s: "b",
    });
    expect(s.nullCount).toEqual({
      i: 1,
      l: 1,
      f: 0,
      f32: 1,
      nan: 1,
      inf: 0,
      b: 1,
      bin: 2,
      d: 1,
      ts: 1,
      ntz: 1,
      tsns: 1,
      tss: 1,
      dec: 1,
      s: 1,
      allnull: 3,
      li: 1,
    });
    const json = serializeStats(s);
    expect(json).toContain('"l":4611686018427387904');
    expect(json).toContain('"f":"NaN"');
    expect(json).toContain('"inf":"-Infinity"');
    expect(json).toContain('"inf":"Infinity"');
    expect(json).toContain('"dec":9.50');
    expect(json).not.toContain('"allnull":null');
    expect(json.startsWith('{"numRecords":3,"minValues":{"i":-7,')).toBe(true);
    expect(json.endsWith(',"tightBounds":true}')).toBe(true);
  });

  it("keeps longs beyond 2^53 exact", () => {
    const s = computeFileStats(
      tableOf({ l: int64Data(new arrow.Int64(), [9007199254740993n, -(2n ** 63n)]) }),
    );
    expect(s.maxValues.l).toBe(9007199254740993n);
    expect(serializeStats(s)).toContain('"minValues":{"l":-9223372036854775808}');
    const u = computeFileStats(
      tableOf({
        u: new arrow.Data(new arrow.Uint64(), 0, 2, 0, [
          undefined,
          BigUint64Array.of(2n ** 64n - 1n, 1n),
        ] as never),
      }),
    );
    expect(u.maxValues.u).toBe(2n ** 64n - 1n);
    expect(u.minValues.u).toBe(1);
  });

  it("counts a nested leaf as null where its struct is null, and mirrors the struct shape", () => {
    const structT = new arrow.Struct([
      new arrow.Field("x", new arrow.Int32(), true),
      new arrow.Field(
        "inner",
        new arrow.Struct([
          new arrow.Field("y", new arrow.Utf8(), true),
          new arrow.Field("z", new arrow.Bool(), true),
        ]),
        true,
      ),
    ]);
    const t = tableOf({
      st: arrow.vectorFromArray(
        [
          { x: 1, inner: { y: "q", z: true } },
          null,
          { x: 99, inner: null },
          { x: null, inner: { y: "a", z: null } },
        ],
        structT,
      ),
      n: arrow.vectorFromArray([1, 2, 3, 4], new arrow.Int8()),
    });
    // Values hidden under a null struct must not count; plant one to be sure.
    const st = t.getChild("st")!.data[0];
    (st.children[0].values as Int32Array)[1] = -1000;
    const s = computeFileStats(t);
    expect(s.minValues).toEqual({ st: { x: 1, inner: { y: "a" } }, n: 1 });
    expect(s.maxValues).toEqual({ st: { x: 99, inner: { y: "q" } }, n: 4 });
    expect(s.nullCount).toEqual({ st: { x: 2, inner: { y: 2, z: 3 } }, n: 0 });
    expect(serializeStats(s)).toContain('"nullCount":{"st":{"x":2,"inner":{"y":2,"z":3}},"n":0}');
  });

  it("indexes the first N leaf columns, or the named ones", () => {
    const structT = new arrow.Struct([
      new arrow.Field("p", new arrow.Int32(), true),
      new arrow.Field("q", new arrow.Int32(), true),
    ]);
    const t = tableOf({
      a: arrow.vectorFromArray([1], new arrow.Int32()),
      s: arrow.vectorFromArray([{ p: 2, q: 3 }], structT),
      c: arrow.vectorFromArray([4], new arrow.Int32()),
    });
    expect(computeFileStats(t, { numIndexedCols: 2 }).nullCount).toEqual({ a: 0, s: { p: 0 } });
    expect(computeFileStats(t, { numIndexedCols: 3 }).maxValues).toEqual({
      a: 1,
      s: { p: 2, q: 3 },
    });
    expect(computeFileStats(t, { numIndexedCols: -1 }).maxValues).toEqual({
      a: 1,
      s: { p: 2, q: 3 },
      c: 4,
    });
    expect(computeFileStats(t, { numIndexedCols: 0 })).toEqual({
      numRecords: 1,
      minValues: {},
      maxValues: {},
      nullCount: {},
      tightBounds: true,
    });
    expect(computeFileStats(t, { columnNames: ["C", ["s", "Q"]] }).maxValues).toEqual({
      s: { q: 3 },
      c: 4,
    });
    expect(computeFileStats(t, { columnNames: ["s"] }).maxValues).toEqual({ s: { p: 2, q: 3 } });
    expect(computeFileStats(t, { tightBounds: false }).tightBounds).toBe(false);
  });

  it("handles dictionary-encoded strings through the entries rows use", () => {
    const v = arrow.vectorFromArray(
      ["m", null, "c", "m", "x"],
      new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()),
    );
    const t = tableOf({ d: v }).slice(0, 4);
    const s = computeFileStats(t);
    expect(s.minValues.d).toBe("c");
    expect(s.maxValues.d).toBe("m");
    expect(s.nullCount.d).toBe(1);
  });

  it("agrees with a row-by-row reference on random data split into random batches", () => {
    const enc = new TextEncoder();
    const utf8Cmp = (x: string, y: string) => Buffer.compare(enc.encode(x), enc.encode(y));
    const row = fc.record({
      i: fc.option(fc.integer(), { nil: null }),
      f: fc.option(
        fc.oneof(
          fc.double().map((x) => (Object.is(x, -0) ? 0 : x)),
          fc.constant(Number.NaN),
        ),
        { nil: null },
      ),
      l: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
      s: fc.option(fc.string({ unit: "binary", maxLength: 40 }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.array(row, { maxLength: 60 }),
        fc.array(fc.nat(60), { maxLength: 4 }),
        (rows, cuts) => {
          const t = rebatch(
            tableOf({
              i: arrow.vectorFromArray(
                rows.map((r) => r.i),
                new arrow.Int32(),
              ),
              f: arrow.vectorFromArray(
                rows.map((r) => r.f),
                new arrow.Float64(),
              ),
              l: int64Data(
                new arrow.Int64(),
                rows.map((r) => r.l),
              ),
              s: arrow.vectorFromArray(
                rows.map((r) => r.s),
                new arrow.Utf8(),
              ),
            }),
            [...cuts].sort((a, b) => a - b),
          );
          const s = computeFileStats(t);
          const present = <K extends keyof (typeof rows)[number]>(k: K) =>
            rows.map((r) => r[k]).filter((v) => v !== null) as NonNullable<
              (typeof rows)[number][K]
            >[];
          const ints = present("i");
          const floats = present("f");
          const longs = present("l");
          const strs = present("s").sort(utf8Cmp);
          const num = (v: bigint) =>
            v >= -(2n ** 53n) + 1n && v <= 2n ** 53n - 1n ? Number(v) : v;
          const expectedMin: Record<string, unknown> = {};
          const expectedMax: Record<string, unknown> = {};
          if (ints.length) {
            expectedMin.i = Math.min(...ints);
            expectedMax.i = Math.max(...ints);
          }
          if (floats.length) {
            const real = floats.filter((x) => !Number.isNaN(x));
            expectedMin.f = real.length ? Math.min(...real) : Number.NaN;
            expectedMax.f = real.length === floats.length ? Math.max(...real) : Number.NaN;
          }
          if (longs.length) {
            expectedMin.l = num(bigMin(longs));
            expectedMax.l = num(bigMax(longs));
          }
          if (strs.length) {
            expectedMin.s = truncateMin(strs[0], 32);
            expectedMax.s = truncateMax(strs[strs.length - 1], 32);
          }
          expect(s.minValues).toEqual(expectedMin);
          expect(s.maxValues).toEqual(expectedMax);
          expect(s.nullCount).toEqual({
            i: rows.length - ints.length,
            f: rows.length - floats.length,
            l: rows.length - longs.length,
            s: rows.length - strs.length,
          });
          expect(s.numRecords).toBe(rows.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("prints floats the way Java's Float.toString does", () => {
    expect(shortestFloat32(Math.fround(46.566))).toBe(46.566);
    expect(shortestFloat32(Math.fround(0.1))).toBe(0.1);
    expect(shortestFloat32(Math.fround(3.4e38))).toBe(3.4e38);
    expect(shortestFloat32(Math.fround(1e-45))).toBe(1e-45);
  });
});
