/**
 * The source of a MERGE given through the JSON route: rows in the request (JSON objects or
 * arrays, or an Arrow IPC stream in base64), a catalog table at a version or timestamp, or
 * objects already in the bucket (Parquet, CSV, newline-delimited JSON) under `ingest/`
 * (lib/ops/source-objects.ts reads those).
 *
 * 1. Typed sources (Arrow, Parquet, tables) keep their own column types.
 * 2. Untyped ones (JSON rows, CSV, NDJSON) take the types the request declares in `columns`, else
 *    the target's or their values' (lib/data/untyped-sources.ts).
 */
import type * as arrow from "apache-arrow";
import { splitNameParts } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { decodeArrowStream } from "../data/arrow-stream.ts";
import { type SourceColumn, untypedRows } from "../data/untyped-sources.ts";
import type { StructType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import type { MergeSource } from "../ops/merge-plan.ts";
import {
  plainSource,
  readSourceObject,
  type SourceObject,
  typedSource,
} from "../ops/source-objects.ts";
import { runQuery } from "../sql/query.ts";
import type { SqlSession } from "../sql/session.ts";
import {
  asObject,
  type Json,
  optionalBoolean,
  optionalInteger,
  optionalString,
  requiredString,
} from "./request.ts";

export type SourceSpec =
  | { rows: unknown[]; columns?: SourceColumn[] }
  | { arrow: string }
  | { table: string; version?: number; timestamp?: string }
  | SourceObject;

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
      table = decodeArrowStream(Buffer.from(spec.arrow, "base64"));
    } catch (err) {
      throw siltError("MALFORMED_REQUEST:SOURCE_ARROW", { message: (err as Error).message });
    }
    return { ...typedSource(table), qualifier };
  }
  if ("parquet" in spec) {
    const source = await readSourceObject(
      ctx,
      { parquet: requiredString(body, "parquet") },
      opts.target,
    );
    return { ...source, qualifier };
  }
  if ("rows" in spec) {
    if (!Array.isArray(spec.rows)) {
      throw siltError("INVALID_REQUEST:FIELD_SOURCE_ROWS");
    }
    return { ...plainSource(untypedRows(spec.rows, sourceColumns(body), opts.target)), qualifier };
  }
  if ("json" in spec) {
    const source = await readSourceObject(
      ctx,
      { json: spec.json, columns: sourceColumns(body) },
      opts.target,
    );
    return { ...source, qualifier };
  }
  if ("csv" in spec) {
    const object = {
      csv: spec.csv,
      columns: sourceColumns(body),
      header: optionalBoolean(body, "header"),
      delimiter: optionalString(body, "delimiter"),
    };
    return { ...(await readSourceObject(ctx, object, opts.target)), qualifier };
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
