/**
 * Row kernels over Arrow JS tables, which has no compute functions of its own: filter, take,
 * concat, slice, constant and null columns. Every type is handled by recursion over
 * `arrow.Data` with typed-array loops (fixed-width values move as 8-, 4-, 2- or 1-byte words,
 * strings as byte ranges, lists and maps by gathering their child rows, structs child by child).
 * Only union and view types fall back to rebuilding values through Arrow's builders.
 *
 * Arrow JS conventions relied on: fixed-width `values`, `valueOffsets` and struct children are
 * already sliced so row 0 is at index 0, while validity bitmaps (and boolean values) are
 * addressed at bit `data.offset + row`.
 */

import * as arrow from "apache-arrow";
import { MILLIS_PER_DAY } from "../values/calendar.ts";
import { parseDate, parseTimestamp } from "../values/datetime-text.ts";
import { rescale } from "../values/decimal-scale.ts";
import { parseDecimal } from "../values/decimal-text.ts";
import { floorDiv } from "../values/floor-div.ts";
import { DecimalValue } from "./stats.ts";

type AnyData = arrow.Data<arrow.DataType>;

// ---------------------------------------------------------------------------------------------
// Table-level API

/** Rows where `keep[i] === 1` (any non-zero byte keeps the row), batch structure preserved. */
export function filterTable(table: arrow.Table, keep: Uint8Array): arrow.Table {
  if (keep.length !== table.numRows) {
    throw new RangeError(`filterTable: mask has ${keep.length} entries for ${table.numRows} rows`);
  }
  const out: arrow.RecordBatch[] = [];
  let start = 0;
  for (const batch of table.batches) {
    const n = batch.numRows;
    const local = keep.subarray(start, start + n);
    start += n;
    let count = 0;
    for (let i = 0; i < n; i++) if (local[i] !== 0) count++;
    if (count === 0) continue;
    if (count === n) {
      out.push(batch);
      continue;
    }
    const idx = new Uint32Array(count);
    for (let i = 0, j = 0; i < n; i++) if (local[i] !== 0) idx[j++] = i;
    out.push(rebatch(table.schema, takeData(batch.data, idx)));
  }
  return new arrow.Table(table.schema, out);
}

/** Rows at `indices`, in that order (repeats allowed). */
export function takeRows(table: arrow.Table, indices: Uint32Array | number[]): arrow.Table {
  const idx = indices instanceof Uint32Array ? indices : Uint32Array.from(indices);
  const n = table.numRows;
  let sorted = true;
  for (let j = 0; j < idx.length; j++) {
    const i = idx[j];
    if (i >= n || (indices as ArrayLike<number>)[j] !== i) {
      throw new RangeError(`takeRows: index ${(indices as ArrayLike<number>)[j]} out of range`);
    }
    if (j > 0 && i < idx[j - 1]) sorted = false;
  }
  if (idx.length === 0) return new arrow.Table(table.schema, []);
  const batches = table.batches;
  if (batches.length === 1) return new arrow.Table(table.schema, [take1(table, batches[0], idx)]);
  if (!sorted) {
    const one = combineChunks(table);
    return new arrow.Table(table.schema, [take1(one, one.batches[0], idx)]);
  }
  // Ascending indices: take from each batch in turn, no need to copy the table first.
  const out: arrow.RecordBatch[] = [];
  let j = 0;
  let base = 0;
  for (const batch of batches) {
    const end = base + batch.numRows;
    let k = j;
    while (k < idx.length && idx[k] < end) k++;
    if (k > j) {
      const local = new Uint32Array(k - j);
      for (let t = j; t < k; t++) local[t - j] = idx[t] - base;
      out.push(
        local.length === batch.numRows && isIdentity(local)
          ? batch
          : rebatch(table.schema, takeData(batch.data, local)),
      );
    }
    j = k;
    base = end;
  }
  return new arrow.Table(table.schema, out);
}

function take1(table: arrow.Table, batch: arrow.RecordBatch, idx: Uint32Array): arrow.RecordBatch {
  return rebatch(table.schema, takeData(batch.data, idx));
}

function isIdentity(idx: Uint32Array): boolean {
  for (let i = 0; i < idx.length; i++) if (idx[i] !== i) return false;
  return true;
}

