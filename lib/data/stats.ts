/**
 * Delta file statistics (`add.stats`) computed from the Arrow table written to a data file,
 * following Delta Spark (StatisticsCollection.statsCollector):
 * - min/max only for numbers, decimals, dates, timestamps (incl. NTZ) and strings; booleans,
 *   binary, arrays and maps get a null count only;
 * - a nested leaf counts as null where any enclosing struct is null;
 * - strings are compared as UTF-8 bytes (Spark's UTF8String order); min keeps the first 32 code
 *   points, max keeps 32 UTF-16 units plus any following chars >= U+FFFD and then appends U+FFFD,
 *   so it stays an upper bound;
 * - timestamps are floored to milliseconds for min and max alike (Spark's readers widen max by
 *   1 ms); NaN is the largest double, as in Spark's ordering;
 * - the first 32 leaf columns in schema order, or the named ones.
 * Inner loops read Arrow buffers and validity bitmaps directly; only winning values become JS
 * values, so there is no per-row allocation.
 */

import * as arrow from "apache-arrow";
import { MILLIS_PER_DAY } from "../values/calendar.ts";
import { formatDate, formatTimestamp as formatMicros } from "../values/datetime-text.ts";
import { rescale } from "../values/decimal-scale.ts";
import { javaDecimalString } from "../values/decimal-text.ts";
import { shortestFloat32 } from "../values/float-text.ts";
import { floorDiv } from "../values/floor-div.ts";

/** An exact decimal; serializes the way Java's BigDecimal.toString does (Spark's JSON). */
export class DecimalValue {
  readonly unscaled: bigint;
  readonly scale: number;

  constructor(unscaled: bigint, scale: number) {
    this.unscaled = unscaled;
    this.scale = scale;
  }

  /** `9.50`, `0E-10`, `5.925E-9`: plain unless the adjusted exponent is below -6. */
  toString(): string {
    return javaDecimalString(this.unscaled, this.scale);
  }

  toNumber(): number {
    return Number(this.toString());
  }

  valueOf(): number {
    return this.toNumber();
  }

  toJSON(): number {
    return this.toNumber();
  }

  /** Numeric comparison, scales may differ. */
  compareTo(other: DecimalValue): number {
    let a = this.unscaled;
    let b = other.unscaled;
    if (this.scale < other.scale) a = rescale(a, this.scale, other.scale);
    else if (other.scale < this.scale) b = rescale(b, other.scale, this.scale);
    return a < b ? -1 : a > b ? 1 : 0;
  }
}

/**
 * A min or max in Delta statistics: number (byte/short/int/float/double, and long within
 * +-2^53), bigint (long beyond that), DecimalValue, string (strings; dates "YYYY-MM-DD";
 * timestamps "…T…:ss.SSSZ", without the Z for TIMESTAMP_NTZ). Parquet footers may also carry
 * booleans and raw binary.
 */
export type StatValue = number | bigint | string | boolean | DecimalValue | Uint8Array;

/** Nested by struct field, keyed by the Arrow field names of the table the stats were taken on. */
export interface StatsTree {
  [name: string]: StatValue | StatsTree;
}

export interface DeltaFileStats {
  numRecords: number;
  minValues: Record<string, unknown>;
  maxValues: Record<string, unknown>;
  nullCount: Record<string, unknown>;
  tightBounds: boolean;
}

export interface ComputeStatsOptions {
  /** Leaf columns to index in schema order (`delta.dataSkippingNumIndexedCols`); -1 = all. */
  numIndexedCols?: number;
  /**
   * Columns to index instead (`delta.dataSkippingStatsColumns`), matched case-insensitively
   * against field names: a string names a top-level column, an array is a path into structs.
   * A struct selects all its leaves. Takes precedence over numIndexedCols.
   */
  columnNames?: ReadonlyArray<string | readonly string[]>;
  /** `spark.databricks.delta.stats.skipping.stringPrefixLength`, default 32. */
  stringPrefixLength?: number;
  /** Default true: stats taken on the rows actually in the file. */
  tightBounds?: boolean;
}

/** Dates and timestamps beyond this many days from the epoch get no bound (Java's Date range). */
const STAT_DAYS_LIMIT = 100_000_000;

