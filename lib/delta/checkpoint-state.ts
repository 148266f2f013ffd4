/**
 * What a checkpoint records (CheckpointState), taken from a loaded Snapshot or streamed from the
 * previous checkpoint plus the commits after it (`checkpointStateFromLog`), which reads the
 * previous checkpoint's sidecars (or its inline Parquet file actions) one row group at a time so
 * the whole file list is never in memory. lib/commit/checkpoint-writer.ts writes it; log cleanup
 * reads a table's configuration through it.
 */
import type { ObjectStore } from "../storage/object-store.ts";
import {
  type Action,
  type AddFile,
  type DomainMetadata,
  type Metadata,
  type Protocol,
  parseActions,
  type RemoveFile,
  type Sidecar,
  type Txn,
} from "./actions.ts";
import {
  type LastCheckpoint,
  parquetActionsByRowGroup,
  readLastCheckpoint,
  readParquetActions,
  sidecarKey,
} from "./checkpoint-reader.ts";
import { type CheckpointFile, listLog } from "./log-listing.ts";
import { checkReadProtocol, logicalFileKey, type Snapshot } from "./snapshot.ts";

const COMMIT_READ_CONCURRENCY = 32;

export type FileAction = { add: AddFile } | { remove: RemoveFile };

/** What a checkpoint records, with file actions as a (possibly lazy) stream. */
export interface CheckpointState {
  version: number;
  protocol: Protocol;
  metadata: Metadata;
  txns: Iterable<Txn>;
  domainMetadata: Iterable<DomainMetadata>;
  /** Live adds and remove tombstones, each logical file once, in any order. */
  fileActions: Iterable<FileAction> | AsyncIterable<FileAction>;
}

export function snapshotState(snapshot: Snapshot): CheckpointState {
  return {
    version: snapshot.version,
    protocol: snapshot.protocol,
    metadata: snapshot.metadata,
    txns: snapshot.txns.values(),
    domainMetadata: snapshot.domainMetadata.values(),
    fileActions: (function* () {
      for (const add of snapshot.files) yield { add };
      for (const remove of snapshot.tombstones) yield { remove };
    })(),
  };
}

// ---------------------------------------------------------------------------------------------
// Streaming state from the previous checkpoint

/**
 * The state at `version` as the newest checkpoint at or below it plus the commits after it,
 * without loading the file list: non-file actions and the later commits' file actions are read
 * up front (the commits since one checkpoint are few), the checkpoint's file actions (sidecars,
 * or inline in its Parquet parts) are read one row group at a time while the new checkpoint is
 * written, and any file a later commit touched is skipped there and taken from the commits
 * instead. Undefined when no readable checkpoint at or below `version` connects to it through
 * published commits; callers then load a snapshot.
 */
export async function checkpointStateFromLog(
  store: ObjectStore,
  tableRoot: string,
  version: number,
): Promise<CheckpointState | undefined> {
  const root = normalizeRoot(tableRoot);
  const hint = await readLastCheckpoint(store, root);
  const from = hint !== undefined && hint.version <= version ? hint.version : 0;
  const listing = await listLog(store, root, { fromVersion: from });
  const commits = new Map(listing.commits.map((c) => [c.version, c]));
  if (!commits.has(version)) return undefined;
  // Newest usable checkpoint at or below the target, with every commit after it present.
  let gapFloor = version;
  while (gapFloor > from && commits.has(gapFloor - 1)) gapFloor--;
  const candidates = listing.checkpoints
    .filter((c) => c.version <= version && c.version >= gapFloor - 1)
    .reverse();
  for (const previous of candidates) {
    let top: TopLevel;
    try {
      top = await readTopLevel(store, previous, hint);
    } catch {
      continue;
    }
    const later: Action[][] = [];
    // Bounded parallelism: the gap is one interval normally, but any length after failures.
    for (let v = previous.version + 1; v <= version; v += COMMIT_READ_CONCURRENCY) {
      const batch = Array.from(
        { length: Math.min(COMMIT_READ_CONCURRENCY, version - v + 1) },
        async (_, i) =>
          parseActions(new TextDecoder().decode(await store.get(commits.get(v + i)!.key))),
      );
      later.push(...(await Promise.all(batch)));
    }
    return overlay(store, root, version, top, later);
  }
  return undefined;
}

/**
 * A checkpoint's top-level content: its non-file actions and sidecar list in memory (they are
 * few), and the file actions it holds inline as a stream. Inline file actions are few in Silt's
 * own checkpoints (the writer switches to sidecars), but a classic or multi-part checkpoint that
 * another engine wrote may hold every add of a large table; a Parquet part is therefore read
 * twice from the same bytes: once for the non-file columns only, then for add and remove one row
 * group at a time.
 */
