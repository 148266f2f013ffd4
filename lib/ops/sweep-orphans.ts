/**
 * The storage sweep scheduled maintenance runs after the tables (lib/runtime/maintenance-handler.ts):
 * files no table owns any more, and table entries whose writer died half way — above all Unity
 * Catalog staging entries a client never finalized, whose version 0 it may already have written.
 *
 * 1. Walk the table prefixes under `tables/` in key order, one listing call per prefix: each call
 *    starts after the previous prefix's last possible key and reads only its first key.
 * 2. Ask the catalog who owns each table id (`findTableById`):
 *    - an ACTIVE table, or an entry that changed within the stale window: leave it;
 *    - a CREATING entry past the window (a staging entry never finalized, a create that crashed):
 *      release it (`abortCreateTable`), which leaves its files owned by nobody;
 *    - a DROPPING entry past the window (a drop that crashed): finish the drop as DROP TABLE would;
 *    - nobody (its name was taken over, or its schema dropped while it was being created).
 * 3. Delete the files of a prefix nobody owns once its newest object is older than the stale
 *    window too: a writer that still holds an id the catalog gave away may be writing right now,
 *    and its commit fails at the catalog anyway.
 * 4. Stop when the time left falls below `minMs`; the next run starts over from the beginning.
 */
import { TABLES_PREFIX } from "../catalog/catalog-store.ts";
import type { SiltContext } from "../context.ts";
import { deletePrefix } from "./drop-table.ts";

export interface SweepOptions {
  remainingMs: () => number;
  /** Do not look at another prefix with less than this left. */
  minMs: number;
}

export interface SweepResult {
  /** Table prefixes looked at. */
  prefixes: number;
  /** Entries released (CREATING) or drops finished (DROPPING) past the stale window. */
  entriesReleased: number;
  /** Prefixes whose files were deleted, and how many objects that was. */
  prefixesDeleted: number;
  objectsDeleted: number;
  /** False when time ran out before the walk reached the end. */
  complete: boolean;
}

export async function sweepOrphans(ctx: SiltContext, opts: SweepOptions): Promise<SweepResult> {
  const result: SweepResult = {
    prefixes: 0,
    entriesReleased: 0,
    prefixesDeleted: 0,
    objectsDeleted: 0,
    complete: true,
  };
  // Step 1.
  for await (const prefix of tablePrefixes(ctx)) {
    if (opts.remainingMs() < opts.minMs) {
      result.complete = false;
      break;
    }
    result.prefixes++;
    // Step 2.
    const tableId = prefix.slice(TABLES_PREFIX.length, -1);
    const entry = await ctx.catalog.findTableById(tableId);
    if (entry !== undefined) {
      if (!ctx.catalog.isAbandoned(entry)) continue;
      if (entry.state === "CREATING") {
        await ctx.catalog.abortCreateTable(entry);
      } else {
        result.objectsDeleted += await deletePrefix(ctx, prefix);
        await ctx.catalog.finishDropTable(entry);
        await ctx.grants.removeAll(tableId);
        result.entriesReleased++;
        result.prefixesDeleted++;
        continue;
      }
      result.entriesReleased++;
      ctx.logger.info("abandoned table entry released", {
        table: `${entry.catalog}.${entry.schema}.${entry.name}`,
        tableId,
        staging: entry.staging === true,
      });
    }
    // Step 3.
    if (await touchedWithin(ctx, prefix, ctx.catalog.staleWindowMs)) continue;
    result.objectsDeleted += await deletePrefix(ctx, prefix);
    result.prefixesDeleted++;
  }
  if (result.prefixesDeleted > 0 || result.entriesReleased > 0) {
    ctx.logger.info("storage swept", { ...result });
  }
  return result;
}

/** `tables/<id>/` for each table id with objects in storage, in key order. */
async function* tablePrefixes(ctx: SiltContext): AsyncIterable<string> {
  let startAfter: string | undefined;
  for (;;) {
    let first: string | undefined;
    for await (const obj of ctx.store.list(TABLES_PREFIX, { startAfter })) {
      first = obj.key;
      break;
    }
    if (first === undefined) return;
    const end = first.indexOf("/", TABLES_PREFIX.length);
    if (end < 0) {
      // A loose object directly under tables/: no table's, and not ours to judge.
      startAfter = first;
      continue;
    }
    const prefix = first.slice(0, end + 1);
    yield prefix;
    // Past every key under the prefix: U+FFFF sorts after any character a key here contains.
    startAfter = `${prefix}\uffff`;
  }
}

async function touchedWithin(ctx: SiltContext, prefix: string, windowMs: number): Promise<boolean> {
  const since = ctx.clock() - windowMs;
  for await (const obj of ctx.store.list(prefix)) {
    if (obj.lastModified > since) return true;
  }
  return false;
}
