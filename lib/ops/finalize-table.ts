/**
 * Finalizing a table that a Unity Catalog client created (`POST /tables` of the legacy API,
 * `POST /delta/v1/…/tables` of the Delta API), after staging it (stage-table.ts) and writing
 * its version 0 straight into `_delta_log/` — the way Spark creates a catalog-managed table:
 *
 * 1. Find the staging entry by the location the client names, which must be one Silt handed out
 *    for a table of the same name. A retried finalize of a table already active answers it again.
 * 2. Read the client's `_delta_log/00000000000000000000.json`: it must hold protocol, metaData and
 *    a commitInfo with its in-commit timestamp.
 * 3. Check it against the catalog's contract: the refusal a user sees when a requirement is off
 *    is the one Silt's own CREATE gives (seed 002).
 * 4. Ratify version 0 in the arbiter as already published, so every later writer — Silt's own or
 *    another engine — builds on it.
 * 5. Activate the entry: the table is visible from now on.
 *
 * A failure in 2 or 3 ends the create: the staging entry is released and what the client wrote
 * under the location is deleted, so the name and the storage are as before the CREATE.
 */
import { randomUUID } from "node:crypto";
import type { TableEntry } from "../catalog/catalog-store.ts";
import type { QualifiedName } from "../catalog/names.ts";
import { keyOfLocationUri, type SiltContext } from "../context.ts";
import {
  type Action,
  type CommitInfo,
  commitFileName,
  LOG_DIR,
  type Metadata,
  type Protocol,
  parseActions,
} from "../delta/actions.ts";
import { checkManagedTable } from "../delta/table-profile.ts";
import { siltError } from "../errors.ts";
import { ObjectNotFoundError } from "../storage/object-store.ts";
import { deletePrefix } from "./drop-table.ts";
import { displayName } from "./open-table.ts";

export interface FinalizeRequest {
  name: QualifiedName;
  /** The location the staging answer gave, as the client spells it. */
  location: string;
}

export async function finalizeTable(ctx: SiltContext, req: FinalizeRequest): Promise<TableEntry> {
  const tableName = displayName(req.name);
  // Step 1.
  const entry = await stagingEntryAt(ctx, req);
  if (entry.state === "ACTIVE") return entry;

  let version0: { protocol: Protocol; metadata: Metadata; commitInfo: CommitInfo };
  try {
    // Steps 2 and 3.
    version0 = await readVersionZero(ctx, entry, tableName);
    checkManagedTable(
      tableName,
      entry.tableId,
      version0.protocol,
      version0.metadata.configuration,
      "create",
    );
  } catch (err) {
    if (await ctx.catalog.abortCreateTable(entry).catch(() => false)) {
      await deletePrefix(ctx, entry.location);
    }
    throw err;
  }

  // Step 4.
  const logKey = `${entry.location}${LOG_DIR}${commitFileName(0)}`;
  const ratified = await ctx.arbiter.ratify(
    {
      tableId: entry.tableId,
      version: 0,
      stagedKey: logKey,
      inCommitTimestamp: version0.commitInfo.inCommitTimestamp as number,
      txnId:
        typeof version0.commitInfo.txnId === "string" ? version0.commitInfo.txnId : randomUUID(),
      operation: version0.commitInfo.operation ?? "CREATE TABLE",
    },
    { published: true },
  );
  if (!ratified) {
    // Only a finalize of this same staging entry ratifies its version 0: a retry after a lost
    // answer. Anything else means the table id was reused, which ids never are.
    const [row] = await ctx.arbiter.range(entry.tableId, 0, 0);
    if (row?.stagedKey !== logKey) {
      throw siltError("SILT_VERSION_ZERO_TAKEN", { tableName, stagedKey: row?.stagedKey });
    }
  }

  // Step 5.
  const active = await ctx.catalog.activateTable(entry);
  ctx.logger.info("table created", {
    table: tableName,
    tableId: entry.tableId,
    operation: version0.commitInfo.operation ?? "CREATE TABLE",
    version: 0,
    engineInfo: version0.commitInfo.engineInfo,
  });
  return active;
}

async function stagingEntryAt(ctx: SiltContext, req: FinalizeRequest): Promise<TableEntry> {
  const key = keyOfLocationUri(ctx, req.location);
  const id = key?.match(/^tables\/([^/]+)$/)?.[1];
  const entry = id === undefined ? undefined : await ctx.catalog.findTableById(id);
  const sameName =
    entry !== undefined &&
    entry.catalog === req.name.catalog.toLowerCase() &&
    entry.schema === req.name.schema.toLowerCase() &&
    entry.name === req.name.table.toLowerCase();
  if (entry === undefined || !sameName || (entry.state === "CREATING" && !entry.staging)) {
    throw siltError("TABLE_NOT_FOUND:STAGING_LOCATION", {
      name: displayName(req.name),
      location: req.location,
    });
  }
  if (entry.state === "DROPPING") {
    throw siltError("TABLE_NOT_FOUND:BEING_DROPPED", { name: displayName(req.name) });
  }
  // Staging checked CREATE TABLE; only the caller that staged the table may create it.
  if (ctx.enforcePrivileges === true && entry.owner !== ctx.principal) {
    throw siltError("INSUFFICIENT_PERMISSIONS:STAGED_BY_OTHER", {
      principal: ctx.principal,
      name: displayName(req.name),
      owner: entry.owner,
    });
  }
  return entry;
}

async function readVersionZero(ctx: SiltContext, entry: TableEntry, tableName: string) {
  const key = `${entry.location}${LOG_DIR}${commitFileName(0)}`;
  let actions: Action[];
  try {
    actions = parseActions(new TextDecoder().decode(await ctx.store.get(key)));
  } catch (err) {
    if (err instanceof ObjectNotFoundError) {
      throw siltError("INVALID_PARAMETER_VALUE:FIRST_COMMIT_MISSING", {
        tableName,
        logDir: LOG_DIR,
        firstCommit: commitFileName(0),
      });
    }
    if (err instanceof SyntaxError) {
      throw siltError("INVALID_PARAMETER_VALUE:FIRST_COMMIT_NOT_JSON", {
        tableName,
        message: err.message,
      });
    }
    throw err;
  }
  const find = <K extends "protocol" | "metaData" | "commitInfo">(kind: K) =>
    (actions.find((a) => kind in a) as Record<K, unknown> | undefined)?.[kind];
  const protocol = find("protocol") as Protocol | undefined;
  const metadata = find("metaData") as Metadata | undefined;
  const commitInfo = find("commitInfo") as CommitInfo | undefined;
  if (protocol === undefined || metadata === undefined) {
    throw siltError("INVALID_PARAMETER_VALUE:FIRST_COMMIT_INCOMPLETE", { tableName });
  }
  if (typeof commitInfo?.inCommitTimestamp !== "number") {
    throw siltError("INVALID_PARAMETER_VALUE:FIRST_COMMIT_WITHOUT_ICT", { tableName });
  }
  return {
    protocol,
    metadata: { ...metadata, configuration: metadata.configuration ?? {} },
    commitInfo,
  };
}
