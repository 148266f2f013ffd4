/**
 * CREATE TABLE … AS SELECT, CREATE OR REPLACE TABLE [AS SELECT] and REPLACE TABLE [AS SELECT] on
 * catalog-managed tables (seed 000).
 *
 * 1. Refuse a format other than Delta. CREATE on a taken name stops here (IF NOT EXISTS quietly,
 *    before any query runs); REPLACE of a missing table fails; CREATE OR REPLACE of a missing
 *    table, and CTAS, create it through create-table.ts with the rows in version 0.
 * 2. Replacing, which takes ownership of the table or of its schema or catalog: open the latest
 *    snapshot L first, then produce the new rows (a query may read the very table it replaces;
 *    a commit landing in between fails ours as a conflict).
 * 3. Build the new definition and check it keeps the table's identity, before anything is
 *    written: the same id and location; the catalog's requirements (catalogManaged, deletion
 *    vectors, v2 checkpoints, in-commit timestamps) checked exactly as on CREATE; the column
 *    mapping mode not dropped. Other properties are replaced by the statement's.
 * 4. Assign fresh column-mapping ids and physical names above L's high-water mark (old files
 *    keep theirs, so earlier versions still read with their old schema), keep L's row-tracking
 *    column names and high-water mark, and keep every feature L's protocol lists.
 * 5. Commit once: the new metaData (and protocol, if it grew), a remove for every live file, the
 *    new files. Operation `CREATE OR REPLACE TABLE [AS SELECT]` or `REPLACE TABLE [AS SELECT]`
 *    with Spark's parameters; the read set is the whole table.
 */
