/**
 * Z-order (Morton) row order over a few columns, as Delta's OPTIMIZE ZORDER BY computes it.
 *
 * 1. Rank each column's values: equal values get equal dense ranks, nulls rank first, NaN after
 *    every number. Ranks, not raw values, make every column contribute bits evenly whatever its
 *    type or spread (Delta range-partitions each column for the same reason).
 * 2. Scale every column's ranks to the same bit width B, so their high bits line up.
 * 3. Interleave the bits, most significant first, column after column: the z-value.
 * 4. Sort the rows by z-value (ties keep their input order). Rows close in every column end up
 *    close in the order, so each file written from a slice of it has narrow min/max statistics
 *    on every Z-ordered column.
 *
 * A bin can hold tens of millions of rows, so nothing here allocates per row: numeric columns
 * are ranked by sorting a typed copy and binary-searching it, strings through their distinct
 * values, z-values are kept as 16-bit digits and sorted by a stable LSD radix sort.
 */
import * as arrow from "apache-arrow";

/** Row indexes of `table` in z-order over `columns` (all present in the table). */
export function zOrderIndexes(table: arrow.Table, columns: readonly string[]): Uint32Array {
  const n = table.numRows;
  const ranks: Uint32Array[] = [];
  const bits: number[] = [];
  for (const name of columns) {
    const col = table.getChild(name);
    if (col === null) throw new Error(`Z-order column ${name} missing from the rows`);
    const { rank, distinct } = denseRanks(col);
    ranks.push(rank);
    bits.push(Math.max(1, Math.ceil(Math.log2(Math.max(2, distinct)))));
  }
  const width = Math.max(...bits);
  const total = width * columns.length;
  const digits = Math.ceil(total / 16);
  // Digit d of row i at z[d * n + i]; digit 0 is the least significant.
  const z = new Uint16Array(digits * n);
  const shifts = bits.map((b) => width - b);
  for (let i = 0; i < n; i++) {
    let pos = total - 1;
    for (let b = width - 1; b >= 0; b--) {
      for (let c = 0; c < ranks.length; c++) {
        // A column's bit b of its scaled rank is bit (b - shift) of the rank itself.
        const s = b - shifts[c]!;
        if (s >= 0 && (ranks[c]![i]! >>> s) & 1) z[(pos >> 4) * n + i]! |= 1 << (pos & 15);
        pos--;
      }
    }
  }
  return radixOrder(z, digits, n);
}

/** Stable LSD radix sort of row indexes by their digits. */
function radixOrder(z: Uint16Array, digits: number, n: number): Uint32Array {
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let next = new Uint32Array(n);
  const counts = new Uint32Array(65537);
  for (let d = 0; d < digits; d++) {
    const base = d * n;
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[z[base + i]! + 1]!++;
    for (let k = 1; k < counts.length; k++) counts[k]! += counts[k - 1]!;
    for (let k = 0; k < n; k++) {
      const row = order[k]!;
      next[counts[z[base + row]!]!++] = row;
    }
    [order, next] = [next, order];
  }
  return order;
}

/** Dense ranks of a column's values: nulls 0, then values in ascending order. */
function denseRanks(col: arrow.Vector): { rank: Uint32Array; distinct: number } {
  const numbers = asFloat64(col);
  if (numbers !== undefined) return numericRanks(col, numbers);
  if (arrow.DataType.isUtf8(col.type) || arrow.DataType.isLargeUtf8(col.type)) {
    return keyedRanks(col, (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0));
  }
  return keyedRanks(col, compareValues, (v) => (v instanceof Uint8Array ? v.join(",") : v));
}

/**
 * The column as exact doubles, for types ordered by their physical number: integers (64-bit
 * ones only while every value is within 2^53), floats, day dates and timestamps. Undefined
 * otherwise.
 */
