/**
 * Thrift's compact protocol, as far as Silt edits Parquet footers: a cursor that reads and skips
 * values, a struct's fields as byte ranges, and an encoder that writes fields back, so a footer
 * can be copied with a few fields replaced and every other byte kept as the writer wrote it.
 */
import { corrupt } from "./parquet-source.ts";

/** Thrift compact protocol type codes (the field header's low nibble). */
export const T_BOOL_TRUE = 1;
export const T_BOOL_FALSE = 2;
export const T_BYTE = 3;
export const T_I16 = 4;
export const T_I32 = 5;
export const T_I64 = 6;
export const T_DOUBLE = 7;
export const T_BINARY = 8;
export const T_LIST = 9;
export const T_SET = 10;
export const T_MAP = 11;
export const T_STRUCT = 12;

export class CompactCursor {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  private advance(n: number): void {
    if (this.pos + n > this.bytes.length) throw corrupt("footer ends inside a value");
    this.pos += n;
  }

  byte(): number {
    if (this.pos >= this.bytes.length) throw corrupt("footer ends inside a value");
    return this.bytes[this.pos++];
  }

  /** Unsigned varint; exact up to 2^53, which every length, count and id here is. */
  varint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      v += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return v;
      scale *= 128;
      if (scale > 2 ** 70) throw corrupt("varint too long");
    }
  }

  /** A binary value's [start, end) in the footer. */
  binaryRange(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    this.advance(length);
    return [start, this.pos];
  }

  zigzag(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  /** Next field header of a struct as [id, type], or undefined at its stop byte. */
  field(previousId: number): [number, number] | undefined {
    const h = this.byte();
    if (h === 0) return undefined;
    const delta = h >> 4;
    return [delta === 0 ? this.zigzag() : previousId + delta, h & 0x0f];
  }

  listHeader(): [number, number] {
    const h = this.byte();
    const size = h >> 4;
    return [size === 15 ? this.varint() : size, h & 0x0f];
  }

  /** Skips a value; `element` when it sits in a list, set or map rather than a struct field. */
  skip(type: number, element = false, depth = 0): void {
    if (depth > 64) throw corrupt("footer nests too deeply");
    switch (type) {
      case T_BOOL_TRUE:
      case T_BOOL_FALSE:
        // A boolean struct field is all header; a boolean element takes a byte.
        if (element) this.advance(1);
        return;
      case T_BYTE:
        this.advance(1);
        return;
      case T_I16:
      case T_I32:
      case T_I64:
        this.varint();
        return;
      case T_DOUBLE:
        this.advance(8);
        return;
      case T_BINARY:
        this.advance(this.varint());
        return;
      case T_LIST:
      case T_SET: {
        const [n, elem] = this.listHeader();
        for (let i = 0; i < n; i++) this.skip(elem, true, depth + 1);
        return;
      }
      case T_MAP: {
        const n = this.varint();
        if (n === 0) return;
        const kv = this.byte();
        for (let i = 0; i < n; i++) {
          this.skip(kv >> 4, true, depth + 1);
          this.skip(kv & 0x0f, true, depth + 1);
        }
        return;
      }
      case T_STRUCT: {
        let id = 0;
        for (let f = this.field(id); f; f = this.field(id)) {
          id = f[0];
          this.skip(f[1], false, depth + 1);
        }
        return;
      }
      default:
        throw corrupt(`unknown thrift type ${type}`);
    }
  }
}

/** A field of a struct: its id, its type, and its value's bytes (after the field header). */
export interface StructField {
  id: number;
  type: number;
  start: number;
  end: number;
}

/** The fields of the struct that starts at `at`, up to its stop byte. */
export function structFields(bytes: Uint8Array, at = 0): StructField[] {
  const c = new CompactCursor(bytes);
  c.pos = at;
  const fields: StructField[] = [];
  let id = 0;
  for (let f = c.field(id); f; f = c.field(id)) {
    id = f[0];
    const start = c.pos;
    c.skip(f[1]);
    fields.push({ id, type: f[1], start, end: c.pos });
  }
  return fields;
}

/** [start, end) of each element of the list whose header starts at `at`. */
export function listElements(bytes: Uint8Array, at: number): [number, number][] {
  const c = new CompactCursor(bytes);
  c.pos = at;
  const [n, type] = c.listHeader();
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const start = c.pos;
    c.skip(type, true);
    out.push([start, c.pos]);
  }
  return out;
}

/** A struct from fields in ascending id order, each with its encoded value. */
export function encodeStruct(
  fields: { id: number; type: number; value: Uint8Array }[],
): Uint8Array {
  const chunks: Uint8Array[] = [];
  let previous = 0;
  for (const f of fields) {
    const delta = f.id - previous;
    chunks.push(
      delta > 0 && delta <= 15
        ? Uint8Array.of((delta << 4) | f.type)
        : Uint8Array.of(f.type, ...varintBytes(zigzag32(f.id))),
    );
    chunks.push(f.value);
    previous = f.id;
  }
  chunks.push(Uint8Array.of(0));
  return concatBytes(chunks);
}

/** A list of already encoded elements of one type. */
export function encodeList(type: number, elements: Uint8Array[]): Uint8Array {
  const n = elements.length;
  const header = n < 15 ? [(n << 4) | type] : [0xf0 | type, ...varintBytes(n)];
  return concatBytes([Uint8Array.from(header), ...elements]);
}

export function zigzag32(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}

export function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
