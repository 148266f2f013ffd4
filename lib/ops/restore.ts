/**
 * RESTORE TABLE t TO VERSION AS OF n / TIMESTAMP AS OF '…' (Delta's RestoreTableCommand): a new
 * version whose state is that of an earlier one. History keeps every version in between.
 *
 * 1. Open the latest snapshot L and the snapshot S to restore (by version, or the latest version
 *    committed at or before the timestamp). Out of range: Delta's DELTA_CANNOT_RESTORE_* errors.
 * 2. Compare the live files of both, keyed by (path, deletion vector id): S − L are re-added with
 *    their original statistics, tags, deletion vectors, modification time and row ids
 *    (`dataChange` true); L − S are removed.
 * 3. Check that every file to re-add, and its deletion vector file, still exists: after VACUUM
 *    the restore is impossible, and it fails naming the missing files, changing nothing.
 * 4. Re-emit S's metaData (its schema, partitioning and properties; the column-mapping id
 *    high-water mark never goes back) and the union of both protocols (never a downgrade), and
 *    bring user domain metadata back to S's. The row-tracking high-water mark stays L's: the
 *    restored files keep their row ids and new files must not reuse them.
 * 5. Commit one `RESTORE` (parameters version/timestamp, Spark's metrics) that read the whole
 *    table, so any concurrent commit fails it.
 */
import type { TableRef } from "../catalog/names.ts";
import { restoreOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import type { Action, AddFile, DomainMetadata, Metadata } from "../delta/actions.ts";
import { COLUMN_MAPPING_MAX_ID_KEY, configuredMaxColumnId } from "../delta/column-mapping.ts";
import { dvFileKey } from "../delta/deletion-vectors.ts";
import { logicalFileKey, parseTimestamp, type Snapshot } from "../delta/snapshot.ts";
import { SiltError, siltError } from "../errors.ts";
import { javaTimestamp } from "../values/datetime-text.ts";
import { commit } from "./commit.ts";
import { openTable, readSnapshot } from "./open-table.ts";
import { fileKey } from "./read-files.ts";
import { removeOf } from "./row-deletes.ts";
import { bytesOf, protocolUnion } from "./write-commit.ts";
import { checkWriteProtocol } from "./write-protocol.ts";

export interface RestoreRequest {
  version?: number;
  /** Epoch milliseconds, or text as time travel accepts it ('2026-10-03 12:00:00'). */
  timestamp?: number | string;
  defaults?: { catalog?: string; schema?: string };
}

export interface RestoreMetrics {
  tableSizeAfterRestore: number;
  numOfFilesAfterRestore: number;
  numRemovedFiles: number;
  numRestoredFiles: number;
  removedFilesSize: number;
  restoredFilesSize: number;
}

export interface RestoreResult {
  version: number;
  restoredVersion: number;
  metrics: RestoreMetrics;
}

export async function restoreTable(
  ctx: SiltContext,
  name: TableRef,
  req: RestoreRequest,
): Promise<RestoreResult> {
  if ((req.version === undefined) === (req.timestamp === undefined)) {
    throw siltError("INVALID_REQUEST:RESTORE_TARGET");
  }
  const t = await openTable(ctx, name, { defaults: req.defaults, access: "write" });
  const latest = t.snapshot;
  checkWriteProtocol(latest.protocol, latest.metadata);
  const source = await snapshotToRestore(ctx, t.entry, req);

  const inLatest = new Map(latest.files.map((f) => [logicalFileKey(f), f]));
  const inSource = new Map(source.files.map((f) => [logicalFileKey(f), f]));
  const toAdd = source.files.filter((f) => !inLatest.has(logicalFileKey(f)));
  const toRemove = latest.files.filter((f) => !inSource.has(logicalFileKey(f)));
  await checkFilesExist(ctx, latest.tableRoot, toAdd, source.version);

  const now = ctx.clock();
  const metadata = restoredMetadata(source.metadata, latest.metadata);
  const protocol = protocolUnion(source.protocol, latest.protocol);
  checkWriteProtocol(protocol, metadata);
  // Spark's RESTORE commit carries both, changed or not (golden table
  // basic-with-inserts-overwrite-restore).
  const actions: Action[] = [{ metaData: metadata }, { protocol }];
  for (const f of toAdd) actions.push({ add: { ...f, dataChange: true } });
  for (const f of toRemove) actions.push({ remove: removeOf(f, now) });
  actions.push(...restoredDomains(source, latest));

  const metrics: RestoreMetrics = {
    tableSizeAfterRestore: bytesOf(source.files),
    numOfFilesAfterRestore: source.files.length,
    numRemovedFiles: toRemove.length,
    numRestoredFiles: toAdd.length,
    removedFilesSize: bytesOf(toRemove),
    restoredFilesSize: bytesOf(toAdd),
  };
  const result = await commit(
    ctx,
    t,
    restoreOperation(
      {
        version: req.version ?? null,
        timestamp:
          req.timestamp === undefined ? null : javaTimestamp(parseTimestamp(req.timestamp)),
      },
      Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, String(v)])),
      source.version,
    ),
    actions,
  );
  return { version: result.version, restoredVersion: source.version, metrics };
}

