/**
 * Reads the rows of a snapshot as Arrow, the way every Delta reader must:
 *
 * 1. Resolve the requested columns against the logical schema (unknown names fail, unsupported
 *    types fail naming the type, never decode to wrong values).
 * 2. Per live file (a few at a time): read only the needed physical columns, map them back to
 *    logical names (column mapping by physical name or field id; missing columns read as null),
 *    bring each to the schema's Arrow type, drop the rows its deletion vector marks, and add the
 *    partition columns as constants from the log's partition values.
 * 3. Concatenate in file order and stop reading once `limit` rows are in hand.
 */
import * as arrow from "apache-arrow";
import { conformData } from "../data/cast.ts";
import { combineChunks, concatTables, constantColumn, filterTable } from "../data/kernels.ts";
import { type ParquetFooter, readParquet, readParquetFooter } from "../data/parquet.ts";
import { decodeAddPath, parsePartitionValue } from "../data/partition-values.ts";
import type { Deadline } from "../deadline.ts";
import type { AddFile } from "../delta/actions.ts";
import { alignToLogical, columnMappingMode, physicalName } from "../delta/column-mapping.ts";
import { deletedRowMask, loadDeletionVector } from "../delta/deletion-vectors.ts";
import {
  type MaterializedColumns,
  materializedColumns,
  type RowIdentities,
  rowIdentities,
} from "../delta/row-tracking.ts";
import {
  assertSupportedTypes,
  parseSchema,
  type StructField,
  type StructType,
  toArrowType,
} from "../delta/schema.ts";
import type { Snapshot } from "../delta/snapshot.ts";
import { SiltError, siltError } from "../errors.ts";
import { ObjectNotFoundError, type ObjectStore } from "../storage/object-store.ts";

export interface ReadOptions {
  /** Logical column names, in the order wanted; default every column. */
  columns?: string[];
  limit?: number;
  /** Files decoded at once; bounded so memory stays flat on big tables. */
  concurrency?: number;
  /**
   * Row groups of a file worth decoding (by their footer statistics); all when absent or when
   * it answers undefined.
   */
  rowGroupFilter?: (footer: ParquetFooter, file: AddFile) => number[] | undefined;
  /** The statement's time budget, checked before each file is fetched. */
  deadline?: Deadline;
}

export interface ReadResult {
  schema: StructType;
  table: arrow.Table;
  /** What the read touched: files fetched, row groups decoded and skipped by statistics. */
  metrics: ScanMetrics;
}

export interface ScanMetrics {
  filesRead: number;
  rowGroupsRead: number;
  rowGroupsSkipped: number;
}

export async function readSnapshotRows(
  store: ObjectStore,
  snapshot: Snapshot,
  opts: ReadOptions = {},
): Promise<ReadResult> {
  const read = openSnapshotRead(store, snapshot, opts);
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  const parts: arrow.Table[] = [];
  let rows = 0;
  if (limit > 0) {
    for await (const { table } of read.parts) {
      parts.push(table);
      rows += table.numRows;
      if (rows >= limit) break;
    }
  }
  let table = concatTables(parts, read.arrowSchema);
  if (table.numRows > limit) table = table.slice(0, limit);
  return { schema: read.schema, table, metrics: read.metrics };
}

/** A read under way: its columns, and its rows file by file as the caller pulls them. */
export interface SnapshotRead {
  schema: StructType;
  arrowSchema: arrow.Schema;
  metrics: ScanMetrics;
  /** One part per file in `snapshot.files` order, decoded `concurrency` files at a time. */
  parts: AsyncGenerator<{ file: AddFile; table: arrow.Table }>;
}

/**
 * Steps 1 and 2 of the module comment: the columns are resolved at once (bad names fail here),
 * the files are read only as `parts` is pulled, so a caller that streams or pages its answer
 * holds a few files at a time. `opts.limit` is the caller's to apply.
 */
