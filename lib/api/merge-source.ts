/**
 * The source of a MERGE given through the JSON route: rows in the request (JSON objects or
 * arrays, or an Arrow IPC stream in base64), a catalog table at a version or timestamp, or
 * objects already in the bucket (Parquet, CSV, newline-delimited JSON) under `ingest/`.
 *
 * 1. Typed sources (Arrow, Parquet, tables) keep their own column types.
 * 2. Untyped ones (JSON rows, CSV, NDJSON) take the types the request declares in `columns`;
 *    without them a column named like a target column takes the target column's type (the
 *    DataFrame a caller merges usually has the target's schema), and any other column is typed
 *    from its values: BIGINT for integers, DOUBLE for other numbers, BOOLEAN, else STRING.
 * 3. Object keys are relative to the storage root and must lie under `ingest/`, the one prefix
 *    the merge function may read besides the tables (a table's own files are read only through
 *    the table). An object in a table's ingest folder, `ingest/<catalog>/<schema>/<table>/…`, is
 *    data on its way into that table, so reading it takes SELECT on that table.
 */
import * as arrow from "apache-arrow";
import { authorizeTable } from "../auth/authorize.ts";
import { splitNameParts } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { parseCsv } from "../data/csv.ts";
import { rowsToArrow } from "../data/json-to-arrow.ts";
import { readParquet } from "../data/parquet.ts";
import {
  type DataType,
  fromArrowSchema,
  type StructField,
  type StructType,
} from "../delta/schema.ts";
import { parseSparkTypeName } from "../delta/type-name-parser.ts";
import { siltError } from "../errors.ts";
import { toTableRows } from "../ops/input-rows.ts";
import type { MergeSource } from "../ops/merge-plan.ts";
import { runQuery } from "../sql/query.ts";
import type { SqlSession } from "../sql/session.ts";
import { ObjectNotFoundError } from "../storage/object-store.ts";
import {
  asObject,
  type Json,
  optionalBoolean,
  optionalInteger,
  optionalString,
  requiredString,
} from "./request.ts";

/** Where callers stage source objects for a merge. */
export const INGEST_PREFIX = "ingest/";

export interface SourceColumn {
  name: string;
  /** Spark SQL type name, e.g. "INT", "DATE", "DECIMAL(10,2)". */
  type: string;
  nullable?: boolean;
}

export type SourceSpec =
  | { rows: unknown[]; columns?: SourceColumn[] }
  | { arrow: string }
  | { table: string; version?: number; timestamp?: string }
  | { parquet: string }
  | { csv: string; columns?: SourceColumn[]; header?: boolean; delimiter?: string }
  | { json: string; columns?: SourceColumn[] };

