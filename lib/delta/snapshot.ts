/**
 * Log replay: the state of a table at a version.
 *
 * 1. List `_delta_log/` once (from the `_last_checkpoint` hint when loading the latest version, so
 *    long logs stay cheap), and overlay the commits the catalog has ratified but perhaps not yet
 *    published; the catalog's entry wins over a published `v.json`, and nothing above the
 *    catalog's latest ratified version counts.
 * 2. Pick the target version: the latest, a version, or the latest version committed at or before
 *    a timestamp (in-commit timestamps where enabled, file modification times before that).
 * 3. Pick the newest checkpoint at or below the target from which the commits up to the target
 *    are contiguous; if it cannot be read, try older ones, then replay from version 0.
 * 4. Replay checkpoint then commits: last protocol and metaData win, txn per appId, domain
 *    metadata per domain (tombstones dropped), and files keyed by (path, DV unique id) where the
 *    newest add or remove wins.
 * 5. Refuse tables whose protocol needs reader features this engine does not implement.
 *
 * A commit file that is not newline-delimited JSON, holds no actions, or lacks the commitInfo
 * that in-commit timestamps require is corrupt: the load fails with CorruptCommitError naming it,
 * never reads it as an empty commit (the caller may repair it from the arbiter's ratified copy:
 * lib/ops/open-table.ts).
 */

import { SiltError, siltError } from "../errors.ts";
import { ObjectNotFoundError, type ObjectStore } from "../storage/object-store.ts";
import {
  javaTimestamp,
  parseTimestamp as parseTimestampText,
  secondsTimestamp,
} from "../values/datetime-text.ts";
import { floorDiv } from "../values/floor-div.ts";
import {
  type Action,
  type AddFile,
  type CommitInfo,
  commitFileName,
  type DomainMetadata,
  LOG_DIR,
  type Metadata,
  type Protocol,
  parseActions,
  type RemoveFile,
  type Txn,
} from "./actions.ts";
import { type LastCheckpoint, readCheckpoint, readLastCheckpoint } from "./checkpoint-reader.ts";
import { dvUniqueId } from "./deletion-vectors.ts";
import { type CheckpointFile, type LogListing, listLog } from "./log-listing.ts";

/** Reader features whose data this engine reads correctly. Writers reuse the list. */
export const SUPPORTED_READER_FEATURES: ReadonlySet<string> = new Set([
  "catalogManaged",
  "catalogOwned-preview",
  "deletionVectors",
  "v2Checkpoint",
  "vacuumProtocolCheck",
  "columnMapping",
  "timestampNtz",
]);

/** Highest minReaderVersion understood (3 = table features). */
export const MAX_READER_VERSION = 3;

/** A commit the catalog ratified for a version, possibly not yet published as `v.json`. */
export interface RatifiedCommit {
  version: number;
  /** Object key of the staged commit file, relative to the store root. */
  key: string;
  inCommitTimestamp?: number;
}

export interface SnapshotOptions {
  /** Time travel to this version. */
  version?: number;
  /** Time travel to the latest version committed at or before this instant (epoch ms or text). */
  timestamp?: number | string;
  /** Ratified commits from the catalog; they take precedence over published files. */
  ratified?: RatifiedCommit[];
  /** The catalog's latest ratified version; published files above it are ignored. */
  latestRatified?: number;
}

export interface Snapshot {
  /** Key prefix of the table ("" or ending in "/"). */
  tableRoot: string;
  version: number;
  /** Commit timestamp of `version` (epoch ms): its in-commit timestamp, else the file's mtime. */
  timestamp: number;
  protocol: Protocol;
  metadata: Metadata;
  /** Live files. */
  files: AddFile[];
  /** Remove tombstones still in the state. */
  tombstones: RemoveFile[];
  txns: Map<string, Txn>;
  domainMetadata: Map<string, DomainMetadata>;
  /** Version of the checkpoint the replay started from, if any. */
  checkpointVersion: number | undefined;
  /**
   * Set when time travel picked a version older than the latest: files it references may have
   * been removed since and deleted by VACUUM, by design rather than by damage.
   */
  historical?: true;
}

export interface CommitHistoryEntry {
  version: number;
  timestamp: number;
  commitInfo: CommitInfo;
}

