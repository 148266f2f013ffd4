/**
 * Commits that another engine wrote (Spark, DuckDB: `add-commit` of the UC Delta API,
 * `commit_info` of the legacy API), ratified by the same arbiter as Silt's own commits, so each
 * version of a table has exactly one owner whichever engine wrote it (DESIGN §9).
 *
 * The client has already written its data files and its staged commit
 * `_delta_log/_staged_commits/<v>.<uuid>.json`, and did its own conflict checks against the
 * version it read. Silt neither rebases nor conflict-checks it; it decides whether it may have the
 * version:
 *
 * 1. Versions the arbiter already holds: the same file again is a replay of an accepted commit
 *    (success, nothing changes); another file is COMMIT_VERSION_CONFLICT (409), which tells a
 *    race loser to reload and rebase. A version past latest + 1 is a gap (400).
 * 2. The staged file must exist with the stated size, hold a commitInfo whose in-commit
 *    timestamp is above the previous version's, keep the catalog's requirements if it changes
 *    protocol or metadata, and — for a column-mapped table — write data files whose columns carry
 *    the physical names (DuckDB 1.5.5 writes logical names; such files would read as NULLs).
 * 3. Too many ratified-but-unpublished versions (publishing is failing) is RESOURCE_EXHAUSTED
 *    (429), as Unity Catalog bounds its unbackfilled commits.
 * 4. Ratify with the conditional put Silt's writers use. Losing it here means another writer
 *    took the version in between: step 1 answers again.
 * 5. Publish right away (copy-if-absent of the same bytes, so clients that backfill too are
 *    harmless), and report the commit like any other.
 */
import type { TableEntry } from "../catalog/catalog-store.ts";
import type { RatifiedRow } from "../commit/arbiter.ts";
import { reportCommit } from "../commit/commit-report.ts";
import { publishRows, publishUpTo } from "../commit/publisher.ts";
import type { SiltContext } from "../context.ts";
import { readParquetFooter } from "../data/parquet.ts";
import {
  type Action,
  type AddFile,
  type CommitInfo,
  type Metadata,
  type Protocol,
  parseActions,
  STAGED_DIR,
} from "../delta/actions.ts";
import { columnMappingMode, toPhysicalSchema } from "../delta/column-mapping.ts";
import { materializedColumns } from "../delta/row-tracking.ts";
import { parseSchema } from "../delta/schema.ts";
import { checkManagedTable } from "../delta/table-profile.ts";
import { type SiltError, siltError } from "../errors.ts";
import { readSnapshot } from "./open-table.ts";
import { fileKey } from "./read-files.ts";

export interface ExternalCommit {
  version: number;
  /** Name of the staged file under `_delta_log/_staged_commits/`. */
  fileName: string;
  fileSize: number;
  /** The commit's timestamp as the client states it (its in-commit timestamp). */
  timestamp: number;
}

export interface CommitOutcome {
  version: number;
  /** The arbiter already held this very commit: nothing changed. */
  replayed: boolean;
}

/** Unpublished versions above which Silt refuses commits until publishing catches up (UC's 10). */
export const MAX_UNPUBLISHED_COMMITS = 10;

const STAGED_NAME = /^(\d{20})\.[0-9A-Za-z-]+\.json$/;

