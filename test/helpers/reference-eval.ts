/**
 * A deliberately plain, row-at-a-time evaluator of analysed expressions: the oracle the
 * property tests hold the vectorized evaluator (lib/expr/evaluate.ts and the modules it drives)
 * to. It shares nothing with it but the analysed tree: values are kept in one simple form per
 * type (every integral a bigint, decimals as bigint unscaled values, dates as day numbers,
 * timestamps as bigint microseconds), and every rule (ANSI casts, overflow, decimal rounding
 * through a 38-digit context, NULL logic, LIKE) is spelled out again here, the direct way. Used
 * only by tests.
 */

import { createHash } from "node:crypto";
import { RE2JS } from "re2js";
import { SiltError } from "../../lib/errors.ts";
import type { SqlType } from "../../lib/expr/ast.ts";
import type { Typed } from "../../lib/expr/typed.ts";
import { daysFromCivil } from "../../lib/values/calendar.ts";
import { formatDate, formatTimestamp, parseTimestamp } from "../../lib/values/datetime-text.ts";

type RV = boolean | bigint | number | string | Uint8Array | object | null;

type Dec = { type: "decimal"; precision: number; scale: number };

const fail = (cls: string, msg = cls): never => {
  throw new SiltError(cls, msg, 400, undefined, {});
};

const isDec = (t: SqlType): t is Dec => typeof t === "object" && t.type === "decimal";
const INTS: Record<string, [bigint, bigint]> = {
  byte: [-128n, 127n],
  short: [-32768n, 32767n],
  integer: [-2147483648n, 2147483647n],
  long: [-(2n ** 63n), 2n ** 63n - 1n],
};
const isInt = (t: SqlType): t is "byte" | "short" | "integer" | "long" =>
  typeof t === "string" && t in INTS;
const isFloat = (t: SqlType) => t === "float" || t === "double";
const DAY = 86_400_000_000n;

const ten = (n: number): bigint => 10n ** BigInt(n);
const absB = (x: bigint) => (x < 0n ? -x : x);

/** Round n/d half away from zero (d > 0). */
function roundDiv(n: bigint, d: bigint): bigint {
  const neg = n < 0n;
  const a = absB(n);
  let q = a / d;
  if ((a % d) * 2n >= d) q += 1n;
  return neg ? -q : q;
}

function toScale(u: bigint, from: number, to: number): bigint {
  return to >= from ? u * ten(to - from) : roundDiv(u, ten(from - to));
}

/** Keep 38 significant digits of u (scale s), half up: [u', s']. */
function mc38(u: bigint, s: number): [bigint, number] {
  const digits = absB(u).toString().length;
  if (digits <= 38) return [u, s];
  const cut = digits - 38;
  return [roundDiv(u, ten(cut)), s - cut];
}

/** Long division of |n|/|d| to 38 significant digits, half up, as [unscaled, scale]. */
function divide38(n: bigint, d: bigint): [bigint, number] {
  if (n === 0n) return [0n, 0];
  const neg = n < 0n !== d < 0n;
  const den = absB(d);
  let q = absB(n) / den;
  let rem = absB(n) % den;
  let scale = 0;
  const sig = (x: bigint) => (x === 0n ? 0 : x.toString().length);
  while (sig(q) < 39 && rem !== 0n) {
    rem *= 10n;
    q = q * 10n + rem / den;
    rem %= den;
    scale++;
  }
  const s = sig(q);
  if (s > 38) {
    // HALF_UP depends only on the first dropped digit.
    const drop = s - 38;
    const first = (q / ten(drop - 1)) % 10n;
    q = q / ten(drop) + (first >= 5n ? 1n : 0n);
    scale -= drop;
  }
  return [neg ? -q : q, scale];
}

function checkPrecision(u: bigint, t: Dec): bigint {
  if (absB(u) >= ten(t.precision)) fail("NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION");
  return u;
}

function intCheck(v: bigint, t: SqlType): bigint {
  const [lo, hi] = INTS[t as string];
  if (v < lo || v > hi) {
    fail(t === "integer" || t === "long" ? "ARITHMETIC_OVERFLOW" : "BINARY_ARITHMETIC_OVERFLOW");
  }
  return v;
}

/** Strips every char <= U+0020 from both ends (Java's String.trim). */
function trimCtl(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}

/** Exact decimal text to (digits, exponent): value = digits * 10^exponent. */
function parseDecimalText(s: string): [bigint, number] | undefined {
  const m = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(s);
  if (!m || `${m[2] ?? ""}${m[3] ?? ""}` === "") return undefined;
  const frac = m[3] ?? "";
  const digits = BigInt(`${m[2] || "0"}${frac}`) * (m[1] === "-" ? -1n : 1n);
  return [digits, Number(m[4] ?? 0) - frac.length];
}

