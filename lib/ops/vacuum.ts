/**
 * VACUUM t [RETAIN n HOURS] [DRY RUN] [LITE | FULL]: deletes the data and deletion-vector files
 * that no version within the retention window references.
 *
 * 1. Open the table at its latest version and run the full writer-protocol check: under
 *    `vacuumProtocolCheck` a VACUUM must refuse a table with a writer feature it does not know,
 *    since such a feature may reference files in ways this code cannot see.
 * 2. Retention = RETAIN n HOURS, else `delta.deletedFileRetentionDuration` (7 days). A retention
 *    shorter than the table's setting fails with DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT unless
 *    the check is turned off (`spark.databricks.delta.retentionDurationCheck.enabled=false`).
 *    cutoff = now (ctx.clock) − retention.
 * 3. Keep set: every live file and its DV file, plus the files and DV files of tombstones removed
 *    after the cutoff (what time travel within retention still reads).
 * 4. Candidates.
 *    LITE (the log only): the files and DV files of tombstones removed at or before the cutoff,
 *    not in the keep set, and still present (a HEAD each, so a second run reports nothing).
 *    FULL: list everything under the table root except `_delta_log/` and hidden paths (`_x`,
 *    `.x`, but `_x=v` partition directories are data); a file goes when the log does not keep it
 *    and its modification time is at or before the cutoff. The log always wins over the mtime:
 *    a kept file is never deleted however old it is.
 *    Both: staged commit files (`_delta_log/_staged_commits/<v>.<uuid>.json`) of writers that
 *    lost their version (the arbiter's ratified row for v names another file) and older than the
 *    cutoff. Ratified staged files are left to log cleanup.
 * 5. DRY RUN stops here and returns the candidates. Otherwise commit `VACUUM START` (no file
 *    actions; Spark's parameters and metrics), delete in batches, commit `VACUUM END`. A failed
 *    deletion commits `VACUUM END` with status FAILED and rethrows.
 */
