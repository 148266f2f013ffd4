/**
 * The one log line and metric record of every ratified commit. Every operation commits through
 * commitTransaction, so reporting there gives each function the same fields without each
 * operation remembering to log them: table, operation, version, rows and bytes written.
 *
 * Rows and bytes are those of the data files the commit adds (`numRecords` statistics and sizes),
 * whatever the operation: an OPTIMIZE's rewritten files count too, which the Operation dimension
 * tells apart. Rows are left out of the line when an added file has no statistics.
 */
import { type Action, numRecordsOf } from "../delta/actions.ts";
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
}

export function reportCommit(report: CommitReport): void {
  let files = 0;
  let bytes = 0;
  let rows: number | undefined = 0;
  for (const a of report.actions) {
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
      attempts: report.attempts,
      published: report.published,
    },
  );
}
