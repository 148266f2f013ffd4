/**
 * Column mapping (Delta protocol "columnMapping"): every field at every nesting level carries a
 * stable id and a physical name; data files, stats and partitionValues use the physical names,
 * while the schema, partitionColumns and everything users see keep the logical ones.
 *
 * Reading files back goes through `alignToLogical`: it finds each table column in a file by
 * field id (id mode), physical name (name mode) or logical name (no mapping), renames it to the
 * logical name at every level, and fills columns the file lacks with nulls — which is how a
 * column added after the file was written reads.
 */
import { randomUUID } from "node:crypto";
import * as arrow from "apache-arrow";
import { siltError } from "../errors.ts";
import {
  COLUMN_MAPPING_ID_KEY,
  COLUMN_MAPPING_PHYSICAL_NAME_KEY,
  type DataType,
  nullData,
  PARQUET_FIELD_ID_KEY,
  type StructField,
  type StructType,
  toArrowType,
} from "./schema.ts";

export type ColumnMappingMode = "none" | "name" | "id";

export const COLUMN_MAPPING_MODE_KEY = "delta.columnMapping.mode";
export const COLUMN_MAPPING_MAX_ID_KEY = "delta.columnMapping.maxColumnId";

/** The table's mapping mode from its configuration; absent means "none". */
export function columnMappingMode(
  configuration: Record<string, string> | null | undefined,
): ColumnMappingMode {
  const raw = configuration?.[COLUMN_MAPPING_MODE_KEY];
  if (raw === undefined || raw === null) return "none";
  const mode = raw.toLowerCase();
  if (mode === "none" || mode === "name" || mode === "id") return mode;
  throw siltError("DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE", { raw });
}

/** `delta.columnMapping.maxColumnId` from a configuration, 0 when absent. */
export function configuredMaxColumnId(
  configuration: Record<string, string> | null | undefined,
): number {
  const raw = configuration?.[COLUMN_MAPPING_MAX_ID_KEY];
  const n = raw === undefined ? 0 : Number(raw);
  return Number.isFinite(n) ? n : 0;
}

/** The field's column-mapping id, if it has one. */
export function fieldId(field: StructField): number | undefined {
  const id = field.metadata[COLUMN_MAPPING_ID_KEY];
  if (typeof id === "number") return id;
  if (typeof id === "string" && id.trim() !== "" && Number.isFinite(Number(id))) return Number(id);
  return undefined;
}

/** The name the field has in data files, stats and partitionValues under `mode`. */
export function physicalName(field: StructField, mode: ColumnMappingMode): string {
  if (mode === "none") return field.name;
  const p = field.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY];
  return typeof p === "string" ? p : field.name;
}

/** Top-level field by logical name, matched case-insensitively as Spark resolves columns. */
export function findField(schema: StructType, name: string): StructField | undefined {
  const exact = schema.fields.find((f) => f.name === name);
  if (exact) return exact;
  const lower = name.toLowerCase();
  return schema.fields.find((f) => f.name.toLowerCase() === lower);
}

/** Physical name of a top-level column given its logical name; undefined if there is none. */
export function physicalColumnName(
  schema: StructType,
  logicalName: string,
  mode: ColumnMappingMode,
): string | undefined {
  const f = findField(schema, logicalName);
  return f && physicalName(f, mode);
}

/** Top-level physical name -> logical name, for reading stats and partitionValues keys. */
export function physicalToLogicalNames(
  schema: StructType,
  mode: ColumnMappingMode,
): Map<string, string> {
  return new Map(schema.fields.map((f) => [physicalName(f, mode), f.name]));
}

/** The schema with every field renamed to its physical name, at every level (metadata kept). */
export function toPhysicalSchema(schema: StructType, mode: ColumnMappingMode): StructType {
  if (mode === "none") return schema;
  const rename = (t: DataType): DataType => {
    if (typeof t === "string") return t;
    switch (t.type) {
      case "struct":
        return {
          type: "struct",
          fields: t.fields.map((f) => ({
            ...f,
            name: physicalName(f, mode),
            type: rename(f.type),
          })),
        };
      case "array":
        return { ...t, elementType: rename(t.elementType) };
      case "map":
        return { ...t, keyType: rename(t.keyType), valueType: rename(t.valueType) };
      default:
        return t;
    }
  };
  return rename(schema) as StructType;
}

