/**
 * The commit loop every operation commits through (DESIGN §3).
 *
 * 1. Cooperative publish: read the arbiter's tail and publish any ratified-but-unpublished
 *    versions, so the log a reader lists is never held back by a writer that crashed.
 * 2. If the arbiter is already past the version we read, skip straight to step 7: proposing
 *    readVersion + 1 could only lose.
 * 3. Build the commit for v = base + 1: commitInfo first (inCommitTimestamp = timestamp =
 *    max(clock, previous ICT + 1), Spark's key order, the transaction's txnId: one per
 *    transaction, every attempt the same, as in Delta), then our actions.
 * 4. Stage it: put-if-absent `<tableRoot>_delta_log/_staged_commits/<v20>.<txnId>.json`. A crash
 *    after this leaves only an orphan file that no reader looks at (VACUUM's job to remove).
 * 5. Ratify: conditional PutItem of (tableId, v). Exactly one writer wins each version.
 * 6. Won: publish every ratified version up to v in order, run the post-commit work (the automatic
 *    checkpoint, post-commit.ts), report the commit (its log line and metrics, commit-report.ts)
 *    and return. A crash between 5 and 6 is finished by the next reader
 *    or writer (step 1, or publishUpTo).
 * 7. Lost: read the winners base+1..latest (staged file, or the published one), check each for
 *    conflicts with Delta's rules (conflicts.ts; a conflict throws, having changed nothing a reader
 *    can see), then rebase: base = latest, ICT above the latest winner's, row ids moved above the
 *    winners' high-water mark. Back off (exponential, full jitter) and go to step 3, until the
 *    retry budget (a time, not a count: how often a writer loses depends on how many others
 *    write, which it cannot know) is spent. Our losing staged files stay behind for VACUUM.
 * Every attempt (step 2 on) first checks the statement's deadline: a statement past its time
 * budget stops retrying though retry budget is left, and commits nothing.
 */
