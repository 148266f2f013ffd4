/**
 * Decimals as text, in exact integer arithmetic on unscaled values: parsing at a precision and
 * scale (rounding as Spark's cast does), the plain text DESIGN §6 uses, and Java's
 * BigDecimal.toString. A leaf module: it imports nothing of Silt's.
 */

/** Unscaled decimal value: a number while at most 15 digits, else a bigint. */
export type Unscaled = number | bigint;

const DECIMAL_RE = /^\s*([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

/**
 * Unscaled value of a decimal text at `scale`, rounding extra fraction digits half-up as Spark's
 * cast does. Returns "invalid" for malformed text and "overflow" beyond `precision` digits.
 */
export function parseDecimal(
  text: string,
  precision: number,
  scale: number,
): Unscaled | "invalid" | "overflow" {
  const fast = fastDecimal(text, precision, scale);
  if (fast !== undefined) return fast;
  const m = DECIMAL_RE.exec(text);
  if (!m) return "invalid";
  const intPart = m[2] ?? "";
  const fracPart = m[3] ?? "";
  if (intPart.length + fracPart.length === 0) return "invalid";
  const negative = m[1] === "-";
  const digits = (intPart + fracPart).replace(/^0+/, "");
  if (digits === "") return 0;
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  // value = digits * 10^(exp - fracLen); unscaled = digits * 10^shift
  const shift = scale + exp - fracPart.length;
  let unscaled: string;
  let roundUp = false;
  if (shift >= 0) {
    if (digits.length + shift > precision) return "overflow";
    unscaled = digits + "0".repeat(shift);
  } else {
    const keep = digits.length + shift;
    if (keep < 0) return 0;
    unscaled = digits.slice(0, keep);
    roundUp = digits.charCodeAt(keep) >= 53; // '5'
  }
  if (unscaled.length <= 15) {
    const n = Number(unscaled || "0") + (roundUp ? 1 : 0);
    if (n >= 10 ** precision) return "overflow";
    return negative ? -n : n;
  }
  let b = BigInt(unscaled) + (roundUp ? 1n : 0n);
  if (b >= 10n ** BigInt(precision)) return "overflow";
  if (negative) b = -b;
  return b;
}

const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);
const ZEROS = Array.from({ length: 16 }, (_, i) => "0".repeat(i));

/**
 * Plain "[-]digits[.digits]" text whose unscaled value stays below 2^53, in number arithmetic;
 * undefined for anything else (exponents, spaces, long values, rounding), left to parseDecimal.
 */
function fastDecimal(
  text: string,
  precision: number,
  scale: number,
): Unscaled | "overflow" | undefined {
  const len = text.length;
  let pos = 0;
  const first = text.charCodeAt(0);
  const negative = first === 45;
  if (negative || first === 43) pos++;
  let intPart = 0;
  let intDigits = 0;
  for (; pos < len; pos++) {
    const d = text.charCodeAt(pos) - 48;
    if (d < 0 || d > 9) break;
    intPart = intPart * 10 + d;
    intDigits++;
  }
  let frac = 0;
  let fracDigits = 0;
  if (pos < len && text.charCodeAt(pos) === 46) {
    for (pos++; pos < len; pos++) {
      const d = text.charCodeAt(pos) - 48;
      if (d < 0 || d > 9) return undefined;
      frac = frac * 10 + d;
      fracDigits++;
    }
  }
  if (pos !== len || intDigits + fracDigits === 0 || fracDigits > scale || intDigits + scale > 15) {
    return undefined;
  }
  const n = intPart * POW10[scale] + frac * POW10[scale - fracDigits];
  if (n >= 10 ** precision) return "overflow";
  return negative ? -n : n;
}

/** Plain decimal text with exactly `scale` fraction digits. */
export function formatDecimal(unscaled: Unscaled, scale: number): string {
  const negative = unscaled < 0;
  if (typeof unscaled === "number" && scale > 0 && scale <= 15) {
    // Fast path without bigint or digit-string surgery; the remainder check keeps it exact.
    const abs = negative ? -unscaled : unscaled;
    const p = POW10[scale];
    let q = Math.floor(abs / p);
    let r = abs - q * p;
    if (r < 0) {
      q--;
      r += p;
    } else if (r >= p) {
      q++;
      r -= p;
    }
    const frac = r === 0 ? ZEROS[scale] : String(r).padStart(scale, "0");
    return negative ? `-${q}.${frac}` : `${q}.${frac}`;
  }
  let s = String(negative ? -unscaled : unscaled);
  if (scale > 0) {
    if (s.length <= scale) s = s.padStart(scale + 1, "0");
    s = `${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`;
  } else if (scale < 0 && s !== "0") {
    s += "0".repeat(-scale);
  }
  return negative ? `-${s}` : s;
}

/** Java's BigDecimal.toString: `9.50`, `0E-10`, `5.925E-9`, plain unless the adjusted exponent is below -6. */
export function javaDecimalString(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString();
  const sign = neg ? "-" : "";
  const adjusted = -scale + (digits.length - 1);
  if (scale >= 0 && adjusted >= -6) {
    if (scale === 0) return sign + digits;
    if (digits.length > scale) {
      const cut = digits.length - scale;
      return `${sign}${digits.slice(0, cut)}.${digits.slice(cut)}`;
    }
    return `${sign}0.${"0".repeat(scale - digits.length)}${digits}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}E${adjusted >= 0 ? "+" : ""}${adjusted}`;
}
