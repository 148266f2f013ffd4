/**
 * Parquet in and out of Arrow JS tables: parquet-wasm (parquet-rs compiled to wasm) does the
 * encoding and decoding, hyparquet parses footers (parquet-wasm hides column statistics from JS).
 *
 * Loading the wasm: the `parquet-wasm/esm` build exports `initSync`, which takes the module bytes.
 * We read them once, on first use, from (in order) `$SILT_PARQUET_WASM`, the installed package
 * (resolved through `createRequire`, so it works unbundled and when node_modules ships alongside
 * a bundle), or a `parquet_wasm_bg.wasm` file next to the running module (what an esbuild bundle
 * for Lambda should do: copy `node_modules/parquet-wasm/esm/parquet_wasm_bg.wasm` next to the
 * bundle). The node build of parquet-wasm is CommonJS and finds its wasm through `__dirname`,
 * which a bundle rewrites, so it is not used.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import * as arrow from "apache-arrow";
import type { FileMetaData, SchemaElement, SchemaTree } from "hyparquet";
import { parquetMetadata, parquetSchema } from "hyparquet";
import { deserializeTCompactProtocol } from "hyparquet/src/thrift.js";
import * as pw from "parquet-wasm/esm";
import { badRequest } from "../errors.ts";
import {
  DecimalValue,
  formatDays,
  formatTimestamp,
  int64FromWords,
  type StatValue,
} from "./stats.ts";

let wasmReady = false;

function wasmBytesPath(): string {
  const fromEnv = process.env.SILT_PARQUET_WASM;
  if (fromEnv) return fromEnv;
  try {
    return createRequire(import.meta.url).resolve("parquet-wasm/esm/parquet_wasm_bg.wasm");
  } catch {
    const sibling = fileURLToPath(new URL("./parquet_wasm_bg.wasm", import.meta.url));
    if (existsSync(sibling)) return sibling;
    throw new Error(
      "parquet-wasm: cannot find parquet_wasm_bg.wasm (install parquet-wasm, set " +
        "SILT_PARQUET_WASM, or ship the file next to the bundle)",
    );
  }
}

/** Instantiates parquet-wasm once; cheap after the first call. */
export function initParquetWasm(): void {
  if (wasmReady) return;
  pw.initSync({ module: readFileSync(wasmBytesPath()) });
  wasmReady = true;
}

// ---------------------------------------------------------------------------------------------
// Writing

export type ParquetCompression = "zstd" | "snappy" | "uncompressed";

export interface WriteParquetOptions {
  /** Rows per row group (default 131072: small enough for row-group pruning to pay off). */
  rowGroupSize?: number;
  compression?: ParquetCompression;
}

const DEFAULT_ROW_GROUP_SIZE = 131_072;

/**
 * Encodes a table as one Parquet file (zstd, column-chunk statistics per row group). Field
 * metadata `PARQUET:field_id` becomes the Parquet field_id, which column mapping relies on.
 * Timestamps are written as INT64 microseconds (isAdjustedToUTC when the Arrow type has a time
 * zone), dates as INT32 DATE, decimals as DECIMAL on INT32/INT64/FIXED_LEN_BYTE_ARRAY by
 * precision, as parquet-rs chooses.
 */
export function writeParquet(table: arrow.Table, opts: WriteParquetOptions = {}): Uint8Array {
  initParquetWasm();
  const prepared = normalizeForParquet(table);
  let builder = new pw.WriterPropertiesBuilder()
    .setCompression(compressionCode(opts.compression ?? "zstd"))
    // Row-group statistics, which Silt and other engines prune by, but no page index: with
    // 128k-row row groups it buys little skipping, and building it took ~15% of the encode
    // time of a 1M-row append (measured, bench/README.md).
    .setStatisticsEnabled(pw.EnabledStatistics.Chunk)
    .setMaxRowGroupSize(Math.max(1, opts.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE));
  // parquet-rs dictionary-encodes every column by default; on nearly unique columns the
  // dictionary is pure overhead (measured: 40% slower writes and larger files). Nearly unique
  // integers and timestamps (ids, event times) get DELTA_BINARY_PACKED instead of PLAIN: on a
  // 1M-row append it cut the encode by ~12% and the file by ~10% (zstd has less left to do).
  // Every current reader decodes it (Spark's vectorized reader since 3.3, parquet-rs, DuckDB).
  // parquet-wasm only takes single-part column paths, so only top-level leaves can be tuned.
  for (const name of highCardinalityColumns(prepared)) {
    builder = builder.setColumnDictionaryEnabled(name, false);
    const type = prepared.schema.fields.find((f) => f.name === name)?.type;
    if (type !== undefined && (arrow.DataType.isInt(type) || arrow.DataType.isTimestamp(type))) {
      builder = builder.setColumnEncoding(name, pw.Encoding.DELTA_BINARY_PACKED);
    }
  }
  const props = builder.build();
  // writeParquet takes ownership of (and frees) both the wasm table and the properties.
  return pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(prepared, "stream")), props);
}

function compressionCode(c: ParquetCompression): pw.Compression {
  switch (c) {
    case "zstd":
      return pw.Compression.ZSTD;
    case "snappy":
      return pw.Compression.SNAPPY;
    case "uncompressed":
      return pw.Compression.UNCOMPRESSED;
    default:
      throw badRequest("INVALID_PARQUET_OPTION", `Unknown Parquet compression: ${String(c)}`);
  }
}

const SAMPLE_SIZE = 4096;

/**
 * Names of top-level primitive columns whose values look mostly distinct. Decided on an evenly
 * spaced sample of the first batch: if more than a quarter of the sampled values are distinct,
 * a dictionary would be large relative to the data and parquet-rs would soon fall back anyway.
 */
export function highCardinalityColumns(table: arrow.Table): string[] {
  const out: string[] = [];
  const batch = table.batches[0];
  if (!batch || batch.numRows === 0) return out;
  table.schema.fields.forEach((field, i) => {
    const data = batch.data.children[i];
    if (!data) return;
    const distinctRatio = sampledDistinctRatio(data);
    if (distinctRatio !== undefined && distinctRatio > 0.25) out.push(field.name);
  });
  return out;
}