/**
 * Tables with the same column names and types, one after the other, without copying (their
 * batches are re-labelled with `schema`). Zero tables give an empty table of `schema`.
 */
export function concatTables(tables: arrow.Table[], schema?: arrow.Schema): arrow.Table {
  const target = schema ?? tables[0]?.schema;
  if (!target) throw new Error("concatTables: no tables and no schema");
  const out: arrow.RecordBatch[] = [];
  for (const t of tables) {
    assertSameColumns(target, t.schema);
    for (const b of t.batches) if (b.numRows > 0) out.push(rebatch(target, b.data));
  }
  return new arrow.Table(target, out);
}

function assertSameColumns(a: arrow.Schema, b: arrow.Schema): void {
  const ok =
    a.fields.length === b.fields.length &&
    a.fields.every(
      (f, i) => f.name === b.fields[i].name && arrow.util.compareTypes(f.type, b.fields[i].type),
    );
  if (!ok) {
    throw new Error(
      `concatTables: schemas differ: [${a.fields.map(String).join(", ")}] vs ` +
        `[${b.fields.map(String).join(", ")}]`,
    );
  }
}

/** One contiguous batch holding every row (copies; a single-batch table is returned as is). */
export function combineChunks(table: arrow.Table): arrow.Table {
  if (table.batches.length === 1) return table;
  if (table.batches.length === 0) {
    return new arrow.Table(table.schema, [
      rebatch(table.schema, nullData(new arrow.Struct(table.schema.fields), 0, false)),
    ]);
  }
  const data = concatData(table.batches.map((b) => b.data));
  return new arrow.Table(table.schema, [rebatch(table.schema, data)]);
}

/** Rows [start, end) (negative values count from the end), sharing buffers with `table`. */
export function sliceTable(table: arrow.Table, start: number, end?: number): arrow.Table {
  const n = table.numRows;
  const clamp = (i: number) => (i < 0 ? Math.max(0, n + i) : Math.min(i, n));
  const from = clamp(start);
  const to = end === undefined ? n : clamp(end);
  // Arrow's own slice fails on tables without batches.
  if (to <= from) return new arrow.Table(table.schema, []);
  return table.slice(from, to);
}

/**
 * `table` plus a column where every row holds `value` (how partition values are materialized).
 * `n` is the row count, needed when `table` has no columns; otherwise it must equal numRows.
 * Values: numbers/bigints for integers and floats; for dates a Date, "YYYY-MM-DD" or days;
 * for timestamps a Date, an ISO string, epoch milliseconds (number) or a bigint in the column's
 * unit; for decimals a DecimalValue, a decimal string, a number or the unscaled bigint;
 * null for an all-null column.
 */
export function appendConstantColumn(
  table: arrow.Table,
  field: arrow.Field,
  value: unknown,
  n?: number,
): arrow.Table {
  const hasColumns = table.schema.fields.length > 0;
  const rows = hasColumns ? table.numRows : (n ?? table.numRows);
  if (hasColumns && n !== undefined && n !== table.numRows) {
    throw new RangeError(`appendConstantColumn: n=${n} but the table has ${table.numRows} rows`);
  }
  const column = constantData(field.type, value, rows);
  const schema = new arrow.Schema([...table.schema.fields, field], table.schema.metadata);
  if (hasColumns && table.batches.length === 0) return new arrow.Table(schema, []);
  if (!hasColumns) {
    const data = arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: rows,
      nullCount: 0,
      children: [column],
    });
    return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
  }
  let start = 0;
  const batches = table.batches.map((b) => {
    const piece = column.slice(start, b.numRows);
    start += b.numRows;
    const data = arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: b.numRows,
      nullCount: 0,
      children: [...b.data.children, piece],
    });
    return new arrow.RecordBatch(schema, data);
  });
  return new arrow.Table(schema, batches);
}

/** A column of `n` nulls of the field's type. */
export function nullColumn(field: arrow.Field, n: number): arrow.Vector {
  return arrow.makeVector(nullData(field.type, n, true));
}

/** A column of `n` copies of `value` (see appendConstantColumn for accepted values). */
export function constantColumn(field: arrow.Field, value: unknown, n: number): arrow.Vector {
  return arrow.makeVector(constantData(field.type, value, n));
}