function decimalFromExact(digits: bigint, exp: number, scale: number): bigint {
  // value = digits * 10^exp, wanted at `scale`: digits * 10^(exp + scale)
  const shift = exp + scale;
  return shift >= 0 ? digits * ten(shift) : roundDiv(digits, ten(-shift));
}

const daysIn = (y: number, m: number) =>
  m === 2
    ? (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
      ? 29
      : 28
    : [4, 6, 9, 11].includes(m)
      ? 30
      : 31;

function textToDate(s: string): number | undefined {
  const m = /^([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?$/s.exec(trimCtl(s));
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = Number(m[2] ?? 1);
  const d = Number(m[3] ?? 1);
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return undefined;
  return daysFromCivil(y, mo, d);
}

function textToTimestamp(s: string, ntz: boolean): bigint | undefined {
  const t = trimCtl(s);
  if (/^[+-]?\d{4,7}(-\d{1,2})?$/.test(t)) {
    const d = textToDate(t);
    return d === undefined ? undefined : BigInt(d) * DAY;
  }
  const m = parseTimestamp(t, ntz);
  return m === undefined ? undefined : BigInt(m);
}

function civil(days: number): [number, number, number] {
  // Walk from a known year: simple and independent of the shared calendar code.
  let y = 1970 + Math.floor(days / 365.2425);
  while (daysFromCivil(y, 1, 1) > days) y--;
  while (daysFromCivil(y + 1, 1, 1) <= days) y++;
  let m = 1;
  while (m < 12 && daysFromCivil(y, m + 1, 1) <= days) m++;
  return [y, m, days - daysFromCivil(y, m, 1) + 1];
}

function javaDouble(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x === 0) return 1 / x < 0 ? "-0.0" : "0.0";
  if (Math.abs(x) >= 1e-3 && Math.abs(x) < 1e7) {
    const s = x.toString();
    return s.includes(".") ? s : `${s}.0`;
  }
  const [mant, e] = x.toExponential().split("e");
  return `${mant.includes(".") ? mant : `${mant}.0`}E${Number(e)}`;
}

function decText(u: bigint, scale: number): string {
  // Java BigDecimal.toString: plain unless the adjusted exponent is below -6.
  const neg = u < 0n;
  const digits = absB(u).toString();
  const adjusted = digits.length - 1 - scale;
  let body: string;
  if (scale >= 0 && adjusted >= -6) {
    if (scale === 0) body = digits;
    else if (digits.length > scale) body = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
    else body = `0.${"0".repeat(scale - digits.length)}${digits}`;
  } else {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    body = `${mant}E${adjusted >= 0 ? "+" : ""}${adjusted}`;
  }
  return neg ? `-${body}` : body;
}

function plainDec(u: bigint, scale: number): string {
  const neg = u < 0n;
  let digits = absB(u).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, "0");
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return neg ? `-${digits}` : digits;
}

function tsText(m: bigint): string {
  const days = Number((m - (((m % DAY) + DAY) % DAY)) / DAY);
  const tod = ((m % DAY) + DAY) % DAY;
  const secs = tod / 1_000_000n;
  const micros = tod % 1_000_000n;
  const hh = String(secs / 3600n).padStart(2, "0");
  const mi = String((secs / 60n) % 60n).padStart(2, "0");
  const ss = String(secs % 60n).padStart(2, "0");
  const frac = micros === 0n ? "" : `.${String(micros).padStart(6, "0").replace(/0+$/, "")}`;
  return `${formatDate(days)} ${hh}:${mi}:${ss}${frac}`;
}

/** The shortest decimal that reads back as the same float32. */
function floatShortest(x: number): number {
  if (!Number.isFinite(x)) return x;
  for (let p = 1; p <= 9; p++) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) === x) return y;
  }
  return x;
}

function toText(v: RV, t: SqlType): string {
  if (isDec(t)) return decText(v as bigint, t.scale);
  switch (t) {
    case "boolean":
      return v ? "true" : "false";
    case "double":
      return javaDouble(v as number);
    case "float":
      return javaDouble(floatShortest(v as number));
    case "date":
      return formatDate(v as number);
    case "timestamp":
    case "timestamp_ntz":
      return tsText(v as bigint);
    case "binary":
      return new TextDecoder().decode(v as Uint8Array);
    default:
      return String(v);
  }
}

const MONTH_NAMES = [
  "jan",
  "feb",
  "mar",
  "apr",
  "may",
  "jun",
  "jul",
  "aug",
  "sep",
  "oct",
  "nov",
  "dec",
];

