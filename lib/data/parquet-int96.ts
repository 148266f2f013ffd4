/**
 * INT96 timestamps read exactly, by rewriting a copy of the file's footer.
 *
 * parquet-rs turns INT96 (Spark's and Hive's legacy timestamp: nanos of day and a Julian day)
 * into Timestamp(NANOSECOND), whose int64 wraps outside 1677..2262, so Spark's 9999-12-31
 * sentinel came back as 1816. When the file's ARROW:schema asks for microseconds it decodes
 * INT96 straight to them, exact for every instant an int64 of microseconds holds (Julian days
 * farther than about 292,000 years from 1970 still wrap). Files that hold INT96 are therefore
 * read through a copy of their footer whose ARROW:schema is parquet-rs's own schema of the file
 * with those columns as Timestamp(MICROSECOND, "UTC"): parquet-rs keeps every codec, encoding
 * and nesting, and the data pages are never touched. The footer is only rewritten for
 * parquet-wasm's eyes: nothing else reads the key-value metadata it drops.
 */
import * as arrow from "apache-arrow";
import * as pw from "parquet-wasm/esm";
import { arrowSchemaOf, blobOf, corrupt, type RangeSource } from "./parquet-source.ts";

const INT96_HINT_TYPE = new arrow.Timestamp(arrow.TimeUnit.MICROSECOND, "UTC");

/** Thrift compact protocol type codes (the field header's low nibble). */
const T_BOOL_TRUE = 1;
const T_BOOL_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

/** Physical type code of INT96 in SchemaElement.type. */
const PARQUET_INT96 = 3;

class CompactCursor {
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

/** INT96 columns of a file: how many, and the names of the top-level ones. */
interface Int96Columns {
  count: number;
  topLevel: Set<string>;
}

/**
 * The INT96 columns of the schema (FileMetaData field 2), or undefined when there are none.
 * Walks only the schema, which precedes the row groups, so it costs microseconds even on
 * footers of many row groups: every in-memory read pays it.
 */
export function int96Columns(footerThrift: Uint8Array): Int96Columns | undefined {
  const c = new CompactCursor(footerThrift);
  let id = 0;
  for (let f = c.field(id); f; f = c.field(id)) {
    id = f[0];
    if (id !== 2 || f[1] !== T_LIST) {
      c.skip(f[1]);
      continue;
    }
    const found: Int96Columns = { count: 0, topLevel: new Set() };
    // Elements come depth first; `open` counts the children still to come at each depth.
    const open: number[] = [];
    const [n] = c.listHeader();
    for (let i = 0; i < n; i++) {
      let type: number | undefined;
      let name: [number, number] = [0, 0];
      let children = 0;
      let eid = 0;
      for (let g = c.field(eid); g; g = c.field(eid)) {
        eid = g[0];
        if (eid === 1 && g[1] === T_I32) type = c.zigzag();
        else if (eid === 4 && g[1] === T_BINARY) name = c.binaryRange();
        else if (eid === 5 && g[1] === T_I32) children = c.zigzag();
        else c.skip(g[1]);
      }
      const depth = open.length;
      if (depth > 0) open[depth - 1]--;
      if (type === PARQUET_INT96) {
        found.count++;
        if (depth === 1) found.topLevel.add(utf8.decode(footerThrift.subarray(...name)));
      }
      if (children > 0) open.push(children);
      while (open.length > 0 && open[open.length - 1] === 0) open.pop();
    }
    return found.count > 0 ? found : undefined;
  }
  return undefined;
}

interface FooterField {
  id: number;
  type: number;
  /** The value's bytes, after the field header. */
  start: number;
  end: number;
}

function footerFields(footerThrift: Uint8Array): FooterField[] {
  const c = new CompactCursor(footerThrift);
  const fields: FooterField[] = [];
  let id = 0;
  for (let f = c.field(id); f; f = c.field(id)) {
    id = f[0];
    const start = c.pos;
    c.skip(f[1]);
    fields.push({ id, type: f[1], start, end: c.pos });
  }
  return fields;
}

/** The footer thrift with its key-value metadata (field 5) replaced by ARROW:schema alone. */
function footerWithArrowSchema(
  footerThrift: Uint8Array,
  fields: FooterField[],
  arrowSchemaB64: string,
): Uint8Array {
  const kv = compactKeyValueList("ARROW:schema", arrowSchemaB64);
  const kept = fields.filter((f) => f.id !== 5);
  kept.push({ id: 5, type: T_LIST, start: -1, end: -1 });
  kept.sort((a, b) => a.id - b.id);
  const chunks: Uint8Array[] = [];
  let previous = 0;
  for (const f of kept) {
    const delta = f.id - previous;
    chunks.push(
      delta > 0 && delta <= 15
        ? Uint8Array.of((delta << 4) | f.type)
        : Uint8Array.of(f.type, ...varintBytes(zigzag32(f.id))),
    );
    chunks.push(f.start < 0 ? kv : footerThrift.subarray(f.start, f.end));
    previous = f.id;
  }
  chunks.push(Uint8Array.of(0));
  return concatBytes(chunks);
}

function compactKeyValueList(key: string, value: string): Uint8Array {
  const k = new TextEncoder().encode(key);
  const v = new TextEncoder().encode(value);
  return concatBytes([
    // list of one struct; KeyValue{1: key, 2: value} as binaries
    Uint8Array.of((1 << 4) | T_STRUCT, (1 << 4) | T_BINARY, ...varintBytes(k.length)),
    k,
    Uint8Array.of((1 << 4) | T_BINARY, ...varintBytes(v.length)),
    v,
    Uint8Array.of(0),
  ]);
}

function zigzag32(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}

function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** The bytes parquet-rs expects in ARROW:schema: one IPC Schema message, base64. */
function arrowSchemaMetadata(schema: arrow.Schema): string {
  const ipc = arrow.tableToIPC(new arrow.Table(schema), "stream");
  // continuation marker, then the message length
  const length = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength).getInt32(4, true);
  return Buffer.from(ipc.subarray(0, 8 + length)).toString("base64");
}