import type { TableRef } from "../catalog/names.ts";
import { vacuumOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import type { AddFile, RemoveFile } from "../delta/actions.ts";
import { LOG_DIR, STAGED_DIR } from "../delta/actions.ts";
import { dvFileKey } from "../delta/deletion-vectors.ts";
import { deletedFileRetentionMs } from "../delta/table-config.ts";
import { siltError } from "../errors.ts";
import type { ObjectInfo } from "../storage/object-store.ts";
import { commit } from "./commit.ts";
import { type OpenTable, openTable } from "./open-table.ts";
import { type OnProgress, progressCounter } from "./progress.ts";
import { fileKey } from "./read-files.ts";
import { checkWriteProtocol } from "./write-protocol.ts";

export type VacuumMode = "lite" | "full";

export interface VacuumRequest {
  retainHours?: number;
  dryRun?: boolean;
  /** Default FULL, as in Delta. */
  mode?: VacuumMode;
  /** False only when the caller turned Delta's retention check off. */
  retentionCheckEnabled?: boolean;
  defaults?: { catalog?: string; schema?: string };
  /** Files and bytes deleted of the candidates, after each batch (not for a dry run). */
  onProgress?: OnProgress;
}

export interface VacuumResult {
  /** Store keys deleted (or, for a dry run, that would be). */
  files: string[];
  /** Paths relative to the table root, as DRY RUN reports them. */
  paths: string[];
  dryRun: boolean;
  tableLocation: string;
  numDeletedFiles: number;
  sizeOfDataToDelete: number;
  numVacuumedDirectories: number;
  /** Table version after the VACUUM END commit (the version read for a dry run). */
  version: number;
}

const HOUR_MS = 3_600_000;
const DELETE_BATCH = 1_000;
const HEAD_CONCURRENCY = 16;

export async function vacuumTable(
  ctx: SiltContext,
  name: TableRef,
  req: VacuumRequest = {},
): Promise<VacuumResult> {
  // Step 1.
  const t = await openTable(ctx, name, { defaults: req.defaults, access: "write" });
  checkWriteProtocol(t.snapshot.protocol, t.snapshot.metadata);
  const root = t.entry.location;
  // Step 2.
  const defaultRetentionMs = deletedFileRetentionMs(t.snapshot.metadata.configuration);
  const checkEnabled = req.retentionCheckEnabled ?? true;
  const specifiedMs =
    req.retainHours === undefined ? undefined : Math.round(req.retainHours * HOUR_MS);
  if (req.retainHours !== undefined && (!Number.isFinite(req.retainHours) || req.retainHours < 0)) {
    throw siltError("DELTA_VACUUM_RETENTION_NEGATIVE", { retainHours: req.retainHours });
  }
  if (checkEnabled && specifiedMs !== undefined && specifiedMs < defaultRetentionMs) {
    throw retentionTooShort(defaultRetentionMs);
  }
  const now = ctx.clock();
  const cutoff = now - (specifiedMs ?? defaultRetentionMs);

  // Steps 3-4.
  const keep = keepSet(t, cutoff);
  const mode = req.mode ?? "full";
  const candidates =
    mode === "lite"
      ? await liteCandidates(ctx, t, cutoff, keep)
      : await fullCandidates(ctx, t, cutoff, keep);
  candidates.push(...(await losingStagedCommits(ctx, t, cutoff)));
  candidates.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const files = candidates.map((c) => c.key);
  const size = candidates.reduce((n, c) => n + c.size, 0);
  const dirs = directoriesOf(root, files);
  const base = {
    files,
    paths: files.map((k) => k.slice(root.length)),
    tableLocation: root,
    sizeOfDataToDelete: size,
    numVacuumedDirectories: dirs,
  };
  // Step 5.
  if (req.dryRun) {
    return { ...base, dryRun: true, numDeletedFiles: 0, version: t.snapshot.version };
  }
  const parameters: Record<string, unknown> = {
    retentionCheckEnabled: checkEnabled,
    defaultRetentionMillis: defaultRetentionMs,
  };
  if (specifiedMs !== undefined) parameters.specifiedRetentionMillis = specifiedMs;
  const start = await commitMarker(
    ctx,
    t,
    t.snapshot.version,
    "VACUUM START",
    parameters,
    { numFilesToDelete: String(files.length), sizeOfDataToDelete: String(size) },
    { mode },
  );
  const progress = progressCounter({ files: files.length, bytes: size }, req.onProgress);
  try {
    for (let i = 0; i < files.length; i += DELETE_BATCH) {
      const batch = candidates.slice(i, i + DELETE_BATCH);
      await ctx.store.deleteMany(batch.map((c) => c.key));
      progress.advance(
        batch.length,
        batch.reduce((n, c) => n + c.size, 0),
      );
    }
  } catch (err) {
    await commitMarker(
      ctx,
      t,
      start,
      "VACUUM END",
      { status: "FAILED" },
      {
        numDeletedFiles: "0",
        numVacuumedDirectories: String(dirs),
      },
      { mode, numDeletedFiles: 0 },
    ).catch(() => undefined);
    throw err;
  }
  const end = await commitMarker(
    ctx,
    t,
    start,
    "VACUUM END",
    { status: "COMPLETED" },
    {
      numDeletedFiles: String(files.length),
      numVacuumedDirectories: String(dirs),
    },
    { mode, numDeletedFiles: files.length },
  );
  return { ...base, dryRun: false, numDeletedFiles: files.length, version: end };
}

/** Delta's message (delta-error-classes.json), with the table's retention in hours. */
export function retentionTooShort(retentionMs: number) {
  return siltError("DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT", {
    retentionHours: retentionMs / HOUR_MS,
  });
}

interface Candidate {
  key: string;
  size: number;
}

/** Store keys of a file and its DV file; files outside the table root are never ours to delete. */
function keysOf(root: string, f: AddFile | RemoveFile): string[] {
  const out: string[] = [];
  try {
    out.push(fileKey(root, f.path));
  } catch {
    // An absolute path (a shallow clone's source) belongs to another table.
  }
  const dv = f.deletionVector;
  if (dv && dv.storageType === "u") out.push(dvFileKey(dv, root));
  return out;
}

/** Step 3. */
function keepSet(t: OpenTable, cutoff: number): Set<string> {
  const root = t.entry.location;
  const keep = new Set<string>();
  for (const f of t.snapshot.files) for (const k of keysOf(root, f)) keep.add(k);
  for (const r of t.snapshot.tombstones) {
    if ((r.deletionTimestamp ?? 0) > cutoff) for (const k of keysOf(root, r)) keep.add(k);
  }
  return keep;
}

/** Step 4, LITE. */
async function liteCandidates(
  ctx: SiltContext,
  t: OpenTable,
  cutoff: number,
  keep: Set<string>,
): Promise<Candidate[]> {
  const root = t.entry.location;
  const keys = new Set<string>();
  for (const r of t.snapshot.tombstones) {
    if ((r.deletionTimestamp ?? 0) > cutoff) continue;
    for (const k of keysOf(root, r)) if (!keep.has(k)) keys.add(k);
  }
  const list = [...keys];
  const found: Candidate[] = [];
  for (let i = 0; i < list.length; i += HEAD_CONCURRENCY) {
    const infos = await Promise.all(
      list.slice(i, i + HEAD_CONCURRENCY).map((k) => ctx.store.head(k)),
    );
    for (const info of infos) if (info) found.push({ key: info.key, size: info.size });
  }
  return found;
}

/** Hidden the way Spark's VACUUM sees it: `_x` or `.x`, except `_x=v` partition directories. */
function hidden(relative: string): boolean {
  return relative
    .split("/")
    .some((s) => s.startsWith(".") || (s.startsWith("_") && !s.includes("=")));
}

/** Step 4, FULL. */
async function fullCandidates(
  ctx: SiltContext,
  t: OpenTable,
  cutoff: number,
  keep: Set<string>,
): Promise<Candidate[]> {
  const root = t.entry.location;
  const out: Candidate[] = [];
  for await (const info of ctx.store.list(root)) {
    const relative = info.key.slice(root.length);
    if (relative.startsWith(LOG_DIR) || hidden(relative)) continue;
    if (keep.has(info.key) || info.lastModified > cutoff) continue;
    out.push({ key: info.key, size: info.size });
  }
  return out;
}

/** Step 4, staged commits of losing writers. */
async function losingStagedCommits(
  ctx: SiltContext,
  t: OpenTable,
  cutoff: number,
): Promise<Candidate[]> {
  const prefix = `${t.entry.location}${STAGED_DIR}`;
  const staged: { info: ObjectInfo; version: number }[] = [];
  for await (const info of ctx.store.list(prefix)) {
    const m = /^(\d{20})\.[^/]+\.json$/.exec(info.key.slice(prefix.length));
    if (m && info.lastModified <= cutoff) staged.push({ info, version: Number(m[1]) });
  }
  if (staged.length === 0) return [];
  // Only versions the arbiter has decided: an undecided version's file may be a live attempt.
  const latest = t.snapshot.version;
  const decided = staged.filter((s) => s.version <= latest);
  if (decided.length === 0) return [];
  const from = Math.min(...decided.map((s) => s.version));
  const rows = await ctx.arbiter.range(t.entry.tableId, from, latest);
  const winners = new Map(rows.map((r) => [r.version, r.stagedKey]));
  return decided
    .filter((s) => winners.has(s.version) && winners.get(s.version) !== s.info.key)
    .map((s) => ({ key: s.info.key, size: s.info.size }));
}

/** Distinct directories (the table root included) holding the deleted files. */
function directoriesOf(root: string, keys: string[]): number {
  const dirs = new Set<string>();
  for (const k of keys) dirs.add(k.slice(root.length, k.lastIndexOf("/") + 1));
  return dirs.size;
}

/** A commit with no file actions, only history: VACUUM START / END. */
async function commitMarker(
  ctx: SiltContext,
  t: OpenTable,
  readVersion: number,
  operation: "VACUUM START" | "VACUUM END",
  parameters: Record<string, unknown>,
  metrics: Record<string, string>,
  report: { mode: VacuumMode; numDeletedFiles?: number },
): Promise<number> {
  const result = await commit(
    ctx,
    t,
    vacuumOperation(operation, parameters, metrics, report),
    [],
    // Markers carry no files: they have always been recorded as Serializable and without the
    // row-tracking tag, whatever the table's settings.
    { readVersion, isolationLevel: "Serializable", rowTracking: false },
  );
  return result.version;
}
