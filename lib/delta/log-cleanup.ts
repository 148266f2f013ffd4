/**
 * Metadata cleanup: drops log files older than `delta.logRetentionDuration` (PROTOCOL.md
 * "Metadata Cleanup").
 *
 * 1. cutoff = midnight UTC of (now − retention). Retention defaults to the table's
 *    `delta.logRetentionDuration` (30 days).
 * 2. List `_delta_log/` once, subdirectories included. K = the newest checkpoint at or before the
 *    cutoff commit, i.e. the newest checkpoint version whose commit timestamp is <= cutoff
 *    (in-commit timestamp where the commit has one, else the file's modification time made
 *    monotonic as Spark does; both only grow with the version, so a binary search over the
 *    checkpoint versions finds K in a few ranged reads). Only versions whose `v.json` is present
 *    qualify, since step 3 keeps that file, and only checkpoints that can be read (top-level file
 *    parses, every sidecar it names exists; else the next older one), since step 3 removes the
 *    alternatives.
 * 3. Keep K's checkpoints, `K.json` (commitInfo and the in-commit timestamp live only there) and
 *    everything after. Delete, oldest version first so a crash leaves a usable suffix: commits,
 *    checkpoints and `.crc` files with version < K, log compactions starting at or before K, and
 *    staged commits with version <= K. Every version newer than the cutoff stays reconstructable
 *    from K's checkpoint and the commits after it, so time travel within retention is untouched.
 * 4. Delete sidecars that no remaining checkpoint references, unless less than a day old (a
 *    checkpoint being written puts its sidecars before its top-level file). If any remaining
 *    checkpoint cannot be read, no sidecar is deleted: its references are unknown.
 *
 * Without a checkpoint old enough, only step 4 runs. `_last_checkpoint`, data files and deletion
 * vectors are never touched (VACUUM's job).
 */
import {
  type AsyncBuffer,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
} from "hyparquet";
import { type ObjectInfo, ObjectNotFoundError, type ObjectStore } from "../storage/object-store.ts";
import { MILLIS_PER_DAY } from "../values/calendar.ts";
import { LOG_DIR, parseActions, STAGED_DIR } from "./actions.ts";
import { SIDECAR_DIR, sidecarKey, toAction } from "./checkpoint-reader.ts";
import { checkpointStateFromLog } from "./checkpoint-state.ts";
import { parseLogFileName } from "./log-listing.ts";
import { loadSnapshot } from "./snapshot.ts";
import { logRetentionMs } from "./table-config.ts";

export interface CleanupOptions {
  /** The current time (epoch ms). */
  now: number;
  /** Overrides the table's `delta.logRetentionDuration`. */
  retentionMs?: number;
}

export interface CleanupResult {
  /** Midnight UTC of now − retention. */
  cutoff: number;
  /** The checkpoint the log now starts from; undefined when none was old enough. */
  checkpointVersion: number | undefined;
  /** Deleted object keys, in deletion order. */
  deleted: string[];
}

/** A commitInfo line longer than this costs a second, whole-file read. */
const HEAD_BYTES = 16 * 1024;
const DELETE_BATCH = 1000;

const CRC_RE = /^(\d{20})\.crc$/;
const COMPACTED_RE = /^(\d{20})\.(\d{20})\.compacted\.json$/;
const STAGED_RE = /^(\d{20})\.[^/]+\.json$/;

interface LogEntry {
  info: ObjectInfo;
  /** Version the deletion rule compares with K. */
  version: number;
  rule: "older" | "atOrBefore";
}

interface RemainingCheckpoint {
  version: number;
  info: ObjectInfo;
  format: "parquet" | "json";
}