/** java.time-style pattern parse through one regex built from the pattern. */
function byPattern(text: string, pattern: string) {
  const fields: string[] = [];
  let re = "";
  const tokens = pattern.match(/'[^']*'|([A-Za-z])\1*|./g) ?? [];
  tokens.forEach((tok, k) => {
    if (tok.startsWith("'")) {
      re += tok.slice(1, -1).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return;
    }
    const c = tok[0];
    const n = tok.length;
    const nextIsField = /^[yMdHms]/.test(tokens[k + 1] ?? "");
    if (!/[A-Za-z]/.test(c)) {
      re += tok.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      return;
    }
    fields.push(tok);
    if (c === "M" && n >= 3) re += "([A-Za-z]+)";
    else if (c === "S") re += `(\\d{${n}})`;
    else if (c === "y") re += n === 2 ? "(\\d{2})" : nextIsField ? `(\\d{${n}})` : `(\\d{${n},10})`;
    else re += n === 1 && !nextIsField ? "(\\d{1,2})" : `(\\d{${n}})`;
  });
  const m = new RegExp(`^${re}$`).exec(text);
  if (!m) return fail("CANNOT_PARSE_TIMESTAMP");
  const r = { y: 1970, M: 1, d: 1, H: 0, m: 0, s: 0, micros: 0 };
  fields.forEach((f, i) => {
    const v = m[i + 1];
    switch (f[0]) {
      case "y":
        r.y = f.length === 2 ? 2000 + Number(v) : Number(v);
        break;
      case "M":
        if (f.length >= 3) {
          const k = MONTH_NAMES.indexOf(v.slice(0, 3).toLowerCase());
          if (k < 0) fail("CANNOT_PARSE_TIMESTAMP");
          r.M = k + 1;
        } else r.M = Number(v);
        break;
      case "d":
        r.d = Number(v);
        break;
      case "H":
        r.H = Number(v);
        break;
      case "m":
        r.m = Number(v);
        break;
      case "s":
        r.s = Number(v);
        break;
      case "S":
        r.micros = Number(v.padEnd(6, "0").slice(0, 6));
        break;
    }
  });
  if (
    r.M < 1 ||
    r.M > 12 ||
    r.d < 1 ||
    r.d > daysIn(r.y, r.M) ||
    r.H > 23 ||
    r.m > 59 ||
    r.s > 59
  ) {
    fail("CANNOT_PARSE_TIMESTAMP");
  }
  return r;
}

/** CAST with ANSI semantics; `tryCast` turns the failures into NULL. */
function castRef(v: RV, from: SqlType, to: SqlType, tryCast: boolean): RV {
  if (v === null) return null;
  try {
    return castInner(v, from, to);
  } catch (e) {
    if (tryCast) return null;
    throw e;
  }
}

