/**
 * One evaluated column of a batch, in the cheapest form aggregation can read it without losing
 * today's (canonical-value) semantics:
 *
 * - `number`: byte, short, integer, date (days), float, double straight from the typed array;
 * - `words`: long and timestamps (2 × 32-bit words) and DECIMAL(p, s) stored at scale s
 *   (4 words), two's complement, least significant word first, read without BigInt per row;
 * - `scalar`: everything else, through the canonical values and `toScalar`, exactly as the
 *   row-at-a-time engine read them;
 * - `validity`: NULL or not only, for count(x), which reads nothing else (decoding a string
 *   column only to count it cost most of a GROUP BY's time).
 *
 * `valid` is one byte per row (1 = not NULL), absent when the column has no NULL.
 */
import * as arrow from "apache-arrow";
import { arrowValues } from "../data/arrow-to-json.ts";
import type { DataType } from "../delta/schema.ts";
import type { SqlType } from "../expr/ast.ts";
import { fromScalar, toScalar } from "../expr/scalar-json.ts";
import type { Scalar } from "../expr/types.ts";

export type ColumnView =
  | { kind: "validity"; type: SqlType; valid?: Uint8Array }
  | { kind: "number"; type: SqlType; valid?: Uint8Array; values: ArrayLike<number> }
  | { kind: "words"; type: SqlType; valid?: Uint8Array; words: Uint32Array; stride: 2 | 4 }
  | {
      kind: "scalar";
      type: SqlType;
      valid?: Uint8Array;
      scalars: (Scalar | null)[];
      canonical: unknown[];
    };

/** Which rows of `data` are not NULL, and nothing else. */
export function validityView(data: arrow.Data, type: SqlType): ColumnView {
  if (type === "null") return { kind: "validity", type, valid: new Uint8Array(data.length) };
  return { kind: "validity", type, valid: validBytes(data) };
}

export function viewOf(data: arrow.Data, type: SqlType): ColumnView {
  const t = data.type;
  const stride = wordsStride(type);
  if (numberLayout(t, type)) {
    return {
      kind: "number",
      type,
      valid: validBytes(data),
      values: data.values as ArrayLike<number>,
    };
  }
  if (stride !== undefined && wordsLayout(t, type, stride)) {
    const values = data.values as BigInt64Array | Uint32Array;
    const words = new Uint32Array(values.buffer, values.byteOffset, data.length * stride);
    return { kind: "words", type, valid: validBytes(data), words, stride };
  }
  const canonical =
    type === "null" ? new Array(data.length).fill(null) : arrowValues(data, type as DataType);
  const scalars = canonical.map((v) => toScalar(v, type));
  const valid = scalars.some((s) => s === null)
    ? Uint8Array.from(scalars, (s) => (s === null ? 0 : 1))
    : undefined;
  // A layout the fast paths do not read still gets its type's view kind, so an accumulator's
  // state never depends on how one batch happened to be encoded.
  if (numberType(type)) {
    return {
      kind: "number",
      type,
      valid,
      values: Float64Array.from(scalars, (s) => Number(s ?? 0)),
    };
  }
  if (stride !== undefined) {
    const words = new Uint32Array(data.length * stride);
    scalars.forEach((s, i) => {
      let v = BigInt.asUintN(32 * stride, (s ?? 0n) as bigint);
      for (let w = 0; w < stride; w++, v >>= 32n) words[i * stride + w] = Number(v & 0xffffffffn);
    });
    return { kind: "words", type, valid, words, stride };
  }
  return { kind: "scalar", type, valid, scalars, canonical };
}

const numberType = (type: SqlType): boolean =>
  type === "byte" ||
  type === "short" ||
  type === "integer" ||
  type === "date" ||
  type === "float" ||
  type === "double";

/** Words per value of the types read as two's complement words, else undefined. */
export function wordsStride(type: SqlType): 2 | 4 | undefined {
  if (type === "long" || type === "timestamp" || type === "timestamp_ntz") return 2;
  return typeof type === "object" && type.type === "decimal" ? 4 : undefined;
}

function numberLayout(t: arrow.DataType, type: SqlType): boolean {
  switch (type) {
    case "byte":
    case "short":
    case "integer": {
      const bits = { byte: 8, short: 16, integer: 32 }[type];
      return arrow.DataType.isInt(t) && t.isSigned && t.bitWidth === bits;
    }
    case "date":
      return arrow.DataType.isDate(t) && t.unit === arrow.DateUnit.DAY;
    case "float":
    case "double": {
      const p = type === "float" ? arrow.Precision.SINGLE : arrow.Precision.DOUBLE;
      return arrow.DataType.isFloat(t) && t.precision === p;
    }
    default:
      return false;
  }
}

function wordsLayout(t: arrow.DataType, type: SqlType, stride: 2 | 4): boolean {
  if (stride === 4) {
    const scale = typeof type === "object" && type.type === "decimal" ? type.scale : -1;
    return arrow.DataType.isDecimal(t) && t.bitWidth === 128 && t.scale === scale;
  }
  if (type === "long") return arrow.DataType.isInt(t) && t.isSigned && t.bitWidth === 64;
  return arrow.DataType.isTimestamp(t) && t.unit === arrow.TimeUnit.MICROSECOND;
}

function validBytes(data: arrow.Data): Uint8Array | undefined {
  const bitmap = data.nullBitmap;
  if (!(data.nullCount > 0 && bitmap && bitmap.length > 0)) return undefined;
  const out = new Uint8Array(data.length);
  const offset = data.offset;
  for (let i = 0; i < data.length; i++) {
    const bit = offset + i;
    out[i] = (bitmap[bit >> 3] >> (bit & 7)) & 1;
  }
  return out;
}

/** The exact value of row `i` of a words view. */
export function wordsValue(words: Uint32Array, stride: number, i: number): bigint {
  const base = i * stride;
  let v = BigInt(words[base + stride - 1] | 0);
  for (let w = stride - 2; w >= 0; w--) v = (v << 32n) | BigInt(words[base + w]);
  return v;
}

/** Row `i`'s value as `toScalar` would give it (the caller checked it is not NULL). */
export function scalarAt(view: ColumnView, i: number): Scalar {
  switch (view.kind) {
    case "validity":
      throw new Error("a validity view holds no values");
    case "number":
      return view.values[i];
    case "words":
      return wordsValue(view.words, view.stride, i);
    case "scalar":
      return view.scalars[i] as Scalar;
  }
}

/** Row `i`'s canonical value (what arrowValues yields), NULL included. */
export function canonicalAt(view: ColumnView, i: number): unknown {
  if (view.valid && view.valid[i] === 0) return null;
  return view.kind === "scalar" ? view.canonical[i] : fromScalar(scalarAt(view, i), view.type);
}

/**
 * A key equal for two rows exactly when their canonical values are (JSON.stringify equality):
 * numbers keyed as themselves, since a Map's SameValueZero also equates -0 with 0 and NaN with
 * NaN; 64-bit words as a number when exact, else a bigint; strings as themselves.
 */
export function keyAt(view: ColumnView, i: number): unknown {
  switch (view.kind) {
    case "validity":
      throw new Error("a validity view holds no values");
    case "number":
      return view.values[i];
    case "words": {
      if (view.stride === 2) {
        const hi = view.words[2 * i + 1] | 0;
        if (hi >= -0x200000 && hi < 0x200000) return hi * 4294967296 + view.words[2 * i];
      }
      return wordsValue(view.words, view.stride, i);
    }
    case "scalar":
      return view.type === "string" ? view.scalars[i] : JSON.stringify(view.canonical[i]);
  }
}