export async function loadMergeSource(
  ctx: SiltContext,
  spec: SourceSpec,
  opts: { alias: string; target: StructType; session: SqlSession },
): Promise<MergeSource> {
  const qualifier = [opts.alias];
  const body = spec as unknown as Json;
  if ("table" in spec) {
    const version = optionalInteger(body, "version");
    const timestamp = optionalString(body, "timestamp");
    const relation = await runQuery(
      ctx,
      {
        kind: "select",
        distinct: false,
        items: [{ expr: { kind: "star", pos: POS } }],
        from: {
          kind: "table",
          name: splitNameParts(requiredString(body, "table")),
          timeTravel:
            version !== undefined
              ? { version }
              : timestamp !== undefined
                ? { timestamp: { kind: "literal", value: timestamp, type: "string", pos: POS } }
                : undefined,
          pos: POS,
        },
        groupBy: [],
        orderBy: [],
        pos: POS,
      },
      opts.session,
    );
    return { fields: relation.fields, table: relation.table, qualifier };
  }
  if ("arrow" in spec) {
    let table: arrow.Table;
    try {
      table = arrow.tableFromIPC(Buffer.from(spec.arrow, "base64"));
    } catch (err) {
      throw siltError("MALFORMED_REQUEST:SOURCE_ARROW", { message: (err as Error).message });
    }
    return typed(table, qualifier);
  }
  if ("parquet" in spec) {
    return typed(
      await readParquet(await ingestObject(ctx, requiredString(body, "parquet"))),
      qualifier,
    );
  }
  if ("rows" in spec) {
    if (!Array.isArray(spec.rows)) {
      throw siltError("INVALID_REQUEST:FIELD_SOURCE_ROWS");
    }
    return untyped(spec.rows, sourceColumns(body), opts.target, qualifier);
  }
  if ("json" in spec) {
    const text = new TextDecoder().decode(await ingestObject(ctx, spec.json));
    const rows = text
      .split("\n")
      .map((line, i) => ({ line: line.trim(), i }))
      .filter((l) => l.line !== "")
      .map(({ line, i }) => {
        try {
          return JSON.parse(line) as unknown;
        } catch (err) {
          throw siltError("MALFORMED_RECORD_IN_PARSING:JSON_LINE", {
            ordinal: i + 1,
            json: spec.json,
            message: (err as Error).message,
          });
        }
      });
    return untyped(rows, sourceColumns(body), opts.target, qualifier);
  }
  if ("csv" in spec) {
    const columns = sourceColumns(body);
    const text = new TextDecoder().decode(await ingestObject(ctx, spec.csv));
    const delimiter = optionalString(body, "delimiter") ?? ",";
    if (delimiter.length !== 1) {
      throw siltError("INVALID_REQUEST:FIELD_SOURCE_DELIMITER");
    }
    const records = parseCsv(text, delimiter, spec.csv);
    const header = optionalBoolean(body, "header") ?? true;
    const names = header
      ? (records.shift() ?? [])
      : (columns?.map((c) => c.name) ?? records[0]?.map((_, i) => `_c${i}`) ?? []);
    const fields = declaredFields(names, columns, opts.target, () => "string");
    const rows = records.map((r) =>
      Object.fromEntries(fields.map((f, i) => [f.name, csvValue(r[i], f.type)])),
    );
    return {
      fields: fields.map(plain),
      table: rowsToArrow(rows, { type: "struct", fields }),
      qualifier,
    };
  }
  throw siltError("INVALID_REQUEST:SOURCE_KIND");
}

const POS = { line: 0, column: 0 };

/** `columns`: [{name, type, nullable?}], type a Spark SQL type name. */
function sourceColumns(body: Json): SourceColumn[] | undefined {
  const v = body.columns;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    throw siltError("INVALID_REQUEST:FIELD_SOURCE_COLUMNS");
  }
  return v.map((raw, i) => {
    const c = asObject(raw, `source column ${i + 1}`);
    return {
      name: requiredString(c, "name"),
      type: requiredString(c, "type"),
      nullable: optionalBoolean(c, "nullable"),
    };
  });
}

const plain = (f: StructField) => ({ name: f.name, type: f.type, nullable: f.nullable });

function typed(table: arrow.Table, qualifier: string[]): MergeSource {
  const schema = fromArrowSchema(table.schema);
  const conformed = toTableRows({ arrow: table }, schema, "source");
  return { fields: schema.fields.map(plain), table: conformed, qualifier };
}

function untyped(
  rows: unknown[],
  columns: SourceColumn[] | undefined,
  target: StructType,
  qualifier: string[],
): MergeSource {
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
  return {
    fields: fields.map(plain),
    table: rowsToArrow(rows, { type: "struct", fields }, { tableName: "source" }),
    qualifier,
  };
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

/** The bytes of an object staged under ingest/. */
async function ingestObject(ctx: SiltContext, key: string): Promise<Uint8Array> {
  if (
    typeof key !== "string" ||
    !key.startsWith(INGEST_PREFIX) ||
    key.split("/").some((part) => part === ".." || part === ".")
  ) {
    throw siltError("INVALID_REQUEST:SOURCE_OBJECT_KEY", { key: JSON.stringify(key) });
  }
  const [catalog, schema, table, ...file] = key.slice(INGEST_PREFIX.length).split("/");
  if (file.length > 0 && ctx.enforcePrivileges) {
    await authorizeTable(ctx, { catalog, schema, table }, "read");
  }
  try {
    return await ctx.store.get(key);
  } catch (err) {
    if (err instanceof ObjectNotFoundError) {
      throw siltError("PATH_NOT_FOUND", { key });
    }
    throw err;
  }
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