function sampledDistinctRatio(data: arrow.Data): number | undefined {
  const t = data.type;
  const n = data.length;
  const sample = Math.min(n, SAMPLE_SIZE);
  const step = n / sample;
  const seen = new Set<number | string>();
  let taken = 0;
  const { nullBitmap, offset } = data;
  const hasNulls = data.nullCount > 0 && nullBitmap && nullBitmap.length > 0;
  let keyOf: ((row: number) => number | string) | undefined;
  if (
    arrow.DataType.isInt(t) ||
    arrow.DataType.isFloat(t) ||
    arrow.DataType.isDate(t) ||
    arrow.DataType.isTimestamp(t) ||
    arrow.DataType.isTime(t) ||
    arrow.DataType.isDecimal(t) ||
    arrow.DataType.isFixedSizeBinary(t)
  ) {
    const v = data.values as ArrayBufferView & { BYTES_PER_ELEMENT: number };
    // Buffers may be padded past the last row, so the width comes from the type.
    const width = v.BYTES_PER_ELEMENT * data.stride;
    const bytes = new Uint8Array(v.buffer, v.byteOffset, n * width);
    if (width === 8 && v.byteOffset % 8 === 0) {
      const f = new Float64Array(v.buffer, v.byteOffset, n);
      keyOf = (row) => f[row];
    } else if (width === 4 && v.byteOffset % 4 === 0) {
      const w = new Int32Array(v.buffer, v.byteOffset, n);
      keyOf = (row) => w[row];
    } else {
      const decoder = new TextDecoder("latin1");
      keyOf = (row) => decoder.decode(bytes.subarray(row * width, (row + 1) * width));
    }
  } else if (arrow.DataType.isUtf8(t) || arrow.DataType.isBinary(t)) {
    const offsets = data.valueOffsets as Int32Array;
    const values = data.values as Uint8Array;
    const decoder = new TextDecoder("latin1");
    keyOf = (row) => decoder.decode(values.subarray(offsets[row], offsets[row + 1]));
  }
  if (!keyOf) return undefined;
  for (let k = 0; k < sample; k++) {
    const row = Math.floor(k * step);
    if (hasNulls) {
      const bit = offset + row;
      if ((nullBitmap[bit >> 3] & (1 << (bit & 7))) === 0) continue;
    }
    seen.add(keyOf(row));
    taken++;
  }
  if (taken < 64) return undefined;
  return seen.size / taken;
}

/**
 * Rewrites columns into the types Delta readers expect in Parquet: every timestamp unit becomes
 * microseconds (Spark cannot read TIMESTAMP(NANOS); MILLIS loses Delta's precision contract)
 * and millisecond dates become day dates. Recurses into nested types; returns the input table
 * untouched when nothing needs converting.
 */
export function normalizeForParquet(table: arrow.Table): arrow.Table {
  if (!table.schema.fields.some((f) => needsNormalizing(f.type))) return table;
  const fields = table.schema.fields.map((f) => normalizeField(f));
  const schema = new arrow.Schema(fields, table.schema.metadata);
  const batches = table.batches.map((batch) => {
    const children = batch.data.children.map((child, i) =>
      normalizeData(child, table.schema.fields[i].type),
    );
    const structType = new arrow.Struct(fields);
    return new arrow.RecordBatch(
      schema,
      arrow.makeData({ type: structType, length: batch.numRows, children, nullCount: 0 }),
    );
  });
  return new arrow.Table(schema, batches);
}

function needsNormalizing(t: arrow.DataType): boolean {
  if (arrow.DataType.isTimestamp(t)) return t.unit !== arrow.TimeUnit.MICROSECOND;
  if (arrow.DataType.isDate(t)) return t.unit === arrow.DateUnit.MILLISECOND;
  return (t.children ?? []).some((c) => needsNormalizing(c.type));
}

function normalizeField(f: arrow.Field): arrow.Field {
  return needsNormalizing(f.type)
    ? new arrow.Field(f.name, normalizeType(f.type), f.nullable, f.metadata)
    : f;
}

function normalizeType(t: arrow.DataType): arrow.DataType {
  if (arrow.DataType.isTimestamp(t))
    return new arrow.Timestamp(arrow.TimeUnit.MICROSECOND, t.timezone);
  if (arrow.DataType.isDate(t)) return new arrow.DateDay();
  if (arrow.DataType.isStruct(t)) return new arrow.Struct(t.children.map(normalizeField));
  if (arrow.DataType.isList(t)) return new arrow.List(normalizeField(t.children[0]));
  if (arrow.DataType.isLargeList(t)) return new arrow.LargeList(normalizeField(t.children[0]));
  if (arrow.DataType.isFixedSizeList(t))
    return new arrow.FixedSizeList(t.listSize, normalizeField(t.children[0]));
  if (arrow.DataType.isMap(t))
    return new arrow.Map_(normalizeField(t.children[0]) as arrow.Field<arrow.Struct>, t.keysSorted);
  throw badRequest(
    "DELTA_UNSUPPORTED_DATA_TYPE",
    `Cannot write nested type ${String(t)} containing timestamps to Parquet`,
  );
}

const MICROS_PER: Record<number, bigint> = {
  [arrow.TimeUnit.SECOND]: 1_000_000n,
  [arrow.TimeUnit.MILLISECOND]: 1_000n,
};

function normalizeData(data: arrow.Data, type: arrow.DataType): arrow.Data {
  if (!needsNormalizing(type)) return data;
  const newType = normalizeType(type);
  if (arrow.DataType.isTimestamp(type)) {
    const src = data.values as BigInt64Array;
    const out = new BigInt64Array(data.length);
    if (type.unit === arrow.TimeUnit.NANOSECOND) {
      for (let i = 0; i < data.length; i++) {
        const v = src[i];
        // Floor, not truncate toward zero, so pre-1970 instants keep their order.
        const q = v / 1000n;
        out[i] = v < 0n && q * 1000n !== v ? q - 1n : q;
      }
    } else {
      const m = MICROS_PER[type.unit];
      for (let i = 0; i < data.length; i++) out[i] = src[i] * m;
    }
    return arrow.makeData({
      type: newType as arrow.Timestamp,
      length: data.length,
      nullCount: data.nullCount,
      nullBitmap: data.nullBitmap,
      offset: data.offset,
      data: out,
    } as never);
  }
  if (arrow.DataType.isDate(type)) {
    const src = data.values as unknown as BigInt64Array | Int32Array;
    const out = new Int32Array(data.length);
    if (src instanceof BigInt64Array) {
      for (let i = 0; i < data.length; i++) {
        const ms = Number(src[i]);
        out[i] = Math.floor(ms / 86_400_000);
      }
    } else {
      // Older Arrow JS layouts keep Date64 as pairs of 32-bit words.
      for (let i = 0; i < data.length; i++) {
        const ms = int64FromWords(src[2 * i], src[2 * i + 1]);
        out[i] = Math.floor(Number(ms) / 86_400_000);
      }
    }
    return arrow.makeData({
      type: newType as arrow.DateDay,
      length: data.length,
      nullCount: data.nullCount,
      nullBitmap: data.nullBitmap,
      offset: data.offset,
      data: out,
    } as never);
  }
  const childTypes = type.children.map((c) => c.type);
  const children = data.children.map((c, i) => normalizeData(c, childTypes[i]));
  return new arrow.Data(
    newType,
    data.offset,
    data.length,
    data.nullCount,
    data.buffers as never,
    children,
    data.dictionary,
  );
}

