/**
 * Staging a table for a Unity Catalog client (`POST /staging-tables` of either API), the first
 * step of a CREATE TABLE that Spark runs against Silt:
 *
 * 1. Check that the caller may create tables in the schema.
 * 2. Reserve the name as a staging entry (CREATING, marked staging) with a fresh table id and the
 *    location `tables/<id>/`, as Silt's own CREATE reserves it. Nothing is written to storage.
 * 3. Answer the id, the location as other engines name it, and the catalog's contract: what the
 *    client's version 0 must and should contain (delta/table-profile.ts).
 *
 * The client then writes `_delta_log/00000000000000000000.json` itself and finalizes the table
 * (finalize-table.ts). A client that fails its own checks after staging never comes back; its
 * entry holds the name only until the next create of it (catalog-store.ts).
 */
import { authorizeCreateTable } from "../auth/authorize.ts";
import type { TableEntry } from "../catalog/catalog-store.ts";
import type { QualifiedName } from "../catalog/names.ts";
import { locationUri, type SiltContext } from "../context.ts";
import { type ManagedTableContract, managedTableContract } from "../delta/table-profile.ts";

export interface StagedTable {
  entry: TableEntry;
  /** The table's location URI (s3://…, file:///…), without a trailing slash. */
  location: string;
  contract: ManagedTableContract;
}

export async function stageTable(ctx: SiltContext, qn: QualifiedName): Promise<StagedTable> {
  await authorizeCreateTable(ctx, qn.catalog, qn.schema);
  const entry = await ctx.catalog.beginCreateTable(qn.catalog, qn.schema, qn.table, {
    owner: ctx.principal,
    staging: true,
  });
  ctx.logger.info("table staged", {
    table: `${entry.catalog}.${entry.schema}.${entry.name}`,
    tableId: entry.tableId,
  });
  return {
    entry,
    location: locationUri(ctx, entry.location),
    contract: managedTableContract(entry.tableId),
  };
}