/** A commit file that cannot be what was committed (see the module comment). */
export class CorruptCommitError extends SiltError {
  readonly version: number;
  /** Object key of the damaged file. */
  readonly key: string;
  /** Whether the file was a staged (catalog-ratified) commit rather than a published one. */
  readonly staged: boolean;

  constructor(ref: { version: number; key: string; staged: boolean }, problem: string) {
    const err = siltError("DELTA_STATE_RECOVER_ERROR:CORRUPT_COMMIT", {
      key: ref.key,
      version: ref.version,
      problem,
    });
    super(err.errorClass, err.message, err.status, err.sqlstate, err.parameters);
    this.version = ref.version;
    this.key = ref.key;
    this.staged = ref.staged;
  }
}

const CONCURRENCY = 32;
/** The commitInfo line of a Spark commit rarely exceeds this; longer ones cost one more GET. */
const HEAD_BYTES = 16 * 1024;

// ---------------------------------------------------------------------------------------------
// Public API

export async function loadSnapshot(
  store: ObjectStore,
  tableRoot: string,
  opts: SnapshotOptions = {},
): Promise<Snapshot> {
  const ctx = newContext(store, tableRoot, opts);
  if (opts.version !== undefined && opts.timestamp !== undefined) {
    throw siltError("INVALID_TIME_TRAVEL_SPEC");
  }
  if (opts.version === undefined && opts.timestamp === undefined) return loadLatest(ctx);

  const view = makeView(ctx, await listLog(store, tableRoot));
  const latest = requireLatest(ctx, view);
  if (opts.version !== undefined) {
    const v = opts.version;
    if (!Number.isInteger(v) || v < 0 || v > latest) throw versionNotFound(view, v);
    const earliest = earliestVersion(view);
    if (earliest !== undefined && v < earliest && !reconstructable(view, v)) {
      throw versionNotFound(view, v);
    }
    return historical(await build(ctx, view, v), latest);
  }
  const ts = parseTimestamp(opts.timestamp!);
  const latestSnapshot = await build(ctx, view, latest);
  const v = await versionAtTimestamp(ctx, view, latestSnapshot, ts);
  return v === latest ? latestSnapshot : historical(await build(ctx, view, v), latest);
}

function historical(snapshot: Snapshot, latest: number): Snapshot {
  return snapshot.version < latest ? { ...snapshot, historical: true } : snapshot;
}

/**
 * Commit infos newest first (for DESCRIBE HISTORY), with each commit's timestamp: its in-commit
 * timestamp when it carries one, else the commit file's modification time.
 */
export async function readCommitInfos(
  store: ObjectStore,
  tableRoot: string,
  opts: { ratified?: RatifiedCommit[]; latestRatified?: number; limit?: number } = {},
): Promise<CommitHistoryEntry[]> {
  const ctx = newContext(store, tableRoot, opts);
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  let view: LogView | undefined;
  if (Number.isFinite(limit)) {
    // The newest `limit` commits are usually all above the last checkpoint.
    const hint = await readLastCheckpoint(store, tableRoot);
    if (hint !== undefined && (ctx.cap === undefined || hint.version <= ctx.cap)) {
      const partial = makeView(ctx, await listLog(store, tableRoot, { fromVersion: hint.version }));
      if (partial.versions.length >= limit) view = partial;
    }
  }
  view ??= makeView(ctx, await listLog(store, tableRoot));
  requireLatest(ctx, view);
  const versions = view.versions.slice().reverse().slice(0, limit);
  return mapLimit(versions, CONCURRENCY, async (version) => {
    const ref = view.commits.get(version)!;
    const commitInfo = (await readCommitInfo(ctx, ref)) ?? {};
    const ict = commitInfo.inCommitTimestamp;
    const timestamp = typeof ict === "number" ? ict : (ref.ict ?? (await refMtime(ctx, ref)));
    return { version, timestamp, commitInfo };
  });
}

