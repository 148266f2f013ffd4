/**
 * Canonical JSON values (DESIGN §6) <-> scalars: how a value read from JSON rows, partition
 * values or statistics becomes a scalar of its type, and back.
 */

import { DecimalValue } from "../data/stats.ts";
import { MAX_DECIMAL_PRECISION } from "../delta/schema.ts";
import { parseFloating } from "../values/cast-text.ts";
import { formatDate, formatTimestamp } from "../values/datetime-text.ts";
import { pow10n, rescale } from "../values/decimal-scale.ts";
import { formatDecimal, parseDecimal } from "../values/decimal-text.ts";
import { shortestFloat32 } from "../values/float-text.ts";
import { castInvalidInput } from "./ansi-errors.ts";
import type { SqlType } from "./ast.ts";
import { parseSparkDate, parseSparkTimestamp } from "./scalar-parse.ts";
import type { Scalar } from "./types.ts";

const base64 = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

const MAX_SAFE_N = BigInt(Number.MAX_SAFE_INTEGER);

/** A scalar from a canonical JSON value (or a looser form: numbers for decimals, etc.). */
export function toScalar(value: unknown, t: SqlType): Scalar | null {
  if (value === null || value === undefined || t === "null") return null;
  if (typeof t === "object") {
    if (t.type !== "decimal") return value as Scalar;
    if (typeof value === "bigint") return value * pow10n(t.scale);
    if (value instanceof DecimalValue) return rescale(value.unscaled, value.scale, t.scale);
    const r = parseDecimal(String(value), MAX_DECIMAL_PRECISION + t.scale + 1, t.scale);
    if (typeof r === "string") throw castInvalidInput(String(value), "string", t);
    return BigInt(r);
  }
  switch (t) {
    case "boolean":
      return value === true || value === "true";
    case "byte":
    case "short":
    case "integer":
      return Number(value);
    case "long":
      return typeof value === "bigint" ? value : BigInt(value as number | string);
    case "float":
    case "double": {
      if (typeof value === "number") return t === "float" ? Math.fround(value) : value;
      const x = parseFloating(String(value));
      if (x === undefined) throw castInvalidInput(String(value), "string", t);
      return t === "float" ? Math.fround(x) : x;
    }
    case "string":
      return String(value);
    case "binary":
      return value instanceof Uint8Array
        ? value
        : new Uint8Array(Buffer.from(String(value), "base64"));
    case "date": {
      if (typeof value === "number") return value;
      const d = parseSparkDate(String(value));
      if (d === undefined) throw castInvalidInput(String(value), "string", "date");
      return d;
    }
    case "timestamp":
    case "timestamp_ntz": {
      if (typeof value === "bigint") return value;
      const m = parseSparkTimestamp(String(value), t === "timestamp_ntz");
      if (m === undefined) throw castInvalidInput(String(value), "string", t);
      return m;
    }
  }
}

/** The canonical JSON value of a scalar (what arrowValues yields for the same value). */
export function fromScalar(v: Scalar | null, t: SqlType): unknown {
  if (v === null || t === "null") return null;
  if (typeof t === "object") {
    return t.type === "decimal" ? formatDecimal(v as bigint, t.scale) : v;
  }
  switch (t) {
    case "long": {
      const b = v as bigint;
      return b >= -MAX_SAFE_N && b <= MAX_SAFE_N ? Number(b) : String(b);
    }
    case "float": {
      const x = v as number;
      return Number.isFinite(x) ? shortestFloat32(Math.fround(x)) : floatText(x);
    }
    case "double": {
      const x = v as number;
      return Number.isFinite(x) ? x : floatText(x);
    }
    case "binary":
      return base64(v as Uint8Array);
    case "date":
      return formatDate(v as number);
    case "timestamp":
      return formatTimestamp(v as bigint, true);
    case "timestamp_ntz":
      return formatTimestamp(v as bigint, false);
    default:
      return v;
  }
}

const floatText = (x: number): string =>
  Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