/** Highest column-mapping id anywhere in the schema, 0 if none. */
export function maxColumnIdInSchema(t: DataType): number {
  if (typeof t === "string") return 0;
  switch (t.type) {
    case "struct":
      return t.fields.reduce(
        (m, f) => Math.max(m, fieldId(f) ?? 0, maxColumnIdInSchema(f.type)),
        0,
      );
    case "array":
      return maxColumnIdInSchema(t.elementType);
    case "map":
      return Math.max(maxColumnIdInSchema(t.keyType), maxColumnIdInSchema(t.valueType));
    default:
      return 0;
  }
}

/**
 * Gives every field at every level (including structs inside arrays and maps) an id and a
 * `col-<uuid>` physical name where it lacks one, keeping existing ones. Ids continue above both
 * `startMaxId` (the table's maxColumnId, which only grows) and any id already in the schema, in
 * pre-order like Spark (a struct before its fields). Returns a new schema; the input is unchanged.
 */
export function assignColumnMapping(
  schema: StructType,
  startMaxId: number,
  newPhysicalName: () => string = () => `col-${randomUUID()}`,
): { schema: StructType; maxColumnId: number } {
  let maxId = Math.max(startMaxId, maxColumnIdInSchema(schema));
  const visit = (t: DataType): DataType => {
    if (typeof t === "string") return t;
    switch (t.type) {
      case "struct":
        return {
          type: "struct",
          fields: t.fields.map((f) => {
            const metadata = { ...f.metadata };
            if (fieldId(f) === undefined) metadata[COLUMN_MAPPING_ID_KEY] = ++maxId;
            if (typeof metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY] !== "string") {
              metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY] = newPhysicalName();
            }
            return { name: f.name, type: visit(f.type), nullable: f.nullable, metadata };
          }),
        };
      case "array":
        return { ...t, elementType: visit(t.elementType) };
      case "map":
        return { ...t, keyType: visit(t.keyType), valueType: visit(t.valueType) };
      default:
        return t;
    }
  };
  const out = visit(schema) as StructType;
  return { schema: out, maxColumnId: maxId };
}

/** Arrow field id (`PARQUET:field_id`) of a file's field, if it has one. */
function arrowFieldId(f: arrow.Field): number | undefined {
  const raw = f.metadata.get(PARQUET_FIELD_ID_KEY);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isInteger(n) ? n : undefined;
}

/**
 * Index of the file field holding a table field, or -1 when the file lacks it. Id mode matches
 * by field id when the file carries ids at this level (files written before the mapping was
 * enabled do not, and fall back to names); otherwise physical name, exact first, then ignoring
 * case as Spark's Parquet reader does by default.
 */
export function resolveFileField(
  fileFields: readonly arrow.Field[],
  field: StructField,
  mode: ColumnMappingMode,
): number {
  if (mode === "id") {
    const id = fieldId(field);
    if (id !== undefined && fileFields.some((f) => arrowFieldId(f) !== undefined)) {
      return fileFields.findIndex((f) => arrowFieldId(f) === id);
    }
  }
  const name = physicalName(field, mode);
  const exact = fileFields.findIndex((f) => f.name === name);
  if (exact >= 0) return exact;
  const lower = name.toLowerCase();
  return fileFields.findIndex((f) => f.name.toLowerCase() === lower);
}

const mismatch = (path: string, expected: string, found: arrow.DataType) =>
  siltError("FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH:IN_THE_FILE", {
    path,
    expected,
    found: String(found),
  });

