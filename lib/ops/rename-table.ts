/**
 * ALTER TABLE … RENAME TO and Unity Catalog's rename: a table gets a new name in its schema.
 *
 * 1. Resolve both names. The new one may be written bare or qualified; qualified, it must name
 *    the table's own catalog and schema, since a table's location and grants belong to it there
 *    (CANNOT_RENAME_ACROSS_SCHEMA, as Spark and Unity Catalog refuse it).
 * 2. Check that the caller owns the table and may create tables in its schema.
 * 3. Move the name in the catalog (catalog-store.ts: one name is visible at every moment).
 *    Nothing else changes: the files stay under `tables/<id>/`, grants are kept by table id, and
 *    the Delta log gets no commit, as with Delta on Spark.
 */
import { authorizeRename } from "../auth/authorize.ts";
import type { TableEntry } from "../catalog/catalog-store.ts";
import { namesEqual, type QualifiedName, resolveName, type TableRef } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { siltError } from "../errors.ts";
import { displayName } from "./open-table.ts";

export async function renameTable(
  ctx: SiltContext,
  name: TableRef,
  newName: TableRef,
  opts: { defaults?: { catalog?: string; schema?: string } } = {},
): Promise<TableEntry> {
  const from = resolveName(name, opts.defaults);
  const to = resolveName(newName, { catalog: from.catalog, schema: from.schema });
  if (!namesEqual(to.catalog, from.catalog) || !namesEqual(to.schema, from.schema)) {
    throw acrossSchemas(from, to);
  }
  const entry = await authorizeRename(ctx, from);
  const renamed = await ctx.catalog.renameTable(entry, to.table);
  ctx.logger.info("table renamed", {
    table: displayName(from),
    newName: displayName(to),
    tableId: entry.tableId,
    operation: "RENAME TABLE",
  });
  return renamed;
}

const acrossSchemas = (from: QualifiedName, to: QualifiedName) =>
  siltError("CANNOT_RENAME_ACROSS_SCHEMA", { from: displayName(from), to: displayName(to) });
