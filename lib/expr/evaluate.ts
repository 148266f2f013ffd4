/**
 * Vectorized evaluation of analysed expressions over Arrow record batches.
 *
 * Each node evaluates to a column ("Vec") held in the cheapest JS form for its type: 0/1 bytes
 * for booleans, Int32Array for byte/short/int/date, BigInt64Array (read through Int32 words) for
 * long and timestamps, Float64Array for float/double, unscaled decimals as a Float64Array while
 * they fit in 2^53 (else bigints), raw UTF-8 for string columns, and plain arrays otherwise.
 * Validity is one byte per row (1 = valid). Literals stay scalars until a loop needs them.
 * Hot operations (comparisons, arithmetic on numbers, boolean logic, IS NULL, IN over literals)
 * have typed loops; everything else goes value-at-a-time through the scalar kernels.
 *
 * Evaluation order follows Spark where it is observable, i.e. where it decides whether an error
 * is raised: AND/OR, CASE, COALESCE and IN evaluate their later operands only on the rows that
 * still need them (when those operands can raise at all; otherwise they run on every row).
 */
import * as arrow from "apache-arrow";
import { conformData } from "../data/cast.ts";
import { arrowValues, valuesToArrow } from "../data/json-rows.ts";
import { type DataType, toArrowType } from "../delta/schema.ts";
import { badRequest, internal } from "../errors.ts";
import { children, type Typed, type TypedColumn } from "./analyze.ts";
import { arithmeticOverflow, divideByZero } from "./ansi-errors.ts";
import type { SqlType } from "./ast.ts";
import type { EvalEnv } from "./functions.ts";
import {
  decimalArith,
  decimalIntegralDivide,
  INT64_MIN,
  integralArith,
  integralNegate,
  integralOverflow,
} from "./scalar-arithmetic.ts";
import { castScalar } from "./scalar-cast.ts";
import { fromScalar, toScalar } from "./scalar-json.ts";
import { compareDoubles, compareScalars } from "./scalar-order.ts";
import { MICROS_PER_DAY } from "./scalar-parse.ts";
import {
  decimalIsWiderThan,
  type IntegralName,
  isDecimalType,
  isFloating,
  isIntegral,
  isTimestamp,
  type Scalar,
  sameType,
} from "./types.ts";

export interface EvalContext {
  /** The statement's instant: one statement sees one current_date/current_timestamp. */
  now?: Date | bigint;
  /** Supplies a column's data; by default batch column `col.ordinal`. */
  column?: (col: TypedColumn, batch: arrow.RecordBatch) => arrow.Data | arrow.Vector;
}

// ---------------------------------------------------------------------------------------------
// Column representations

interface VBool {
  tag: "bool";
  n: number;
  valid?: Uint8Array;
  data: Uint8Array;
}
interface VI32 {
  tag: "i32";
  n: number;
  valid?: Uint8Array;
  data: Int32Array;
}
interface VI64 {
  tag: "i64";
  n: number;
  valid?: Uint8Array;
  data: BigInt64Array;
  words: Int32Array;
}
interface VF64 {
  tag: "f64";
  n: number;
  valid?: Uint8Array;
  data: Float64Array;
}
/** Decimals: unscaled values, `small` while every one is a safe integer, else `big`. */
interface VDec {
  tag: "dec";
  n: number;
  valid?: Uint8Array;
  small?: Float64Array;
  big?: bigint[];
}
interface VUtf8 {
  tag: "utf8";
  n: number;
  valid?: Uint8Array;
  offsets: Int32Array;
  bytes: Uint8Array;
  strings?: (string | null)[];
}
interface VObj {
  tag: "obj";
  n: number;
  valid?: Uint8Array;
  data: (Scalar | null)[];
}
interface VConst {
  tag: "const";
  n: number;
  value: Scalar | null;
}

type Vec = VBool | VI32 | VI64 | VF64 | VDec | VUtf8 | VObj | VConst;

const TWO32 = 4294967296;
const SAFE = Number.MAX_SAFE_INTEGER;

const isValidAt = (v: Vec, i: number): boolean => {
  if (v.tag === "const") return v.value !== null;
  if (v.valid && v.valid[i] === 0) return false;
  return v.tag !== "obj" || v.data[i] !== null;
};

function at(v: Vec, i: number): Scalar | null {
  if (v.tag === "const") return v.value;
  if (v.valid && v.valid[i] === 0) return null;
  switch (v.tag) {
    case "bool":
      return v.data[i] === 1;
    case "i32":
      return v.data[i];
    case "i64":
      return v.data[i];
    case "f64":
      return v.data[i];
    case "dec":
      return v.small ? BigInt(v.small[i]) : v.big![i];
    case "utf8":
      return strings(v)[i];
    case "obj":
      return v.data[i];
  }
}

const utf8 = new TextDecoder();
const utf8Enc = new TextEncoder();

function strings(v: VUtf8): (string | null)[] {
  if (v.strings) return v.strings;
  const { n, offsets, bytes, valid } = v;
  const out: (string | null)[] = new Array(n);
  const base = offsets[0];
  const all = utf8.decode(bytes.subarray(base, offsets[n]));
  const ascii = all.length === offsets[n] - base;
  for (let i = 0; i < n; i++) {
    if (valid && valid[i] === 0) out[i] = null;
    else if (ascii) out[i] = all.substring(offsets[i] - base, offsets[i + 1] - base);
    else out[i] = utf8.decode(bytes.subarray(offsets[i], offsets[i + 1]));
  }
  v.strings = out;
  return out;
}

/** Which Vec tag holds values of a type. */
function tagOf(t: SqlType): Vec["tag"] {
  if (typeof t === "object") return t.type === "decimal" ? "dec" : "obj";
  switch (t) {
    case "boolean":
      return "bool";
    case "byte":
    case "short":
    case "integer":
    case "date":
      return "i32";
    case "long":
    case "timestamp":
    case "timestamp_ntz":
      return "i64";
    case "float":
    case "double":
      return "f64";
    default:
      return "obj";
  }
}

interface Builder {
  set(i: number, v: Scalar | null): void;
  finish(): Vec;
}

