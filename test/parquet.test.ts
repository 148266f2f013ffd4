import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import * as arrow from "apache-arrow";
import { parquetMetadata } from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  footerColumnIndex,
  readParquet,
  readParquetFooter,
  writeParquet,
} from "../lib/data/parquet.ts";
import type { RangeSource } from "../lib/data/parquet-source.ts";
import { DecimalValue } from "../lib/data/stats.ts";
import { SiltError } from "../lib/errors.ts";

const GOLDEN = join(import.meta.dirname, "../../shared/fixtures/delta/golden");

let db: DuckDBInstance;
let con: DuckDBConnection;
let dir: string;

beforeAll(async () => {
  db = await DuckDBInstance.create(":memory:", {
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
    threads: "1",
  });
  con = await db.connect();
  dir = mkdtempSync(join(tmpdir(), "silt-parquet-test-"));
});

afterAll(() => {
  con?.closeSync();
  db?.closeSync();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function duck(sql: string): Promise<Record<string, unknown>[]> {
  return (await con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

function sqlPath(p: string): string {
  return `'${p.replace(/'/g, "''")}'`;
}

function parquetFiles(table: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) {
        if (e !== "_delta_log") walk(p);
      } else if (e.endsWith(".parquet") && !e.startsWith(".")) out.push(p);
    }
  };
  walk(join(GOLDEN, table));
  return out;
}

// --- table builders -----------------------------------------------------------------------

function bitmap(valid: boolean[]): Uint8Array {
  const out = new Uint8Array((valid.length + 7) >> 3);
  valid.forEach((v, i) => {
    if (v) out[i >> 3] |= 1 << (i & 7);
  });
  return out;
}

function int64Data(type: arrow.DataType, values: (bigint | null)[]): arrow.Data {
  const arr = BigInt64Array.from(values, (v) => v ?? 0n);
  return new arrow.Data(type, 0, values.length, values.filter((v) => v === null).length, [
    undefined,
    arr,
    bitmap(values.map((v) => v !== null)),
  ] as never);
}

function decimalData(values: (bigint | null)[], precision: number, scale: number): arrow.Data {
  const words = new Uint32Array(values.length * 4);
  values.forEach((v, i) => {
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
    [undefined, words, bitmap(values.map((v) => v !== null))] as never,
  );
}

/** Unscaled value of row i of a Decimal128 column. */
function decimalAt(v: arrow.Vector, i: number): bigint | null {
  if (!v.isValid(i)) return null;
  const w = v.get(i) as Uint32Array;
  let x = 0n;
  for (let k = 3; k >= 0; k--) x = (x << 32n) | BigInt(w[k]);
  return BigInt.asIntN(128, x);
}

function tableOf(
  columns: Record<string, arrow.Data | arrow.Vector>,
  meta?: Record<string, string>,
) {
  const fields: arrow.Field[] = [];
  const children: arrow.Data[] = [];
  let length = 0;
  for (const [name, c] of Object.entries(columns)) {
    const data = c instanceof arrow.Data ? c : c.data[0];
    const md = meta?.[name] ? new Map([["PARQUET:field_id", meta[name]]]) : undefined;
    fields.push(new arrow.Field(name, data.type, true, md));
    children.push(data);
    length = data.length;
  }
  const schema = new arrow.Schema(fields);
  const struct = arrow.makeData({ type: new arrow.Struct(fields), length, nullCount: 0, children });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, struct)]);
}

const N = 7;
const ints = [1, -2, null, 2147483647, -2147483648, 0, 42];
const strs = ["a", null, "", "héllo wörld", "日本語", "x".repeat(100), "z"];
const dates = [0, -1, null, 19000, 2932896, -719162, 1];

function primitiveTable(): arrow.Table {
  return tableOf({
    i8: arrow.vectorFromArray([1, -128, null, 127, 0, 5, -5], new arrow.Int8()),
    i16: arrow.vectorFromArray([1, -32768, null, 32767, 0, 5, -5], new arrow.Int16()),
    i32: arrow.vectorFromArray(ints, new arrow.Int32()),
    i64: int64Data(new arrow.Int64(), [
      1n,
      -(2n ** 63n),
      null,
      2n ** 63n - 1n,
      0n,
      9007199254740993n,
      -5n,
    ]),
    f32: arrow.vectorFromArray(
      [1.5, -0.25, null, 3.4e38, Number.NaN, 0, 1e-7],
      new arrow.Float32(),
    ),
    f64: arrow.vectorFromArray(
      [1.5, -0.25, null, Number.MAX_VALUE, Number.NaN, Number.NEGATIVE_INFINITY, 5e-324],
      new arrow.Float64(),
    ),
    b: arrow.vectorFromArray([true, false, null, true, true, false, false], new arrow.Bool()),
    s: arrow.vectorFromArray(strs, new arrow.Utf8()),
    ls: arrow.vectorFromArray(strs, new arrow.LargeUtf8()),
    bin: arrow.vectorFromArray(
      [
        Uint8Array.of(0, 255),
        null,
        new Uint8Array(0),
        Uint8Array.of(1),
        Uint8Array.of(2),
        null,
        Uint8Array.of(3, 4, 5),
      ],
      new arrow.Binary(),
    ),
    d32: new arrow.Data(new arrow.DateDay(), 0, N, 1, [
      undefined,
      Int32Array.from(dates, (d) => d ?? 0),
      bitmap(dates.map((d) => d !== null)),
    ] as never),
    d64: int64Data(new arrow.DateMillisecond(), [
      0n,
      86_400_000n,
      null,
      -86_400_000n,
      1_641_600_000_000n,
      0n,
      0n,
    ]),
    ts_us_utc: int64Data(new arrow.TimestampMicrosecond("UTC"), [
      0n,
      1n,
      null,
      -1n,
      1_700_000_000_123_456n,
      0n,
      5n,
    ]),
    ts_us_ntz: int64Data(new arrow.TimestampMicrosecond(), [
      0n,
      1n,
      null,
      -1n,
      1_700_000_000_123_456n,
      0n,
      5n,
    ]),
    ts_ms: int64Data(new arrow.TimestampMillisecond("UTC"), [
      0n,
      1n,
      null,
      -1n,
      1_700_000_000_123n,
      0n,
      5n,
    ]),
    ts_s: int64Data(new arrow.TimestampSecond("UTC"), [0n, 1n, null, -1n, 1_700_000_000n, 0n, 5n]),
    ts_ns: int64Data(new arrow.TimestampNanosecond("UTC"), [
      0n,
      1999n,
      null,
      -1n,
      1_700_000_000_123_456_789n,
      0n,
      5000n,
    ]),
    dec9: decimalData([950n, -1n, null, 999999999n, -999999999n, 0n, 1n], 9, 2),
    dec18: decimalData([1n, -(10n ** 17n), null, 10n ** 18n - 1n, 0n, 5n, -5n], 18, 4),
    dec38: decimalData([1n, -(10n ** 37n), null, 10n ** 38n - 1n, 0n, 5n, -5n], 38, 10),
  });
}