function castInner(v: RV, from: SqlType, to: SqlType): RV {
  if (JSON.stringify(from) === JSON.stringify(to)) return v;
  if (to === "string") return toText(v, from);
  if (isDec(to)) {
    let u: bigint;
    if (from === "string") {
      const p = parseDecimalText(trimCtl(v as string));
      if (!p) return fail("CAST_INVALID_INPUT");
      u = decimalFromExact(p[0], p[1], to.scale);
    } else if (isInt(from)) u = (v as bigint) * ten(to.scale);
    else if (isDec(from)) u = toScale(v as bigint, from.scale, to.scale);
    else if (isFloat(from)) {
      if (!Number.isFinite(v as number)) return null;
      const p = parseDecimalText(String(v))!;
      u = decimalFromExact(p[0], p[1], to.scale);
    } else if (from === "boolean") u = v ? ten(to.scale) : 0n;
    else return fail("UNSUPPORTED");
    return checkPrecision(u, to);
  }
  if (isInt(to)) {
    const [lo, hi] = INTS[to];
    let b: bigint;
    if (from === "string") {
      const s = trimCtl(v as string);
      if (!/^[+-]?\d+$/.test(s)) return fail("CAST_INVALID_INPUT");
      b = BigInt(s);
      if (b < lo || b > hi) return fail("CAST_INVALID_INPUT");
      return b;
    }
    if (isInt(from)) b = v as bigint;
    else if (isDec(from)) b = (v as bigint) / ten(from.scale);
    else if (isFloat(from)) {
      const x = v as number;
      if (Number.isNaN(x) || Math.floor(x) > Number(hi) || Math.ceil(x) < Number(lo)) {
        return fail("CAST_OVERFLOW");
      }
      b = BigInt(Math.trunc(x));
      return b > hi ? hi : b < lo ? lo : b;
    } else if (from === "boolean") b = v ? 1n : 0n;
    else return fail("UNSUPPORTED");
    if (b < lo || b > hi) return fail("CAST_OVERFLOW");
    return b;
  }
  if (isFloat(to)) {
    let x: number;
    if (from === "string") {
      const s = trimCtl(v as string);
      const low = s.toLowerCase();
      if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dfDF]?$/.test(s))
        x = Number(s.replace(/[dfDF]$/, ""));
      else if (["inf", "+inf", "infinity", "+infinity"].includes(low)) x = Infinity;
      else if (["-inf", "-infinity"].includes(low)) x = -Infinity;
      else if (low === "nan") x = Number.NaN;
      else return fail("CAST_INVALID_INPUT");
    } else if (isInt(from)) x = Number(v as bigint);
    else if (isDec(from)) x = Number(plainDec(v as bigint, from.scale));
    else if (isFloat(from)) x = v as number;
    else if (from === "boolean") x = v ? 1 : 0;
    else return fail("UNSUPPORTED");
    return to === "float" ? Math.fround(x) : x;
  }
  if (to === "boolean") {
    if (from === "string") {
      const s = trimCtl(v as string).toLowerCase();
      if (["t", "true", "y", "yes", "1"].includes(s)) return true;
      if (["f", "false", "n", "no", "0"].includes(s)) return false;
      return fail("CAST_INVALID_INPUT");
    }
    if (typeof v === "bigint") return v !== 0n;
    return v !== 0;
  }
  if (to === "date") {
    if (from === "string") {
      const d = textToDate(v as string);
      return d === undefined ? fail("CAST_INVALID_INPUT") : d;
    }
    const m = v as bigint;
    return Number((m - (((m % DAY) + DAY) % DAY)) / DAY);
  }
  if (to === "timestamp" || to === "timestamp_ntz") {
    if (from === "string") {
      const m = textToTimestamp(v as string, to === "timestamp_ntz");
      return m === undefined ? fail("CAST_INVALID_INPUT") : m;
    }
    if (from === "date") return BigInt(v as number) * DAY;
    return v;
  }
  if (to === "binary") return new TextEncoder().encode(v as string);
  return fail("UNSUPPORTED");
}

/** Spark's value ordering: strings by code point, NaN largest and equal to itself. */
function cmp(a: RV, b: RV): number {
  if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "boolean") return Number(a) - Number(b);
  if (typeof a === "string" && typeof b === "string") {
    const x = Array.from(a, (c) => c.codePointAt(0)!);
    const y = Array.from(b, (c) => c.codePointAt(0)!);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
  }
  return JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0;
}

function likeToRegex(p: string, esc: string): RegExp {
  const chars = Array.from(p);
  let out = "";
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === esc) {
      if (i === chars.length - 1) fail("INVALID_FORMAT.ESC_AT_THE_END");
      const n = chars[++i];
      if (n !== "%" && n !== "_" && n !== esc) fail("INVALID_FORMAT.ESC_IN_THE_MIDDLE");
      out += `\\u{${n.codePointAt(0)!.toString(16)}}`;
    } else if (c === "%") out += "[^]*";
    else if (c === "_") out += "[^]";
    else out += `\\u{${c.codePointAt(0)!.toString(16)}}`;
  }
  return new RegExp(`^${out}$`, "u");
}

/** Scalar of the analysed tree's literal form to this evaluator's form. */
function fromLiteral(v: unknown, t: SqlType): RV {
  if (v === null || v === undefined) return null;
  if (isInt(t)) return BigInt(v as number | bigint);
  return v as RV;
}

/** The canonical JSON value (DESIGN §6) of a value of type t. */
function canonical(v: RV, t: SqlType): unknown {
  if (v === null || t === "null") return null;
  if (isDec(t)) return plainDec(v as bigint, t.scale);
  if (isInt(t)) {
    const b = v as bigint;
    return b >= -(2n ** 53n - 1n) && b <= 2n ** 53n - 1n ? Number(b) : String(b);
  }
  switch (t) {
    case "double":
    case "float": {
      const x = v as number;
      if (Number.isNaN(x)) return "NaN";
      if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
      return t === "float" ? floatShortest(x) : x;
    }
    case "date":
      return formatDate(v as number);
    case "timestamp":
      return formatTimestamp(v as bigint, true);
    case "timestamp_ntz":
      return formatTimestamp(v as bigint, false);
    case "binary":
      return Buffer.from(v as Uint8Array).toString("base64");
    default:
      return v;
  }
}