function rebatch(schema: arrow.Schema, data: AnyData): arrow.RecordBatch {
  const struct = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: data.length,
    nullCount: 0,
    children: data.children,
  });
  return new arrow.RecordBatch(schema, struct);
}

// ---------------------------------------------------------------------------------------------
// Validity

function isValidAt(bits: Uint8Array, bit: number): boolean {
  return ((bits[bit >> 3] >> (bit & 7)) & 1) === 1;
}

function hasNulls(d: AnyData): boolean {
  return d.nullCount > 0 && d.nullBitmap !== undefined && d.nullBitmap.length > 0;
}

/** Gathered validity bitmap and null count, or nothing when the source has no nulls. */
function takeValidity(d: AnyData, idx: Uint32Array): { bits?: Uint8Array; nulls: number } {
  if (!hasNulls(d)) return { nulls: 0 };
  const src = d.nullBitmap;
  const off = d.offset;
  const m = idx.length;
  const out = new Uint8Array((m + 7) >> 3);
  let valid = 0;
  for (let j = 0; j < m; j++) {
    const b = off + idx[j];
    if ((src[b >> 3] >> (b & 7)) & 1) {
      out[j >> 3] |= 1 << (j & 7);
      valid++;
    }
  }
  return { bits: out, nulls: m - valid };
}

// ---------------------------------------------------------------------------------------------
// take

/** Rows `idx` of `d` (every index already checked to be < d.length). */
export function takeData(d: AnyData, idx: Uint32Array): AnyData {
  const t = d.type;
  const m = idx.length;
  switch (t.typeId) {
    case arrow.Type.Null:
      return new arrow.Data(t, 0, m, m);
    case arrow.Type.Bool: {
      const { bits, nulls } = takeValidity(d, idx);
      const src = d.values as Uint8Array;
      const out = new Uint8Array((m + 7) >> 3);
      for (let j = 0; j < m; j++) {
        if (isValidAt(src, d.offset + idx[j])) out[j >> 3] |= 1 << (j & 7);
      }
      return new arrow.Data(t, 0, m, nulls, [undefined, out, bits] as never);
    }
    case arrow.Type.Int:
    case arrow.Type.Float:
    case arrow.Type.Decimal:
    case arrow.Type.Date:
    case arrow.Type.Time:
    case arrow.Type.Timestamp:
    case arrow.Type.Interval:
    case arrow.Type.Duration:
    case arrow.Type.FixedSizeBinary: {
      const { bits, nulls } = takeValidity(d, idx);
      return new arrow.Data(t, 0, m, nulls, [undefined, gatherFixed(d, idx), bits] as never);
    }
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
    case arrow.Type.LargeUtf8:
    case arrow.Type.LargeBinary: {
      const { bits, nulls } = takeValidity(d, idx);
      const { offsets, values } = gatherVarBinary(d, idx);
      return new arrow.Data(t, 0, m, nulls, [offsets, values, bits] as never);
    }
    case arrow.Type.List:
    case arrow.Type.LargeList:
    case arrow.Type.Map: {
      const { bits, nulls } = takeValidity(d, idx);
      const src = readOffsets(d);
      const large = !(d.valueOffsets instanceof Int32Array);
      let total = 0;
      for (let j = 0; j < m; j++) total += src[idx[j] + 1] - src[idx[j]];
      const childIdx = new Uint32Array(total);
      const offs = new Float64Array(m + 1);
      let pos = 0;
      for (let j = 0; j < m; j++) {
        const s = src[idx[j]];
        const e = src[idx[j] + 1];
        for (let k = s; k < e; k++) childIdx[pos++] = k;
        offs[j + 1] = pos;
      }
      const child = takeData(d.children[0], childIdx);
      return new arrow.Data(t, 0, m, nulls, [writeOffsets(offs, large), undefined, bits] as never, [
        child,
      ]);
    }
    case arrow.Type.FixedSizeList: {
      const { bits, nulls } = takeValidity(d, idx);
      const size = (t as arrow.FixedSizeList).listSize;
      const childIdx = new Uint32Array(m * size);
      for (let j = 0; j < m; j++) {
        const base = idx[j] * size;
        for (let k = 0; k < size; k++) childIdx[j * size + k] = base + k;
      }
      return new arrow.Data(t, 0, m, nulls, [undefined, undefined, bits] as never, [
        takeData(d.children[0], childIdx),
      ]);
    }
    case arrow.Type.Struct: {
      const { bits, nulls } = takeValidity(d, idx);
      const children = d.children.map((c) => takeData(c, idx));
      return new arrow.Data(t, 0, m, nulls, [undefined, undefined, bits] as never, children);
    }
    case arrow.Type.Dictionary: {
      const { bits, nulls } = takeValidity(d, idx);
      return new arrow.Data(
        t,
        0,
        m,
        nulls,
        [undefined, gatherFixed(d, idx), bits] as never,
        [],
        d.dictionary,
      );
    }
    default:
      return rebuild(t, m, (push) => {
        const v = arrow.makeVector(d);
        for (let j = 0; j < m; j++) push(v.get(idx[j]));
      });
  }
}

