/**
 * Arrow columns into the canonical JSON values of DESIGN §6, one column at a time, reading
 * Arrow buffers directly.
 */
import * as arrow from "apache-arrow";
import type { DataType, StructField, StructType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import {
  civilFromDays,
  MICROS_PER_DAY,
  MILLIS_PER_DAY,
  type Micros,
  splitMicros,
} from "../values/calendar.ts";
import { formatDate, formatTimestamp } from "../values/datetime-text.ts";
import { formatDecimal, type Unscaled } from "../values/decimal-text.ts";
import { shortestFloat32 } from "../values/float-text.ts";
import { floorDivMicros } from "../values/floor-div.ts";
import { base64, floatJson, longJson, mapKeyText, setKey } from "./json-encoding.ts";

const TWO32 = 4294967296;

const decoder = new TextDecoder();
/** Byte span decoded as one string when converting Utf8 columns (V8 caps string length). */
const DECODE_CHUNK = 1 << 25;

/** Validity bitmap of a Data if it has nulls, else null. */
const nullsOf = (data: arrow.Data): Uint8Array | null =>
  data.nullCount > 0 && data.nullBitmap && data.nullBitmap.length > 0 ? data.nullBitmap : null;

function decodeUtf8Column(
  bytes: Uint8Array,
  offsets: ArrayLike<number>,
  from: number,
  to: number,
  out: unknown[],
  nulls: Uint8Array | null,
  bitOffset: number,
): void {
  const base = offsets[from];
  const str = decoder.decode(bytes.subarray(base, offsets[to]));
  if (str.length === offsets[to] - base) {
    // Every byte decoded to one UTF-16 unit, so byte offsets are string offsets.
    for (let i = from; i < to; i++) {
      const bit = bitOffset + i;
      out[i] =
        nulls && (nulls[bit >> 3] & (1 << (bit & 7))) === 0
          ? null
          : str.substring(offsets[i] - base, offsets[i + 1] - base);
    }
    return;
  }
  // Map byte boundaries to UTF-16 positions: lead bytes count one unit, 4-byte sequences two.
  const bounds = new Int32Array(to - from + 1);
  let unit = 0;
  let b = base;
  for (let i = from; i < to; i++) {
    const end = offsets[i + 1];
    for (; b < end; b++) {
      const c = bytes[b];
      if (c < 0x80 || c >= 0xc0) unit += c >= 0xf0 ? 2 : 1;
    }
    bounds[i - from + 1] = unit;
  }
  const valid = unit === str.length;
  for (let i = from; i < to; i++) {
    const bit = bitOffset + i;
    if (nulls && (nulls[bit >> 3] & (1 << (bit & 7))) === 0) out[i] = null;
    else if (valid) out[i] = str.substring(bounds[i - from], bounds[i - from + 1]);
    // Invalid UTF-8 broke the mapping; decode this value on its own.
    else out[i] = decoder.decode(bytes.subarray(offsets[i], offsets[i + 1]));
  }
}

function utf8Values(data: arrow.Data, out: unknown[]): void {
  const n = data.length;
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const off: ArrayLike<number> =
    offsets instanceof BigInt64Array ? Array.from(offsets, (x) => Number(x)) : offsets;
  const bytes = data.values as Uint8Array;
  const nulls = nullsOf(data);
  let from = 0;
  while (from < n) {
    let to = from + 1;
    while (to < n && off[to + 1] - off[from] <= DECODE_CHUNK) to++;
    decodeUtf8Column(bytes, off, from, to, out, nulls, data.offset);
    from = to;
  }
}

function int64Values(
  data: arrow.Data,
  out: unknown[],
  signed: boolean,
  format?: (v: Micros) => unknown,
): void {
  const values = data.values as BigInt64Array | BigUint64Array;
  const u32 = new Uint32Array(values.buffer, values.byteOffset, data.length * 2);
  const nulls = nullsOf(data);
  const bitOffset = data.offset;
  for (let i = 0; i < data.length; i++) {
    if (nulls) {
      const bit = bitOffset + i;
      if ((nulls[bit >> 3] & (1 << (bit & 7))) === 0) {
        out[i] = null;
        continue;
      }
    }
    const lo = u32[2 * i];
    const hiU = u32[2 * i + 1];
    const hi = signed ? hiU | 0 : hiU;
    let v: Micros;
    if (hi > -2097152 && hi < 2097152) v = hi * TWO32 + lo;
    else v = values[i];
    out[i] = format ? format(v) : longJson(v);
  }
}

/** Rows per chunk of timestamp text decoded as one string (V8 caps string length). */
const TIMESTAMP_CHUNK = 1 << 22;

/**
 * Timestamp column to ISO text. Each value's ASCII bytes go into one buffer that is decoded
 * once; the values are then substrings of it, one small allocation each instead of a chain of
 * concatenations. Years outside 0000-9999 (wider text) are formatted one by one.
 */
function timestampValues(
  data: arrow.Data,
  unit: arrow.TimeUnit,
  utc: boolean,
  out: unknown[],
): void {
  const width = utc ? 27 : 26;
  const values = data.values as BigInt64Array;
  const u32 = new Uint32Array(values.buffer, values.byteOffset, data.length * 2);
  const nulls = nullsOf(data);
  const bitOffset = data.offset;
  const date = new Uint8Array(10);
  let lastDays = Number.NaN;
  let wideYear = false;
  for (let from = 0; from < data.length; from += TIMESTAMP_CHUNK) {
    const to = Math.min(data.length, from + TIMESTAMP_CHUNK);
    const buf = Buffer.allocUnsafe((to - from) * width);
    for (let i = from; i < to; i++) {
      if (nulls) {
        const bit = bitOffset + i;
        if ((nulls[bit >> 3] & (1 << (bit & 7))) === 0) {
          out[i] = null;
          continue;
        }
      }
      const hi = u32[2 * i + 1] | 0;
      let micros: Micros = hi > -2097152 && hi < 2097152 ? hi * TWO32 + u32[2 * i] : values[i];
      if (unit !== arrow.TimeUnit.MICROSECOND) micros = toMicros(micros, unit);
      let days: number;
      let tod: number;
      if (typeof micros === "number") {
        days = Math.floor(micros / MICROS_PER_DAY);
        tod = micros - days * MICROS_PER_DAY;
        if (tod < 0 || tod >= MICROS_PER_DAY) [days, tod] = splitMicros(micros);
      } else {
        [days, tod] = splitMicros(micros);
      }
      if (days !== lastDays) {
        lastDays = days;
        const [y, m, d] = civilFromDays(days);
        wideYear = y < 0 || y > 9999;
        date[0] = 48 + Math.floor(y / 1000);
        date[1] = 48 + (Math.floor(y / 100) % 10);
        date[2] = 48 + (Math.floor(y / 10) % 10);
        date[3] = 48 + (y % 10);
        date[4] = 45;
        date[5] = 48 + Math.floor(m / 10);
        date[6] = 48 + (m % 10);
        date[7] = 45;
        date[8] = 48 + Math.floor(d / 10);
        date[9] = 48 + (d % 10);
      }
      if (wideYear) {
        out[i] = formatTimestamp(micros, utc);
        continue;
      }
      const secs = Math.floor(tod / 1_000_000);
      let us = tod - secs * 1_000_000;
      const h = Math.floor(secs / 3600);
      const mi = Math.floor(secs / 60) - h * 60;
      const ss = secs - Math.floor(secs / 60) * 60;
      const p = (i - from) * width;
      buf.set(date, p);
      buf[p + 10] = 84; // T
      buf[p + 11] = 48 + Math.floor(h / 10);
      buf[p + 12] = 48 + (h % 10);
      buf[p + 13] = 58;
      buf[p + 14] = 48 + Math.floor(mi / 10);
      buf[p + 15] = 48 + (mi % 10);
      buf[p + 16] = 58;
      buf[p + 17] = 48 + Math.floor(ss / 10);
      buf[p + 18] = 48 + (ss % 10);
      buf[p + 19] = 46;
      for (let k = 25; k >= 20; k--) {
        const q = Math.floor(us / 10);
        buf[p + k] = 48 + us - q * 10;
        us = q;
      }
      if (utc) buf[p + 26] = 90; // Z
      out[i] = true;
    }
    const text = buf.toString("latin1");
    for (let i = from; i < to; i++) {
      if (out[i] === true) {
        const p = (i - from) * width;
        out[i] = text.substring(p, p + width);
      }
    }
  }
}

function scaleUp(v: Micros, factor: number): Micros {
  if (typeof v === "number" && Math.abs(v) * factor <= Number.MAX_SAFE_INTEGER) return v * factor;
  return BigInt(v) * BigInt(factor);
}

/** Converts a timestamp of the Arrow type's unit to microseconds (flooring nanoseconds). */
function toMicros(v: Micros, unit: arrow.TimeUnit): Micros {
  switch (unit) {
    case arrow.TimeUnit.SECOND:
      return scaleUp(v, 1_000_000);
    case arrow.TimeUnit.MILLISECOND:
      return scaleUp(v, 1_000);
    case arrow.TimeUnit.NANOSECOND:
      return floorDivMicros(v, 1_000);
    default:
      return v;
  }
}

function decimalUnscaled(words: Uint32Array, i: number, stride: number): Unscaled {
  const k = i * stride;
  if (stride === 1) return words[k] | 0;
  const w0 = words[k];
  const w1 = words[k + 1];
  let high = true;
  let ones = true;
  for (let j = 2; j < stride; j++) {
    if (words[k + j] !== 0) high = false;
    if (words[k + j] !== 0xffffffff) ones = false;
  }
  if (high && w1 < 2097152) return w1 * TWO32 + w0;
  if (ones && w1 > 0xffe00000) return (w1 - TWO32) * TWO32 + w0;
  let b = 0n;
  for (let j = stride - 1; j >= 0; j--) b = (b << 32n) | BigInt(words[k + j]);
  return BigInt.asIntN(stride * 32, b);
}

function structName(type: DataType | undefined, i: number, fallback: string): string {
  return type !== undefined && typeof type === "object" && type.type === "struct" && type.fields[i]
    ? type.fields[i].name
    : fallback;
}

/**
 * Canonical JSON values of one Arrow column (see the table at the top). `type`, when given, is
 * the column's Delta type: it decides what the Arrow type cannot say (struct field names,
 * whether a timestamp has a zone, a decimal's scale after widening, text stored as binary).
 */
export function arrowValues(data: arrow.Data | arrow.Vector, type?: DataType): unknown[] {
  if (data instanceof arrow.Vector) {
    const out: unknown[] = [];
    for (const d of data.data) {
      const part = arrowValues(d, type);
      for (const x of part) out.push(x);
    }
    return out;
  }
  const out: unknown[] = new Array(data.length);
  fillValues(data, type, out);
  return out;
}

function fillValues(data: arrow.Data, type: DataType | undefined, out: unknown[]): void {
  const n = data.length;
  const nulls = nullsOf(data);
  const bitOffset = data.offset;
  const isNull = (i: number) => {
    if (!nulls) return false;
    const bit = bitOffset + i;
    return (nulls[bit >> 3] & (1 << (bit & 7))) === 0;
  };
  const t = data.type;
  switch (t.typeId) {
    case arrow.Type.Null:
      out.fill(null, 0, n);
      return;
    case arrow.Type.Int: {
      const it = t as arrow.Int;
      if (it.bitWidth === 64) {
        int64Values(data, out, it.isSigned);
        return;
      }
      const values = data.values as Int32Array;
      for (let i = 0; i < n; i++) out[i] = isNull(i) ? null : values[i];
      return;
    }
    case arrow.Type.Float: {
      const precision = (t as arrow.Float).precision;
      const values = data.values as Float64Array;
      if (precision === arrow.Precision.DOUBLE) {
        for (let i = 0; i < n; i++) {
          const x = values[i];
          out[i] = isNull(i) ? null : x - x === 0 ? x : floatJson(x);
        }
      } else if (precision === arrow.Precision.SINGLE) {
        for (let i = 0; i < n; i++)
          out[i] = isNull(i) ? null : floatJson(shortestFloat32(values[i]));
      } else {
        const vec = arrow.makeVector(data);
        for (let i = 0; i < n; i++) {
          out[i] = isNull(i) ? null : floatJson(shortestFloat32(Math.fround(vec.get(i) as number)));
        }
      }
      return;
    }
    case arrow.Type.Bool: {
      const bits = data.values as Uint8Array;
      for (let i = 0; i < n; i++) {
        const bit = bitOffset + i;
        out[i] = isNull(i) ? null : (bits[bit >> 3] & (1 << (bit & 7))) !== 0;
      }
      return;
    }
    case arrow.Type.Utf8:
    case arrow.Type.LargeUtf8:
      utf8Values(data, out);
      return;
    case arrow.Type.Binary:
    case arrow.Type.LargeBinary: {
      if (type === "string") {
        utf8Values(data, out);
        return;
      }
      const bytes = data.values as Uint8Array;
      const offsets = data.valueOffsets as Int32Array | BigInt64Array;
      for (let i = 0; i < n; i++) {
        out[i] = isNull(i)
          ? null
          : base64(bytes.subarray(Number(offsets[i]), Number(offsets[i + 1])));
      }
      return;
    }
    case arrow.Type.FixedSizeBinary: {
      const w = (t as arrow.FixedSizeBinary).byteWidth;
      const bytes = data.values as Uint8Array;
      for (let i = 0; i < n; i++) {
        const b = bytes.subarray(i * w, (i + 1) * w);
        out[i] = isNull(i) ? null : type === "string" ? decoder.decode(b) : base64(b);
      }
      return;
    }
    case arrow.Type.Utf8View:
    case arrow.Type.BinaryView: {
      const vec = arrow.makeVector(data);
      const text = t.typeId === arrow.Type.Utf8View;
      for (let i = 0; i < n; i++) {
        const v = vec.get(i) as string | Uint8Array | null;
        out[i] =
          v === null || isNull(i)
            ? null
            : text
              ? v
              : type === "string"
                ? decoder.decode(v as Uint8Array)
                : base64(v as Uint8Array);
      }
      return;
    }
    case arrow.Type.Date: {
      let last = Number.NaN;
      let lastText = "";
      const millis = (t as arrow.Date_).unit === arrow.DateUnit.MILLISECOND;
      const values = data.values as Int32Array | BigInt64Array;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) {
          out[i] = null;
          continue;
        }
        const days = millis
          ? Math.floor(Number(values[i]) / MILLIS_PER_DAY)
          : (values[i] as number);
        if (days !== last) {
          last = days;
          lastText = formatDate(days);
        }
        out[i] = lastText;
      }
      return;
    }
    case arrow.Type.Timestamp: {
      const ts = t as arrow.Timestamp;
      const utc = type === "timestamp" ? true : type === "timestamp_ntz" ? false : !!ts.timezone;
      timestampValues(data, ts.unit, utc, out);
      return;
    }
    case arrow.Type.Decimal: {
      const dt = t as arrow.Decimal;
      const stride = dt.bitWidth / 32;
      const words = data.values as Uint32Array;
      const extra =
        type !== undefined &&
        typeof type === "object" &&
        type.type === "decimal" &&
        type.scale > dt.scale
          ? type.scale - dt.scale
          : 0;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) {
          out[i] = null;
          continue;
        }
        const u = decimalUnscaled(words, i, stride);
        out[i] =
          extra === 0
            ? formatDecimal(u, dt.scale)
            : formatDecimal(BigInt(u) * 10n ** BigInt(extra), dt.scale + extra);
      }
      return;
    }
    case arrow.Type.Struct: {
      const fields = (t as arrow.Struct).children;
      const names = fields.map((f, i) => structName(type, i, f.name));
      const childTypes = fields.map((_, i) =>
        type !== undefined && typeof type === "object" && type.type === "struct"
          ? type.fields[i]?.type
          : undefined,
      );
      const cols = data.children.map((c, i) => {
        const vals: unknown[] = new Array(c.length);
        fillValues(c, childTypes[i], vals);
        return vals;
      });
      for (let i = 0; i < n; i++) {
        if (isNull(i)) {
          out[i] = null;
          continue;
        }
        const o: Record<string, unknown> = {};
        for (let c = 0; c < cols.length; c++) setKey(o, names[c], cols[c][i]);
        out[i] = o;
      }
      return;
    }
    case arrow.Type.List:
    case arrow.Type.LargeList:
    case arrow.Type.Map: {
      const offsets = data.valueOffsets as Int32Array | BigInt64Array;
      const first = Number(offsets[0]);
      const last = Number(offsets[n]);
      const child = data.children[0].slice(first, last - first);
      if (t.typeId === arrow.Type.Map) {
        const mt =
          type !== undefined && typeof type === "object" && type.type === "map" ? type : undefined;
        const keys: unknown[] = new Array(child.length);
        const vals: unknown[] = new Array(child.length);
        fillValues(child.children[0], mt?.keyType, keys);
        fillValues(child.children[1], mt?.valueType, vals);
        for (let i = 0; i < n; i++) {
          if (isNull(i)) {
            out[i] = null;
            continue;
          }
          const o: Record<string, unknown> = {};
          for (let j = Number(offsets[i]) - first; j < Number(offsets[i + 1]) - first; j++) {
            setKey(o, mapKeyText(keys[j]), vals[j]);
          }
          out[i] = o;
        }
        return;
      }
      const at =
        type !== undefined && typeof type === "object" && type.type === "array" ? type : undefined;
      const vals: unknown[] = new Array(child.length);
      fillValues(child, at?.elementType, vals);
      for (let i = 0; i < n; i++) {
        out[i] = isNull(i)
          ? null
          : vals.slice(Number(offsets[i]) - first, Number(offsets[i + 1]) - first);
      }
      return;
    }
    case arrow.Type.FixedSizeList: {
      const size = (t as arrow.FixedSizeList).listSize;
      const at =
        type !== undefined && typeof type === "object" && type.type === "array" ? type : undefined;
      const child = data.children[0];
      const vals: unknown[] = new Array(child.length);
      fillValues(child, at?.elementType, vals);
      for (let i = 0; i < n; i++) out[i] = isNull(i) ? null : vals.slice(i * size, (i + 1) * size);
      return;
    }
    case arrow.Type.Dictionary: {
      const dict = data.dictionary;
      const dictValues = dict ? arrowValues(dict, type) : [];
      const indices = data.values as Int32Array | BigInt64Array;
      for (let i = 0; i < n; i++) out[i] = isNull(i) ? null : dictValues[Number(indices[i])];
      return;
    }
    default: {
      // Time, duration, interval and union columns have no Delta type; show Arrow's rendering.
      const vec = arrow.makeVector(data);
      for (let i = 0; i < n; i++) {
        const v = vec.get(i);
        out[i] =
          v === null || isNull(i)
            ? null
            : typeof v === "bigint"
              ? String(v)
              : typeof v === "object"
                ? String(v)
                : v;
      }
    }
  }
}

