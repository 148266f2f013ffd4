import * as arrow from "apache-arrow";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  appendConstantColumn,
  combineChunks,
  concatTables,
  constantColumn,
  filterTable,
  nullColumn,
  sliceTable,
  takeRows,
} from "../lib/data/kernels.ts";
import { readParquet, writeParquet } from "../lib/data/parquet.ts";
import { DecimalValue } from "../lib/data/stats.ts";

// --- random tables ---------------------------------------------------------------------------

function bits(valid: boolean[]): Uint8Array {
  const out = new Uint8Array((valid.length + 7) >> 3);
  valid.forEach((v, i) => {
    if (v) out[i >> 3] |= 1 << (i & 7);
  });
  return out;
}

function int64Data(type: arrow.DataType, values: (bigint | null)[]): arrow.Data {
  return new arrow.Data(type, 0, values.length, values.filter((v) => v === null).length, [
    undefined,
    BigInt64Array.from(values, (v) => v ?? 0n),
    bits(values.map((v) => v !== null)),
  ] as never);
}

function decimalData(values: (bigint | null)[]): arrow.Data {
  const words = new Uint32Array(values.length * 4);
  values.forEach((v, i) => {
    let x = BigInt.asUintN(128, v ?? 0n);
    for (let k = 0; k < 4; k++) {
      words[i * 4 + k] = Number(x & 0xffffffffn);
      x >>= 32n;
    }
  });
  return new arrow.Data(
    new arrow.Decimal(3, 20, 128),
    0,
    values.length,
    values.filter((v) => v === null).length,
    [undefined, words, bits(values.map((v) => v !== null))] as never,
  );
}

const structT = new arrow.Struct([
  new arrow.Field("x", new arrow.Int32(), true),
  new arrow.Field("y", new arrow.Utf8(), true),
]);
const listT = new arrow.List(new arrow.Field("e", new arrow.Int32(), true));
const largeListT = new arrow.LargeList(new arrow.Field("e", new arrow.Utf8(), true));
const mapT = new arrow.Map_(
  new arrow.Field(
    "entries",
    new arrow.Struct<{ key: arrow.Utf8; value: arrow.Int32 }>([
      new arrow.Field("key", new arrow.Utf8(), false),
      new arrow.Field("value", new arrow.Int32(), true),
    ]),
    false,
  ),
);
const fslT = new arrow.FixedSizeList(2, new arrow.Field("e", new arrow.Int16(), true));
const dictT = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32());

const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });
const smallString = fc.string({ maxLength: 6 });

const rowArb = fc.record({
  i8: nullable(fc.integer({ min: -128, max: 127 })),
  i32: nullable(fc.integer()),
  i64: nullable(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  f64: nullable(fc.double()),
  b: nullable(fc.boolean()),
  s: nullable(fc.string({ unit: "binary", maxLength: 30 })),
  ls: nullable(smallString),
  bin: nullable(fc.uint8Array({ maxLength: 5 })),
  fsb: nullable(fc.uint8Array({ minLength: 3, maxLength: 3 })),
  dec: nullable(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n })),
  day: nullable(fc.integer({ min: -100_000, max: 100_000 })),
  ts: nullable(fc.bigInt({ min: -(10n ** 16n), max: 10n ** 16n })),
  st: nullable(fc.record({ x: nullable(fc.integer()), y: nullable(smallString) })),
  li: nullable(fc.array(nullable(fc.integer()), { maxLength: 4 })),
  lli: nullable(fc.array(nullable(smallString), { maxLength: 3 })),
  m: nullable(
    fc.uniqueArray(fc.tuple(smallString, nullable(fc.integer())), {
      maxLength: 3,
      selector: (e) => e[0],
    }),
  ),
  fsl: nullable(
    fc.tuple(
      nullable(fc.integer({ min: -32768, max: 32767 })),
      nullable(fc.integer({ min: -32768, max: 32767 })),
    ),
  ),
  dict: nullable(fc.constantFrom("red", "green", "blue")),
  nul: fc.constant(null),
});
type Row = typeof rowArb extends fc.Arbitrary<infer R> ? R : never;

