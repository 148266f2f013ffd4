import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import * as arrow from "apache-arrow";
import { parquetMetadata } from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  footerColumnIndex,
  type RangeSource,
  readParquet,
  readParquetFooter,
  writeParquet,
} from "../lib/data/parquet.ts";
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
        expect(c.hasPageIndex).toBe(true);
        expect(c.compression).toBe("ZSTD");
      }
    }
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
    const ours: [number, number | null][] = [];
    for (const f of files) {
      const t = await readParquet(new Uint8Array(readFileSync(f)));
      const time = t.getChild("time")!;
      expect(time.type).toBeInstanceOf(arrow.Timestamp);
      for (let i = 0; i < t.numRows; i++) {
        ours.push([
          t.getChild("id")!.get(i) as number,
          time.isValid(i) ? Number(time.get(i)) : null,
        ]);
      }
    }
    ours.sort((a, b) => a[0] - b[0]);
    const theirs = await duck(
      `select id, epoch_ms(time) t from read_parquet(${sqlPath(join(GOLDEN, "kernel-timestamp-INT96/*/*.parquet"))}) order by id`,
    );
    expect(ours).toEqual(theirs.map((r) => [r.id, r.t === null ? null : Number(r.t)]));
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