/**
 * parquet-rs's schema of the file with its INT96 columns as microseconds, or undefined when
 * none can be told apart. An INT96 leaf is a Timestamp(NANOSECOND) in that schema, but so is an
 * INT64 TIMESTAMP(NANOS) one: when the counts match every nanosecond timestamp is INT96 (what
 * Spark, Hive and Impala write); otherwise only top-level INT96 columns are found, by name.
 */
function int96HintSchema(schema: arrow.Schema, int96: Int96Columns): arrow.Schema | undefined {
  const all = countNanoTimestamps(schema.fields) === int96.count;
  let changed = false;
  const fields = schema.fields.map((f) => {
    const g = all
      ? hintField(f)
      : isNanoTimestamp(f.type) && int96.topLevel.has(f.name)
        ? withType(f, INT96_HINT_TYPE)
        : f;
    if (g !== f) changed = true;
    return g;
  });
  return changed ? new arrow.Schema(fields, schema.metadata) : undefined;
}

function isNanoTimestamp(t: arrow.DataType): boolean {
  return arrow.DataType.isTimestamp(t) && t.unit === arrow.TimeUnit.NANOSECOND;
}

/** Children of the nested types hintField rebuilds; other types are leaves to it. */
function nestedChildren(t: arrow.DataType): arrow.Field[] {
  return arrow.DataType.isStruct(t) ||
    arrow.DataType.isList(t) ||
    arrow.DataType.isLargeList(t) ||
    arrow.DataType.isFixedSizeList(t) ||
    arrow.DataType.isMap(t)
    ? t.children
    : [];
}

export function countNanoTimestamps(fields: arrow.Field[]): number {
  return fields.reduce(
    (n, f) => n + (isNanoTimestamp(f.type) ? 1 : countNanoTimestamps(nestedChildren(f.type))),
    0,
  );
}

function withType(f: arrow.Field, type: arrow.DataType): arrow.Field {
  return new arrow.Field(f.name, type, f.nullable, f.metadata);
}

