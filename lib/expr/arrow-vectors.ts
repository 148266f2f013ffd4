/**
 * Arrow data <-> the evaluator's column forms (vectors.ts): a batch column read without copying
 * where its layout allows, and a result handed back as Arrow data of the SQL type.
 */
import * as arrow from "apache-arrow";
import { arrowValues } from "../data/arrow-to-json.ts";
import { conformData } from "../data/cast.ts";
import { valuesToArrow } from "../data/json-to-arrow.ts";
import { type DataType, toArrowType } from "../delta/schema.ts";
import type { SqlType } from "./ast.ts";
import { fromScalar, toScalar } from "./scalar-json.ts";
import { isDecimalType, type Scalar } from "./types.ts";
import { materialize, TWO32, tagOf, type VDec, type Vec, validityOf } from "./vectors.ts";

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

export function arrowValidity(d: arrow.Data): Uint8Array | undefined {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return undefined;
  return bitsToBytes(d.nullBitmap, d.offset, d.length);
}

export function fromArrow(d0: arrow.Data, t: SqlType, name: string): Vec {
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

export function toArrowData(v0: Vec, t: SqlType): arrow.Data {
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
