/**
 * Decimal scaling on bigint unscaled values: powers of ten, HALF_UP division (Java's
 * RoundingMode.HALF_UP, as Spark's Decimal rounds), moving a value between scales, and the
 * precision check. A leaf module: it imports nothing of Silt's.
 */

const POW10N: bigint[] = [1n];
export function pow10n(n: number): bigint {
  for (let i = POW10N.length; i <= n; i++) POW10N.push(POW10N[i - 1] * 10n);
  return POW10N[n];
}

/** n / d rounded half away from zero (Java's HALF_UP). */
export function divHalfUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n - q * d;
  if (r === 0n) return q;
  const ar = r < 0n ? -r : r;
  const ad = d < 0n ? -d : d;
  if (ar * 2n >= ad) return n < 0n !== d < 0n ? q - 1n : q + 1n;
  return q;
}

/** Unscaled value at scale `from` brought to scale `to`, rounding HALF_UP when shortening. */
export function rescale(u: bigint, from: number, to: number): bigint {
  if (to === from) return u;
  if (to > from) return u * pow10n(to - from);
  return divHalfUp(u, pow10n(from - to));
}

export const fitsPrecision = (u: bigint, precision: number): boolean =>
  (u < 0n ? -u : u) < pow10n(precision);
