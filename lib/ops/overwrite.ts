/**
 * INSERT OVERWRITE: the new rows replace every row of the table, or, with dynamic partition
 * overwrite (`spark.sql.sources.partitionOverwriteMode=dynamic`), every row of each partition the
 * new rows land in. The table keeps its schema, partitioning and properties.
 *
 * 1. Open the table and convert the new rows to its schema (bad rows fail before any write).
 * 2. Write the new data files.
 * 3. Pick the files to remove: all of them; or, when dynamic and the table is partitioned, those
 *    whose partition values equal a new file's. Spark ignores the dynamic mode on unpartitioned
 *    tables (a full overwrite) but still records it, and so does this.
 * 4. Commit one `WRITE` (mode Overwrite, `isDynamicPartitionOverwrite` when dynamic) with Spark's
 *    metrics. The read set is the whole table, or for a dynamic overwrite the replaced
 *    partitions, so a concurrent write into what is being replaced fails the commit.
 */
import type { TableRef } from "../catalog/names.ts";
import { READ_WHOLE_TABLE } from "../commit/conflicts.ts";
import type { SiltContext } from "../context.ts";
import { parsePartitionValue } from "../data/partition-values.ts";
import type { Action, AddFile } from "../delta/actions.ts";
import { physicalName } from "../delta/column-mapping.ts";
import type { InputRows } from "./input-rows.ts";
import type { OpenTable } from "./open-table.ts";
import { removeOf } from "./row-deletes.ts";
import {
  bytesOf,
  commitOverwrite,
  newRows,
  openWriteTarget,
  type TargetOptions,
  WRITE_ACCESS,
  type WriteResult,
} from "./write-commit.ts";
import { writeDataFiles } from "./write-files.ts";

export interface OverwriteOptions extends TargetOptions {
  /** Replace only the partitions the new rows land in. */
  dynamicPartitionOverwrite?: boolean;
}

export async function overwriteRows(
  ctx: SiltContext,
  name: TableRef,
  input: InputRows,
  opts: OverwriteOptions = {},
): Promise<WriteResult> {
  const target = await openWriteTarget(ctx, name, WRITE_ACCESS.overwrite, opts);
  const { t } = target;
  const data = newRows(target, input);
  const metadata = t.snapshot.metadata;
  const written = await writeDataFiles(ctx, {
    tableRoot: t.entry.location,
    metadata,
    data,
    version: t.snapshot.version + 1,
    rowIdHighWaterMark: target.hwm,
  });
  const dynamic = opts.dynamicPartitionOverwrite === true && metadata.partitionColumns.length > 0;
  const keyOf = partitionKeyOf(t);
  const touched = new Set(written.adds.map(keyOf));
  const victims = dynamic
    ? t.snapshot.files.filter((f) => touched.has(keyOf(f)))
    : t.snapshot.files;
  const now = ctx.clock();
  const actions: Action[] = [
    ...victims.map((f) => ({ remove: removeOf(f, now) })),
    ...written.actions,
  ];
  return commitOverwrite(ctx, target, {
    actions,
    parameters: opts.dynamicPartitionOverwrite ? { isDynamicPartitionOverwrite: true } : {},
    metrics: {
      numFiles: written.metrics.numFiles,
      numOutputRows: written.metrics.numOutputRows,
      numOutputBytes: written.metrics.numOutputBytes,
      numRemovedFiles: String(victims.length),
      numRemovedBytes: String(bytesOf(victims)),
    },
    readSet: dynamic
      ? {
          readWholeTable: false,
          readFilePaths: new Set(victims.map((f) => f.path)),
          readPredicate: (f) => touched.has(keyOf(f)),
        }
      : READ_WHOLE_TABLE,
    kind: dynamic ? "partitions" : "table",
  });
}

/**
 * A file's partition as comparable text: its partition values parsed with the column types, so
 * two writers that serialized one value differently still name one partition.
 */
export function partitionKeyOf(t: OpenTable): (file: AddFile) => string {
  const fields = t.snapshot.metadata.partitionColumns.map(
    (name) => t.schema.fields.find((f) => f.name === name)!,
  );
  return (file) =>
    JSON.stringify(
      fields.map((f) => {
        const physical = physicalName(f, t.mappingMode);
        const values = file.partitionValues ?? {};
        const raw = Object.hasOwn(values, physical) ? values[physical] : values[f.name];
        return parsePartitionValue(raw ?? null, f.type, f.name);
      }),
      (_, v) => (typeof v === "bigint" ? `${v}n` : v),
    );
}
