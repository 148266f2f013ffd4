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
import {
  arrowSchemaMetadata,
  arrowSchemaOnly,
  footerTail,
  footerWith,
  withFooter,
} from "./parquet-footer-edit.ts";
import { arrowSchemaOf, blobOf, type RangeSource } from "./parquet-source.ts";
import { onParquetWasm } from "./parquet-wasm.ts";
import {
  CompactCursor,
  concatBytes,
  structFields,
  T_BINARY,
  T_I32,
  T_LIST,
} from "./thrift-compact.ts";

/** Physical type code of INT96 in SchemaElement.type. */
const PARQUET_INT96 = 3;

const INT96_HINT_TYPE = new arrow.Timestamp(arrow.TimeUnit.MICROSECOND, "UTC");

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
  const fields = structFields(thrift);
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
  // Only parquet-rs reads the copy, and nothing else in the key-value metadata matters to it.
  const patched = footerWith(thrift, fields, new Map([[5, arrowSchemaOnly(hint)]]));
  if (source instanceof Uint8Array) return withFooter(source, footer.byteLength, patched) as S;
  const tail = footerTail(patched);
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
  if (source instanceof Uint8Array) {
    return onParquetWasm(
      (wasm) => arrow.tableFromIPC(wasm.readSchema(source).intoIPCStream()).schema,
    );
  }
  const file = await onParquetWasm((wasm) =>
    wasm.ParquetFile.fromFile(blobOf(source) as unknown as Blob),
  );
  try {
    return arrowSchemaOf(file);
  } finally {
    file.free();
  }
}

const utf8 = new TextDecoder();
const latin1 = new TextDecoder("latin1");
