/**
 * A column subset of an in-memory Parquet file, read by parquet-rs's synchronous reader.
 *
 * That reader decodes every column (it ignores a column list), and the asynchronous one that
 * honours column lists cannot be used on files Silt did not just write: it panics on decode
 * errors inside a microtask, which nothing can catch and which kills the process. So the
 * subset is made in the footer: a copy whose schema, column chunks and column orders hold only
 * the wanted top-level columns (and whose ARROW:schema, which parquet-rs matches to the schema
 * field by field, holds only theirs). The data pages stay where they are; parquet-rs never
 * reads the chunks the footer no longer lists.
 */
import * as arrow from "apache-arrow";
import {
  arrowSchemaMetadata,
  arrowSchemaOnly,
  footerArrowSchema,
  footerWith,
} from "./parquet-footer-edit.ts";
import { corrupt } from "./parquet-source.ts";
import {
  CompactCursor,
  encodeList,
  encodeStruct,
  listElements,
  structFields,
  T_BINARY,
  T_I32,
  T_LIST,
  T_STRUCT,
  varintBytes,
  zigzag32,
} from "./thrift-compact.ts";

export interface ProjectedFooter {
  /** The wanted top-level columns the file has, in file order. */
  columns: string[];
  /** The narrowed thrift footer (without its trailer); absent when the file's must be used. */
  thrift?: Uint8Array;
}

interface TopLevelColumn {
  name: string;
  /** Its schema elements: [first, end) in the schema list. */
  elements: [number, number];
  /** Its leaves: [first, end) in leaf (column chunk) order. */
  leaves: [number, number];
}

/** The footer narrowed to the top-level columns in `wanted` (not narrowed when it holds no others). */
export function projectFooter(thrift: Uint8Array, wanted: readonly string[]): ProjectedFooter {
  const fields = structFields(thrift);
  const schemaField = fields.find((f) => f.id === 2 && f.type === T_LIST);
  if (!schemaField) throw corrupt("footer has no schema");
  const elements = listElements(thrift, schemaField.start);
  const columns = topLevelColumns(thrift, elements);
  const want = new Set(wanted);
  const kept = columns.filter((c) => want.has(c.name));
  const names = kept.map((c) => c.name);
  if (kept.length === columns.length) return { columns: names };
  const keptLeaves = kept.flatMap((c) => range(c.leaves));
  const leafCount = columns.reduce((n, c) => n + c.leaves[1] - c.leaves[0], 0);

  const replaced = new Map<number, { type: number; value: Uint8Array } | null>();
  const root = elements[0];
  replaced.set(2, {
    type: T_LIST,
    value: encodeList(T_STRUCT, [
      rootWithChildren(thrift, root[0], kept.length),
      ...kept.flatMap((c) => range(c.elements).map((i) => thrift.subarray(...elements[i]))),
    ]),
  });
  const rowGroups = fields.find((f) => f.id === 4 && f.type === T_LIST);
  if (rowGroups) {
    const groups: Uint8Array[] = [];
    for (const [start] of listElements(thrift, rowGroups.start)) {
      groups.push(narrowRowGroup(thrift, start, keptLeaves, leafCount));
    }
    replaced.set(4, { type: T_LIST, value: encodeList(T_STRUCT, groups) });
  }
  const orders = fields.find((f) => f.id === 7 && f.type === T_LIST);
  if (orders) {
    const all = listElements(thrift, orders.start);
    if (all.length !== leafCount) throw corrupt("column orders do not match the schema");
    replaced.set(7, {
      type: T_LIST,
      value: encodeList(
        T_STRUCT,
        keptLeaves.map((i) => thrift.subarray(...all[i])),
      ),
    });
  }
  const arrowSchema = footerArrowSchema(thrift, fields);
  if (arrowSchema) {
    const narrowed = new arrow.Schema(
      arrowSchema.fields.filter((f) => names.includes(f.name)),
      arrowSchema.metadata,
    );
    replaced.set(5, arrowSchemaOnly(arrowSchemaMetadata(narrowed)));
  }
  return { columns: names, thrift: footerWith(thrift, fields, replaced) };
}

/** The root's children with their element and leaf ranges (elements come depth first). */
function topLevelColumns(thrift: Uint8Array, elements: [number, number][]): TopLevelColumn[] {
  const info = elements.map(([start]) => schemaElement(thrift, start));
  if (info.length === 0) throw corrupt("footer has an empty schema");
  let leaf = 0;
  /** One past the last element of the subtree at `i`, counting its leaves. */
  const subtreeEnd = (i: number, depth: number): number => {
    if (i >= info.length) throw corrupt("schema ends inside a group");
    if (depth > 64) throw corrupt("schema nests too deeply");
    const n = info[i].children;
    if (n === 0) {
      leaf++;
      return i + 1;
    }
    let j = i + 1;
    for (let k = 0; k < n; k++) j = subtreeEnd(j, depth + 1);
    return j;
  };
  const out: TopLevelColumn[] = [];
  let i = 1;
  for (let k = 0; k < info[0].children; k++) {
    const firstLeaf = leaf;
    const end = subtreeEnd(i, 1);
    out.push({ name: info[i].name, elements: [i, end], leaves: [firstLeaf, leaf] });
    i = end;
  }
  if (i !== info.length) throw corrupt("schema has elements outside the root");
  return out;
}

function schemaElement(thrift: Uint8Array, start: number): { name: string; children: number } {
  const c = new CompactCursor(thrift);
  c.pos = start;
  let name = "";
  let children = 0;
  let id = 0;
  for (let f = c.field(id); f; f = c.field(id)) {
    id = f[0];
    if (id === 4 && f[1] === T_BINARY) name = utf8.decode(thrift.subarray(...c.binaryRange()));
    else if (id === 5 && f[1] === T_I32) children = c.zigzag();
    else c.skip(f[1]);
  }
  return { name, children };
}

/** The root schema element with its num_children (field 5) set to `n`. */
function rootWithChildren(thrift: Uint8Array, start: number, n: number): Uint8Array {
  return encodeStruct(
    structFields(thrift, start).map((f) => ({
      id: f.id,
      type: f.type,
      value:
        f.id === 5 ? Uint8Array.from(varintBytes(zigzag32(n))) : thrift.subarray(f.start, f.end),
    })),
  );
}

/**
 * A RowGroup with only the kept column chunks, and without its sort order (sorting_columns,
 * field 4), whose column indexes would point at the wrong chunks and which decoding never needs.
 */
function narrowRowGroup(
  thrift: Uint8Array,
  start: number,
  keptLeaves: number[],
  leafCount: number,
): Uint8Array {
  const fields = structFields(thrift, start).filter((f) => f.id !== 4);
  return encodeStruct(
    fields.map((f) => {
      if (f.id !== 1 || f.type !== T_LIST) {
        return { id: f.id, type: f.type, value: thrift.subarray(f.start, f.end) };
      }
      const chunks = listElements(thrift, f.start);
      if (chunks.length !== leafCount) throw corrupt("row group does not match the schema");
      const value = encodeList(
        T_STRUCT,
        keptLeaves.map((i) => thrift.subarray(...chunks[i])),
      );
      return { id: f.id, type: f.type, value };
    }),
  );
}

function range([from, to]: [number, number]): number[] {
  return Array.from({ length: to - from }, (_, k) => from + k);
}

const utf8 = new TextDecoder();
