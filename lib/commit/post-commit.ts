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
 * 6. Configuration: the commit's own (CommitRequest.postCommit) over the context's
 *    (SiltContext.postCommit, which the commit builder passes; the Lambda runtime's comes from
 *    SILT_POST_COMMIT) over the defaults: "await", failures logged, default checkpoint options.
 * 7. Tombstone expiry in the checkpoint uses the commit's clock (the context's), not the wall
 *    clock, unless the checkpoint options fix `now`.
 *
 * Log cleanup is not post-commit work: the maintenance run does it (lib/delta/log-cleanup.ts).
 */
import type { Action } from "../delta/actions.ts";
import { checkpointStateFromLog, snapshotState } from "../delta/checkpoint-state.ts";
import { loadSnapshot } from "../delta/snapshot.ts";
import { checkpointInterval, DEFAULT_CHECKPOINT_INTERVAL } from "../delta/table-config.ts";
import { jsonLogger, type Logger } from "../logger.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import {
  type CheckpointResult,
  type WriteCheckpointOptions,
  writeCheckpointState,
} from "./checkpoint-writer.ts";

export interface PublishedCommit {
  store: ObjectStore;
  /** "" or ending in "/". */
  tableRoot: string;
  version: number;
  /** The commit's actions (commitInfo excluded). */
  actions: readonly Action[];
  /** The committer's clock (epoch ms), for tombstone expiry; default Date.now. */
  clock?: () => number;
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

const DEFAULTS: PostCommitConfig = { mode: "await", logger: failuresOnly, checkpoint: {} };
const inFlight = new Set<Promise<void>>();
/** Last interval seen per table, per store (table roots are only unique within a store). */
const intervals = new WeakMap<ObjectStore, Map<string, number>>();

/** Settings of one commit's post-commit work (step 6): `given` over the defaults. */
function postCommitConfig(given: Partial<PostCommitConfig> = {}): PostCommitConfig {
  return {
    mode: given.mode ?? DEFAULTS.mode,
    logger: given.logger ?? DEFAULTS.logger,
    checkpoint: given.checkpoint ?? DEFAULTS.checkpoint,
  };
}

/**
 * Runs the post-commit work of a published commit. Never throws. Resolves to the checkpoint
 * written, or undefined when none was (or, in "background" mode, none is known yet).
 */
export async function afterPublishedCommit(
  commit: PublishedCommit,
  given: Partial<PostCommitConfig> = {},
): Promise<CheckpointResult | undefined> {
  const { mode, logger, checkpoint } = postCommitConfig(given);
  if (mode === "off") return undefined;
  const opts: WriteCheckpointOptions = {
    ...checkpoint,
    now: checkpoint.now ?? (commit.clock ?? Date.now)(),
  };
  const task = autoCheckpoint(commit, opts).then(
    (result) => {
      if (result === undefined) return undefined;
      logger.info("checkpoint written", {
        tableRoot: commit.tableRoot,
        version: result.version,
        sidecars: result.sidecars.length,
        actions: result.numActions,
        bytes: result.sizeInBytes,
      });
      return result;
    },
    (err: unknown) => {
      logger.warn("checkpoint failed; the next interval retries", {
        tableRoot: commit.tableRoot,
        version: commit.version,
        error: err instanceof Error ? err.message : String(err),
      });
      return undefined;
    },
  );
  if (mode === "await") return task;
  const settled = task.then(() => undefined);
  inFlight.add(settled);
  void settled.finally(() => inFlight.delete(settled));
  return undefined;
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
  opts: WriteCheckpointOptions = {},
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
