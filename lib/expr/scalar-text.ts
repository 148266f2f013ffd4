/**
 * Spark's text forms of scalars where they differ from JavaScript's: Java's Double.toString and
 * Float.toString, BigDecimal.toString, and Literal.sql (how a value prints in an error message).
 */
import { formatDate, formatTimestampSpark, shortestFloat32 } from "../data/json-rows.ts";
import { DecimalValue } from "../data/stats.ts";
import type { SqlType } from "./ast.ts";
import type { Scalar } from "./types.ts";

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

/** Java BigDecimal.toString of a decimal scalar (scientific below 1E-6, as Spark prints). */
export const decimalString = (u: bigint, scale: number): string =>
  new DecimalValue(u, scale).toString();

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex").toUpperCase();

/** Spark's Literal.sql: how a value prints as a SQL literal (1L, 9.50BD, DATE '…', 'x'). */
export function sqlLiteral(v: Scalar | null, t: SqlType): string {
  if (v === null) return "NULL";
  if (typeof t === "object") {
    if (t.type === "decimal") return `${decimalString(v as bigint, t.scale)}BD`;
    return JSON.stringify(v);
  }
  switch (t) {
    case "boolean":
      return v ? "true" : "false";
    case "byte":
      return `${v}Y`;
    case "short":
      return `${v}S`;
    case "integer":
      return String(v);
    case "long":
      return `${v}L`;
    case "float":
    case "double": {
      const x = v as number;
      const name = t === "float" ? "FLOAT" : "DOUBLE";
      if (!Number.isFinite(x)) return `CAST('${javaDoubleString(x)}' AS ${name})`;
      return t === "float" ? `${javaFloatString(x)}F` : `${javaDoubleString(x)}D`;
    }
    case "string":
      return `'${(v as string).replaceAll("'", "\\'")}'`;
    case "binary":
      return `X'${hex(v as Uint8Array)}'`;
    case "date":
      return `DATE '${formatDate(v as number)}'`;
    case "timestamp":
      return `TIMESTAMP '${formatTimestampSpark(v as bigint)}'`;
    case "timestamp_ntz":
      return `TIMESTAMP_NTZ '${formatTimestampSpark(v as bigint)}'`;
    default:
      return String(v);
  }
}
