/**
 * The Delta schema model: parsing and writing `metaData.schemaString`, Spark SQL type names for
 * the API and DDL, and the mapping to Arrow types used by the Parquet reader and writer.
 *
 * Types mirror the Delta JSON: primitives are their Delta names ("long", "integer", ...), every
 * other type is an object with a `type` tag. A type this engine cannot handle (variant, void,
 * intervals, UDTs) parses into `{type: "unsupported"}` holding its original JSON, so a schema
 * that mentions one still round-trips and callers can name it in an error.
 */
import * as arrow from "apache-arrow";
import { siltError } from "../errors.ts";
import { quoteIfNeeded, quotePath } from "../values/identifiers.ts";

export type PrimitiveTypeName =
  | "string"
  | "long"
  | "integer"
  | "short"
  | "byte"
  | "float"
  | "double"
  | "boolean"
  | "binary"
  | "date"
  | "timestamp"
  | "timestamp_ntz";

export interface DecimalType {
  type: "decimal";
  precision: number;
  scale: number;
}

export type PrimitiveType = PrimitiveTypeName | DecimalType;

export interface StructField {
  name: string;
  type: DataType;
  nullable: boolean;
  metadata: Record<string, unknown>;
}

export interface StructType {
  type: "struct";
  fields: StructField[];
}

export interface ArrayType {
  type: "array";
  elementType: DataType;
  containsNull: boolean;
}

export interface MapType {
  type: "map";
  keyType: DataType;
  valueType: DataType;
  valueContainsNull: boolean;
}

/** A type Silt cannot read or write. `json` is the type exactly as the schema spelled it. */
export interface UnsupportedType {
  type: "unsupported";
  name: string;
  json: unknown;
}

export type DataType = PrimitiveType | StructType | ArrayType | MapType | UnsupportedType;

export const MAX_DECIMAL_PRECISION = 38;

const PRIMITIVE_NAMES: ReadonlySet<string> = new Set<PrimitiveTypeName>([
  "string",
  "long",
  "integer",
  "short",
  "byte",
  "float",
  "double",
  "boolean",
  "binary",
  "date",
  "timestamp",
  "timestamp_ntz",
]);

// ---------------------------------------------------------------------------------------------
// Constructors and guards

export const decimal = (precision: number, scale: number): DecimalType => ({
  type: "decimal",
  precision,
  scale,
});

export const structType = (fields: StructField[]): StructType => ({ type: "struct", fields });

export const structField = (
  name: string,
  type: DataType,
  nullable = true,
  metadata: Record<string, unknown> = {},
): StructField => ({ name, type, nullable, metadata });

export const arrayType = (elementType: DataType, containsNull = true): ArrayType => ({
  type: "array",
  elementType,
  containsNull,
});

export const mapType = (
  keyType: DataType,
  valueType: DataType,
  valueContainsNull = true,
): MapType => ({
  type: "map",
  keyType,
  valueType,
  valueContainsNull,
});

export const isPrimitiveName = (t: DataType): t is PrimitiveTypeName => typeof t === "string";
export const isDecimal = (t: DataType): t is DecimalType =>
  typeof t === "object" && t.type === "decimal";
export const isStruct = (t: DataType): t is StructType =>
  typeof t === "object" && t.type === "struct";
export const isArray = (t: DataType): t is ArrayType => typeof t === "object" && t.type === "array";
export const isMap = (t: DataType): t is MapType => typeof t === "object" && t.type === "map";
export const isUnsupported = (t: DataType): t is UnsupportedType =>
  typeof t === "object" && t.type === "unsupported";

/** Structural equality of types; field metadata is ignored, field names compare exactly. */
export function typesEqual(a: DataType, b: DataType): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  switch (a.type) {
    case "decimal":
      return b.type === "decimal" && a.precision === b.precision && a.scale === b.scale;
    case "array":
      return (
        b.type === "array" &&
        a.containsNull === b.containsNull &&
        typesEqual(a.elementType, b.elementType)
      );
    case "map":
      return (
        b.type === "map" &&
        a.valueContainsNull === b.valueContainsNull &&
        typesEqual(a.keyType, b.keyType) &&
        typesEqual(a.valueType, b.valueType)
      );
    case "struct":
      return (
        b.type === "struct" &&
        a.fields.length === b.fields.length &&
        a.fields.every(
          (f, i) =>
            f.name === b.fields[i].name &&
            f.nullable === b.fields[i].nullable &&
            typesEqual(f.type, b.fields[i].type),
        )
      );
    case "unsupported":
      return b.type === "unsupported" && JSON.stringify(a.json) === JSON.stringify(b.json);
  }
}