function asFloat64(col: arrow.Vector): Float64Array | undefined {
  const t = col.type;
  const numeric =
    arrow.DataType.isInt(t) ||
    (arrow.DataType.isFloat(t) && t.precision !== arrow.Precision.HALF) ||
    arrow.DataType.isTimestamp(t) ||
    (arrow.DataType.isDate(t) && t.unit === arrow.DateUnit.DAY);
  if (!numeric) return undefined;
  const out = new Float64Array(col.length);
  let at = 0;
  for (const d of col.data) {
    const values = d.values as unknown;
    if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
      // Read as 32-bit halves: no BigInt per row, and the range check comes for free.
      const words = new Int32Array(values.buffer, values.byteOffset, d.length * 2);
      const unsigned = values instanceof BigUint64Array;
      for (let i = 0; i < d.length; i++) {
        const hi = unsigned ? words[2 * i + 1]! >>> 0 : words[2 * i + 1]!;
        if (hi >= 0x200000 || hi < -0x200000) return undefined;
        out[at + i] = hi * 4294967296 + (words[2 * i]! >>> 0);
      }
    } else {
      out.set((values as Float64Array).subarray(0, d.length), at);
    }
    at += d.length;
  }
  return out;
}

function numericRanks(
  col: arrow.Vector,
  values: Float64Array,
): { rank: Uint32Array; distinct: number } {
  const n = col.length;
  const valid = col.nullCount > 0 ? validityOf(col) : undefined;
  const present = valid === undefined ? values.slice() : values.filter((_, i) => valid[i] === 1);
  // Typed-array sort is numeric with NaN last, where Spark orders NaN too.
  present.sort();
  let d = 0;
  let nan = false;
  for (let k = 0; k < present.length; k++) {
    const v = present[k]!;
    if (Number.isNaN(v)) {
      nan = true;
      break;
    }
    // -0 and 0 are one value, as `!==` says.
    if (d === 0 || v !== present[d - 1]) present[d++] = v;
  }
  const offset = valid === undefined ? 0 : 1;
  const rank = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) continue;
    const v = values[i]!;
    if (Number.isNaN(v)) {
      rank[i] = d + offset;
      continue;
    }
    let lo = 0;
    let hi = d - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (present[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    rank[i] = lo + offset;
  }
  return { rank, distinct: d + offset + (nan ? 1 : 0) };
}

/** Ranks through the distinct values (strings, and the types without a numeric order). */
function keyedRanks(
  col: arrow.Vector,
  compare: (a: never, b: never) => number,
  keyOf: (v: unknown) => unknown = (v) => v,
): { rank: Uint32Array; distinct: number } {
  const n = col.length;
  const ids = new Uint32Array(n);
  const firstOf = new Map<unknown, number>();
  const distinct: unknown[] = [];
  let nulls = false;
  for (let i = 0; i < n; i++) {
    const v = col.get(i);
    if (v === null || v === undefined) {
      nulls = true;
      ids[i] = 0xffffffff;
      continue;
    }
    const key = keyOf(v);
    let id = firstOf.get(key);
    if (id === undefined) {
      id = distinct.length;
      firstOf.set(key, id);
      distinct.push(v);
    }
    ids[i] = id;
  }
  const byValue = Array.from(distinct.keys()).sort((a, b) =>
    compare(distinct[a] as never, distinct[b] as never),
  );
  const rankOfId = new Uint32Array(distinct.length);
  const offset = nulls ? 1 : 0;
  let r = 0;
  byValue.forEach((id, k) => {
    if (k > 0 && compare(distinct[byValue[k - 1]!] as never, distinct[id] as never) !== 0) r++;
    rankOfId[id] = r + offset;
  });
  const rank = new Uint32Array(n);
  for (let i = 0; i < n; i++) rank[i] = ids[i] === 0xffffffff ? 0 : rankOfId[ids[i]!]!;
  return { rank, distinct: distinct.length === 0 ? offset : r + 1 + offset };
}

/** 1 per valid row, 0 per null. */
function validityOf(col: arrow.Vector): Uint8Array {
  const out = new Uint8Array(col.length);
  for (let i = 0; i < col.length; i++) out[i] = col.isValid(i) ? 1 : 0;
  return out;
}

/** Total order over the values Arrow hands back: nulls first, then by type-natural order. */
export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (
    (typeof a === "number" || typeof a === "bigint") &&
    (typeof b === "number" || typeof b === "bigint")
  ) {
    if (typeof a === "number" && Number.isNaN(a))
      return typeof b === "number" && Number.isNaN(b) ? 0 : 1;
    if (typeof b === "number" && Number.isNaN(b)) return -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    const len = Math.min(a.length, b.length);
    for (let i = 0; i < len; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  }
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
