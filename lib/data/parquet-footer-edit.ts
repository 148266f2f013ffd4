/**
 * Copies of a Parquet file with an edited footer, made for parquet-rs's eyes only: the data
 * pages are never touched, and the footer keeps every byte its writer wrote except the fields
 * replaced. Its ARROW:schema (key-value metadata, FileMetaData field 5) is the schema parquet-rs
 * decodes the file to, so editing it edits what parquet-rs returns.
 */
import * as arrow from "apache-arrow";
import { corrupt } from "./parquet-source.ts";
import {
  concatBytes,
  encodeStruct,
  listElements,
  type StructField,
  structFields,
  T_BINARY,
  T_LIST,
  T_STRUCT,
  varintBytes,
} from "./thrift-compact.ts";

const ARROW_SCHEMA_KEY = "ARROW:schema";
const PARQUET_MAGIC = new TextEncoder().encode("PAR1");
/** An IPC stream's end: continuation marker and a zero length. */
const IPC_END = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

/** The bytes parquet-rs expects in ARROW:schema: one IPC Schema message, base64. */
export function arrowSchemaMetadata(schema: arrow.Schema): string {
  const ipc = arrow.tableToIPC(new arrow.Table(schema), "stream");
  // continuation marker, then the message length
  const length = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength).getInt32(4, true);
  return Buffer.from(ipc.subarray(0, 8 + length)).toString("base64");
}

/** The file's ARROW:schema, or undefined when its key-value metadata has none. */
export function footerArrowSchema(
  thrift: Uint8Array,
  fields: StructField[],
): arrow.Schema | undefined {
  const kv = fields.find((f) => f.id === 5 && f.type === T_LIST);
  if (!kv) return undefined;
  for (const [start] of listElements(thrift, kv.start)) {
    const entry = structFields(thrift, start);
    const key = entry.find((f) => f.id === 1 && f.type === T_BINARY);
    const value = entry.find((f) => f.id === 2 && f.type === T_BINARY);
    if (!key || !value || binaryText(thrift, key) !== ARROW_SCHEMA_KEY) continue;
    const message = Buffer.from(binaryText(thrift, value), "base64");
    // Old writers stored the message without its continuation marker.
    const continued = message.readUInt32LE(0) === 0xffffffff;
    const stream = concatBytes([
      continued ? message : concatBytes([IPC_END.subarray(0, 4), message]),
      IPC_END,
    ]);
    try {
      return arrow.tableFromIPC(stream).schema;
    } catch (e) {
      throw corrupt(`unreadable ARROW:schema (${(e as Error).message})`);
    }
  }
  return undefined;
}

function binaryText(thrift: Uint8Array, field: StructField): string {
  const c = thrift.subarray(field.start, field.end);
  let i = 0;
  while (c[i] & 0x80) i++;
  return latin1.decode(c.subarray(i + 1));
}

const latin1 = new TextDecoder("latin1");

/** `fields` (FileMetaData's, ascending) encoded again with the given values replaced or added. */
export function footerWith(
  thrift: Uint8Array,
  fields: StructField[],
  replaced: ReadonlyMap<number, { type: number; value: Uint8Array } | null>,
): Uint8Array {
  const out: { id: number; type: number; value: Uint8Array }[] = [];
  for (const f of fields) {
    if (replaced.has(f.id)) continue;
    out.push({ id: f.id, type: f.type, value: thrift.subarray(f.start, f.end) });
  }
  for (const [id, v] of replaced) if (v !== null) out.push({ id, ...v });
  out.sort((a, b) => a.id - b.id);
  return encodeStruct(out);
}

/** FileMetaData field 5 holding ARROW:schema alone (as arrowSchemaMetadata encodes it). */
export function arrowSchemaOnly(base64: string): { type: number; value: Uint8Array } {
  const k = new TextEncoder().encode(ARROW_SCHEMA_KEY);
  const v = new TextEncoder().encode(base64);
  const value = concatBytes([
    // list of one struct; KeyValue{1: key, 2: value} as binaries
    Uint8Array.of((1 << 4) | T_STRUCT, (1 << 4) | T_BINARY, ...varintBytes(k.length)),
    k,
    Uint8Array.of((1 << 4) | T_BINARY, ...varintBytes(v.length)),
    v,
    Uint8Array.of(0),
  ]);
  return { type: T_LIST, value };
}

/** The thrift footer followed by its trailer: the footer's length and the magic. */
export function footerTail(thrift: Uint8Array): Uint8Array {
  const tail = new Uint8Array(thrift.byteLength + 8);
  tail.set(thrift);
  new DataView(tail.buffer).setUint32(thrift.byteLength, thrift.byteLength, true);
  tail.set(PARQUET_MAGIC, thrift.byteLength + 4);
  return tail;
}

/** In-memory bytes with their footer (`footerLength` bytes with the trailer) replaced. */
export function withFooter(bytes: Uint8Array, footerLength: number, thrift: Uint8Array) {
  return concatBytes([bytes.subarray(0, bytes.byteLength - footerLength), footerTail(thrift)]);
}