export async function acceptExternalCommit(
  ctx: SiltContext,
  entry: TableEntry,
  tableName: string,
  commit: ExternalCommit,
): Promise<CommitOutcome> {
  const { tableId } = entry;
  const nameMatch = STAGED_NAME.exec(commit.fileName);
  if (nameMatch === null || Number(nameMatch[1]) !== commit.version) {
    throw siltError("INVALID_PARAMETER_VALUE:COMMIT_FILE_NAME", {
      fileName: commit.fileName,
      version: commit.version,
      stagedDir: STAGED_DIR,
    });
  }
  const tail = await ctx.arbiter.tail(tableId);

  // Step 1.
  const decided = await decidedOutcome(ctx, entry, commit, tail.latest);
  if (decided !== undefined) return decided;

  // Step 2.
  const stagedKey = `${entry.location}${STAGED_DIR}${commit.fileName}`;
  const actions = await readStagedCommit(ctx, stagedKey, commit);
  const commitInfo = (actions.find((a) => "commitInfo" in a) as { commitInfo: CommitInfo })
    ?.commitInfo;
  const ict = commitInfo?.inCommitTimestamp;
  if (typeof ict !== "number") {
    throw siltError("INVALID_PARAMETER_VALUE:COMMIT_WITHOUT_ICT", {
      fileName: commit.fileName,
    });
  }
  const previousIct = tail.latest?.inCommitTimestamp ?? Number.NEGATIVE_INFINITY;
  if (ict <= previousIct) {
    throw siltError("INVALID_PARAMETER_VALUE:COMMIT_ICT_NOT_INCREASING", {
      fileName: commit.fileName,
      ict,
      previousIct,
      previousVersion: commit.version - 1,
    });
  }
  await checkCommitContent(ctx, entry, tableName, actions);

  // Step 3.
  let unpublished = tail.unpublished;
  if (unpublished.length >= MAX_UNPUBLISHED_COMMITS) {
    await publishRows(ctx.store, ctx.arbiter, entry.location, unpublished).catch(() => []);
    unpublished = await ctx.arbiter.unpublished(tableId);
    if (unpublished.length >= MAX_UNPUBLISHED_COMMITS) {
      throw siltError("RESOURCE_EXHAUSTED", { tableName, unpublishedCount: unpublished.length });
    }
  }

  // Step 4.
  const won = await ctx.arbiter.ratify({
    tableId,
    version: commit.version,
    stagedKey,
    inCommitTimestamp: ict,
    txnId: typeof commitInfo.txnId === "string" ? commitInfo.txnId : commit.fileName.slice(21, -5),
    operation: commitInfo.operation ?? "UNKNOWN",
  });
  if (!won) {
    const outcome = await decidedOutcome(ctx, entry, commit, await ctx.arbiter.latest(tableId));
    if (outcome !== undefined) return outcome;
    throw conflictAt(commit, undefined);
  }

  // Step 5.
  let published = true;
  try {
    await publishUpTo(ctx.store, ctx.arbiter, tableId, entry.location, commit.version);
  } catch (err) {
    published = false;
    ctx.logger.warn("publishing an accepted commit failed; the next reader or writer retries", {
      tableId,
      version: commit.version,
      error: String(err),
    });
  }
  reportCommit({
    tableName,
    tableId,
    operation: commitInfo.operation ?? "UNKNOWN",
    version: commit.version,
    actions: actions.filter((a) => !("commitInfo" in a)),
    attempts: 1,
    published,
  });
  return { version: commit.version, replayed: false };
}

/** Step 1: the answer when the arbiter already decided the version, else undefined. */
async function decidedOutcome(
  ctx: SiltContext,
  entry: TableEntry,
  commit: ExternalCommit,
  latest: RatifiedRow | undefined,
): Promise<CommitOutcome | undefined> {
  const last = latest?.version ?? -1;
  if (commit.version > last + 1) {
    throw siltError("INVALID_PARAMETER_VALUE:COMMIT_SKIPS_VERSIONS", {
      version: commit.version,
      tableId: entry.tableId,
      last,
      nextVersion: last + 1,
    });
  }
  if (commit.version === last + 1) return undefined;
  const row =
    latest?.version === commit.version
      ? latest
      : (await ctx.arbiter.range(entry.tableId, commit.version, commit.version))[0];
  if (row !== undefined && baseName(row.stagedKey) === commit.fileName) {
    return { version: commit.version, replayed: true };
  }
  throw conflictAt(commit, row);
}

const conflictAt = (commit: ExternalCommit, row: RatifiedRow | undefined): SiltError =>
  siltError("COMMIT_VERSION_CONFLICT", {
    version: commit.version,
    winner: row === undefined ? "another file" : baseName(row.stagedKey),
    fileName: commit.fileName,
  });

const baseName = (key: string): string => key.slice(key.lastIndexOf("/") + 1);

