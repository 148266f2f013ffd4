/**
 * CAST of a scalar with ANSI semantics, and Spark's text of every value (CAST to STRING,
 * arrays, structs and maps included).
 */

import { type DecimalType, MAX_DECIMAL_PRECISION } from "../delta/schema.ts";
import { SiltError } from "../errors.ts";
import { MICROS_PER_DAY_N } from "../values/calendar.ts";
import { parseBoolean, parseFloating, trimControl } from "../values/cast-text.ts";
import { formatDate, formatTimestampSpark } from "../values/datetime-text.ts";
import { fitsPrecision, pow10n, rescale } from "../values/decimal-scale.ts";
import { formatDecimal, javaDecimalString, parseDecimal } from "../values/decimal-text.ts";
import { javaDoubleString, javaFloatString } from "../values/float-text.ts";
import { floorDiv } from "../values/floor-div.ts";
import { INT64_MAX, INT64_MIN } from "../values/int64.ts";
import {
  arithmeticOverflow,
  castInvalidInput,
  castOverflow,
  decimalOutOfRange,
} from "./ansi-errors.ts";
import type { SqlType } from "./ast.ts";
import { integralRange } from "./scalar-arithmetic.ts";
import { fromScalar, toScalar } from "./scalar-json.ts";
import { parseSparkDate, parseSparkTimestamp } from "./scalar-parse.ts";
import {
  type IntegralName,
  isComplex,
  isDecimalType,
  isFloating,
  isTimestamp,
  type Scalar,
  sameType,
} from "./types.ts";

const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

/**
 * CAST of a scalar with ANSI semantics: malformed text raises CAST_INVALID_INPUT, values out of
 * range CAST_OVERFLOW or NUMERIC_VALUE_OUT_OF_RANGE. With `tryCast`, those become NULL.
 */
export function castScalar(
  v: Scalar | null,
  from: SqlType,
  to: SqlType,
  tryCast = false,
): Scalar | null {
  if (v === null) return null;
  if (!tryCast) return castValue(v, from, to);
  try {
    return castValue(v, from, to);
  } catch (e) {
    if (e instanceof SiltError) return null;
    throw e;
  }
}

function castValue(v: Scalar, from: SqlType, to: SqlType): Scalar | null {
  if (sameType(from, to)) return v;
  if (from === "null") return null;
  if (to === "string") return scalarToString(v, from);
  if (typeof to === "object") {
    if (to.type === "decimal") return toDecimal(v, from, to);
    return castComplex(v, from, to);
  }
  switch (to) {
    case "binary":
      return utf8Encoder.encode(v as string);
    case "boolean":
      if (from === "string") {
        const b = parseBoolean(v as string);
        if (b === undefined) throw castInvalidInput(v, from, to);
        return b;
      }
      if (typeof v === "bigint") return v !== 0n;
      return (v as number) !== 0;
    case "byte":
    case "short":
    case "integer":
    case "long":
      return toIntegral(v, from, to);
    case "float":
    case "double": {
      let x: number;
      if (from === "string") {
        const p = parseFloating(v as string);
        if (p === undefined) throw castInvalidInput(v, from, to);
        x = p;
      } else if (from === "boolean") {
        x = v ? 1 : 0;
      } else if (isDecimalType(from)) {
        x = Number(formatDecimal(v as bigint, from.scale));
      } else if (from === "timestamp") {
        x = Number(v as bigint) / 1e6;
      } else {
        x = Number(v);
      }
      return to === "float" ? Math.fround(x) : x;
    }
    case "date":
      if (from === "string") {
        const d = parseSparkDate(v as string);
        if (d === undefined) throw castInvalidInput(v, from, to);
        return d;
      }
      return Number(floorDiv(v as bigint, MICROS_PER_DAY_N));
    case "timestamp":
    case "timestamp_ntz":
      if (from === "string") {
        const m = parseSparkTimestamp(v as string, to === "timestamp_ntz");
        if (m === undefined) throw castInvalidInput(v, from, to);
        return m;
      }
      if (from === "date") return BigInt(v as number) * MICROS_PER_DAY_N;
      if (isTimestamp(from)) return v;
      return numericToTimestamp(v, from);
    default:
      return null;
  }
}

function numericToTimestamp(v: Scalar, from: SqlType): bigint {
  if (isFloating(from)) {
    const x = v as number;
    if (!Number.isFinite(x)) throw castInvalidInput(v, from, "timestamp");
    const m = BigInt(Math.trunc(x * 1e6));
    return m < INT64_MIN ? INT64_MIN : m > INT64_MAX ? INT64_MAX : m;
  }
  if (isDecimalType(from)) {
    const m = ((v as bigint) * 1_000_000n) / pow10n(from.scale);
    if (m < INT64_MIN || m > INT64_MAX) throw castOverflow(v, from, "timestamp");
    return m;
  }
  const m = BigInt(v as number | bigint) * 1_000_000n;
  if (m < INT64_MIN || m > INT64_MAX) throw arithmeticOverflow("long overflow");
  return m;
}

const INT_TEXT = /^[+-]?\d+$/;