export function openSnapshotRead(
  store: ObjectStore,
  snapshot: Snapshot,
  opts: Omit<ReadOptions, "limit"> = {},
): SnapshotRead {
  const tableSchema = tableSchemaOf(snapshot);
  const fields = projectFields(tableSchema, opts.columns);
  const schema: StructType = { type: "struct", fields };
  assertSupportedTypes(schema);
  const arrowSchema = new arrow.Schema(
    fields.map((f) => new arrow.Field(f.name, toArrowType(f.type), f.nullable)),
  );
  const metrics: ScanMetrics = { filesRead: 0, rowGroupsRead: 0, rowGroupsSkipped: 0 };
  const reader = new FileReader(store, snapshot, fields, arrowSchema, metrics, opts);
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  async function* parts() {
    for (let i = 0; i < snapshot.files.length; i += concurrency) {
      const batch = snapshot.files.slice(i, i + concurrency);
      const tables = await Promise.all(batch.map((f) => reader.read(f)));
      for (const [k, table] of tables.entries()) yield { file: batch[k], table };
    }
  }
  return { schema, arrowSchema, metrics, parts: parts() };
}

/**
 * The snapshot's schema. Delta lets a metaData action omit `schemaString` (log-only tables written
 * by tests and tools); Spark reads that as an empty schema and refuses to query it, and so does
 * this reader, rather than reporting a JSON parse failure.
 */
function tableSchemaOf(snapshot: Snapshot): StructType {
  const text = snapshot.metadata.schemaString as string | null | undefined;
  const schema = typeof text === "string" && text.trim() !== "" ? parseSchema(text) : undefined;
  if (schema === undefined || schema.fields.length === 0) {
    throw siltError("DELTA_SCHEMA_NOT_SET", { version: snapshot.version });
  }
  return schema;
}

function projectFields(schema: StructType, columns: string[] | undefined): StructField[] {
  if (columns === undefined) return schema.fields;
  return columns.map((name) => {
    const field = schema.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
    if (field === undefined) {
      throw siltError("UNRESOLVED_COLUMN.WITH_SUGGESTION:QUOTED_NAME", {
        name,
        fields: schema.fields.map((f) => `\`${f.name}\``).join(", "),
      });
    }
    return field;
  });
}

class FileReader {
  private readonly mode;
  private readonly partitionColumns: Set<string>;
  private readonly dataFields: StructField[];
  private readonly readsAllDataColumns: boolean;

  constructor(
    private readonly store: ObjectStore,
    private readonly snapshot: Snapshot,
    private readonly fields: StructField[],
    private readonly arrowSchema: arrow.Schema,
    private readonly metrics: ScanMetrics,
    private readonly opts: Pick<ReadOptions, "rowGroupFilter" | "deadline"> = {},
    /** Also decode the row-tracking columns, for writers that keep rows' identities. */
    private readonly hidden?: MaterializedColumns,
  ) {
    this.mode = columnMappingMode(snapshot.metadata.configuration);
    this.partitionColumns = new Set(snapshot.metadata.partitionColumns);
    this.dataFields = fields.filter((f) => !this.partitionColumns.has(f.name));
    const allData = tableSchemaOf(snapshot).fields.length - this.partitionColumns.size;
    this.readsAllDataColumns = this.dataFields.length === allData;
  }

  async read(file: AddFile): Promise<arrow.Table> {
    const physical = await this.readPhysical(file);
    if (physical === undefined) return new arrow.Table(this.arrowSchema);
    let { table, numRows } = physical;
    if (physical.deleted) {
      const keep = physical.deleted.map((d) => d ^ 1);
      numRows = keep.reduce((n, k) => n + k, 0);
      table = filterTable(table, keep);
    }
    // Batch by batch: joining the decoder's batches first would copy every column once more.
    if (this.dataFields.length === 0) return this.assemble(new arrow.Table(), numRows, file);
    const batches = table.batches.flatMap(
      (b) => this.assemble(new arrow.Table(table.schema, [b]), b.numRows, file).batches,
    );
    return new arrow.Table(this.arrowSchema, batches);
  }