/** Bytes per row of a fixed-width Data, from its typed array and stride. */
function rowBytes(d: AnyData): number {
  const v = d.values as unknown as ArrayBufferView & { BYTES_PER_ELEMENT: number };
  return v.BYTES_PER_ELEMENT * d.stride;
}

function gatherFixed(d: AnyData, idx: Uint32Array): ArrayBufferView {
  const src = d.values as unknown as ArrayBufferView & {
    constructor: new (b: ArrayBuffer) => ArrayBufferView;
  };
  const width = rowBytes(d);
  const m = idx.length;
  const buf = new ArrayBuffer(m * width);
  if (width % 4 === 0 && src.byteOffset % 4 === 0) {
    const w = width / 4;
    const s = new Int32Array(src.buffer, src.byteOffset, src.byteLength >> 2);
    const o = new Int32Array(buf);
    if (w === 1) {
      for (let j = 0; j < m; j++) o[j] = s[idx[j]];
    } else if (w === 2) {
      for (let j = 0; j < m; j++) {
        const i = idx[j] << 1;
        o[j << 1] = s[i];
        o[(j << 1) + 1] = s[i + 1];
      }
    } else {
      for (let j = 0; j < m; j++) {
        const i = idx[j] * w;
        for (let k = 0; k < w; k++) o[j * w + k] = s[i + k];
      }
    }
  } else if (width === 2 && src.byteOffset % 2 === 0) {
    const s = new Uint16Array(src.buffer, src.byteOffset, src.byteLength >> 1);
    const o = new Uint16Array(buf);
    for (let j = 0; j < m; j++) o[j] = s[idx[j]];
  } else {
    const s = new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
    const o = new Uint8Array(buf);
    for (let j = 0; j < m; j++) {
      const i = idx[j] * width;
      for (let k = 0; k < width; k++) o[j * width + k] = s[i + k];
    }
  }
  return new src.constructor(buf);
}

/** Value offsets as plain numbers (64-bit offsets read through their 32-bit halves). */
function readOffsets(d: AnyData): Int32Array | Float64Array {
  const o = d.valueOffsets as Int32Array | BigInt64Array;
  if (o instanceof Int32Array) return o;
  const w = new Int32Array(o.buffer, o.byteOffset, o.length * 2);
  const out = new Float64Array(o.length);
  for (let i = 0; i < o.length; i++) out[i] = (w[2 * i] >>> 0) + w[2 * i + 1] * 4294967296;
  return out;
}

function writeOffsets(offs: Float64Array, large: boolean): Int32Array | BigInt64Array {
  if (!large) {
    const out = new Int32Array(offs.length);
    for (let i = 0; i < offs.length; i++) out[i] = offs[i];
    return out;
  }
  const out = new BigInt64Array(offs.length);
  const w = new Int32Array(out.buffer);
  for (let i = 0; i < offs.length; i++) {
    const v = offs[i];
    w[2 * i] = v % 4294967296;
    w[2 * i + 1] = Math.floor(v / 4294967296);
  }
  return out;
}

