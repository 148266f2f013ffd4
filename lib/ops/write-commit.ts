/**
 * What the overwriting writes (INSERT OVERWRITE, dynamic partition overwrite, REPLACE WHERE,
 * REPLACE USING / ON) share: the table they write as one snapshot, the new rows in its schema,
 * and one `WRITE` commit in mode Overwrite.
 *
 * 1. Open the table once (or take the snapshot the caller already opened, so a source query that
 *    read the same table and the commit agree on the version), check Silt can write its protocol.
 * 2. Convert the new rows to the table's schema before anything is written.
 * 3. Commit the removes, deletion vectors and new files in one `WRITE` commit whose read set
 *    says what the decision depended on, so a concurrent change to it fails the commit instead of
 *    being overwritten. Like Spark (`commitIfNeeded`), a write that changes nothing commits
 *    nothing.
 */
import type * as arrow from "apache-arrow";
import type { TableAccess } from "../auth/authorize.ts";
import type { TableRef } from "../catalog/names.ts";
import type { ReadSet } from "../commit/conflicts.ts";
import { type OverwriteKind, overwriteOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import type { Action, Protocol } from "../delta/actions.ts";
import type { StructField } from "../delta/schema.ts";
import { commit } from "./commit.ts";
import { type InputRows, toTableRows } from "./input-rows.ts";
import { displayName, type OpenTable, openTable } from "./open-table.ts";
import { checkWriteProtocol, rowTrackingHighWaterMark } from "./write-protocol.ts";

export interface WriteTarget {
  t: OpenTable;
  tableName: string;
  rowTracking: boolean;
  /** Row-id high-water mark of the snapshot, undefined without row tracking. */
  hwm: number | undefined;
}

export interface TargetOptions {
  defaults?: { catalog?: string; schema?: string };
  /**
   * The table as the caller already opened it (SQL: before running a query that reads it), for
   * the access the operation's WRITE_ACCESS entry names.
   */
  opened?: OpenTable;
}

/**
 * What each overwriting write needs on its target: replacing the rows that match a condition
 * reads them, as DELETE does, so it takes SELECT with MODIFY; overwriting the whole table or
 * whole partitions only writes.
 */
export const WRITE_ACCESS = {
  overwrite: "write",
  replaceWhere: "readWrite",
  replaceUsing: "readWrite",
} as const satisfies Record<string, TableAccess>;

/** The target, checked for `access` unless the caller opened it (and checked it) already. */
export async function openWriteTarget(
  ctx: SiltContext,
  name: TableRef,
  access: TableAccess,
  opts: TargetOptions = {},
): Promise<WriteTarget> {
  const t = opts.opened ?? (await openTable(ctx, name, { defaults: opts.defaults, access }));
  const rowTracking = checkWriteProtocol(t.snapshot.protocol, t.snapshot.metadata);
  return {
    t,
    tableName: displayName(t.name),
    rowTracking,
    hwm: rowTracking ? rowTrackingHighWaterMark(t.snapshot) : undefined,
  };
}

export function newRows(target: WriteTarget, input: InputRows): arrow.Table {
  return toTableRows(input, target.t.schema, target.tableName);
}

export interface WriteResult {
  /** The version committed, or the version read when there was nothing to commit. */
  version: number;
  committed: boolean;
  /** Spark's operationMetrics of the commit (strings, as in the log). */
  metrics: Record<string, string>;
}

export async function commitOverwrite(
  ctx: SiltContext,
  target: WriteTarget,
  req: {
    actions: Action[];
    parameters: Record<string, unknown>;
    metrics: Record<string, string>;
    readSet: ReadSet;
    /** Which overwrite this is, for the commit's log line. */
    kind: OverwriteKind;
  },
): Promise<WriteResult> {
  const { t } = target;
  if (!req.actions.some((a) => "add" in a || "remove" in a)) {
    return { version: t.snapshot.version, committed: false, metrics: req.metrics };
  }
  const result = await commit(
    ctx,
    t,
    overwriteOperation(
      req.kind,
      t.snapshot.metadata.partitionColumns,
      req.parameters,
      req.metrics,
      req.readSet,
    ),
    req.actions,
  );
  return { version: result.version, committed: true, metrics: req.metrics };
}

/** Logical column path -> physical path, for pruning against statistics and partition values. */
export function physicalPathOf(fields: StructField[], mode: string) {
  return (path: readonly string[]): string[] => {
    if (mode === "none") return [...path];
    const out: string[] = [];
    let level: StructField[] | undefined = fields;
    for (const part of path) {
      const f: StructField | undefined = level?.find(
        (x) => x.name.toLowerCase() === part.toLowerCase(),
      );
      out.push((f?.metadata["delta.columnMapping.physicalName"] as string | undefined) ?? part);
      level =
        f && typeof f.type === "object" && f.type.type === "struct" ? f.type.fields : undefined;
    }
    return out;
  };
}

/** Sum of `size` over files. */
export const bytesOf = (files: readonly { size?: number | null }[]): number =>
  files.reduce((n, f) => n + (f.size ?? 0), 0);

/**
 * The protocol a commit that may lower nothing ends up with (REPLACE, RESTORE): the higher
 * versions and every feature either side lists, in the order first seen.
 */
export function protocolUnion(a: Protocol, b: Protocol): Protocol {
  const union = (x?: string[], y?: string[]) =>
    x === undefined && y === undefined ? undefined : [...new Set([...(x ?? []), ...(y ?? [])])];
  const out: Protocol = {
    minReaderVersion: Math.max(a.minReaderVersion, b.minReaderVersion),
    minWriterVersion: Math.max(a.minWriterVersion, b.minWriterVersion),
  };
  const readerFeatures = union(a.readerFeatures, b.readerFeatures);
  const writerFeatures = union(a.writerFeatures, b.writerFeatures);
  if (readerFeatures !== undefined && out.minReaderVersion >= 3)
    out.readerFeatures = readerFeatures;
  if (writerFeatures !== undefined && out.minWriterVersion >= 7)
    out.writerFeatures = writerFeatures;
  return out;
}

export const sameProtocol = (a: Protocol, b: Protocol): boolean =>
  a.minReaderVersion === b.minReaderVersion &&
  a.minWriterVersion === b.minWriterVersion &&
  JSON.stringify([...(a.readerFeatures ?? [])].sort()) ===
    JSON.stringify([...(b.readerFeatures ?? [])].sort()) &&
  JSON.stringify([...(a.writerFeatures ?? [])].sort()) ===
    JSON.stringify([...(b.writerFeatures ?? [])].sort());
