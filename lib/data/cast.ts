/**
 * Brings a column read from a data file to the Arrow type the table's schema expects. Files from
 * other engines differ in representation, not meaning: INT96 or millisecond timestamps, 64-bit
 * string offsets, narrower decimal precision, integers written before a type widening. Each case
 * converts buffers directly; anything else is a genuine mismatch and fails loudly.
 */
import * as arrow from "apache-arrow";
import { siltError } from "../errors.ts";
import { floorDiv } from "../values/floor-div.ts";

type AnyData = arrow.Data<arrow.DataType>;

export function conformData(data: AnyData, target: arrow.DataType, column: string): AnyData {
  const source = data.type;
  if (sameArrowType(source, target)) return data;
  const s = source.typeId;
  const t = target.typeId;
  if (s === arrow.Type.Timestamp && t === arrow.Type.Timestamp) {
    return rescaleTimestamps(data, source as arrow.Timestamp, target as arrow.Timestamp);
  }
  if (s === arrow.Type.Date && t === arrow.Type.Date) {
    return dateToDays(data, target);
  }
  if (
    (s === arrow.Type.LargeUtf8 && t === arrow.Type.Utf8) ||
    (s === arrow.Type.LargeBinary && t === arrow.Type.Binary)
  ) {
    return narrowOffsets(data, target, column);
  }
  if (s === arrow.Type.Decimal && t === arrow.Type.Decimal) {
    const sd = source as arrow.Decimal;
    const td = target as arrow.Decimal;
    if (sd.scale === td.scale && sd.bitWidth === td.bitWidth) return relabel(data, target);
  }
  if (s === arrow.Type.Int && t === arrow.Type.Int) {
    return widenInts(data, source as arrow.Int, target as arrow.Int, column);
  }
  if (s === arrow.Type.Float && t === arrow.Type.Float) {
    return floatsTo(data, target as arrow.Float);
  }
  if (s === arrow.Type.Struct && t === arrow.Type.Struct) {
    const fields = (target as arrow.Struct).children;
    const children = data.children.map((c, i) =>
      conformData(c, fields[i].type, `${column}.${fields[i].name}`),
    );
    return data.clone(target, data.offset, data.length, data.nullCount, data as never, children);
  }
  if (
    (s === arrow.Type.List && t === arrow.Type.List) ||
    (s === arrow.Type.Map && t === arrow.Type.Map)
  ) {
    const field = (target as arrow.List).children[0];
    const child = conformData(data.children[0], field.type, `${column}.element`);
    return data.clone(target, data.offset, data.length, data.nullCount, data as never, [child]);
  }
  if (s === arrow.Type.LargeList && t === arrow.Type.List) {
    return narrowListOffsets(data, target as arrow.List, column);
  }
  throw siltError("FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH:IN_A_FILE", {
    column,
    target: String(target),
    source: String(source),
  });
}

/**
 * apache-arrow's compareTypes treats every Decimal as equal to every other, which would let a
 * DECIMAL(3,2) buffer pass as DECIMAL(7,4) (2.40 read back as 0.0240); scale and precision are
 * compared here, at every nesting level.
 */
function sameArrowType(a: arrow.DataType, b: arrow.DataType): boolean {
  if (!arrow.util.compareTypes(a, b)) return false;
  if (arrow.DataType.isDecimal(a) && arrow.DataType.isDecimal(b)) {
    return a.scale === b.scale && a.precision === b.precision && a.bitWidth === b.bitWidth;
  }
  const ac = a.children ?? [];
  const bc = b.children ?? [];
  return ac.length === bc.length && ac.every((c, i) => sameArrowType(c.type, bc[i].type));
}

function relabel(data: AnyData, type: arrow.DataType): AnyData {
  return data.clone(type, data.offset, data.length, data.nullCount, data as never, data.children);
}

const UNIT_PER_SECOND = [1n, 1_000n, 1_000_000n, 1_000_000_000n];

function rescaleTimestamps(data: AnyData, from: arrow.Timestamp, to: arrow.Timestamp): AnyData {
  const src = data.values as BigInt64Array | Int32Array;
  const n = data.length;
  const out = new BigInt64Array(n);
  const f = UNIT_PER_SECOND[from.unit];
  const t = UNIT_PER_SECOND[to.unit];
  const wide = src instanceof BigInt64Array ? src : pairsToBigInts(src as Int32Array, n);
  for (let i = 0; i < n; i++) {
    const v = wide[i];
    out[i] = t >= f ? v * (t / f) : floorDiv(v, f / t);
  }
  return arrow.makeData({
    type: to,
    length: n,
    nullCount: data.nullCount,
    nullBitmap: nullBitmapOf(data),
    data: out as never,
  } as never);
}

function pairsToBigInts(words: Int32Array, n: number): BigInt64Array {
  return new BigInt64Array(words.buffer, words.byteOffset, n);
}