  /**
   * The file's rows in physical order (only the row groups the filter keeps), with the rows its
   * deletion vector marks still present and flagged in `deleted`; undefined when no row group
   * can match.
   */
  async readPhysical(
    file: AddFile,
  ): Promise<
    | { table: arrow.Table; numRows: number; deleted?: Uint8Array; identities?: RowIdentities }
    | undefined
  > {
    this.opts.deadline?.check();
    const key = fileKey(this.snapshot.tableRoot, file.path);
    let bytes: Uint8Array;
    try {
      bytes = await this.store.get(key);
    } catch (e) {
      if (!(e instanceof ObjectNotFoundError)) throw e;
      // An old version's files are VACUUM's to delete once removed: the request asked for
      // what retention no longer keeps (Spark: FAILED_READ_FILE.FILE_NOT_EXIST).
      if (this.snapshot.historical) {
        throw siltError("FAILED_READ_FILE.FILE_NOT_EXIST", {
          path: file.path,
          version: this.snapshot.version,
        });
      }
      // Same class and wording as Spark, so the cause (files deleted behind the log's back, or
      // a log copied without its data) is recognisable.
      throw siltError("DELTA_FILE_NOT_FOUND_DETAILED:DATA_FILE", {
        path: file.path,
      });
    }
    this.metrics.filesRead++;
    const groups = await damagedFileNamed(file, () => this.selectRowGroups(bytes, file));
    if (groups?.selected.length === 0) return undefined;
    const hidden = this.hidden === undefined ? [] : [this.hidden.rowId, this.hidden.commitVersion];
    const raw = await damagedFileNamed(file, () =>
      readParquet(bytes, {
        columns: this.readsAllDataColumns
          ? undefined
          : [...this.dataFields.map((f) => physicalName(f, this.mode)), ...hidden],
        rowGroups: groups?.selected,
      }),
    );
    const table = alignToLogical(raw, { type: "struct", fields: this.dataFields }, this.mode);
    const numRows = raw.numRows;
    const identities =
      this.hidden === undefined
        ? undefined
        : rowIdentities(file, numRows, {
            ids: raw.getChild(this.hidden.rowId) ?? undefined,
            versions: raw.getChild(this.hidden.commitVersion) ?? undefined,
          });
    if (!file.deletionVector) return { table, numRows, identities };
    const deletedRows = await loadDeletionVector(
      this.store,
      this.snapshot.tableRoot,
      file.deletionVector,
    );
    // Deletion vectors count rows across the whole file; keep the selected groups' part.
    const mask = deletedRowMask(deletedRows, groups?.totalRows ?? numRows);
    return {
      table,
      numRows,
      identities,
      deleted: groups ? pickRanges(mask, groups.ranges) : mask,
    };
  }

  /** All physical rows of a file, assembled in the requested columns, plus its deleted-row mask. */
  async readAllRows(file: AddFile): Promise<PhysicalRows> {
    const physical = await this.readPhysical(file);
    if (physical === undefined) return { table: new arrow.Table(this.arrowSchema) };
    return {
      table: this.assemble(combineChunks(physical.table), physical.numRows, file),
      deleted: physical.deleted,
      identities: physical.identities,
    };
  }

  /** The row groups the filter keeps, or undefined to read every one. */
  private async selectRowGroups(bytes: Uint8Array, file: AddFile) {
    const { rowGroupFilter } = this.opts;
    if (rowGroupFilter === undefined) return undefined;
    const footer = await readParquetFooter(bytes);
    const selected = rowGroupFilter(footer, file) ?? footer.rowGroups.map((_, i) => i);
    this.metrics.rowGroupsRead += selected.length;
    this.metrics.rowGroupsSkipped += footer.rowGroups.length - selected.length;
    if (selected.length === footer.rowGroups.length) return undefined;
    const starts: number[] = [];
    let at = 0;
    for (const rg of footer.rowGroups) {
      starts.push(at);
      at += rg.numRows;
    }
    return {
      selected,
      totalRows: footer.numRows,
      ranges: selected.map((g) => [starts[g], starts[g] + footer.rowGroups[g].numRows] as const),
    };
  }

