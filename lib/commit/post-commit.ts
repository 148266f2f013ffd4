/**
 * What follows a published commit without being part of it: the automatic checkpoint.
 *
 * 1. Only published commits come here (the commit loop checks): on catalogManaged tables a
 *    checkpoint may cover published versions only.
 * 2. The commit crosses `delta.checkpointInterval` when version > 0 and version % interval = 0.
 *    The interval is exact when the commit carries a metaData; otherwise it is the one this
 *    process last saw for the table (10, Delta's default, until then). A stale interval can only
 *    move a checkpoint, never make one wrong: step 3 checks again against the real configuration.
 * 3. Build the state at that version, streamed from the previous checkpoint and the commits after
 *    it when there is one (else from a snapshot load of the published log), remember its interval,
 *    and write the checkpoint if the version crosses it.
 * 4. Errors are logged and swallowed: the commit already stands, and the next crossing writes a
 *    checkpoint that covers this one's versions as well.
 * 5. Dispatch: "await" (the default) finishes before the commit call returns, the only safe choice
 *    on Lambda, which freezes work still running after the response; "background" lets a
 *    long-lived server answer first (flushPostCommitWork awaits what is in flight); "off" for
 *    callers that checkpoint on their own schedule.
 */
import type { Action } from "../delta/actions.ts";
import {
  type CheckpointResult,
  checkpointStateFromLog,
  snapshotState,
  type WriteCheckpointOptions,
  writeCheckpointState,
} from "../delta/checkpoint-writer.ts";
import { loadSnapshot } from "../delta/snapshot.ts";
import { checkpointInterval, DEFAULT_CHECKPOINT_INTERVAL } from "../delta/table-config.ts";
import { jsonLogger, type Logger } from "../logger.ts";
import type { ObjectStore } from "../storage/object-store.ts";

export interface PublishedCommit {
  store: ObjectStore;
  /** "" or ending in "/". */
  tableRoot: string;
  version: number;
  /** The commit's actions (commitInfo excluded). */
  actions: readonly Action[];
}

export type PostCommitMode = "await" | "background" | "off";

export interface PostCommitConfig {
  mode: PostCommitMode;
  logger: Logger;
  checkpoint: WriteCheckpointOptions;
}

// Successful checkpoints are routine; by default only failures reach the log.
const failuresOnly: Logger = {
  ...jsonLogger({ component: "post-commit" }),
  info: () => {},
};

const config: PostCommitConfig = { mode: "await", logger: failuresOnly, checkpoint: {} };
const inFlight = new Set<Promise<void>>();
/** Last interval seen per table, per store (table roots are only unique within a store). */
const intervals = new WeakMap<ObjectStore, Map<string, number>>();

/** Changes how post-commit work runs; returns the previous settings so tests can restore them. */
export function configurePostCommit(update: Partial<PostCommitConfig>): PostCommitConfig {
  const previous = { ...config };
  Object.assign(config, update);
  return previous;
}

/** Runs the post-commit work of a published commit. Never throws. */
export async function afterPublishedCommit(commit: PublishedCommit): Promise<void> {
  if (config.mode === "off") return;
  const { logger } = config;
  const task = autoCheckpoint(commit).then(
    (result) => {
      if (result === undefined) return;
      logger.info("checkpoint written", {
        tableRoot: commit.tableRoot,
        version: result.version,
        sidecars: result.sidecars.length,
        actions: result.numActions,
        bytes: result.sizeInBytes,
      });
    },
    (err: unknown) => {
      logger.warn("checkpoint failed; the next interval retries", {
        tableRoot: commit.tableRoot,
        version: commit.version,
        error: err instanceof Error ? err.message : String(err),
      });
    },
  );
  if (config.mode === "await") return task;
  inFlight.add(task);
  void task.finally(() => inFlight.delete(task));
}

/** Resolves once every background task started so far has finished. */
export async function flushPostCommitWork(): Promise<void> {
  while (inFlight.size > 0) await Promise.all([...inFlight]);
}

/**
 * Steps 2–3: writes the checkpoint for the commit's version if it crosses the table's interval;
 * undefined when it does not. Throws on failure.
 */
export async function autoCheckpoint(
  commit: PublishedCommit,
  opts: WriteCheckpointOptions = config.checkpoint,
): Promise<CheckpointResult | undefined> {
  const { store, tableRoot, version } = commit;
  let known = intervals.get(store);
  if (known === undefined) {
    known = new Map();
    intervals.set(store, known);
  }
  for (const a of commit.actions) {
    if ("metaData" in a) known.set(tableRoot, checkpointInterval(a.metaData.configuration));
  }
  const guess = known.get(tableRoot) ?? DEFAULT_CHECKPOINT_INTERVAL;
  if (version <= 0 || version % guess !== 0) return undefined;

  const state =
    (await checkpointStateFromLog(store, tableRoot, version)) ??
    snapshotState(await loadPublished(store, tableRoot, version));
  const interval = checkpointInterval(state.metadata.configuration);
  known.set(tableRoot, interval);
  if (version % interval !== 0) return undefined;
  return writeCheckpointState(store, tableRoot, state, opts);
}

/** The published state at `version`: without the catalog's view, replay sees only `v.json`s. */
async function loadPublished(store: ObjectStore, tableRoot: string, version: number) {
  const latest = await loadSnapshot(store, tableRoot);
  return latest.version === version ? latest : loadSnapshot(store, tableRoot, { version });
}