function hintField(f: arrow.Field): arrow.Field {
  const t = f.type;
  if (isNanoTimestamp(t)) return withType(f, INT96_HINT_TYPE);
  const children = nestedChildren(t);
  const hinted = children.map(hintField);
  if (hinted.every((c, i) => c === children[i])) return f;
  if (arrow.DataType.isStruct(t)) return withType(f, new arrow.Struct(hinted));
  if (arrow.DataType.isList(t)) return withType(f, new arrow.List(hinted[0]));
  if (arrow.DataType.isLargeList(t)) return withType(f, new arrow.LargeList(hinted[0]));
  if (arrow.DataType.isFixedSizeList(t))
    return withType(f, new arrow.FixedSizeList(t.listSize, hinted[0]));
  return withType(
    f,
    new arrow.Map_(hinted[0] as arrow.Field<arrow.Struct>, (t as arrow.Map_).keysSorted),
  );
}

/**
 * ARROW:schema hints by the footer bytes they were made from (the parquet schema and the
 * key-value metadata, whose own ARROW:schema shapes parquet-rs's schema): the files of a table
 * share them, and making one costs as much as decoding a small file. null: nothing to hint.
 */
const int96Hints = new Map<string, string | null>();
const INT96_HINTS_KEPT = 16;

/**
 * The file with a footer that hints its INT96 columns to microseconds, or undefined when none
 * can be hinted. `footer` is the thrift footer with its 8-byte trailer; `schema` is parquet-rs's
 * schema of the file, taken from parquet-wasm when needed and not given.
 */
export async function withInt96Hint<S extends Uint8Array | RangeSource>(
  source: S,
  footer: Uint8Array,
  int96: Int96Columns,
  schema?: arrow.Schema,
): Promise<S | undefined> {
  const thrift = footer.subarray(0, footer.byteLength - 8);
  const fields = footerFields(thrift);
  const key = fields
    .filter((f) => f.id === 2 || f.id === 5)
    .map((f) => `${f.id}:${f.end - f.start}:${latin1.decode(thrift.subarray(f.start, f.end))}`)
    .join("");
  let hint = int96Hints.get(key);
  if (hint === undefined) {
    schema ??= await parquetRsSchema(source);
    const hinted = int96HintSchema(schema, int96);
    hint = hinted ? arrowSchemaMetadata(hinted) : null;
    if (int96Hints.size >= INT96_HINTS_KEPT) {
      int96Hints.delete(int96Hints.keys().next().value as string);
    }
    int96Hints.set(key, hint);
  }
  if (hint === null) return undefined;
  const patched = footerWithArrowSchema(thrift, fields, hint);
  const tail = new Uint8Array(patched.byteLength + 8);
  tail.set(patched);
  new DataView(tail.buffer).setUint32(patched.byteLength, patched.byteLength, true);
  tail.set(PARQUET_MAGIC, patched.byteLength + 4);
  if (source instanceof Uint8Array) {
    const cut = source.byteLength - footer.byteLength;
    return concatBytes([source.subarray(0, cut), tail]) as S;
  }
  const range = source as RangeSource;
  const cut = range.size - footer.byteLength;
  const hintedSource: RangeSource = {
    size: cut + tail.byteLength,
    async read(start, end) {
      if (start >= cut) return tail.subarray(start - cut, end - cut);
      const head = await range.read(start, Math.min(end, cut));
      return end <= cut ? head : concatBytes([head, tail.subarray(0, end - cut)]);
    },
  };
  return hintedSource as S;
}

async function parquetRsSchema(source: Uint8Array | RangeSource): Promise<arrow.Schema> {
  const file = await pw.ParquetFile.fromFile(blobOf(source) as unknown as Blob);
  try {
    return arrowSchemaOf(file);
  } finally {
    file.free();
  }
}

const utf8 = new TextDecoder();
const latin1 = new TextDecoder("latin1");
const PARQUET_MAGIC = new TextEncoder().encode("PAR1");