function nestedTable(): arrow.Table {
  const structT = new arrow.Struct([
    new arrow.Field("x", new arrow.Int32(), true),
    new arrow.Field(
      "inner",
      new arrow.Struct([new arrow.Field("y", new arrow.Utf8(), true)]),
      true,
    ),
  ]);
  const listT = new arrow.List(new arrow.Field("element", new arrow.Int64(), true));
  const listOfStructT = new arrow.List(
    new arrow.Field(
      "element",
      new arrow.Struct([new arrow.Field("v", new arrow.Float64(), true)]),
      true,
    ),
  );
  const mapT = new arrow.Map_(
    new arrow.Field(
      "key_value",
      new arrow.Struct<{ key: arrow.Utf8; value: arrow.Int32 }>([
        new arrow.Field("key", new arrow.Utf8(), false),
        new arrow.Field("value", new arrow.Int32(), true),
      ]),
      false,
    ),
  );
  return tableOf({
    id: arrow.vectorFromArray([0, 1, 2, 3], new arrow.Int32()),
    st: arrow.vectorFromArray(
      [{ x: 1, inner: { y: "a" } }, null, { x: null, inner: null }, { x: 4, inner: { y: null } }],
      structT,
    ),
    li: arrow.vectorFromArray([[1n, 2n], null, [], [null, 5n]], listT),
    los: arrow.vectorFromArray([[{ v: 1.5 }, null], [], null, [{ v: null }]], listOfStructT),
    m: arrow.vectorFromArray(
      [
        new Map([
          ["a", 1],
          ["b", null],
        ]),
        null,
        new Map(),
        new Map([["z", 26]]),
      ],
      mapT,
    ),
  });
}

/** Row values in a comparable plain-JS form (bigints as strings, nested vectors as arrays). */
function plain(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "number" && Number.isNaN(v)) return "NaN";
  if (v instanceof Uint8Array) return Array.from(v);
  if (v instanceof arrow.Vector) return [...v].map(plain);
  if (typeof v === "object" && v !== null && "toJSON" in v) {
    const o = (v as { toJSON(): Record<string, unknown> }).toJSON();
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

function columnValues(t: arrow.Table, name: string): unknown[] {
  const v = t.getChild(name);
  if (!v) throw new Error(`no column ${name}`);
  return Array.from({ length: v.length }, (_, i) => plain(v.get(i)));
}

// --- tests ----------------------------------------------------------------------------------

describe("writeParquet / readParquet round trip", () => {
  it("keeps every primitive type, including nulls and extremes", async () => {
    const t = primitiveTable();
    const back = await readParquet(writeParquet(t));
    expect(back.numRows).toBe(N);
    for (const name of [
      "i8",
      "i16",
      "i32",
      "i64",
      "f32",
      "f64",
      "b",
      "s",
      "ls",
      "bin",
      "d32",
      "ts_us_utc",
      "ts_us_ntz",
    ]) {
      expect(columnValues(back, name), name).toEqual(columnValues(t, name));
    }
    for (const name of ["dec9", "dec18", "dec38"]) {
      const a = t.getChild(name)!;
      const b = back.getChild(name)!;
      expect(String(b.type)).toBe(String(a.type));
      for (let i = 0; i < N; i++) expect(decimalAt(b, i), `${name}[${i}]`).toBe(decimalAt(a, i));
    }
    // Date64 becomes day dates; every timestamp unit becomes microseconds.
    expect(String(back.getChild("d64")!.type)).toBe("Date32<DAY>");
    expect(columnValues(back, "d64")).toEqual([
      0,
      86_400_000,
      null,
      -86_400_000,
      1_641_600_000_000,
      0,
      0,
    ]);
    const micros = (name: string) => {
      const v = back.getChild(name)!;
      expect(v.type).toBeInstanceOf(arrow.Timestamp);
      expect((v.type as arrow.Timestamp).unit).toBe(arrow.TimeUnit.MICROSECOND);
      expect((v.type as arrow.Timestamp).timezone).toBe("UTC");
      return Array.from({ length: N }, (_, i) =>
        v.isValid(i) ? (v.data[0].values as BigInt64Array)[i] : null,
      );
    };
    expect(micros("ts_ms")).toEqual([0n, 1000n, null, -1000n, 1_700_000_000_123_000n, 0n, 5000n]);
    expect(micros("ts_s")).toEqual([
      0n,
      1_000_000n,
      null,
      -1_000_000n,
      1_700_000_000_000_000n,
      0n,
      5_000_000n,
    ]);
    // Nanoseconds are floored to microseconds, also before 1970.
    expect(micros("ts_ns")).toEqual([0n, 1n, null, -1n, 1_700_000_000_123_456n, 0n, 5n]);
  });

  it("keeps structs, lists, lists of structs and maps, with nulls at every level", async () => {
    const t = nestedTable();
    const back = await readParquet(writeParquet(t));
    expect(back.numRows).toBe(4);
    for (const name of ["id", "st", "li", "los", "m"]) {
      expect(columnValues(back, name), name).toEqual(columnValues(t, name));
    }
  });

  it("writes timestamps nested in structs and lists as microseconds too", async () => {
    const tsMs = new arrow.TimestampMillisecond("UTC");
    const t = tableOf({
      st: arrow.vectorFromArray(
        [{ at: 1_700_000_000_123 }, null],
        new arrow.Struct([new arrow.Field("at", tsMs, true)]),
      ),
      li: arrow.vectorFromArray(
        [[1000, null], [-1]],
        new arrow.List(new arrow.Field("e", tsMs, true)),
      ),
    });
    const bytes = writeParquet(t);
    const footer = await readParquetFooter(bytes);
    for (const leaf of footer.leaves) {
      expect(leaf.logicalType).toMatchObject({ type: "TIMESTAMP", unit: "MICROS" });
    }
    const back = await readParquet(bytes);
    expect(columnValues(back, "st")).toEqual(columnValues(t, "st"));
    expect(columnValues(back, "li")).toEqual(columnValues(t, "li"));
  });

  it("selects nested columns by their top-level name", async () => {
    const t = nestedTable();
    const back = await readParquet(writeParquet(t), { columns: ["m", "st"] });
    expect(back.schema.fields.map((f) => f.name)).toEqual(["m", "st"]);
    expect(columnValues(back, "st")).toEqual(columnValues(t, "st"));
    expect(columnValues(back, "m")).toEqual(columnValues(t, "m"));
  });

  it("round-trips an empty table and a multi-batch table", async () => {
    const t = primitiveTable();
    const empty = await readParquet(writeParquet(t.slice(0, 0)));
    expect(empty.numRows).toBe(0);
    expect(empty.schema.fields.map((f) => f.name)).toEqual(t.schema.fields.map((f) => f.name));
    const multi = new arrow.Table(t.schema, [...t.batches, ...t.batches, ...t.batches]);
    const back = await readParquet(writeParquet(multi, { rowGroupSize: 5 }));
    expect(back.numRows).toBe(3 * N);
    expect(columnValues(back, "s")).toEqual([...strs, ...strs, ...strs]);
  });

  it("writes snappy and uncompressed files too", async () => {
    const t = primitiveTable();
    for (const compression of ["snappy", "uncompressed"] as const) {
      const bytes = writeParquet(t, { compression });
      const footer = await readParquetFooter(bytes);
      expect(footer.rowGroups[0].columns[0].compression).toBe(compression.toUpperCase());
      expect(columnValues(await readParquet(bytes), "s")).toEqual(strs);
    }
  });
});

describe("column and row-group selection", () => {
  const rows = 10_000;
  const big = tableOf({
    id: int64Data(
      new arrow.Int64(),
      Array.from({ length: rows }, (_, i) => BigInt(i)),
    ),
    name: arrow.vectorFromArray(
      Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : `n${i}`)),
      new arrow.Utf8(),
    ),
    v: arrow.vectorFromArray(
      Array.from({ length: rows }, (_, i) => i / 2),
      new arrow.Float64(),
    ),
  });
  const bytes = writeParquet(big, { rowGroupSize: 1000 });

  it("reads only the named columns, in the order asked, skipping unknown names", async () => {
    const t = await readParquet(bytes, { columns: ["v", "nope", "id"] });
    expect(t.schema.fields.map((f) => f.name)).toEqual(["v", "id"]);
    expect(t.numRows).toBe(rows);
    expect(t.getChild("id")!.get(9999)).toBe(9999n);
    expect(t.getChild("v")!.get(3)).toBe(1.5);
  });

  it("returns the row count with no columns when none of the names exist", async () => {
    const t = await readParquet(bytes, { columns: ["nope"] });
    expect(t.numCols).toBe(0);
    expect(t.numRows).toBe(rows);
    expect((await readParquet(bytes, { columns: [], rowGroups: [1, 2] })).numRows).toBe(2000);
  });

  it("reads selected row groups, with and without a column list", async () => {
    const t = await readParquet(bytes, { rowGroups: [2, 5] });
    expect(t.numRows).toBe(2000);
    expect(t.getChild("id")!.get(0)).toBe(2000n);
    expect(t.getChild("id")!.get(1000)).toBe(5000n);
    const sub = await readParquet(bytes, { rowGroups: [9], columns: ["name"] });
    expect(sub.numRows).toBe(1000);
    expect(sub.getChild("name")!.get(1)).toBe("n9001");
  });

  it("rejects out-of-range row groups before parquet-wasm can panic", async () => {
    for (const rg of [10, -1, 1.5]) {
      await expect(readParquet(bytes, { rowGroups: [rg] })).rejects.toThrow(SiltError);
      await expect(readParquet(bytes, { rowGroups: [0, rg], columns: ["id"] })).rejects.toThrow(
        /out of range: the file has 10 row group/,
      );
    }
    expect((await readParquet(bytes, { rowGroups: [0] })).numRows).toBe(1000);
  });

  it("reads through a RangeSource, fetching only what the columns need", async () => {
    let fetched = 0;
    const source: RangeSource = {
      size: bytes.byteLength,
      read: async (start, end) => {
        fetched += end - start;
        return bytes.slice(start, end);
      },
    };
    const t = await readParquet(source, { columns: ["id"], rowGroups: [3] });
    expect(t.numRows).toBe(1000);
    expect(t.getChild("id")!.get(0)).toBe(3000n);
    expect(fetched).toBeLessThan(bytes.byteLength / 2);
    const all = await readParquet(source);
    expect(all.numRows).toBe(rows);
    expect(columnValues(all, "name")).toEqual(columnValues(big, "name"));
  });

  it("fails cleanly on a corrupt file", async () => {
    const broken = bytes.slice(0, bytes.byteLength - 100);
    await expect(readParquetFooter(broken)).rejects.toThrow();
    await expect(readParquet(new Uint8Array(4))).rejects.toThrow();
  });
});