// ---------------------------------------------------------------------------------------------
// Reading

/** Random access to a file's bytes, e.g. S3 ranged GETs. `end` is exclusive. */
export interface RangeSource {
  size: number;
  read(start: number, end: number): Promise<Uint8Array>;
}

export interface ReadParquetOptions {
  /**
   * Top-level columns to read, in the order wanted. Names absent from the file are left out of
   * the result (a reader in column-mapping mode fills them with nulls). Default: all columns.
   */
  columns?: string[];
  /** Row groups to read, by index; invalid indexes are rejected before decoding. */
  rowGroups?: number[];
  /** Rows per record batch of the result (default 131072, one batch per default row group). */
  batchSize?: number;
}

const DEFAULT_BATCH_SIZE = 131_072;

/**
 * Decodes a Parquet file into an Arrow JS table. Whole-file reads of in-memory bytes use
 * parquet-wasm's synchronous reader, which ignores column lists; column subsets and ranged
 * sources go through its async ParquetFile, which honours them and fetches only what it needs.
 * INT96 columns come back as Timestamp(MICROSECOND, "UTC"), exact far past parquet-rs's
 * nanosecond range (see withInt96Hint).
 */
export async function readParquet(
  source: Uint8Array | RangeSource,
  opts: ReadParquetOptions = {},
): Promise<arrow.Table> {
  initParquetWasm();
  const batchSize = Math.max(1, opts.batchSize ?? DEFAULT_BATCH_SIZE);
  const rowGroups = opts.rowGroups;
  let input = source;
  if (input instanceof Uint8Array) {
    // In memory the footer is free to look at, so INT96 is found before decoding anything.
    const footer = footerBytes(input);
    const int96 = int96Columns(footer.subarray(0, footer.byteLength - 8));
    if (int96) input = (await withInt96Hint(input, footer, int96)) ?? input;
  }
  if (input instanceof Uint8Array && opts.columns === undefined) {
    if (rowGroups) validateRowGroups(rowGroups, countRowGroups(input));
    const options: pw.ReaderOptions = { batchSize };
    if (rowGroups) options.rowGroups = rowGroups;
    return wasmToArrow(pw.readParquet(input, options));
  }

  let file = await pw.ParquetFile.fromFile(blobOf(input) as unknown as Blob);
  try {
    let schema: arrow.Schema | undefined;
    if (!(input instanceof Uint8Array)) {
      // A ranged source's footer costs a read: fetch it only when parquet-rs's schema has a
      // nanosecond timestamp, which every INT96 column is before the hint.
      schema = arrowSchemaOf(file);
      if (countNanoTimestamps(schema.fields) > 0) {
        const footer = await readFooterBytes(input);
        const int96 = int96Columns(footer.subarray(0, footer.byteLength - 8));
        const hinted = int96 && (await withInt96Hint(input, footer, int96, schema));
        if (hinted) {
          const next = await pw.ParquetFile.fromFile(blobOf(hinted) as unknown as Blob);
          file.free();
          file = next;
          schema = undefined;
        }
      }
    }
    const meta = file.metadata();
    const numRowGroups = meta.numRowGroups();
    meta.free();
    if (rowGroups) validateRowGroups(rowGroups, numRowGroups);
    let wanted: string[] | undefined;
    if (opts.columns) {
      const present = new Set((schema ?? arrowSchemaOf(file)).fields.map((f) => f.name));
      wanted = opts.columns.filter((c) => present.has(c));
    }
    if (wanted && wanted.length === 0) {
      return emptyColumnsTable(await countRows(source, rowGroups));
    }
    const options: pw.ReaderOptions = { batchSize };
    if (rowGroups) options.rowGroups = rowGroups;
    if (wanted) options.columns = wanted;
    const table = wasmToArrow(await file.read(options));
    return wanted ? reorderColumns(table, wanted) : table;
  } finally {
    file.free();
  }
}

function wasmToArrow(t: pw.Table): arrow.Table {
  return arrow.tableFromIPC(t.intoIPCStream());
}

function arrowSchemaOf(file: pw.ParquetFile): arrow.Schema {
  return arrow.tableFromIPC(file.schema().intoIPCStream()).schema;
}

function reorderColumns(table: arrow.Table, names: string[]): arrow.Table {
  const current = table.schema.fields.map((f) => f.name);
  if (current.length === names.length && current.every((n, i) => n === names[i])) return table;
  return table.select(names);
}

/** A table with no columns but a row count, for reads that want none of the file's columns. */
function emptyColumnsTable(numRows: number): arrow.Table {
  const schema = new arrow.Schema([]);
  const data = arrow.makeData({ type: new arrow.Struct([]), length: numRows, children: [] });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
}

async function countRows(source: Uint8Array | RangeSource, rowGroups?: number[]) {
  const footer = await readParquetFooter(source);
  if (!rowGroups) return footer.numRows;
  return rowGroups.reduce((sum, i) => sum + footer.rowGroups[i].numRows, 0);
}

function validateRowGroups(rowGroups: number[], count: number): void {
  for (const i of rowGroups) {
    if (!Number.isInteger(i) || i < 0 || i >= count) {
      throw badRequest(
        "INVALID_PARQUET_ROW_GROUP",
        `Row group index ${i} is out of range: the file has ${count} row group(s)`,
      );
    }
  }
}