export async function cleanupLog(
  store: ObjectStore,
  tableRoot: string,
  opts: CleanupOptions,
): Promise<CleanupResult> {
  const root = tableRoot === "" || tableRoot.endsWith("/") ? tableRoot : `${tableRoot}/`;
  const logPrefix = `${root}${LOG_DIR}`;
  const stagedPrefix = `${root}${STAGED_DIR}`;
  const sidecarPrefix = `${root}${SIDECAR_DIR}`;

  // Step 2: one listing, classified.
  const commits = new Map<number, ObjectInfo>();
  const checkpoints: RemainingCheckpoint[] = [];
  const multipart = new Map<string, { version: number; parts: number; got: Set<number> }>();
  const candidates: LogEntry[] = [];
  const sidecarFiles: ObjectInfo[] = [];
  for await (const info of store.list(logPrefix)) {
    if (info.key.startsWith(stagedPrefix)) {
      const m = STAGED_RE.exec(info.key.slice(stagedPrefix.length));
      if (m) candidates.push({ info, version: Number(m[1]), rule: "atOrBefore" });
      continue;
    }
    if (info.key.startsWith(sidecarPrefix)) {
      if (!info.key.slice(sidecarPrefix.length).includes("/")) sidecarFiles.push(info);
      continue;
    }
    const name = info.key.slice(logPrefix.length);
    if (name.includes("/")) continue;
    const parsed = parseLogFileName(name);
    if (parsed?.type === "commit") {
      commits.set(parsed.version, info);
      candidates.push({ info, version: parsed.version, rule: "older" });
    } else if (parsed !== undefined) {
      candidates.push({ info, version: parsed.version, rule: "older" });
      if (parsed.type === "multipart") {
        const id = `${parsed.version}/${parsed.parts}`;
        const set = multipart.get(id) ?? {
          version: parsed.version,
          parts: parsed.parts,
          got: new Set(),
        };
        set.got.add(parsed.part);
        multipart.set(id, set);
      } else {
        const format = parsed.type === "v2" ? parsed.format : "parquet";
        checkpoints.push({ version: parsed.version, info, format });
      }
    } else {
      const crc = CRC_RE.exec(name);
      if (crc) candidates.push({ info, version: Number(crc[1]), rule: "older" });
      const compacted = COMPACTED_RE.exec(name);
      if (compacted) candidates.push({ info, version: Number(compacted[1]), rule: "atOrBefore" });
    }
  }

  // Step 1.
  let retentionMs = opts.retentionMs;
  if (retentionMs === undefined) {
    let latest = -1;
    for (const v of commits.keys()) latest = Math.max(latest, v);
    retentionMs = latest < 0 ? 0 : logRetentionMs(await latestConfiguration(store, root, latest));
  }
  const cutoff = Math.floor((opts.now - retentionMs) / MILLIS_PER_DAY) * MILLIS_PER_DAY;

  // Step 2: K.
  const timestamps = monotonicMtimes(commits);
  const completeMultipart = new Set(
    [...multipart.values()].filter((m) => m.got.size === m.parts).map((m) => m.version),
  );
  const qualifying = [...new Set([...checkpoints.map((c) => c.version), ...completeMultipart])]
    .filter((v) => commits.has(v))
    .sort((a, b) => a - b);
  const commitTimestamp = async (v: number): Promise<number> => {
    const ict = await inCommitTimestamp(store, commits.get(v)!.key);
    return ict ?? timestamps.get(v)!;
  };
  let lo = 0;
  let hi = qualifying.length - 1;
  let newest = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((await commitTimestamp(qualifying[mid]!)) <= cutoff) {
      newest = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  // Everything older is about to go, so K must be readable: its top-level file parses and every
  // sidecar it names exists. Otherwise fall back to an older one.
  const sidecarKeys = new Set(sidecarFiles.map((f) => f.key));
  const references = new Map<string, Promise<string[]>>();
  const referencesOf = (c: RemainingCheckpoint) => {
    let p = references.get(c.info.key);
    if (p === undefined) {
      p = sidecarPaths(store, c).then((paths) => paths.map((path) => sidecarKey(root, path)));
      references.set(c.info.key, p);
    }
    return p;
  };
  const usable = async (version: number): Promise<boolean> => {
    if (completeMultipart.has(version)) return true;
    for (const c of checkpoints.filter((x) => x.version === version)) {
      try {
        if ((await referencesOf(c)).every((key) => sidecarKeys.has(key))) return true;
      } catch {
        // Unreadable: try the next file of this version, or an older version.
      }
    }
    return false;
  };
  while (newest >= 0 && !(await usable(qualifying[newest]!))) newest--;
  const k = newest >= 0 ? qualifying[newest] : undefined;

  // Step 3.
  const deleted: string[] = [];
  if (k !== undefined) {
    const doomed = candidates
      .filter((c) => (c.rule === "older" ? c.version < k : c.version <= k))
      .sort((a, b) => a.version - b.version || (a.info.key < b.info.key ? -1 : 1));
    for (let i = 0; i < doomed.length; i += DELETE_BATCH) {
      const keys = doomed.slice(i, i + DELETE_BATCH).map((c) => c.info.key);
      await store.deleteMany(keys);
      deleted.push(...keys);
    }
  }

  // Step 4.
  const oldSidecars = sidecarFiles.filter((s) => s.lastModified < opts.now - MILLIS_PER_DAY);
  if (oldSidecars.length > 0) {
    const remaining = checkpoints.filter((c) => k === undefined || c.version >= k);
    const referenced = new Set<string>();
    let complete = true;
    for (const c of remaining) {
      try {
        for (const key of await referencesOf(c)) referenced.add(key);
      } catch (e) {
        // Deleted since the listing: it references nothing any more.
        if (e instanceof ObjectNotFoundError) continue;
        complete = false;
        break;
      }
    }
    if (complete) {
      const keys = oldSidecars.map((s) => s.key).filter((key) => !referenced.has(key));
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const batch = keys.slice(i, i + DELETE_BATCH);
        await store.deleteMany(batch);
        deleted.push(...batch);
      }
    }
  }

  return { cutoff, checkpointVersion: k, deleted };
}

