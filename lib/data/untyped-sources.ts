/**
 * Sources without types of their own (JSON rows, newline-delimited JSON, CSV) as Arrow tables,
 * typed the way a MERGE source or an ingested object is:
 *
 * 1. A column the caller declares (`columns`, Spark SQL type names) takes the declared type.
 * 2. Else a column named like a target column takes the target column's type (the DataFrame a
 *    caller merges usually has the target's schema).
 * 3. Else it is typed from its values: BIGINT for integers, DOUBLE for other numbers, BOOLEAN,
 *    else STRING. CSV fields are text, so CSV columns fall back to STRING.
 */
import type * as arrow from "apache-arrow";
import type { DataType, StructField, StructType } from "../delta/schema.ts";
import { parseSparkTypeName } from "../delta/type-name-parser.ts";
import { siltError } from "../errors.ts";
import { JsonDecimal } from "../values/exact-json.ts";
import { parseCsv } from "./csv.ts";
import { rowsToArrow } from "./json-to-arrow.ts";

export interface SourceColumn {
  name: string;
  /** Spark SQL type name, e.g. "INT", "DATE", "DECIMAL(10,2)". */
  type: string;
  nullable?: boolean;
}

export interface UntypedSource {
  fields: StructField[];
  table: arrow.Table;
}

export interface CsvOptions {
  columns?: SourceColumn[];
  /** Whether the first record names the columns (default true). */
  header?: boolean;
  /** One character (default ","). */
  delimiter?: string;
}

/** JSON rows: objects, or arrays in the order of `columns`. */
export function untypedRows(
  rows: unknown[],
  columns: SourceColumn[] | undefined,
  target: StructType,
): UntypedSource {
  let names: string[];
  if (columns !== undefined) {
    names = columns.map((c) => c.name);
  } else {
    const seen = new Map<string, string>();
    rows.forEach((row, i) => {
      if (row === null || typeof row !== "object" || Array.isArray(row)) {
        throw siltError("INVALID_REQUEST:SOURCE_ROW_NOT_OBJECT", { index: i });
      }
      for (const k of Object.keys(row))
        if (!seen.has(k.toLowerCase())) seen.set(k.toLowerCase(), k);
    });
    names = [...seen.values()];
  }
  const fields = declaredFields(names, columns, target, (name) => inferType(rows, name));
  return { fields, table: rowsToArrow(rows, { type: "struct", fields }, { tableName: "source" }) };
}

/** The JSON object on each non-blank line of `text`; `objectName` names it in errors. */
export function ndjsonRows(text: string, objectName: string): unknown[] {
  return text
    .split("\n")
    .map((line, i) => ({ line: line.trim(), i }))
    .filter((l) => l.line !== "")
    .map(({ line, i }) => {
      try {
        return JSON.parse(line) as unknown;
      } catch (err) {
        throw siltError("MALFORMED_RECORD_IN_PARSING:JSON_LINE", {
          ordinal: i + 1,
          json: objectName,
          message: (err as Error).message,
        });
      }
    });
}

/**
 * CSV text (`objectName` names it in errors); without a header, columns are named by `columns` or
 * `_c0`, `_c1`, …
 */
export function csvTable(
  text: string,
  objectName: string,
  opts: CsvOptions,
  target: StructType,
): UntypedSource {
  const { columns } = opts;
  const delimiter = opts.delimiter ?? ",";
  if (delimiter.length !== 1) {
    throw siltError("INVALID_REQUEST:FIELD_SOURCE_DELIMITER");
  }
  const records = parseCsv(text, delimiter, objectName);
  const names =
    (opts.header ?? true)
      ? (records.shift() ?? [])
      : (columns?.map((c) => c.name) ?? records[0]?.map((_, i) => `_c${i}`) ?? []);
  const fields = declaredFields(names, columns, target, () => "string");
  const rows = records.map((r) =>
    Object.fromEntries(fields.map((f, i) => [f.name, csvValue(r[i], f.type)])),
  );
  return { fields, table: rowsToArrow(rows, { type: "struct", fields }) };
}

function declaredFields(
  names: string[],
  columns: SourceColumn[] | undefined,
  target: StructType,
  infer: (name: string) => DataType,
): StructField[] {
  return names.map((name) => {
    const declared = columns?.find((c) => c.name === name);
    const targetField = target.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
    const type = declared
      ? parseSparkTypeName(declared.type)
      : targetField
        ? targetField.type
        : infer(name);
    return { name, type, nullable: declared?.nullable ?? true, metadata: {} };
  });
}

function inferType(rows: unknown[], name: string): DataType {
  let type: DataType | undefined;
  const lower = name.toLowerCase();
  for (const row of rows) {
    const entry = Object.entries(row as Record<string, unknown>).find(
      ([k]) => k.toLowerCase() === lower,
    );
    const v = entry?.[1];
    if (v === null || v === undefined) continue;
    let t: DataType;
    if (typeof v === "boolean") t = "boolean";
    else if (typeof v === "number") t = Number.isInteger(v) ? "long" : "double";
    // Numbers a double cannot hold (lib/values/exact-json.ts): integers past 2^53, more digits.
    else if (typeof v === "bigint") t = "long";
    else if (v instanceof JsonDecimal) t = "double";
    else if (typeof v === "string") t = "string";
    else {
      throw siltError("INVALID_REQUEST:SOURCE_COLUMN_NESTED", { name });
    }
    if (type === undefined || type === t) type = t;
    else if ((type === "long" && t === "double") || (type === "double" && t === "long"))
      type = "double";
    else type = "string";
  }
  return type ?? "string";
}

/**
 * A CSV field as the JSON value the column's type accepts; an empty field, quoted or not, is
 * NULL (Spark's default nullValue "", lib/data/csv.ts).
 */
function csvValue(text: string | undefined, type: DataType): unknown {
  if (text === undefined || text === "") return null;
  switch (type) {
    case "byte":
    case "short":
    case "integer":
    case "long":
    case "float":
    case "double": {
      const n = Number(text);
      if (Number.isNaN(n) && text.trim().toLowerCase() !== "nan") return text;
      if (type === "long" && !Number.isSafeInteger(n) && /^-?\d+$/.test(text.trim())) {
        return BigInt(text.trim());
      }
      return n;
    }
    case "boolean":
      return text.trim().toLowerCase() === "true"
        ? true
        : text.trim().toLowerCase() === "false"
          ? false
          : text;
    default:
      return text;
  }
}