/** Row-group count from the footer of in-memory bytes (parquet-wasm panics on a bad index). */
function countRowGroups(bytes: Uint8Array): number {
  return parquetMetadata(footerBytes(bytes)).row_groups.length;
}

function footerBytes(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength < 12) throw corrupt("file is too short");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = view.getUint32(bytes.byteLength - 8, true);
  if (len + 8 > bytes.byteLength) throw corrupt("footer length exceeds the file size");
  return bytes.subarray(bytes.byteLength - len - 8);
}

function corrupt(why: string): Error {
  return badRequest("DELTA_PARQUET_CORRUPT", `Invalid Parquet file: ${why}`);
}

/** The duck-typed Blob that parquet-wasm's ParquetFile.fromFile accepts. */
interface BlobLike {
  size: number;
  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

function blobOf(source: Uint8Array | RangeSource): BlobLike {
  if (source instanceof Uint8Array) {
    return {
      size: source.byteLength,
      slice: (start, end) => ({
        arrayBuffer: async () => exactBuffer(source.subarray(start, end)),
      }),
    };
  }
  return {
    size: source.size,
    slice: (start, end) => ({
      arrayBuffer: async () => exactBuffer(await source.read(start, Math.min(end, source.size))),
    }),
  };
}

function exactBuffer(u8: Uint8Array): ArrayBuffer {
  if (
    u8.byteOffset === 0 &&
    u8.byteLength === u8.buffer.byteLength &&
    u8.buffer instanceof ArrayBuffer
  )
    return u8.buffer;
  return u8.slice().buffer as ArrayBuffer;
}

// ---------------------------------------------------------------------------------------------
// INT96 timestamps
//
// parquet-rs turns INT96 (Spark's and Hive's legacy timestamp: nanos of day and a Julian day)
// into Timestamp(NANOSECOND), whose int64 wraps outside 1677..2262, so Spark's 9999-12-31
// sentinel came back as 1816. When the file's ARROW:schema asks for microseconds it decodes
// INT96 straight to them, exact for every instant an int64 of microseconds holds (Julian days
// farther than about 292,000 years from 1970 still wrap). Files that hold INT96 are therefore
// read through a copy of their footer whose ARROW:schema is parquet-rs's own schema of the file
// with those columns as Timestamp(MICROSECOND, "UTC"): parquet-rs keeps every codec, encoding
// and nesting, and the data pages are never touched. The footer is only rewritten for
// parquet-wasm's eyes: nothing else reads the key-value metadata it drops.

const INT96_HINT_TYPE = new arrow.Timestamp(arrow.TimeUnit.MICROSECOND, "UTC");

/** Thrift compact protocol type codes (the field header's low nibble). */
const T_BOOL_TRUE = 1;
const T_BOOL_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

/** Physical type code of INT96 in SchemaElement.type. */
const PARQUET_INT96 = 3;

class CompactCursor {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  private advance(n: number): void {
    if (this.pos + n > this.bytes.length) throw corrupt("footer ends inside a value");
    this.pos += n;
  }

  byte(): number {
    if (this.pos >= this.bytes.length) throw corrupt("footer ends inside a value");
    return this.bytes[this.pos++];
  }

  /** Unsigned varint; exact up to 2^53, which every length, count and id here is. */
  varint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      v += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return v;
      scale *= 128;
      if (scale > 2 ** 70) throw corrupt("varint too long");
    }
  }

  /** A binary value's [start, end) in the footer. */
  binaryRange(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    this.advance(length);
    return [start, this.pos];
  }

  zigzag(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  /** Next field header of a struct as [id, type], or undefined at its stop byte. */
  field(previousId: number): [number, number] | undefined {
    const h = this.byte();
    if (h === 0) return undefined;
    const delta = h >> 4;
    return [delta === 0 ? this.zigzag() : previousId + delta, h & 0x0f];
  }

  listHeader(): [number, number] {
    const h = this.byte();
    const size = h >> 4;
    return [size === 15 ? this.varint() : size, h & 0x0f];
  }

  /** Skips a value; `element` when it sits in a list, set or map rather than a struct field. */
  skip(type: number, element = false, depth = 0): void {
    if (depth > 64) throw corrupt("footer nests too deeply");
    switch (type) {
      case T_BOOL_TRUE:
      case T_BOOL_FALSE:
        // A boolean struct field is all header; a boolean element takes a byte.
        if (element) this.advance(1);
        return;
      case T_BYTE:
        this.advance(1);
        return;
      case T_I16:
      case T_I32:
      case T_I64:
        this.varint();
        return;
      case T_DOUBLE:
        this.advance(8);
        return;
      case T_BINARY:
        this.advance(this.varint());
        return;
      case T_LIST:
      case T_SET: {
        const [n, elem] = this.listHeader();
        for (let i = 0; i < n; i++) this.skip(elem, true, depth + 1);
        return;
      }
      case T_MAP: {
        const n = this.varint();
        if (n === 0) return;
        const kv = this.byte();
        for (let i = 0; i < n; i++) {
          this.skip(kv >> 4, true, depth + 1);
          this.skip(kv & 0x0f, true, depth + 1);
        }
        return;
      }
      case T_STRUCT: {
        let id = 0;
        for (let f = this.field(id); f; f = this.field(id)) {
          id = f[0];
          this.skip(f[1], false, depth + 1);
        }
        return;
      }
      default:
        throw corrupt(`unknown thrift type ${type}`);
    }
  }
}

/** INT96 columns of a file: how many, and the names of the top-level ones. */
interface Int96Columns {
  count: number;
  topLevel: Set<string>;
}

/**
 * The INT96 columns of the schema (FileMetaData field 2), or undefined when there are none.
 * Walks only the schema, which precedes the row groups, so it costs microseconds even on
 * footers of many row groups: every in-memory read pays it.
 */