describe("readParquetFooter", () => {
  it("exposes row groups, sizes and statistics decoded like Delta stats", async () => {
    const t = primitiveTable();
    const bytes = writeParquet(t, { rowGroupSize: 4 });
    const footer = await readParquetFooter(bytes);
    expect(footer.numRows).toBe(N);
    expect(footer.rowGroups.map((r) => r.numRows)).toEqual([4, 3]);
    expect(footer.createdBy).toMatch(/parquet-rs/);
    const col = (name: string) => footerColumnIndex(footer, [name]);
    const stats = (rg: number, name: string) => footer.rowGroups[rg].columns[col(name)].stats;
    expect(stats(0, "i32")).toMatchObject({ min: -2, max: 2147483647, nullCount: 1 });
    expect(stats(0, "i64")).toMatchObject({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    expect(stats(1, "i64")).toMatchObject({ min: -5, max: 9007199254740993n, nullCount: 0 });
    expect(stats(0, "s")).toMatchObject({ min: "", max: "héllo wörld" });
    expect(stats(0, "d32")).toMatchObject({ min: "1969-12-31", max: "2022-01-08" });
    expect(stats(0, "ts_us_utc")).toMatchObject({
      min: "1969-12-31T23:59:59.999Z",
      max: "1970-01-01T00:00:00.000Z",
    });
    expect(stats(1, "ts_us_ntz")).toMatchObject({
      min: "1970-01-01T00:00:00.000",
      max: "2023-11-14T22:13:20.123",
    });
    const d = stats(0, "dec38")!;
    expect(d.min).toBeInstanceOf(DecimalValue);
    expect(String(d.min)).toBe(`-${"1".padEnd(28, "0")}.0000000000`);
    expect(String(d.max)).toBe(`${"9".repeat(28)}.${"9".repeat(10)}`);
    expect(String(stats(0, "dec9")!.min)).toBe("-0.01");
    expect(String(stats(0, "dec9")!.max)).toBe("9999999.99");
    expect(String(stats(1, "dec9")!.min)).toBe("-9999999.99");
    expect(String(stats(0, "dec18")!.min)).toBe("-10000000000000.0000");
    expect(stats(0, "b")).toMatchObject({ min: false, max: true, nullCount: 1 });
    expect(stats(0, "bin")!.min).toEqual(new Uint8Array(0));
    for (const rg of footer.rowGroups) {
      expect(rg.compressedSize).toBeGreaterThan(0);
      for (const c of rg.columns) {
        expect(c.hasPageIndex).toBe(false);
        expect(c.compression).toBe("ZSTD");
      }
    }
  });

  it("delta-encodes nearly unique integers and keeps dictionaries for repetitive columns", async () => {
    const n = 5000;
    const table = new arrow.Table({
      id: arrow.vectorFromArray(
        Array.from({ length: n }, (_, i) => BigInt(i * 7)),
        new arrow.Int64(),
      ),
      day: arrow.vectorFromArray(
        Array.from({ length: n }, (_, i) => i % 3),
        new arrow.Int32(),
      ),
      note: arrow.vectorFromArray(
        Array.from({ length: n }, (_, i) => `n${i}`),
        new arrow.Utf8(),
      ),
    });
    const bytes = writeParquet(table);
    const footer = await readParquetFooter(bytes);
    const encodings = (name: string) =>
      footer.rowGroups[0].columns[footerColumnIndex(footer, [name])].encodings;
    expect(encodings("id")).toContain("DELTA_BINARY_PACKED");
    expect(encodings("day")).toContain("RLE_DICTIONARY");
    expect(encodings("note")).not.toContain("RLE_DICTIONARY");
    expect(encodings("note")).not.toContain("DELTA_BINARY_PACKED");
    // Both our reader and DuckDB decode it.
    const back = await readParquet(bytes);
    expect(back.getChild("id")!.get(4999)).toBe(34993n);
    const path = join(dir, "delta-encoded.parquet");
    writeFileSync(path, bytes);
    const [row] = await duck(
      `select sum(id)::varchar s, max(id)::varchar m from read_parquet(${sqlPath(path)})`,
    );
    expect(row).toEqual({ s: String((7 * (n - 1) * n) / 2), m: "34993" });
  });

  it("describes Parquet types the way Spark expects them", async () => {
    const footer = await readParquetFooter(writeParquet(primitiveTable()));
    const leaf = (name: string) => footer.leaves[footerColumnIndex(footer, [name])];
    expect(leaf("ts_us_utc")).toMatchObject({
      physicalType: "INT64",
      logicalType: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" },
    });
    expect(leaf("ts_us_ntz").logicalType).toEqual({
      type: "TIMESTAMP",
      isAdjustedToUTC: false,
      unit: "MICROS",
    });
    for (const name of ["ts_ms", "ts_s", "ts_ns"])
      expect(leaf(name).logicalType).toMatchObject({ unit: "MICROS" });
    expect(leaf("d32")).toMatchObject({ physicalType: "INT32", logicalType: { type: "DATE" } });
    expect(leaf("d64")).toMatchObject({ physicalType: "INT32", logicalType: { type: "DATE" } });
    expect(leaf("dec9")).toMatchObject({ physicalType: "INT32", precision: 9, scale: 2 });
    expect(leaf("dec18")).toMatchObject({ physicalType: "INT64", precision: 18, scale: 4 });
    expect(leaf("dec38")).toMatchObject({
      physicalType: "FIXED_LEN_BYTE_ARRAY",
      precision: 38,
      scale: 10,
    });
    expect(leaf("s")).toMatchObject({
      physicalType: "BYTE_ARRAY",
      logicalType: { type: "STRING" },
    });
  });

  it("reads a footer larger than the first ranged read", async () => {
    const cols: Record<string, arrow.Vector> = {};
    for (let c = 0; c < 120; c++) {
      cols[`column_with_a_long_name_${c}`] = arrow.vectorFromArray(
        Array.from({ length: 400 }, (_, i) => i * c),
        new arrow.Int32(),
      );
    }
    const bytes = writeParquet(tableOf(cols), { rowGroupSize: 10 });
    const reads: [number, number][] = [];
    const source: RangeSource = {
      size: bytes.byteLength,
      read: async (s, e) => {
        reads.push([s, e]);
        return bytes.slice(s, e);
      },
    };
    const footer = await readParquetFooter(source);
    expect(footer.metadataLength).toBeGreaterThan(64 * 1024);
    expect(reads.length).toBe(2);
    expect(footer.rowGroups.length).toBe(40);
    expect(footer).toEqual(await readParquetFooter(bytes));
  });
});

describe("field ids", () => {
  it("writes PARQUET:field_id metadata as Parquet field_id, nested fields included", async () => {
    const inner = new arrow.Struct([
      new arrow.Field("col-b1", new arrow.Int32(), true, new Map([["PARQUET:field_id", "11"]])),
      new arrow.Field("col-b2", new arrow.Utf8(), true, new Map([["PARQUET:field_id", "12"]])),
    ]);
    const t = tableOf(
      {
        "col-a": arrow.vectorFromArray([1n, 2n], new arrow.Int64()),
        "col-b": arrow.vectorFromArray([{ "col-b1": 1, "col-b2": "x" }, null], inner),
      },
      { "col-a": "1", "col-b": "10" },
    );
    const bytes = writeParquet(t);
    const meta = parquetMetadata(bytes);
    const ids = Object.fromEntries(meta.schema.slice(1).map((e) => [e.name, e.field_id]));
    expect(ids).toEqual({ "col-a": 1, "col-b": 10, "col-b1": 11, "col-b2": 12 });
    const footer = await readParquetFooter(bytes);
    expect(footer.schema.map((n) => [n.name, n.fieldId])).toEqual([
      ["col-a", 1],
      ["col-b", 10],
    ]);
    expect(footer.leaves.map((l) => l.fieldIds)).toEqual([[1], [10, 11], [10, 12]]);
    const back = await readParquet(bytes);
    expect(back.schema.fields[0].metadata.get("PARQUET:field_id")).toBe("1");
  });
});

describe("DuckDB reads what we write", () => {
  it("agrees on counts, sums and extremes", async () => {
    const n = 50_000;
    const ids: bigint[] = [];
    const names: (string | null)[] = [];
    const amounts: (number | null)[] = [];
    const days: (number | null)[] = [];
    const flags: (boolean | null)[] = [];
    const ts: (bigint | null)[] = [];
    const decs: (bigint | null)[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(BigInt(i) * 3n - 70_000n);
      names.push(i % 50 === 0 ? null : `customer_${i % 977}`);
      amounts.push(i % 20 === 0 ? null : (i % 1000) / 8);
      days.push(i % 100 === 0 ? null : 18_000 + (i % 400));
      flags.push(i % 33 === 0 ? null : i % 3 === 0);
      ts.push(i % 10 === 0 ? null : 1_600_000_000_000_000n + BigInt(i) * 1_234_567n);
      decs.push(i % 9 === 0 ? null : BigInt(i) * 101n - 1_000_000n);
    }
    const t = tableOf({
      id: int64Data(new arrow.Int64(), ids),
      name: arrow.vectorFromArray(names, new arrow.Utf8()),
      amount: arrow.vectorFromArray(amounts, new arrow.Float64()),
      day: new arrow.Data(new arrow.DateDay(), 0, n, days.filter((d) => d === null).length, [
        undefined,
        Int32Array.from(days, (d) => d ?? 0),
        bitmap(days.map((d) => d !== null)),
      ] as never),
      flag: arrow.vectorFromArray(flags, new arrow.Bool()),
      ts: int64Data(new arrow.TimestampMicrosecond("UTC"), ts),
      dec: decimalData(decs, 12, 2),
    });
    const path = join(dir, "ours.parquet");
    writeFileSync(path, writeParquet(t, { rowGroupSize: 8192 }));
    const [row] = await duck(
      `select count(*) c, sum(id)::varchar sid, count(name) cn, count(distinct name) dn,
        sum(amount) sa, count(day) cd, min(day)::varchar mind, max(day)::varchar maxd,
        sum(flag::int) sf, count(flag) cf, epoch_us(min(ts))::varchar mints,
        epoch_us(max(ts))::varchar maxts,
        sum(dec)::varchar sdec, min(dec)::varchar mindec from read_parquet(${sqlPath(path)})`,
    );
    const present = <T>(xs: (T | null)[]) => xs.filter((x): x is T => x !== null);
    const dayStr = (d: number) => new Date(d * 86_400_000).toISOString().slice(0, 10);
    expect(row).toEqual({
      c: String(n),
      sid: String(ids.reduce((a, b) => a + b, 0n)),
      cn: String(present(names).length),
      dn: "977",
      sa: present(amounts).reduce((a, b) => a + b, 0),
      cd: String(present(days).length),
      mind: dayStr(Math.min(...present(days))),
      maxd: dayStr(Math.max(...present(days))),
      sf: String(present(flags).filter(Boolean).length),
      cf: String(present(flags).length),
      mints: String(bigMin(present(ts))),
      maxts: String(bigMax(present(ts))),
      sdec: new DecimalValue(
        present(decs).reduce((a, b) => a + b, 0n),
        2,
      ).toString(),
      mindec: new DecimalValue(bigMin(present(decs)), 2).toString(),
    });
    const [schemaRow] = await duck(
      `select type, logical_type::varchar lt from parquet_schema(${sqlPath(path)}) where name = 'ts'`,
    );
    expect(String(schemaRow.lt)).toMatch(/isAdjustedToUTC=1/);
  });
});

describe("files written by Spark", () => {
  it("decodes INT96 timestamps (kernel-timestamp-INT96)", async () => {
    const files = parquetFiles("kernel-timestamp-INT96");
    expect(files.length).toBe(5);
    const ours: [number, bigint | null][] = [];
    for (const f of files) {
      const t = await readParquet(new Uint8Array(readFileSync(f)));
      expect(t.getChild("time")!.type).toEqual(UTC_MICROS);
      const time = microsColumn(t, "time");
      for (let i = 0; i < t.numRows; i++) ours.push([t.getChild("id")!.get(i) as number, time[i]]);
    }
    ours.sort((a, b) => a[0] - b[0]);
    const theirs = await duck(
      `select id, epoch_us(time)::varchar t from read_parquet(${sqlPath(join(GOLDEN, "kernel-timestamp-INT96/*/*.parquet"))}) order by id`,
    );
    expect(ours).toEqual(theirs.map((r) => [r.id, r.t === null ? null : BigInt(r.t as string)]));
  });

  it("decodes legacy and dictionary-encoded decimals", async () => {
    for (const [table, step] of [
      ["parquet-decimal-type", 997],
      ["parquet-decimal-dictionaries", 99_991],
      ["decimal-various-scale-precision", 1],
    ] as const) {
      for (const f of parquetFiles(table)) {
        const t = await readParquet(new Uint8Array(readFileSync(f)));
        const [{ c }] = await duck(`select count(*) c from read_parquet(${sqlPath(f)})`);
        expect(t.numRows, table).toBe(Number(c));
        const decCols = t.schema.fields.filter((fl) => arrow.DataType.isDecimal(fl.type));
        expect(decCols.length).toBeGreaterThan(0);
        const select = decCols.map((fl) => `"${fl.name}"::varchar as "${fl.name}"`).join(", ");
        const theirs = await duck(
          `select ${select} from (select *, row_number() over () - 1 as rn from read_parquet(${sqlPath(f)})) where rn % ${step} = 0 order by rn`,
        );
        const ours = [];
        for (let i = 0; i < t.numRows; i += step) {
          const row: Record<string, string | null> = {};
          for (const fl of decCols) {
            const v = decimalAt(t.getChild(fl.name)!, i);
            row[fl.name] =
              v === null ? null : new DecimalValue(v, (fl.type as arrow.Decimal).scale).toString();
          }
          ours.push(row);
        }
        expect(ours, table).toEqual(theirs.map((r) => normalizeDuckDecimals(r)));
      }
    }
  });

  it("decodes nested lists, maps and structs", async () => {
    const read = async (table: string) => {
      const parts = await Promise.all(
        parquetFiles(table).map(async (f) => readParquet(new Uint8Array(readFileSync(f)))),
      );
      return parts.flatMap((t) => [...t].map((r) => r.toJSON()));
    };
    const arrays = (await read("data-reader-array-complex-objects")).sort(
      (a, b) => (a.i as number) - (b.i as number),
    );
    const arraysDuck = await duck(
      `select i, "3d_int_list"[1][2][3] x, len("4d_int_list") l, list_of_records[1].val v,
        list_of_maps[1][cast(i as varchar)] mv
       from read_parquet(${sqlPath(join(GOLDEN, "data-reader-array-complex-objects/*.parquet"))}) order by i`,
    );
    expect(
      arrays.map((r) => {
        const d3 = r["3d_int_list"] as arrow.Vector;
        const los = r.list_of_records as arrow.Vector;
        const lom = r.list_of_maps as arrow.Vector;
        return {
          i: r.i,
          x: (d3.get(0) as arrow.Vector).get(1).get(2),
          l: String((r["4d_int_list"] as arrow.Vector).length),
          v: los.get(0).val,
          mv: String(lom.get(0).toJSON()[String(r.i)]),
        };
      }),
    ).toEqual(arraysDuck);

    const maps = (await read("data-reader-map")).sort((a, b) => (a.i as number) - (b.i as number));
    const mapsDuck = await duck(
      `select i, a[i] av, e[cast(i as varchar)]::varchar ev, len(f[i]) fl
       from read_parquet(${sqlPath(join(GOLDEN, "data-reader-map/*.parquet"))}) order by i`,
    );
    expect(
      maps.map((r) => {
        const key = String(r.i);
        const e = (r.e as arrow.MapRow).toJSON()[key] as Uint32Array;
        return {
          i: r.i,
          av: (r.a as arrow.MapRow).toJSON()[key],
          ev: String(e[0]),
          fl: String(((r.f as arrow.MapRow).toJSON()[key] as arrow.Vector).length),
        };
      }),
    ).toEqual(mapsDuck);

    const structs = (await read("data-reader-nested-struct")).sort(
      (a, b) => (a.b as number) - (b.b as number),
    );
    const structsDuck = await duck(
      `select a.aa, a.ac.acb::varchar acb, b
       from read_parquet(${sqlPath(join(GOLDEN, "data-reader-nested-struct/*.parquet"))}) order by b`,
    );
    expect(
      structs.map((r) => {
        const a = (r.a as arrow.StructRow).toJSON() as { aa: string; ac: arrow.StructRow };
        return { aa: a.aa, acb: String(a.ac.toJSON().acb), b: r.b };
      }),
    ).toEqual(structsDuck);
  });

  it("decodes each column of parquet-all-types alone exactly as in a whole-file read", async () => {
    // Another writer's file, nested columns included: a column subset is read through a
    // narrowed copy of the footer, which must leave every column it keeps decoding the same.
    const [f] = parquetFiles("parquet-all-types");
    const bytes = new Uint8Array(readFileSync(f));
    const whole = await readParquet(bytes);
    const names = whole.schema.fields.map((x) => x.name);
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) {
      const alone = await readParquet(bytes, { columns: [name] });
      expect(alone.schema.fields.map((x) => x.name)).toEqual([name]);
      expect(String(alone.schema.fields[0]!.type), name).toBe(String(whole.getChild(name)!.type));
      expect(alone.getChild(name)!.toJSON(), name).toEqual(whole.getChild(name)!.toJSON());
    }
    const [first, last] = [names[0]!, names[names.length - 1]!];
    const pair = await readParquet(bytes, { columns: [last, first] });
    expect(pair.schema.fields.map((x) => x.name)).toEqual([last, first]);
    expect(pair.getChild(first)!.toJSON()).toEqual(whole.getChild(first)!.toJSON());
  });

  it("decodes every column of parquet-all-types", async () => {
    const [f] = parquetFiles("parquet-all-types");
    const t = await readParquet(new Uint8Array(readFileSync(f)));
    const [d] = await duck(
      `select count(*) c, sum(IntegerType) si, count(StringType) cs, sum(octet_length(BinaryType)) lb,
        count(array_of_prims) ca, min(DateType)::varchar md, sum(decimal)::varchar sd,
        epoch_ms(max(TimestampType)) mt from read_parquet(${sqlPath(f)})`,
    );
    const col = (n: string) => t.getChild(n)!;
    let si = 0;
    let lb = 0;
    let sd = 0n;
    let mt = Number.NEGATIVE_INFINITY;
    let md = Number.POSITIVE_INFINITY;
    for (let i = 0; i < t.numRows; i++) {
      if (col("DateType").isValid(i)) md = Math.min(md, col("DateType").get(i) as number);
      if (col("IntegerType").isValid(i)) si += col("IntegerType").get(i);
      if (col("BinaryType").isValid(i)) lb += (col("BinaryType").get(i) as Uint8Array).length;
      sd += decimalAt(col("decimal"), i) ?? 0n;
      if (col("TimestampType").isValid(i))
        mt = Math.max(mt, Math.floor(Number(col("TimestampType").get(i))));
    }
    expect({
      c: String(t.numRows),
      si: String(si),
      cs: String(col("StringType").length - col("StringType").nullCount),
      lb: String(lb),
      ca: String(col("array_of_prims").length - col("array_of_prims").nullCount),
      md: new Date(md).toISOString().slice(0, 10),
      sd: new DecimalValue(sd, 2).toString(),
      mt: String(mt),
    }).toEqual(d);
  });
});

// ---------------------------------------------------------------------------------------------
// A minimal INT96 Parquet writer (uncompressed, PLAIN, data page v1), as Spark and Hive lay the
// type out: 8 bytes little-endian nanoseconds of the day, then 4 bytes little-endian Julian day.

interface Int96Row {
  id: number;
  ts: bigint | null;
  s: { t: bigint | null } | null;
  l: (bigint | null)[] | null;
}

const UTC_MICROS = new arrow.Timestamp(arrow.TimeUnit.MICROSECOND, "UTC");

function rangeOf(bytes: Uint8Array): RangeSource {
  return { size: bytes.byteLength, read: async (start, end) => bytes.slice(start, end) };
}

function isoMicros(v: bigint | null): string | null {
  if (v === null) return null;
  const ms = v / 1000n - (v % 1000n < 0n ? 1n : 0n);
  const micros = ((v % 1_000_000n) + 1_000_000n) % 1_000_000n;
  return `${new Date(Number(ms)).toISOString().slice(0, 19)}.${String(micros).padStart(6, "0")}Z`;
}

function validAt(d: arrow.Data, i: number): boolean {
  if (!d.nullBitmap || d.nullBitmap.length === 0 || d.nullCount === 0) return true;
  const bit = d.offset + i;
  return (d.nullBitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
}

function micros(d: arrow.Data, i: number): bigint | null {
  return validAt(d, i) ? (d.values as BigInt64Array)[d.offset + i] : null;
}

function microsColumn(t: arrow.Table, name: string): (bigint | null)[] {
  return t
    .getChild(name)!
    .data.flatMap((d) => Array.from({ length: d.length }, (_, i) => micros(d, i)));
}

function structMicros(
  t: arrow.Table,
  name: string,
  child: string,
): ({ t: bigint | null } | null)[] {
  return t.getChild(name)!.data.flatMap((d) => {
    const c = d.children[(d.type as arrow.Struct).children.findIndex((f) => f.name === child)];
    return Array.from({ length: d.length }, (_, i) => (validAt(d, i) ? { t: micros(c, i) } : null));
  });
}

function listMicros(t: arrow.Table, name: string): ((bigint | null)[] | null)[] {
  return t.getChild(name)!.data.flatMap((d) => {
    const offsets = d.valueOffsets as Int32Array;
    return Array.from({ length: d.length }, (_, i) => {
      if (!validAt(d, i)) return null;
      const out: (bigint | null)[] = [];
      for (let k = offsets[d.offset + i]; k < offsets[d.offset + i + 1]; k++)
        out.push(micros(d.children[0], k));
      return out;
    });
  });
}

// Thrift compact protocol, only what the footer and page headers below need.
type ThriftField = [id: number, type: number, value: number[]];
const uvarint = (n: number): number[] => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  return [...out, n];
};
const zz = (n: number) => (n >= 0 ? 2 * n : -2 * n - 1);
const tStruct = (fields: ThriftField[]): number[] => {
  const out: number[] = [];
  let prev = 0;
  for (const [id, type, value] of fields) {
    out.push(((id - prev) << 4) | type, ...value);
    prev = id;
  }
  return [...out, 0];
};
const tI32 = (id: number, v: number): ThriftField => [id, 5, uvarint(zz(v))];
const tI64 = (id: number, v: number): ThriftField => [id, 6, uvarint(zz(v))];
const tBin = (id: number, s: string): ThriftField => {
  const b = [...new TextEncoder().encode(s)];
  return [id, 8, [...uvarint(b.length), ...b]];
};
const tSub = (id: number, fields: ThriftField[]): ThriftField => [id, 12, tStruct(fields)];
const tBool = (id: number, v: boolean): ThriftField => [id, v ? 1 : 2, []];
const tList = (id: number, elemType: number, elems: number[][]): ThriftField => [
  id,
  9,
  [
    ...(elems.length < 15
      ? [(elems.length << 4) | elemType]
      : [0xf0 | elemType, ...uvarint(elems.length)]),
    ...elems.flat(),
  ],
];

const OPTIONAL = 1;
const REPEATED = 2;
const INT32 = 1;
const INT64 = 2;
const INT96 = 3;

function int96Bytes(micros: bigint): number[] {
  const days = micros / 86_400_000_000n - (micros % 86_400_000_000n < 0n ? 1n : 0n);
  // 789 sub-microsecond nanoseconds, which a microsecond read must floor away.
  const nanos = (micros - days * 86_400_000_000n) * 1000n + 789n;
  const b = new DataView(new ArrayBuffer(12));
  b.setBigUint64(0, nanos, true);
  b.setInt32(8, Number(days + 2_440_588n), true);
  return [...new Uint8Array(b.buffer)];
}

/** RLE runs of one value each: valid RLE/bit-packed hybrid for bit widths up to 8. */
function levelBytes(levels: number[]): number[] {
  const body = levels.flatMap((l) => [2, l]);
  const len = new DataView(new ArrayBuffer(4));
  len.setUint32(0, body.length, true);
  return [...new Uint8Array(len.buffer), ...body];
}

interface ColumnPage {
  path: string[];
  type: number;
  rep: number[] | null;
  def: number[] | null;
  values: number[][];
  numValues: number;
}

function columnPages(rows: Int96Row[], nanosColumn: boolean): ColumnPage[] {
  const l: ColumnPage = {
    path: ["l", "list", "element"],
    type: INT96,
    rep: [],
    def: [],
    values: [],
    numValues: 0,
  };
  for (const r of rows) {
    if (r.l === null || r.l.length === 0) {
      l.rep!.push(0);
      l.def!.push(r.l === null ? 0 : 1);
    }
    for (const [k, v] of (r.l ?? []).entries()) {
      l.rep!.push(k === 0 ? 0 : 1);
      l.def!.push(v === null ? 2 : 3);
      if (v !== null) l.values.push(int96Bytes(v));
    }
  }
  l.numValues = l.def!.length;
  const pages: ColumnPage[] = [
    {
      path: ["id"],
      type: INT32,
      rep: null,
      def: null,
      values: rows.map((r) => {
        const b = new DataView(new ArrayBuffer(4));
        b.setInt32(0, r.id, true);
        return [...new Uint8Array(b.buffer)];
      }),
      numValues: rows.length,
    },
    {
      path: ["ts"],
      type: INT96,
      rep: null,
      def: rows.map((r) => (r.ts === null ? 0 : 1)),
      values: rows.flatMap((r) => (r.ts === null ? [] : [int96Bytes(r.ts)])),
      numValues: rows.length,
    },
    {
      path: ["s", "t"],
      type: INT96,
      rep: null,
      def: rows.map((r) => (r.s === null ? 0 : r.s.t === null ? 1 : 2)),
      values: rows.flatMap((r) => (r.s?.t == null ? [] : [int96Bytes(r.s.t)])),
      numValues: rows.length,
    },
    l,
  ];
  if (nanosColumn) {
    pages.push({
      path: ["n"],
      type: INT64,
      rep: null,
      def: rows.map(() => 1),
      values: rows.map((r) => {
        const b = new DataView(new ArrayBuffer(8));
        b.setBigInt64(0, BigInt(r.id) * 1_000_000_007n, true);
        return [...new Uint8Array(b.buffer)];
      }),
      numValues: rows.length,
    });
  }
  return pages;
}

/** A Parquet file of `rows` in row groups of the given sizes. */
function int96File(
  rows: Int96Row[],
  groupSizes: number[],
  opts: { nanosColumn?: boolean } = {},
): Uint8Array {
  const nanosColumn = opts.nanosColumn ?? false;
  const out: number[] = [...new TextEncoder().encode("PAR1")];
  const rowGroups: number[][] = [];
  let first = 0;
  for (const size of groupSizes) {
    const group = rows.slice(first, first + size);
    first += size;
    const chunks: number[][] = [];
    let groupBytes = 0;
    for (const c of columnPages(group, nanosColumn)) {
      const page = [
        ...(c.rep ? levelBytes(c.rep) : []),
        ...(c.def ? levelBytes(c.def) : []),
        ...c.values.flat(),
      ];
      const header = tStruct([
        tI32(1, 0), // DATA_PAGE
        tI32(2, page.length),
        tI32(3, page.length),
        tSub(5, [tI32(1, c.numValues), tI32(2, 0), tI32(3, 3), tI32(4, 3)]), // PLAIN, RLE, RLE
      ]);
      const offset = out.length;
      out.push(...header, ...page);
      const chunkSize = header.length + page.length;
      groupBytes += chunkSize;
      chunks.push(
        tStruct([
          tI64(2, offset),
          tSub(3, [
            tI32(1, c.type),
            tList(2, 5, [uvarint(zz(0)), uvarint(zz(3))]),
            tList(
              3,
              8,
              c.path.map((p) => tBin(0, p)[2]),
            ),
            tI32(4, 0), // UNCOMPRESSED
            tI64(5, c.numValues),
            tI64(6, chunkSize),
            tI64(7, chunkSize),
            tI64(9, offset),
          ]),
        ]),
      );
    }
    rowGroups.push(tStruct([tList(1, 12, chunks), tI64(2, groupBytes), tI64(3, size)]));
  }
  const el = (fields: ThriftField[]) => tStruct(fields);
  const schema = [
    el([tBin(4, "schema"), tI32(5, nanosColumn ? 5 : 4)]),
    el([tI32(1, INT32), tI32(3, 0), tBin(4, "id")]),
    el([tI32(1, INT96), tI32(3, OPTIONAL), tBin(4, "ts")]),
    el([tI32(3, OPTIONAL), tBin(4, "s"), tI32(5, 1)]),
    el([tI32(1, INT96), tI32(3, OPTIONAL), tBin(4, "t")]),
    el([tI32(3, OPTIONAL), tBin(4, "l"), tI32(5, 1), tI32(6, 3)]), // LIST
    el([tI32(3, REPEATED), tBin(4, "list"), tI32(5, 1)]),
    el([tI32(1, INT96), tI32(3, OPTIONAL), tBin(4, "element")]),
  ];
  if (nanosColumn) {
    // LogicalType.TIMESTAMP{isAdjustedToUTC: false, unit: NANOS}
    const logical = tSub(10, [tSub(8, [tBool(1, false), tSub(2, [tSub(3, [])])])]);
    schema.push(el([tI32(1, INT64), tI32(3, OPTIONAL), tBin(4, "n"), logical]));
  }
  const footer = tStruct([
    tI32(1, 1),
    tList(2, 12, schema),
    tI64(3, rows.length),
    tList(4, 12, rowGroups),
    tBin(6, "silt test INT96 writer"),
  ]);
  const len = new DataView(new ArrayBuffer(4));
  len.setUint32(0, footer.length, true);
  out.push(...footer, ...new Uint8Array(len.buffer), ...new TextEncoder().encode("PAR1"));
  return Uint8Array.from(out);
}

describe("INT96 timestamps beyond the nanosecond range", () => {
  const EDGE = join(GOLDEN, "../delta-rs/table_with_edge_timestamps");

  it("reads delta-rs/table_with_edge_timestamps exactly (9999-12-31 was 1816-03-29)", async () => {
    const files = readdirSync(EDGE)
      .filter((f) => f.endsWith(".parquet"))
      .sort();
    const want = [
      ["9999-12-31T00:00:00.000000Z", "2022-01-01T00:00:00.000000Z", 1],
      ["9999-12-30T00:00:00.000000Z", "2022-02-01T00:00:00.000000Z", 2],
    ];
    for (const [k, f] of files.entries()) {
      const bytes = new Uint8Array(readFileSync(join(EDGE, f)));
      const reads = [
        await readParquet(bytes),
        await readParquet(bytes, { columns: ["SOME_VALUE", "BIG_DATE", "NORMAL_DATE"] }),
        await readParquet(rangeOf(bytes)),
        await readParquet(rangeOf(bytes), { columns: ["NORMAL_DATE", "BIG_DATE", "SOME_VALUE"] }),
      ];
      for (const t of reads) {
        for (const name of ["BIG_DATE", "NORMAL_DATE"]) {
          expect(t.schema.fields.find((x) => x.name === name)!.type).toEqual(UTC_MICROS);
        }
        expect([
          isoMicros(microsColumn(t, "BIG_DATE")[0]),
          isoMicros(microsColumn(t, "NORMAL_DATE")[0]),
          t.getChild("SOME_VALUE")!.get(0),
        ]).toEqual(want[k]);
      }
      // The same instants as the add action's stats and DuckDB.
      const [duckRow] = await duck(
        `select strftime("BIG_DATE", '%Y-%m-%dT%H:%M:%S.%fZ') b from read_parquet(${sqlPath(join(EDGE, f))})`,
      );
      expect(duckRow.b).toBe(want[k][0]);
    }
  });

  // Rows of a file built below: top-level, struct-nested and list-nested INT96, two row groups.
  const D = 86_400_000_000n;
  const at = (iso: string, extraMicros = 0n) => BigInt(Date.parse(iso)) * 1000n + extraMicros;
  const instants: bigint[] = [
    at("0001-01-01T00:00:00Z"),
    -2_440_588n * D, // Julian day 0: 4714-11-24 BC
    at("1677-09-21T00:12:43.145Z", 223n), // a microsecond before the nanosecond range
    -1n,
    0n,
    at("2024-02-29T12:34:56.789Z", 12n),
    at("2262-04-11T23:47:16.854Z", 776n), // a microsecond after it
    at("9999-12-31T23:59:59.999Z", 999n),
    at("9999-12-30T00:00:00Z"),
  ];
  const rows: Int96Row[] = Array.from({ length: 12 }, (_, id) => {
    const v = (k: number) => instants[(id + k) % instants.length];
    return {
      id,
      ts: id % 5 === 4 ? null : v(0),
      s: id % 6 === 5 ? null : { t: id % 4 === 3 ? null : v(3) },
      l: id % 7 === 6 ? null : id % 5 === 2 ? [] : [v(5), id % 3 === 0 ? null : v(1), v(7)],
    };
  });
  const file = int96File(rows, [7, 5]);

  function expectRows(t: arrow.Table, want: Int96Row[], context: string) {
    const ids = t.getChild("id")!.toArray() as Int32Array;
    const got = [...ids].map((id, i) => {
      const row: Partial<Int96Row> = { id };
      if (t.getChild("ts")) row.ts = microsColumn(t, "ts")[i];
      if (t.getChild("s")) row.s = structMicros(t, "s", "t")[i];
      if (t.getChild("l")) row.l = listMicros(t, "l")[i];
      return row;
    });
    const pick = (r: Int96Row) => {
      const row: Partial<Int96Row> = { id: r.id };
      for (const k of ["ts", "s", "l"] as const)
        if (t.getChild(k)) Object.assign(row, { [k]: r[k] });
      return row;
    };
    expect(got, context).toEqual(want.map(pick));
  }

  it("decodes top-level, struct and list INT96 to exact UTC microseconds, nulls kept", async () => {
    // The generated file itself, as DuckDB reads it.
    const path = join(dir, "int96.parquet");
    writeFileSync(path, file);
    const theirs = await duck(
      `select id, epoch_us(ts)::varchar ts, s is null sn, epoch_us(s.t)::varchar st, l is null ln,
         list_transform(l, x -> epoch_us(x)::varchar) l from read_parquet(${sqlPath(path)}) order by id`,
    );
    expect(
      theirs.map((r) => ({
        id: r.id,
        ts: r.ts === null ? null : BigInt(r.ts as string),
        s: r.sn ? null : { t: r.st === null ? null : BigInt(r.st as string) },
        l: r.ln ? null : (r.l as (string | null)[]).map((x) => (x === null ? null : BigInt(x))),
      })),
    ).toEqual(rows);

    const t = await readParquet(file);
    expect(t.schema.fields.map((f) => String(f.type))).toEqual([
      "Int32",
      "Timestamp<MICROSECOND, UTC>",
      "Struct<{t:Timestamp<MICROSECOND, UTC>}>",
      "List<Timestamp<MICROSECOND, UTC>>",
    ]);
    expectRows(t, rows, "whole file");
  });

  it("hints INT96 on every read path: columns, row groups, ranged sources", async () => {
    const firstGroup = rows.slice(0, 7);
    const secondGroup = rows.slice(7);
    const ranged = rangeOf(file);
    expectRows(await readParquet(file, { columns: ["l", "id"] }), rows, "columns");
    expectRows(await readParquet(file, { rowGroups: [1] }), secondGroup, "row group 1");
    expectRows(
      await readParquet(file, { rowGroups: [1, 0], columns: ["id", "s"] }),
      [...secondGroup, ...firstGroup],
      "row groups 1, 0",
    );
    expectRows(await readParquet(ranged), rows, "ranged");
    expectRows(
      await readParquet(ranged, { columns: ["ts", "id"], rowGroups: [0] }),
      firstGroup,
      "ranged columns",
    );
    expectRows(await readParquet(file, { batchSize: 3 }), rows, "small batches");
    expect((await readParquet(ranged, { columns: ["nope"] })).numRows).toBe(rows.length);
  });

  it("leaves INT64 nanosecond timestamps alone, and finds top-level INT96 beside them", async () => {
    // DuckDB writes TIMESTAMP_NS as INT64 TIMESTAMP(NANOS): parquet-rs's Timestamp(NANOSECOND).
    const path = join(dir, "nanos.parquet");
    await duck(
      `copy (select '2262-04-11 23:47:16.854775806'::timestamp_ns n, 1 i) to ${sqlPath(path)} (format parquet)`,
    );
    const nanos = new Uint8Array(readFileSync(path));
    for (const t of [await readParquet(nanos), await readParquet(rangeOf(nanos))]) {
      expect(t.getChild("n")!.type).toMatchObject({ unit: arrow.TimeUnit.NANOSECOND });
      expect(t.getChild("n")!.data[0].values[0]).toBe(9_223_372_036_854_775_806n);
    }
    // With both kinds in one file, the nested INT96 columns cannot be told from the INT64 one.
    const mixed = int96File(rows, [12], { nanosColumn: true });
    for (const t of [await readParquet(mixed), await readParquet(rangeOf(mixed))]) {
      expect(t.getChild("ts")!.type).toEqual(UTC_MICROS);
      expectRows(t.select(["id", "ts"]), rows, "mixed");
      expect(t.getChild("n")!.type).toMatchObject({ unit: arrow.TimeUnit.NANOSECOND });
      expect([...(t.getChild("n")!.data[0].values as BigInt64Array)]).toEqual(
        rows.map((r) => BigInt(r.id) * 1_000_000_007n),
      );
    }
  });
});

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

/** DuckDB prints decimals with their scale; DecimalValue switches to E notation for tiny ones. */
function normalizeDuckDecimals(row: Record<string, unknown>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(row)) {
    if (v === null) {
      out[k] = null;
      continue;
    }
    const s = String(v);
    const [int, frac = ""] = s.replace("-", "").split(".");
    out[k] = new DecimalValue(
      BigInt((s.startsWith("-") ? "-" : "") + int + frac),
      frac.length,
    ).toString();
  }
  return out;
}
