/**
 * Parquet in and out of Arrow JS tables: parquet-wasm (parquet-rs compiled to wasm) does the
 * encoding and decoding, on the instance parquet-wasm.ts keeps (and replaces after a trap);
 * hyparquet parses footers (parquet-wasm hides column statistics from JS).
 */

import * as arrow from "apache-arrow";
import {
  type FileMetaData,
  parquetMetadata,
  parquetSchema,
  type SchemaElement,
  type SchemaTree,
} from "hyparquet";
import { deserializeTCompactProtocol } from "hyparquet/src/thrift.js";
import type * as pw from "parquet-wasm/node";
import { SiltError, siltError } from "../errors.ts";
import { MILLIS_PER_DAY } from "../values/calendar.ts";
import { floorDiv } from "../values/floor-div.ts";
import { withFooter } from "./parquet-footer-edit.ts";
import { countNanoTimestamps, int96Columns, withInt96Hint } from "./parquet-int96.ts";
import { projectFooter } from "./parquet-projection.ts";
import { arrowSchemaOf, blobOf, corrupt, type RangeSource } from "./parquet-source.ts";
import { isTrap, onParquetWasm } from "./parquet-wasm.ts";
import {
  DecimalValue,
  formatDays,
  formatTimestamp,
  int64FromWords,
  type StatValue,
} from "./stats.ts";

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
  const prepared = normalizeForParquet(table);
  const ipc = arrow.tableToIPC(prepared, "stream");
  return onParquetWasm((wasm) => {
    let builder = new wasm.WriterPropertiesBuilder()
      .setCompression(compressionCode(wasm, opts.compression ?? "zstd"))
      // Row-group statistics, which Silt and other engines prune by, but no page index: with
      // 128k-row row groups it buys little skipping, and building it took ~15% of the encode
      // time of a 1M-row append (measured, bench/README.md).
      .setStatisticsEnabled(wasm.EnabledStatistics.Chunk)
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
        builder = builder.setColumnEncoding(name, wasm.Encoding.DELTA_BINARY_PACKED);
      }
    }
    const props = builder.build();
    // writeParquet takes ownership of (and frees) both the wasm table and the properties.
    return wasm.writeParquet(wasm.Table.fromIPCStream(ipc), props);
  });
}

function compressionCode(wasm: typeof pw, c: ParquetCompression): pw.Compression {
  switch (c) {
    case "zstd":
      return wasm.Compression.ZSTD;
    case "snappy":
      return wasm.Compression.SNAPPY;
    case "uncompressed":
      return wasm.Compression.UNCOMPRESSED;
    default:
      throw siltError("INVALID_PARQUET_OPTION", { codec: String(c) });
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
  throw siltError("DELTA_UNSUPPORTED_DATA_TYPE", { type: String(t) });
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
      for (let i = 0; i < data.length; i++) out[i] = floorDiv(src[i], 1000n);
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
        out[i] = Math.floor(ms / MILLIS_PER_DAY);
      }
    } else {
      // Older Arrow JS layouts keep Date64 as pairs of 32-bit words.
      for (let i = 0; i < data.length; i++) {
        const ms = int64FromWords(src[2 * i], src[2 * i + 1]);
        out[i] = Math.floor(Number(ms) / MILLIS_PER_DAY);
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
 * Decodes a Parquet file into an Arrow JS table. In-memory bytes go through parquet-wasm's
 * synchronous reader, column subsets through a footer narrowed to them (parquet-projection.ts);
 * anything wrong with the file, a wasm trap included, is DELTA_PARQUET_CORRUPT, and the
 * process and the next read are unharmed. Ranged sources go through its async ParquetFile,
 * which fetches only what the columns need, but whose panics nothing can catch: use them only
 * for files known to be sound. INT96 columns come back as Timestamp(MICROSECOND, "UTC"),
 * exact far past parquet-rs's nanosecond range (see parquet-int96.ts).
 */
export async function readParquet(
  source: Uint8Array | RangeSource,
  opts: ReadParquetOptions = {},
): Promise<arrow.Table> {
  const batchSize = Math.max(1, opts.batchSize ?? DEFAULT_BATCH_SIZE);
  const options: pw.ReaderOptions = { batchSize };
  if (opts.rowGroups) options.rowGroups = opts.rowGroups;
  if (source instanceof Uint8Array) return readInMemory(source, options, opts.columns);
  return readRanged(source, options, opts.columns);
}

async function readInMemory(
  bytes: Uint8Array,
  options: pw.ReaderOptions,
  columns: string[] | undefined,
): Promise<arrow.Table> {
  let input = bytes;
  let footer = footerBytes(input);
  const int96 = int96Columns(footer.subarray(0, footer.byteLength - 8));
  if (int96) {
    const hinted = await withInt96Hint(input, footer, int96);
    if (hinted) {
      input = hinted;
      footer = footerBytes(input);
    }
  }
  if (options.rowGroups) validateRowGroups(options.rowGroups, countRowGroups(input));
  let wanted: string[] | undefined;
  if (columns) {
    const projected = projectFooter(footer.subarray(0, footer.byteLength - 8), columns);
    wanted = columns.filter((c) => projected.columns.includes(c));
    if (wanted.length === 0) return emptyColumnsTable(await countRows(input, options.rowGroups));
    if (projected.thrift) input = withFooter(input, footer.byteLength, projected.thrift);
  }
  const table = decoded(() =>
    onParquetWasm((wasm) => wasmToArrow(wasm.readParquet(input, options))),
  );
  return wanted ? reorderColumns(table, wanted) : table;
}

/** What `decode` returns, with any failure of parquet-rs reported as a damaged file. */
function decoded<T>(decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    if (e instanceof SiltError) throw e;
    throw corrupt(isTrap(e) ? "parquet-rs failed on its data" : (e as Error).message);
  }
}

async function readRanged(
  source: RangeSource,
  options: pw.ReaderOptions,
  columns: string[] | undefined,
): Promise<arrow.Table> {
  const open = (s: RangeSource) =>
    onParquetWasm((wasm) => wasm.ParquetFile.fromFile(blobOf(s) as unknown as Blob));
  let file = await open(source);
  try {
    // The footer costs a read: fetch it only when parquet-rs's schema has a nanosecond
    // timestamp, which every INT96 column is before the hint.
    let schema: arrow.Schema | undefined = arrowSchemaOf(file);
    if (countNanoTimestamps(schema.fields) > 0) {
      const footer = await readFooterBytes(source);
      const int96 = int96Columns(footer.subarray(0, footer.byteLength - 8));
      const hinted = int96 && (await withInt96Hint(source, footer, int96, schema));
      if (hinted) {
        const next = await open(hinted);
        file.free();
        file = next;
        schema = undefined;
      }
    }
    const meta = file.metadata();
    const numRowGroups = meta.numRowGroups();
    meta.free();
    if (options.rowGroups) validateRowGroups(options.rowGroups, numRowGroups);
    let wanted: string[] | undefined;
    if (columns) {
      const present = new Set((schema ?? arrowSchemaOf(file)).fields.map((f) => f.name));
      wanted = columns.filter((c) => present.has(c));
    }
    if (wanted && wanted.length === 0) {
      return emptyColumnsTable(await countRows(source, options.rowGroups));
    }
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
      throw siltError("INVALID_PARQUET_ROW_GROUP", { index: i, count });
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
        return formatTimestamp(Number(floorDiv(raw, perMs)), utc);
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