function toIntegral(v: Scalar, from: SqlType, to: IntegralName): number | bigint {
  const [lo, hi] = integralRange(to);
  let b: bigint;
  if (from === "string") {
    const s = trimControl(v as string);
    if (!INT_TEXT.test(s)) throw castInvalidInput(v, from, to);
    b = BigInt(s);
    if (b < lo || b > hi) throw castInvalidInput(v, from, to);
  } else if (from === "boolean") {
    b = v ? 1n : 0n;
  } else if (isDecimalType(from)) {
    b = (v as bigint) / pow10n(from.scale);
    if (b < lo || b > hi) throw castOverflow(v, from, to);
  } else if (isFloating(from)) {
    const x = v as number;
    // Spark's test: floor(x) <= MAX and ceil(x) >= MIN, in double arithmetic.
    if (!(Math.floor(x) <= Number(hi) && Math.ceil(x) >= Number(lo))) {
      throw castOverflow(v, from, to);
    }
    b = BigInt(Math.trunc(x));
    if (b > hi) b = hi;
    if (b < lo) b = lo;
  } else if (from === "timestamp") {
    b = floorDiv(v as bigint, 1_000_000n);
    if (b < lo || b > hi) throw castOverflow(v, from, to);
  } else {
    b = BigInt(v as number | bigint);
    if (b < lo || b > hi) throw castOverflow(v, from, to);
  }
  return to === "long" ? b : Number(b);
}

function toDecimal(v: Scalar, from: SqlType, to: DecimalType): bigint | null {
  let u: bigint;
  let scale: number;
  if (from === "string") {
    const r = parseDecimal(trimControl(v as string), MAX_DECIMAL_PRECISION * 2, to.scale);
    if (r === "invalid") throw castInvalidInput(v, from, to);
    if (r === "overflow") throw decimalOutOfRange(trimControl(v as string), to);
    u = BigInt(r);
    scale = to.scale;
  } else if (from === "boolean") {
    u = v ? 1n : 0n;
    scale = 0;
  } else if (isDecimalType(from)) {
    u = v as bigint;
    scale = from.scale;
  } else if (isFloating(from)) {
    const x = v as number;
    // Spark's Decimal(double) fails on NaN and infinities and the cast yields NULL.
    if (!Number.isFinite(x)) return null;
    const r = parseDecimal(String(x), 400, to.scale);
    if (typeof r === "string") throw decimalOutOfRange(javaDoubleString(x), to);
    u = BigInt(r);
    scale = to.scale;
  } else if (from === "timestamp") {
    u = v as bigint;
    scale = 6;
  } else {
    u = BigInt(v as number | bigint);
    scale = 0;
  }
  const r = rescale(u, scale, to.scale);
  if (!fitsPrecision(r, to.precision)) throw decimalOutOfRange(formatDecimal(r, to.scale), to);
  return r;
}

function castComplex(v: Scalar, from: SqlType, to: SqlType): Scalar {
  if (typeof from !== "object" || typeof to !== "object") return v;
  if (from.type === "array" && to.type === "array" && Array.isArray(v)) {
    return v.map((e) =>
      fromScalar(
        castValue(toScalar(e, from.elementType) as Scalar, from.elementType, to.elementType),
        to.elementType,
      ),
    );
  }
  if (from.type === "struct" && to.type === "struct") {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    from.fields.forEach((f, i) => {
      const x = toScalar(o[f.name], f.type);
      const tf = to.fields[i];
      out[tf.name] = x === null ? null : fromScalar(castValue(x, f.type, tf.type), tf.type);
    });
    return out;
  }
  return v;
}

/** CAST(x AS STRING) of a non-null scalar. */
export function scalarToString(v: Scalar, t: SqlType): string {
  if (typeof t === "object") {
    if (t.type === "decimal") return javaDecimalString(v as bigint, t.scale);
    return complexToString(v, t);
  }
  switch (t) {
    case "string":
      return v as string;
    case "boolean":
      return v ? "true" : "false";
    case "float":
      return javaFloatString(v as number);
    case "double":
      return javaDoubleString(v as number);
    case "date":
      return formatDate(v as number);
    case "timestamp":
    case "timestamp_ntz":
      return formatTimestampSpark(v as bigint);
    case "binary":
      return utf8Decoder.decode(v as Uint8Array);
    default:
      return String(v);
  }
}

/** Spark's text of arrays "[1, 2]", structs "{1, a}" and maps "{k -> v}". */
function complexToString(v: unknown, t: SqlType): string {
  const el = (x: unknown, et: SqlType): string => {
    if (x === null || x === undefined) return "null";
    return isComplex(et) ? complexToString(x, et) : scalarToString(toScalar(x, et) as Scalar, et);
  };
  if (typeof t !== "object") return String(v);
  if (t.type === "array") {
    return `[${(v as unknown[]).map((x) => el(x, t.elementType)).join(", ")}]`;
  }
  if (t.type === "struct") {
    const o = v as Record<string, unknown>;
    return `{${t.fields.map((f) => el(o[f.name], f.type)).join(", ")}}`;
  }
  if (t.type === "map") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .map((k) => `${el(k, t.keyType)} -> ${el(o[k], t.valueType)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(v);
}