function dateToDays(data: AnyData, target: arrow.DataType): AnyData {
  const src = data.values as unknown as BigInt64Array | Int32Array;
  const n = data.length;
  const out = new Int32Array(n);
  if (src instanceof Int32Array && (data.type as arrow.Date_).unit === arrow.DateUnit.DAY) {
    out.set(src.subarray(0, n));
  } else {
    const ms =
      src instanceof BigInt64Array ? src : new BigInt64Array(src.buffer, src.byteOffset, n);
    for (let i = 0; i < n; i++) out[i] = Number(floorDiv(ms[i], 86_400_000n));
  }
  return arrow.makeData({
    type: target,
    length: n,
    nullCount: data.nullCount,
    nullBitmap: nullBitmapOf(data),
    data: out,
  } as never);
}

function narrowOffsets(data: AnyData, target: arrow.DataType, column: string): AnyData {
  const offsets = data.valueOffsets as unknown as BigInt64Array;
  const n = data.length;
  const out = new Int32Array(n + 1);
  const base = offsets[0];
  for (let i = 0; i <= n; i++) {
    const v = offsets[i] - base;
    if (v > 2_147_483_647n) {
      throw siltError("FAILED_READ_FILE:BATCH_TOO_LARGE", { column });
    }
    out[i] = Number(v);
  }
  const values = (data.values as Uint8Array).subarray(Number(base), Number(offsets[n]));
  return arrow.makeData({
    type: target,
    length: n,
    nullCount: data.nullCount,
    nullBitmap: nullBitmapOf(data),
    valueOffsets: out,
    data: values,
  } as never);
}

/** 64-bit list offsets (arrow-rs reads large_list hints, as polars writes them) to 32-bit. */
function narrowListOffsets(data: AnyData, target: arrow.List, column: string): AnyData {
  const offsets = data.valueOffsets as unknown as BigInt64Array;
  const n = data.length;
  const out = new Int32Array(n + 1);
  const base = offsets[0];
  for (let i = 0; i <= n; i++) {
    const v = offsets[i] - base;
    if (v > 2_147_483_647n) {
      throw siltError("FAILED_READ_FILE:TOO_MANY_LIST_ELEMENTS", { column });
    }
    out[i] = Number(v);
  }
  const elements = data.children[0].slice(Number(base), out[n]);
  const child = conformData(elements, target.children[0].type, `${column}.element`);
  return arrow.makeData({
    type: target,
    length: n,
    nullCount: data.nullCount,
    nullBitmap: nullBitmapOf(data),
    valueOffsets: out,
    child,
  } as never);
}

function widenInts(data: AnyData, from: arrow.Int, to: arrow.Int, column: string): AnyData {
  if (to.bitWidth < from.bitWidth) {
    throw siltError("FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH:IN_A_FILE", {
      column,
      target: String(to),
      source: String(from),
    });
  }
  const src = data.values as unknown as ArrayLike<number | bigint>;
  const n = data.length;
  let out: Int8Array | Int16Array | Int32Array | BigInt64Array;
  switch (to.bitWidth) {
    case 16:
      out = Int16Array.from({ length: n }, (_, i) => Number(src[i]));
      break;
    case 32:
      out = Int32Array.from({ length: n }, (_, i) => Number(src[i]));
      break;
    case 64:
      out = BigInt64Array.from({ length: n }, (_, i) => BigInt(src[i]));
      break;
    default:
      out = Int8Array.from({ length: n }, (_, i) => Number(src[i]));
  }
  return arrow.makeData({
    type: to,
    length: n,
    nullCount: data.nullCount,
    nullBitmap: nullBitmapOf(data),
    data: out,
  } as never);
}

function floatsTo(data: AnyData, to: arrow.Float): AnyData {
  const src = data.values as unknown as ArrayLike<number>;
  const n = data.length;
  const out =
    to.precision === arrow.Precision.DOUBLE
      ? Float64Array.from({ length: n }, (_, i) => src[i])
      : Float32Array.from({ length: n }, (_, i) => src[i]);
  return arrow.makeData({
    type: to,
    length: n,
    nullCount: data.nullCount,
    nullBitmap: nullBitmapOf(data),
    data: out,
  } as never);
}

/** The validity bitmap re-based to bit 0 (Arrow JS addresses it at `offset + row`). */
function nullBitmapOf(data: AnyData): Uint8Array | undefined {
  if (data.nullCount === 0 || !data.nullBitmap) return undefined;
  if (data.offset === 0) return data.nullBitmap;
  const n = data.length;
  const out = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) {
    const b = data.offset + i;
    if ((data.nullBitmap[b >> 3] >> (b & 7)) & 1) out[i >> 3] |= 1 << (i & 7);
  }
  return out;
}