export function formatDays(days: number): string | undefined {
  return Math.abs(days) <= STAT_DAYS_LIMIT ? formatDate(days) : undefined;
}

/** ISO-8601 with milliseconds, as Delta writes timestamp bounds; UTC ("Z") or, for NTZ, no zone. */
export function formatTimestamp(ms: number, utc: boolean): string | undefined {
  if (!(Math.abs(ms) <= STAT_DAYS_LIMIT * MILLIS_PER_DAY)) return undefined;
  const micros = formatMicros(BigInt(ms) * 1000n, false);
  return `${micros.slice(0, -3)}${utc ? "Z" : ""}`;
}

/** A signed 64-bit integer from its little-endian 32-bit halves. */
export function int64FromWords(lo: number, hi: number): bigint {
  return (BigInt(hi | 0) << 32n) | BigInt(lo >>> 0);
}

const MAX_SAFE = 9007199254740991n;

function int64Value(v: bigint): number | bigint {
  return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : v;
}

// ---------------------------------------------------------------------------------------------
// Column selection

interface Selected {
  name: string;
  index: number;
  type: arrow.DataType;
  /** Present for structs: the selected children (possibly a truncated subset). */
  children?: Selected[];
}

function selectColumns(schema: arrow.Schema, opts: ComputeStatsOptions): Selected[] {
  const all = (fields: readonly arrow.Field[]): Selected[] =>
    fields.map((f, index) =>
      arrow.DataType.isStruct(f.type)
        ? { name: f.name, index, type: f.type, children: all(f.type.children) }
        : { name: f.name, index, type: f.type },
    );
  if (opts.columnNames) {
    const paths = opts.columnNames.map((c) =>
      (typeof c === "string" ? [c] : [...c]).map((p) => p.toLowerCase()),
    );
    return filterByPaths(schema.fields, paths);
  }
  const n = opts.numIndexedCols ?? 32;
  if (n < 0) return all(schema.fields);
  return truncateLeaves(schema.fields, n).selected;
}

function truncateLeaves(
  fields: readonly arrow.Field[],
  budget: number,
): { selected: Selected[]; used: number } {
  const selected: Selected[] = [];
  let used = 0;
  for (let index = 0; index < fields.length && used < budget; index++) {
    const f = fields[index];
    if (arrow.DataType.isStruct(f.type)) {
      const inner = truncateLeaves(f.type.children, budget - used);
      used += inner.used;
      selected.push({ name: f.name, index, type: f.type, children: inner.selected });
    } else {
      used++;
      selected.push({ name: f.name, index, type: f.type });
    }
  }
  return { selected, used };
}

