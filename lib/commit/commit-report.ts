/**
 * The one log line and metric record of every ratified commit. Every operation commits through
 * commitTransaction, so reporting there gives each function the same fields without each
 * operation remembering to log them: table, operation, version, rows and bytes written, files
 * added and removed, whether a checkpoint was written, and what the operation adds
 * (Operation.reportFields: RESTORE's restored version, VACUUM's mode…). Operations log no line
 * of their own for a commit.
 *
 * Inside a Lambda invocation the line is also the commit's EMF metric record; elsewhere (the local
 * server) it goes to the committer's logger (the context's, passed by the commit builder).
 *
 * Rows and bytes are those of the data files the commit adds (`numRecords` statistics and sizes),
 * whatever the operation: an OPTIMIZE's rewritten files count too, which the Operation dimension
 * tells apart. Rows are left out of the line when an added file has no statistics.
 */
import { type Action, numRecordsOf } from "../delta/actions.ts";
import type { LogFields, Logger } from "../logger.ts";
import { emitMetrics } from "../metrics.ts";

export interface CommitReport {
  tableName: string;
  tableId: string;
  operation: string;
  version: number;
  /** The committed actions (commitInfo excluded). */
  actions: readonly Action[];
  /** Ratifications tried, the winning one included. */
  attempts: number;
  published: boolean;
  /** Whether the post-commit step wrote a checkpoint (left out when unknown). */
  checkpointWritten?: boolean;
  /** The operation's own facts for the line (Operation.reportFields). */
  fields?: LogFields;
  /** Where the line goes outside a Lambda invocation (metrics.ts emitMetrics). */
  logger?: Logger;
}

export function reportCommit(report: CommitReport): void {
  let files = 0;
  let removed = 0;
  let bytes = 0;
  let rows: number | undefined = 0;
  for (const a of report.actions) {
    if ("remove" in a) removed++;
    if (!("add" in a)) continue;
    files++;
    bytes += a.add.size;
    const n = numRecordsOf(a.add);
    rows = rows === undefined || n === undefined ? undefined : rows + n;
  }
  emitMetrics(
    "commit",
    report.operation,
    { CommitsCommitted: 1, RowsWritten: rows, BytesWritten: bytes },
    {
      table: report.tableName,
      tableId: report.tableId,
      operation: report.operation,
      version: report.version,
      rows,
      bytes,
      filesAdded: files,
      filesRemoved: removed,
      attempts: report.attempts,
      published: report.published,
      checkpointWritten: report.checkpointWritten,
      ...report.fields,
    },
    report.logger,
  );
}
