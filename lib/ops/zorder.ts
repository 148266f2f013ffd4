/**
 * Z-order (Morton) row order over a few columns, as Delta's OPTIMIZE ZORDER BY computes it.
 *
 * 1. Rank each column's values: sort the row indexes by the value (nulls first) and give equal
 *    values equal dense ranks. Ranks, not raw values, make every column contribute bits evenly
 *    whatever its type or spread (Delta range-partitions each column for the same reason).
 * 2. Scale every column's ranks to the same bit width B, so their high bits line up.
 * 3. Interleave the bits, most significant first, column after column: the z-value.
 * 4. Sort the rows by z-value (ties keep their input order). Rows close in every column end up
 *    close in the order, so each file written from a slice of it has narrow min/max statistics
 *    on every Z-ordered column.
 */
import type * as arrow from "apache-arrow";

/** Row indexes of `table` in z-order over `columns` (all present in the table). */
export function zOrderIndexes(table: arrow.Table, columns: readonly string[]): Uint32Array {
  const n = table.numRows;
  const ranks: Uint32Array[] = [];
  const bits: number[] = [];
  for (const name of columns) {
    const col = table.getChild(name);
    if (col === null) throw new Error(`Z-order column ${name} missing from the rows`);
    const values: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) values[i] = col.get(i);
    const { rank, distinct } = denseRanks(values);
    ranks.push(rank);
    bits.push(Math.max(1, Math.ceil(Math.log2(Math.max(2, distinct)))));
  }
  const width = Math.max(...bits);
  const z: bigint[] = new Array(n);
  for (let i = 0; i < n; i++) {
    let v = 0n;
    const scaled = ranks.map((r, c) => BigInt(r[i]!) << BigInt(width - bits[c]!));
    for (let b = width - 1; b >= 0; b--) {
      for (const s of scaled) v = (v << 1n) | ((s >> BigInt(b)) & 1n);
    }
    z[i] = v;
  }
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => (z[a]! < z[b]! ? -1 : z[a]! > z[b]! ? 1 : a - b));
  return Uint32Array.from(order);
}

function denseRanks(values: unknown[]): { rank: Uint32Array; distinct: number } {
  const order = Array.from({ length: values.length }, (_, i) => i);
  order.sort((a, b) => compareValues(values[a], values[b]));
  const rank = new Uint32Array(values.length);
  let r = 0;
  for (let k = 0; k < order.length; k++) {
    if (k > 0 && compareValues(values[order[k - 1]!], values[order[k]!]) !== 0) r++;
    rank[order[k]!] = r;
  }
  return { rank, distinct: order.length === 0 ? 0 : r + 1 };
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