function buildTable(rows: Row[]): arrow.Table {
  const col = <K extends keyof Row>(k: K) => rows.map((r) => r[k]);
  const columns: Record<string, arrow.Data> = {
    i8: arrow.vectorFromArray(col("i8"), new arrow.Int8()).data[0],
    i32: arrow.vectorFromArray(col("i32"), new arrow.Int32()).data[0],
    i64: int64Data(new arrow.Int64(), col("i64")),
    f64: arrow.vectorFromArray(col("f64"), new arrow.Float64()).data[0],
    b: arrow.vectorFromArray(col("b"), new arrow.Bool()).data[0],
    s: arrow.vectorFromArray(col("s"), new arrow.Utf8()).data[0],
    ls: arrow.vectorFromArray(col("ls"), new arrow.LargeUtf8()).data[0],
    bin: arrow.vectorFromArray(col("bin"), new arrow.Binary()).data[0],
    fsb: arrow.vectorFromArray(col("fsb"), new arrow.FixedSizeBinary(3)).data[0],
    dec: decimalData(col("dec")),
    day: new arrow.Data(
      new arrow.DateDay(),
      0,
      rows.length,
      col("day").filter((d) => d === null).length,
      [
        undefined,
        Int32Array.from(col("day"), (d) => d ?? 0),
        bits(col("day").map((d) => d !== null)),
      ] as never,
    ),
    ts: int64Data(new arrow.TimestampMicrosecond("UTC"), col("ts")),
    st: arrow.vectorFromArray(col("st"), structT).data[0],
    li: arrow.vectorFromArray(col("li"), listT).data[0],
    lli: arrow.vectorFromArray(col("lli"), largeListT).data[0],
    m: arrow.vectorFromArray(
      col("m").map((e) => (e === null ? null : new Map(e))),
      mapT,
    ).data[0],
    fsl: arrow.vectorFromArray(col("fsl"), fslT).data[0],
    dict: arrow.vectorFromArray(col("dict"), dictT).data[0],
    nul: new arrow.Data(new arrow.Null(), 0, rows.length, rows.length),
  };
  const fields = Object.entries(columns).map(([name, d]) => new arrow.Field(name, d.type, true));
  const schema = new arrow.Schema(fields);
  const data = arrow.makeData({
    type: new arrow.Struct(fields),
    length: rows.length,
    nullCount: 0,
    children: Object.values(columns),
  });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
}

/** Re-slices a table into batches at the cut points; slices share buffers, with offsets. */
function rebatch(t: arrow.Table, cuts: number[]): arrow.Table {
  const batches: arrow.RecordBatch[] = [];
  let start = 0;
  for (const c of [...cuts].sort((a, b) => a - b).concat(t.numRows)) {
    const end = Math.min(Math.max(c, start), t.numRows);
    if (end > start) batches.push(...t.slice(start, end).batches);
    start = end;
  }
  return new arrow.Table(t.schema, batches);
}

