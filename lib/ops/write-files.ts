/**
 * Turns rows in a table's logical schema into Delta data files and their `add` actions.
 *
 * 1. Split the rows by partition value (all rows form one group on an unpartitioned table).
 * 2. Per group, drop the partition columns (their values live in the log, not the files), rename
 *    columns to their physical names with Parquet field ids when column mapping is on, and cut
 *    the rows into files of about `delta.targetFileSize` bytes.
 * 3. Write each file (zstd Parquet) under a Hive-style partition directory, or under a random
 *    two-character prefix when column mapping is on, as Spark does, and compute its statistics.
 * 4. Under row tracking give each file a fresh `baseRowId` range above the high-water mark and the
 *    commit's version, and emit the new high-water mark (the transaction rebases both if it loses
 *    its version). Rows moved from other files keep their ids and commit versions in the table's
 *    hidden materialized columns, written after the data columns and left out of the statistics.
 */
import { randomUUID } from "node:crypto";
import * as arrow from "apache-arrow";
import type { SiltContext } from "../context.ts";
import { arrowValues } from "../data/arrow-to-json.ts";
import { combineChunks, takeRows } from "../data/kernels.ts";
import { writeParquet } from "../data/parquet.ts";
import { encodeAddPath, partitionPath, serializePartitionValue } from "../data/partition-values.ts";
import { computeFileStats, serializeStats } from "../data/stats.ts";
import type { Action, AddFile, Metadata } from "../delta/actions.ts";
import { columnMappingMode, physicalName } from "../delta/column-mapping.ts";
import {
  materializedColumns,
  materializedVectors,
  type RowIdentities,
} from "../delta/row-tracking.ts";
import { parseSchema, type StructField, toArrowType } from "../delta/schema.ts";

export interface WriteFilesRequest {
  tableRoot: string;
  metadata: Metadata;
  /** Rows with the table's logical columns, in schema order, named logically. */
  data: arrow.Table;
  /** Version this commit expects to get (for defaultRowCommitVersion). */
  version: number;
  /** Row-id high-water mark of the read snapshot, -1 when none; undefined = no row tracking. */
  rowIdHighWaterMark?: number;
  /** False for rearrangements (OPTIMIZE). */
  dataChange?: boolean;
  /**
   * Identities of the rows in `data` (same order) that were moved from other files; written only
   * under row tracking, into the columns the table declares.
   */
  identities?: RowIdentities;
}

export interface WriteFilesResult {
  actions: Action[];
  adds: AddFile[];
  metrics: { numFiles: string; numOutputRows: string; numOutputBytes: string };
}

/** Without a configured target, files stay near this many bytes of Arrow data (~1M rows). */
const DEFAULT_TARGET_BYTES = 128 * 1024 * 1024;

export async function writeDataFiles(
  ctx: SiltContext,
  req: WriteFilesRequest,
): Promise<WriteFilesResult> {
  const { metadata } = req;
  const schema = parseSchema(metadata.schemaString);
  const mode = columnMappingMode(metadata.configuration);
  const partitionFields = metadata.partitionColumns.map(
    (name) => schema.fields.find((f) => f.name === name)!,
  );
  const dataFields = schema.fields.filter((f) => !metadata.partitionColumns.includes(f.name));
  const hidden =
    req.rowIdHighWaterMark !== undefined && req.identities !== undefined
      ? materializedColumns(metadata)
      : undefined;
  const { data, hiddenFields } =
    hidden === undefined
      ? { data: req.data, hiddenFields: [] }
      : withHiddenColumns(req.data, materializedVectors(hidden, req.identities as RowIdentities));
  const statsColumns = dataFields.map((f) => physicalName(f, mode));
  const physicalArrow = new arrow.Schema([
    ...dataFields.map((f) => {
      const field = new arrow.Field(
        physicalName(f, mode),
        toArrowType(f.type, { physical: mode !== "none" }),
        f.nullable,
      );
      const id = f.metadata["delta.columnMapping.id"];
      if (mode !== "none" && id !== undefined) field.metadata.set("PARQUET:field_id", String(id));
      return field;
    }),
    ...hiddenFields,
  ]);
  const fileColumns = [...dataFields.map((f) => f.name), ...hiddenFields.map((f) => f.name)];
  const numIndexedCols = Number(metadata.configuration["delta.dataSkippingNumIndexedCols"] ?? 32);
  const targetBytes = Number(
    metadata.configuration["delta.targetFileSize"] ?? DEFAULT_TARGET_BYTES,
  );

  const adds: AddFile[] = [];
  let nextRowId = (req.rowIdHighWaterMark ?? -1) + 1;
  let bytes = 0;
  for (const group of groupByPartition(data, partitionFields)) {
    const partitionValues: Record<string, string | null> = {};
    const dirs: [string, string | null][] = [];
    partitionFields.forEach((f, i) => {
      const serialized = serializePartitionValue(group.values[i], f.type);
      partitionValues[physicalName(f, mode)] = serialized;
      dirs.push([f.name, serialized]);
    });
    const rows = group.indices === undefined ? data : takeRows(data, group.indices);
    const physical = toPhysical(rows, fileColumns, physicalArrow);
    for (const chunk of splitBySize(physical, targetBytes)) {
      ctx.deadline?.check();
      const bytesOut = writeParquet(chunk);
      const stats = computeFileStats(
        hiddenFields.length === 0 ? chunk : chunk.select(statsColumns),
        { numIndexedCols },
      );
      const dir = mode !== "none" ? `${randomPrefix()}/` : partitionPath(dirs);
      const relative = `${dir}part-00000-${randomUUID()}.c000.zstd.parquet`;
      await ctx.store.put(`${req.tableRoot}${relative}`, bytesOut);
      bytes += bytesOut.byteLength;
      const add: AddFile = {
        path: encodeAddPath(relative),
        partitionValues,
        size: bytesOut.byteLength,
        modificationTime: ctx.clock(),
        dataChange: req.dataChange ?? true,
        stats: serializeStats(stats),
      };
      if (req.rowIdHighWaterMark !== undefined) {
        add.baseRowId = nextRowId;
        add.defaultRowCommitVersion = req.version;
        nextRowId += chunk.numRows;
      }
      adds.push(add);
    }
  }
  const actions: Action[] = adds.map((add) => ({ add }));
  if (req.rowIdHighWaterMark !== undefined && nextRowId - 1 > req.rowIdHighWaterMark) {
    actions.push({
      domainMetadata: {
        domain: "delta.rowTracking",
        configuration: JSON.stringify({ rowIdHighWaterMark: nextRowId - 1 }),
        removed: false,
      },
    });
  }
  return {
    actions,
    adds,
    metrics: {
      numFiles: String(adds.length),
      numOutputRows: String(data.numRows),
      numOutputBytes: String(bytes),
    },
  };
}