function filterByPaths(fields: readonly arrow.Field[], paths: string[][]): Selected[] {
  const out: Selected[] = [];
  fields.forEach((f, index) => {
    const lower = f.name.toLowerCase();
    const mine = paths.filter((p) => p[0] === lower);
    if (mine.length === 0) return;
    if (mine.some((p) => p.length === 1)) {
      out.push(
        arrow.DataType.isStruct(f.type)
          ? {
              name: f.name,
              index,
              type: f.type,
              children: filterByPaths(
                f.type.children,
                f.type.children.map((c) => [c.name.toLowerCase()]),
              ),
            }
          : { name: f.name, index, type: f.type },
      );
      return;
    }
    if (!arrow.DataType.isStruct(f.type)) return;
    out.push({
      name: f.name,
      index,
      type: f.type,
      children: filterByPaths(
        f.type.children,
        mine.map((p) => p.slice(1)),
      ),
    });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Validity helpers

/** A validity bitmap and the bit where row 0 sits; undefined = every row valid. */
interface Validity {
  bits: Uint8Array;
  offset: number;
}

const POPCOUNT = new Uint8Array(256);
for (let i = 1; i < 256; i++) POPCOUNT[i] = (i & 1) + POPCOUNT[i >> 1];

function countValid(v: Validity, n: number): number {
  const { bits, offset } = v;
  let count = 0;
  let i = 0;
  // Leading bits until the bit position is byte-aligned.
  while (i < n && ((offset + i) & 7) !== 0) {
    const b = offset + i;
    count += (bits[b >> 3] >> (b & 7)) & 1;
    i++;
  }
  let byte = (offset + i) >> 3;
  for (; i + 8 <= n; i += 8) count += POPCOUNT[bits[byte++]];
  for (; i < n; i++) {
    const b = offset + i;
    count += (bits[b >> 3] >> (b & 7)) & 1;
  }
  return count;
}

function ownValidity(data: arrow.Data): Validity | undefined {
  if (data.nullCount <= 0 || !data.nullBitmap || data.nullBitmap.length === 0) return undefined;
  return { bits: data.nullBitmap, offset: data.offset };
}

/** Validity of a child given its parent's: valid only where both are. */
function andValidity(parent: Validity | undefined, own: Validity | undefined, n: number) {
  if (!parent) return own;
  if (!own) return parent;
  const out = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) {
    const a = parent.offset + i;
    const b = own.offset + i;
    if ((parent.bits[a >> 3] >> (a & 7)) & (own.bits[b >> 3] >> (b & 7)) & 1)
      out[i >> 3] |= 1 << (i & 7);
  }
  return { bits: out, offset: 0 };
}

// ---------------------------------------------------------------------------------------------
// Accumulators: one per selected leaf, fed batch by batch.

interface Acc {
  nulls: number;
  /** Feeds one chunk's rows; `valid` already includes enclosing structs. */
  add(data: arrow.Data, valid: Validity | undefined): void;
  min(): StatValue | undefined;
  max(): StatValue | undefined;
}

class NullCountAcc implements Acc {
  nulls = 0;
  add(data: arrow.Data, valid: Validity | undefined): void {
    if (valid) this.nulls += data.length - countValid(valid, data.length);
  }
  min(): undefined {
    return undefined;
  }
  max(): undefined {
    return undefined;
  }
}

type NumArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

/** Integers up to 32 bits and day dates: plain number compares. */
class SmallIntAcc implements Acc {
  nulls = 0;
  lo = Number.POSITIVE_INFINITY;
  hi = Number.NEGATIVE_INFINITY;
  constructor(private readonly finish: (v: number) => StatValue | undefined) {}

  add(data: arrow.Data, valid: Validity | undefined): void {
    const values = data.values as NumArray;
    const n = data.length;
    let lo = this.lo;
    let hi = this.hi;
    if (!valid) {
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    } else {
      const { bits, offset } = valid;
      let validCount = 0;
      for (let i = 0; i < n; i++) {
        const b = offset + i;
        if (((bits[b >> 3] >> (b & 7)) & 1) === 0) continue;
        validCount++;
        const v = values[i];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      this.nulls += n - validCount;
    }
    this.lo = lo;
    this.hi = hi;
  }
  min() {
    return this.lo <= this.hi ? this.finish(this.lo) : undefined;
  }
  max() {
    return this.lo <= this.hi ? this.finish(this.hi) : undefined;
  }
}

/** Float32/Float64 with Spark's ordering: NaN above everything, so max is NaN if any is. */
class FloatAcc implements Acc {
  nulls = 0;
  lo = Number.POSITIVE_INFINITY;
  hi = Number.NEGATIVE_INFINITY;
  seen = false;
  nan = false;
  constructor(private readonly single: boolean) {}

  add(data: arrow.Data, valid: Validity | undefined): void {
    const values = data.values as Float64Array | Float32Array;
    const n = data.length;
    let lo = this.lo;
    let hi = this.hi;
    let nan = this.nan;
    let seen = this.seen;
    if (!valid) {
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        if (Number.isNaN(v)) nan = true;
      }
      if (n > 0) seen = true;
    } else {
      const { bits, offset } = valid;
      let validCount = 0;
      for (let i = 0; i < n; i++) {
        const b = offset + i;
        if (((bits[b >> 3] >> (b & 7)) & 1) === 0) continue;
        validCount++;
        const v = values[i];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        if (Number.isNaN(v)) nan = true;
      }
      this.nulls += n - validCount;
      if (validCount > 0) seen = true;
    }
    this.lo = lo;
    this.hi = hi;
    this.nan = nan;
    this.seen = seen;
  }
  private out(v: number): number {
    return this.single ? shortestFloat32(v) : v;
  }
  min() {
    if (!this.seen) return undefined;
    return this.lo <= this.hi ? this.out(this.lo) : Number.NaN;
  }
  max() {
    if (!this.seen) return undefined;
    return this.nan ? Number.NaN : this.out(this.hi);
  }
}

/**
 * 64-bit integers (long, timestamps, millisecond dates) compared on their 32-bit halves, which
 * avoids creating a BigInt per row.
 */
class Int64Acc implements Acc {
  nulls = 0;
  has = false;
  loHi = 0;
  loLo = 0;
  hiHi = 0;
  hiLo = 0;
  constructor(
    private readonly unsigned: boolean,
    private readonly finish: (v: bigint) => StatValue | undefined,
  ) {}

  add(data: arrow.Data, valid: Validity | undefined): void {
    const src = data.values as BigInt64Array;
    const n = data.length;
    const words = new Int32Array(src.buffer, src.byteOffset, n * 2);
    // Unsigned compare of the high word: flip the sign bit, then compare signed.
    const flip = this.unsigned ? 0x80000000 | 0 : 0;
    let has = this.has;
    let minH = this.loHi;
    let minL = this.loLo;
    let maxH = this.hiHi;
    let maxL = this.hiLo;
    let validCount = 0;
    const bits = valid?.bits;
    const off = valid?.offset ?? 0;
    for (let i = 0; i < n; i++) {
      if (bits) {
        const b = off + i;
        if (((bits[b >> 3] >> (b & 7)) & 1) === 0) continue;
      }
      validCount++;
      const h = words[2 * i + 1] ^ flip;
      const l = words[2 * i] >>> 0;
      if (!has) {
        minH = maxH = h;
        minL = maxL = l;
        has = true;
        continue;
      }
      if (h < minH || (h === minH && l < minL)) {
        minH = h;
        minL = l;
      }
      if (h > maxH || (h === maxH && l > maxL)) {
        maxH = h;
        maxL = l;
      }
    }
    if (bits) this.nulls += n - validCount;
    this.has = has;
    this.loHi = minH;
    this.loLo = minL;
    this.hiHi = maxH;
    this.hiLo = maxL;
  }
  private value(h: number, l: number): bigint {
    if (this.unsigned) return (BigInt((h ^ (0x80000000 | 0)) >>> 0) << 32n) | BigInt(l);
    return int64FromWords(l, h);
  }
  min() {
    return this.has ? this.finish(this.value(this.loHi, this.loLo)) : undefined;
  }
  max() {
    return this.has ? this.finish(this.value(this.hiHi, this.hiLo)) : undefined;
  }
}

/** Decimal128/256: little-endian 32-bit words, the top one signed. */
class DecimalAcc implements Acc {
  nulls = 0;
  minWords: Uint32Array | undefined;
  maxWords: Uint32Array | undefined;
  constructor(
    private readonly stride: number,
    private readonly scale: number,
  ) {}

  add(data: arrow.Data, valid: Validity | undefined): void {
    const w = data.values as Uint32Array;
    const s = this.stride;
    const n = data.length;
    let minAt = -1;
    let maxAt = -1;
    let validCount = 0;
    const bits = valid?.bits;
    const off = valid?.offset ?? 0;
    for (let i = 0; i < n; i++) {
      if (bits) {
        const b = off + i;
        if (((bits[b >> 3] >> (b & 7)) & 1) === 0) continue;
      }
      validCount++;
      if (minAt < 0) {
        minAt = maxAt = i;
        continue;
      }
      if (cmpDecimal(w, i * s, w, minAt * s, s) < 0) minAt = i;
      else if (cmpDecimal(w, i * s, w, maxAt * s, s) > 0) maxAt = i;
    }
    if (bits) this.nulls += n - validCount;
    if (minAt < 0) return;
    const lo = w.slice(minAt * s, minAt * s + s);
    const hi = w.slice(maxAt * s, maxAt * s + s);
    if (!this.minWords || cmpDecimal(lo, 0, this.minWords, 0, s) < 0) this.minWords = lo;
    if (!this.maxWords || cmpDecimal(hi, 0, this.maxWords, 0, s) > 0) this.maxWords = hi;
  }
  private value(words: Uint32Array): DecimalValue {
    let v = 0n;
    for (let k = words.length - 1; k >= 0; k--) v = (v << 32n) | BigInt(words[k]);
    if (words[words.length - 1] & 0x80000000) v -= 1n << BigInt(32 * words.length);
    return new DecimalValue(v, this.scale);
  }
  min() {
    return this.minWords && this.value(this.minWords);
  }
  max() {
    return this.maxWords && this.value(this.maxWords);
  }
}

function cmpDecimal(a: Uint32Array, ai: number, b: Uint32Array, bi: number, s: number): number {
  const top = s - 1;
  const ha = a[ai + top] | 0;
  const hb = b[bi + top] | 0;
  if (ha !== hb) return ha < hb ? -1 : 1;
  for (let k = top - 1; k >= 0; k--) {
    const x = a[ai + k];
    const y = b[bi + k];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

const utf8Decoder = new TextDecoder();

/** Strings compared as UTF-8 bytes; only the winners are copied and decoded. */
class StringAcc implements Acc {
  nulls = 0;
  minBytes: Uint8Array | undefined;
  maxBytes: Uint8Array | undefined;
  constructor(private readonly prefix: number) {}

  add(data: arrow.Data, valid: Validity | undefined): void {
    const bytes = data.values as Uint8Array;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const offsets = offsetsOf(data);
    const n = data.length;
    let minS = -1;
    let minE = -1;
    let maxS = -1;
    let maxE = -1;
    let validCount = 0;
    const bits = valid?.bits;
    const off = valid?.offset ?? 0;
    for (let i = 0; i < n; i++) {
      if (bits) {
        const b = off + i;
        if (((bits[b >> 3] >> (b & 7)) & 1) === 0) continue;
      }
      validCount++;
      const s = offsets[i];
      const e = offsets[i + 1];
      if (minS < 0) {
        minS = maxS = s;
        minE = maxE = e;
        continue;
      }
      if (cmpRange(view, bytes, s, e, minS, minE) < 0) {
        minS = s;
        minE = e;
      } else if (cmpRange(view, bytes, s, e, maxS, maxE) > 0) {
        maxS = s;
        maxE = e;
      }
    }
    if (bits) this.nulls += n - validCount;
    if (minS < 0) return;
    const lo = bytes.subarray(minS, minE);
    const hi = bytes.subarray(maxS, maxE);
    if (!this.minBytes || cmpBytes(lo, this.minBytes) < 0) this.minBytes = lo.slice();
    if (!this.maxBytes || cmpBytes(hi, this.maxBytes) > 0) this.maxBytes = hi.slice();
  }
  min() {
    return this.minBytes && truncateMin(utf8Decoder.decode(this.minBytes), this.prefix);
  }
  max() {
    return this.maxBytes && truncateMax(utf8Decoder.decode(this.maxBytes), this.prefix);
  }
}

/** Value offsets as 32-bit ints; large (64-bit) offsets are read through their low words. */
function offsetsOf(data: arrow.Data): Int32Array {
  const o = data.valueOffsets as Int32Array | BigInt64Array;
  if (o instanceof Int32Array) return o;
  const words = new Int32Array(o.buffer, o.byteOffset, o.length * 2);
  const out = new Int32Array(o.length);
  for (let i = 0; i < o.length; i++) out[i] = words[2 * i];
  return out;
}

/** Byte-wise order of two ranges of one buffer, four bytes (big-endian words) at a time. */
function cmpRange(
  view: DataView,
  b: Uint8Array,
  s1: number,
  e1: number,
  s2: number,
  e2: number,
): number {
  const l1 = e1 - s1;
  const l2 = e2 - s2;
  const n = Math.min(l1, l2);
  let k = 0;
  for (; k + 4 <= n; k += 4) {
    const x = view.getUint32(s1 + k);
    const y = view.getUint32(s2 + k);
    if (x !== y) return x < y ? -1 : 1;
  }
  for (; k < n; k++) {
    const x = b[s1 + k];
    const y = b[s2 + k];
    if (x !== y) return x - y;
  }
  return l1 - l2;
}

function cmpBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) if (a[k] !== b[k]) return a[k] - b[k];
  return a.length - b.length;
}

/** Spark's `substring(min, 0, prefix)`: the first `prefix` code points. */
export function truncateMin(s: string, prefix: number): string {
  if (s.length <= prefix) return s;
  let units = 0;
  for (let cps = 0; cps < prefix && units < s.length; cps++) {
    const c = s.charCodeAt(units);
    units += c >= 0xd800 && c <= 0xdbff && units + 1 < s.length ? 2 : 1;
  }
  return s.slice(0, units);
}

/**
 * Spark's truncateMaxStringAgg: keep `prefix` UTF-16 units, then every following char that is
 * >= U+FFFD, then append U+FFFD as a tie-breaker. Deviation, on purpose: a surrogate pair is
 * never split and supplementary chars count as >= U+FFFD, since in the UTF-8 byte order the
 * bound is compared in they sort above it (Spark's char-wise test can yield a max below the
 * real one there).
 */
export function truncateMax(s: string, prefix: number): string {
  if (s.length <= prefix) return s;
  let end = prefix;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end++;
  while (end < s.length) {
    const cp = s.codePointAt(end) as number;
    if (cp < 0xfffd) break;
    end += cp > 0xffff ? 2 : 1;
  }
  return `${s.slice(0, end)}\ufffd`;
}

function accFor(type: arrow.DataType, opts: ComputeStatsOptions): Acc {
  const prefix = opts.stringPrefixLength ?? 32;
  switch (type.typeId) {
    case arrow.Type.Int: {
      const t = type as arrow.Int;
      if (t.bitWidth === 64) return new Int64Acc(!t.isSigned, int64Value);
      return new SmallIntAcc((v) => v);
    }
    case arrow.Type.Float: {
      const t = type as arrow.Float;
      if (t.precision === arrow.Precision.HALF) return new NullCountAcc();
      return new FloatAcc(t.precision === arrow.Precision.SINGLE);
    }
    case arrow.Type.Decimal: {
      const t = type as arrow.Decimal;
      if (t.bitWidth < 128) return new NullCountAcc();
      return new DecimalAcc(t.bitWidth / 32, t.scale);
    }
    case arrow.Type.Date: {
      const t = type as arrow.Date_;
      if (t.unit === arrow.DateUnit.DAY) return new SmallIntAcc(formatDays);
      return new Int64Acc(false, (ms) => formatDays(Math.floor(Number(ms) / MILLIS_PER_DAY)));
    }
    case arrow.Type.Timestamp: {
      const t = type as arrow.Timestamp;
      const utc = t.timezone !== null && t.timezone !== undefined;
      const perMs = [1n, 1n, 1000n, 1_000_000n][t.unit];
      const timesMs = t.unit === arrow.TimeUnit.SECOND ? 1000n : 1n;
      return new Int64Acc(false, (v) => {
        return formatTimestamp(Number(floorDiv(v, perMs) * timesMs), utc);
      });
    }
    case arrow.Type.Utf8:
    case arrow.Type.LargeUtf8:
      return new StringAcc(prefix);
    default:
      return new NullCountAcc();
  }
}

// ---------------------------------------------------------------------------------------------

interface LeafPlan {
  kind: "leaf";
  sel: Selected;
  acc: Acc;
}

interface StructPlan {
  kind: "struct";
  sel: Selected;
  children: Plan[];
}

type Plan = LeafPlan | StructPlan;

function plan(selected: Selected[], opts: ComputeStatsOptions): Plan[] {
  return selected.map((sel) =>
    sel.children
      ? { kind: "struct", sel, children: plan(sel.children, opts) }
      : { kind: "leaf", sel, acc: accFor(dictionaryValueType(sel.type), opts) },
  );
}

function dictionaryValueType(t: arrow.DataType): arrow.DataType {
  return arrow.DataType.isDictionary(t) ? t.dictionary : t;
}

function feed(p: Plan, data: arrow.Data, parent: Validity | undefined): void {
  const valid = andValidity(parent, ownValidity(data), data.length);
  if (p.kind === "struct") {
    p.children.forEach((c) => {
      feed(c, data.children[c.sel.index], valid);
    });
    return;
  }
  if (arrow.DataType.isDictionary(data.type)) {
    feedDictionary(p.acc, data, valid);
    return;
  }
  p.acc.add(data, valid);
}

/**
 * Dictionary columns: nulls come from the indices; min/max from the dictionary entries that
 * valid rows actually reference.
 */
function feedDictionary(acc: Acc, data: arrow.Data, valid: Validity | undefined): void {
  const dict = data.dictionary?.data[0];
  const n = data.length;
  if (valid) acc.nulls += n - countValid(valid, n);
  if (!dict || dict.length === 0) return;
  const used = new Uint8Array((dict.length + 7) >> 3);
  const idx = data.values as NumArray | BigInt64Array;
  for (let i = 0; i < n; i++) {
    if (valid) {
      const b = valid.offset + i;
      if (((valid.bits[b >> 3] >> (b & 7)) & 1) === 0) continue;
    }
    const k = Number(idx[i]);
    used[k >> 3] |= 1 << (k & 7);
  }
  const dictValid = andValidity({ bits: used, offset: 0 }, ownValidity(dict), dict.length);
  const before = acc.nulls;
  acc.add(dict, dictValid);
  acc.nulls = before;
}

function collect(plans: Plan[], pick: (acc: Acc) => StatValue | number | undefined) {
  const out: StatsTree = {};
  for (const p of plans) {
    if (p.kind === "struct") {
      out[p.sel.name] = collect(p.children, pick);
      continue;
    }
    const v = pick(p.acc);
    if (v !== undefined) out[p.sel.name] = v;
  }
  return out;
}

/** Keeps only structs that contain at least one column eligible for min/max (as Spark does). */
function minMaxPlans(plans: Plan[]): Plan[] {
  const out: Plan[] = [];
  for (const p of plans) {
    if (p.kind === "struct") {
      const children = minMaxPlans(p.children);
      if (children.length > 0) out.push({ ...p, children });
    } else if (!(p.acc instanceof NullCountAcc)) {
      out.push(p);
    }
  }
  return out;
}

function nullCountPlans(plans: Plan[]): Plan[] {
  const out: Plan[] = [];
  for (const p of plans) {
    if (p.kind === "struct") {
      const children = nullCountPlans(p.children);
      if (children.length > 0) out.push({ ...p, children });
    } else out.push(p);
  }
  return out;
}

/** Statistics of `table` as Delta Spark would write them into `add.stats`. */
export function computeFileStats(
  table: arrow.Table,
  opts: ComputeStatsOptions = {},
): DeltaFileStats {
  const plans = plan(selectColumns(table.schema, opts), opts);
  for (const batch of table.batches) {
    for (const p of plans) feed(p, batch.data.children[p.sel.index], undefined);
  }
  const mm = minMaxPlans(plans);
  return {
    numRecords: table.numRows,
    minValues: collect(mm, (a) => a.min()),
    maxValues: collect(mm, (a) => a.max()),
    nullCount: collect(nullCountPlans(plans), (a) => a.nulls),
    tightBounds: opts.tightBounds ?? true,
  };
}

// ---------------------------------------------------------------------------------------------
// Serialization

/**
 * The JSON string for `add.stats`, keys in Spark's order. Decimals keep their scale (`9.50`),
 * longs beyond 2^53 stay exact, NaN and infinities are quoted as Jackson writes them, and
 * absent (null) values are left out like Spark's to_json does.
 */
export function serializeStats(stats: DeltaFileStats): string {
  return (
    `{"numRecords":${stats.numRecords}` +
    `,"minValues":${jsonTree(stats.minValues)}` +
    `,"maxValues":${jsonTree(stats.maxValues)}` +
    `,"nullCount":${jsonTree(stats.nullCount)}` +
    `,"tightBounds":${stats.tightBounds ? "true" : "false"}}`
  );
}

function jsonTree(tree: Record<string, unknown>): string {
  let out = "{";
  let first = true;
  for (const key of Object.keys(tree)) {
    const v = jsonValue(tree[key]);
    if (v === undefined) continue;
    out += `${first ? "" : ","}${JSON.stringify(key)}:${v}`;
    first = false;
  }
  return `${out}}`;
}

function jsonValue(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  switch (typeof v) {
    case "number":
      if (Number.isNaN(v)) return '"NaN"';
      if (v === Number.POSITIVE_INFINITY) return '"Infinity"';
      if (v === Number.NEGATIVE_INFINITY) return '"-Infinity"';
      return JSON.stringify(v);
    case "bigint":
      return v.toString();
    case "string":
      return JSON.stringify(v);
    case "boolean":
      return v ? "true" : "false";
    case "object":
      if (v instanceof DecimalValue) return v.toString();
      if (v instanceof Uint8Array) return undefined;
      return jsonTree(v as Record<string, unknown>);
    default:
      return undefined;
  }
}