function builder(t: SqlType, n: number): Builder {
  const valid = new Uint8Array(n);
  let nulls = 0;
  const mark = (i: number, v: unknown) => {
    if (v === null) nulls++;
    else valid[i] = 1;
  };
  const validity = () => (nulls === 0 ? undefined : valid);
  switch (tagOf(t)) {
    case "bool": {
      const data = new Uint8Array(n);
      return {
        set(i, v) {
          mark(i, v);
          data[i] = v === true ? 1 : 0;
        },
        finish: () => ({ tag: "bool", n, valid: validity(), data }),
      };
    }
    case "i32": {
      const data = new Int32Array(n);
      return {
        set(i, v) {
          mark(i, v);
          if (v !== null) data[i] = v as number;
        },
        finish: () => ({ tag: "i32", n, valid: validity(), data }),
      };
    }
    case "i64": {
      const data = new BigInt64Array(n);
      return {
        set(i, v) {
          mark(i, v);
          if (v !== null) data[i] = v as bigint;
        },
        finish: () => ({
          tag: "i64",
          n,
          valid: validity(),
          data,
          words: new Int32Array(data.buffer, data.byteOffset, n * 2),
        }),
      };
    }
    case "f64": {
      const data = new Float64Array(n);
      return {
        set(i, v) {
          mark(i, v);
          if (v !== null) data[i] = v as number;
        },
        finish: () => ({ tag: "f64", n, valid: validity(), data }),
      };
    }
    case "dec": {
      const big: bigint[] = new Array(n).fill(0n);
      return {
        set(i, v) {
          mark(i, v);
          if (v !== null) big[i] = v as bigint;
        },
        finish: () => ({ tag: "dec", n, valid: validity(), big }),
      };
    }
    default: {
      const data: (Scalar | null)[] = new Array(n).fill(null);
      return {
        set(i, v) {
          mark(i, v);
          data[i] = v;
        },
        finish: () => ({ tag: "obj", n, valid: validity(), data }),
      };
    }
  }
}

/** A Vec of `n` rows computed value by value. */
function generate(t: SqlType, n: number, f: (i: number) => Scalar | null): Vec {
  const b = builder(t, n);
  for (let i = 0; i < n; i++) b.set(i, f(i));
  return b.finish();
}

/** Same values as `v`, never a constant. */
function materialize(v: Vec, t: SqlType): Exclude<Vec, VConst> {
  if (v.tag !== "const") return v;
  const value = v.value;
  return generate(t, v.n, () => value) as Exclude<Vec, VConst>;
}

/** Validity of a Vec as bytes (undefined: all valid). */
function validityOf(v: Vec): Uint8Array | undefined {
  if (v.tag === "const") return v.value === null ? new Uint8Array(v.n) : undefined;
  if (v.tag !== "obj") return v.valid;
  let out = v.valid;
  for (let i = 0; i < v.n; i++) {
    if (v.data[i] === null) {
      if (!out) out = new Uint8Array(v.n).fill(1);
      out[i] = 0;
    }
  }
  return out;
}

function andValidity(a: Uint8Array | undefined, b: Uint8Array | undefined, n: number) {
  if (!a) return b;
  if (!b) return a;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = a[i] & b[i];
  return out;
}