/**
 * Transposes column arrays into row arrays. Array literals for narrow rows let V8 pretenure them
 * (the rows all survive, and copying them through the young generation dominated the time).
 */
function assembleRows(cols: unknown[][], len: number, rows: unknown[][], base: number): void {
  const [a, b, c, d, e, f] = cols;
  switch (cols.length) {
    case 1:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i]];
      return;
    case 2:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i]];
      return;
    case 3:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i]];
      return;
    case 4:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i], d[i]];
      return;
    case 5:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i], d[i], e[i]];
      return;
    case 6:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i], d[i], e[i], f[i]];
      return;
    default: {
      const n = cols.length;
      for (let i = 0; i < len; i++) {
        const row: unknown[] = new Array(n);
        for (let k = 0; k < n; k++) row[k] = cols[k][i];
        rows[base + i] = row;
      }
    }
  }
}

/**
 * Rows of canonical JSON values (arrays in column order) from an Arrow table. `schema`, when
 * given, is the Delta schema of the table's columns in the same order.
 */
export function arrowToRows(
  table: arrow.Table | arrow.RecordBatch,
  schema?: StructType,
): unknown[][] {
  const ncols = table.schema.fields.length;
  if (schema && schema.fields.length !== ncols) {
    throw siltError("INTERNAL_ERROR:ARROW_TO_ROWS_WIDTH", {
      fieldsCount: schema.fields.length,
      ncols,
    });
  }
  const rows: unknown[][] = new Array(table.numRows);
  const batches = table instanceof arrow.Table ? table.batches : [table];
  let base = 0;
  for (const batch of batches) {
    const len = batch.numRows;
    const cols = batch.data.children.map((child, c) => {
      const field: StructField | undefined = schema?.fields[c];
      const vals: unknown[] = new Array(len);
      fillValues(child, field?.type, vals);
      return vals;
    });
    assembleRows(cols, len, rows, base);
    base += len;
  }
  return rows;
}
