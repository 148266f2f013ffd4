/**
 * The evaluator's typed loops for hot operations: typed views of vectors, comparison loops for
 * the common shapes, 64-bit arithmetic through doubles while exact, small-decimal arithmetic in
 * doubles, one row of arithmetic on scalars, and the membership test of IN over literals. A fast
 * path that does not apply answers undefined and the evaluator goes value-at-a-time instead.
 */

import { siltError } from "../errors.ts";
import { INT64_MIN } from "../values/int64.ts";
import { arithmeticOverflow, divideByZero, remainderByZero } from "./ansi-errors.ts";
import type { SqlType } from "./ast.ts";
import { decimalArith, decimalIntegralDivide, integralArith } from "./scalar-arithmetic.ts";
import { compareDoubles, compareScalars } from "./scalar-order.ts";
import type { Typed } from "./typed.ts";
import { isDecimalType, isIntegral, type Scalar } from "./types.ts";
import { at, SAFE, TWO32, tagOf, utf8Enc, type VConst, type Vec, type VUtf8 } from "./vectors.ts";

export function cmpResult(op: string, c: number): boolean {
  switch (op) {
    case "=":
      return c === 0;
    case "<":
      return c < 0;
    case "<=":
      return c <= 0;
    case ">":
      return c > 0;
    default:
      return c >= 0;
  }
}

export function asF64(v: Vec, t: SqlType): Float64Array | undefined {
  if (v.tag === "f64") return v.data;
  if (v.tag === "const") {
    const x = v.value === null ? 0 : (v.value as number);
    return new Float64Array(v.n).fill(t === "float" ? Math.fround(x) : x);
  }
  return undefined;
}

export function asI32(v: Vec): Int32Array | undefined {
  if (v.tag === "i32") return v.data;
  if (v.tag === "const")
    return new Int32Array(v.n).fill(v.value === null ? 0 : (v.value as number));
  return undefined;
}

export function asWords(v: Vec): Int32Array | undefined {
  if (v.tag === "i64") return v.words;
  if (v.tag === "const") {
    const data = new BigInt64Array(v.n).fill(v.value === null ? 0n : (v.value as bigint));
    return new Int32Array(data.buffer, 0, v.n * 2);
  }
  return undefined;
}

/** 64-bit +, -, * through doubles while exact, bigints otherwise, with overflow checks. */
export function longArith(
  op: "+" | "-" | "*",
  a: Int32Array,
  b: Int32Array,
  n: number,
  valid: Uint8Array | undefined,
): Vec {
  const data = new BigInt64Array(n);
  const w = new Int32Array(data.buffer, 0, n * 2);
  for (let i = 0; i < n; i++) {
    if (valid && valid[i] === 0) continue;
    const ah = a[2 * i + 1];
    const bh = b[2 * i + 1];
    if (ah > -1048576 && ah < 1048576 && bh > -1048576 && bh < 1048576) {
      const x = ah * TWO32 + (a[2 * i] >>> 0);
      const y = bh * TWO32 + (b[2 * i] >>> 0);
      const z = op === "+" ? x + y : op === "-" ? x - y : x * y;
      if (z >= -SAFE && z <= SAFE) {
        const hi = Math.floor(z / TWO32);
        w[2 * i] = z - hi * TWO32;
        w[2 * i + 1] = hi;
        continue;
      }
    }
    const x = (BigInt(a[2 * i + 1]) << 32n) | BigInt(a[2 * i] >>> 0);
    const y = (BigInt(b[2 * i + 1]) << 32n) | BigInt(b[2 * i] >>> 0);
    data[i] = integralArith(op, "long", x, y) as bigint;
  }
  return { tag: "i64", n, valid, data, words: w };
}