/** The value of a canonical JSON input of type t in this evaluator's form. */
function fromCanonical(v: unknown, t: SqlType): RV {
  if (v === null || v === undefined) return null;
  if (isDec(t)) {
    const p = parseDecimalText(String(v))!;
    return decimalFromExact(p[0], p[1], t.scale);
  }
  if (isInt(t)) return BigInt(v as number | string);
  switch (t) {
    case "double":
    case "float": {
      const x =
        typeof v === "number"
          ? v
          : v === "NaN"
            ? Number.NaN
            : v === "Infinity"
              ? Infinity
              : -Infinity;
      return t === "float" ? Math.fround(x) : x;
    }
    case "date":
      return textToDate(String(v))!;
    case "timestamp":
    case "timestamp_ntz":
      return textToTimestamp(String(v), t === "timestamp_ntz")!;
    case "binary":
      return new Uint8Array(Buffer.from(String(v), "base64"));
    default:
      return v as RV;
  }
}

interface Env {
  row: readonly unknown[];
  types: readonly SqlType[];
  now: bigint;
}

function arith(t: Extract<Typed, { kind: "arith" }>, a: RV, b: RV): RV {
  const lt = t.left.type;
  if (isDec(lt)) {
    const rt = t.right.type as Dec;
    const res = t.type;
    const s = Math.max(lt.scale, rt.scale);
    const x = toScale(a as bigint, lt.scale, s);
    const y = toScale(b as bigint, rt.scale, s);
    if (t.op === "div") {
      if (y === 0n) fail("DIVIDE_BY_ZERO");
      const q = x / y;
      if (q < INTS.long[0] || q > INTS.long[1]) fail("ARITHMETIC_OVERFLOW");
      return q;
    }
    const d = res as Dec;
    switch (t.op) {
      case "+":
        return checkPrecision(toScale(x + y, s, d.scale), d);
      case "-":
        return checkPrecision(toScale(x - y, s, d.scale), d);
      case "*": {
        const [u, sc] = mc38((a as bigint) * (b as bigint), lt.scale + rt.scale);
        return checkPrecision(toScale(u, sc, d.scale), d);
      }
      case "/": {
        if (y === 0n) fail("DIVIDE_BY_ZERO");
        const [u, sc] = divide38(x, y);
        return checkPrecision(toScale(u, sc, d.scale), d);
      }
      case "%": {
        if (y === 0n) fail("REMAINDER_BY_ZERO");
        return checkPrecision(toScale(x % y, s, d.scale), d);
      }
    }
  }
  if (isInt(lt)) {
    const x = a as bigint;
    const y = b as bigint;
    switch (t.op) {
      case "+":
        return intCheck(x + y, lt);
      case "-":
        return intCheck(x - y, lt);
      case "*":
        return intCheck(x * y, lt);
      case "%":
        if (y === 0n) fail("REMAINDER_BY_ZERO");
        return x % y;
      case "div":
        if (y === 0n) fail("DIVIDE_BY_ZERO");
        return intCheck(x / y, "long");
    }
  }
  const x = a as number;
  const y = b as number;
  let z: number;
  switch (t.op) {
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
      if (y === 0) fail("DIVIDE_BY_ZERO");
      z = x / y;
      break;
    default:
      if (y === 0) fail("REMAINDER_BY_ZERO");
      z = x % y;
  }
  return t.type === "float" ? Math.fround(z) : z;
}

function roundHalfUpDouble(x: number, d: number): number {
  if (!Number.isFinite(x)) return x;
  const p = parseDecimalText(String(x))!;
  const u = decimalFromExact(p[0], p[1], d);
  const r = Number(d >= 0 ? plainDec(u, d) : `${u}e${-d}`);
  return r === 0 && (x < 0 || Object.is(x, -0)) ? -0 : r;
}