function int96Columns(footerThrift: Uint8Array): Int96Columns | undefined {
  const c = new CompactCursor(footerThrift);
  let id = 0;
  for (let f = c.field(id); f; f = c.field(id)) {
    id = f[0];
    if (id !== 2 || f[1] !== T_LIST) {
      c.skip(f[1]);
      continue;
    }
    const found: Int96Columns = { count: 0, topLevel: new Set() };
    // Elements come depth first; `open` counts the children still to come at each depth.
    const open: number[] = [];
    const [n] = c.listHeader();
    for (let i = 0; i < n; i++) {
      let type: number | undefined;
      let name: [number, number] = [0, 0];
      let children = 0;
      let eid = 0;
      for (let g = c.field(eid); g; g = c.field(eid)) {
        eid = g[0];
        if (eid === 1 && g[1] === T_I32) type = c.zigzag();
        else if (eid === 4 && g[1] === T_BINARY) name = c.binaryRange();
        else if (eid === 5 && g[1] === T_I32) children = c.zigzag();
        else c.skip(g[1]);
      }
      const depth = open.length;
      if (depth > 0) open[depth - 1]--;
      if (type === PARQUET_INT96) {
        found.count++;
        if (depth === 1) found.topLevel.add(utf8.decode(footerThrift.subarray(...name)));
      }
      if (children > 0) open.push(children);
      while (open.length > 0 && open[open.length - 1] === 0) open.pop();
    }
    return found.count > 0 ? found : undefined;
  }
  return undefined;
}

interface FooterField {
  id: number;
  type: number;
  /** The value's bytes, after the field header. */
  start: number;
  end: number;
}

function footerFields(footerThrift: Uint8Array): FooterField[] {
  const c = new CompactCursor(footerThrift);
  const fields: FooterField[] = [];
  let id = 0;
  for (let f = c.field(id); f; f = c.field(id)) {
    id = f[0];
    const start = c.pos;
    c.skip(f[1]);
    fields.push({ id, type: f[1], start, end: c.pos });
  }
  return fields;
}

/** The footer thrift with its key-value metadata (field 5) replaced by ARROW:schema alone. */
function footerWithArrowSchema(
  footerThrift: Uint8Array,
  fields: FooterField[],
  arrowSchemaB64: string,
): Uint8Array {
  const kv = compactKeyValueList("ARROW:schema", arrowSchemaB64);
  const kept = fields.filter((f) => f.id !== 5);
  kept.push({ id: 5, type: T_LIST, start: -1, end: -1 });
  kept.sort((a, b) => a.id - b.id);
  const chunks: Uint8Array[] = [];
  let previous = 0;
  for (const f of kept) {
    const delta = f.id - previous;
    chunks.push(
      delta > 0 && delta <= 15
        ? Uint8Array.of((delta << 4) | f.type)
        : Uint8Array.of(f.type, ...varintBytes(zigzag32(f.id))),
    );
    chunks.push(f.start < 0 ? kv : footerThrift.subarray(f.start, f.end));
    previous = f.id;
  }
  chunks.push(Uint8Array.of(0));
  return concatBytes(chunks);
}

function compactKeyValueList(key: string, value: string): Uint8Array {
  const k = new TextEncoder().encode(key);
  const v = new TextEncoder().encode(value);
  return concatBytes([
    // list of one struct; KeyValue{1: key, 2: value} as binaries
    Uint8Array.of((1 << 4) | T_STRUCT, (1 << 4) | T_BINARY, ...varintBytes(k.length)),
    k,
    Uint8Array.of((1 << 4) | T_BINARY, ...varintBytes(v.length)),
    v,
    Uint8Array.of(0),
  ]);
}

function zigzag32(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}

function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** The bytes parquet-rs expects in ARROW:schema: one IPC Schema message, base64. */
function arrowSchemaMetadata(schema: arrow.Schema): string {
  const ipc = arrow.tableToIPC(new arrow.Table(schema), "stream");
  // continuation marker, then the message length
  const length = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength).getInt32(4, true);
  return Buffer.from(ipc.subarray(0, 8 + length)).toString("base64");
}

/**
 * parquet-rs's schema of the file with its INT96 columns as microseconds, or undefined when
 * none can be told apart. An INT96 leaf is a Timestamp(NANOSECOND) in that schema, but so is an
 * INT64 TIMESTAMP(NANOS) one: when the counts match every nanosecond timestamp is INT96 (what
 * Spark, Hive and Impala write); otherwise only top-level INT96 columns are found, by name.
 */
function int96HintSchema(schema: arrow.Schema, int96: Int96Columns): arrow.Schema | undefined {
  const all = countNanoTimestamps(schema.fields) === int96.count;
  let changed = false;
  const fields = schema.fields.map((f) => {
    const g = all
      ? hintField(f)
      : isNanoTimestamp(f.type) && int96.topLevel.has(f.name)
        ? withType(f, INT96_HINT_TYPE)
        : f;
    if (g !== f) changed = true;
    return g;
  });
  return changed ? new arrow.Schema(fields, schema.metadata) : undefined;
}

function isNanoTimestamp(t: arrow.DataType): boolean {
  return arrow.DataType.isTimestamp(t) && t.unit === arrow.TimeUnit.NANOSECOND;
}

/** Children of the nested types hintField rebuilds; other types are leaves to it. */
function nestedChildren(t: arrow.DataType): arrow.Field[] {
  return arrow.DataType.isStruct(t) ||
    arrow.DataType.isList(t) ||
    arrow.DataType.isLargeList(t) ||
    arrow.DataType.isFixedSizeList(t) ||
    arrow.DataType.isMap(t)
    ? t.children
    : [];
}

function countNanoTimestamps(fields: arrow.Field[]): number {
  return fields.reduce(
    (n, f) => n + (isNanoTimestamp(f.type) ? 1 : countNanoTimestamps(nestedChildren(f.type))),
    0,
  );
}

function withType(f: arrow.Field, type: arrow.DataType): arrow.Field {
  return new arrow.Field(f.name, type, f.nullable, f.metadata);
}

function hintField(f: arrow.Field): arrow.Field {
  const t = f.type;
  if (isNanoTimestamp(t)) return withType(f, INT96_HINT_TYPE);
  const children = nestedChildren(t);
  const hinted = children.map(hintField);
  if (hinted.every((c, i) => c === children[i])) return f;
  if (arrow.DataType.isStruct(t)) return withType(f, new arrow.Struct(hinted));
  if (arrow.DataType.isList(t)) return withType(f, new arrow.List(hinted[0]));
  if (arrow.DataType.isLargeList(t)) return withType(f, new arrow.LargeList(hinted[0]));
  if (arrow.DataType.isFixedSizeList(t))
    return withType(f, new arrow.FixedSizeList(t.listSize, hinted[0]));
  return withType(
    f,
    new arrow.Map_(hinted[0] as arrow.Field<arrow.Struct>, (t as arrow.Map_).keysSorted),
  );
}