function gatherVec(v: Vec, sel: Uint32Array): Vec {
  const m = sel.length;
  if (v.tag === "const") return { tag: "const", n: m, value: v.value };
  let valid: Uint8Array | undefined;
  if (v.valid) {
    valid = new Uint8Array(m);
    for (let k = 0; k < m; k++) valid[k] = v.valid[sel[k]];
  }
  switch (v.tag) {
    case "bool": {
      const data = new Uint8Array(m);
      for (let k = 0; k < m; k++) data[k] = v.data[sel[k]];
      return { tag: "bool", n: m, valid, data };
    }
    case "i32": {
      const data = new Int32Array(m);
      for (let k = 0; k < m; k++) data[k] = v.data[sel[k]];
      return { tag: "i32", n: m, valid, data };
    }
    case "i64": {
      const data = new BigInt64Array(m);
      const words = new Int32Array(data.buffer, 0, m * 2);
      for (let k = 0; k < m; k++) {
        words[2 * k] = v.words[2 * sel[k]];
        words[2 * k + 1] = v.words[2 * sel[k] + 1];
      }
      return { tag: "i64", n: m, valid, data, words };
    }
    case "f64": {
      const data = new Float64Array(m);
      for (let k = 0; k < m; k++) data[k] = v.data[sel[k]];
      return { tag: "f64", n: m, valid, data };
    }
    case "dec": {
      if (v.small) {
        const small = new Float64Array(m);
        for (let k = 0; k < m; k++) small[k] = v.small[sel[k]];
        return { tag: "dec", n: m, valid, small };
      }
      const big: bigint[] = new Array(m);
      for (let k = 0; k < m; k++) big[k] = v.big![sel[k]];
      return { tag: "dec", n: m, valid, big };
    }
    case "utf8": {
      const s = strings(v);
      const data: (Scalar | null)[] = new Array(m);
      for (let k = 0; k < m; k++) data[k] = s[sel[k]];
      return { tag: "obj", n: m, valid, data };
    }
    case "obj": {
      const data: (Scalar | null)[] = new Array(m);
      for (let k = 0; k < m; k++) data[k] = v.data[sel[k]];
      return { tag: "obj", n: m, valid, data };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Arrow -> Vec

function bitsToBytes(bits: Uint8Array, offset: number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const b = offset + i;
    out[i] = (bits[b >> 3] >> (b & 7)) & 1;
  }
  return out;
}

function arrowValidity(d: arrow.Data): Uint8Array | undefined {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return undefined;
  return bitsToBytes(d.nullBitmap, d.offset, d.length);
}

function fromArrow(d0: arrow.Data, t: SqlType, name: string): Vec {
  if (t === "null") return { tag: "const", n: d0.length, value: null };
  let d = d0;
  const expected = toArrowType(t as DataType);
  if (
    !arrow.util.compareTypes(d.type, expected) &&
    d.type.typeId !== arrow.Type.Dictionary &&
    !(
      arrow.DataType.isInt(d.type) &&
      arrow.DataType.isInt(expected) &&
      d.type.bitWidth <= 32 &&
      (expected as arrow.Int).bitWidth <= 32
    )
  ) {
    try {
      d = conformData(d0, expected, name);
    } catch {
      d = d0;
    }
  }
  const n = d.length;
  const valid = arrowValidity(d);
  const tid = d.type.typeId;
  if (tid === arrow.Type.Bool) {
    return { tag: "bool", n, valid, data: bitsToBytes(d.values as Uint8Array, d.offset, n) };
  }
  if ((tid === arrow.Type.Int || tid === arrow.Type.Date) && tagOf(t) === "i32") {
    const src = d.values as Int8Array | Int16Array | Int32Array;
    if (src instanceof Int32Array) return { tag: "i32", n, valid, data: src.subarray(0, n) };
    if (src instanceof Int8Array || src instanceof Int16Array) {
      return { tag: "i32", n, valid, data: Int32Array.from(src.subarray(0, n)) };
    }
  }
  if ((tid === arrow.Type.Int || tid === arrow.Type.Timestamp) && tagOf(t) === "i64") {
    const src = d.values as unknown as BigInt64Array;
    if (src instanceof BigInt64Array) {
      const data = src.subarray(0, n);
      return {
        tag: "i64",
        n,
        valid,
        data,
        words: new Int32Array(data.buffer, data.byteOffset, n * 2),
      };
    }
  }
  if (tid === arrow.Type.Float && tagOf(t) === "f64") {
    const src = d.values as Float32Array | Float64Array;
    const data =
      src instanceof Float64Array ? src.subarray(0, n) : Float64Array.from(src.subarray(0, n));
    return { tag: "f64", n, valid, data };
  }
  if (
    tid === arrow.Type.Decimal &&
    isDecimalType(t) &&
    (d.type as arrow.Decimal).scale === t.scale
  ) {
    return decimalFromWords(
      d.values as Uint32Array,
      (d.type as arrow.Decimal).bitWidth / 32,
      n,
      valid,
    );
  }
  if (tid === arrow.Type.Utf8 && t === "string") {
    const offsets = (d.valueOffsets as Int32Array).subarray(0, n + 1);
    return { tag: "utf8", n, valid, offsets, bytes: d.values as Uint8Array };
  }
  // Anything else: through canonical JSON values.
  const values = arrowValues(d, t as DataType);
  const data: (Scalar | null)[] = values.map((x) => toScalar(x, t));
  return { tag: "obj", n, valid, data };
}

function decimalFromWords(words: Uint32Array, stride: number, n: number, valid?: Uint8Array): VDec {
  const small = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const k = i * stride;
    const w0 = words[k];
    const w1 = words[k + 1];
    let high = 0;
    let ones = 0xffffffff;
    for (let j = 2; j < stride; j++) {
      high |= words[k + j];
      ones = (ones & words[k + j]) >>> 0;
    }
    if (high === 0 && w1 < 2097152) small[i] = w1 * TWO32 + w0;
    else if (ones === 0xffffffff && w1 >= 0xffe00000 && !(w1 === 0xffe00000 && w0 === 0)) {
      small[i] = (w1 - TWO32) * TWO32 + w0;
    } else if (valid && valid[i] === 0) small[i] = 0;
    else return { tag: "dec", n, valid, big: decimalBig(words, stride, n) };
  }
  return { tag: "dec", n, valid, small };
}

function decimalBig(words: Uint32Array, stride: number, n: number): bigint[] {
  const out: bigint[] = new Array(n);
  for (let i = 0; i < n; i++) {
    let b = 0n;
    for (let j = stride - 1; j >= 0; j--) b = (b << 32n) | BigInt(words[i * stride + j]);
    out[i] = BigInt.asIntN(stride * 32, b);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Vec -> Arrow

function packBits(bytes: Uint8Array, n: number): Uint8Array {
  const out = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) if (bytes[i]) out[i >> 3] |= 1 << (i & 7);
  return out;
}

function toArrowData(v0: Vec, t: SqlType): arrow.Data {
  const n = v0.n;
  if (t === "null") return arrow.makeData({ type: new arrow.Null(), length: n });
  const v = materialize(v0, t);
  const at = toArrowType(t as DataType);
  const validBytes = validityOf(v);
  let nullCount = 0;
  if (validBytes) for (let i = 0; i < n; i++) nullCount += validBytes[i] ^ 1;
  const nullBitmap = nullCount > 0 && validBytes ? packBits(validBytes, n) : undefined;
  const props = { type: at, length: n, nullCount, nullBitmap } as const;
  switch (v.tag) {
    case "bool":
      return arrow.makeData({ ...props, type: at as arrow.Bool, data: packBits(v.data, n) });
    case "i32": {
      const data =
        t === "byte" ? Int8Array.from(v.data) : t === "short" ? Int16Array.from(v.data) : v.data;
      return arrow.makeData({ ...props, type: at as arrow.Int32, data: data as Int32Array });
    }
    case "i64":
      return arrow.makeData({ ...props, type: at as arrow.Int64, data: v.data });
    case "f64":
      return arrow.makeData({
        ...props,
        type: at as arrow.Float64,
        data: (t === "float" ? Float32Array.from(v.data) : v.data) as Float64Array,
      });
    case "dec": {
      const words = new Uint32Array(n * 4);
      for (let i = 0; i < n; i++) {
        if (validBytes && validBytes[i] === 0) continue;
        let u = v.small ? v.small[i] : v.big![i];
        if (typeof u === "number" && u >= 0) {
          words[4 * i] = u % TWO32;
          words[4 * i + 1] = Math.floor(u / TWO32);
          continue;
        }
        u = BigInt.asUintN(128, BigInt(u));
        for (let k = 0; k < 4; k++) words[4 * i + k] = Number((u >> BigInt(32 * k)) & 0xffffffffn);
      }
      return arrow.makeData({ ...props, type: at as arrow.Decimal, data: words });
    }
    case "utf8":
      return arrow.makeData({
        ...props,
        type: at as arrow.Utf8,
        valueOffsets: v.offsets,
        data: v.bytes,
      });
    case "obj": {
      const values = v.data.map((x, i) =>
        validBytes && validBytes[i] === 0 ? null : fromScalar(x, t),
      );
      return valuesToArrow(values, t as DataType);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Static properties

/** Whether evaluating the node (not its children) can raise an error for some input. */
function nodeCanThrow(t: Typed): boolean {
  switch (t.kind) {
    case "cast":
      return !t.tryCast && !safeCast(t.operand.type, t.type);
    case "arith":
      if (t.op === "+" || t.op === "-" || t.op === "*") return !isFloating(t.type);
      return true;
    case "negate":
      return isIntegral(t.type);
    case "like":
      return t.pattern.kind !== "literal" || t.op === "rlike" || !likeCompiles(t);
    case "call":
      return THROWING_FUNCTIONS.has(t.name) || (t.name === "abs" && isIntegral(t.type));
    case "aggregate":
      return true;
    default:
      return false;
  }
}

const THROWING_FUNCTIONS = new Set(["round", "to_date", "to_timestamp"]);

function likeCompiles(t: Extract<Typed, { kind: "like" }>): boolean {
  const p = (t.pattern as Extract<Typed, { kind: "literal" }>).value;
  if (p === null) return true;
  try {
    likeRegex(p as string, t.escape);
    return true;
  } catch {
    return false;
  }
}

const INT_RANK: Record<string, number> = { byte: 0, short: 1, integer: 2, long: 3 };

function safeCast(from: SqlType, to: SqlType): boolean {
  if (sameType(from, to) || from === "null" || to === "string") return true;
  if (isIntegral(from)) {
    if (isFloating(to)) return true;
    if (isIntegral(to)) return INT_RANK[to] >= INT_RANK[from];
    if (isDecimalType(to)) return decimalIsWiderThan(to, from);
    return false;
  }
  if (from === "float" && to === "double") return true;
  if (isDecimalType(from) && isFloating(to)) return true;
  if (isDecimalType(from) && isDecimalType(to)) {
    return to.precision - to.scale >= from.precision - from.scale && to.scale >= from.scale;
  }
  if (from === "date" && isTimestamp(to)) return true;
  if (isTimestamp(from) && (isTimestamp(to) || to === "date")) return true;
  return false;
}

const throwCache = new WeakMap<Typed, boolean>();

/** Whether evaluating the subtree can raise an error. */
export function canThrow(t: Typed): boolean {
  const cached = throwCache.get(t);
  if (cached !== undefined) return cached;
  const r = nodeCanThrow(t) || children(t).some(canThrow);
  throwCache.set(t, r);
  return r;
}

// ---------------------------------------------------------------------------------------------
// The evaluator

/** Rows a sub-expression is evaluated on: all rows of the batch, or absolute row indices. */
interface Frame {
  n: number;
  sel?: Uint32Array;
}

function subFrame(f: Frame, rel: Uint32Array): Frame {
  if (!f.sel) return { n: rel.length, sel: rel };
  const abs = new Uint32Array(rel.length);
  for (let k = 0; k < rel.length; k++) abs[k] = f.sel[rel[k]];
  return { n: rel.length, sel: abs };
}

class Evaluator {
  private readonly cols = new Map<number, Vec>();
  private readonly regexCache = new Map<string, RegExp>();

  constructor(
    private readonly rows: number,
    private readonly columnData: (col: TypedColumn) => arrow.Data,
    private readonly env: EvalEnv,
  ) {}

  run(t: Typed): Vec {
    return this.eval(t, { n: this.rows });
  }

  eval(t: Typed, f: Frame): Vec {
    // Nothing is evaluated for no rows, so constant sub-expressions raise nothing either.
    if (f.n === 0) return { tag: "const", n: 0, value: null };
    switch (t.kind) {
      case "literal":
        return { tag: "const", n: f.n, value: t.value };
      case "column": {
        let v = this.cols.get(t.ordinal);
        if (!v) {
          v = fromArrow(this.columnData(t), t.type, t.name);
          this.cols.set(t.ordinal, v);
        }
        return f.sel ? gatherVec(v, f.sel) : v;
      }
      case "field":
        return this.field(t, f);
      case "cast":
        return this.cast(this.eval(t.operand, f), t.operand.type, t.type, t.tryCast);
      case "arith": {
        const l = this.eval(t.left, f);
        return this.arith(t, l, this.evalAfter([l], t.right, f));
      }
      case "bitwise": {
        const l = this.eval(t.left, f);
        return this.bitwise(t, l, this.evalAfter([l], t.right, f));
      }
      case "negate": {
        const v = this.eval(t.operand, f);
        const ty = t.type;
        return this.map1(v, ty, (x) =>
          isIntegral(ty)
            ? integralNegate(ty, x as number | bigint)
            : isDecimalType(ty)
              ? -(x as bigint)
              : -(x as number),
        );
      }
      case "bitnot": {
        const v = this.eval(t.operand, f);
        return this.map1(v, t.type, (x) =>
          typeof x === "bigint" ? BigInt.asIntN(64, ~x) : ~(x as number),
        );
      }
      case "compare": {
        const l = this.eval(t.left, f);
        const r = t.op === "<=>" ? this.eval(t.right, f) : this.evalAfter([l], t.right, f);
        return this.compare(t.op, t.left.type, l, r, f.n);
      }
      case "and":
      case "or":
        return this.logical(t, f);
      case "not": {
        const v = this.eval(t.operand, f);
        if (v.tag === "const")
          return { tag: "const", n: f.n, value: v.value === null ? null : !v.value };
        const b = v as VBool;
        const data = new Uint8Array(f.n);
        for (let i = 0; i < f.n; i++) data[i] = b.data[i] ^ 1;
        return { tag: "bool", n: f.n, valid: b.valid, data };
      }
      case "isNull": {
        const v = this.eval(t.operand, f);
        const valid = validityOf(v);
        const data = new Uint8Array(f.n);
        if (t.negated) {
          if (valid) data.set(valid);
          else data.fill(1);
        } else if (valid) {
          for (let i = 0; i < f.n; i++) data[i] = valid[i] ^ 1;
        }
        return { tag: "bool", n: f.n, data };
      }
      case "in":
        return this.inList(t, f);
      case "like":
        return this.like(t, f);
      case "case":
        return this.caseWhen(t, f);
      case "coalesce":
        return this.coalesce(t, f);
      case "call":
        return this.call(t, f);
      case "aggregate":
        throw internal(
          "INTERNAL_ERROR",
          `The aggregate ${t.name}() must be computed by the query engine, not evaluated as a scalar.`,
        );
    }
  }

  /**
   * Evaluates `next` where every `prev` value is non-NULL (NULL elsewhere): a null-intolerant
   * operator never looks at later operands of a row whose earlier operand is NULL, so their
   * errors must not surface there. Operands that cannot raise simply run on every row.
   */
  private evalAfter(prev: Vec[], next: Typed, f: Frame): Vec {
    if (!canThrow(next)) return this.eval(next, f);
    const rows: number[] = [];
    for (let i = 0; i < f.n; i++) if (prev.every((v) => isValidAt(v, i))) rows.push(i);
    if (rows.length === f.n) return this.eval(next, f);
    const rel = Uint32Array.from(rows);
    const sub = this.eval(next, subFrame(f, rel));
    const b = builder(next.type, f.n);
    for (let k = 0; k < rel.length; k++) b.set(rel[k], at(sub, k));
    return b.finish();
  }

  /** Applies a null-intolerant scalar function row by row. */
  private map1(v: Vec, t: SqlType, f: (x: Scalar) => Scalar | null): Vec {
    if (v.tag === "const")
      return { tag: "const", n: v.n, value: v.value === null ? null : f(v.value) };
    return generate(t, v.n, (i) => {
      const x = at(v, i);
      return x === null ? null : f(x);
    });
  }

  private field(t: Extract<Typed, { kind: "field" }>, f: Frame): Vec {
    const chain: Extract<Typed, { kind: "field" }>[] = [];
    let base: Typed = t;
    while (base.kind === "field") {
      chain.unshift(base);
      base = base.operand;
    }
    if (base.kind === "column") {
      let data = this.columnData(base);
      let valid = arrowValidity(data);
      for (const step of chain) {
        data = data.children[step.index];
        valid = andValidity(valid, arrowValidity(data), data.length);
      }
      const v = fromArrow(data, t.type, t.name);
      const withParent = valid ? restrictValidity(v, valid) : v;
      return f.sel ? gatherVec(withParent, f.sel) : withParent;
    }
    const parent = this.eval(t.operand, f);
    return this.map1(parent, t.type, (x) =>
      toScalar((x as Record<string, unknown>)[t.name], t.type),
    );
  }

  // -- casts ----------------------------------------------------------------------------------

  private cast(v: Vec, from: SqlType, to: SqlType, tryCast: boolean): Vec {
    if (sameType(from, to)) return v;
    if (v.tag === "const") {
      return { tag: "const", n: v.n, value: castScalar(v.value, from, to, tryCast) };
    }
    const n = v.n;
    if (
      v.tag === "i32" &&
      isIntegral(from) &&
      (to === "long" || to === "double" || to === "float")
    ) {
      if (to === "long") {
        const data = new BigInt64Array(n);
        const words = new Int32Array(data.buffer, 0, n * 2);
        for (let i = 0; i < n; i++) {
          const x = v.data[i];
          words[2 * i] = x;
          words[2 * i + 1] = x < 0 ? -1 : 0;
        }
        return { tag: "i64", n, valid: v.valid, data, words };
      }
      return { tag: "f64", n, valid: v.valid, data: Float64Array.from(v.data) };
    }
    if (v.tag === "i32" && isIntegral(from) && isIntegral(to) && INT_RANK[to] >= INT_RANK[from]) {
      return v;
    }
    if (v.tag === "i64" && from === "long" && to === "double") {
      const data = new Float64Array(n);
      const w = v.words;
      for (let i = 0; i < n; i++) data[i] = w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);
      return { tag: "f64", n, valid: v.valid, data };
    }
    if (v.tag === "f64" && from === "float" && to === "double") return v;
    if (v.tag === "i32" && isIntegral(from) && isDecimalType(to) && decimalIsWiderThan(to, from)) {
      const m = 10 ** to.scale;
      if (to.scale <= 15 && 2147483648 * m <= SAFE) {
        const small = new Float64Array(n);
        for (let i = 0; i < n; i++) small[i] = v.data[i] * m;
        return { tag: "dec", n, valid: v.valid, small };
      }
    }
    if (v.tag === "dec" && v.small && isDecimalType(from) && to === "double" && from.scale <= 22) {
      const d = 10 ** from.scale;
      const data = new Float64Array(n);
      for (let i = 0; i < n; i++) data[i] = v.small[i] / d;
      return { tag: "f64", n, valid: v.valid, data };
    }
    if (v.tag === "i32" && from === "date" && isTimestamp(to)) {
      const data = new BigInt64Array(n);
      for (let i = 0; i < n; i++) data[i] = BigInt(v.data[i]) * MICROS_PER_DAY;
      return { tag: "i64", n, valid: v.valid, data, words: new Int32Array(data.buffer, 0, n * 2) };
    }
    return generate(to, n, (i) => {
      const x = at(v, i);
      return x === null ? null : castScalar(x, from, to, tryCast);
    });
  }

  // -- arithmetic -----------------------------------------------------------------------------

  private arith(t: Extract<Typed, { kind: "arith" }>, l: Vec, r: Vec): Vec {
    const lt = t.left.type;
    const n = Math.max(l.n, r.n);
    if (l.tag === "const" && r.tag === "const") {
      const value = l.value === null || r.value === null ? null : arithScalar(t, l.value, r.value);
      return { tag: "const", n, value };
    }
    const valid = andValidity(validityOf(l), validityOf(r), n);
    const op = t.op;
    if (isFloating(lt) && op !== "%") {
      const a = asF64(l, lt);
      const b = asF64(r, lt);
      if (a && b) {
        const data = new Float64Array(n);
        const fl = t.type === "float";
        for (let i = 0; i < n; i++) {
          const x = a[i];
          const y = b[i];
          let z: number;
          if (op === "+") z = x + y;
          else if (op === "-") z = x - y;
          else if (op === "*") z = x * y;
          else {
            if (y === 0 && (!valid || valid[i] === 1)) throw divideByZero();
            z = x / y;
          }
          data[i] = fl ? Math.fround(z) : z;
        }
        return { tag: "f64", n, valid, data };
      }
    }
    if (
      (lt === "integer" || lt === "short" || lt === "byte") &&
      (op === "+" || op === "-" || op === "*")
    ) {
      const a = asI32(l);
      const b = asI32(r);
      if (a && b) {
        const data = new Int32Array(n);
        const lo = lt === "integer" ? -2147483648 : lt === "short" ? -32768 : -128;
        const hi = -lo - 1;
        for (let i = 0; i < n; i++) {
          const x = a[i];
          const y = b[i];
          const z = op === "+" ? x + y : op === "-" ? x - y : x * y;
          if ((z < lo || z > hi) && (!valid || valid[i] === 1)) {
            throw integralOverflow(op, lt as IntegralName, x, y);
          }
          data[i] = z;
        }
        return { tag: "i32", n, valid, data };
      }
    }
    if (lt === "long" && (op === "+" || op === "-" || op === "*")) {
      const a = asWords(l);
      const b = asWords(r);
      if (a && b) return longArith(op, a, b, n, valid);
    }
    if (
      isDecimalType(lt) &&
      isDecimalType(t.right.type) &&
      isDecimalType(t.type) &&
      (op === "+" || op === "-" || op === "*")
    ) {
      const fast = decimalFast(t, l, r, n, valid);
      if (fast) return fast;
    }
    return generate(t.type, n, (i) => {
      if (valid && valid[i] === 0) return null;
      return arithScalar(t, at(l, i) as Scalar, at(r, i) as Scalar);
    });
  }

  private bitwise(t: Extract<Typed, { kind: "bitwise" }>, l: Vec, r: Vec): Vec {
    const n = Math.max(l.n, r.n);
    const f = (x: Scalar, y: Scalar): Scalar => {
      if (typeof x === "bigint") {
        const a = x;
        const b = y as bigint;
        return BigInt.asIntN(64, t.op === "&" ? a & b : t.op === "|" ? a | b : a ^ b);
      }
      const a = x as number;
      const b = y as number;
      return t.op === "&" ? a & b : t.op === "|" ? a | b : a ^ b;
    };
    if (l.tag === "const" && r.tag === "const") {
      return {
        tag: "const",
        n,
        value: l.value === null || r.value === null ? null : f(l.value, r.value),
      };
    }
    return generate(t.type, n, (i) => {
      const x = at(l, i);
      const y = at(r, i);
      return x === null || y === null ? null : f(x, y);
    });
  }

  // -- comparisons ----------------------------------------------------------------------------

  private compare(op: string, t: SqlType, l: Vec, r: Vec, n: number): Vec {
    if (op === "<=>") return this.nullSafeEqual(t, l, r, n);
    if (l.tag === "const" && r.tag === "const") {
      const value =
        l.value === null || r.value === null
          ? null
          : cmpResult(op, compareScalars(t, l.value, r.value));
      return { tag: "const", n, value };
    }
    const valid = andValidity(validityOf(l), validityOf(r), n);
    const fast = compareFast(op, t, l, r, n);
    if (fast) return { tag: "bool", n, valid, data: fast };
    const data = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      if (valid && valid[i] === 0) continue;
      data[i] = cmpResult(op, compareScalars(t, at(l, i) as Scalar, at(r, i) as Scalar)) ? 1 : 0;
    }
    return { tag: "bool", n, valid, data };
  }

  private nullSafeEqual(t: SqlType, l: Vec, r: Vec, n: number): Vec {
    const eq = this.compare("=", t, l, r, n);
    if (eq.tag === "const") {
      const lv = (l as VConst).value;
      const rv = (r as VConst).value;
      return {
        tag: "const",
        n,
        value: lv === null || rv === null ? lv === null && rv === null : eq.value,
      };
    }
    const lvld = validityOf(l);
    const rvld = validityOf(r);
    const e = eq as VBool;
    const data = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const a = lvld ? lvld[i] : 1;
      const b = rvld ? rvld[i] : 1;
      data[i] = a & b ? e.data[i] : a | b ? 0 : 1;
    }
    return { tag: "bool", n, data };
  }

  // -- boolean logic --------------------------------------------------------------------------

  private logical(t: Extract<Typed, { kind: "and" | "or" }>, f: Frame): Vec {
    const isAnd = t.kind === "and";
    const l = this.eval(t.left, f);
    const n = f.n;
    // Rows whose result the left side already decides: FALSE for AND, TRUE for OR.
    const decided = isAnd ? 0 : 1;
    let r: Vec;
    if (canThrow(t.right)) {
      const need: number[] = [];
      for (let i = 0; i < n; i++) {
        const x = at(l, i);
        if (x === null || (x ? 1 : 0) !== decided) need.push(i);
      }
      if (need.length === n) r = this.eval(t.right, f);
      else {
        const rel = Uint32Array.from(need);
        const sub = this.eval(t.right, subFrame(f, rel));
        const b = builder("boolean", n);
        for (let k = 0; k < rel.length; k++) b.set(rel[k], at(sub, k));
        r = b.finish();
      }
    } else {
      r = this.eval(t.right, f);
    }
    if (l.tag === "const" && r.tag === "const") {
      return {
        tag: "const",
        n,
        value: kleene(isAnd, l.value as boolean | null, r.value as boolean | null),
      };
    }
    const a = materialize(l, "boolean") as VBool;
    const b = materialize(r, "boolean") as VBool;
    const data = new Uint8Array(n);
    let valid: Uint8Array | undefined;
    if (!a.valid && !b.valid) {
      if (isAnd) for (let i = 0; i < n; i++) data[i] = a.data[i] & b.data[i];
      else for (let i = 0; i < n; i++) data[i] = a.data[i] | b.data[i];
    } else {
      valid = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const av = a.valid ? a.valid[i] : 1;
        const bv = b.valid ? b.valid[i] : 1;
        const ad = a.data[i];
        const bd = b.data[i];
        if (isAnd) {
          if ((av && !ad) || (bv && !bd)) valid[i] = 1;
          else if (av && bv) {
            valid[i] = 1;
            data[i] = 1;
          }
        } else if ((av && ad) || (bv && bd)) {
          valid[i] = 1;
          data[i] = 1;
        } else if (av && bv) valid[i] = 1;
      }
    }
    return { tag: "bool", n, valid, data };
  }

  // -- IN -------------------------------------------------------------------------------------

  private inList(t: Extract<Typed, { kind: "in" }>, f: Frame): Vec {
    const n = f.n;
    const ty = t.operand.type;
    const operand = this.eval(t.operand, f);
    const literalItems = t.list.every((x) => x.kind === "literal");
    if (literalItems) {
      const values = t.list.map((x) => (x as Extract<Typed, { kind: "literal" }>).value);
      const hasNull = values.some((x) => x === null);
      const present = values.filter((x): x is Scalar => x !== null);
      const match = matcher(ty, present);
      const valid = new Uint8Array(n);
      const data = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const x = at(operand, i);
        if (x === null) continue;
        if (match(x)) {
          data[i] = 1;
          valid[i] = 1;
        } else if (!hasNull) valid[i] = 1;
      }
      return { tag: "bool", n, valid, data };
    }
    // General lists: each element only on the rows still undecided, in order.
    const state = new Uint8Array(n); // 0 undecided, 1 true, 2 saw NULL
    const valid = new Uint8Array(n);
    const data = new Uint8Array(n);
    const pending: number[] = [];
    for (let i = 0; i < n; i++) if (isValidAt(operand, i)) pending.push(i);
    let rows = Uint32Array.from(pending);
    for (const item of t.list) {
      if (rows.length === 0) break;
      const sub = rows.length === n ? f : subFrame(f, rows);
      const iv = this.eval(item, sub);
      const next: number[] = [];
      for (let k = 0; k < rows.length; k++) {
        const i = rows[k];
        const y = at(iv, k);
        if (y === null) {
          state[i] = 2;
          next.push(i);
        } else if (compareScalars(ty, at(operand, i) as Scalar, y) === 0) state[i] = 1;
        else next.push(i);
      }
      rows = Uint32Array.from(next);
    }
    for (let i = 0; i < n; i++) {
      if (!isValidAt(operand, i)) continue;
      if (state[i] === 1) {
        data[i] = 1;
        valid[i] = 1;
      } else if (state[i] === 0) valid[i] = 1;
    }
    return { tag: "bool", n, valid, data };
  }

  // -- LIKE / RLIKE ---------------------------------------------------------------------------

  private like(t: Extract<Typed, { kind: "like" }>, f: Frame): Vec {
    const n = f.n;
    const s = this.eval(t.operand, f);
    const p = this.evalAfter([s], t.pattern, f);
    const compile = (pattern: string): RegExp => {
      const key = `${t.op}\u0000${t.escape}\u0000${pattern}`;
      let re = this.regexCache.get(key);
      if (!re) {
        re = t.op === "like" ? likeRegex(pattern, t.escape) : javaRegex(pattern);
        this.regexCache.set(key, re);
      }
      return re;
    };
    if (p.tag === "const") {
      if (p.value === null) return { tag: "const", n, value: null };
      if (n === 0) return { tag: "bool", n, data: new Uint8Array(0) };
      const re = compile(p.value as string);
      const data = new Uint8Array(n);
      const valid = validityOf(s);
      const simple =
        t.op === "like" && s.tag === "utf8" ? simpleLike(p.value as string, t.escape) : undefined;
      if (simple && s.tag === "utf8") {
        likeBytes(simple, s, data);
        return { tag: "bool", n, valid, data };
      }
      const str = s.tag === "utf8" ? strings(s) : undefined;
      for (let i = 0; i < n; i++) {
        if (valid && valid[i] === 0) continue;
        const x = (str ? str[i] : at(s, i)) as string;
        re.lastIndex = 0;
        data[i] = re.test(x) ? 1 : 0;
      }
      return { tag: "bool", n, valid, data };
    }
    return generate("boolean", n, (i) => {
      const x = at(s, i);
      const y = at(p, i);
      if (x === null || y === null) return null;
      const re = compile(y as string);
      re.lastIndex = 0;
      return re.test(x as string);
    });
  }

  // -- CASE / COALESCE ------------------------------------------------------------------------

  private caseWhen(t: Extract<Typed, { kind: "case" }>, f: Frame): Vec {
    const n = f.n;
    if (!canThrow(t)) {
      const conds = t.branches.map((b) => this.eval(b.when, f));
      const vals = t.branches.map((b) => this.eval(b.then, f));
      const other = t.otherwise ? this.eval(t.otherwise, f) : undefined;
      return generate(t.type, n, (i) => {
        for (let k = 0; k < conds.length; k++) if (at(conds[k], i) === true) return at(vals[k], i);
        return other ? at(other, i) : null;
      });
    }
    const out = builder(t.type, n);
    let rows: Uint32Array | undefined; // undefined: every row of the frame
    const count = () => (rows ? rows.length : n);
    const rowAt = (k: number) => (rows ? rows[k] : k);
    for (const b of t.branches) {
      if (count() === 0) break;
      const frame = rows ? subFrame(f, rows) : f;
      const cond = this.eval(b.when, frame);
      const take: number[] = [];
      const rest: number[] = [];
      for (let k = 0; k < count(); k++) (at(cond, k) === true ? take : rest).push(rowAt(k));
      if (take.length > 0) {
        const rel = Uint32Array.from(take);
        const v = this.eval(b.then, subFrame(f, rel));
        for (let k = 0; k < rel.length; k++) out.set(rel[k], at(v, k));
      }
      rows = Uint32Array.from(rest);
    }
    if (t.otherwise && count() > 0) {
      const rel = rows ?? Uint32Array.from({ length: n }, (_, i) => i);
      const v = this.eval(t.otherwise, subFrame(f, rel));
      for (let k = 0; k < rel.length; k++) out.set(rel[k], at(v, k));
    }
    return out.finish();
  }

  private coalesce(t: Extract<Typed, { kind: "coalesce" }>, f: Frame): Vec {
    const n = f.n;
    if (!canThrow(t)) {
      const args = t.args.map((a) => this.eval(a, f));
      return generate(t.type, n, (i) => {
        for (const a of args) {
          const x = at(a, i);
          if (x !== null) return x;
        }
        return null;
      });
    }
    const out = builder(t.type, n);
    let rows = Uint32Array.from({ length: n }, (_, i) => i);
    for (const a of t.args) {
      if (rows.length === 0) break;
      const v = this.eval(a, rows.length === n ? f : subFrame(f, rows));
      const rest: number[] = [];
      for (let k = 0; k < rows.length; k++) {
        const x = at(v, k);
        if (x === null) rest.push(rows[k]);
        else out.set(rows[k], x);
      }
      rows = Uint32Array.from(rest);
    }
    for (const i of rows) out.set(i, null);
    return out.finish();
  }

  // -- functions ------------------------------------------------------------------------------

  private call(t: Extract<Typed, { kind: "call" }>, f: Frame): Vec {
    const kernel = t.fn.eval;
    if (!kernel) throw internal("INTERNAL_ERROR", `No evaluator for function ${t.name}.`);
    const nullSafe = t.fn.nullSafe === true;
    const args: Vec[] = [];
    for (const a of t.args) {
      args.push(nullSafe || t.fn.evaluatesAll ? this.eval(a, f) : this.evalAfter(args, a, f));
    }
    const row: (Scalar | null)[] = new Array(args.length);
    const one = (i: number): Scalar | null => {
      for (let k = 0; k < args.length; k++) {
        const x = at(args[k], i);
        if (x === null && !nullSafe) return null;
        row[k] = x;
      }
      return kernel(row, t, this.env);
    };
    if (args.every((a) => a.tag === "const"))
      return { tag: "const", n: f.n, value: f.n > 0 ? one(0) : null };
    return generate(t.type, f.n, one);
  }
}

