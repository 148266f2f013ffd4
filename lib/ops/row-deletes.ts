/**
 * Marking rows deleted, the one mechanism behind DELETE, UPDATE, MERGE and the selective
 * overwrites (REPLACE WHERE / USING / ON), done the way current Delta does it: deletion vectors
 * instead of rewriting files.
 *
 * findMatches:
 * 1. Keep only the candidate files whose partition values and statistics can hold a match.
 * 2. When the condition reads partition columns only, decide each file from its partition values
 *    without opening it: it matches entirely or not at all.
 * 3. Otherwise read each remaining file's rows (deleted ones included, so row indexes stay
 *    physical), evaluate the condition, and collect the live rows it matches.
 *
 * deleteActions:
 * 4. A file whose rows are now all deleted is removed (`remove`, carrying its old DV).
 * 5. Any other file gets a deletion vector holding the old and the new deleted rows: one new DV
 *    file for the whole commit, and per file the remove (old DV) + add (new DV) pair the protocol
 *    requires, with statistics marked `tightBounds: false` since they still describe every row.
 */
import type * as arrow from "apache-arrow";
import type { SiltContext } from "../context.ts";
import { type Action, type AddFile, numRecordsOf, type RemoveFile } from "../delta/actions.ts";
import {
  deletedRowMask,
  loadDeletionVector,
  unionRowIndexes,
  writeDeletionVectorFile,
} from "../delta/deletion-vectors.ts";
import type { RowIdentities } from "../delta/row-tracking.ts";
import type { Snapshot } from "../delta/snapshot.ts";
import { readFileRows } from "./read-files.ts";

/** What one file contributes: its live rows that match, by physical row index. */
export interface FileMatch {
  file: AddFile;
  /** Physical indexes (ascending) of the live rows that match. */
  rows: Float64Array;
  /** Physical rows in the file (numRecords). */
  physicalRows: number;
  /** Rows already deleted before this operation. */
  alreadyDeleted: Float64Array;
  /** Every row of the file in the requested columns, when it was read (not decided by partition). */
  table?: arrow.Table;
  /** Stable ids and commit versions of the file's rows, when read and asked for. */
  identities?: RowIdentities;
}

export interface MatchOptions {
  /** Files that may hold matches (already pruned by statistics), default every live file. */
  candidates?: AddFile[];
  /**
   * Decides a whole file from its partition values alone: true = every row matches, false = none,
   * undefined = read the file. Used when the condition reads partition columns only.
   */
  byPartition?: (file: AddFile) => boolean | undefined;
  /**
   * Rows of a file's table (all its physical rows) that match: 1 = match. `deleted` flags the
   * rows an earlier deletion vector already removed, for callers that must skip them (a MERGE
   * join); matches on them are dropped either way.
   */
  match: (
    table: arrow.Table,
    file: AddFile,
    deleted?: Uint8Array,
    identities?: RowIdentities,
  ) => Uint8Array;
  /** Logical columns the match (and the caller, e.g. UPDATE's rewrite) needs; default all. */
  columns?: string[];
  /** Read the rows' identities too (row tracking), for callers that move matched rows. */
  identities?: boolean;
  /** Files read at once. */
  concurrency?: number;
}

export async function findMatches(
  ctx: SiltContext,
  snapshot: Snapshot,
  opts: MatchOptions,
): Promise<FileMatch[]> {
  const candidates = opts.candidates ?? snapshot.files;
  const out: FileMatch[] = [];
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  for (let i = 0; i < candidates.length; i += concurrency) {
    const slice = candidates.slice(i, i + concurrency);
    const found = await Promise.all(slice.map((f) => matchFile(ctx, snapshot, f, opts)));
    for (const m of found) if (m !== undefined && m.rows.length > 0) out.push(m);
  }
  return out;
}