/**
 * ARROW:schema hints by the footer bytes they were made from (the parquet schema and the
 * key-value metadata, whose own ARROW:schema shapes parquet-rs's schema): the files of a table
 * share them, and making one costs as much as decoding a small file. null: nothing to hint.
 */
const int96Hints = new Map<string, string | null>();
const INT96_HINTS_KEPT = 16;

/**
 * The file with a footer that hints its INT96 columns to microseconds, or undefined when none
 * can be hinted. `footer` is the thrift footer with its 8-byte trailer; `schema` is parquet-rs's
 * schema of the file, taken from parquet-wasm when needed and not given.
 */
async function withInt96Hint<S extends Uint8Array | RangeSource>(
  source: S,
  footer: Uint8Array,
  int96: Int96Columns,
  schema?: arrow.Schema,
): Promise<S | undefined> {
  const thrift = footer.subarray(0, footer.byteLength - 8);
  const fields = footerFields(thrift);
  const key = fields
    .filter((f) => f.id === 2 || f.id === 5)
    .map((f) => `${f.id}:${f.end - f.start}:${latin1.decode(thrift.subarray(f.start, f.end))}`)
    .join("");
  let hint = int96Hints.get(key);
  if (hint === undefined) {
    schema ??= await parquetRsSchema(source);
    const hinted = int96HintSchema(schema, int96);
    hint = hinted ? arrowSchemaMetadata(hinted) : null;
    if (int96Hints.size >= INT96_HINTS_KEPT) {
      int96Hints.delete(int96Hints.keys().next().value as string);
    }
    int96Hints.set(key, hint);
  }
  if (hint === null) return undefined;
  const patched = footerWithArrowSchema(thrift, fields, hint);
  const tail = new Uint8Array(patched.byteLength + 8);
  tail.set(patched);
  new DataView(tail.buffer).setUint32(patched.byteLength, patched.byteLength, true);
  tail.set(PARQUET_MAGIC, patched.byteLength + 4);
  if (source instanceof Uint8Array) {
    const cut = source.byteLength - footer.byteLength;
    return concatBytes([source.subarray(0, cut), tail]) as S;
  }
  const range = source as RangeSource;
  const cut = range.size - footer.byteLength;
  const hintedSource: RangeSource = {
    size: cut + tail.byteLength,
    async read(start, end) {
      if (start >= cut) return tail.subarray(start - cut, end - cut);
      const head = await range.read(start, Math.min(end, cut));
      return end <= cut ? head : concatBytes([head, tail.subarray(0, end - cut)]);
    },
  };
  return hintedSource as S;
}

async function parquetRsSchema(source: Uint8Array | RangeSource): Promise<arrow.Schema> {
  const file = await pw.ParquetFile.fromFile(blobOf(source) as unknown as Blob);
  try {
    return arrowSchemaOf(file);
  } finally {
    file.free();
  }
}

const latin1 = new TextDecoder("latin1");
const PARQUET_MAGIC = new TextEncoder().encode("PAR1");

// ---------------------------------------------------------------------------------------------
// Footer

export interface ParquetSchemaNode {
  name: string;
  fieldId?: number;
  repetition?: "REQUIRED" | "OPTIONAL" | "REPEATED";
  /** Leaves only. */
  physicalType?: SchemaElement["type"];
  typeLength?: number;
  convertedType?: SchemaElement["converted_type"];
  logicalType?: SchemaElement["logical_type"];
  precision?: number;
  scale?: number;
  children: ParquetSchemaNode[];
}

export interface ParquetLeafColumn {
  /** Names from the root's child down to the leaf, as Parquet spells the path. */
  path: string[];
  /** field_id of every node on the path (undefined where the file has none). */
  fieldIds: (number | undefined)[];
  physicalType: NonNullable<SchemaElement["type"]>;
  convertedType?: SchemaElement["converted_type"];
  logicalType?: SchemaElement["logical_type"];
  precision?: number;
  scale?: number;
  /** True when the leaf sits under a repeated (list or map) node. */
  repeated: boolean;
}

/**
 * Column-chunk statistics with values in the same representation as Delta file statistics
 * (see stats.ts `StatValue`): dates "YYYY-MM-DD", timestamps ISO strings floored to ms,
 * decimals DecimalValue, int64 number or bigint beyond 2^53, strings decoded, other binary
 * Uint8Array. A bound is absent when the file has none that is trustworthy for the type.
 */
export interface ParquetColumnStats {
  min?: StatValue;
  max?: StatValue;
  nullCount?: number;
  distinctCount?: number;
  minExact?: boolean;
  maxExact?: boolean;
}

export interface ParquetColumnChunk {
  path: string[];
  physicalType: NonNullable<SchemaElement["type"]>;
  compression: string;
  encodings: string[];
  numValues: number;
  compressedSize: number;
  uncompressedSize: number;
  dataPageOffset: number;
  dictionaryPageOffset?: number;
  hasPageIndex: boolean;
  stats?: ParquetColumnStats;
}

export interface ParquetRowGroup {
  numRows: number;
  totalByteSize: number;
  compressedSize: number;
  /** One per leaf column, in `ParquetFooter.leaves` order. */
  columns: ParquetColumnChunk[];
}

export interface ParquetFooter {
  numRows: number;
  createdBy?: string;
  keyValueMetadata: Record<string, string>;
  /** Top-level fields (the root's children). */
  schema: ParquetSchemaNode[];
  leaves: ParquetLeafColumn[];
  rowGroups: ParquetRowGroup[];
  /** Size of the thrift footer in bytes. */
  metadataLength: number;
}

const FOOTER_PREFETCH = 64 * 1024;

/** Parses the footer: one ranged read for most files, two when the footer is larger than 64 KB. */
export async function readParquetFooter(source: Uint8Array | RangeSource): Promise<ParquetFooter> {
  return parseFooter(await readFooterBytes(source));
}

