/**
 * Resolves a table name to its catalog entry and a snapshot, the way every operation starts:
 *
 * 1. Look the name up in the catalog (only ACTIVE tables are visible), checking that the caller
 *    may use the table as the operation will (lib/auth/authorize.ts).
 * 2. Ask the arbiter for the latest ratified version and the ratified-but-unpublished commits.
 * 3. Publish those commits (cooperative publishing: whoever sees them finishes them), but read
 *    through the catalog's view either way, so a failed publish never hides a ratified commit.
 * 4. Replay the log at the requested version or timestamp, or the latest.
 */

import { authorizeTable, type TableAccess } from "../auth/authorize.ts";
import type { TableEntry } from "../catalog/catalog-store.ts";
import {
  type NameDefaults,
  type QualifiedName,
  resolveName,
  type TableRef,
} from "../catalog/names.ts";
import { catalogView, publishRows, republish } from "../commit/publisher.ts";
import type { SiltContext } from "../context.ts";
import { type ColumnMappingMode, columnMappingMode } from "../delta/column-mapping.ts";
import { parseSchema, type StructType } from "../delta/schema.ts";
import { CorruptCommitError, loadSnapshot, type Snapshot } from "../delta/snapshot.ts";
import { siltError } from "../errors.ts";

export interface TimeTravel {
  version?: number;
  timestamp?: number | string;
}

export interface OpenTable {
  name: QualifiedName;
  entry: TableEntry;
  snapshot: Snapshot;
  /** Logical schema at the snapshot. */
  schema: StructType;
  mappingMode: ColumnMappingMode;
}

export async function openTable(
  ctx: SiltContext,
  name: TableRef,
  opts: TimeTravel & { defaults?: NameDefaults; access?: TableAccess } = {},
): Promise<OpenTable> {
  const qn = resolveName(name, opts.defaults);
  // Unsaid means the strictest row access, so a caller that forgets to say fails closed.
  const entry = await authorizeTable(ctx, qn, opts.access ?? "readWrite");
  const snapshot = await readSnapshot(ctx, entry, opts);
  return describeSnapshot(qn, entry, snapshot);
}

export async function readSnapshot(
  ctx: SiltContext,
  entry: TableEntry,
  travel: TimeTravel = {},
): Promise<Snapshot> {
  const view = await catalogView(ctx.arbiter, entry.tableId);
  if (view.ratified.length > 0) {
    const rows = await ctx.arbiter.unpublished(entry.tableId);
    await publishRows(ctx.store, ctx.arbiter, entry.location, rows).catch((err: unknown) =>
      ctx.logger.warn("cooperative publish failed; reading through the catalog view", {
        tableId: entry.tableId,
        error: String(err),
      }),
    );
  }
  if (travel.version !== undefined && travel.timestamp !== undefined) {
    throw siltError("INVALID_TIME_TRAVEL_SPEC");
  }
  const options = {
    version: travel.version,
    timestamp: travel.timestamp,
    ratified: view.ratified,
    latestRatified: view.latestRatified,
  };
  // A damaged published commit is rewritten from what the arbiter ratified, then read again.
  for (let repairs = 0; ; repairs++) {
    try {
      return await loadSnapshot(ctx.store, entry.location, options);
    } catch (err) {
      if (!(err instanceof CorruptCommitError) || err.staged || repairs >= MAX_REPAIRS) throw err;
      const { tableId, location } = entry;
      if (!(await republish(ctx.store, ctx.arbiter, tableId, location, err.version))) throw err;
      ctx.logger.warn("repaired a damaged published commit from its ratified staged file", {
        tableId,
        version: err.version,
        key: err.key,
      });
    }
  }
}

/** Damaged published commits one read repairs before it gives up and reports the next one. */
const MAX_REPAIRS = 16;

export function describeSnapshot(
  name: QualifiedName,
  entry: TableEntry,
  snapshot: Snapshot,
): OpenTable {
  return {
    name,
    entry,
    snapshot,
    schema: parseSchema(snapshot.metadata.schemaString),
    mappingMode: columnMappingMode(snapshot.metadata.configuration),
  };
}

/** `catalog`.`schema`.`table` the way Spark prints it in messages. */
export const displayName = (qn: QualifiedName): string => `${qn.catalog}.${qn.schema}.${qn.table}`;