import { randomUUID } from "node:crypto";
import type { Deadline } from "../deadline.ts";
import {
  type Action,
  type CommitInfo,
  parseActions,
  STAGED_DIR,
  serializeActions,
} from "../delta/actions.ts";
import { siltError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { ObjectNotFoundError, type ObjectStore } from "../storage/object-store.ts";
import type { CommitArbiter, RatifiedRow } from "./arbiter.ts";
import { reportCommit } from "./commit-report.ts";
import {
  checkConflicts,
  type IsolationLevel,
  inferReadHighWaterMark,
  type PendingTransaction,
  type ReadSet,
  rebaseRowTracking,
  type WinningCommit,
  winnersHighWaterMark,
} from "./conflicts.ts";
import { commitInfoOf, type Operation, operationFromCommitInfo } from "./operation.ts";
import { afterPublishedCommit, type PostCommitConfig } from "./post-commit.ts";
import { publishedKey, publishRows, publishUpTo } from "./publisher.ts";

/** Kept in step with package.json's version (a test checks it). */
export const SILT_VERSION = "0.1.0";
export const ENGINE_INFO = `Silt/${SILT_VERSION}`;

/** Where a commit attempt stands when a hook runs. */
export interface AttemptInfo {
  version: number;
  stagedKey: string;
  txnId: string;
  inCommitTimestamp: number;
}

/**
 * Test seams for crash injection against the real services: a hook that throws stops the commit
 * right there, exactly as a process dying at that point would.
 */
export interface CommitHooks {
  afterStage?(info: AttemptInfo): Promise<void>;
  afterRatify?(info: AttemptInfo): Promise<void>;
}

export interface CommitRequest {
  store: ObjectStore;
  arbiter: CommitArbiter;
  tableId: string;
  /** Object-key prefix of the table: "" or ending with "/" (e.g. "tables/<uuid>/"). */
  tableRoot: string;
  /** Name for error messages; defaults to the table id. */
  tableName?: string;
  /** Snapshot version the actions were computed from; -1 to create the table. */
  readVersion: number;
  /** In-commit timestamp of readVersion; the arbiter's row is used when it has it. */
  previousTimestamp?: number;
  /** The commit's actions, without commitInfo. */
  actions: Action[];
  /**
   * What the commit does (operation.ts): its commitInfo fields and the read set the conflict
   * checker uses. The builder (lib/ops/commit.ts) always passes one.
   */
  operation?: Operation;
  /**
   * commitInfo fields beyond the operation's (userMetadata, tags…). Without `operation`, the
   * whole description: operation (required), operationParameters, operationMetrics,
   * isBlindAppend…
   */
  commitInfo?: Partial<CommitInfo>;
  /** Default Serializable (the table's `delta.isolationLevel` decides). */
  isolationLevel?: IsolationLevel;
  /**
   * Without `operation`: what the transaction read; defaults to nothing for blind appends, the
   * whole table otherwise (operation.ts defaultReadSet).
   */
  readSet?: ReadSet;
  clock?: () => number;
  /**
   * The transaction's commitInfo.txnId, the same on every attempt; default a fresh UUID. A caller
   * that must later tell whether the transaction committed (an Idempotency-Key retry) picks it
   * and finds it on the arbiter's row of the version it won.
   */
  txnId?: string;
  /**
   * How long (by `clock`, from the first ratification lost) to keep rebasing and retrying before
   * giving up with DELTA_CONCURRENT_WRITE; default 20 s.
   */
  retryBudgetMs?: number;
  /** The statement's time budget: no attempt starts once it is spent, so nothing commits late. */
  deadline?: Deadline;
  /** The table has row tracking: rebases must move fresh row ids and restamp commit versions. */
  rowTracking?: boolean;
  /**
   * Row-id high-water mark of the snapshot at readVersion (-1 when none). Inferred from the adds
   * when absent (conflicts.ts inferReadHighWaterMark).
   */
  readRowIdHighWaterMark?: number;
  /**
   * Backoff between lost ratifications: full jitter, `random()` times min(capMs, baseMs * 2^n),
   * waited out with `sleep` (both injectable so tests neither wait nor depend on timing).
   */
  backoff?: {
    baseMs?: number;
    capMs?: number;
    random?: () => number;
    sleep?: (ms: number) => Promise<void>;
  };
  hooks?: CommitHooks;
  /**
   * How the post-commit work (the automatic checkpoint) runs for this commit; what it leaves out
   * takes the defaults (post-commit.ts). The builder passes the context's.
   */
  postCommit?: Partial<PostCommitConfig>;
  /**
   * Where the commit's report line goes outside a Lambda invocation (commit-report.ts); inside
   * one it is the invocation's metric record. The builder passes the context's logger.
   */
  logger?: Logger;
}

export interface CommitResult {
  version: number;
  inCommitTimestamp: number;
  txnId: string;
  /** Ratifications tried, the winning one included. */
  attempts: number;
  /**
   * False when publishing failed after the commit was ratified. The commit still stands; the
   * next reader or writer publishes it.
   */
  published: boolean;
  /**
   * Whether the post-commit step wrote a checkpoint at this version. Always false when that step
   * is off or runs in the background (post-commit.ts).
   */
  checkpointWritten: boolean;
}

// A count of 20 attempts ran out for a blind append between two busy processes; a time keeps
// trying as long as the caller can wait. 20 s leaves the work before the commit some of an API
// Gateway request's 29 s.
const DEFAULT_RETRY_BUDGET_MS = 20_000;
const DEFAULT_BACKOFF_BASE_MS = 10;
const DEFAULT_BACKOFF_CAP_MS = 1_000;

export async function commitTransaction(req: CommitRequest): Promise<CommitResult> {
  const { store, arbiter, tableId, hooks } = req;
  const tableRoot =
    req.tableRoot === "" || req.tableRoot.endsWith("/") ? req.tableRoot : `${req.tableRoot}/`;
  const given: Partial<CommitInfo> = {
    ...req.commitInfo,
    ...(req.operation && commitInfoOf(req.operation)),
  };
  const op = req.operation ?? operationFromCommitInfo(given, req.readSet);
  const operation = op.name;
  if (operation === "") {
    throw siltError("SILT_COMMIT_WITHOUT_OPERATION");
  }
  if (req.actions.some((a) => "commitInfo" in a)) {
    throw siltError("SILT_COMMIT_INFO_IN_ACTIONS");
  }
  const clock = req.clock ?? Date.now;
  const retryBudgetMs = req.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;
  const txnId = req.txnId ?? randomUUID();
  const isolationLevel: IsolationLevel =
    req.isolationLevel ?? (given.isolationLevel as IsolationLevel | undefined) ?? "Serializable";
  const tableName = req.tableName ?? tableId;
  // The conflict checker sees what the operation read and whether it is a blind append.
  const pending: PendingTransaction = {
    actions: req.actions,
    readSet: op.readSet,
    isolationLevel,
    isBlindAppend: op.isBlindAppend,
    tableName,
  };

  // Step 1.
  const tail = await arbiter.tail(tableId);
  await publishRows(store, arbiter, tableRoot, tail.unpublished);
  let latestRow: RatifiedRow | undefined = tail.latest;
  if (req.readVersion > (latestRow?.version ?? -1)) {
    throw siltError("SILT_READ_VERSION_AHEAD", {
      tableName,
      readVersion: req.readVersion,
      latestVersion: latestRow?.version ?? "none",
    });
  }

  let actions = req.actions;
  let base = req.readVersion;
  let target = base + 1;
  let previousIct = req.previousTimestamp;
  let rowIdHwm = req.rowTracking
    ? (req.readRowIdHighWaterMark ?? inferReadHighWaterMark(actions, target))
    : -1;
  let attempts = 0;
  let firstLostAt: number | undefined;
  // Rows above `base` already read with the latest one (after a lost ratification).
  let newerRows: RatifiedRow[] | undefined;

  for (;;) {
    req.deadline?.check();
    const latestVersion = latestRow?.version ?? -1;
    if (latestVersion > base) {
      // Step 7: conflicts, then rebase onto latestVersion.
      const rows = newerRows ?? (await arbiter.range(tableId, base + 1, latestVersion));
      newerRows = undefined;
      const winners = await loadWinners(store, tableId, tableRoot, base + 1, latestVersion, rows);
      for (const w of winners) checkConflicts({ ...pending, actions }, w);
      const next = latestVersion + 1;
      if (req.rowTracking) {
        const rebased = rebaseRowTracking(
          actions,
          rowIdHwm,
          winnersHighWaterMark(winners),
          target,
          next,
        );
        actions = rebased.actions;
        rowIdHwm = rebased.baseHwm;
      }
      previousIct = maxDefined(previousIct, winnersLatestIct(winners));
      base = latestVersion;
      target = next;
    }
    if (latestRow !== undefined && latestRow.version === base) {
      previousIct = maxDefined(previousIct, latestRow.inCommitTimestamp);
    }

    // Step 3.
    const now = clock();
    const inCommitTimestamp = previousIct === undefined ? now : Math.max(now, previousIct + 1);
    const commitInfo = buildCommitInfo(given, {
      inCommitTimestamp,
      readVersion: req.readVersion,
      version: target,
      isolationLevel,
      txnId,
    });
    // Every Silt writer keeps row ids stable (row-tracking.ts); readers may rely on it.
    if (req.rowTracking)
      commitInfo.tags = { "delta.rowTracking.preserved": "true", ...commitInfo.tags };
    const body = new TextEncoder().encode(serializeActions([{ commitInfo }, ...actions]));

    // Step 4.
    const stagedKey = `${tableRoot}${STAGED_DIR}${String(target).padStart(20, "0")}.${txnId}.json`;
    if (!(await store.putIfAbsent(stagedKey, body))) {
      throw siltError("SILT_STAGED_COMMIT_EXISTS", { stagedKey });
    }
    const info: AttemptInfo = { version: target, stagedKey, txnId, inCommitTimestamp };
    await hooks?.afterStage?.(info);

    // Step 5.
    attempts++;
    const won = await arbiter.ratify({
      tableId,
      version: target,
      stagedKey,
      inCommitTimestamp,
      txnId,
      operation,
    });
    if (won) {
      await hooks?.afterRatify?.(info);
      // Step 6.
      let published = true;
      try {
        await publishUpTo(store, arbiter, tableId, tableRoot, target);
      } catch {
        published = false;
      }
      // Checkpoints only cover published versions; this never throws (post-commit.ts).
      const checkpoint = published
        ? await afterPublishedCommit(
            { store, tableRoot, version: target, actions, clock },
            req.postCommit,
          )
        : undefined;
      reportCommit({
        tableName,
        tableId,
        operation,
        version: target,
        actions,
        attempts,
        published,
        checkpointWritten: published ? checkpoint !== undefined : undefined,
        fields: op.reportFields,
        logger: req.logger,
      });
      return {
        version: target,
        inCommitTimestamp,
        txnId,
        attempts,
        published,
        checkpointWritten: checkpoint !== undefined,
      };
    }

    firstLostAt ??= clock();
    const retryingMs = clock() - firstLostAt;
    if (retryingMs >= retryBudgetMs) {
      throw siltError("DELTA_CONCURRENT_WRITE", { tableName, attempts, target, retryingMs });
    }
    await (req.backoff?.sleep ?? sleep)(backoffMs(attempts, req.backoff));
    // One query yields both the winners to check and the latest version to rebase onto.
    newerRows = await arbiter.range(tableId, base + 1);
    latestRow = newerRows.at(-1) ?? (await arbiter.latest(tableId));
  }
}

/** Spark's commitInfo key order, with the fields this layer owns filled in. */
function buildCommitInfo(
  given: Partial<CommitInfo>,
  own: {
    inCommitTimestamp: number;
    readVersion: number;
    version: number;
    isolationLevel: IsolationLevel;
    txnId: string;
  },
): CommitInfo {
  const {
    inCommitTimestamp: _ict,
    timestamp: _ts,
    userId,
    userName,
    operation,
    operationParameters,
    readVersion: _rv,
    isolationLevel: _il,
    isBlindAppend,
    operationMetrics,
    userMetadata,
    tags,
    engineInfo: _ei,
    txnId: _tx,
    ...extra
  } = given;
  const ci: CommitInfo = {
    inCommitTimestamp: own.inCommitTimestamp,
    timestamp: own.inCommitTimestamp,
  };
  if (userId !== undefined) ci.userId = userId;
  if (userName !== undefined) ci.userName = userName;
  ci.operation = operation;
  ci.operationParameters = operationParameters ?? {};
  // Spark omits readVersion when creating the table, and keeps the version the transaction read
  // (not the rebased one) so history shows that the commit was retried.
  if (own.version > 0 && own.readVersion >= 0) ci.readVersion = own.readVersion;
  ci.isolationLevel = own.isolationLevel;
  ci.isBlindAppend = isBlindAppend ?? false;
  ci.operationMetrics = operationMetrics ?? {};
  if (userMetadata !== undefined) ci.userMetadata = userMetadata;
  if (tags !== undefined) ci.tags = tags;
  Object.assign(ci, extra);
  ci.engineInfo = ENGINE_INFO;
  ci.txnId = own.txnId;
  return ci;
}

/** The commits that won versions from..to, from their staged files or the published log. */
async function loadWinners(
  store: ObjectStore,
  tableId: string,
  tableRoot: string,
  from: number,
  to: number,
  arbiterRows: RatifiedRow[],
): Promise<WinningCommit[]> {
  const rows = new Map(arbiterRows.map((r) => [r.version, r]));
  const versions = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  return Promise.all(
    versions.map(async (version) => {
      const row = rows.get(version);
      const logKey = publishedKey(tableRoot, version);
      // Published rows may have had their staged file cleaned up; unpublished ones have no log file.
      const keys =
        row === undefined
          ? [logKey]
          : row.published
            ? [logKey, row.stagedKey]
            : [row.stagedKey, logKey];
      for (const key of keys) {
        try {
          const text = new TextDecoder().decode(await store.get(key));
          return { version, actions: parseActions(text) };
        } catch (err) {
          if (!(err instanceof ObjectNotFoundError)) throw err;
        }
      }
      throw siltError("SILT_WINNING_COMMIT_MISSING", {
        version,
        tableId,
        keys: keys.join(" nor "),
      });
    }),
  );
}

function winnersLatestIct(winners: WinningCommit[]): number | undefined {
  let ict: number | undefined;
  for (const w of winners) {
    for (const a of w.actions) {
      if ("commitInfo" in a && typeof a.commitInfo.inCommitTimestamp === "number") {
        ict = maxDefined(ict, a.commitInfo.inCommitTimestamp);
      }
    }
  }
  return ict;
}

const maxDefined = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

function backoffMs(lost: number, opts: CommitRequest["backoff"]): number {
  const base = opts?.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const cap = opts?.capMs ?? DEFAULT_BACKOFF_CAP_MS;
  return (opts?.random ?? Math.random)() * Math.min(cap, base * 2 ** (lost - 1));
}

const sleep = (ms: number): Promise<void> =>
  ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
