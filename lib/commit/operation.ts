/**
 * What a commit does, as one value (delta-rs's DeltaOperation is the model): its name and
 * parameters as Spark records them, its metrics, what it read, whether it changes the table's
 * rows and whether it is a blind append. The commit loop (transaction.ts) builds the commit's
 * `commitInfo` from it (commitInfoOf, the one producer of what DESCRIBE HISTORY shows: operation,
 * operationParameters, isBlindAppend, operationMetrics) and hands its read set and blind-append
 * flag to the conflict checker (conflicts.ts).
 *
 * The constructors below own the shapes Spark gives each family of operations, in Spark's key
 * order (history rows and operationParameters are compared exactly, seeds/ shows Spark's):
 *
 * - WRITE: `mode` (Append, Overwrite) and `partitionBy` first, then what the overwrite adds
 *   (predicate, partitionOverwriteMode…). Appends are blind and read nothing.
 * - CREATE / REPLACE TABLE [AS SELECT]: partitionBy, clusterBy, description, isManaged,
 *   properties. Creating is a blind append; replacing reads the whole table.
 * - RESTORE, ALTER (metadata changes): read the whole table.
 * - DELETE / UPDATE / MERGE: parameters and read set from the operation itself.
 * - OPTIMIZE / REORG: read the files they rewrite; change no rows.
 * - VACUUM START / END: read nothing, change no rows.
 */
import type { CommitInfo } from "../delta/actions.ts";
import type { LogFields } from "../logger.ts";
import { EMPTY_READ_SET, READ_WHOLE_TABLE, type ReadSet } from "./conflicts.ts";

export interface Operation {
  /** `commitInfo.operation`: WRITE, MERGE, CREATE OR REPLACE TABLE AS SELECT, VACUUM END… */
  name: string;
  /** Spark's operationParameters, in Spark's key order. */
  parameters: Record<string, unknown>;
  /** Spark's operationMetrics (strings, as the log stores them). */
  metrics: Record<string, string>;
  /** What the transaction read from its snapshot: what a concurrent winner may invalidate. */
  readSet: ReadSet;
  /** The commit changes the table's rows (Spark's Operation.changesData). */
  changesData: boolean;
  /** Adds files and read nothing: blind appends never conflict with each other. */
  isBlindAppend: boolean;
  /** Facts for the commit's log line (commit-report.ts) that its actions do not show. */
  reportFields?: LogFields;
}

/** The read set a commit that does not say has: nothing for blind appends, else everything. */
export const defaultReadSet = (isBlindAppend: boolean): ReadSet =>
  isBlindAppend ? EMPTY_READ_SET : READ_WHOLE_TABLE;

/** The part of `commitInfo` the operation decides; the commit loop adds the rest. */
export function commitInfoOf(op: Operation): Partial<CommitInfo> {
  return {
    operation: op.name,
    operationParameters: op.parameters,
    isBlindAppend: op.isBlindAppend,
    operationMetrics: op.metrics,
  };
}

/**
 * The operation a caller described as a bare commitInfo (the commit loop's lower-level form):
 * its read set, when not given, follows defaultReadSet.
 */
export function operationFromCommitInfo(
  ci: Partial<CommitInfo>,
  readSet: ReadSet | undefined,
): Operation {
  const isBlindAppend = ci.isBlindAppend === true;
  return {
    name: ci.operation ?? "",
    parameters: ci.operationParameters ?? {},
    metrics: ci.operationMetrics ?? {},
    readSet: readSet ?? defaultReadSet(isBlindAppend),
    changesData: true,
    isBlindAppend,
  };
}

/** WRITE, mode Append: a blind append. */
export function appendOperation(
  partitionColumns: readonly string[],
  metrics: Record<string, string>,
): Operation {
  return {
    name: "WRITE",
    parameters: { mode: "Append", partitionBy: JSON.stringify(partitionColumns) },
    metrics,
    readSet: EMPTY_READ_SET,
    changesData: true,
    isBlindAppend: true,
  };
}

/** Which overwrite a WRITE in mode Overwrite is, for its log line. */
export type OverwriteKind = "table" | "partitions" | "where" | "using" | "on";