// ---------------------------------------------------------------------------------------------
// Delta JSON (schemaString)

const DECIMAL_JSON = /^decimal\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$/;

const invalidJsonType = (json: unknown) =>
  siltError("INVALID_JSON_DATA_TYPE", {
    json: typeof json === "string" ? json : JSON.stringify(json),
  });

/** Parses a Delta `schemaString`. The top level must be a struct. */
export function parseSchema(schemaString: string): StructType {
  let json: unknown;
  try {
    json = JSON.parse(schemaString);
  } catch {
    throw invalidJsonType(schemaString);
  }
  const t = parseDataTypeJson(json);
  if (!isStruct(t)) throw invalidJsonType(json);
  return t;
}

/** Parses one Delta JSON data type (a primitive name or a typed object). */
export function parseDataTypeJson(json: unknown): DataType {
  if (typeof json === "string") {
    if (PRIMITIVE_NAMES.has(json)) return json as PrimitiveTypeName;
    if (json === "decimal") return decimal(10, 0);
    const m = DECIMAL_JSON.exec(json);
    if (m) return decimal(Number(m[1]), Number(m[2]));
    return { type: "unsupported", name: json, json };
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw invalidJsonType(json);
  const obj = json as Record<string, unknown>;
  switch (obj.type) {
    case "struct": {
      if (!Array.isArray(obj.fields)) throw invalidJsonType(json);
      return structType(obj.fields.map(parseFieldJson));
    }
    case "array":
      if (obj.elementType === undefined) throw invalidJsonType(json);
      return arrayType(parseDataTypeJson(obj.elementType), obj.containsNull !== false);
    case "map":
      if (obj.keyType === undefined || obj.valueType === undefined) throw invalidJsonType(json);
      return mapType(
        parseDataTypeJson(obj.keyType),
        parseDataTypeJson(obj.valueType),
        obj.valueContainsNull !== false,
      );
    default:
      return {
        type: "unsupported",
        name: typeof obj.type === "string" ? obj.type : JSON.stringify(json),
        json,
      };
  }
}

function parseFieldJson(json: unknown): StructField {
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw invalidJsonType(json);
  const f = json as Record<string, unknown>;
  if (typeof f.name !== "string" || f.type === undefined) throw invalidJsonType(json);
  const metadata =
    f.metadata !== null && typeof f.metadata === "object" && !Array.isArray(f.metadata)
      ? (f.metadata as Record<string, unknown>)
      : {};
  return structField(f.name, parseDataTypeJson(f.type), f.nullable !== false, metadata);
}

/** The Delta JSON value of a type, with keys in the order Spark writes them. */
export function dataTypeToJson(t: DataType): unknown {
  if (typeof t === "string") return t;
  switch (t.type) {
    case "decimal":
      return `decimal(${t.precision},${t.scale})`;
    case "struct":
      return {
        type: "struct",
        fields: t.fields.map((f) => ({
          name: f.name,
          type: dataTypeToJson(f.type),
          nullable: f.nullable,
          metadata: f.metadata,
        })),
      };
    case "array":
      return {
        type: "array",
        elementType: dataTypeToJson(t.elementType),
        containsNull: t.containsNull,
      };
    case "map":
      return {
        type: "map",
        keyType: dataTypeToJson(t.keyType),
        valueType: dataTypeToJson(t.valueType),
        valueContainsNull: t.valueContainsNull,
      };
    case "unsupported":
      return t.json;
  }
}

/** Serializes a schema exactly as Delta writes `schemaString`. */
export const serializeSchema = (s: StructType): string => JSON.stringify(dataTypeToJson(s));

// ---------------------------------------------------------------------------------------------
// Validation

/**
 * Rejects column names that repeat regardless of case, at every nesting level (Delta requires
 * unique names ignoring case, as Spark's default case-insensitive resolution does).
 */
export function checkDuplicateColumns(t: DataType, path: string[] = []): void {
  if (typeof t === "string") return;
  switch (t.type) {
    case "struct": {
      const seen = new Set<string>();
      for (const f of t.fields) {
        const key = f.name.toLowerCase();
        if (seen.has(key)) {
          throw siltError("COLUMN_ALREADY_EXISTS:EXISTS", {
            path: quotePath([...path, f.name]),
          });
        }
        seen.add(key);
        checkDuplicateColumns(f.type, [...path, f.name]);
      }
      return;
    }
    case "array":
      checkDuplicateColumns(t.elementType, [...path, "element"]);
      return;
    case "map":
      checkDuplicateColumns(t.keyType, [...path, "key"]);
      checkDuplicateColumns(t.valueType, [...path, "value"]);
      return;
    default:
      return;
  }
}

/** Every unsupported type in a schema, with the column path that holds it. */
export function unsupportedTypes(
  t: DataType,
  path: string[] = [],
): { path: string[]; type: UnsupportedType }[] {
  if (typeof t === "string") return [];
  switch (t.type) {
    case "unsupported":
      return [{ path, type: t }];
    case "struct":
      return t.fields.flatMap((f) => unsupportedTypes(f.type, [...path, f.name]));
    case "array":
      return unsupportedTypes(t.elementType, [...path, "element"]);
    case "map":
      return [
        ...unsupportedTypes(t.keyType, [...path, "key"]),
        ...unsupportedTypes(t.valueType, [...path, "value"]),
      ];
    default:
      return [];
  }
}

/** Throws Delta's DELTA_UNSUPPORTED_DATA_TYPES naming each offending column and its type. */
export function assertSupportedTypes(schema: StructType): void {
  const bad = unsupportedTypes(schema);
  if (bad.length === 0) return;
  const list = bad.map((b) => `${quotePath(b.path)}: ${b.type.name.toUpperCase()}`).join(", ");
  throw siltError("DELTA_UNSUPPORTED_DATA_TYPES", { list });
}

// ---------------------------------------------------------------------------------------------
// Spark SQL type names

const SPARK_SIMPLE: Record<PrimitiveTypeName, string> = {
  string: "string",
  long: "bigint",
  integer: "int",
  short: "smallint",
  byte: "tinyint",
  float: "float",
  double: "double",
  boolean: "boolean",
  binary: "binary",
  date: "date",
  timestamp: "timestamp",
  timestamp_ntz: "timestamp_ntz",
};

/** Spark's simpleString of a type, as the API reports column types ("bigint", "array<int>"). */
export function sparkTypeName(t: DataType): string {
  if (typeof t === "string") return SPARK_SIMPLE[t];
  switch (t.type) {
    case "decimal":
      return `decimal(${t.precision},${t.scale})`;
    case "array":
      return `array<${sparkTypeName(t.elementType)}>`;
    case "map":
      return `map<${sparkTypeName(t.keyType)},${sparkTypeName(t.valueType)}>`;
    case "struct":
      return `struct<${t.fields.map((f) => `${quoteIfNeeded(f.name)}:${sparkTypeName(f.type)}`).join(",")}>`;
    case "unsupported":
      return t.name;
  }
}

const unsupportedDataType = (text: string) =>
  siltError("UNSUPPORTED_DATATYPE:TYPE", { name: text.toUpperCase() });

/** Validates decimal parameters the way Spark's DecimalType does. */
export function checkDecimal(precision: number, scale: number): DecimalType {
  if (precision > MAX_DECIMAL_PRECISION) {
    throw siltError("DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION", {
      precision,
      maxPrecision: MAX_DECIMAL_PRECISION,
    });
  }
  if (precision < 1 || scale < 0 || scale > precision) {
    throw unsupportedDataType(`decimal(${precision},${scale})`);
  }
  return decimal(precision, scale);
}

// ---------------------------------------------------------------------------------------------
// Arrow

export const COLUMN_MAPPING_ID_KEY = "delta.columnMapping.id";
export const COLUMN_MAPPING_PHYSICAL_NAME_KEY = "delta.columnMapping.physicalName";
/** Arrow field metadata key that arrow-rs (parquet-wasm) writes as the Parquet field_id. */
export const PARQUET_FIELD_ID_KEY = "PARQUET:field_id";

export interface ArrowSchemaOptions {
  /**
   * Name fields by `delta.columnMapping.physicalName` at every level and carry
   * `delta.columnMapping.id` as `PARQUET:field_id`, as data files of column-mapped tables need.
   */
  physical?: boolean;
}

/** Arrow type for a Delta type. Throws UNSUPPORTED_DATATYPE for types Silt cannot store. */
export function toArrowType(t: DataType, opts: ArrowSchemaOptions = {}): arrow.DataType {
  if (typeof t === "string") {
    switch (t) {
      case "byte":
        return new arrow.Int8();
      case "short":
        return new arrow.Int16();
      case "integer":
        return new arrow.Int32();
      case "long":
        return new arrow.Int64();
      case "float":
        return new arrow.Float32();
      case "double":
        return new arrow.Float64();
      case "boolean":
        return new arrow.Bool();
      case "string":
        return new arrow.Utf8();
      case "binary":
        return new arrow.Binary();
      case "date":
        return new arrow.DateDay();
      case "timestamp":
        return new arrow.TimestampMicrosecond("UTC");
      case "timestamp_ntz":
        return new arrow.TimestampMicrosecond();
    }
  }
  switch (t.type) {
    case "decimal":
      return new arrow.Decimal(t.scale, t.precision, 128);
    case "struct":
      return new arrow.Struct(t.fields.map((f) => toArrowField(f, opts)));
    case "array":
      return new arrow.List(
        new arrow.Field("element", toArrowType(t.elementType, opts), t.containsNull),
      );
    case "map": {
      const entries = new arrow.Struct([
        new arrow.Field("key", toArrowType(t.keyType, opts), false),
        new arrow.Field("value", toArrowType(t.valueType, opts), t.valueContainsNull),
      ]);
      const m = new arrow.Map_(new arrow.Field("entries", entries, false), false);
      // Arrow JS forces the entries field name to "entries"; Parquet writers (and Spark) call the
      // repeated group "key_value", so rename it after construction.
      (m.children as arrow.Field[])[0] = new arrow.Field("key_value", entries, false);
      return m;
    }
    case "unsupported":
      throw unsupportedDataType(t.name);
  }
}

/** Arrow field for a Delta field, under its logical or (with `physical`) physical name. */
export function toArrowField(f: StructField, opts: ArrowSchemaOptions = {}): arrow.Field {
  if (!opts.physical) return new arrow.Field(f.name, toArrowType(f.type, opts), f.nullable);
  const physicalName = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY];
  const id = f.metadata[COLUMN_MAPPING_ID_KEY];
  const metadata = new Map<string, string>();
  if (typeof id === "number" || typeof id === "string")
    metadata.set(PARQUET_FIELD_ID_KEY, String(id));
  return new arrow.Field(
    typeof physicalName === "string" ? physicalName : f.name,
    toArrowType(f.type, opts),
    f.nullable,
    metadata,
  );
}