  /** Data columns conformed to the schema's types and partition constants, in schema order. */
  private assemble(table: arrow.Table, numRows: number, file: AddFile): arrow.Table {
    const columns = table.batches[0]?.data.children ?? [];
    const children = this.arrowSchema.fields.map((field, i) => {
      const logical = this.fields[i];
      if (this.partitionColumns.has(logical.name)) {
        const raw = partitionValue(file, physicalName(logical, this.mode), logical.name);
        return constantColumn(field, parsePartitionValue(raw, logical.type), numRows).data[0];
      }
      const index = this.dataFields.indexOf(logical);
      return conformData(columns[index], field.type, field.name);
    });
    const data = arrow.makeData({
      type: new arrow.Struct(this.arrowSchema.fields),
      length: numRows,
      nullCount: 0,
      children,
    });
    return new arrow.Table(this.arrowSchema, [new arrow.RecordBatch(this.arrowSchema, data)]);
  }
}

/**
 * The serialized partition value of a column, keyed by physical name as the protocol says; a
 * writer that keyed it by logical name instead is tolerated. An absent key reads as NULL.
 */
function partitionValue(file: AddFile, physical: string, logical: string): string | null {
  const values = file.partitionValues ?? {};
  if (Object.hasOwn(values, physical)) return values[physical] ?? null;
  return values[logical] ?? null;
}

/** A file's physical rows; `identities` when row-tracking columns were asked for. */
export interface PhysicalRows {
  table: arrow.Table;
  /** 1 = deleted by the file's deletion vector. */
  deleted?: Uint8Array;
  identities?: RowIdentities;
}

/**
 * Every physical row of `file` (deleted ones included, flagged in `deleted`), in the requested
 * logical columns: what row-level operations need to turn matches into row indexes. With
 * `identities`, also each row's stable row id and commit version, when the table tracks rows
 * and declares materialized columns.
 */
export async function readFileRows(
  store: ObjectStore,
  snapshot: Snapshot,
  file: AddFile,
  opts: { columns?: string[]; identities?: boolean; deadline?: Deadline } = {},
): Promise<PhysicalRows & { schema: StructType }> {
  const fields = projectFields(tableSchemaOf(snapshot), opts.columns);
  const arrowSchema = new arrow.Schema(
    fields.map((f) => new arrow.Field(f.name, toArrowType(f.type), f.nullable)),
  );
  const metrics: ScanMetrics = { filesRead: 0, rowGroupsRead: 0, rowGroupsSkipped: 0 };
  const hidden = opts.identities ? materializedColumns(snapshot.metadata) : undefined;
  const reader = new FileReader(store, snapshot, fields, arrowSchema, metrics, opts, hidden);
  return { schema: { type: "struct", fields }, ...(await reader.readAllRows(file)) };
}

/** The parts of `mask` in `ranges`, concatenated. */
function pickRanges(mask: Uint8Array, ranges: readonly (readonly [number, number])[]): Uint8Array {
  const out = new Uint8Array(ranges.reduce((n, [a, b]) => n + b - a, 0));
  let at = 0;
  for (const [a, b] of ranges) {
    out.set(mask.subarray(a, b), at);
    at += b - a;
  }
  return out;
}

/**
 * Object key of a data file: add.path is URI-encoded and relative to the table root. Anything
 * that would resolve outside the root (a scheme, a leading "/", a ".." segment) is refused here:
 * an object store would otherwise take such a key literally and read some other object.
 */
export function fileKey(tableRoot: string, path: string): string {
  const outside = () => siltError("DELTA_UNSUPPORTED_ABSOLUTE_PATH", { path });
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) throw outside();
  const relative = decodeAddPath(path);
  if (relative.startsWith("/") || relative.split("/").some((s) => s === ".." || s === ".")) {
    throw outside();
  }
  return `${tableRoot}${relative}`;
}

/**
 * What `read` returns, with a damaged data file (one Parquet cannot make sense of) reported as
 * Spark reports it: FAILED_READ_FILE naming the file, a server-side fault, not the request's.
 */
async function damagedFileNamed<T>(file: AddFile, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (!(e instanceof SiltError) || e.errorClass !== "DELTA_PARQUET_CORRUPT") throw e;
    throw siltError("FAILED_READ_FILE.NO_HINT", { path: file.path, why: String(e.parameters.why) });
  }
}