/**
 * WRITE, mode Overwrite: INSERT OVERWRITE of the table or (dynamic) of its partitions, REPLACE
 * WHERE, REPLACE USING / ON.
 */
export function overwriteOperation(
  kind: OverwriteKind,
  partitionColumns: readonly string[],
  parameters: Record<string, unknown>,
  metrics: Record<string, string>,
  readSet: ReadSet,
): Operation {
  return {
    name: "WRITE",
    parameters: { mode: "Overwrite", partitionBy: JSON.stringify(partitionColumns), ...parameters },
    metrics,
    readSet,
    changesData: true,
    isBlindAppend: false,
    reportFields: { overwrite: kind },
  };
}

export interface TableDefinition {
  partitionColumns: readonly string[];
  description: string | null;
  /** The new table's `metaData.configuration`. */
  configuration: Record<string, string>;
}

function definitionParameters(def: TableDefinition): Record<string, unknown> {
  return {
    partitionBy: JSON.stringify(def.partitionColumns),
    clusterBy: "[]",
    description: def.description,
    isManaged: "true",
    properties: JSON.stringify(def.configuration),
  };
}

/** CREATE TABLE [AS SELECT] (or the CREATE OR REPLACE of a table that did not exist). */
export function createTableOperation(
  name: string,
  def: TableDefinition,
  metrics: Record<string, string>,
  opts: { asSelect: boolean },
): Operation {
  return {
    name,
    parameters: definitionParameters(def),
    metrics,
    readSet: EMPTY_READ_SET,
    changesData: opts.asSelect,
    isBlindAppend: true,
  };
}

/** REPLACE TABLE [AS SELECT]: every old file goes, so it read the whole table. */
export function replaceTableOperation(
  name: string,
  def: TableDefinition,
  metrics: Record<string, string>,
): Operation {
  return {
    name,
    parameters: definitionParameters(def),
    metrics,
    readSet: READ_WHOLE_TABLE,
    changesData: true,
    isBlindAppend: false,
  };
}

/** RESTORE: the table becomes an older version of itself. */
export function restoreOperation(
  parameters: { version: number | null; timestamp: string | null },
  metrics: Record<string, string>,
  restoredVersion: number,
): Operation {
  return {
    name: "RESTORE",
    parameters,
    metrics,
    readSet: READ_WHOLE_TABLE,
    changesData: true,
    isBlindAppend: false,
    reportFields: { restoredVersion },
  };
}

/** ALTER TABLE (properties, columns): new metadata, no data; conflicts with every write. */
export function metadataChangeOperation(
  name: string,
  parameters: Record<string, string>,
): Operation {
  return {
    name,
    parameters,
    metrics: {},
    readSet: READ_WHOLE_TABLE,
    changesData: false,
    isBlindAppend: false,
  };
}

/** DELETE, UPDATE, MERGE: read what `readSet` says, change rows. */
export function dmlOperation(
  name: string,
  parameters: Record<string, unknown>,
  metrics: Record<string, string>,
  readSet: ReadSet,
): Operation {
  return { name, parameters, metrics, readSet, changesData: true, isBlindAppend: false };
}

/** OPTIMIZE / REORG: rewrites `rewritten` (the paths it read) without changing a row. */
export function optimizeOperation(
  name: "OPTIMIZE" | "REORG",
  parameters: Record<string, unknown>,
  metrics: Record<string, string>,
  rewritten: Iterable<string>,
): Operation {
  return {
    name,
    parameters,
    metrics,
    readSet: { readWholeTable: false, readFilePaths: new Set(rewritten) },
    changesData: false,
    isBlindAppend: false,
  };
}

/** VACUUM START / END: history only; they read nothing, so nothing can conflict with them. */
export function vacuumOperation(
  name: "VACUUM START" | "VACUUM END",
  parameters: Record<string, unknown>,
  metrics: Record<string, string>,
  reportFields: { mode: string; numDeletedFiles?: number },
): Operation {
  return {
    name,
    parameters,
    metrics,
    readSet: EMPTY_READ_SET,
    changesData: false,
    isBlindAppend: false,
    reportFields,
  };
}