function restrictValidity(v: Vec, valid: Uint8Array): Vec {
  if (v.tag === "const") return v;
  const own = validityOf(v);
  const both = andValidity(own, valid, v.n);
  if (v.tag === "obj") {
    const data = v.data.map((x, i) => (both && both[i] === 0 ? null : x));
    return { ...v, valid: both, data };
  }
  if (v.tag === "utf8") return { ...v, valid: both, strings: undefined };
  return { ...v, valid: both } as Vec;
}

const kleene = (isAnd: boolean, a: boolean | null, b: boolean | null): boolean | null => {
  if (isAnd) {
    if (a === false || b === false) return false;
    return a === null || b === null ? null : true;
  }
  if (a === true || b === true) return true;
  return a === null || b === null ? null : false;
};

function cmpResult(op: string, c: number): boolean {
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

// -- typed views for fast loops --------------------------------------------------------------

function asF64(v: Vec, t: SqlType): Float64Array | undefined {
  if (v.tag === "f64") return v.data;
  if (v.tag === "const") {
    const x = v.value === null ? 0 : (v.value as number);
    return new Float64Array(v.n).fill(t === "float" ? Math.fround(x) : x);
  }
  return undefined;
}

function asI32(v: Vec): Int32Array | undefined {
  if (v.tag === "i32") return v.data;
  if (v.tag === "const")
    return new Int32Array(v.n).fill(v.value === null ? 0 : (v.value as number));
  return undefined;
}

function asWords(v: Vec): Int32Array | undefined {
  if (v.tag === "i64") return v.words;
  if (v.tag === "const") {
    const data = new BigInt64Array(v.n).fill(v.value === null ? 0n : (v.value as bigint));
    return new Int32Array(data.buffer, 0, v.n * 2);
  }
  return undefined;
}

/** 64-bit +, -, * through doubles while exact, bigints otherwise, with overflow checks. */
function longArith(
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
function decimalFast(
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
function arithScalar(t: Extract<Typed, { kind: "arith" }>, a: Scalar, b: Scalar): Scalar {
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
        if (b === 0 || b === 0n) throw divideByZero();
        return typeof a === "bigint" ? a % (b as bigint) : (a as number) % (b as number) || 0;
      case "div": {
        if (b === 0n) throw divideByZero();
        if (a === INT64_MIN && b === -1n)
          throw arithmeticOverflow("Overflow in integral divide", "try_divide");
        return (a as bigint) / (b as bigint);
      }
      default:
        throw internal("INTERNAL_ERROR", `Integral ${op} must be coerced to double first.`);
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
      if (y === 0) throw divideByZero();
      z = x % y;
      break;
    default:
      throw internal("INTERNAL_ERROR", `Unexpected ${op} on ${String(lt)}.`);
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
function compareFast(op: string, t: SqlType, l: Vec, r: Vec, n: number): Uint8Array | undefined {
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
function matcher(t: SqlType, values: Scalar[]): (x: Scalar) => boolean {
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

// ---------------------------------------------------------------------------------------------
// Patterns

interface SimpleLike {
  kind: "exact" | "prefix" | "suffix" | "contains";
  bytes: Uint8Array;
}

/** LIKE patterns that are a literal with % only at its ends: matched on UTF-8 bytes. */
function simpleLike(pattern: string, escapeChar: string): SimpleLike | undefined {
  const cps = Array.from(pattern);
  let lit = "";
  let lead = false;
  let trail = false;
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    if (c === escapeChar) {
      const next = cps[i + 1];
      if (next !== "_" && next !== "%" && next !== escapeChar) return undefined;
      if (trail) return undefined;
      lit += next;
      i++;
    } else if (c === "%") {
      if (lit === "" && !trail) lead = true;
      else trail = true;
    } else if (c === "_") return undefined;
    else {
      if (trail) return undefined;
      lit += c;
    }
  }
  const bytes = utf8Enc.encode(lit);
  const kind = lead && trail ? "contains" : lead ? "suffix" : trail ? "prefix" : "exact";
  return { kind, bytes };
}

function likeBytes(p: SimpleLike, v: VUtf8, out: Uint8Array): void {
  const { offsets, bytes } = v;
  const key = p.bytes;
  const k = key.length;
  for (let i = 0; i < v.n; i++) {
    const s = offsets[i];
    const e = offsets[i + 1];
    const len = e - s;
    let ok = false;
    switch (p.kind) {
      case "exact":
      case "prefix":
        if (p.kind === "exact" ? len === k : len >= k) {
          ok = true;
          for (let j = 0; j < k; j++) {
            if (bytes[s + j] !== key[j]) {
              ok = false;
              break;
            }
          }
        }
        break;
      case "suffix":
        if (len >= k) {
          ok = true;
          for (let j = 0; j < k; j++) {
            if (bytes[e - k + j] !== key[j]) {
              ok = false;
              break;
            }
          }
        }
        break;
      case "contains":
        for (let start = s; start + k <= e && !ok; start++) {
          let j = 0;
          while (j < k && bytes[start + j] === key[j]) j++;
          ok = j === k;
        }
        break;
    }
    out[i] = ok ? 1 : 0;
  }
}

const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/;

const invalidFormat = (sub: string, pattern: string, detail: string) =>
  badRequest(`INVALID_FORMAT.${sub}`, `The format is invalid: '${pattern}'. ${detail}`, "42601");

/** Spark's LIKE pattern (escapeLikeRegex) as an anchored, dot-all JS RegExp. */
export function likeRegex(pattern: string, escapeChar: string): RegExp {
  let out = "";
  const cps = Array.from(pattern);
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    if (c === escapeChar) {
      if (i + 1 >= cps.length) {
        throw invalidFormat(
          "ESC_AT_THE_END",
          pattern,
          "The escape character is not allowed to end with.",
        );
      }
      const next = cps[++i];
      if (next !== "_" && next !== "%" && next !== escapeChar) {
        throw invalidFormat(
          "ESC_IN_THE_MIDDLE",
          pattern,
          `The escape character is not allowed to precede '${next}'.`,
        );
      }
      out += REGEX_SYNTAX.test(next) ? `\\${next}` : next;
    } else if (c === "_") out += ".";
    else if (c === "%") out += "[\\s\\S]*";
    else out += REGEX_SYNTAX.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${out}$`, "su");
}

/** A Java regex (RLIKE: a match anywhere) as a JS RegExp; leading (?ims) become flags. */
export function javaRegex(pattern: string): RegExp {
  let p = pattern;
  let flags = "";
  const m = /^\(\?([imsx]+)\)/.exec(p);
  if (m) {
    for (const f of m[1]) if (f !== "x" && !flags.includes(f)) flags += f;
    p = p.slice(m[0].length);
  }
  try {
    return new RegExp(p, `${flags}u`);
  } catch {
    try {
      return new RegExp(p, flags);
    } catch (e) {
      throw badRequest(
        "INVALID_PARAMETER_VALUE.PATTERN",
        `The value of parameter(s) \`regexp\` in \`rlike\` is invalid: ${(e as Error).message}.`,
        "22023",
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

function envOf(ctx?: EvalContext): EvalEnv {
  const now = ctx?.now;
  if (typeof now === "bigint") return { now };
  const ms = now instanceof Date ? now.getTime() : Date.now();
  return { now: BigInt(ms) * 1000n };
}

function dataOf(x: arrow.Data | arrow.Vector): arrow.Data {
  if (x instanceof arrow.Data) return x;
  if (x.data.length === 1) return x.data[0];
  return arrow.makeVector(x.data).data[0] ?? x.data[0];
}

function batchEvaluator(t: Typed, batch: arrow.RecordBatch, ctx?: EvalContext): Evaluator {
  const provider = (col: TypedColumn): arrow.Data => {
    if (ctx?.column) return dataOf(ctx.column(col, batch));
    const child = batch.data.children[col.ordinal];
    if (!child) {
      throw internal(
        "INTERNAL_ERROR",
        `evaluate: the batch has no column ${col.ordinal} (${col.name}) for ${String(t.kind)}.`,
      );
    }
    return child;
  };
  return new Evaluator(batch.numRows, provider, envOf(ctx));
}

/** Evaluates over one record batch: a column of the node's type, one value per row. */
export function evaluate(t: Typed, batch: arrow.RecordBatch, ctx?: EvalContext): arrow.Data {
  return toArrowData(batchEvaluator(t, batch, ctx).run(t), t.type);
}

/** Evaluates over every batch of a table. */
export function evaluateTable(t: Typed, table: arrow.Table, ctx?: EvalContext): arrow.Vector {
  const env = envOf(ctx);
  const fixed: EvalContext = { ...ctx, now: env.now };
  const parts = table.batches.map((b) => evaluate(t, b, fixed));
  if (parts.length === 0)
    return arrow.makeVector(toArrowData({ tag: "const", n: 0, value: null }, t.type));
  return new arrow.Vector(parts);
}

/** WHERE semantics: 1 where the predicate is TRUE, 0 where FALSE or NULL. */
export function evaluatePredicate(
  t: Typed,
  input: arrow.RecordBatch | arrow.Table,
  ctx?: EvalContext,
): Uint8Array {
  if (input instanceof arrow.Table) {
    const env = envOf(ctx);
    const fixed: EvalContext = { ...ctx, now: env.now };
    const out = new Uint8Array(input.numRows);
    let pos = 0;
    for (const b of input.batches) {
      out.set(evaluatePredicate(t, b, fixed), pos);
      pos += b.numRows;
    }
    return out;
  }
  const v = batchEvaluator(t, input, ctx).run(t);
  const n = input.numRows;
  if (v.tag === "const") return new Uint8Array(n).fill(v.value === true ? 1 : 0);
  const b = v as VBool;
  if (!b.valid) return b.data;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = b.data[i] & b.valid[i];
  return out;
}

/** Evaluates an expression without columns (a constant): its scalar value. */
export function evaluateScalar(t: Typed, ctx?: EvalContext): Scalar | null {
  const ev = new Evaluator(
    1,
    (col) => {
      throw internal("INTERNAL_ERROR", `evaluateScalar: column ${col.name} has no value.`);
    },
    envOf(ctx),
  );
  return at(ev.run(t), 0);
}

/**
 * Evaluates over rows given as canonical JSON values (one array per row, columns by ordinal):
 * for constant folding over a few values, e.g. partition values. Returns canonical JSON values.
 */
export function evaluateRows(
  t: Typed,
  rows: readonly (readonly unknown[])[],
  types: readonly SqlType[],
  ctx?: EvalContext,
): unknown[] {
  const n = rows.length;
  const cols = new Map<number, arrow.Data>();
  const ev = new Evaluator(
    n,
    (col) => {
      let d = cols.get(col.ordinal);
      if (!d) {
        const ty = types[col.ordinal];
        d =
          ty === "null"
            ? arrow.makeData({ type: new arrow.Null(), length: n })
            : valuesToArrow(
                rows.map((r) => r[col.ordinal] ?? null),
                ty as DataType,
              );
        cols.set(col.ordinal, d);
      }
      return d;
    },
    envOf(ctx),
  );
  const v = ev.run(t);
  return Array.from({ length: n }, (_, i) => fromScalar(at(v, i), t.type));
}

/** The micros-since-epoch instant evaluation uses for `now` (exported for callers' records). */
export const statementInstant = (now?: Date | bigint): bigint => envOf({ now }).now;