/** The thrift footer followed by its 8-byte trailer (length and magic). */
async function readFooterBytes(source: Uint8Array | RangeSource): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return footerBytes(source);
  if (source.size < 12) throw corrupt("file is too short");
  const tailStart = Math.max(0, source.size - FOOTER_PREFETCH);
  let tail = await source.read(tailStart, source.size);
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const len = view.getUint32(tail.byteLength - 8, true);
  if (len + 8 > source.size) throw corrupt("footer length exceeds the file size");
  if (len + 8 > tail.byteLength) {
    const head = await source.read(source.size - len - 8, tailStart);
    const joined = new Uint8Array(len + 8);
    joined.set(head, 0);
    joined.set(tail, head.byteLength);
    tail = joined;
  }
  return tail.subarray(tail.byteLength - len - 8);
}

/** Keeps raw values so this module decides the representation (hyparquet's is lossy). */
const RAW_PARSERS = {
  timestampFromMilliseconds: (v: bigint) => v,
  timestampFromMicroseconds: (v: bigint) => v,
  timestampFromNanoseconds: (v: bigint) => v,
  dateFromDays: (v: number) => v,
  stringFromBytes: (v: Uint8Array) => v,
  jsonFromBytes: (v: Uint8Array) => v,
  uuidFromBytes: (v: Uint8Array) => v,
  geometryFromBytes: (v: Uint8Array) => v,
  geographyFromBytes: (v: Uint8Array) => v,
};

function parseFooter(footer: Uint8Array): ParquetFooter {
  let meta: FileMetaData;
  try {
    meta = parquetMetadata(footer, { parsers: RAW_PARSERS, geoparquet: false });
  } catch (e) {
    throw corrupt((e as Error).message);
  }
  const tree = parquetSchema(meta);
  const schema = tree.children.map(toSchemaNode);
  const leaves: ParquetLeafColumn[] = [];
  collectLeaves(tree.children, [], [], false, leaves);

  // hyparquet turns INT64 and binary decimals into doubles; re-read those raw bounds exactly.
  const decimalLeaves = leaves
    .map((leaf, i) => (isDecimal(leaf) && leaf.physicalType !== "INT32" ? i : -1))
    .filter((i) => i >= 0);
  const rawStats = decimalLeaves.length > 0 ? rawColumnStats(footer) : undefined;

  const rowGroups = meta.row_groups.map((rg, rgIndex): ParquetRowGroup => {
    const columns = rg.columns.map((chunk, ci): ParquetColumnChunk => {
      const md = chunk.meta_data;
      const leaf = leaves[ci];
      if (!md || !leaf) throw corrupt("column chunk without metadata");
      const out: ParquetColumnChunk = {
        path: md.path_in_schema,
        physicalType: md.type,
        compression: md.codec,
        encodings: md.encodings ?? [],
        numValues: Number(md.num_values),
        compressedSize: Number(md.total_compressed_size),
        uncompressedSize: Number(md.total_uncompressed_size),
        dataPageOffset: Number(md.data_page_offset),
        hasPageIndex: chunk.column_index_offset !== undefined,
      };
      if (md.dictionary_page_offset !== undefined)
        out.dictionaryPageOffset = Number(md.dictionary_page_offset);
      const raw = rawStats?.[rgIndex]?.[ci];
      const stats = md.statistics && convertChunkStats(md.statistics, leaf, raw);
      if (stats) out.stats = stats;
      return out;
    });
    const compressed =
      rg.total_compressed_size !== undefined
        ? Number(rg.total_compressed_size)
        : columns.reduce((s, c) => s + c.compressedSize, 0);
    return {
      numRows: Number(rg.num_rows),
      totalByteSize: Number(rg.total_byte_size),
      compressedSize: compressed,
      columns,
    };
  });

  const kv: Record<string, string> = {};
  for (const { key, value } of meta.key_value_metadata ?? []) kv[key] = value ?? "";
  const out: ParquetFooter = {
    numRows: Number(meta.num_rows),
    keyValueMetadata: kv,
    schema,
    leaves,
    rowGroups,
    metadataLength: meta.metadata_length,
  };
  if (meta.created_by !== undefined) out.createdBy = meta.created_by;
  return out;
}

/** Index of the leaf column with this path in `footer.leaves` (and each row group), or -1. */
export function footerColumnIndex(footer: ParquetFooter, path: readonly string[]): number {
  return footer.leaves.findIndex(
    (l) => l.path.length === path.length && l.path.every((p, i) => p === path[i]),
  );
}

function toSchemaNode(t: SchemaTree): ParquetSchemaNode {
  const e = t.element;
  const node: ParquetSchemaNode = { name: e.name, children: t.children.map(toSchemaNode) };
  if (e.field_id !== undefined) node.fieldId = e.field_id;
  if (e.repetition_type !== undefined) node.repetition = e.repetition_type;
  if (e.type !== undefined) node.physicalType = e.type;
  if (e.type_length !== undefined) node.typeLength = e.type_length;
  if (e.converted_type !== undefined) node.convertedType = e.converted_type;
  if (e.logical_type !== undefined) node.logicalType = e.logical_type;
  if (e.precision !== undefined) node.precision = e.precision;
  if (e.scale !== undefined) node.scale = e.scale;
  return node;
}

function collectLeaves(
  nodes: SchemaTree[],
  path: string[],
  ids: (number | undefined)[],
  repeated: boolean,
  out: ParquetLeafColumn[],
): void {
  for (const n of nodes) {
    const e = n.element;
    const p = [...path, e.name];
    const fid = [...ids, e.field_id];
    const rep = repeated || e.repetition_type === "REPEATED";
    if (n.children.length > 0) {
      collectLeaves(n.children, p, fid, rep, out);
      continue;
    }
    const leaf: ParquetLeafColumn = {
      path: p,
      fieldIds: fid,
      physicalType: e.type ?? "BYTE_ARRAY",
      repeated: rep,
    };
    if (e.converted_type !== undefined) leaf.convertedType = e.converted_type;
    if (e.logical_type !== undefined) leaf.logicalType = e.logical_type;
    const precision = e.precision ?? logicalDecimal(e.logical_type)?.precision;
    const scale = e.scale ?? logicalDecimal(e.logical_type)?.scale;
    if (precision !== undefined) leaf.precision = precision;
    if (scale !== undefined) leaf.scale = scale;
    out.push(leaf);
  }
}

function logicalDecimal(lt: SchemaElement["logical_type"]) {
  return lt?.type === "DECIMAL" ? lt : undefined;
}

function isDecimal(leaf: ParquetLeafColumn): boolean {
  return leaf.convertedType === "DECIMAL" || leaf.logicalType?.type === "DECIMAL";
}

