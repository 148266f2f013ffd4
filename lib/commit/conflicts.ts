/**
 * Conflict detection and rebasing for a transaction that lost the race for a version, following
 * Delta's ConflictChecker, applied to each winning commit in version order:
 *
 * 1. Protocol: a winner that wrote `protocol` fails us with DELTA_PROTOCOL_CHANGED. (Delta only
 *    fails when we also write one, after checking it can still write the new protocol; this layer
 *    cannot tell whether our actions honour features the winner just enabled, so it is stricter.)
 * 2. Metadata: a winner that wrote `metaData` fails us with DELTA_METADATA_CHANGED.
 * 3. Domain metadata: a domain both wrote fails us with DELTA_CONCURRENT_TRANSACTION, except
 *    `delta.rowTracking`, whose high-water mark we rebase (step 8).
 * 4. App transactions: an appId both advanced fails us with DELTA_CONCURRENT_TRANSACTION.
 * 5. Appends: unless we are a blind append, data-changing files the winner added that our read
 *    set covers fail us with DELTA_CONCURRENT_APPEND. Under WriteSerializable (and no metadata
 *    change of ours) files from a winner that was itself a blind append are ignored; under
 *    SnapshotIsolation, which Delta gives commits that change no data (OPTIMIZE), every added
 *    file is: rewriting files cannot have missed rows that arrived meanwhile.
 * 6. Delete/read: a file the winner removed that we read (or any removal when we read the whole
 *    table) fails us with DELTA_CONCURRENT_DELETE_READ.
 * 7. Delete/delete: a file both removed fails us with DELTA_CONCURRENT_DELETE_DELETE.
 * 8. Row tracking (after every winner passed): shift the baseRowId of each add whose ids are
 *    fresh (above the high-water mark we built on) past the winners' high-water mark, keeping
 *    their relative layout, restamp defaultRowCommitVersion with the new version, and rewrite our
 *    `delta.rowTracking` high-water mark to match.
 *
 * All conflicts are SiltErrors with HTTP 409 and SQLSTATE 2D521.
 */
import {
  type Action,
  type AddFile,
  type CommitInfo,
  type DomainMetadata,
  numRecordsOf,
} from "../delta/actions.ts";
import { siltError } from "../errors.ts";

export type IsolationLevel = "Serializable" | "WriteSerializable" | "SnapshotIsolation";

/** What the transaction read from its snapshot, for deciding whether a winner invalidated it. */
export interface ReadSet {
  /** The transaction's result depended on every file (e.g. a full scan or unfiltered read). */
  readWholeTable: boolean;
  /** Paths (as written in the log) of the files the transaction read. */
  readFilePaths: ReadonlySet<string>;
  /**
   * Optional partition/statistics predicate: true when a newly added file could hold rows the
   * transaction's read would have matched. Without it only readWholeTable catches new files.
   */
  readPredicate?: (file: AddFile) => boolean;
}

/** The read set of a transaction that read nothing (a blind append). */
export const EMPTY_READ_SET: ReadSet = Object.freeze({
  readWholeTable: false,
  readFilePaths: new Set<string>(),
});

/**
 * The read set of a transaction whose result depended on every file: any concurrent add or remove
 * conflicts with it (metadata changes, RESTORE, REPLACE, unfiltered DELETE/UPDATE/overwrite).
 */
export const READ_WHOLE_TABLE: ReadSet = Object.freeze({
  readWholeTable: true,
  readFilePaths: new Set<string>(),
});

export interface WinningCommit {
  version: number;
  actions: Action[];
}

/** The losing transaction, as the checker sees it. */
export interface PendingTransaction {
  /** Our actions, without commitInfo. */
  actions: Action[];
  readSet: ReadSet;
  isolationLevel: IsolationLevel;
  isBlindAppend: boolean;
  /** Name used in messages (the qualified table name, or the table id). */
  tableName: string;
}

export const ROW_TRACKING_DOMAIN = "delta.rowTracking";
export const CONCURRENCY_SQLSTATE = "2D521";