/** Fails unless every reader feature of the protocol is supported. */
export function checkReadProtocol(protocol: Protocol): void {
  if (protocol.minReaderVersion > MAX_READER_VERSION) {
    throw siltError("DELTA_INVALID_PROTOCOL_VERSION:READ", {
      minReaderVersion: protocol.minReaderVersion,
      minWriterVersion: protocol.minWriterVersion,
      MAX_READER_VERSION,
    });
  }
  if (protocol.minReaderVersion < 3) return;
  const missing = (protocol.readerFeatures ?? []).filter((f) => !SUPPORTED_READER_FEATURES.has(f));
  if (missing.length > 0)
    throw siltError("DELTA_UNSUPPORTED_FEATURES_FOR_READ", { features: missing.join(", ") });
}

/**
 * Identity of a logical file, (path, DV unique id). Paths are compared decoded and with a
 * `file:` scheme dropped, so `/a%20b`, `file:/a b` and `file:///a%20b` are one file, as they are
 * for Spark, which qualifies paths before comparing them.
 */
export function logicalFileKey(file: AddFile | RemoveFile): string {
  const dv = file.deletionVector;
  return dv ? `${canonicalPath(file.path)}\u0000${dvUniqueId(dv)}` : canonicalPath(file.path);
}

/**
 * Epoch ms for a time-travel timestamp: a number as is; text as Spark casts it to a timestamp
 * (`YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS[.f]]`, ISO-8601 with an optional zone; UTC without one).
 */
export function parseTimestamp(ts: number | string): number {
  if (typeof ts === "number") {
    if (Number.isFinite(ts)) return Math.floor(ts);
    throw invalidTimestamp(String(ts));
  }
  const micros = parseTimestampText(ts, false);
  if (micros === undefined) throw invalidTimestamp(ts);
  return Number(floorDiv(BigInt(micros), 1000n));
}

// ---------------------------------------------------------------------------------------------
// Log view: published commits, ratified overrides and checkpoints, capped at latestRatified.

interface CommitRef {
  version: number;
  key: string;
  /** The published `v.json`, tried when a staged file was already cleaned up. */
  publishedKey: string;
  staged: boolean;
  lastModified?: number;
  ict?: number;
}

interface LogView {
  commits: Map<number, CommitRef>;
  /** Ascending versions that have a commit. */
  versions: number[];
  /** Ascending. */
  checkpoints: CheckpointFile[];
  latest: number | undefined;
  listedFromVersion: number;
}

interface Ctx {
  store: ObjectStore;
  tableRoot: string;
  ratified: Map<number, RatifiedCommit>;
  cap: number | undefined;
  /** One read per commit per call, shared by replay, timestamps and commit infos. */
  actions: Map<string, Promise<Action[]>>;
  mtimes: Map<string, Promise<number>>;
}

function newContext(
  store: ObjectStore,
  tableRoot: string,
  opts: { ratified?: RatifiedCommit[]; latestRatified?: number },
): Ctx {
  const cap = opts.latestRatified;
  const ratified = new Map<number, RatifiedCommit>();
  for (const r of opts.ratified ?? [])
    if (cap === undefined || r.version <= cap) ratified.set(r.version, r);
  return { store, tableRoot, ratified, cap, actions: new Map(), mtimes: new Map() };
}

function makeView(ctx: Ctx, listing: LogListing): LogView {
  const cap = ctx.cap ?? Number.POSITIVE_INFINITY;
  const commits = new Map<number, CommitRef>();
  for (const c of listing.commits) {
    if (c.version > cap) continue;
    commits.set(c.version, {
      version: c.version,
      key: c.key,
      publishedKey: c.key,
      staged: false,
      lastModified: c.lastModified,
    });
  }
  for (const r of ctx.ratified.values()) {
    const published = commits.get(r.version);
    const ref: CommitRef = {
      version: r.version,
      key: r.key,
      publishedKey: `${ctx.tableRoot}${LOG_DIR}${commitFileName(r.version)}`,
      staged: true,
    };
    // A staged file's own mtime is meaningless for history; the published copy's is no better,
    // but it is free, so keep it as the last resort.
    if (published?.lastModified !== undefined) ref.lastModified = published.lastModified;
    if (r.inCommitTimestamp !== undefined) ref.ict = r.inCommitTimestamp;
    commits.set(r.version, ref);
  }
  const versions = [...commits.keys()].sort((a, b) => a - b);
  const checkpoints = listing.checkpoints.filter((c) => c.version <= cap);
  let latest: number | undefined = Math.max(
    versions.at(-1) ?? -1,
    checkpoints.at(-1)?.version ?? -1,
  );
  // The catalog is authoritative about the latest version: a missing file is a gap, not an older
  // table.
  if (ctx.cap !== undefined && ctx.cap >= 0 && (versions.length > 0 || checkpoints.length > 0)) {
    latest = ctx.cap;
  }
  if (latest < 0) latest = undefined;
  return { commits, versions, checkpoints, latest, listedFromVersion: listing.listedFromVersion };
}