async function matchFile(
  ctx: SiltContext,
  snapshot: Snapshot,
  file: AddFile,
  opts: MatchOptions,
): Promise<FileMatch | undefined> {
  const decided = opts.byPartition?.(file);
  if (decided === false) return undefined;
  if (decided === true) {
    const physicalRows = numRecordsOf(file);
    if (physicalRows !== undefined) {
      // The whole file goes: its deletion vector (if any) says which rows are still live, so
      // the data file itself is never read.
      const alreadyDeleted = file.deletionVector
        ? await loadDeletionVector(ctx.store, snapshot.tableRoot, file.deletionVector)
        : new Float64Array(0);
      const gone = deletedRowMask(alreadyDeleted, physicalRows);
      const rows: number[] = [];
      for (let r = 0; r < physicalRows; r++) if (!gone[r]) rows.push(r);
      return { file, rows: Float64Array.from(rows), physicalRows, alreadyDeleted };
    }
  }
  const { table, deleted, identities } = await readFileRows(ctx.store, snapshot, file, {
    columns: opts.columns,
    identities: opts.identities,
    deadline: ctx.deadline,
  });
  const physicalRows = table.numRows;
  const mask =
    decided === true
      ? new Uint8Array(physicalRows).fill(1)
      : opts.match(table, file, deleted, identities);
  const rows: number[] = [];
  const already: number[] = [];
  for (let r = 0; r < physicalRows; r++) {
    if (deleted?.[r]) already.push(r);
    else if (mask[r]) rows.push(r);
  }
  return {
    file,
    rows: Float64Array.from(rows),
    physicalRows,
    alreadyDeleted: Float64Array.from(already),
    table,
    identities,
  };
}

export interface DeleteMetrics {
  numRemovedFiles: number;
  numDeletionVectorsAdded: number;
  numDeletionVectorsRemoved: number;
  numDeletionVectorsUpdated: number;
  numDeletedRows: number;
  numRemovedBytes: number;
}

export async function deleteActions(
  ctx: SiltContext,
  tableRoot: string,
  matches: FileMatch[],
): Promise<{ actions: Action[]; metrics: DeleteMetrics }> {
  const now = ctx.clock();
  const metrics: DeleteMetrics = {
    numRemovedFiles: 0,
    numDeletionVectorsAdded: 0,
    numDeletionVectorsRemoved: 0,
    numDeletionVectorsUpdated: 0,
    numDeletedRows: 0,
    numRemovedBytes: 0,
  };
  const actions: Action[] = [];
  const partial: { match: FileMatch; rows: Float64Array }[] = [];
  for (const m of matches) {
    metrics.numDeletedRows += m.rows.length;
    const union = unionRowIndexes(m.alreadyDeleted, m.rows);
    if (union.length >= m.physicalRows) {
      actions.push({ remove: removeOf(m.file, now) });
      metrics.numRemovedFiles++;
      metrics.numRemovedBytes += m.file.size;
      if (m.file.deletionVector) metrics.numDeletionVectorsRemoved++;
    } else {
      partial.push({ match: m, rows: union });
    }
  }
  if (partial.length > 0) {
    const descriptors = await writeDeletionVectorFile(
      ctx.store,
      tableRoot,
      partial.map((p) => p.rows),
    );
    partial.forEach(({ match }, i) => {
      const file = match.file;
      if (file.deletionVector) metrics.numDeletionVectorsUpdated++;
      else metrics.numDeletionVectorsAdded++;
      actions.push({ remove: removeOf(file, now) });
      actions.push({
        add: {
          ...file,
          modificationTime: now,
          dataChange: true,
          stats: looseStats(file.stats),
          deletionVector: descriptors[i],
        },
      });
    });
  }
  return { actions, metrics };
}

/** The remove for a live file, carrying what Spark carries (its DV, stats, row-tracking ids). */
export function removeOf(file: AddFile, now: number, dataChange = true): RemoveFile {
  const remove: RemoveFile = {
    path: file.path,
    deletionTimestamp: now,
    dataChange,
    extendedFileMetadata: true,
    partitionValues: file.partitionValues,
    size: file.size,
  };
  if (file.stats) remove.stats = file.stats;
  if (file.tags) remove.tags = file.tags;
  if (file.deletionVector) remove.deletionVector = file.deletionVector;
  if (file.baseRowId !== undefined && file.baseRowId !== null) remove.baseRowId = file.baseRowId;
  if (file.defaultRowCommitVersion !== undefined && file.defaultRowCommitVersion !== null) {
    remove.defaultRowCommitVersion = file.defaultRowCommitVersion;
  }
  return remove;
}

/** Statistics still describe every physical row, so they are no longer tight bounds. */
function looseStats(stats: string | null | undefined): string | null | undefined {
  if (!stats || stats.includes('"tightBounds":false')) return stats;
  if (stats.includes('"tightBounds":true')) {
    return stats.replace('"tightBounds":true', '"tightBounds":false');
  }
  return `${stats.slice(0, -1)},"tightBounds":false}`;
}
