/**
 * DROP TABLE for a managed table: the catalog forgets the name and the table's files go. Only
 * the owner of the table or of its schema or catalog may drop it.
 *
 * 1. Mark the entry DROPPING, so readers stop seeing the table at once and a crash mid-way is
 *    recognisable and resumable.
 * 2. Delete every object under the table's location (data, deletion vectors, the whole log).
 * 3. Remove the catalog entry, then the grants on the table. Arbiter rows stay: they are keyed by
 *    the table id, which is never reused, and they record the history of what was ratified.
 */
import { authorizeTable } from "../auth/authorize.ts";
import type { TableEntry } from "../catalog/catalog-store.ts";
import { resolveName, type TableRef } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { SiltError } from "../errors.ts";
import { displayName } from "./open-table.ts";

export async function dropTable(
  ctx: SiltContext,
  name: TableRef,
  opts: { ifExists?: boolean; defaults?: { catalog?: string; schema?: string } } = {},
): Promise<{ dropped: boolean; deletedObjects: number }> {
  const qn = resolveName(name, opts.defaults);
  let entry: TableEntry;
  try {
    entry = await authorizeTable(ctx, qn, "own");
  } catch (err) {
    if (opts.ifExists && err instanceof SiltError && err.status === 404) {
      return { dropped: false, deletedObjects: 0 };
    }
    throw err;
  }
  const dropping = await ctx.catalog.beginDropTable(entry);
  const deletedObjects = await deletePrefix(ctx, dropping.location);
  await ctx.catalog.finishDropTable(dropping);
  await ctx.grants.removeAll(entry.tableId);
  ctx.logger.info("table dropped", {
    table: displayName(qn),
    tableId: entry.tableId,
    operation: "DROP TABLE",
    deletedObjects,
  });
  return { dropped: true, deletedObjects };
}

/** Deletes every object under `prefix` in pages, so huge tables never sit in memory at once. */
export async function deletePrefix(ctx: SiltContext, prefix: string): Promise<number> {
  let batch: string[] = [];
  let total = 0;
  for await (const obj of ctx.store.list(prefix)) {
    batch.push(obj.key);
    if (batch.length === 1000) {
      await ctx.store.deleteMany(batch);
      total += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) await ctx.store.deleteMany(batch);
  return total + batch.length;
}