/** Decimal +, -, * in doubles when operands are small and no rounding is involved. */
export function decimalFast(
  t: Extract<Typed, { kind: "arith" }>,
  l: Vec,
  r: Vec,
  n: number,
  valid: Uint8Array | undefined,
): Vec | undefined {
  const lt = t.left.type as Extract<SqlType, { type: "decimal" }>;
  const rt = t.right.type as Extract<SqlType, { type: "decimal" }>;
  const res = t.type as Extract<SqlType, { type: "decimal" }>;
  const natural = t.op === "*" ? lt.scale + rt.scale : Math.max(lt.scale, rt.scale);
  if (natural !== res.scale || natural > 15) return undefined;
  const small = (v: Vec, scale: number): Float64Array | undefined => {
    const m = t.op === "*" ? 1 : 10 ** (natural - scale);
    if (v.tag === "dec" && v.small) {
      if (m === 1) return v.small;
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = v.small[i] * m;
      return out;
    }
    if (v.tag === "const" && v.value !== null) {
      const x = Number(v.value as bigint) * m;
      return Number.isSafeInteger(x) ? new Float64Array(n).fill(x) : undefined;
    }
    return undefined;
  };
  const a = small(l, lt.scale);
  const b = small(r, rt.scale);
  if (!a || !b) return undefined;
  const limit = 10 ** res.precision;
  const out = new Float64Array(n);
  let big: bigint[] | undefined;
  for (let i = 0; i < n; i++) {
    if (valid && valid[i] === 0) continue;
    const x = a[i];
    const y = b[i];
    const z = t.op === "+" ? x + y : t.op === "-" ? x - y : x * y;
    if (
      Math.abs(z) <= SAFE &&
      Math.abs(z) < limit &&
      Number.isSafeInteger(x) &&
      Number.isSafeInteger(y)
    ) {
      // Once a row has needed bigints, later rows go there too (out is no longer read).
      if (big) big[i] = BigInt(z);
      else out[i] = z;
      continue;
    }
    big ??= Array.from(out.subarray(0, i), (x) => BigInt(x));
    big[i] = arithScalar(t, at(l, i) as Scalar, at(r, i) as Scalar) as bigint;
  }
  if (big) {
    for (let i = 0; i < n; i++) if (typeof big[i] !== "bigint") big[i] = BigInt(out[i]);
    return { tag: "dec", n, valid, big };
  }
  return { tag: "dec", n, valid, small: out };
}

/** One row of +, -, *, /, %, div on non-null operands of the node's input type. */
export function arithScalar(t: Extract<Typed, { kind: "arith" }>, a: Scalar, b: Scalar): Scalar {
  const lt = t.left.type;
  const op = t.op;
  if (isDecimalType(lt)) {
    const rt = t.right.type as Extract<SqlType, { type: "decimal" }>;
    if (op === "div") return decimalIntegralDivide(a as bigint, lt.scale, b as bigint, rt.scale);
    return decimalArith(
      op,
      a as bigint,
      lt,
      b as bigint,
      rt,
      t.type as Extract<SqlType, { type: "decimal" }>,
    );
  }
  if (isIntegral(lt)) {
    switch (op) {
      case "+":
      case "-":
      case "*":
        return integralArith(op, lt, a as number | bigint, b as number | bigint);
      case "%":
        if (b === 0 || b === 0n) throw remainderByZero();
        return typeof a === "bigint" ? a % (b as bigint) : (a as number) % (b as number) || 0;
      case "div": {
        if (b === 0n) throw divideByZero();
        if (a === INT64_MIN && b === -1n)
          throw arithmeticOverflow("Overflow in integral divide", "try_divide");
        return (a as bigint) / (b as bigint);
      }
      default:
        throw siltError("INTERNAL_ERROR:INTEGRAL_NOT_COERCED", { op });
    }
  }
  const x = a as number;
  const y = b as number;
  let z: number;
  switch (op) {
    case "+":
      z = x + y;
      break;
    case "-":
      z = x - y;
      break;
    case "*":
      z = x * y;
      break;
    case "/":
      if (y === 0) throw divideByZero();
      z = x / y;
      break;
    case "%":
      if (y === 0) throw remainderByZero();
      z = x % y;
      break;
    default:
      throw siltError("INTERNAL_ERROR:UNEXPECTED_OPERATOR", { op, type: String(lt) });
  }
  return t.type === "float" ? Math.fround(z) : z;
}

/** Bit k set when a comparison outcome k (0: less, 1: equal, 2: greater) satisfies `op`. */
function opMask(op: string): number {
  switch (op) {
    case "=":
      return 0b010;
    case "<":
      return 0b001;
    case "<=":
      return 0b011;
    case ">":
      return 0b100;
    default:
      return 0b110;
  }
}

