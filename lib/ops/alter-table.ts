/**
 * ALTER TABLE t SET TBLPROPERTIES (…) and ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] (…): one
 * commit of a new `metaData` action, as Spark writes it.
 *
 * 1. Open the table at its latest version (the caller must own it, as in Unity Catalog) and check
 *    Silt can write its protocol.
 * 2. Validate the change against the table profile's rules (table-profile.ts
 *    alteredConfiguration): the catalog's requirements stay, reserved keys and keys fixed at
 *    create time keep their values, unknown `delta.*` keys fail.
 * 3. A change that leaves every property as it is commits nothing, as in Delta.
 * 4. Commit `SET TBLPROPERTIES` (parameters: properties as JSON) or `UNSET TBLPROPERTIES`
 *    (properties as a JSON array, ifExists) through `commitMetadataChange`, which the column
 *    changes (alter-columns.ts) share. A metadata change conflicts with every concurrent commit
 *    (conflicts.ts), so it never lands beside a write that used the old properties.
 */
import type { TableRef } from "../catalog/names.ts";
import { metadataChangeOperation } from "../commit/operation.ts";
import type { SiltContext } from "../context.ts";
import type { Action, Metadata, Protocol } from "../delta/actions.ts";
import { isolationLevelOf } from "../delta/table-config.ts";
import { alteredConfiguration } from "../delta/table-profile.ts";
import { commit } from "./commit.ts";
import { displayName, type OpenTable, openTable } from "./open-table.ts";
import { checkWriteProtocol } from "./write-protocol.ts";

export interface AlterPropertiesRequest {
  set?: Record<string, string>;
  unset?: string[];
  ifExists?: boolean;
  defaults?: { catalog?: string; schema?: string };
}

export interface AlterPropertiesResult {
  /** The version committed, or the table's version when nothing changed. */
  version: number;
  committed: boolean;
}

export async function alterTableProperties(
  ctx: SiltContext,
  name: TableRef,
  req: AlterPropertiesRequest,
): Promise<AlterPropertiesResult> {
  // Step 1.
  const t = await openTable(ctx, name, { defaults: req.defaults, access: "own" });
  const { snapshot } = t;
  const tableName = displayName(t.name);
  checkWriteProtocol(snapshot.protocol, snapshot.metadata);

  // Step 2.
  const current = snapshot.metadata.configuration;
  const configuration = alteredConfiguration(tableName, current, req);

  // Step 3.
  const same =
    Object.keys(configuration).length === Object.keys(current).length &&
    Object.entries(configuration).every(([k, v]) => current[k] === v);
  if (same) return { version: snapshot.version, committed: false };

  // Step 4.
  const setting = req.set !== undefined;
  const version = await commitMetadataChange(ctx, t, {
    metadata: { ...snapshot.metadata, configuration },
    operation: setting ? "SET TBLPROPERTIES" : "UNSET TBLPROPERTIES",
    parameters: setting
      ? { properties: JSON.stringify(req.set) }
      : { properties: JSON.stringify(req.unset ?? []), ifExists: String(req.ifExists ?? false) },
  });
  return { version, committed: true };
}

/**
 * Commits one ALTER TABLE change: a new `metaData` (and `protocol`, when the change needs a
 * feature the table lacks) and no data. It reads the whole table, so it never lands beside a
 * concurrent write that used the old metadata.
 */
export async function commitMetadataChange(
  ctx: SiltContext,
  t: OpenTable,
  change: {
    metadata: Metadata;
    protocol?: Protocol;
    operation: string;
    parameters: Record<string, string>;
  },
): Promise<number> {
  const { snapshot } = t;
  const protocol = change.protocol ?? snapshot.protocol;
  const rowTracking = checkWriteProtocol(protocol, change.metadata);
  const actions: Action[] = [{ metaData: change.metadata }];
  if (change.protocol !== undefined) actions.push({ protocol: change.protocol });
  const result = await commit(
    ctx,
    t,
    metadataChangeOperation(change.operation, change.parameters),
    actions,
    // The table as the change leaves it decides both.
    { isolationLevel: isolationLevelOf(change.metadata.configuration), rowTracking },
  );
  return result.version;
}