interface RawBounds {
  min?: Uint8Array;
  max?: Uint8Array;
  minDeprecated?: Uint8Array;
  maxDeprecated?: Uint8Array;
}

/** Raw min/max bytes per row group and column, straight from the thrift footer. */
function rawColumnStats(footer: Uint8Array): (RawBounds | undefined)[][] {
  const view = new DataView(footer.buffer, footer.byteOffset, footer.byteLength);
  const len = view.getUint32(footer.byteLength - 8, true);
  const meta = deserializeTCompactProtocol({ view, offset: footer.byteLength - 8 - len });
  const rowGroups = (meta.field_4 ?? []) as {
    field_1: { field_3?: { field_12?: RawThriftStats } }[];
  }[];
  return rowGroups.map((rg) =>
    rg.field_1.map((col) => {
      const s = col.field_3?.field_12;
      if (!s) return undefined;
      return { max: s.field_5, min: s.field_6, maxDeprecated: s.field_1, minDeprecated: s.field_2 };
    }),
  );
}

interface RawThriftStats {
  field_1?: Uint8Array;
  field_2?: Uint8Array;
  field_5?: Uint8Array;
  field_6?: Uint8Array;
}

type HyStats = NonNullable<
  NonNullable<FileMetaData["row_groups"][number]["columns"][number]["meta_data"]>["statistics"]
>;

function convertChunkStats(
  s: HyStats,
  leaf: ParquetLeafColumn,
  raw: RawBounds | undefined,
): ParquetColumnStats | undefined {
  const out: ParquetColumnStats = {};
  if (s.null_count !== undefined) out.nullCount = Number(s.null_count);
  if (s.distinct_count !== undefined) out.distinctCount = Number(s.distinct_count);
  // The deprecated min/max of old writers used signed byte order for binary; only trust them
  // where physical order equals logical order.
  const legacyOk =
    ["BOOLEAN", "INT32", "INT64", "FLOAT", "DOUBLE"].includes(leaf.physicalType) &&
    !isUnsigned(leaf);
  let minRaw: unknown = s.min_value;
  let maxRaw: unknown = s.max_value;
  if (raw && isDecimal(leaf)) {
    minRaw = raw.min ?? (legacyOk ? raw.minDeprecated : undefined);
    maxRaw = raw.max ?? (legacyOk ? raw.maxDeprecated : undefined);
  } else {
    if (minRaw === undefined && legacyOk) minRaw = s.min;
    if (maxRaw === undefined && legacyOk) maxRaw = s.max;
  }
  const min = convertStatValue(minRaw, leaf);
  const max = convertStatValue(maxRaw, leaf);
  if (min !== undefined) out.min = min;
  if (max !== undefined) out.max = max;
  if (s.is_min_value_exact !== undefined) out.minExact = s.is_min_value_exact;
  if (s.is_max_value_exact !== undefined) out.maxExact = s.is_max_value_exact;
  return Object.keys(out).length > 0 ? out : undefined;
}

function isUnsigned(leaf: ParquetLeafColumn): boolean {
  return (
    leaf.convertedType?.startsWith("UINT_") === true ||
    (leaf.logicalType?.type === "INTEGER" && !leaf.logicalType.isSigned)
  );
}

const utf8 = new TextDecoder();

function convertStatValue(v: unknown, leaf: ParquetLeafColumn): StatValue | undefined {
  if (v === undefined || v === null) return undefined;
  const lt = leaf.logicalType;
  const ct = leaf.convertedType;
  if (isDecimal(leaf)) {
    const scale = leaf.scale ?? 0;
    if (v instanceof Uint8Array) return new DecimalValue(decimalFromBytes(v, leaf), scale);
    if (typeof v === "bigint") return new DecimalValue(v, scale);
    // hyparquet hands INT32 decimals over as unscaled / 10^scale; exact to recover.
    if (typeof v === "number") return new DecimalValue(BigInt(Math.round(v * 10 ** scale)), scale);
    return undefined;
  }
  switch (leaf.physicalType) {
    case "BOOLEAN":
      return typeof v === "boolean" ? v : undefined;
    case "INT32":
      if (ct === "DATE" || lt?.type === "DATE") return formatDays(Number(v));
      return typeof v === "number" ? v : Number(v);
    case "INT64": {
      if (lt?.type === "TIMESTAMP" || ct === "TIMESTAMP_MICROS" || ct === "TIMESTAMP_MILLIS") {
        const unit =
          lt?.type === "TIMESTAMP" ? lt.unit : ct === "TIMESTAMP_MILLIS" ? "MILLIS" : "MICROS";
        const utc = lt?.type === "TIMESTAMP" ? lt.isAdjustedToUTC : true;
        const perMs = unit === "MILLIS" ? 1n : unit === "MICROS" ? 1000n : 1_000_000n;
        const raw = BigInt(v as bigint);
        let ms = raw / perMs;
        if (raw < 0n && ms * perMs !== raw) ms -= 1n;
        return formatTimestamp(Number(ms), utc);
      }
      const b = BigInt(v as bigint);
      return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b;
    }
    case "INT96":
      return undefined;
    case "FLOAT":
    case "DOUBLE":
      return typeof v === "number" ? v : undefined;
    case "BYTE_ARRAY":
      if (!(v instanceof Uint8Array)) return typeof v === "string" ? v : undefined;
      if (
        lt?.type === "STRING" ||
        lt?.type === "ENUM" ||
        lt?.type === "JSON" ||
        ct === "UTF8" ||
        ct === "ENUM" ||
        ct === "JSON"
      )
        return utf8.decode(v);
      return v;
    case "FIXED_LEN_BYTE_ARRAY":
      return typeof v === "number" || v instanceof Uint8Array ? v : undefined;
    default:
      return undefined;
  }
}

/** INT32/INT64 bounds are plain-encoded (little-endian); binary ones big-endian two's complement. */
function decimalFromBytes(bytes: Uint8Array, leaf: ParquetLeafColumn): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (leaf.physicalType === "INT32" && bytes.length === 4) return BigInt(view.getInt32(0, true));
  if (leaf.physicalType === "INT64" && bytes.length === 8) return view.getBigInt64(0, true);
  return bigIntFromBigEndian(bytes);
}

function bigIntFromBigEndian(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  if (bytes[0] & 0x80) v -= 1n << BigInt(bytes.length * 8);
  return v;
}
