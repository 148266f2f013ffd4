/**
 * Reading a catalog table's rows (the `rows` route, SELECT): open the table at the requested
 * version or timestamp, then read its live files.
 */

import type * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import type { StructType } from "../delta/schema.ts";
import { openTable, type TimeTravel } from "./open-table.ts";
import { readSnapshotRows } from "./read-files.ts";

export interface ScanRequest extends TimeTravel {
  columns?: string[];
  limit?: number;
  defaults?: { catalog?: string; schema?: string };
}

export interface ScanResult {
  version: number;
  schema: StructType;
  table: arrow.Table;
}

export async function scanTable(
  ctx: SiltContext,
  name: TableRef,
  req: ScanRequest = {},
): Promise<ScanResult> {
  const t = await openTable(ctx, name, { ...req, access: "read" });
  const { schema, table } = await readSnapshotRows(ctx.store, t.snapshot, {
    columns: req.columns,
    limit: req.limit,
    deadline: ctx.deadline,
  });
  return { version: t.snapshot.version, schema, table };
}