async function readStagedCommit(
  ctx: SiltContext,
  stagedKey: string,
  commit: ExternalCommit,
): Promise<Action[]> {
  const info = await ctx.store.head(stagedKey);
  if (info === undefined) {
    throw siltError("INVALID_PARAMETER_VALUE:COMMIT_FILE_MISSING", {
      stagedDir: STAGED_DIR,
      fileName: commit.fileName,
    });
  }
  if (info.size !== commit.fileSize) {
    throw siltError("INVALID_PARAMETER_VALUE:COMMIT_FILE_SIZE", {
      fileName: commit.fileName,
      infoSize: info.size,
      fileSize: commit.fileSize,
    });
  }
  try {
    return parseActions(new TextDecoder().decode(await ctx.store.get(stagedKey)));
  } catch (err) {
    throw siltError("INVALID_PARAMETER_VALUE:COMMIT_FILE_NOT_JSON", {
      fileName: commit.fileName,
      message: (err as Error).message,
    });
  }
}

/** Step 2's content rules: the catalog's requirements and physical column names. */
async function checkCommitContent(
  ctx: SiltContext,
  entry: TableEntry,
  tableName: string,
  actions: Action[],
): Promise<void> {
  const protocolAction = (actions.find((a) => "protocol" in a) as { protocol: Protocol })?.protocol;
  const metadataAction = (actions.find((a) => "metaData" in a) as { metaData: Metadata })?.metaData;
  const adds = actions.flatMap((a) => ("add" in a ? [a.add] : []));
  if (protocolAction === undefined && metadataAction === undefined && adds.length === 0) return;
  const snapshot = await readSnapshot(ctx, entry);
  const metadata = metadataAction ?? snapshot.metadata;
  if (protocolAction !== undefined || metadataAction !== undefined) {
    checkManagedTable(
      tableName,
      entry.tableId,
      protocolAction ?? snapshot.protocol,
      metadata.configuration ?? {},
      "commit to",
    );
  }
  const mode = columnMappingMode(metadata.configuration ?? {});
  if (mode === "none" || adds.length === 0) return;
  const known = new Set(
    toPhysicalSchema(parseSchema(metadata.schemaString), mode).fields.map((f) => f.name),
  );
  const hidden = materializedColumns(metadata);
  if (hidden !== undefined) {
    known.add(hidden.rowId);
    known.add(hidden.commitVersion);
  }
  await Promise.all(adds.map((add) => checkPhysicalNames(ctx, entry, tableName, add, known)));
}

async function checkPhysicalNames(
  ctx: SiltContext,
  entry: TableEntry,
  tableName: string,
  add: AddFile,
  known: ReadonlySet<string>,
): Promise<void> {
  const key = fileKey(entry.location, add.path);
  const footer = await readParquetFooter({
    size: add.size,
    read: (start, end) => ctx.store.getRange(key, start, end),
  }).catch((err: unknown) => {
    throw siltError("INVALID_PARAMETER_VALUE:DATA_FILE_NOT_PARQUET", {
      path: add.path,
      message: (err as Error).message,
    });
  });
  const unknown = footer.schema.map((n) => n.name).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw siltError("DELTA_COLUMN_MAPPING_PHYSICAL_NAMES_MISSING", {
      tableName,
      path: add.path,
      unknown: unknown.join(", "),
    });
  }
}

/** A ratified commit that is not yet in `_delta_log/`, as Unity Catalog lists them. */
export interface TrackedCommit {
  version: number;
  /** Its in-commit timestamp. */
  timestamp: number;
  fileName: string;
  fileSize: number;
  fileModificationTimestamp: number;
}

/**
 * The latest ratified version and the commits above the published log, ascending, with the size
 * and time of their staged files (clients read them from `_staged_commits/` by name).
 */
export async function unpublishedCommits(
  ctx: SiltContext,
  entry: TableEntry,
): Promise<{ latestVersion: number; commits: TrackedCommit[] }> {
  const { latest, unpublished } = await ctx.arbiter.tail(entry.tableId);
  const commits = await Promise.all(
    unpublished.map(async (row) => {
      const info = await ctx.store.head(row.stagedKey);
      return {
        version: row.version,
        timestamp: row.inCommitTimestamp,
        fileName: baseName(row.stagedKey),
        fileSize: info?.size ?? 0,
        fileModificationTimestamp: info?.lastModified ?? row.ratifiedAt,
      };
    }),
  );
  return { latestVersion: latest?.version ?? -1, commits };
}