export const toArrowSchema = (s: StructType, opts: ArrowSchemaOptions = {}): arrow.Schema =>
  new arrow.Schema(s.fields.map((f) => toArrowField(f, opts)));

const arrowUnsupported = (t: arrow.DataType): UnsupportedType => {
  const name = String(t).toLowerCase();
  return { type: "unsupported", name, json: name };
};

/**
 * Delta type for an Arrow type. Accepts every width and encoding a Parquet reader may hand back
 * (unsigned ints widen as Spark reads them, any timestamp unit, string/binary views, dictionaries).
 */
export function fromArrowType(t: arrow.DataType): DataType {
  switch (t.typeId) {
    case arrow.Type.Bool:
      return "boolean";
    case arrow.Type.Int: {
      const it = t as arrow.Int;
      if (it.isSigned) {
        return it.bitWidth === 8
          ? "byte"
          : it.bitWidth === 16
            ? "short"
            : it.bitWidth === 32
              ? "integer"
              : "long";
      }
      return it.bitWidth === 8
        ? "short"
        : it.bitWidth === 16
          ? "integer"
          : it.bitWidth === 32
            ? "long"
            : decimal(20, 0);
    }
    case arrow.Type.Float:
      return (t as arrow.Float).precision === arrow.Precision.DOUBLE ? "double" : "float";
    case arrow.Type.Utf8:
    case arrow.Type.LargeUtf8:
    case arrow.Type.Utf8View:
      return "string";
    case arrow.Type.Binary:
    case arrow.Type.LargeBinary:
    case arrow.Type.BinaryView:
    case arrow.Type.FixedSizeBinary:
      return "binary";
    case arrow.Type.Date:
      return "date";
    case arrow.Type.Timestamp:
      return (t as arrow.Timestamp).timezone ? "timestamp" : "timestamp_ntz";
    case arrow.Type.Decimal: {
      const d = t as arrow.Decimal;
      return d.precision <= MAX_DECIMAL_PRECISION
        ? decimal(d.precision, d.scale)
        : arrowUnsupported(t);
    }
    case arrow.Type.Struct:
      return structType(
        (t as arrow.Struct).children.map((f) =>
          structField(f.name, fromArrowType(f.type), f.nullable),
        ),
      );
    case arrow.Type.List:
    case arrow.Type.LargeList:
    case arrow.Type.FixedSizeList: {
      const child = t.children[0] as arrow.Field;
      return arrayType(fromArrowType(child.type), child.nullable);
    }
    case arrow.Type.Map: {
      const entries = (t as arrow.Map_).children[0].type as arrow.Struct;
      const [k, v] = entries.children;
      return mapType(fromArrowType(k.type), fromArrowType(v.type), v.nullable);
    }
    case arrow.Type.Dictionary:
      return fromArrowType((t as arrow.Dictionary).dictionary);
    default:
      return arrowUnsupported(t);
  }
}