/** Typed comparison loops for the common shapes; undefined when none applies. */
export function compareFast(
  op: string,
  t: SqlType,
  l: Vec,
  r: Vec,
  n: number,
): Uint8Array | undefined {
  const out = new Uint8Array(n);
  if (
    (l.tag === "i32" || l.tag === "const") &&
    (r.tag === "i32" || r.tag === "const") &&
    tagOf(t) === "i32"
  ) {
    const a = asI32(l)!;
    const b = asI32(r)!;
    switch (op) {
      case "=":
        for (let i = 0; i < n; i++) out[i] = a[i] === b[i] ? 1 : 0;
        break;
      case "<":
        for (let i = 0; i < n; i++) out[i] = a[i] < b[i] ? 1 : 0;
        break;
      case "<=":
        for (let i = 0; i < n; i++) out[i] = a[i] <= b[i] ? 1 : 0;
        break;
      case ">":
        for (let i = 0; i < n; i++) out[i] = a[i] > b[i] ? 1 : 0;
        break;
      default:
        for (let i = 0; i < n; i++) out[i] = a[i] >= b[i] ? 1 : 0;
    }
    return out;
  }
  if (
    (l.tag === "i64" || l.tag === "const") &&
    (r.tag === "i64" || r.tag === "const") &&
    tagOf(t) === "i64"
  ) {
    const a = asWords(l)!;
    const b = asWords(r)!;
    const mask = opMask(op);
    for (let i = 0; i < n; i++) {
      const ah = a[2 * i + 1];
      const bh = b[2 * i + 1];
      let c: number;
      if (ah !== bh) c = ah < bh ? 0 : 2;
      else {
        const al = a[2 * i] >>> 0;
        const bl = b[2 * i] >>> 0;
        c = al === bl ? 1 : al < bl ? 0 : 2;
      }
      out[i] = (mask >> c) & 1;
    }
    return out;
  }
  if (
    (l.tag === "f64" || l.tag === "const") &&
    (r.tag === "f64" || r.tag === "const") &&
    tagOf(t) === "f64"
  ) {
    const a = asF64(l, t)!;
    const b = asF64(r, t)!;
    const mask = opMask(op);
    for (let i = 0; i < n; i++) {
      const x = a[i];
      const y = b[i];
      // NaN = NaN and NaN sorts above every number (Spark's ordering).
      const c = x < y ? 0 : x > y ? 2 : x === y ? 1 : compareDoubles(x, y) + 1;
      out[i] = (mask >> c) & 1;
    }
    return out;
  }
  if (tagOf(t) === "dec") {
    const a = decSmall(l, n);
    const b = decSmall(r, n);
    if (a && b) {
      const mask = opMask(op);
      for (let i = 0; i < n; i++) {
        const x = a[i];
        const y = b[i];
        out[i] = (mask >> (x < y ? 0 : x > y ? 2 : 1)) & 1;
      }
      return out;
    }
  }
  if (
    t === "string" &&
    ((l.tag === "utf8" && r.tag === "const") || (l.tag === "const" && r.tag === "utf8"))
  ) {
    const col = (l.tag === "utf8" ? l : r) as VUtf8;
    const k = (l.tag === "const" ? l : r) as VConst;
    if (k.value === null) return out;
    const key = utf8Enc.encode(k.value as string);
    const flip = l.tag === "const";
    const { offsets, bytes } = col;
    for (let i = 0; i < n; i++) {
      const s = offsets[i];
      const e = offsets[i + 1];
      let c: number;
      if (op === "=" && e - s !== key.length) c = 1;
      else {
        c = 0;
        const m = Math.min(e - s, key.length);
        for (let j = 0; j < m; j++) {
          const d = bytes[s + j] - key[j];
          if (d !== 0) {
            c = d;
            break;
          }
        }
        if (c === 0) c = e - s - key.length;
      }
      out[i] = cmpResult(op, flip ? -c : c) ? 1 : 0;
    }
    return out;
  }
  return undefined;
}

function decSmall(v: Vec, n: number): Float64Array | undefined {
  if (v.tag === "dec") return v.small;
  if (v.tag === "const" && v.value !== null) {
    const x = Number(v.value as bigint);
    return Number.isSafeInteger(x) ? new Float64Array(n).fill(x) : undefined;
  }
  return undefined;
}

/** A membership test for IN over literal values, with Spark's equality (NaN = NaN, 0 = -0). */
export function matcher(t: SqlType, values: Scalar[]): (x: Scalar) => boolean {
  if (values.length === 0) return () => false;
  const first = values[0];
  if (
    typeof first === "number" ||
    typeof first === "bigint" ||
    typeof first === "string" ||
    typeof first === "boolean"
  ) {
    const set = new Set<unknown>(values);
    return (x) => set.has(x);
  }
  return (x) => values.some((y) => compareScalars(t, x, y) === 0);
}