import { authorizeCreateTable, findTable } from "../auth/authorize.ts";
import { tableAlreadyExists, tableNotFound } from "../catalog/catalog-store.ts";
import { resolveName, type TableRef } from "../catalog/names.ts";
import { replaceTableOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import type { Action, Metadata } from "../delta/actions.ts";
import {
  assignColumnMapping,
  COLUMN_MAPPING_MAX_ID_KEY,
  columnMappingMode,
  configuredMaxColumnId,
  maxColumnIdInSchema,
} from "../delta/column-mapping.ts";
import { serializeSchema } from "../delta/schema.ts";
import { newTableProfile } from "../delta/table-profile.ts";
import { siltError } from "../errors.ts";
import { commit } from "./commit.ts";
import {
  assertDeltaFormat,
  buildSchema,
  type ColumnSpec,
  createTable,
  resolvePartitionColumns,
} from "./create-table.ts";
import { type InputRows, toTableRows } from "./input-rows.ts";
import { displayName, openTable } from "./open-table.ts";
import { removeOf } from "./row-deletes.ts";
import { bytesOf, protocolUnion, sameProtocol } from "./write-commit.ts";
import { writeDataFiles } from "./write-files.ts";
import { checkWriteProtocol, rowTrackingHighWaterMark } from "./write-protocol.ts";

export type CreationMode = "create" | "createOrReplace" | "replace";

/** The rows of the new definition, and their columns when they define the table. */
export interface TableSource {
  columns?: ColumnSpec[];
  rows: InputRows;
}

export interface ReplaceTableRequest {
  name: TableRef;
  defaults?: { catalog?: string; schema?: string };
  mode: CreationMode;
  /** CREATE only: an existing table is left as it is. */
  ifNotExists?: boolean;
  /** The new columns; default the source's. */
  columns?: ColumnSpec[];
  partitionedBy?: string[];
  properties?: Record<string, string>;
  using?: string;
  comment?: string;
  /**
   * Produces the rows (AS SELECT, or JSON rows). Called after the table is opened, so a query
   * over the table being replaced reads the version the replacement builds on.
   */
  source?: () => Promise<TableSource>;
}

export interface ReplaceTableResult {
  /** False for CREATE … IF NOT EXISTS on an existing table. */
  created: boolean;
  replaced: boolean;
  tableId: string;
  version: number;
  operation: string;
  metrics: Record<string, string>;
}

const RESERVED_KEYS = [
  "delta.rowTracking.materializedRowIdColumnName",
  "delta.rowTracking.materializedRowCommitVersionColumnName",
];

export async function createOrReplaceTable(
  ctx: SiltContext,
  req: ReplaceTableRequest,
): Promise<ReplaceTableResult> {
  const qn = resolveName(req.name, req.defaults);
  const tableName = displayName(qn);
  if (req.using !== undefined) assertDeltaFormat(tableName, req.using);
  const asSelect = req.source !== undefined;
  const operation = operationName(req.mode, asSelect);
  const existing = await findTable(ctx, qn);

  if (existing !== undefined && req.mode === "create") {
    if (req.ifNotExists) {
      return {
        created: false,
        replaced: false,
        tableId: existing.tableId,
        version: -1,
        operation,
        metrics: {},
      };
    }
    throw tableAlreadyExists(qn.catalog, qn.schema, qn.table);
  }
  if (existing === undefined) {
    if (req.mode === "replace") throw tableNotFound(qn.catalog, qn.schema, qn.table);
    // Before the query runs; createTable checks again when it reserves the name.
    await authorizeCreateTable(ctx, qn.catalog, qn.schema);
    const source = req.source ? await req.source() : undefined;
    const columns = definitionColumns(req, source);
    const data = source ? toTableRows(source.rows, buildSchema(columns), tableName) : undefined;
    const created = await createTable(ctx, {
      name: req.name,
      defaults: req.defaults,
      columns,
      partitionedBy: req.partitionedBy,
      properties: req.properties,
      ifNotExists: false,
      using: req.using,
      comment: req.comment,
      data,
      operation,
    });
    return {
      created: created.created,
      replaced: false,
      tableId: created.tableId,
      version: created.version,
      operation,
      metrics: {},
    };
  }

  // Step 2.
  const t = await openTable(ctx, req.name, { defaults: req.defaults, access: "own" });
  const old = t.snapshot;
  checkWriteProtocol(old.protocol, old.metadata);
  const source = req.source ? await req.source() : undefined;

  // Step 3.
  const columns = definitionColumns(req, source);
  const schema = buildSchema(columns);
  const partitionColumns = resolvePartitionColumns(schema, req.partitionedBy ?? []);
  const profile = newTableProfile(tableName, t.entry.tableId, req.properties ?? {}, {
    usesTimestampNtz: serializeSchema(schema).includes(`"timestamp_ntz"`),
    verb: "replace",
  });
  const oldMode = columnMappingMode(old.metadata.configuration);
  const newMode = columnMappingMode(profile.configuration);
  if (oldMode !== newMode && !(oldMode === "none" && newMode === "name")) {
    throw siltError("DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE", { oldMode, newMode });
  }
  const data = source ? toTableRows(source.rows, schema, tableName) : undefined;

  // Step 4.
  const configuration = profile.configuration;
  for (const key of RESERVED_KEYS) {
    const kept = old.metadata.configuration[key];
    if (kept !== undefined) configuration[key] = kept;
  }
  let tableSchema = schema;
  if (profile.columnMapping) {
    const start = Math.max(
      configuredMaxColumnId(old.metadata.configuration),
      maxColumnIdInSchema(t.schema),
    );
    const mapped = assignColumnMapping(schema, start);
    tableSchema = mapped.schema;
    configuration[COLUMN_MAPPING_MAX_ID_KEY] = String(mapped.maxColumnId);
  }
  const now = ctx.clock();
  const metadata: Metadata = {
    id: old.metadata.id,
    name: qn.table,
    description: req.comment ?? null,
    format: { provider: "parquet", options: {} },
    schemaString: serializeSchema(tableSchema),
    partitionColumns,
    configuration,
    createdTime: now,
  };
  const protocol = protocolUnion(old.protocol, profile.protocol);
  const rowTracking = checkWriteProtocol(protocol, metadata);
  const hwm = rowTracking ? rowTrackingHighWaterMark(old) : undefined;

  // Step 5.
  const actions: Action[] = [{ metaData: metadata }];
  if (!sameProtocol(protocol, old.protocol)) actions.push({ protocol });
  actions.push(...old.files.map((f) => ({ remove: removeOf(f, now) })));
  const metrics: Record<string, string> = {};
  if (data !== undefined) {
    const written = await writeDataFiles(ctx, {
      tableRoot: t.entry.location,
      metadata,
      data,
      version: old.version + 1,
      rowIdHighWaterMark: hwm,
    });
    actions.push(...written.actions);
    Object.assign(metrics, written.metrics, {
      numRemovedFiles: String(old.files.length),
      numRemovedBytes: String(bytesOf(old.files)),
    });
  }
  const result = await commit(
    ctx,
    t,
    replaceTableOperation(
      operation,
      { partitionColumns, description: req.comment ?? null, configuration },
      metrics,
    ),
    actions,
    // Row ids follow the new definition's protocol and properties; isolation the old table's.
    { rowTracking },
  );
  return {
    created: false,
    replaced: true,
    tableId: t.entry.tableId,
    version: result.version,
    operation,
    metrics,
  };
}

function operationName(mode: CreationMode, asSelect: boolean): string {
  const base =
    mode === "create"
      ? "CREATE TABLE"
      : mode === "createOrReplace"
        ? "CREATE OR REPLACE TABLE"
        : "REPLACE TABLE";
  return asSelect ? `${base} AS SELECT` : base;
}

function definitionColumns(req: ReplaceTableRequest, source: TableSource | undefined) {
  const columns = req.columns ?? source?.columns;
  if (columns === undefined) {
    throw siltError("DELTA_SCHEMA_NOT_PROVIDED");
  }
  return columns;
}
