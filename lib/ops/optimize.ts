/**
 * OPTIMIZE t [WHERE partition-predicate] [ZORDER BY (cols)]: rewrites many small files (and files
 * with many deleted rows) into fewer files near `delta.targetFileSize`, in one commit that changes
 * no data (`dataChange: false`).
 *
 * 1. Open the table at its latest version and check Silt can write its protocol. WHERE may
 *    reference partition columns only (DELTA_NON_PARTITION_COLUMN_REFERENCE otherwise); Z-order
 *    columns must be data columns of the table.
 * 2. Keep the live files in the partitions WHERE selects, grouped by partition.
 * 3. Per partition, the files to rewrite: with ZORDER BY, all of them in one bin (the order
 *    spans the partition, as in Delta; the partition must fit in memory); otherwise files below the target size, and any file whose deletion vector
 *    covers more than 5% of its rows (Spark's maxDeletedRowsRatio). Pack them in order into bins
 *    of at most the target size. A bin of one file is left alone unless rewriting it changes
 *    something (it has a deletion vector, or Z-order asked for it).
 * 4. One bin at a time (memory holds one bin): read the live rows (deleted rows drop out here),
 *    sort them in Z-order when asked (zorder.ts), write them with `dataChange: false` and remove
 *    the bin's files with `dataChange: false`. Under row tracking the rows keep their row ids and
 *    commit versions in the table's materialized columns, as Spark's OPTIMIZE does.
 *    With a time budget, no new bin starts once it is spent: the bins done commit and the rest
 *    wait for the next run (incremental OPTIMIZE of a large table).
 * 5. Commit `OPTIMIZE` with Spark's parameters and metrics, under SnapshotIsolation as Delta
 *    commits a change of no data. The read set is exactly the files compacted: a concurrent
 *    append commits around it; a concurrent DELETE, UPDATE or MERGE that removed a compacted file
 *    or gave it a new deletion vector conflicts (DELTA_CONCURRENT_DELETE_READ). Nothing to
 *    rewrite commits nothing.
 * 6. On that conflict, drop the bins that read a changed file (by the latest snapshot) and
 *    commit the others, which hold exactly the rows they replace (`complete: false`: the dropped
 *    bins wait for the next run). Only when every bin read a changed file does the conflict
 *    stand, and nothing changes.
 *
 * REORG TABLE t APPLY (PURGE) runs the same steps with step 3 choosing every file that has a
 * deletion vector (whatever its size), so deleted rows are physically gone; it commits `REORG`
 * with `applyPurge: true`.
 *
 * The default target is 128 MiB rather than Spark's 1 GiB: a bin is held in a Lambda's memory as
 * Arrow data, several times its Parquet size.
 */
