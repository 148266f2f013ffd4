/**
 * Reading a catalog table's rows (the `rows` route, SELECT):
 *
 * 1. Open the table at the requested version or timestamp, or at the version a page token pins.
 * 2. Read its live files as the caller pulls the rows, a few files at a time, so an answer that
 *    is streamed or paged never holds the whole table.
 * 3. Paging (`maxRows`): files in path order, which one version always lists the same way
 *    however its log is replayed; a page ends after `maxRows` rows, and its token names the file
 *    and row the next one starts at (page-token.ts).
 */

import type * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { concatTables } from "../data/kernels.ts";
import type { AddFile } from "../delta/actions.ts";
import type { StructType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { openTable, type TimeTravel } from "./open-table.ts";
import {
  decodeScanToken,
  encodePageToken,
  type PagePosition,
  requestFingerprint,
} from "./page-token.ts";
import { openSnapshotRead } from "./read-files.ts";

export interface ScanRequest extends TimeTravel {
  columns?: string[];
  /** Rows in all, over every page. */
  limit?: number;
  defaults?: { catalog?: string; schema?: string };
  /** Rows of this page at most; with it the answer may end with a next page token. */
  maxRows?: number;
  /** Where a previous page of the same request ended. */
  pageToken?: string;
}

export interface ScanResult {
  version: number;
  schema: StructType;
  table: arrow.Table;
}

export interface ScanStream {
  version: number;
  schema: StructType;
  arrowSchema: arrow.Schema;
  /** The answer's rows, a file's worth at a time. */
  parts: AsyncIterable<arrow.Table>;
  /** Once `parts` is done: the token of the next page, when rows remain. */
  nextPageToken(): string | undefined;
}

export async function scanTable(
  ctx: SiltContext,
  name: TableRef,
  req: ScanRequest = {},
): Promise<ScanResult> {
  const stream = await scanTableStream(ctx, name, req);
  const parts: arrow.Table[] = [];
  for await (const part of stream.parts) parts.push(part);
  return {
    version: stream.version,
    schema: stream.schema,
    table: concatTables(parts, stream.arrowSchema),
  };
}

export async function scanTableStream(
  ctx: SiltContext,
  name: TableRef,
  req: ScanRequest = {},
): Promise<ScanStream> {
  const { columns, limit, version, timestamp, maxRows, pageToken } = req;
  const request = requestFingerprint({ name, columns, limit, version, timestamp });
  const from = pageToken === undefined ? undefined : decodeScanToken(pageToken, request);
  const t = await openTable(ctx, name, {
    ...req,
    ...(from && { version: from.version, timestamp: undefined }),
    access: "read",
  });
  if (from !== undefined && from.tableId !== t.entry.tableId) {
    throw siltError("INVALID_PAGE_TOKEN:OTHER_REQUEST");
  }
  const paging = maxRows !== undefined || from !== undefined;
  const ordered = paging ? inPathOrder(t.snapshot.files) : t.snapshot.files;
  const first = from === undefined ? 0 : startIndex(ordered, from);
  const files = ordered.slice(first);
  const read = openSnapshotRead(
    ctx.store,
    { ...t.snapshot, files },
    {
      columns,
      deadline: ctx.deadline,
    },
  );
  const served = from?.served ?? 0;
  const want = Math.min(
    (limit ?? Number.POSITIVE_INFINITY) - served,
    maxRows ?? Number.POSITIVE_INFINITY,
  );
  let next: PagePosition | undefined;
  async function* parts(): AsyncGenerator<arrow.Table> {
    let taken = 0;
    let skip = from?.row ?? 0;
    let index = 0;
    if (want > 0) {
      for await (const { table } of read.parts) {
        const start = skip;
        skip = 0;
        const end = Math.min(table.numRows, start + want - taken);
        if (end > start)
          yield start === 0 && end === table.numRows ? table : table.slice(start, end);
        taken += Math.max(0, end - start);
        if (taken >= want) {
          // The page is full: the next starts after its last row, in this file or the next.
          const rest = end < table.numRows;
          const at = rest ? index : index + 1;
          if (at < files.length && served + taken < (limit ?? Number.POSITIVE_INFINITY)) {
            next = {
              tableId: t.entry.tableId,
              version: t.snapshot.version,
              file: files[at].path,
              row: rest ? end : 0,
              served: served + taken,
            };
          }
          return;
        }
        index++;
      }
    }
  }
  return {
    version: t.snapshot.version,
    schema: read.schema,
    arrowSchema: read.arrowSchema,
    parts: parts(),
    nextPageToken: () =>
      maxRows === undefined || next === undefined ? undefined : encodePageToken(next, request),
  };
}

/**
 * Files in path order: one version always lists its files so, whatever order log replay gives
 * (a checkpoint written between two pages changes it), which is what lets pages resume.
 */
export function inPathOrder(files: readonly AddFile[]): AddFile[] {
  return [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The index of the file a token resumes at; a path the version does not list is no token of ours. */
function startIndex(files: AddFile[], from: PagePosition): number {
  const i = files.findIndex((f) => f.path === from.file);
  if (i < 0) throw siltError("INVALID_PAGE_TOKEN:MALFORMED");
  return i;
}