function alignData(
  data: arrow.Data,
  type: DataType,
  mode: ColumnMappingMode,
  path: string,
): arrow.Data {
  if (typeof type === "string") return data;
  switch (type.type) {
    case "struct": {
      if (data.type.typeId !== arrow.Type.Struct) throw mismatch(path, "struct", data.type);
      const fileFields = (data.type as arrow.Struct).children;
      const children: arrow.Data[] = [];
      const fields: arrow.Field[] = [];
      for (const f of type.fields) {
        const i = resolveFileField(fileFields, f, mode);
        const child =
          i < 0
            ? nullData(toArrowType(f.type), data.length)
            : alignData(data.children[i], f.type, mode, `${path}.${f.name}`);
        children.push(child);
        fields.push(new arrow.Field(f.name, child.type, i < 0 || f.nullable));
      }
      return new arrow.Data(
        new arrow.Struct(fields),
        data.offset,
        data.length,
        data.nullCount,
        [undefined, undefined, data.nullBitmap],
        children,
      );
    }
    case "array": {
      const id = data.type.typeId;
      if (
        id !== arrow.Type.List &&
        id !== arrow.Type.LargeList &&
        id !== arrow.Type.FixedSizeList
      ) {
        throw mismatch(path, "array", data.type);
      }
      const child = alignData(data.children[0], type.elementType, mode, `${path}.element`);
      if (child === data.children[0]) return data;
      const elementField = new arrow.Field("element", child.type, type.containsNull);
      const listType =
        id === arrow.Type.List
          ? new arrow.List(elementField)
          : id === arrow.Type.LargeList
            ? new arrow.LargeList(elementField)
            : new arrow.FixedSizeList((data.type as arrow.FixedSizeList).listSize, elementField);
      return new arrow.Data(
        listType,
        data.offset,
        data.length,
        data.nullCount,
        [data.valueOffsets, undefined, data.nullBitmap],
        [child],
      );
    }
    case "map": {
      if (data.type.typeId !== arrow.Type.Map) throw mismatch(path, "map", data.type);
      const entries = data.children[0];
      const key = alignData(entries.children[0], type.keyType, mode, `${path}.key`);
      const value = alignData(entries.children[1], type.valueType, mode, `${path}.value`);
      if (key === entries.children[0] && value === entries.children[1]) return data;
      const entriesType = new arrow.Struct([
        new arrow.Field("key", key.type, false),
        new arrow.Field("value", value.type, type.valueContainsNull),
      ]);
      const newEntries = new arrow.Data(
        entriesType,
        entries.offset,
        entries.length,
        entries.nullCount,
        [undefined, undefined, entries.nullBitmap],
        [key, value],
      );
      const mapType = new arrow.Map_(
        new arrow.Field("entries", entriesType, false),
        (data.type as arrow.Map_).keysSorted,
      );
      return new arrow.Data(
        mapType,
        data.offset,
        data.length,
        data.nullCount,
        [data.valueOffsets, undefined, data.nullBitmap],
        [newEntries],
      );
    }
    default:
      return data;
  }
}

/**
 * Re-expresses data read from a file in the table's logical schema: columns found by id or
 * physical name (see `resolveFileField`), renamed to logical names at every level, in schema
 * order, with all-null columns for those the file lacks. Values keep the file's Arrow types, so
 * a column whose type was widened since the file was written still needs a cast by the caller.
 * Pass a schema without partition columns (they are not stored in files).
 */
export function alignToLogical(
  source: arrow.Table | arrow.RecordBatch,
  schema: StructType,
  mode: ColumnMappingMode,
): arrow.Table {
  const batches = source instanceof arrow.Table ? source.batches : [source];
  const fileFields = source.schema.fields;
  const indices = schema.fields.map((f) => resolveFileField(fileFields, f, mode));
  let outSchema: arrow.Schema | undefined;
  const out: arrow.RecordBatch[] = [];
  for (const batch of batches) {
    const children = schema.fields.map((f, c) => {
      const i = indices[c];
      return i < 0
        ? nullData(toArrowType(f.type), batch.numRows)
        : alignData(batch.data.children[i], f.type, mode, f.name);
    });
    outSchema ??= new arrow.Schema(
      schema.fields.map(
        (f, c) => new arrow.Field(f.name, children[c].type, indices[c] < 0 || f.nullable),
      ),
    );
    out.push(
      new arrow.RecordBatch(
        outSchema,
        arrow.makeData({
          type: new arrow.Struct(outSchema.fields),
          length: batch.numRows,
          nullCount: 0,
          children,
        }),
      ),
    );
  }
  if (outSchema === undefined) {
    outSchema = new arrow.Schema(
      schema.fields.map((f) => new arrow.Field(f.name, toArrowType(f.type), f.nullable)),
    );
    return new arrow.Table(outSchema);
  }
  return new arrow.Table(outSchema, out);
}
