/**
 * Integer division rounding toward negative infinity, as converting an instant to a coarser unit
 * needs (one microsecond before the epoch is in millisecond −1, not 0). JS `/` on bigints
 * truncates toward zero.
 */
import type { Micros } from "./calendar.ts";

export function floorDiv(v: bigint, d: bigint): bigint {
  const q = v / d;
  return q * d !== v && v < 0n !== d < 0n ? q - 1n : q;
}

/** floorDiv for a value that is a number while it is safe and a bigint beyond. */
export function floorDivMicros(v: Micros, d: number): Micros {
  if (typeof v === "number") {
    const q = Math.floor(v / d);
    // The rounded quotient may land on the next integer; the product check is exact.
    return q * d > v ? q - 1 : q;
  }
  return floorDiv(v, BigInt(d));
}
