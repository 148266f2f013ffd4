/**
 * Objects staged in the bucket (Parquet, CSV, newline-delimited JSON) read as a MERGE source or
 * as rows to ingest.
 *
 * 1. Keys are relative to the storage root and must lie under `ingest/`, the one prefix the merge
 *    and ingest functions may read besides the tables (a table's own files are read only through
 *    the table), with no empty, `.` or `..` segment (`ingest//x` names no catalog, and a store
 *    cannot hold it). An object in a table's ingest folder, `ingest/<catalog>/<schema>/<table>/…`,
 *    is data on its way into that table, so reading it takes SELECT on that table.
 * 2. Parquet keeps its own column types; CSV and NDJSON are typed as lib/data/untyped-sources.ts
 *    says (declared columns, then the target's, then their values).
 */
import type * as arrow from "apache-arrow";
import { authorizeTable } from "../auth/authorize.ts";
import type { SiltContext } from "../context.ts";
import { readParquet } from "../data/parquet.ts";
import {
  type CsvOptions,
  csvTable,
  ndjsonRows,
  type SourceColumn,
  type UntypedSource,
  untypedRows,
} from "../data/untyped-sources.ts";
import { fromArrowSchema, type StructField, type StructType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { ObjectNotFoundError } from "../storage/object-store.ts";
import { toTableRows } from "./input-rows.ts";
import type { MergeSource } from "./merge-plan.ts";

/** Where callers stage source objects. */
export const INGEST_PREFIX = "ingest/";

export type SourceObject =
  | { parquet: string }
  | ({ csv: string } & CsvOptions)
  | { json: string; columns?: SourceColumn[] };

export async function readSourceObject(
  ctx: SiltContext,
  spec: SourceObject,
  target: StructType,
): Promise<MergeSource> {
  if ("parquet" in spec)
    return typedSource(await readParquet(await ingestObject(ctx, spec.parquet)));
  if ("csv" in spec)
    return plainSource(csvTable(await ingestText(ctx, spec.csv), spec.csv, spec, target));
  const rows = ndjsonRows(await ingestText(ctx, spec.json), spec.json);
  return plainSource(untypedRows(rows, spec.columns, target));
}

/** An Arrow table keeps its column types, conformed to the Delta types they map to. */
export function typedSource(table: arrow.Table): MergeSource {
  const schema = fromArrowSchema(table.schema);
  const conformed = toTableRows({ arrow: table }, schema, "source");
  return { fields: schema.fields.map(plain), table: conformed };
}

export const plainSource = (source: UntypedSource): MergeSource => ({
  fields: source.fields.map(plain),
  table: source.table,
});

const plain = (f: StructField) => ({ name: f.name, type: f.type, nullable: f.nullable });

const ingestText = async (ctx: SiltContext, key: string) =>
  new TextDecoder().decode(await ingestObject(ctx, key));

/** Step 1: the bytes of an object staged under ingest/. */
async function ingestObject(ctx: SiltContext, key: string): Promise<Uint8Array> {
  if (
    typeof key !== "string" ||
    !key.startsWith(INGEST_PREFIX) ||
    key
      .slice(INGEST_PREFIX.length)
      .split("/")
      .some((part) => part === "" || part === "." || part === "..")
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
