/**
 * Exact scalar arithmetic with ANSI errors: decimals on bigint unscaled values (rounded HALF_UP
 * through a 38-digit context, java.math.MathContext(38), as Spark's Decimal does) and integral
 * arithmetic with Spark's overflow checks.
 */

import { type DecimalType, MAX_DECIMAL_PRECISION } from "../delta/schema.ts";
import type { SiltError } from "../errors.ts";
import { divHalfUp, fitsPrecision, pow10n, rescale } from "../values/decimal-scale.ts";
import { formatDecimal } from "../values/decimal-text.ts";
import { INT64_MAX, INT64_MIN } from "../values/int64.ts";
import {
  arithmeticOverflow,
  binaryArithmeticOverflow,
  decimalOutOfRange,
  divideByZero,
  remainderByZero,
} from "./ansi-errors.ts";
import { sqlLiteral } from "./scalar-text.ts";
import type { ArithOp, IntegralName } from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Exact decimal arithmetic on bigint unscaled values

function digitCount(u: bigint): number {
  return (u < 0n ? -u : u).toString().length;
}

/** The value rounded HALF_UP to 38 significant digits (java.math.MathContext(38)). */
function roundToContext(u: bigint, scale: number): [bigint, number] {
  const digits = digitCount(u);
  if (digits <= MAX_DECIMAL_PRECISION) return [u, scale];
  const drop = digits - MAX_DECIMAL_PRECISION;
  return [divHalfUp(u, pow10n(drop)), scale - drop];
}

function checkDecimal(u: bigint, scale: number, t: DecimalType): bigint {
  const r = rescale(u, scale, t.scale);
  if (!fitsPrecision(r, t.precision)) throw decimalOutOfRange(formatDecimal(r, t.scale), t);
  return r;
}

/**
 * Decimal arithmetic as Spark's Decimal does it: + and - exact, * / % through a 38-digit
 * HALF_UP context, then rounded HALF_UP to the result type and checked against its precision.
 * Division by zero raises DIVIDE_BY_ZERO, a remainder by zero REMAINDER_BY_ZERO.
 */
export function decimalArith(
  op: Exclude<ArithOp, "div">,
  a: bigint,
  ta: DecimalType,
  b: bigint,
  tb: DecimalType,
  result: DecimalType,
): bigint {
  const s = Math.max(ta.scale, tb.scale);
  switch (op) {
    case "+":
      return checkDecimal(rescale(a, ta.scale, s) + rescale(b, tb.scale, s), s, result);
    case "-":
      return checkDecimal(rescale(a, ta.scale, s) - rescale(b, tb.scale, s), s, result);
    case "*": {
      const [u, sc] = roundToContext(a * b, ta.scale + tb.scale);
      return checkDecimal(u, sc, result);
    }
    case "/": {
      if (b === 0n) throw divideByZero();
      const [u, sc] = divideToContext(a, ta.scale, b, tb.scale);
      return checkDecimal(u, sc, result);
    }
    case "%": {
      if (b === 0n) throw remainderByZero();
      const r = rescale(a, ta.scale, s) % rescale(b, tb.scale, s);
      return checkDecimal(r, s, result);
    }
  }
}

/** `a div b` on decimals: the quotient truncated toward zero, as a long. */
export function decimalIntegralDivide(a: bigint, sa: number, b: bigint, sb: number): bigint {
  if (b === 0n) throw divideByZero();
  const s = Math.max(sa, sb);
  const q = rescale(a, sa, s) / rescale(b, sb, s);
  if (q < INT64_MIN || q > INT64_MAX) throw arithmeticOverflow("long overflow", "try_divide");
  return q;
}

/** (a/10^sa) / (b/10^sb) rounded HALF_UP to 38 significant digits: [unscaled, scale]. */
function divideToContext(a: bigint, sa: number, b: bigint, sb: number): [bigint, number] {
  if (a === 0n) return [0n, 0];
  // value = n / d exactly
  let n = a * pow10n(sb);
  let d = b * pow10n(sa);
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const an = n < 0n ? -n : n;
  let k = MAX_DECIMAL_PRECISION - (digitCount(an) - digitCount(d)) - 1;
  for (;;) {
    const t = k >= 0 ? (an * pow10n(k)) / d : an / (d * pow10n(-k));
    const digits = t === 0n ? 0 : t.toString().length;
    if (digits > MAX_DECIMAL_PRECISION) k--;
    else if (digits < MAX_DECIMAL_PRECISION) k++;
    else break;
  }
  const q = k >= 0 ? divHalfUp(n * pow10n(k), d) : divHalfUp(n, d * pow10n(-k));
  return [q, k];
}

// ---------------------------------------------------------------------------------------------
// Integral arithmetic with ANSI overflow checks

const INT_RANGE: Record<IntegralName, [number, number]> = {
  byte: [-128, 127],
  short: [-32768, 32767],
  integer: [-2147483648, 2147483647],
  long: [Number.NaN, Number.NaN],
};

const TRY_NAMES: Record<string, string> = {
  "+": "try_add",
  "-": "try_subtract",
  "*": "try_multiply",
};

/** The error an overflowing integral +, - or * raises (by type, as Spark words it). */
export function integralOverflow(
  op: "+" | "-" | "*",
  t: IntegralName,
  a: number | bigint,
  b: number | bigint,
): SiltError {
  if (t === "integer") return arithmeticOverflow("integer overflow", TRY_NAMES[op]);
  if (t === "long") return arithmeticOverflow("long overflow", TRY_NAMES[op]);
  return binaryArithmeticOverflow(sqlLiteral(a, t), op, sqlLiteral(b, t), TRY_NAMES[op]);
}

/** +, -, * on integral scalars of type t (numbers, or bigints for long), ANSI-checked. */
export function integralArith(
  op: "+" | "-" | "*",
  t: IntegralName,
  a: number | bigint,
  b: number | bigint,
): number | bigint {
  if (t === "long") {
    const x = a as bigint;
    const y = b as bigint;
    const r = op === "+" ? x + y : op === "-" ? x - y : x * y;
    if (r < INT64_MIN || r > INT64_MAX) throw integralOverflow(op, t, a, b);
    return r;
  }
  const x = a as number;
  const y = b as number;
  const r = op === "+" ? x + y : op === "-" ? x - y : x * y;
  const [lo, hi] = INT_RANGE[t];
  if (r < lo || r > hi) throw integralOverflow(op, t, a, b);
  return r;
}

/** Unary minus of an integral scalar; MIN_VALUE overflows. */
export function integralNegate(t: IntegralName, a: number | bigint): number | bigint {
  if (t === "long") {
    if (a === INT64_MIN) throw arithmeticOverflow("long overflow");
    return -(a as bigint);
  }
  const [lo] = INT_RANGE[t];
  if (a === lo) {
    if (t === "integer") throw arithmeticOverflow("integer overflow");
    throw arithmeticOverflow(`${t === "byte" ? "tinyint" : "smallint"} overflow`);
  }
  return a === 0 ? 0 : -(a as number);
}

export function integralRange(t: IntegralName): [bigint, bigint] {
  if (t === "long") return [INT64_MIN, INT64_MAX];
  const [lo, hi] = INT_RANGE[t];
  return [BigInt(lo), BigInt(hi)];
}