function callRef(t: Extract<Typed, { kind: "call" }>, args: RV[], env: Env): RV {
  const at = t.args.map((a) => a.type);
  switch (t.name) {
    case "abs": {
      const v = args[0];
      if (isDec(t.type)) return absB(v as bigint);
      if (typeof v === "bigint") return v < 0n ? intCheck(-v, t.type) : v;
      return Math.abs(v as number);
    }
    case "round": {
      const d = Number(args[1]);
      const x = args[0];
      const xt = at[0];
      if (isDec(xt)) {
        const rt = t.type as Dec;
        const u =
          d >= 0
            ? toScale(x as bigint, xt.scale, rt.scale)
            : roundDiv(x as bigint, ten(xt.scale - d)) * ten(-d);
        return checkPrecision(u, rt);
      }
      if (isInt(xt)) {
        if (d >= 0) return x;
        const r = roundDiv(x as bigint, ten(-d)) * ten(-d);
        return intCheck(r, xt);
      }
      const r = roundHalfUpDouble(x as number, d);
      return xt === "float" ? Math.fround(r) : r;
    }
    case "floor":
    case "ceil":
    case "ceiling": {
      const up = t.name !== "floor";
      const xt = at[0];
      const x = args[0];
      if (isDec(xt)) {
        const p = ten(xt.scale);
        const u = x as bigint;
        let q = u / p;
        if (u % p !== 0n) {
          if (up && u > 0n) q += 1n;
          if (!up && u < 0n) q -= 1n;
        }
        return q;
      }
      if (isInt(xt)) return x;
      const r = up ? Math.ceil(x as number) : Math.floor(x as number);
      if (Number.isNaN(r)) return 0n;
      if (r >= 2 ** 63) return INTS.long[1];
      if (r <= -(2 ** 63)) return INTS.long[0];
      return BigInt(r);
    }
    case "lower":
    case "lcase":
      return (args[0] as string).toLowerCase();
    case "upper":
    case "ucase":
      return (args[0] as string).toUpperCase();
    case "trim":
    case "ltrim":
    case "rtrim": {
      const chars = Array.from(args[0] as string);
      const set = new Set(args.length > 1 ? Array.from(args[1] as string) : [" "]);
      let a = 0;
      let b = chars.length;
      if (t.name !== "rtrim") while (a < b && set.has(chars[a])) a++;
      if (t.name !== "ltrim") while (b > a && set.has(chars[b - 1])) b--;
      return chars.slice(a, b).join("");
    }
    case "length":
    case "char_length":
    case "character_length":
    case "len":
      return BigInt(
        args[0] instanceof Uint8Array ? args[0].length : Array.from(args[0] as string).length,
      );
    case "substring":
    case "substr": {
      const units: unknown[] =
        args[0] instanceof Uint8Array ? Array.from(args[0]) : Array.from(args[0] as string);
      const pos = Number(args[1]);
      const len = args.length > 2 ? Number(args[2]) : 2147483647;
      let start = pos > 0 ? pos - 1 : pos < 0 ? units.length + pos : 0;
      const end = Math.min(units.length, start + len);
      start = Math.max(0, start);
      const part = start < end ? units.slice(start, end) : [];
      return args[0] instanceof Uint8Array
        ? new Uint8Array(part as number[])
        : (part as string[]).join("");
    }
    case "concat":
      return (args as string[]).join("");
    case "concat_ws":
      return args[0] === null
        ? null
        : (args.slice(1).filter((x) => x !== null) as string[]).join(args[0] as string);
    case "date_add":
    case "dateadd":
      return ((args[0] as number) + Number(args[1])) | 0;
    case "date_sub":
      return ((args[0] as number) - Number(args[1])) | 0;
    case "datediff":
      return BigInt((args[0] as number) - (args[1] as number));
    case "year":
      return BigInt(civil(args[0] as number)[0]);
    case "month":
      return BigInt(civil(args[0] as number)[1]);
    case "day":
    case "dayofmonth":
      return BigInt(civil(args[0] as number)[2]);
    case "to_date": {
      if (args.length > 1) {
        const p = byPattern(args[0] as string, args[1] as string);
        return daysFromCivil(p.y, p.M, p.d);
      }
      const d = textToDate(args[0] as string);
      return d === undefined ? fail("CAST_INVALID_INPUT") : d;
    }
    case "to_timestamp": {
      if (args.length > 1) {
        const p = byPattern(args[0] as string, args[1] as string);
        const secs = BigInt((p.H * 60 + p.m) * 60 + p.s);
        return BigInt(daysFromCivil(p.y, p.M, p.d)) * DAY + secs * 1_000_000n + BigInt(p.micros);
      }
      const m = textToTimestamp(args[0] as string, false);
      return m === undefined ? fail("CAST_INVALID_INPUT") : m;
    }
    case "dayofweek":
      return BigInt(((((args[0] as number) % 7) + 11) % 7) + 1);
    case "quarter":
      return BigInt(Math.ceil(civil(args[0] as number)[1] / 3));
    case "dayofyear": {
      const d = args[0] as number;
      return BigInt(d - daysFromCivil(civil(d)[0], 1, 1) + 1);
    }
    case "hour":
    case "minute":
    case "second": {
      const m = args[0] as bigint;
      const secs = (((m % DAY) + DAY) % DAY) / 1_000_000n;
      return t.name === "hour"
        ? secs / 3600n
        : t.name === "minute"
          ? (secs / 60n) % 60n
          : secs % 60n;
    }
    case "startswith":
      return (args[0] as string).startsWith(args[1] as string);
    case "endswith":
      return (args[0] as string).endsWith(args[1] as string);
    case "contains":
      return (args[0] as string).includes(args[1] as string);
    case "replace": {
      const [str, search, rep] = args as string[];
      return search === "" ? str : str.split(search).join(rep ?? "");
    }
    case "lpad":
    case "rpad": {
      const chars = Array.from(args[0] as string);
      const n = Number(args[1]);
      const fill = Array.from(args.length > 2 ? (args[2] as string) : " ");
      if (n <= chars.length || fill.length === 0) return chars.slice(0, Math.max(0, n)).join("");
      const extra: string[] = [];
      while (extra.length < n - chars.length) extra.push(fill[extra.length % fill.length]);
      return (t.name === "lpad" ? [...extra, ...chars] : [...chars, ...extra]).join("");
    }
    case "instr":
    case "locate": {
      const [hay, needle] = (t.name === "instr" ? args : [args[1], args[0]]) as string[];
      const from = t.name === "locate" && args.length > 2 ? Number(args[2]) : 1;
      if (from < 1) return 0n;
      const chars = Array.from(hay);
      const want = Array.from(needle);
      for (let i = from - 1; i + want.length <= chars.length; i++) {
        if (want.every((c, k) => chars[i + k] === c)) return BigInt(i + 1);
      }
      return 0n;
    }
    case "left":
    case "right": {
      const chars = Array.from(args[0] as string);
      const n = Math.max(0, Number(args[1]));
      return (
        t.name === "left"
          ? chars.slice(0, n)
          : chars.slice(chars.length - Math.min(n, chars.length))
      ).join("");
    }
    case "reverse":
      return Array.from(args[0] as string)
        .reverse()
        .join("");
    case "repeat":
      return Array.from({ length: Math.max(0, Number(args[1])) }, () => args[0]).join("");
    case "initcap": {
      let out = "";
      let start = true;
      for (const c of Array.from((args[0] as string).toLowerCase())) {
        out += start ? c.toUpperCase() : c;
        start = c === " ";
      }
      return out;
    }
    case "translate": {
      const from = Array.from(args[1] as string);
      const to = Array.from(args[2] as string);
      return Array.from(args[0] as string)
        .map((c) => {
          const k = from.indexOf(c);
          return k < 0 ? c : (to[k] ?? "");
        })
        .join("");
    }
    case "md5":
    case "sha1":
    case "sha":
      return createHash(t.name === "md5" ? "md5" : "sha1")
        .update(args[0] as Uint8Array)
        .digest("hex");
    case "sha2": {
      const bits = Number(args[1]);
      if (![0, 224, 256, 384, 512].includes(bits)) return null;
      return createHash(`sha${bits === 0 ? 256 : bits}`)
        .update(args[0] as Uint8Array)
        .digest("hex");
    }
    case "base64":
      return Buffer.from(args[0] as Uint8Array).toString("base64");
    case "sqrt":
      return Math.sqrt(args[0] as number);
    case "cbrt":
      return Math.cbrt(args[0] as number);
    case "exp":
      return Math.exp(args[0] as number);
    case "expm1":
      return Math.expm1(args[0] as number);
    case "pow":
    case "power":
      return (args[0] as number) ** (args[1] as number);
    case "ln":
    case "log10":
    case "log2":
    case "log": {
      const xs = args as number[];
      if (xs.some((x) => x <= 0)) return null;
      const x = xs[xs.length - 1];
      if (t.name === "log" && xs.length === 2) return Math.log(x) / Math.log(xs[0]);
      return t.name === "log10" ? Math.log10(x) : t.name === "log2" ? Math.log2(x) : Math.log(x);
    }
    case "sign":
    case "signum":
      return Math.sign(args[0] as number);
    case "current_date": {
      const n = env.now;
      return Number((n - (((n % DAY) + DAY) % DAY)) / DAY);
    }
    case "current_timestamp":
    case "now":
      return env.now;
    case "greatest":
    case "least": {
      let best: RV = null;
      for (const v of args) {
        if (v === null) continue;
        const c = best === null ? 1 : cmp(v, best);
        if (best === null || (t.name === "greatest" ? c > 0 : c < 0)) best = v;
      }
      return best;
    }
    default:
      return fail("UNSUPPORTED_IN_REFERENCE", `reference evaluator has no ${t.name}`);
  }
}