function requireLatest(ctx: Ctx, view: LogView): number {
  if (view.latest === undefined) {
    throw siltError("DELTA_TABLE_NOT_FOUND", {
      tableRoot: ctx.tableRoot === "" ? "/" : ctx.tableRoot,
      logDir: LOG_DIR,
    });
  }
  return view.latest;
}

/**
 * Oldest version reconstructable together with every version up to the latest: version 0 when
 * the commit chain is complete, else the oldest checkpoint that the chain reaches.
 */
function earliestVersion(view: LogView): number | undefined {
  const latest = view.latest;
  if (latest === undefined) return undefined;
  let start = latest + 1;
  if (view.commits.has(latest)) {
    start = latest;
    while (view.commits.has(start - 1)) start--;
  }
  if (start === 0 && view.listedFromVersion === 0) return 0;
  return view.checkpoints.find((c) => c.version >= start - 1 && c.version <= latest)?.version;
}

/** Highest version at or below `target` that replay cannot read a commit for; -1 if none. */
function highestGap(view: LogView, target: number): number {
  for (let v = target; v >= view.listedFromVersion; v--) if (!view.commits.has(v)) return v;
  return view.listedFromVersion - 1;
}

function reconstructable(view: LogView, target: number): boolean {
  const gap = highestGap(view, target);
  return gap === -1 || view.checkpoints.some((c) => c.version >= gap && c.version <= target);
}

// ---------------------------------------------------------------------------------------------
// Building a snapshot

/** Thrown when a listing that started at the checkpoint hint turns out to be insufficient. */
class NeedsFullListing extends Error {}

async function loadLatest(ctx: Ctx): Promise<Snapshot> {
  const hint = await readLastCheckpoint(ctx.store, ctx.tableRoot);
  if (hint !== undefined && (ctx.cap === undefined || hint.version <= ctx.cap)) {
    const view = makeView(
      ctx,
      await listLog(ctx.store, ctx.tableRoot, { fromVersion: hint.version }),
    );
    if (view.latest !== undefined && view.checkpoints.length > 0) {
      try {
        return await build(ctx, view, view.latest, hint);
      } catch (e) {
        if (!(e instanceof NeedsFullListing)) throw e;
      }
    }
  }
  const view = makeView(ctx, await listLog(ctx.store, ctx.tableRoot));
  return build(ctx, view, requireLatest(ctx, view), hint);
}

async function build(
  ctx: Ctx,
  view: LogView,
  target: number,
  hint?: LastCheckpoint,
): Promise<Snapshot> {
  const gap = highestGap(view, target);
  const candidates = view.checkpoints
    .filter((c) => c.version >= gap && c.version <= target)
    .reverse();
  let checkpoint: CheckpointFile | undefined;
  let checkpointActions: Action[] = [];
  let checkpointError: unknown;
  for (const c of candidates) {
    try {
      checkpointActions = await readCheckpoint(ctx.store, ctx.tableRoot, c, hint);
      checkpoint = c;
      break;
    } catch (e) {
      checkpointError ??= e;
    }
  }
  if (checkpoint === undefined && gap !== -1) {
    if (view.listedFromVersion > 0) throw new NeedsFullListing();
    throw missingLog(view, target, gap, checkpointError);
  }

  const start = checkpoint === undefined ? 0 : checkpoint.version + 1;
  const versions: number[] = [];
  for (let v = start; v <= target; v++) versions.push(v);
  const commits = await mapLimit(versions, CONCURRENCY, (v) =>
    readCommitActions(ctx, view.commits.get(v)!),
  );

  const state = new ReplayState();
  state.apply(checkpointActions);
  for (const actions of commits) state.apply(actions);
  if (state.protocol === undefined) throw stateRecoverError("Protocol", target);
  if (state.metadata === undefined) throw stateRecoverError("Metadata", target);
  checkReadProtocol(state.protocol);

  const ictEnabled = state.metadata.configuration["delta.enableInCommitTimestamps"] === "true";
  if (ictEnabled) requireCommitInfos(view, versions, commits, state.metadata.configuration);
  const timestamp = await versionTimestamp(ctx, view, target, ictEnabled, checkpoint);
  return {
    tableRoot: ctx.tableRoot,
    version: target,
    timestamp,
    protocol: state.protocol,
    metadata: state.metadata,
    files: [...state.files.values()],
    tombstones: [...state.tombstones.values()],
    txns: state.txns,
    domainMetadata: state.liveDomains(),
    checkpointVersion: checkpoint?.version,
  };
}