function gatherVarBinary(d: AnyData, idx: Uint32Array) {
  const src = readOffsets(d);
  const bytes = d.values as Uint8Array;
  const large = !(d.valueOffsets instanceof Int32Array);
  const m = idx.length;
  let total = 0;
  for (let j = 0; j < m; j++) total += src[idx[j] + 1] - src[idx[j]];
  const values = new Uint8Array(total);
  let pos = 0;
  if (large) {
    const offs = new Float64Array(m + 1);
    for (let j = 0; j < m; j++) {
      const s = src[idx[j]];
      const e = src[idx[j] + 1];
      values.set(bytes.subarray(s, e), pos);
      pos += e - s;
      offs[j + 1] = pos;
    }
    return { offsets: writeOffsets(offs, true), values };
  }
  const offsets = new Int32Array(m + 1);
  for (let j = 0; j < m; j++) {
    const s = src[idx[j]];
    const e = src[idx[j] + 1];
    // A call to set() costs more than copying a short string byte by byte.
    if (e - s < 24) {
      for (let k = s; k < e; k++) values[pos++] = bytes[k];
    } else {
      values.set(bytes.subarray(s, e), pos);
      pos += e - s;
    }
    offsets[j + 1] = pos;
  }
  return { offsets, values };
}

/** Builder-based fallback for types without a hand-written path (unions, view types). */
function rebuild(
  type: arrow.DataType,
  length: number,
  fill: (push: (v: unknown) => void) => void,
): AnyData {
  const builder = arrow.makeBuilder({ type, nullValues: [null, undefined] });
  fill((v) => builder.append(v as never));
  const data = builder.finish().flush();
  if (data.length !== length) throw new Error(`rebuild: expected ${length} rows`);
  return data;
}

// ---------------------------------------------------------------------------------------------
// concat

/** All rows of `parts` (same type) in one Data. */
export function concatData(parts: AnyData[]): AnyData {
  const t = parts[0].type;
  if (parts.length === 1) return parts[0];
  const n = parts.reduce((s, p) => s + p.length, 0);
  const { bits, nulls } = concatValidity(parts, n);
  switch (t.typeId) {
    case arrow.Type.Null:
      return new arrow.Data(t, 0, n, n);
    case arrow.Type.Bool: {
      const out = new Uint8Array((n + 7) >> 3);
      let pos = 0;
      for (const p of parts) {
        copyBits(p.values as Uint8Array, p.offset, out, pos, p.length);
        pos += p.length;
      }
      return new arrow.Data(t, 0, n, nulls, [undefined, out, bits] as never);
    }
    case arrow.Type.Int:
    case arrow.Type.Float:
    case arrow.Type.Decimal:
    case arrow.Type.Date:
    case arrow.Type.Time:
    case arrow.Type.Timestamp:
    case arrow.Type.Interval:
    case arrow.Type.Duration:
    case arrow.Type.FixedSizeBinary:
      return new arrow.Data(t, 0, n, nulls, [undefined, concatFixed(parts, n), bits] as never);
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
    case arrow.Type.LargeUtf8:
    case arrow.Type.LargeBinary: {
      const large = !(parts[0].valueOffsets instanceof Int32Array);
      const offs = new Float64Array(n + 1);
      const chunks: Uint8Array[] = [];
      let row = 0;
      let base = 0;
      for (const p of parts) {
        const o = readOffsets(p);
        const first = o[0];
        for (let i = 1; i <= p.length; i++) offs[row + i] = base + (o[i] - first);
        chunks.push((p.values as Uint8Array).subarray(first, o[p.length]));
        base += o[p.length] - first;
        row += p.length;
      }
      const values = new Uint8Array(base);
      let pos = 0;
      for (const c of chunks) {
        values.set(c, pos);
        pos += c.length;
      }
      return new arrow.Data(t, 0, n, nulls, [writeOffsets(offs, large), values, bits] as never);
    }
    case arrow.Type.List:
    case arrow.Type.LargeList:
    case arrow.Type.Map: {
      const large = !(parts[0].valueOffsets instanceof Int32Array);
      const offs = new Float64Array(n + 1);
      const children: AnyData[] = [];
      let row = 0;
      let base = 0;
      for (const p of parts) {
        const o = readOffsets(p);
        const first = o[0];
        for (let i = 1; i <= p.length; i++) offs[row + i] = base + (o[i] - first);
        children.push(p.children[0].slice(first, o[p.length] - first));
        base += o[p.length] - first;
        row += p.length;
      }
      return new arrow.Data(t, 0, n, nulls, [writeOffsets(offs, large), undefined, bits] as never, [
        concatData(children),
      ]);
    }
    case arrow.Type.FixedSizeList: {
      const size = (t as arrow.FixedSizeList).listSize;
      const child = concatData(parts.map((p) => p.children[0].slice(0, p.length * size)));
      return new arrow.Data(t, 0, n, nulls, [undefined, undefined, bits] as never, [child]);
    }
    case arrow.Type.Struct: {
      const children = t.children.map((_, k) =>
        concatData(parts.map((p) => fitLength(p.children[k], p.length))),
      );
      return new arrow.Data(t, 0, n, nulls, [undefined, undefined, bits] as never, children);
    }
    case arrow.Type.Dictionary: {
      if (parts.every((p) => p.dictionary === parts[0].dictionary)) {
        return new arrow.Data(
          t,
          0,
          n,
          nulls,
          [undefined, concatFixed(parts, n), bits] as never,
          [],
          parts[0].dictionary,
        );
      }
      return rebuild(t, n, (push) => {
        for (const p of parts) {
          const v = arrow.makeVector(p);
          for (let i = 0; i < p.length; i++) push(v.get(i));
        }
      });
    }
    default:
      return rebuild(t, n, (push) => {
        for (const p of parts) {
          const v = arrow.makeVector(p);
          for (let i = 0; i < p.length; i++) push(v.get(i));
        }
      });
  }
}