export const fromArrowSchema = (s: arrow.Schema): StructType =>
  structType(s.fields.map((f) => structField(f.name, fromArrowType(f.type), f.nullable)));

/** Data of the given Arrow type and length in which every slot is null, at every level. */
export function nullData(type: arrow.DataType, length: number): arrow.Data {
  const nullBitmap = new Uint8Array((length + 7) >> 3);
  switch (type.typeId) {
    case arrow.Type.Null:
      return arrow.makeData({ type: type as arrow.Null, length });
    case arrow.Type.Struct:
      return arrow.makeData({
        type: type as arrow.Struct,
        length,
        nullCount: length,
        nullBitmap,
        children: (type as arrow.Struct).children.map((f) => nullData(f.type, length)),
      });
    case arrow.Type.List:
    case arrow.Type.Map:
      return new arrow.Data(
        type,
        0,
        length,
        length,
        [new Int32Array(length + 1), undefined, nullBitmap],
        [nullData(type.children[0].type, 0)],
      );
    case arrow.Type.LargeList:
      return new arrow.Data(
        type,
        0,
        length,
        length,
        [new BigInt64Array(length + 1), undefined, nullBitmap],
        [nullData(type.children[0].type, 0)],
      );
    case arrow.Type.FixedSizeList: {
      const size = (type as arrow.FixedSizeList).listSize;
      return new arrow.Data(
        type,
        0,
        length,
        length,
        [undefined, undefined, nullBitmap],
        [nullData(type.children[0].type, length * size)],
      );
    }
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      return new arrow.Data(type, 0, length, length, [
        new Int32Array(length + 1),
        new Uint8Array(0),
        nullBitmap,
      ]);
    case arrow.Type.LargeUtf8:
    case arrow.Type.LargeBinary:
      return new arrow.Data(type, 0, length, length, [
        new BigInt64Array(length + 1),
        new Uint8Array(0),
        nullBitmap,
      ]);
    case arrow.Type.Bool:
      return new arrow.Data(type, 0, length, length, [
        undefined,
        new Uint8Array((length + 7) >> 3),
        nullBitmap,
      ]);
    default: {
      const ArrayType = (type as arrow.DataType & { ArrayType: new (n: number) => ArrayBufferView })
        .ArrayType;
      return new arrow.Data(type, 0, length, length, [
        undefined,
        new ArrayType(length * strideOf(type)),
        nullBitmap,
      ]);
    }
  }
}

function strideOf(type: arrow.DataType): number {
  switch (type.typeId) {
    case arrow.Type.Decimal:
      return (type as arrow.Decimal).bitWidth / 32;
    case arrow.Type.FixedSizeBinary:
      return (type as arrow.FixedSizeBinary).byteWidth;
    case arrow.Type.Utf8View:
    case arrow.Type.BinaryView:
      return 16;
    case arrow.Type.Interval:
      return (type as arrow.Interval).unit === arrow.IntervalUnit.MONTH_DAY_NANO
        ? 4
        : 1 + (type as arrow.Interval).unit;
    default:
      return 1;
  }
}