/**
 * With in-commit timestamps every commit from the enablement version on opens with a commitInfo
 * carrying its inCommitTimestamp (protocol, "In-Commit Timestamps"); one without it was damaged.
 */
function requireCommitInfos(
  view: LogView,
  versions: number[],
  commits: Action[][],
  configuration: Record<string, string>,
): void {
  const since = Number(configuration["delta.inCommitTimestampEnablementVersion"] ?? 0);
  versions.forEach((v, i) => {
    if (v < since) return;
    const info = findCommitInfo(commits[i] as Action[]);
    if (typeof info?.inCommitTimestamp !== "number") {
      throw new CorruptCommitError(
        view.commits.get(v) as CommitRef,
        "has no commitInfo with an inCommitTimestamp, which this table's in-commit timestamps require",
      );
    }
  });
}

class ReplayState {
  protocol: Protocol | undefined;
  metadata: Metadata | undefined;
  files = new Map<string, AddFile>();
  tombstones = new Map<string, RemoveFile>();
  txns = new Map<string, Txn>();
  domains = new Map<string, DomainMetadata>();

  /** Actions of one commit, or of a checkpoint (whose order carries no meaning). */
  apply(actions: Action[]): void {
    for (const a of actions) {
      if ("add" in a) {
        const key = logicalFileKey(a.add);
        this.tombstones.delete(key);
        this.files.set(key, a.add);
      } else if ("remove" in a) {
        const key = logicalFileKey(a.remove);
        this.files.delete(key);
        this.tombstones.set(key, a.remove);
      } else if ("metaData" in a) {
        this.metadata = a.metaData;
      } else if ("protocol" in a) {
        this.protocol = a.protocol;
      } else if ("txn" in a) {
        this.txns.set(a.txn.appId, a.txn);
      } else if ("domainMetadata" in a) {
        this.domains.set(a.domainMetadata.domain, a.domainMetadata);
      }
    }
  }

  liveDomains(): Map<string, DomainMetadata> {
    const out = new Map<string, DomainMetadata>();
    for (const [k, d] of this.domains) if (!d.removed) out.set(k, d);
    return out;
  }
}

/**
 * The commit timestamp of a version. With in-commit timestamps enabled at that version it is the
 * commitInfo's inCommitTimestamp (which a later publish copy cannot change); otherwise the commit
 * file's modification time, or the checkpoint's when only a checkpoint is left.
 */
async function versionTimestamp(
  ctx: Ctx,
  view: LogView,
  version: number,
  ictEnabled: boolean,
  checkpoint?: CheckpointFile,
): Promise<number> {
  const ref = view.commits.get(version);
  if (ref === undefined) {
    const c = checkpoint ?? view.checkpoints.findLast((x) => x.version === version);
    return c?.lastModified ?? 0;
  }
  if (ictEnabled) {
    const ict = await refIct(ctx, ref);
    if (ict !== undefined) return ict;
  }
  return refMtime(ctx, ref);
}

async function refIct(ctx: Ctx, ref: CommitRef): Promise<number | undefined> {
  if (ref.ict !== undefined) return ref.ict;
  const info = await readCommitInfo(ctx, ref);
  const ict = info?.inCommitTimestamp;
  return typeof ict === "number" ? ict : undefined;
}