interface TopLevel {
  actions: Action[];
  inline: () => AsyncIterable<FileAction>;
}

async function readTopLevel(
  store: ObjectStore,
  checkpoint: CheckpointFile,
  hint: LastCheckpoint | undefined,
): Promise<TopLevel> {
  const v2 = hint?.v2Checkpoint;
  if (
    checkpoint.kind === "v2" &&
    hint?.version === checkpoint.version &&
    v2?.nonFileActions !== undefined &&
    v2.sidecarFiles !== undefined &&
    checkpoint.keys[0]!.endsWith(`/${v2.path}`)
  ) {
    const actions = [...v2.nonFileActions, ...v2.sidecarFiles.map((sidecar) => ({ sidecar }))];
    return { actions, inline: async function* () {} };
  }
  const parts = await Promise.all(checkpoint.keys.map((key) => store.get(key)));
  if (checkpoint.format === "json") {
    // Only V2 checkpoints come as JSON, and writers put a large table's files in sidecars.
    const all = parts.flatMap((bytes) => parseActions(new TextDecoder().decode(bytes)));
    const files = all.filter((a): a is FileAction => "add" in a || "remove" in a);
    return {
      actions: all.filter((a) => !("add" in a || "remove" in a)),
      inline: async function* () {
        yield* files;
      },
    };
  }
  const actions: Action[] = [];
  for (const bytes of parts) actions.push(...(await readParquetActions(bytes, NON_FILE_COLUMNS)));
  return {
    actions,
    inline: async function* () {
      for (const bytes of parts) {
        for await (const group of fileActionsByRowGroup(bytes)) yield* group;
      }
    },
  };
}

const NON_FILE_COLUMNS = [
  "protocol",
  "metaData",
  "txn",
  "domainMetadata",
  "checkpointMetadata",
  "sidecar",
] as const;

function overlay(
  store: ObjectStore,
  root: string,
  version: number,
  top: TopLevel,
  later: Action[][],
): CheckpointState {
  let protocol: Protocol | undefined;
  let metadata: Metadata | undefined;
  const txns = new Map<string, Txn>();
  const domains = new Map<string, DomainMetadata>();
  const sidecars: Sidecar[] = [];
  const changed = new Map<string, FileAction>();
  const applyNonFile = (a: Action) => {
    if ("protocol" in a) protocol = a.protocol;
    else if ("metaData" in a) metadata = a.metaData;
    else if ("txn" in a) txns.set(a.txn.appId, a.txn);
    else if ("domainMetadata" in a) domains.set(a.domainMetadata.domain, a.domainMetadata);
  };
  for (const a of top.actions) {
    if ("sidecar" in a) sidecars.push(a.sidecar);
    else applyNonFile(a);
  }
  for (const actions of later) {
    for (const a of actions) {
      if ("add" in a) changed.set(logicalFileKey(a.add), { add: a.add });
      else if ("remove" in a) changed.set(logicalFileKey(a.remove), { remove: a.remove });
      else applyNonFile(a);
    }
  }
  if (protocol === undefined || metadata === undefined) {
    throw new Error(`Cannot rebuild the protocol and metadata of version ${version}`);
  }
  checkReadProtocol(protocol);
  const unchanged = (a: FileAction) => !changed.has(logicalFileKey("add" in a ? a.add : a.remove));
  return {
    version,
    protocol,
    metadata,
    txns: txns.values(),
    domainMetadata: [...domains.values()].filter((d) => !d.removed),
    fileActions: (async function* () {
      for await (const a of top.inline()) if (unchanged(a)) yield a;
      for (const sidecar of sidecars) {
        const bytes = await store.get(sidecarKey(root, sidecar.path));
        for await (const actions of fileActionsByRowGroup(bytes)) {
          for (const a of actions) if (unchanged(a)) yield a;
        }
      }
      yield* changed.values();
    })(),
  };
}

/** The add and remove actions of a Parquet checkpoint part or sidecar, one row group at a time. */
async function* fileActionsByRowGroup(bytes: Uint8Array): AsyncGenerator<FileAction[]> {
  for await (const group of parquetActionsByRowGroup(bytes, ["add", "remove"])) {
    yield group.filter((a): a is FileAction => "add" in a || "remove" in a);
  }
}

/** `root` with a trailing slash, or "" for the store root. */
export const normalizeRoot = (root: string): string =>
  root === "" || root.endsWith("/") ? root : `${root}/`;
