/**
 * The column forms vectorized evaluation works on ("Vec"): each in the cheapest JS form for its
 * type: 0/1 bytes for booleans, Int32Array for byte/short/int/date, BigInt64Array (read through
 * Int32 words) for long and timestamps, Float64Array for float/double, unscaled decimals as a
 * Float64Array while they fit in 2^53 (else bigints), raw UTF-8 for string columns, and plain
 * arrays otherwise. Validity is one byte per row (1 = valid). Literals stay scalars (VConst)
 * until a loop needs them. Reading, building, gathering and materializing them.
 */
import type { SqlType } from "./ast.ts";
import type { Scalar } from "./types.ts";

export interface VBool {
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
export interface VDec {
  tag: "dec";
  n: number;
  valid?: Uint8Array;
  small?: Float64Array;
  big?: bigint[];
}
export interface VUtf8 {
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
export interface VConst {
  tag: "const";
  n: number;
  value: Scalar | null;
}

export type Vec = VBool | VI32 | VI64 | VF64 | VDec | VUtf8 | VObj | VConst;

export const TWO32 = 4294967296;
export const SAFE = Number.MAX_SAFE_INTEGER;

export const isValidAt = (v: Vec, i: number): boolean => {
  if (v.tag === "const") return v.value !== null;
  if (v.valid && v.valid[i] === 0) return false;
  return v.tag !== "obj" || v.data[i] !== null;
};

export function at(v: Vec, i: number): Scalar | null {
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
export const utf8Enc = new TextEncoder();

export function strings(v: VUtf8): (string | null)[] {
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
export function tagOf(t: SqlType): Vec["tag"] {
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

export function builder(t: SqlType, n: number): Builder {
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
export function generate(t: SqlType, n: number, f: (i: number) => Scalar | null): Vec {
  const b = builder(t, n);
  for (let i = 0; i < n; i++) b.set(i, f(i));
  return b.finish();
}

/** Same values as `v`, never a constant. */
export function materialize(v: Vec, t: SqlType): Exclude<Vec, VConst> {
  if (v.tag !== "const") return v;
  const value = v.value;
  return generate(t, v.n, () => value) as Exclude<Vec, VConst>;
}

/** Validity of a Vec as bytes (undefined: all valid). */
export function validityOf(v: Vec): Uint8Array | undefined {
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

export function andValidity(a: Uint8Array | undefined, b: Uint8Array | undefined, n: number) {
  if (!a) return b;
  if (!b) return a;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = a[i] & b[i];
  return out;
}

export function gatherVec(v: Vec, sel: Uint32Array): Vec {
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
