/**
 * Publishing ratified commits into `_delta_log/` (DESIGN §3 step 5), and the catalog view that
 * readers merge with the published log.
 *
 * publishUpTo:
 * 1. Read the arbiter's unpublished suffix (ascending) and keep the versions <= the target.
 * 2. For each, in version order: copy the staged file to `<tableRoot>_delta_log/<v20>.json` with
 *    copy-if-absent. An existing target means someone already published it: the arbiter row is
 *    immutable, so the only bytes anyone ever copies there are the same staged file.
 * 3. Mark the row published, and only after the copy, so `published` implies the file exists.
 * 4. Stop at the first failure: later versions must not appear before an earlier one does, and
 *    the published flags stay a prefix (the arbiter's `tail` relies on that).
 *
 * Any reader or writer may run this at any time, concurrently with others (cooperative
 * publishing): every step is idempotent and never overwrites.
 *
 * republish: a published file that turned out damaged (lib/delta/snapshot.ts CorruptCommitError)
 * is rewritten from the staged file its arbiter row names, when that file still parses: the log
 * must hold what was ratified. This is the one write that replaces a published file.
 *
 * catalogView: the latest ratified version plus the unpublished commits with their staged keys.
 * A reader lists `_delta_log/` for published commits, takes these for the rest (preferring them
 * when both exist), and ignores any log file above `latestRatified`.
 */
import { commitFileName, LOG_DIR, parseActions } from "../delta/actions.ts";
import type { RatifiedCommit } from "../delta/snapshot.ts";
import { siltError } from "../errors.ts";
import { ObjectNotFoundError, type ObjectStore } from "../storage/object-store.ts";
import type { CommitArbiter, RatifiedRow } from "./arbiter.ts";

export type { RatifiedCommit };

export interface CatalogView {
  /** -1 when the table has no ratified version. */
  latestRatified: number;
  /** Ratified but not yet published, ascending, key = staged object key. */
  ratified: RatifiedCommit[];
}

/** `<tableRoot>_delta_log/<v20>.json`; tableRoot is "" or ends with "/". */
export const publishedKey = (tableRoot: string, version: number): string =>
  `${tableRoot}${LOG_DIR}${commitFileName(version)}`;

/**
 * Publishes every ratified, unpublished version <= `version`, in order. Returns the versions this
 * call saw unpublished and finished (some may have been copied by a concurrent publisher).
 */
export async function publishUpTo(
  store: ObjectStore,
  arbiter: CommitArbiter,
  tableId: string,
  tableRoot: string,
  version: number,
): Promise<number[]> {
  const rows = (await arbiter.unpublished(tableId)).filter((r) => r.version <= version);
  return publishRows(store, arbiter, tableRoot, rows);
}

/** Step 2–4 of publishUpTo over rows the caller already read (ascending, contiguous). */
export async function publishRows(
  store: ObjectStore,
  arbiter: CommitArbiter,
  tableRoot: string,
  rows: RatifiedRow[],
): Promise<number[]> {
  const done: number[] = [];
  for (const row of rows) {
    const target = publishedKey(tableRoot, row.version);
    try {
      await store.copyIfAbsent(row.stagedKey, target);
    } catch (err) {
      // A staged file may be cleaned up once its version is published; then the target exists.
      if (!(err instanceof ObjectNotFoundError) || (await store.head(target)) === undefined) {
        throw err instanceof ObjectNotFoundError
          ? siltError("SILT_STAGED_COMMIT_MISSING", {
              version: row.version,
              tableId: row.tableId,
              stagedKey: row.stagedKey,
            })
          : err;
      }
    }
    await arbiter.markPublished(row.tableId, row.version);
    done.push(row.version);
  }
  return done;
}

/**
 * Rewrites the published file of `version` from its ratified staged file (see module comment).
 * False when the arbiter has no row for it or the staged file is gone or damaged too.
 */
export async function republish(
  store: ObjectStore,
  arbiter: CommitArbiter,
  tableId: string,
  tableRoot: string,
  version: number,
): Promise<boolean> {
  const [row] = await arbiter.range(tableId, version, version);
  if (row === undefined) return false;
  let bytes: Uint8Array;
  try {
    bytes = await store.get(row.stagedKey);
  } catch (err) {
    if (err instanceof ObjectNotFoundError) return false;
    throw err;
  }
  try {
    if (parseActions(new TextDecoder().decode(bytes)).length === 0) return false;
  } catch {
    return false;
  }
  await store.put(publishedKey(tableRoot, version), bytes);
  return true;
}

/** What a reader needs from the catalog before loading a snapshot (see module comment). */
export async function catalogView(arbiter: CommitArbiter, tableId: string): Promise<CatalogView> {
  const { latest, unpublished } = await arbiter.tail(tableId);
  return {
    latestRatified: latest?.version ?? -1,
    ratified: unpublished.map((r) => ({
      version: r.version,
      key: r.stagedKey,
      inCommitTimestamp: r.inCommitTimestamp,
    })),
  };
}