function fitLength(d: AnyData, n: number): AnyData {
  return d.length === n ? d : d.slice(0, n);
}

function concatValidity(parts: AnyData[], n: number): { bits?: Uint8Array; nulls: number } {
  if (!parts.some(hasNulls)) return { nulls: 0 };
  const out = new Uint8Array((n + 7) >> 3);
  let pos = 0;
  let nulls = 0;
  for (const p of parts) {
    if (hasNulls(p)) {
      copyBits(p.nullBitmap, p.offset, out, pos, p.length);
      nulls += p.nullCount;
    } else {
      setBits(out, pos, p.length);
    }
    pos += p.length;
  }
  return { bits: out, nulls };
}

function copyBits(src: Uint8Array, srcBit: number, dst: Uint8Array, dstBit: number, n: number) {
  if ((srcBit & 7) === 0 && (dstBit & 7) === 0) {
    const whole = n >> 3;
    dst.set(src.subarray(srcBit >> 3, (srcBit >> 3) + whole), dstBit >> 3);
    for (let i = whole << 3; i < n; i++) {
      if (isValidAt(src, srcBit + i)) dst[(dstBit + i) >> 3] |= 1 << ((dstBit + i) & 7);
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    if (isValidAt(src, srcBit + i)) dst[(dstBit + i) >> 3] |= 1 << ((dstBit + i) & 7);
  }
}

function setBits(dst: Uint8Array, from: number, n: number): void {
  let i = 0;
  while (i < n && ((from + i) & 7) !== 0) {
    dst[(from + i) >> 3] |= 1 << ((from + i) & 7);
    i++;
  }
  const fullBytes = (n - i) >> 3;
  dst.fill(0xff, (from + i) >> 3, ((from + i) >> 3) + fullBytes);
  i += fullBytes << 3;
  for (; i < n; i++) dst[(from + i) >> 3] |= 1 << ((from + i) & 7);
}

function concatFixed(parts: AnyData[], n: number): ArrayBufferView {
  const width = rowBytes(parts[0]);
  const buf = new Uint8Array(n * width);
  let pos = 0;
  for (const p of parts) {
    const v = p.values as unknown as ArrayBufferView;
    buf.set(new Uint8Array(v.buffer, v.byteOffset, p.length * width), pos);
    pos += p.length * width;
  }
  const ctor = (
    parts[0].values as unknown as { constructor: new (b: ArrayBuffer) => ArrayBufferView }
  ).constructor;
  return new ctor(buf.buffer);
}

// ---------------------------------------------------------------------------------------------
// null and constant columns

/** `n` rows of nulls (or, with nullable=false, of zero values, used for batch-level structs). */
function nullData(t: arrow.DataType, n: number, nullable: boolean): AnyData {
  const bits = nullable ? new Uint8Array((n + 7) >> 3) : undefined;
  const nulls = nullable ? n : 0;
  switch (t.typeId) {
    case arrow.Type.Null:
      return new arrow.Data(t, 0, n, n);
    case arrow.Type.Bool:
      return new arrow.Data(t, 0, n, nulls, [
        undefined,
        new Uint8Array((n + 7) >> 3),
        bits,
      ] as never);
    case arrow.Type.Int:
    case arrow.Type.Float:
    case arrow.Type.Decimal:
    case arrow.Type.Date:
    case arrow.Type.Time:
    case arrow.Type.Timestamp:
    case arrow.Type.Interval:
    case arrow.Type.Duration:
    case arrow.Type.FixedSizeBinary:
    case arrow.Type.Dictionary: {
      const ArrayType = (
        arrow.DataType.isDictionary(t) ? t.indices.ArrayType : t.ArrayType
      ) as new (
        n: number,
      ) => ArrayBufferView;
      const stride = arrow.DataType.isDictionary(t) ? 1 : strideOf(t);
      const values = new ArrayType(n * stride);
      const dictionary = arrow.DataType.isDictionary(t)
        ? arrow.makeVector(nullData(t.dictionary, 0, true))
        : undefined;
      return new arrow.Data(t, 0, n, nulls, [undefined, values, bits] as never, [], dictionary);
    }
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      return new arrow.Data(t, 0, n, nulls, [
        new Int32Array(n + 1),
        new Uint8Array(0),
        bits,
      ] as never);
    case arrow.Type.LargeUtf8:
    case arrow.Type.LargeBinary:
      return new arrow.Data(t, 0, n, nulls, [
        new BigInt64Array(n + 1),
        new Uint8Array(0),
        bits,
      ] as never);
    case arrow.Type.List:
    case arrow.Type.Map:
      return new arrow.Data(t, 0, n, nulls, [new Int32Array(n + 1), undefined, bits] as never, [
        nullData(t.children[0].type, 0, true),
      ]);
    case arrow.Type.LargeList:
      return new arrow.Data(t, 0, n, nulls, [new BigInt64Array(n + 1), undefined, bits] as never, [
        nullData(t.children[0].type, 0, true),
      ]);
    case arrow.Type.FixedSizeList:
      return new arrow.Data(t, 0, n, nulls, [undefined, undefined, bits] as never, [
        nullData(t.children[0].type, n * (t as arrow.FixedSizeList).listSize, true),
      ]);
    case arrow.Type.Struct:
      return new arrow.Data(
        t,
        0,
        n,
        nulls,
        [undefined, undefined, bits] as never,
        t.children.map((c) => nullData(c.type, n, true)),
      );
    default:
      return rebuild(t, n, (push) => {
        for (let i = 0; i < n; i++) push(null);
      });
  }
}

function strideOf(t: arrow.DataType): number {
  // Same rule as Arrow JS's internal strideForType for the fixed-width types used here.
  if (arrow.DataType.isDecimal(t)) return t.bitWidth / 32;
  if (arrow.DataType.isFixedSizeBinary(t)) return t.byteWidth;
  if (arrow.DataType.isInterval(t))
    return t.unit === arrow.IntervalUnit.MONTH_DAY_NANO ? 4 : 1 + t.unit;
  return 1;
}

function constantData(t: arrow.DataType, value: unknown, n: number): AnyData {
  if (value === null || value === undefined) return nullData(t, n, true);
  const one = scalarData(t, value);
  return takeData(one, new Uint32Array(n));
}

/** A one-row Data holding `value` in type `t`. */
function scalarData(t: arrow.DataType, value: unknown): AnyData {
  switch (t.typeId) {
    case arrow.Type.Int: {
      const it = t as arrow.Int;
      const values = new (it.ArrayType as new (n: number) => ArrayLike<number | bigint>)(1) as {
        [i: number]: number | bigint;
      };
      values[0] = it.bitWidth === 64 ? BigInt(value as number | bigint) : Number(value);
      return new arrow.Data(t, 0, 1, 0, [undefined, values, undefined] as never);
    }
    case arrow.Type.Float: {
      const ft = t as arrow.Float;
      if (ft.precision === arrow.Precision.HALF) break;
      const values =
        ft.precision === arrow.Precision.SINGLE ? new Float32Array(1) : new Float64Array(1);
      values[0] = Number(value);
      return new arrow.Data(t, 0, 1, 0, [undefined, values, undefined] as never);
    }
    case arrow.Type.Bool:
      return new arrow.Data(t, 0, 1, 0, [
        undefined,
        Uint8Array.of(value ? 1 : 0),
        undefined,
      ] as never);
    case arrow.Type.Utf8:
    case arrow.Type.LargeUtf8:
    case arrow.Type.Binary:
    case arrow.Type.LargeBinary: {
      const bytes = value instanceof Uint8Array ? value : new TextEncoder().encode(String(value));
      const large = t.typeId === arrow.Type.LargeUtf8 || t.typeId === arrow.Type.LargeBinary;
      const offsets = large
        ? BigInt64Array.of(0n, BigInt(bytes.length))
        : Int32Array.of(0, bytes.length);
      return new arrow.Data(t, 0, 1, 0, [offsets, bytes, undefined] as never);
    }
    case arrow.Type.Date: {
      const dt = t as arrow.Date_;
      const days = toEpochDays(value);
      const values =
        dt.unit === arrow.DateUnit.DAY
          ? Int32Array.of(days)
          : BigInt64Array.of(BigInt(days) * BigInt(MILLIS_PER_DAY));
      return new arrow.Data(t, 0, 1, 0, [undefined, values, undefined] as never);
    }
    case arrow.Type.Timestamp: {
      const tt = t as arrow.Timestamp;
      return new arrow.Data(t, 0, 1, 0, [
        undefined,
        BigInt64Array.of(
          toTimestampUnits(value, tt.unit, tt.timezone === null || tt.timezone === undefined),
        ),
        undefined,
      ] as never);
    }
    case arrow.Type.Decimal: {
      const dt = t as arrow.Decimal;
      const unscaled = toUnscaled(value, dt.precision, dt.scale);
      const words = new Uint32Array(dt.bitWidth / 32);
      let v = BigInt.asUintN(dt.bitWidth, unscaled);
      for (let k = 0; k < words.length; k++) {
        words[k] = Number(v & 0xffffffffn);
        v >>= 32n;
      }
      return new arrow.Data(t, 0, 1, 0, [undefined, words, undefined] as never);
    }
    default:
      break;
  }
  return rebuild(t, 1, (push) => push(value));
}

function toEpochDays(value: unknown): number {
  if (typeof value === "number") return value;
  if (value instanceof Date) return Math.floor(value.getTime() / MILLIS_PER_DAY);
  const days = typeof value === "string" ? parseDate(value) : undefined;
  if (days === undefined) throw new TypeError(`Not a date: ${String(value)}`);
  return days;
}

/** A timestamp in `unit`; text is read as Spark casts it (UTC without a zone; NTZ drops one). */
function toTimestampUnits(value: unknown, unit: arrow.TimeUnit, ntz: boolean): bigint {
  if (typeof value === "bigint") return value;
  let micros: bigint;
  if (typeof value === "number" || value instanceof Date) {
    const ms = typeof value === "number" ? value : value.getTime();
    const wholeMs = Math.floor(ms);
    micros = BigInt(wholeMs) * 1000n + BigInt(Math.round((ms - wholeMs) * 1000));
  } else {
    const parsed = typeof value === "string" ? parseTimestamp(value, ntz) : undefined;
    if (parsed === undefined) throw new TypeError(`Not a timestamp: ${String(value)}`);
    micros = BigInt(parsed);
  }
  switch (unit) {
    case arrow.TimeUnit.SECOND:
      return floorDiv(micros, 1_000_000n);
    case arrow.TimeUnit.MILLISECOND:
      return floorDiv(micros, 1000n);
    case arrow.TimeUnit.MICROSECOND:
      return micros;
    default:
      return micros * 1000n;
  }
}

function toUnscaled(value: unknown, precision: number, scale: number): bigint {
  if (value instanceof DecimalValue) return rescale(value.unscaled, value.scale, scale);
  if (typeof value === "bigint") return value;
  const text = typeof value === "number" ? value.toFixed(scale) : String(value);
  const unscaled = parseDecimal(text, precision, scale);
  if (typeof unscaled === "string")
    throw new TypeError(`Not a decimal(${precision},${scale}): ${text}`);
  return BigInt(unscaled);
}