function refMtime(ctx: Ctx, ref: CommitRef): Promise<number> {
  if (ref.lastModified !== undefined) return Promise.resolve(ref.lastModified);
  let p = ctx.mtimes.get(ref.key);
  if (p === undefined) {
    p = (async () => {
      const info =
        (await ctx.store.head(ref.key)) ??
        (ref.publishedKey === ref.key ? undefined : await ctx.store.head(ref.publishedKey));
      return info?.lastModified ?? 0;
    })();
    ctx.mtimes.set(ref.key, p);
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Reading commits

async function getCommitBytes(ctx: Ctx, ref: CommitRef): Promise<Uint8Array> {
  try {
    return await ctx.store.get(ref.key);
  } catch (e) {
    // Publishing may have copied the staged file and cleaned it up since the catalog answered.
    if (e instanceof ObjectNotFoundError && ref.staged) return ctx.store.get(ref.publishedKey);
    throw e;
  }
}

function readCommitActions(ctx: Ctx, ref: CommitRef): Promise<Action[]> {
  let p = ctx.actions.get(ref.key);
  if (p === undefined) {
    p = (async () => {
      const bytes = await getCommitBytes(ctx, ref);
      let actions: Action[];
      try {
        actions = parseActions(new TextDecoder().decode(bytes));
      } catch (e) {
        throw new CorruptCommitError(
          ref,
          `is not valid newline-delimited JSON: ${(e as Error).message}`,
        );
      }
      // Every commit holds at least one action; an empty file is a torn or truncated write.
      if (actions.length === 0) throw new CorruptCommitError(ref, "holds no actions");
      return actions;
    })();
    ctx.actions.set(ref.key, p);
  }
  return p;
}

/**
 * The commitInfo of a commit, reading as little as possible: writers put it on the first line
 * (mandatory with in-commit timestamps), so a ranged read of the head usually suffices.
 */
async function readCommitInfo(ctx: Ctx, ref: CommitRef): Promise<CommitInfo | undefined> {
  const cached = ctx.actions.get(ref.key);
  if (cached !== undefined) return findCommitInfo(await cached);
  let head: Uint8Array;
  try {
    head = await ctx.store.getRange(ref.key, 0, HEAD_BYTES);
  } catch (e) {
    if (!(e instanceof ObjectNotFoundError && ref.staged)) throw e;
    head = await ctx.store.getRange(ref.publishedKey, 0, HEAD_BYTES);
  }
  const text = new TextDecoder().decode(head);
  const whole = head.length < HEAD_BYTES;
  const lines = text.split("\n");
  // The last piece of a partial read may be a cut line.
  const complete = whole ? lines : lines.slice(0, -1);
  for (const line of complete) {
    const trimmed = line.trim();
    if (trimmed === "") continue;
    if (!trimmed.startsWith('{"commitInfo"')) continue;
    try {
      return (JSON.parse(trimmed) as { commitInfo: CommitInfo }).commitInfo;
    } catch {
      break;
    }
  }
  if (whole) return undefined;
  return findCommitInfo(await readCommitActions(ctx, ref));
}

function findCommitInfo(actions: Action[]): CommitInfo | undefined {
  for (const a of actions) if ("commitInfo" in a) return a.commitInfo;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Timestamp time travel

async function versionAtTimestamp(
  ctx: Ctx,
  view: LogView,
  latestSnapshot: Snapshot,
  ts: number,
): Promise<number> {
  const latest = latestSnapshot.version;
  const earliest = earliestVersion(view) ?? view.versions[0] ?? latest;
  const config = latestSnapshot.metadata.configuration;
  const ict = config["delta.enableInCommitTimestamps"] === "true";
  const enablementVersion = optionalInt(config["delta.inCommitTimestampEnablementVersion"]);
  const enablementTimestamp = optionalInt(config["delta.inCommitTimestampEnablementTimestamp"]);
  // Versions from the enablement version on are searched by in-commit timestamp, older ones by
  // file modification time; the enablement timestamp says which side a query falls on. A table
  // created with ICT (no enablement version), or whose pre-ICT commits are gone, is all ICT.
  const ictFrom = ict
    ? Math.min(Math.max(enablementVersion ?? earliest, earliest), latest)
    : latest + 1;
  const allIct = ictFrom === earliest;
  const mtimeHi = Math.min(ictFrom - 1, latest);
  // File modification times can go backwards (copies, clock skew); like Spark, treat each as at
  // least one millisecond after its predecessor.
  let mtimes: number[] | undefined;
  const monotonicMtimes = async () => {
    if (mtimes === undefined) {
      mtimes = await mapLimit(range(earliest, mtimeHi), CONCURRENCY, (v) =>
        versionTimestamp(ctx, view, v, false),
      );
      for (let i = 1; i < mtimes.length; i++) mtimes[i] = Math.max(mtimes[i]!, mtimes[i - 1]! + 1);
    }
    return mtimes;
  };

  const latestTs = ict ? latestSnapshot.timestamp : (await monotonicMtimes()).at(-1)!;
  if (ts > latestTs) {
    throw siltError("DELTA_TIMESTAMP_GREATER_THAN_COMMIT", {
      providedTimestamp: javaTimestamp(ts),
      latestTimestamp: javaTimestamp(latestTs),
      maximumTimestamp: secondsTimestamp(latestTs),
    });
  }
  const tooEarly = (earliestTs: number) =>
    siltError("DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", {
      providedTimestamp: javaTimestamp(ts),
      earliestTimestamp: javaTimestamp(earliestTs),
      minimumTimestamp: secondsTimestamp(earliestTs),
    });

  if (ict && (allIct || enablementTimestamp === undefined || ts >= enablementTimestamp)) {
    const at = (v: number) => versionTimestamp(ctx, view, v, true);
    const first = await at(ictFrom);
    if (ts >= first) return lastAtOrBefore(ictFrom, latest, ts, at);
    if (allIct) throw tooEarly(first);
  }
  const times = await monotonicMtimes();
  if (times.length === 0 || ts < times[0]!) {
    throw tooEarly(times[0] ?? (await versionTimestamp(ctx, view, earliest, ict)));
  }
  let i = times.length - 1;
  while (i > 0 && times[i]! > ts) i--;
  return earliest + i;
}

/** Binary search for the last version in [lo, hi] with timestamp <= ts, given at(lo) <= ts. */
async function lastAtOrBefore(
  lo: number,
  hi: number,
  ts: number,
  at: (v: number) => Promise<number>,
): Promise<number> {
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if ((await at(mid)) <= ts) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function optionalInt(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

// ---------------------------------------------------------------------------------------------
// Errors

function versionNotFound(view: LogView, v: number): SiltError {
  const latest = view.latest ?? 0;
  const earliest = earliestVersion(view) ?? latest;
  return siltError("DELTA_VERSION_NOT_FOUND", { userVersion: v, earliest, latest });
}

function stateRecoverError(what: "Protocol" | "Metadata", version: number): SiltError {
  return siltError("DELTA_STATE_RECOVER_ERROR:NOT_RECOVERED", { what, version });
}

function missingLog(view: LogView, target: number, gap: number, cause: unknown): SiltError {
  const why =
    cause === undefined ? "" : ` A checkpoint could not be read: ${(cause as Error).message}`;
  if (view.versions.some((v) => v < gap)) {
    const listed = view.versions.filter((v) => v <= target);
    return siltError("DELTA_VERSIONS_NOT_CONTIGUOUS", {
      listed: listed.join(", "),
      gap,
      target,
      why,
    });
  }
  return siltError("DELTA_LOG_FILE_NOT_FOUND", { target, gap, why });
}

function invalidTimestamp(text: string): SiltError {
  return siltError("DELTA_TIMESTAMP_INVALID", { text });
}

// ---------------------------------------------------------------------------------------------
// Helpers

function canonicalPath(path: string): string {
  let p = path;
  if (p.startsWith("file://")) p = p.slice("file://".length);
  else if (p.startsWith("file:/")) p = p.slice("file:".length);
  if (!p.includes("%")) return p;
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

function range(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let v = lo; v <= hi; v++) out.push(v);
  return out;
}

/** Promise.all over `items` with at most `limit` calls in flight; results keep input order. */
async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
