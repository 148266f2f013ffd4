/**
 * INSERT INTO (append): new rows, new files, nothing removed.
 *
 * 1. Open the table at its latest version and check Silt can write its protocol.
 * 2. Convert and validate the rows against the schema (nothing is written if any row is bad).
 * 3. Write the data files (partitioned, statistics, row ids).
 * 4. Commit a blind append (`WRITE`, mode Append). Blind appends never conflict, so a lost race
 *    only rebases and retries.
 */

import type * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import { appendOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import type { Action } from "../delta/actions.ts";
import { commit } from "./commit.ts";
import { type InputRows, toTableRows } from "./input-rows.ts";
import { displayName, type OpenTable, openTable } from "./open-table.ts";
import { type WriteFilesResult, writeDataFiles } from "./write-files.ts";
import { checkWriteProtocol, rowTrackingHighWaterMark } from "./write-protocol.ts";

export interface AppendResult {
  version: number;
  numFiles: number;
  numOutputRows: number;
  numOutputBytes: number;
}

export async function appendRows(
  ctx: SiltContext,
  name: TableRef,
  input: InputRows,
  opts: { defaults?: { catalog?: string; schema?: string } } = {},
): Promise<AppendResult> {
  const t = await openTable(ctx, name, { defaults: opts.defaults, access: "write" });
  const data = toTableRows(input, t.schema, displayName(t.name));
  const { version, written } = await commitAppend(ctx, t, data);
  return {
    version,
    numFiles: Number(written.metrics.numFiles),
    numOutputRows: data.numRows,
    numOutputBytes: Number(written.metrics.numOutputBytes),
  };
}

/**
 * Steps 3 and 4 for rows already in the table's schema, with `extra` actions in the same commit
 * (ingestion's `txn` records). The commit's log line and metrics come from the transaction.
 */
export async function commitAppend(
  ctx: SiltContext,
  t: OpenTable,
  data: arrow.Table,
  extra: Action[] = [],
): Promise<{ version: number; written: WriteFilesResult }> {
  const rowTracking = checkWriteProtocol(t.snapshot.protocol, t.snapshot.metadata);
  const hwm = rowTracking ? rowTrackingHighWaterMark(t.snapshot) : undefined;
  const written = await writeDataFiles(ctx, {
    tableRoot: t.entry.location,
    metadata: t.snapshot.metadata,
    data,
    version: t.snapshot.version + 1,
    rowIdHighWaterMark: hwm,
  });
  const result = await commit(
    ctx,
    t,
    appendOperation(t.snapshot.metadata.partitionColumns, written.metrics),
    [...extra, ...written.actions],
  );
  return { version: result.version, written };
}