/** Plain, comparable JS for a cell: the naive reference works on these. */
function plain(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "number") return Number.isNaN(v) ? "NaN" : Object.is(v, -0) ? "-0" : v;
  if (ArrayBuffer.isView(v)) return Array.from(v as Uint8Array, (x) => plain(x));
  if (v instanceof arrow.Vector) return [...v].map(plain);
  if (typeof v === "object" && "toJSON" in (v as object)) {
    const o = (v as { toJSON(): Record<string, unknown> }).toJSON();
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

function rowsOf(t: arrow.Table): unknown[][] {
  const cols = t.schema.fields.map((_, i) => t.getChildAt(i)!);
  return Array.from({ length: t.numRows }, (_, r) => cols.map((c) => plain(c.get(r))));
}

/** The kernel's output must also be valid Arrow: it must survive IPC unchanged. */
function viaIpc(t: arrow.Table): unknown[][] {
  return rowsOf(arrow.tableFromIPC(arrow.tableToIPC(combineChunks(t))));
}

const tableArb = fc
  .tuple(fc.array(rowArb, { maxLength: 30 }), fc.array(fc.nat(30), { maxLength: 3 }))
  .map(([rows, cuts]) => rebatch(buildTable(rows), cuts));

// --- properties ------------------------------------------------------------------------------

describe("kernels agree with a row-by-row reference", () => {
  it("filterTable", () => {
    fc.assert(
      fc.property(tableArb, fc.infiniteStream(fc.boolean()), (t, coins) => {
        const it = coins[Symbol.iterator]();
        const keep = Uint8Array.from({ length: t.numRows }, () => (it.next().value ? 1 : 0));
        const out = filterTable(t, keep);
        const expected = rowsOf(t).filter((_, i) => keep[i] === 1);
        expect(rowsOf(out)).toEqual(expected);
        expect(viaIpc(out)).toEqual(expected);
        expect(out.schema).toBe(t.schema);
      }),
      { numRuns: 60 },
    );
  });

  it("takeRows, in any order and with repeats", () => {
    fc.assert(
      fc.property(
        tableArb.filter((t) => t.numRows > 0),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.boolean(),
        (t, raw, sort) => {
          const idx = raw.map((i) => i % t.numRows);
          if (sort) idx.sort((a, b) => a - b);
          const out = takeRows(t, sort ? Uint32Array.from(idx) : idx);
          const rows = rowsOf(t);
          const expected = idx.map((i) => rows[i]);
          expect(rowsOf(out)).toEqual(expected);
          expect(viaIpc(out)).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("concatTables and combineChunks", () => {
    fc.assert(
      fc.property(fc.array(tableArb, { maxLength: 4 }), (tables) => {
        const schema = buildTable([]).schema;
        const out = concatTables(tables, schema);
        const expected = tables.flatMap(rowsOf);
        expect(rowsOf(out)).toEqual(expected);
        expect(out.numRows).toBe(expected.length);
        const one = combineChunks(out);
        expect(one.batches.length).toBe(1);
        expect(rowsOf(one)).toEqual(expected);
        expect(viaIpc(one)).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  });

  it("sliceTable", () => {
    fc.assert(
      fc.property(
        tableArb,
        fc.integer({ min: -35, max: 35 }),
        fc.integer({ min: -35, max: 35 }),
        (t, a, b) => {
          expect(rowsOf(sliceTable(t, a, b))).toEqual(rowsOf(t).slice(a, b));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("kernel output survives Parquet", async () => {
    const rows = fc.sample(rowArb, { numRuns: 40, seed: 7 });
    const t = rebatch(buildTable(rows), [7, 19]);
    const picked = takeRows(t, [39, 0, 5, 5, 21, 8]);
    const kept = filterTable(picked, Uint8Array.of(1, 0, 1, 1, 1, 0));
    const parquetSafe = kept.select(
      kept.schema.fields.map((f) => f.name).filter((n) => n !== "nul" && n !== "fsl"),
    );
    const back = await readParquet(writeParquet(parquetSafe));
    const names = parquetSafe.schema.fields.map((f) => f.name);
    expect(rowsOf(back.select(names))).toEqual(rowsOf(parquetSafe));
  });
});

describe("kernel edge cases", () => {
  const t = rebatch(buildTable(fc.sample(rowArb, { numRuns: 10, seed: 3 })), [4]);

  it("rejects out-of-range indexes and mismatched masks", () => {
    expect(() => takeRows(t, [10])).toThrow(RangeError);
    expect(() => takeRows(t, [-1])).toThrow(RangeError);
    expect(() => takeRows(t, [1.5])).toThrow(RangeError);
    expect(() => filterTable(t, new Uint8Array(9))).toThrow(RangeError);
  });

  it("returns empty tables with the schema kept", () => {
    expect(takeRows(t, []).numRows).toBe(0);
    expect(takeRows(t, []).schema).toBe(t.schema);
    expect(filterTable(t, new Uint8Array(10)).numRows).toBe(0);
    const none = concatTables([], t.schema);
    expect(none.numRows).toBe(0);
    expect(none.schema).toBe(t.schema);
    expect(() => concatTables([])).toThrow();
  });

  it("keeps whole batches when a filter keeps everything", () => {
    const out = filterTable(t, new Uint8Array(10).fill(1));
    expect(out.batches[0]).toBe(t.batches[0]);
    expect(out.batches[1]).toBe(t.batches[1]);
  });

  it("refuses to concatenate different schemas", () => {
    const other = new arrow.Table({ a: arrow.vectorFromArray([1]) });
    expect(() => concatTables([t, other])).toThrow(/schemas differ/);
  });
});

describe("constant and null columns", () => {
  const base = rebatch(
    new arrow.Table({ id: arrow.vectorFromArray([1, 2, 3, 4, 5], new arrow.Int32()) }),
    [2],
  );

  it("materializes a partition value in every row, for every batch", () => {
    const cases: [arrow.DataType, unknown, unknown][] = [
      [new arrow.Utf8(), "us-east", "us-east"],
      [new arrow.Int32(), 7, 7],
      [new arrow.Int64(), 9007199254740993n, "9007199254740993n"],
      [new arrow.Int16(), "12", 12],
      [new arrow.Float64(), 2.5, 2.5],
      [new arrow.Bool(), true, true],
      [new arrow.DateDay(), "2024-02-29", Date.UTC(2024, 1, 29)],
      [
        new arrow.TimestampMicrosecond("UTC"),
        "2024-01-02 03:04:05.123456",
        Date.UTC(2024, 0, 2, 3, 4, 5, 123) + 0.456,
      ],
      [
        new arrow.TimestampMicrosecond("UTC"),
        "2024-01-02T03:04:05Z",
        Date.UTC(2024, 0, 2, 3, 4, 5),
      ],
      [new arrow.TimestampMicrosecond("UTC"), 1_700_000_000_000_000n, 1_700_000_000_000],
      [new arrow.Binary(), Uint8Array.of(1, 2), [1, 2]],
    ];
    for (const [type, value, expected] of cases) {
      const out = appendConstantColumn(base, new arrow.Field("p", type, true), value);
      expect(out.numRows).toBe(5);
      expect(out.batches.length).toBe(2);
      expect(
        rowsOf(out).map((r) => r[1]),
        String(type),
      ).toEqual(Array(5).fill(plain(expected)));
      expect(viaIpc(out).map((r) => r[1])).toEqual(Array(5).fill(plain(expected)));
    }
  });

  it("parses decimal partition values exactly", () => {
    const field = new arrow.Field("d", new arrow.Decimal(2, 10, 128), true);
    for (const [value, unscaled] of [
      ["9.50", 950n],
      ["-0.5", -50n],
      // A value of a finer scale rounds HALF_UP, as Spark's decimal cast does.
      [new DecimalValue(12345n, 3), 1235n],
      ["12.345", 1235n],
      [7, 700n],
      ["1e2", 10000n],
    ] as const) {
      const v = constantColumn(field, value, 3);
      const w = v.get(2) as Uint32Array;
      let x = 0n;
      for (let k = 3; k >= 0; k--) x = (x << 32n) | BigInt(w[k]);
      expect(BigInt.asIntN(128, x), String(value)).toBe(unscaled);
    }
  });

  it("reads timestamp partition text as Spark casts it: UTC, or the zone dropped for NTZ", () => {
    const cases = [
      [new arrow.TimestampMicrosecond("UTC"), "2026-01-01 00:00:00+02:00", 1767218400000000n],
      [new arrow.TimestampMicrosecond(null), "2026-01-01 00:00:00+02:00", 1767225600000000n],
      [new arrow.TimestampMillisecond("UTC"), "1969-12-31 23:59:59.9995", -1n],
      [new arrow.TimestampMicrosecond("UTC"), "1969-12-31 23:59:59.9999995", -1n],
    ] as const;
    for (const [type, text, expected] of cases) {
      const v = constantColumn(new arrow.Field("t", type, true), text, 2);
      expect(v.data[0].values[1], `${type} ${text}`).toBe(expected);
    }
    expect(() =>
      constantColumn(new arrow.Field("t", new arrow.TimestampMicrosecond("UTC"), true), "soon", 1),
    ).toThrow(/Not a timestamp/);
  });

  it("makes all-null columns of any type", () => {
    for (const type of [
      new arrow.Utf8(),
      new arrow.Int64(),
      structT,
      listT,
      mapT,
      fslT,
      dictT,
      new arrow.Bool(),
    ]) {
      const v = nullColumn(new arrow.Field("n", type, true), 4);
      expect(v.length).toBe(4);
      expect(v.nullCount, String(type)).toBe(4);
      const out = appendConstantColumn(base.slice(0, 4), new arrow.Field("n", type, true), null);
      expect(viaIpc(out).map((r) => r[1])).toEqual([null, null, null, null]);
    }
  });

  it("gives a column-less table its row count", () => {
    const empty = new arrow.Table(new arrow.Schema([]), []);
    const out = appendConstantColumn(empty, new arrow.Field("p", new arrow.Utf8(), true), "x", 3);
    expect(out.numRows).toBe(3);
    expect(rowsOf(out)).toEqual([["x"], ["x"], ["x"]]);
    expect(() =>
      appendConstantColumn(base, new arrow.Field("p", new arrow.Utf8()), "x", 9),
    ).toThrow(RangeError);
    const noBatches = new arrow.Table(base.schema, []);
    const noRows = appendConstantColumn(noBatches, new arrow.Field("p", new arrow.Utf8()), "x");
    expect(noRows.numRows).toBe(0);
    expect(noRows.schema.fields.map((f) => f.name)).toEqual(["id", "p"]);
  });
});
