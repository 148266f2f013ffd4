/**
 * One LIST of `_delta_log/`, classified into commits and checkpoints. Everything else that lives
 * under the prefix (CRC files, log compactions, sidecars, staged commits, Hadoop's hidden `.crc`
 * files) is skipped: replay never needs them, and sidecars and staged commits are reached through
 * the checkpoint or the catalog that names them.
 */

import type { ObjectStore } from "../storage/object-store.ts";
import { LOG_DIR } from "./actions.ts";

export interface CommitFile {
  version: number;
  key: string;
  size: number;
  lastModified: number;
}

export type CheckpointKind = "classic" | "multipart" | "v2";

export interface CheckpointFile {
  version: number;
  kind: CheckpointKind;
  format: "parquet" | "json";
  /** Object keys; for multi-part checkpoints in part order. */
  keys: string[];
  /** Total bytes over all parts. */
  size: number;
  /** Newest last-modified over all parts. */
  lastModified: number;
}

export interface LogListing {
  tableRoot: string;
  /** Ascending by version. */
  commits: CommitFile[];
  /** Ascending by version; several checkpoints may share a version. */
  checkpoints: CheckpointFile[];
  /** Key of `_last_checkpoint` when the listing saw it. */
  lastCheckpointKey: string | undefined;
  /**
   * Versions below this were not listed (the listing started after them), so the absence of an
   * older file says nothing.
   */
  listedFromVersion: number;
}

export const logPrefix = (tableRoot: string): string => `${tableRoot}${LOG_DIR}`;

export const padVersion = (version: number): string => String(version).padStart(20, "0");

const COMMIT_RE = /^(\d{20})\.json$/;
const CLASSIC_RE = /^(\d{20})\.checkpoint\.parquet$/;
const MULTIPART_RE = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/;
const V2_RE = /^(\d{20})\.checkpoint\.([^.]+)\.(json|parquet)$/;

export type LogFileName =
  | { type: "commit"; version: number }
  | { type: "classic"; version: number }
  | { type: "multipart"; version: number; part: number; parts: number }
  | { type: "v2"; version: number; format: "json" | "parquet" };

/** Classifies a file name directly under `_delta_log/`; undefined for files replay ignores. */
export function parseLogFileName(name: string): LogFileName | undefined {
  let m = COMMIT_RE.exec(name);
  if (m) return { type: "commit", version: Number(m[1]) };
  m = CLASSIC_RE.exec(name);
  if (m) return { type: "classic", version: Number(m[1]) };
  m = MULTIPART_RE.exec(name);
  if (m)
    return { type: "multipart", version: Number(m[1]), part: Number(m[2]), parts: Number(m[3]) };
  m = V2_RE.exec(name);
  if (m) return { type: "v2", version: Number(m[1]), format: m[3] as "json" | "parquet" };
  return undefined;
}

/**
 * Lists the log. With `fromVersion`, the listing starts at that version (S3 can only list upward
 * from a key), which keeps a long log cheap when a checkpoint makes older files unnecessary.
 */
export async function listLog(
  store: ObjectStore,
  tableRoot: string,
  opts: { fromVersion?: number } = {},
): Promise<LogListing> {
  const prefix = logPrefix(tableRoot);
  const from = opts.fromVersion ?? 0;
  // Every key of version >= from sorts after the bare 20-digit prefix of `from`, and every key of
  // an older version sorts before it.
  const startAfter = from > 0 ? `${prefix}${padVersion(from)}` : undefined;
  const commits: CommitFile[] = [];
  const singles: CheckpointFile[] = [];
  const parts = new Map<
    string,
    { version: number; parts: number; got: Map<number, CheckpointFile> }
  >();
  let lastCheckpointKey: string | undefined;

  for await (const info of store.list(
    prefix,
    startAfter === undefined ? undefined : { startAfter },
  )) {
    const name = info.key.slice(prefix.length);
    if (name.includes("/")) continue;
    if (name === "_last_checkpoint") {
      lastCheckpointKey = info.key;
      continue;
    }
    const parsed = parseLogFileName(name);
    if (parsed === undefined || parsed.version < from) continue;
    const file = { key: info.key, size: info.size, lastModified: info.lastModified };
    switch (parsed.type) {
      case "commit":
        commits.push({ version: parsed.version, ...file });
        break;
      case "classic":
        singles.push(single(parsed.version, "classic", "parquet", file));
        break;
      case "v2":
        singles.push(single(parsed.version, "v2", parsed.format, file));
        break;
      case "multipart": {
        if (parsed.part < 1 || parsed.part > parsed.parts) break;
        const id = `${parsed.version}/${parsed.parts}`;
        let set = parts.get(id);
        if (set === undefined) {
          set = { version: parsed.version, parts: parsed.parts, got: new Map() };
          parts.set(id, set);
        }
        set.got.set(parsed.part, single(parsed.version, "multipart", "parquet", file));
        break;
      }
    }
  }

  for (const set of parts.values()) {
    // An incomplete set is a checkpoint still being written, or one that failed half-way.
    if (set.got.size !== set.parts) continue;
    const ordered = [...set.got.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
    singles.push({
      version: set.version,
      kind: "multipart",
      format: "parquet",
      keys: ordered.flatMap((p) => p.keys),
      size: ordered.reduce((s, p) => s + p.size, 0),
      lastModified: Math.max(...ordered.map((p) => p.lastModified)),
    });
  }

  commits.sort((a, b) => a.version - b.version);
  singles.sort((a, b) => a.version - b.version || kindRank(a.kind) - kindRank(b.kind));
  return { tableRoot, commits, checkpoints: singles, lastCheckpointKey, listedFromVersion: from };
}

function single(
  version: number,
  kind: CheckpointKind,
  format: "parquet" | "json",
  file: { key: string; size: number; lastModified: number },
): CheckpointFile {
  return {
    version,
    kind,
    format,
    keys: [file.key],
    size: file.size,
    lastModified: file.lastModified,
  };
}

/**
 * Tie-break within one version. Readers try checkpoints from the end of the list, so the last one
 * of a version is tried first: a UUID-named V2 checkpoint, then a classic one (one GET), then a
 * multi-part set (several GETs). Any of them gives the same state.
 */
function kindRank(kind: CheckpointKind): number {
  return kind === "v2" ? 2 : kind === "classic" ? 1 : 0;
}