/** The snapshot at the requested version or timestamp, with RESTORE's own range errors. */
async function snapshotToRestore(
  ctx: SiltContext,
  entry: Parameters<typeof readSnapshot>[1],
  req: RestoreRequest,
): Promise<Snapshot> {
  try {
    return await readSnapshot(
      ctx,
      entry,
      req.version !== undefined ? { version: req.version } : { timestamp: req.timestamp },
    );
  } catch (err) {
    if (!(err instanceof SiltError)) throw err;
    const found = err.parameters;
    if (err.errorClass === "DELTA_VERSION_NOT_FOUND") {
      throw siltError("DELTA_CANNOT_RESTORE_TABLE_VERSION", {
        version: req.version,
        startVersion: found.earliest,
        endVersion: found.latest,
      });
    }
    if (err.errorClass === "DELTA_TIMESTAMP_GREATER_THAN_COMMIT") {
      throw siltError("DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER", {
        requestedTimestamp: found.providedTimestamp,
        latestTimestamp: found.latestTimestamp,
      });
    }
    if (err.errorClass === "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION") {
      throw siltError("DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER", {
        requestedTimestamp: found.providedTimestamp,
        earliestTimestamp: found.earliestTimestamp,
      });
    }
    throw err;
  }
}

async function checkFilesExist(
  ctx: SiltContext,
  tableRoot: string,
  files: AddFile[],
  version: number,
): Promise<void> {
  const missing: string[] = [];
  const concurrency = 16;
  for (let i = 0; i < files.length && missing.length < 100; i += concurrency) {
    await Promise.all(
      files.slice(i, i + concurrency).map(async (f) => {
        const keys = [fileKey(tableRoot, f.path)];
        const dv = f.deletionVector;
        if (dv && dv.storageType !== "i") keys.push(dvFileKey(dv, tableRoot));
        for (const key of keys) {
          if ((await ctx.store.head(key)) === undefined) missing.push(key.slice(tableRoot.length));
        }
      }),
    );
  }
  if (missing.length > 0) {
    throw siltError("SILT_RESTORE_FILES_MISSING", {
      version,
      missing: missing.slice(0, 100).join(","),
    });
  }
}

/** S's metaData, keeping the column-mapping id high-water mark at least L's. */
function restoredMetadata(source: Metadata, latest: Metadata): Metadata {
  const configuration = { ...source.configuration };
  const maxId = Math.max(
    configuredMaxColumnId(source.configuration),
    configuredMaxColumnId(latest.configuration),
  );
  if (maxId > 0 && configuration[COLUMN_MAPPING_MAX_ID_KEY] !== undefined) {
    configuration[COLUMN_MAPPING_MAX_ID_KEY] = String(maxId);
  }
  return { ...source, configuration };
}

/**
 * User domains back to S's: re-added where S had another value, tombstoned where S had none.
 * Delta's own domains (`delta.*`, e.g. the row-tracking high-water mark) stay as they are.
 */
function restoredDomains(source: Snapshot, latest: Snapshot): Action[] {
  const out: Action[] = [];
  const user = (d: DomainMetadata) => !d.domain.startsWith("delta.");
  for (const d of source.domainMetadata.values()) {
    if (!user(d)) continue;
    if (latest.domainMetadata.get(d.domain)?.configuration !== d.configuration) {
      out.push({ domainMetadata: { ...d, removed: false } });
    }
  }
  for (const d of latest.domainMetadata.values()) {
    if (user(d) && !source.domainMetadata.has(d.domain)) {
      out.push({ domainMetadata: { ...d, removed: true } });
    }
  }
  return out;
}
