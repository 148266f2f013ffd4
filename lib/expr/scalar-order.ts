/**
 * The order of scalars as Spark compares and sorts them: strings by code point (UTF-8 byte
 * order), binary by bytes, doubles with NaN above everything and -0.0 equal to 0.0.
 */
import type { SqlType } from "./ast.ts";
import { isFloating, type Scalar } from "./types.ts";

/** Code point order of two strings (UTF-8 byte order, as Spark's UTF8String compares). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // Surrogates encode code points above U+FFFF, so they sort after U+E000..U+FFFF.
      const fx = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
      const fy = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
      return fx - fy;
    }
  }
  return a.length - b.length;
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** Spark's double ordering: NaN equals NaN and sorts above everything; -0.0 equals 0.0. */
export function compareDoubles(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  const na = Number.isNaN(a);
  const nb = Number.isNaN(b);
  return na && nb ? 0 : na ? 1 : -1;
}

/** Order of two non-null scalars of the same type. */
export function compareScalars(t: SqlType, a: Scalar, b: Scalar): number {
  if (typeof a === "number" && typeof b === "number") {
    return isFloating(t) ? compareDoubles(a, b) : a - b;
  }
  if (typeof a === "bigint") return a < (b as bigint) ? -1 : a > (b as bigint) ? 1 : 0;
  if (typeof a === "string") return compareStrings(a, b as string);
  if (typeof a === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array) return compareBytes(a, b as Uint8Array);
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
