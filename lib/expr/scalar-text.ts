/**
 * Spark's Literal.sql: how a scalar prints as a SQL literal in an error message.
 */

import { formatDate, formatTimestampSpark } from "../values/datetime-text.ts";
import { javaDecimalString } from "../values/decimal-text.ts";
import { javaDoubleString, javaFloatString } from "../values/float-text.ts";
import type { SqlType } from "./ast.ts";
import type { Scalar } from "./types.ts";

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex").toUpperCase();

/** Spark's Literal.sql: how a value prints as a SQL literal (1L, 9.50BD, DATE '…', 'x'). */
export function sqlLiteral(v: Scalar | null, t: SqlType): string {
  if (v === null) return "NULL";
  if (typeof t === "object") {
    if (t.type === "decimal") return `${javaDecimalString(v as bigint, t.scale)}BD`;
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
