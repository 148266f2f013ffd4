/**
 * Floating-point numbers as Java and Spark print them: the shortest decimal of a float32, and
 * Double.toString / Float.toString. A leaf module: it imports nothing of Silt's.
 */

/** Shortest decimal that reads back as the same float32, as a JS number (Spark prints floats so). */
export function shortestFloat32(x: number): number {
  if (!Number.isFinite(x) || (Number.isInteger(x) && Math.abs(x) < 16777216)) return x;
  let lo = 1;
  let hi = 9;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Math.fround(Number(x.toPrecision(mid))) === x) hi = mid;
    else lo = mid + 1;
  }
  return Number(x.toPrecision(lo));
}

/** Java's Double.toString: "1.0", "1.0E10", "1.0E-5", "NaN", "Infinity". */
export function javaDoubleString(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Number.POSITIVE_INFINITY) return "Infinity";
  if (x === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(x);
    return s.includes(".") ? s : `${s}.0`;
  }
  const [mantissa, exp] = x.toExponential().split("e");
  return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}E${exp.startsWith("+") ? exp.slice(1) : exp}`;
}

/** Java's Float.toString of a float value held as a JS number. */
export const javaFloatString = (x: number): string =>
  javaDoubleString(Number.isFinite(x) ? shortestFloat32(Math.fround(x)) : x);
