/**
 * Literal tokens into typed literal nodes, as Spark types them: integers by range (INT, BIGINT,
 * then DECIMAL), suffixed numbers (1L, 1S, 1Y, 1D, 1F, 1BD) with range checks, decimals with
 * BigDecimal's precision and scale, and DATE / TIMESTAMP / TIMESTAMP_NTZ / X'…' typed literals
 * in the canonical text forms the analyser reads.
 */

import { checkDecimal } from "../delta/schema.ts";
import { checkedDaysFromCivil, microsFromDays } from "../values/calendar.ts";
import { formatDate, formatTimestamp, parseTimestamp } from "../values/datetime-text.ts";
import { shortestFloat32 } from "../values/float-text.ts";
import { INT64_MAX, INT64_MIN } from "../values/int64.ts";
import type { Expr, Pos } from "./ast.ts";
import { parseError, type Token } from "./lexer.ts";
import { withPos } from "./parser-base.ts";

const INT32_MIN = -2147483648n;
const INT32_MAX = 2147483647n;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

const integral = (n: bigint): number | bigint => (n <= SAFE_MAX && n >= -SAFE_MAX ? Number(n) : n);

/** A number token as Spark types it; `negative` when a minus sign directly preceded it. */
export function numberLiteral(tok: Token, negative: boolean, pos: Pos): Expr {
  const sign = negative ? "-" : "";
  const text = tok.text;
  switch (tok.numberKind) {
    case "integer": {
      const n = BigInt(sign + text);
      if (n >= INT32_MIN && n <= INT32_MAX) {
        return { kind: "literal", value: Number(n), type: "integer", pos };
      }
      if (n >= INT64_MIN && n <= INT64_MAX) {
        return { kind: "literal", value: integral(n), type: "long", pos };
      }
      return decimalLiteral(sign + text, pos);
    }
    case "bigint":
      return ranged(sign + text.slice(0, -1), "long", "bigint", INT64_MIN, INT64_MAX, pos);
    case "smallint":
      return ranged(sign + text.slice(0, -1), "short", "smallint", -32768n, 32767n, pos);
    case "tinyint":
      return ranged(sign + text.slice(0, -1), "byte", "tinyint", -128n, 127n, pos);
    case "decimal":
      return decimalLiteral(sign + text, pos);
    case "bigdecimal":
      return decimalLiteral(sign + text.slice(0, -2), pos);
    case "exponent":
      return floating(sign + text, "double", pos);
    case "double":
      return floating(sign + text.slice(0, -1), "double", pos);
    default:
      return floating(sign + text.slice(0, -1), "float", pos);
  }
}

function rangeError(raw: string, typeName: string, min: string, max: string, pos: Pos) {
  return parseError(pos, "INVALID_NUMERIC_LITERAL_RANGE", { raw, typeName, min, max });
}

function ranged(
  raw: string,
  type: "long" | "short" | "byte",
  typeName: string,
  min: bigint,
  max: bigint,
  pos: Pos,
): Expr {
  const n = BigInt(raw);
  if (n < min || n > max) throw rangeError(raw, typeName, String(min), String(max), pos);
  return { kind: "literal", value: integral(n), type, pos };
}

const DOUBLE_LIMIT = "1.7976931348623157E+308";
const FLOAT_LIMIT = "3.4028234663852886E+38";

function floating(raw: string, type: "double" | "float", pos: Pos): Expr {
  const v = Number(raw);
  const limit = type === "double" ? Number.MAX_VALUE : 3.4028234663852886e38;
  if (!Number.isFinite(v) || Math.abs(v) > limit) {
    const shown = type === "double" ? DOUBLE_LIMIT : FLOAT_LIMIT;
    throw rangeError(raw, type, `-${shown}`, shown, pos);
  }
  const value = type === "float" ? shortestFloat32(Math.fround(v)) : v;
  return { kind: "literal", value, type, pos };
}

/**
 * A decimal literal typed as Java's BigDecimal would be: precision = significant digits of the
 * unscaled value, scale = fraction digits (less any exponent; a negative scale is rounded up to
 * 0, as Spark does without its legacy flag), DECIMAL(max(precision, scale), scale).
 */
function decimalLiteral(raw: string, pos: Pos): Expr {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:E([+-]?\d+))?$/i.exec(raw);
  if (!m) {
    throw parseError(pos, "PARSE_SYNTAX_ERROR:NEAR_TEXT", { raw });
  }
  const negative = m[1] === "-";
  const frac = m[3] ?? "";
  let digits = (m[2] ?? "") + frac;
  let scale = frac.length - (m[4] ? Number(m[4]) : 0);
  if (scale < 0) {
    digits += "0".repeat(-scale);
    scale = 0;
  }
  const unscaled = digits.replace(/^0+/, "") || "0";
  const precision = Math.max(unscaled.length, scale);
  const type = withPos(pos, () => checkDecimal(precision, scale));
  const padded = unscaled.padStart(scale + 1, "0");
  const intPart = padded.slice(0, padded.length - scale);
  const text = scale > 0 ? `${intPart}.${padded.slice(padded.length - scale)}` : intPart;
  const isZero = unscaled === "0";
  return { kind: "literal", value: negative && !isZero ? `-${text}` : text, type, pos };
}

const DATE_LITERAL = /^\s*([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?\s*$/s;
const PARTIAL_DATE = /^\s*([+-]?\d{4,7})(?:-(\d{1,2}))?\s*$/;

export function typedLiteral(kind: string, text: string, pos: Pos): Expr {
  const invalid = () => parseError(pos, "INVALID_TYPED_LITERAL", { kind, text });
  switch (kind) {
    case "DATE": {
      const days = civilDays(text, DATE_LITERAL);
      if (days === undefined) throw invalid();
      return { kind: "literal", value: formatDate(days), type: "date", pos };
    }
    case "X": {
      const hex = text.length % 2 === 0 ? text : `0${text}`;
      if (!/^[0-9a-fA-F]*$/.test(hex)) throw invalid();
      return {
        kind: "literal",
        value: Buffer.from(hex, "hex").toString("base64"),
        type: "binary",
        pos,
      };
    }
    default: {
      const ntz = kind === "TIMESTAMP_NTZ";
      // Spark refuses a zone in a TIMESTAMP_NTZ literal rather than dropping it.
      if (ntz && /:\d{1,2}(?:[.,]\d*)?\s*(?:Z|UTC|GMT|[+-]\d)/i.test(text)) throw invalid();
      const partial = civilDays(text, PARTIAL_DATE);
      const micros = partial !== undefined ? microsFromDays(partial, 0) : parseTimestamp(text, ntz);
      if (micros === undefined) throw invalid();
      return {
        kind: "literal",
        value: formatTimestamp(micros, !ntz),
        type: ntz ? "timestamp_ntz" : "timestamp",
        pos,
      };
    }
  }
}

/** Day number of a date text Spark's stringToDate accepts (`2026`, `2026-1`, `2026-01-02 …`). */
function civilDays(text: string, re: RegExp): number | undefined {
  const m = re.exec(text);
  if (!m) return undefined;
  return checkedDaysFromCivil(Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1));
}