interface PartitionGroup {
  /** Partition column values for this group, in the JSON API's canonical form. */
  values: unknown[];
  /** Row indices in the input; undefined = every row. */
  indices: Uint32Array | undefined;
}

function groupByPartition(data: arrow.Table, fields: StructField[]): PartitionGroup[] {
  if (fields.length === 0) return [{ values: [], indices: undefined }];
  const columns = fields.map((f) => arrowValues(data.getChild(f.name)!, f.type));
  const groups = new Map<string, { values: unknown[]; rows: number[] }>();
  for (let i = 0; i < data.numRows; i++) {
    const values = columns.map((c) => c[i]);
    const key = JSON.stringify(values);
    let g = groups.get(key);
    if (g === undefined) {
      g = { values, rows: [] };
      groups.set(key, g);
    }
    g.rows.push(i);
  }
  return [...groups.values()].map((g) => ({
    values: g.values,
    indices: g.rows.length === data.numRows ? undefined : Uint32Array.from(g.rows),
  }));
}

/** `data` in one batch with the hidden columns after its own. */
function withHiddenColumns(
  data: arrow.Table,
  hidden: { fields: arrow.Field[]; data: arrow.Data[] },
): { data: arrow.Table; hiddenFields: arrow.Field[] } {
  const one = combineChunks(data);
  const schema = new arrow.Schema([...one.schema.fields, ...hidden.fields]);
  const children = [...(one.batches[0]?.data.children ?? []), ...hidden.data];
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({ type: new arrow.Struct(schema.fields), length: one.numRows, children }),
  );
  return { data: new arrow.Table(schema, [batch]), hiddenFields: hidden.fields };
}

/**
 * The columns `names` of `rows` relabelled with physical names (and field ids) at every level.
 * The buffers are shared; only the types change, so this costs nothing per row.
 */
function toPhysical(rows: arrow.Table, names: string[], target: arrow.Schema): arrow.Table {
  const batches = rows.batches.map((batch) => {
    const children = names.map((name, i) =>
      relabel(batch.getChild(name)!.data[0], target.fields[i].type),
    );
    return new arrow.RecordBatch(
      target,
      arrow.makeData({
        type: new arrow.Struct(target.fields),
        length: batch.numRows,
        nullCount: 0,
        children,
      }),
    );
  });
  return new arrow.Table(target, batches);
}

function relabel(data: arrow.Data, type: arrow.DataType): arrow.Data {
  const children = data.children.map((child, i) =>
    relabel(child, (type.children?.[i]?.type ?? child.type) as arrow.DataType),
  );
  return data.clone(type, data.offset, data.length, data.nullCount, data as never, children);
}

/** Consecutive slices whose Arrow size is about `targetBytes` each. */
function splitBySize(table: arrow.Table, targetBytes: number): arrow.Table[] {
  const n = table.numRows;
  if (n === 0) return [];
  const total = arrowBytes(table);
  if (total <= targetBytes) return [table];
  const rowsPerFile = Math.max(1, Math.floor((n * targetBytes) / total));
  const out: arrow.Table[] = [];
  for (let start = 0; start < n; start += rowsPerFile) {
    out.push(table.slice(start, Math.min(n, start + rowsPerFile)));
  }
  return out;
}

function arrowBytes(table: arrow.Table): number {
  let total = 0;
  const visit = (d: arrow.Data) => {
    for (const b of [d.values, d.valueOffsets, d.nullBitmap, d.typeIds]) {
      if (b) total += b.byteLength;
    }
    for (const c of d.children) visit(c);
  };
  for (const batch of table.batches) visit(batch.data);
  return total;
}

/** Two characters as Spark's random file prefixes (a-z, A-Z, 0-9). */
function randomPrefix(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const a = alphabet[Math.floor(Math.random() * alphabet.length)];
  const b = alphabet[Math.floor(Math.random() * alphabet.length)];
  return `${a}${b}`;
}
