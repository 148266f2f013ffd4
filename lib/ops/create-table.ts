/**
 * CREATE TABLE for a catalog-managed Delta table (seeds/002, seeds/000).
 *
 * 1. Validate everything that can be checked without side effects: the name, the format (DELTA
 *    only), the columns and their types, the partition columns, and the TBLPROPERTIES against the
 *    catalog's requirements.
 * 2. Reserve the name in the catalog (state CREATING) and receive a fresh table id and location.
 *    IF NOT EXISTS on a taken name stops here and changes nothing.
 * 3. Assign column-mapping ids and physical names, build protocol + metaData (+ the row-tracking
 *    high-water mark when rows come with the create, as CTAS will).
 * 4. Commit version 0 through the arbiter like any other commit.
 * 5. Activate the catalog entry. On any failure before that, drop the reservation so the name is
 *    free again; the staged files it leaves are unreachable and VACUUM's concern.
 */
import type * as arrow from "apache-arrow";
import { authorizeCreateTable } from "../auth/authorize.ts";
import type { TableEntry } from "../catalog/catalog-store.ts";
import { resolveName, type TableRef } from "../catalog/names.ts";
import { createTableOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import type { Action, Metadata } from "../delta/actions.ts";
import { assignColumnMapping, COLUMN_MAPPING_MAX_ID_KEY } from "../delta/column-mapping.ts";
import {
  assertSupportedTypes,
  checkDuplicateColumns,
  type DataType,
  isArray,
  isMap,
  isStruct,
  type StructField,
  type StructType,
  serializeSchema,
} from "../delta/schema.ts";
import { newTableProfile } from "../delta/table-profile.ts";
import { parseSparkTypeName } from "../delta/type-name-parser.ts";
import { SiltError, siltError } from "../errors.ts";
import { commitNewTable } from "./commit.ts";
import { displayName } from "./open-table.ts";
import { writeDataFiles } from "./write-files.ts";

export interface ColumnSpec {
  name: string;
  /** Spark SQL type name ("INT", "DECIMAL(10,2)", "ARRAY<STRING>") or a parsed Delta type. */
  type: string | DataType;
  nullable?: boolean;
  comment?: string;
}

export interface CreateTableRequest {
  name: TableRef;
  defaults?: { catalog?: string; schema?: string };
  columns: ColumnSpec[];
  partitionedBy?: string[];
  properties?: Record<string, string>;
  ifNotExists?: boolean;
  /** Table format; managed tables must be DELTA. */
  using?: string;
  comment?: string;
  /** Rows to write in version 0 (CTAS), already in the logical schema. */
  data?: arrow.Table;
  /** Overrides the commit's operation name (CTAS). */
  operation?: string;
}

export interface CreateTableResult {
  created: boolean;
  tableId: string;
  version: number;
}

export async function createTable(
  ctx: SiltContext,
  req: CreateTableRequest,
): Promise<CreateTableResult> {
  const qn = resolveName(req.name, req.defaults);
  const tableName = displayName(qn);
  // The typed route has no session default format to fall back to, so an absent format is Delta.
  if (req.using !== undefined) assertDeltaFormat(tableName, req.using);
  const schema = buildSchema(req.columns);
  const partitionColumns = resolvePartitionColumns(schema, req.partitionedBy ?? []);
  const properties = req.properties ?? {};
  const usesTimestampNtz = serializeSchema(schema).includes(`"timestamp_ntz"`);
  // Validation pass before anything is written; the id is only known after the reservation.
  newTableProfile(tableName, "", properties, { usesTimestampNtz });

  await authorizeCreateTable(ctx, qn.catalog, qn.schema);
  let entry: TableEntry;
  try {
    entry = await ctx.catalog.beginCreateTable(qn.catalog, qn.schema, qn.table, {
      owner: ctx.principal,
    });
  } catch (err) {
    if (
      req.ifNotExists &&
      err instanceof SiltError &&
      err.errorClass === "TABLE_OR_VIEW_ALREADY_EXISTS"
    ) {
      const existing = await ctx.catalog.getTable(qn.catalog, qn.schema, qn.table);
      return { created: false, tableId: existing.tableId, version: -1 };
    }
    throw err;
  }

  try {
    const profile = newTableProfile(tableName, entry.tableId, properties, { usesTimestampNtz });
    let tableSchema = schema;
    const configuration = profile.configuration;
    if (profile.columnMapping) {
      const mapped = assignColumnMapping(schema, 0);
      tableSchema = mapped.schema;
      configuration[COLUMN_MAPPING_MAX_ID_KEY] = String(mapped.maxColumnId);
    }
    const now = ctx.clock();
    const metadata: Metadata = {
      id: entry.tableId,
      name: qn.table,
      description: req.comment ?? null,
      format: { provider: "parquet", options: {} },
      schemaString: serializeSchema(tableSchema),
      partitionColumns,
      configuration,
      createdTime: now,
    };
    const actions: Action[] = [{ metaData: metadata }, { protocol: profile.protocol }];
    const metrics: Record<string, string> = {};
    if (req.data !== undefined) {
      const written = await writeDataFiles(ctx, {
        tableRoot: entry.location,
        metadata,
        data: req.data,
        version: 0,
        // Row ids only where the table tracks rows; otherwise files carry no baseRowId.
        rowIdHighWaterMark: profile.rowTracking ? -1 : undefined,
      });
      actions.push(...written.actions);
      Object.assign(metrics, written.metrics);
    }
    const result = await commitNewTable(
      ctx,
      { name: qn, entry },
      createTableOperation(
        req.operation ?? "CREATE TABLE",
        { partitionColumns, description: req.comment ?? null, configuration },
        metrics,
        { asSelect: req.data !== undefined },
      ),
      actions,
      { rowTracking: profile.rowTracking },
    );
    await ctx.catalog.activateTable(entry);
    return { created: true, tableId: entry.tableId, version: result.version };
  } catch (err) {
    await ctx.catalog.abortCreateTable(entry).catch(() => false);
    throw err;
  }
}

/** Managed tables are Delta tables (seed 000): Unity Catalog refuses any other format. */
export function assertDeltaFormat(tableName: string, using: string | undefined): void {
  if (using === undefined || using.toLowerCase() !== "delta") {
    throw siltError("INVALID_PARAMETER_VALUE:NON_DELTA_SQL", { tableName });
  }
}

/** Columns -> Delta schema, rejecting empty, duplicate and unsupported definitions. */
export function buildSchema(columns: ColumnSpec[]): StructType {
  if (!Array.isArray(columns) || columns.length === 0) {
    throw siltError("DELTA_EMPTY_SCHEMA");
  }
  const fields: StructField[] = columns.map((c, i) => {
    if (typeof c?.name !== "string" || c.name.trim() === "") {
      throw siltError("INVALID_COLUMN_NAME:EMPTY", { ordinal: i + 1 });
    }
    if (/\p{Cc}/u.test(c.name)) {
      throw siltError("INVALID_COLUMN_NAME:CONTROL_CHARACTER", { name: c.name });
    }
    const type = typeof c.type === "string" ? parseSparkTypeName(c.type) : c.type;
    const metadata: Record<string, unknown> = {};
    if (c.comment !== undefined) metadata.comment = c.comment;
    return { name: c.name, type, nullable: c.nullable ?? true, metadata };
  });
  const schema: StructType = { type: "struct", fields };
  checkDuplicateColumns(schema);
  assertSupportedTypes(schema);
  return schema;
}

/** Partition columns as the schema spells them; primitive types only, not every column. */
export function resolvePartitionColumns(schema: StructType, requested: string[]): string[] {
  const out: string[] = [];
  for (const name of requested) {
    const field = schema.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
    if (field === undefined) {
      throw siltError("DELTA_PARTITION_COLUMN_NOT_FOUND", {
        name,
        fields: schema.fields.map((f) => f.name).join(", "),
      });
    }
    if (out.includes(field.name)) {
      throw siltError("COLUMN_ALREADY_EXISTS:PARTITIONED_BY_TWICE", { name: field.name });
    }
    if (isStruct(field.type) || isArray(field.type) || isMap(field.type)) {
      throw siltError("DELTA_INVALID_PARTITION_COLUMN_TYPE", {
        name: field.name,
        type: typeof field.type === "object" ? field.type.type.toUpperCase() : field.type,
      });
    }
    out.push(field.name);
  }
  if (out.length > 0 && out.length === schema.fields.length) {
    throw siltError("DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION");
  }
  return out;
}