/** Throws the Delta concurrency error for the first rule (module comment, steps 1–7) it breaks. */
export function checkConflicts(txn: PendingTransaction, winner: WinningCommit): void {
  const w = summarize(winner.actions);
  const op = w.commitInfo?.operation ?? "operation";
  const at = `committed at version ${winner.version}`;
  const table = txn.tableName;
  const conflictingCommit = `Conflicting commit: ${op} at version ${winner.version}.`;

  if (w.protocol) {
    throw siltError("DELTA_PROTOCOL_CHANGED", { table, conflictingCommit });
  }
  if (w.metadata) {
    throw siltError("DELTA_METADATA_CHANGED", { table, conflictingCommit });
  }

  const ours = summarize(txn.actions);
  for (const domain of ours.domains.keys()) {
    if (domain !== ROW_TRACKING_DOMAIN && w.domains.has(domain)) {
      throw siltError("DELTA_CONCURRENT_TRANSACTION:DOMAIN", { domain, conflictingCommit });
    }
  }
  for (const appId of ours.appIds) {
    if (w.appIds.has(appId)) {
      throw siltError("DELTA_CONCURRENT_TRANSACTION:APP_ID", {
        appId,
        table,
        conflictingCommit,
      });
    }
  }

  if (!txn.isBlindAppend && txn.isolationLevel !== "SnapshotIsolation") {
    const ignoreBlindAppends =
      txn.isolationLevel === "WriteSerializable" && !ours.metadata && w.isBlindAppend;
    const candidates = ignoreBlindAppends ? [] : w.dataAdds;
    const { readWholeTable, readFilePaths, readPredicate } = txn.readSet;
    const seen = candidates.find(
      (a) => readWholeTable || readFilePaths.has(a.path) || (readPredicate?.(a) ?? false),
    );
    if (seen !== undefined) {
      throw siltError("DELTA_CONCURRENT_APPEND", { op, table, at });
    }
  }

  const readRemoved =
    w.removedPaths.size > 0 &&
    (txn.readSet.readWholeTable ||
      [...w.removedPaths].some((p) => txn.readSet.readFilePaths.has(p)));
  if (readRemoved) {
    throw siltError("DELTA_CONCURRENT_DELETE_READ", { op, table, at });
  }
  for (const path of ours.removedPaths) {
    if (w.removedPaths.has(path)) {
      throw siltError("DELTA_CONCURRENT_DELETE_DELETE", { op, table, at });
    }
  }
}

interface Summary {
  commitInfo: CommitInfo | undefined;
  protocol: boolean;
  metadata: boolean;
  isBlindAppend: boolean;
  dataAdds: AddFile[];
  removedPaths: Set<string>;
  domains: Map<string, DomainMetadata>;
  appIds: Set<string>;
}