const NULL_SAFE = new Set(["concat_ws", "greatest", "least"]);

function ev(t: Typed, env: Env): RV {
  switch (t.kind) {
    case "literal":
      return fromLiteral(t.value, t.type);
    case "column":
      return fromCanonical(env.row[t.ordinal], env.types[t.ordinal]);
    case "field": {
      const o = ev(t.operand, env) as Record<string, unknown> | null;
      return o === null ? null : fromCanonical(o[t.name], t.type);
    }
    case "cast":
      return castRef(ev(t.operand, env), t.operand.type, t.type, t.tryCast);
    case "arith": {
      const a = ev(t.left, env);
      if (a === null) return null;
      const b = ev(t.right, env);
      return b === null ? null : arith(t, a, b);
    }
    case "bitwise": {
      const a = ev(t.left, env) as bigint | null;
      if (a === null) return null;
      const b = ev(t.right, env) as bigint | null;
      if (b === null) return null;
      return t.op === "&" ? a & b : t.op === "|" ? a | b : a ^ b;
    }
    case "negate": {
      const a = ev(t.operand, env);
      if (a === null) return null;
      if (typeof a === "bigint") {
        if (isInt(t.type) && a === INTS[t.type][0]) fail("ARITHMETIC_OVERFLOW");
        return -a;
      }
      return -(a as number);
    }
    case "bitnot": {
      const a = ev(t.operand, env) as bigint | null;
      return a === null ? null : ~a;
    }
    case "compare": {
      const a = ev(t.left, env);
      if (t.op !== "<=>" && a === null) return null;
      const b = ev(t.right, env);
      if (t.op === "<=>")
        return a === null || b === null ? a === null && b === null : cmp(a, b) === 0;
      if (a === null || b === null) return null;
      const c = cmp(a, b);
      switch (t.op) {
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
    case "and": {
      const a = ev(t.left, env);
      if (a === false) return false;
      const b = ev(t.right, env);
      if (b === false) return false;
      return a === null || b === null ? null : true;
    }
    case "or": {
      const a = ev(t.left, env);
      if (a === true) return true;
      const b = ev(t.right, env);
      if (b === true) return true;
      return a === null || b === null ? null : false;
    }
    case "not": {
      const a = ev(t.operand, env);
      return a === null ? null : !a;
    }
    case "isNull": {
      const a = ev(t.operand, env);
      return t.negated ? a !== null : a === null;
    }
    case "in": {
      const a = ev(t.operand, env);
      if (a === null) return null;
      let sawNull = false;
      for (const item of t.list) {
        const b = ev(item, env);
        if (b === null) sawNull = true;
        else if (cmp(a, b) === 0) return true;
      }
      return sawNull ? null : false;
    }
    case "like": {
      const s = ev(t.operand, env);
      if (s === null) return null;
      const p = ev(t.pattern, env);
      if (p === null) return null;
      // Silt promises RE2's linear-time semantics for RLIKE, so the oracle matches with RE2.
      if (t.op === "rlike")
        return RE2JS.compile(p as string)
          .matcher(s as string)
          .find();
      return likeToRegex(p as string, t.escape).test(s as string);
    }
    case "case": {
      for (const b of t.branches) if (ev(b.when, env) === true) return ev(b.then, env);
      return t.otherwise ? ev(t.otherwise, env) : null;
    }
    case "coalesce": {
      for (const a of t.args) {
        const v = ev(a, env);
        if (v !== null) return v;
      }
      return null;
    }
    case "call": {
      const args: RV[] = [];
      const all = NULL_SAFE.has(t.name) || t.name === "concat";
      for (const a of t.args) {
        const v = ev(a, env);
        args.push(v);
        if (v === null && !all) return null;
      }
      if (!NULL_SAFE.has(t.name) && args.some((a) => a === null)) return null;
      const r = callRef(t, args, env);
      return typeof r === "bigint" &&
        !isInt(t.type) &&
        !isDec(t.type) &&
        !(t.type === "timestamp" || t.type === "timestamp_ntz")
        ? Number(r)
        : r;
    }
    case "aggregate":
      return fail("INTERNAL_ERROR", "aggregates are not row expressions");
  }
}

/** Normalizes a result to the form `canonical` expects for the node's type. */
function normalize(v: RV, t: SqlType): RV {
  if (v === null) return null;
  if (isInt(t)) return BigInt(v as number | bigint);
  if (t === "date" && typeof v === "bigint") return Number(v);
  return v;
}

/**
 * Evaluates `t` on each row (canonical JSON values indexed by column ordinal, of `types`),
 * returning canonical JSON values; throws the first error in row order.
 */
export function referenceEvaluate(
  t: Typed,
  rows: readonly (readonly unknown[])[],
  types: readonly SqlType[],
  now: bigint = 0n,
): unknown[] {
  return rows.map((row) => canonical(normalize(ev(t, { row, types, now }), t.type), t.type));
}