/** The latest configuration, from the newest checkpoint's inline actions where possible. */
async function latestConfiguration(
  store: ObjectStore,
  root: string,
  latest: number,
): Promise<Record<string, string>> {
  const state = await checkpointStateFromLog(store, root, latest);
  if (state !== undefined) return state.metadata.configuration;
  return (await loadSnapshot(store, root, { version: latest })).metadata.configuration;
}

/** Spark's adjustment: each commit's time is at least 1 ms after its predecessor's. */
function monotonicMtimes(commits: Map<number, ObjectInfo>): Map<number, number> {
  const out = new Map<number, number>();
  let previous = Number.NEGATIVE_INFINITY;
  for (const v of [...commits.keys()].sort((a, b) => a - b)) {
    previous = Math.max(commits.get(v)!.lastModified, previous + 1);
    out.set(v, previous);
  }
  return out;
}

async function inCommitTimestamp(store: ObjectStore, key: string): Promise<number | undefined> {
  const head = await store.getRange(key, 0, HEAD_BYTES);
  let text = new TextDecoder().decode(head);
  if (!text.includes("\n") && head.length >= HEAD_BYTES) {
    text = new TextDecoder().decode(await store.get(key));
  }
  const line = text.split("\n", 1)[0]!.trim();
  if (!line.startsWith('{"commitInfo"')) return undefined;
  try {
    const ict = (JSON.parse(line) as { commitInfo?: { inCommitTimestamp?: unknown } }).commitInfo
      ?.inCommitTimestamp;
    return typeof ict === "number" ? ict : undefined;
  } catch {
    return undefined;
  }
}

/** Sidecar paths a checkpoint's top-level file names, reading only its `sidecar` column. */
async function sidecarPaths(store: ObjectStore, c: RemainingCheckpoint): Promise<string[]> {
  if (c.format === "json") {
    const actions = parseActions(new TextDecoder().decode(await store.get(c.info.key)));
    return actions.flatMap((a) => ("sidecar" in a ? [a.sidecar.path] : []));
  }
  const file: AsyncBuffer = {
    byteLength: c.info.size,
    slice: async (start, end) => {
      const bytes = await store.getRange(c.info.key, start, end ?? c.info.size);
      return bytes.buffer.slice(
        bytes.byteOffset,
        bytes.byteOffset + bytes.byteLength,
      ) as ArrayBuffer;
    },
  };
  const metadata = await parquetMetadataAsync(file);
  if (!parquetSchema(metadata).children.some((child) => child.element.name === "sidecar")) {
    return [];
  }
  const rows = await parquetReadObjects({ file, metadata, columns: ["sidecar"] });
  const out: string[] = [];
  for (const row of rows) {
    const action = toAction(row);
    if (action !== undefined && "sidecar" in action) out.push(action.sidecar.path);
  }
  return out;
}