function summarize(actions: Action[]): Summary {
  const s: Summary = {
    commitInfo: undefined,
    protocol: false,
    metadata: false,
    isBlindAppend: false,
    dataAdds: [],
    removedPaths: new Set(),
    domains: new Map(),
    appIds: new Set(),
  };
  for (const a of actions) {
    if ("commitInfo" in a) s.commitInfo = a.commitInfo;
    else if ("protocol" in a) s.protocol = true;
    else if ("metaData" in a) s.metadata = true;
    else if ("add" in a) {
      if (a.add.dataChange) s.dataAdds.push(a.add);
    } else if ("remove" in a) s.removedPaths.add(a.remove.path);
    else if ("domainMetadata" in a) s.domains.set(a.domainMetadata.domain, a.domainMetadata);
    else if ("txn" in a) s.appIds.add(a.txn.appId);
  }
  s.isBlindAppend = s.commitInfo?.isBlindAppend === true;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Row tracking (module comment, step 8)

/** The row-id high-water mark a domainMetadata action sets, or undefined for other actions. */
export function highWaterMarkOf(action: Action): number | undefined {
  if (!("domainMetadata" in action)) return undefined;
  const dm = action.domainMetadata;
  if (dm.domain !== ROW_TRACKING_DOMAIN || dm.removed) return undefined;
  const hwm = (JSON.parse(dm.configuration) as { rowIdHighWaterMark?: unknown }).rowIdHighWaterMark;
  return typeof hwm === "number" ? hwm : undefined;
}

/** The high-water mark after the winners, or undefined when none of them moved it. */
export function winnersHighWaterMark(winners: WinningCommit[]): number | undefined {
  let hwm: number | undefined;
  for (const w of winners) {
    for (const a of w.actions) hwm = highWaterMarkOf(a) ?? hwm;
  }
  return hwm;
}

/**
 * The high-water mark the transaction built on, when the caller did not say: one below its lowest
 * fresh id, where fresh adds are those stamped with the version being committed (carried-over
 * files keep the version that first assigned them). With no fresh adds, our own mark (or -1).
 */
export function inferReadHighWaterMark(actions: Action[], targetVersion: number): number {
  let lowest: number | undefined;
  let own: number | undefined;
  for (const a of actions) {
    own = highWaterMarkOf(a) ?? own;
    if (!("add" in a) || a.add.baseRowId == null) continue;
    const v = a.add.defaultRowCommitVersion;
    if (v == null || v === targetVersion)
      lowest = Math.min(lowest ?? a.add.baseRowId, a.add.baseRowId);
  }
  return lowest !== undefined ? lowest - 1 : (own ?? -1);
}

/**
 * Moves our fresh row ids above `winnersHwm` (if the winners moved the mark) and restamps fresh
 * adds committed for `fromVersion` with `toVersion`. Returns new actions (the input is not
 * mutated) and the high-water mark they now build on.
 */
export function rebaseRowTracking(
  actions: Action[],
  baseHwm: number,
  winnersHwm: number | undefined,
  fromVersion: number,
  toVersion: number,
): { actions: Action[]; baseHwm: number } {
  const target = winnersHwm ?? baseHwm;
  const shift = target - baseHwm;
  let anyFresh = false;
  let freshMax = -1;
  let freshMaxKnown = true;
  const out: Action[] = actions.map((a) => {
    if (!("add" in a)) return a;
    const add = a.add;
    const fresh = add.baseRowId != null && add.baseRowId > baseHwm;
    const restamp = add.defaultRowCommitVersion === fromVersion;
    if (!fresh && !restamp) return a;
    const next: AddFile = { ...add };
    if (fresh) {
      anyFresh = true;
      next.baseRowId = (add.baseRowId as number) + shift;
      const rows = numRecordsOf(add);
      if (rows === undefined) freshMaxKnown = false;
      else freshMax = Math.max(freshMax, next.baseRowId + rows - 1);
    }
    if (restamp) next.defaultRowCommitVersion = toVersion;
    return { add: next };
  });
  let sawDomain = false;
  for (let i = 0; i < out.length; i++) {
    const hwm = highWaterMarkOf(out[i]);
    if (hwm === undefined) continue;
    sawDomain = true;
    const dm = (out[i] as { domainMetadata: DomainMetadata }).domainMetadata;
    const config = JSON.parse(dm.configuration) as Record<string, unknown>;
    config.rowIdHighWaterMark = Math.max(target, hwm + shift);
    out[i] = { domainMetadata: { ...dm, configuration: JSON.stringify(config) } };
  }
  if (!sawDomain && shift !== 0 && anyFresh) {
    // Our ids moved, so the mark the table holds (the winners') no longer covers them.
    if (!freshMaxKnown) {
      throw siltError("SILT_ROW_TRACKING_REBASE");
    }
    out.push({
      domainMetadata: {
        domain: ROW_TRACKING_DOMAIN,
        configuration: JSON.stringify({ rowIdHighWaterMark: Math.max(target, freshMax) }),
        removed: false,
      },
    });
  }
  return { actions: out, baseHwm: target };
}