import type * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import { optimizeOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import { concatTables, filterTable, takeRows } from "../data/kernels.ts";
import { type Action, type AddFile, numRecordsOf } from "../delta/actions.ts";
import { dvUniqueId } from "../delta/deletion-vectors.ts";
import {
  concatIdentities,
  freshIdentities,
  pickIdentities,
  type RowIdentities,
} from "../delta/row-tracking.ts";
import { SiltError, siltError } from "../errors.ts";
import { expressionSql, referencedColumns, scopeOf } from "../expr/analyze.ts";
import type { Expr } from "../expr/ast.ts";
import { evaluateScalar } from "../expr/evaluate.ts";
import { commit } from "./commit.ts";
import { analyzeCondition, type DmlTarget, elapsed, partitionDecider } from "./dml-common.ts";
import { displayName, type OpenTable, openTable, readSnapshot } from "./open-table.ts";
import { type OnProgress, progressCounter } from "./progress.ts";
import { readFileRows } from "./read-files.ts";
import { removeOf } from "./row-deletes.ts";
import { writeDataFiles } from "./write-files.ts";
import { checkWriteProtocol, rowTrackingHighWaterMark } from "./write-protocol.ts";
import { zOrderIndexes } from "./zorder.ts";

export interface OptimizeRequest {
  where?: Expr;
  zorderBy?: string[];
  /**
   * Stop starting new bins once this many milliseconds (by the context's clock) have passed (at
   * least one bin runs): the bins done commit, the rest wait for the next run, which finds them
   * still small.
   */
  timeBudgetMs?: number;
  /** REORG … APPLY (PURGE): rewrite the files with deletion vectors only. */
  purge?: boolean;
  defaults?: { catalog?: string; schema?: string };
  now?: number;
  /** Files and bytes rewritten of those the bins hold, after each file read. */
  onProgress?: OnProgress;
}

export interface FileSizeStats {
  min: number;
  max: number;
  avg: number;
  totalFiles: number;
  totalSize: number;
}

export interface OptimizeResult {
  version: number;
  committed: boolean;
  /** False when the time budget stopped it before every bin was rewritten. */
  complete: boolean;
  tableLocation: string;
  metrics: {
    numFilesAdded: number;
    numFilesRemoved: number;
    filesAdded: FileSizeStats;
    filesRemoved: FileSizeStats;
    partitionsOptimized: number;
    numBatches: number;
    totalConsideredFiles: number;
    totalFilesSkipped: number;
    numDeletionVectorsRemoved: number;
  };
  /** The commit's operationMetrics (strings, as in the log). */
  operationMetrics: Record<string, string>;
}

export const DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024;
const MAX_DELETED_ROWS_RATIO = 0.05;

export async function optimizeTable(
  ctx: SiltContext,
  name: TableRef,
  req: OptimizeRequest = {},
): Promise<OptimizeResult> {
  const started = performance.now();
  const startedAt = ctx.clock();
  // Step 1.
  const t = await openTable(ctx, name, { defaults: req.defaults, access: "write" });
  const rowTracking = checkWriteProtocol(t.snapshot.protocol, t.snapshot.metadata);
  const tableName = displayName(t.name);
  const qualifier = [t.name.catalog, t.name.schema, t.name.table];
  const target: DmlTarget = {
    t,
    tableName,
    rowTracking,
    hwm: rowTracking ? rowTrackingHighWaterMark(t.snapshot) : undefined,
    qualifier,
    scope: scopeOf(t.schema.fields, qualifier),
  };
  const partitionColumns = t.snapshot.metadata.partitionColumns;
  const now = BigInt(req.now ?? ctx.clock()) * 1000n;
  let inScope: (f: AddFile) => boolean = () => true;
  if (req.where !== undefined) {
    const predicate = analyzeCondition(req.where, target.scope, "OPTIMIZE condition");
    const cols = referencedColumns(predicate);
    const lower = partitionColumns.map((c) => c.toLowerCase());
    const outside = cols.find((c) => !lower.includes(c.name.toLowerCase()));
    if (outside !== undefined) {
      throw siltError("DELTA_NON_PARTITION_COLUMN_REFERENCE", {
        name: outside.name,
        partitionColumns: partitionColumns.join(", "),
      });
    }
    const decide = partitionDecider(target, predicate, now);
    if (decide !== undefined) inScope = decide;
    else {
      const constant = evaluateScalar(predicate, { now }) === true;
      inScope = () => constant;
    }
  }
  const zorderBy = (req.zorderBy ?? []).map((c) =>
    zOrderColumn(t.schema.fields, partitionColumns, c),
  );
  const predicateParam = JSON.stringify(req.where === undefined ? [] : [expressionSql(req.where)]);
  const parameters: Record<string, unknown> = req.purge
    ? { predicate: predicateParam, applyPurge: true }
    : {
        predicate: predicateParam,
        zOrderBy: JSON.stringify(zorderBy),
        clusterBy: "[]",
        auto: false,
      };

  // Steps 2-3.
  const targetSize = Number(
    t.snapshot.metadata.configuration["delta.targetFileSize"] ?? DEFAULT_TARGET_FILE_SIZE,
  );
  const partitions = new Map<string, AddFile[]>();
  let considered = 0;
  for (const f of t.snapshot.files) {
    if (!inScope(f)) continue;
    considered++;
    const key = JSON.stringify(Object.entries(f.partitionValues).sort());
    const list = partitions.get(key) ?? [];
    list.push(f);
    partitions.set(key, list);
  }
  const bins: { partition: string; files: AddFile[] }[] = [];
  for (const [partition, files] of partitions) {
    const chosen = req.purge
      ? files.filter((f) => (f.deletionVector?.cardinality ?? 0) > 0)
      : zorderBy.length > 0
        ? files
        : files.filter((f) => needsRewrite(f, targetSize));
    // Z-order spans the partition, so the partition is one bin, as in Delta.
    const grouped =
      zorderBy.length > 0 ? (chosen.length > 0 ? [chosen] : []) : pack(chosen, targetSize);
    const packed = grouped.filter(
      (b) => b.length > 1 || zorderBy.length > 0 || b[0]!.deletionVector != null,
    );
    for (const b of packed) bins.push({ partition, files: b });
  }

  // Step 4.
  const done: RewrittenBin[] = [];
  let hwm = target.hwm;
  const nowMs = ctx.clock();
  const binFiles = bins.flatMap((b) => b.files);
  const progress = progressCounter(
    { files: binFiles.length, bytes: binFiles.reduce((n, f) => n + f.size, 0) },
    req.onProgress,
  );
  for (const { partition, files: bin } of bins) {
    const spent = ctx.clock() - startedAt;
    if (done.length > 0 && req.timeBudgetMs !== undefined && spent >= req.timeBudgetMs) {
      break;
    }
    const parts: arrow.Table[] = [];
    const identities: RowIdentities[] = [];
    for (const file of bin) {
      const read = await readFileRows(ctx.store, t.snapshot, file, {
        identities: target.rowTracking,
      });
      const live: number[] = [];
      for (let r = 0; r < read.table.numRows; r++) if (!read.deleted?.[r]) live.push(r);
      parts.push(
        read.deleted
          ? filterTable(
              read.table,
              read.deleted.map((d) => (d ? 0 : 1)),
            )
          : read.table,
      );
      identities.push(
        read.identities === undefined
          ? freshIdentities(live.length)
          : pickIdentities(read.identities, live, true),
      );
      progress.advance(1, file.size);
    }
    let data = concatTables(parts);
    let moved = concatIdentities(identities);
    if (zorderBy.length > 0 && data.numRows > 1) {
      const order = zOrderIndexes(data, zorderBy);
      data = takeRows(data, order);
      moved = pickIdentities(moved, order, true);
    }
    const adds: AddFile[] = [];
    if (data.numRows > 0) {
      const written = await writeDataFiles(ctx, {
        tableRoot: t.entry.location,
        metadata: t.snapshot.metadata,
        data,
        version: t.snapshot.version + 1,
        rowIdHighWaterMark: hwm,
        dataChange: false,
        identities: moved,
      });
      adds.push(...written.adds);
      if (hwm !== undefined) hwm += data.numRows;
    }
    done.push({ partition, files: bin, adds });
  }

  // Steps 5-6.
  const commitBins = async (kept: RewrittenBin[]): Promise<OptimizeResult> => {
    const removed = kept.flatMap((b) => b.files);
    const adds = kept.flatMap((b) => b.adds);
    const actions: Action[] = [
      ...adds.map((add) => ({ add })),
      ...removed.map((f) => ({ remove: removeOf(f, nowMs, false) })),
    ];
    // Ids a dropped bin took stay unused: row ids must be unique, not dense.
    if (hwm !== undefined && target.hwm !== undefined && hwm > target.hwm) {
      actions.push({
        domainMetadata: {
          domain: "delta.rowTracking",
          configuration: JSON.stringify({ rowIdHighWaterMark: hwm }),
          removed: false,
        },
      });
    }
    const partitionsOptimized = new Set(kept.map((b) => b.partition)).size;
    const filesAdded = sizeStats(adds.map((a) => a.size));
    const filesRemoved = sizeStats(removed.map((f) => f.size));
    const numDeletionVectorsRemoved = removed.filter((f) => f.deletionVector).length;
    const metrics = {
      numFilesAdded: adds.length,
      numFilesRemoved: removed.length,
      filesAdded,
      filesRemoved,
      partitionsOptimized,
      numBatches: kept.length > 0 ? 1 : 0,
      totalConsideredFiles: considered,
      totalFilesSkipped: considered - removed.length,
      numDeletionVectorsRemoved,
    };
    const operationMetrics = historyMetrics(adds, removed, filesAdded, filesRemoved, {
      numDeletionVectorsRemoved,
      zorderBy,
      executionTimeMs: 0,
    });
    const base = {
      tableLocation: t.entry.location,
      metrics,
      operationMetrics,
      complete: kept.length === bins.length,
    };
    if (removed.length === 0) return { ...base, version: t.snapshot.version, committed: false };
    operationMetrics.executionTimeMs = String(elapsed(started));
    const result = await commit(
      ctx,
      t,
      optimizeOperation(
        req.purge ? "REORG" : "OPTIMIZE",
        parameters,
        operationMetrics,
        removed.map((f) => f.path),
      ),
      actions,
      // As Delta: a commit that changes no data conflicts only with changes to what it read.
      { isolationLevel: "SnapshotIsolation" },
    );
    return { ...base, version: result.version, committed: true };
  };
  let kept = done;
  for (;;) {
    try {
      return await commitBins(kept);
    } catch (err) {
      if (!(err instanceof SiltError) || err.errorClass !== "DELTA_CONCURRENT_DELETE_READ")
        throw err;
      const untouched = await binsStillLive(ctx, t, kept);
      // Every bin read a changed file (or none did, and the conflict is not ours to narrow).
      if (untouched.length === 0 || untouched.length === kept.length) throw err;
      kept = untouched;
    }
  }
}

/** A bin rewritten in step 4: the files it replaces and the files replacing them. */
interface RewrittenBin {
  partition: string;
  files: AddFile[];
  adds: AddFile[];
}

/**
 * Step 6: the bins none of whose files a concurrent commit removed or gave a new deletion
 * vector, by the table's latest snapshot. Their rewrite still holds exactly the rows it replaces.
 */
async function binsStillLive(
  ctx: SiltContext,
  t: OpenTable,
  bins: RewrittenBin[],
): Promise<RewrittenBin[]> {
  const latest = await readSnapshot(ctx, t.entry);
  const live = new Map(latest.files.map((f) => [f.path, dvKey(f)]));
  return bins.filter((b) => b.files.every((f) => live.get(f.path) === dvKey(f)));
}

const dvKey = (f: AddFile): string => (f.deletionVector ? dvUniqueId(f.deletionVector) : "");

/** Resolves a ZORDER BY column to the schema's spelling; Delta's errors otherwise. */
function zOrderColumn(
  fields: readonly { name: string }[],
  partitionColumns: readonly string[],
  column: string,
): string {
  const field = fields.find((f) => f.name.toLowerCase() === column.toLowerCase());
  if (partitionColumns.some((p) => p.toLowerCase() === column.toLowerCase())) {
    throw siltError("DELTA_ZORDERING_ON_PARTITION_COLUMN", { column });
  }
  if (field === undefined) {
    throw siltError("DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST", { column });
  }
  return field.name;
}

function needsRewrite(f: AddFile, targetSize: number): boolean {
  if (f.size < targetSize) return true;
  const dv = f.deletionVector;
  const n = numRecordsOf(f);
  return dv != null && n !== undefined && n > 0 && dv.cardinality / n > MAX_DELETED_ROWS_RATIO;
}

/** Files in order into bins of at most `targetSize` bytes (a larger file gets a bin of its own). */
function pack(files: AddFile[], targetSize: number): AddFile[][] {
  const bins: AddFile[][] = [];
  let bin: AddFile[] = [];
  let size = 0;
  for (const f of files) {
    if (bin.length > 0 && size + f.size > targetSize) {
      bins.push(bin);
      bin = [];
      size = 0;
    }
    bin.push(f);
    size += f.size;
  }
  if (bin.length > 0) bins.push(bin);
  return bins;
}

function sizeStats(sizes: number[]): FileSizeStats {
  const totalSize = sizes.reduce((n, s) => n + s, 0);
  return {
    min: sizes.length === 0 ? 0 : Math.min(...sizes),
    max: sizes.length === 0 ? 0 : Math.max(...sizes),
    avg: sizes.length === 0 ? 0 : totalSize / sizes.length,
    totalFiles: sizes.length,
    totalSize,
  };
}

/** The `pN` file size Spark reports: the nearest-rank percentile of the added files. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** §10.2's OPTIMIZE metrics, plus the filesAdded / filesRemoved summaries as JSON strings. */
function historyMetrics(
  adds: AddFile[],
  removed: AddFile[],
  filesAdded: FileSizeStats,
  filesRemoved: FileSizeStats,
  extra: { numDeletionVectorsRemoved: number; zorderBy: string[]; executionTimeMs: number },
): Record<string, string> {
  const sizes = adds.map((a) => a.size).sort((a, b) => a - b);
  const out: Record<string, string> = {
    numAddedFiles: String(adds.length),
    numRemovedFiles: String(removed.length),
    numAddedBytes: String(filesAdded.totalSize),
    numRemovedBytes: String(filesRemoved.totalSize),
    minFileSize: String(sizes[0] ?? 0),
    p25FileSize: String(percentile(sizes, 0.25)),
    p50FileSize: String(percentile(sizes, 0.5)),
    p75FileSize: String(percentile(sizes, 0.75)),
    maxFileSize: String(sizes[sizes.length - 1] ?? 0),
    numDeletionVectorsRemoved: String(extra.numDeletionVectorsRemoved),
    filesAdded: JSON.stringify(filesAdded),
    filesRemoved: JSON.stringify(filesRemoved),
    executionTimeMs: String(extra.executionTimeMs),
  };
  if (extra.zorderBy.length > 0) {
    out.zOrderStats = JSON.stringify({
      strategyName: "all",
      inputCubeFiles: { num: 0, size: 0 },
      inputOtherFiles: { num: removed.length, size: filesRemoved.totalSize },
      inputNumCubes: 0,
      mergedFiles: { num: removed.length, size: filesRemoved.totalSize },
      numOutputCubes: adds.length,
    });
  }
  return out;
}
