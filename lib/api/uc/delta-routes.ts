/**
 * The UC Delta API (`/api/2.1/unity-catalog/delta/v1`, kebab-case), what Spark's
 * `UCSingleCatalog` uses by default and DuckDB uses to load and commit: staging, create
 * (finalize), load with the unpublished commit tail, update (requirements + updates, the commit
 * itself), delete, credentials and metrics. Same operations and privileges as `/api/v1`.
 */
import type { Context, Hono } from "hono";
import { authorizeTable } from "../../auth/authorize.ts";
import { stagingTableCredentials, temporaryTableCredentials } from "../../auth/credentials.ts";
import type { TableEntry } from "../../catalog/catalog-store.ts";
import type { QualifiedName } from "../../catalog/names.ts";
import type { SiltContext } from "../../context.ts";
import { siltError } from "../../errors.ts";
import { dropTable } from "../../ops/drop-table.ts";
import { acceptExternalCommit, unpublishedCommits } from "../../ops/external-commit.ts";
import { finalizeTable } from "../../ops/finalize-table.ts";
import { describeCatalog } from "../../ops/namespaces.ts";
import { displayName, openTable, readSnapshot } from "../../ops/open-table.ts";
import { renameTable } from "../../ops/rename-table.ts";
import { stageTable } from "../../ops/stage-table.ts";
import type { Env } from "../http.ts";
import { asObject, type Json, requiredString } from "../request.ts";
import { noExternalLocations, noUniForm, UC_DELTA_PREFIX } from "./errors.ts";
import {
  knownBody,
  onlyKnownFields,
  onlyKnownParams,
  partsOf,
  requiredInteger,
} from "./request.ts";
import { type DeltaCommitInfo, deltaLoadTableResponse, deltaProtocol, etagOf } from "./shapes.ts";

const P = UC_DELTA_PREFIX;
const TABLES = `${P}/catalogs/:catalog/schemas/:schema/tables`;
const TABLE = `${TABLES}/:table`;

const ENDPOINTS = [
  "POST /v1/catalogs/{catalog}/schemas/{schema}/staging-tables",
  "POST /v1/catalogs/{catalog}/schemas/{schema}/tables",
  "GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
  "POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
  "DELETE /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
  "HEAD /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
  "POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/rename",
  "GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/credentials",
  "POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/metrics",
  "GET /v1/staging-tables/{table_id}/credentials",
];

const ctxOf = (c: Context<Env>): SiltContext => c.get("ctx");

const nameOf = (c: Context<Env>): QualifiedName => ({
  catalog: c.req.param("catalog") as string,
  schema: c.req.param("schema") as string,
  table: c.req.param("table") as string,
});

export function registerDeltaApiRoutes(app: Hono<Env>): void {
  app.get(`${P}/config`, async (c) => {
    const query = onlyKnownParams(c, ["catalog", "protocol-versions"]);
    await describeCatalog(ctxOf(c), requiredString(query, "catalog"));
    return c.json({ endpoints: ENDPOINTS, "protocol-version": "1.0" });
  });

  app.post(`${P}/catalogs/:catalog/schemas/:schema/staging-tables`, async (c) => {
    const body = await knownBody(c, ["name"]);
    const staged = await stageTable(ctxOf(c), {
      catalog: c.req.param("catalog"),
      schema: c.req.param("schema"),
      table: requiredString(body, "name"),
    });
    const contract = staged.contract;
    return c.json({
      "table-id": staged.entry.tableId,
      "table-type": "MANAGED",
      location: staged.location,
      "storage-credentials": storageCredentials(
        await stagingTableCredentials(ctxOf(c), staged.entry.tableId),
        "READ_WRITE",
      ),
      "required-protocol": deltaProtocol(contract.requiredProtocol),
      "suggested-protocol": {
        "reader-features": contract.suggestedReaderFeatures,
        "writer-features": contract.suggestedWriterFeatures,
      },
      "required-properties": contract.requiredProperties,
      "suggested-properties": contract.suggestedProperties,
    });
  });
  app.get(`${P}/staging-tables/:id/credentials`, async (c) =>
    c.json({
      "storage-credentials": storageCredentials(
        await stagingTableCredentials(ctxOf(c), c.req.param("id")),
        "READ_WRITE",
      ),
    }),
  );

  app.post(TABLES, async (c) => {
    const ctx = ctxOf(c);
    const body = await knownBody(c, CREATE_TABLE_FIELDS);
    if (body.uniform !== undefined && body.uniform !== null) throw noUniForm();
    const qn = { ...nameOf(c), table: requiredString(body, "name") };
    const tableType = (body["table-type"] ?? "MANAGED") as string;
    if (tableType !== "MANAGED") {
      throw siltError("UNIMPLEMENTED:TABLE_TYPE", { tableType });
    }
    const entry = await finalizeTable(ctx, {
      name: qn,
      location: requiredString(body, "location"),
    });
    return c.json(await loadResponse(ctx, entry));
  });

  // Hono runs the GET route for a HEAD too: "does the table exist" answers 204 without loading it.
  app.get(TABLE, async (c) => {
    const ctx = ctxOf(c);
    if (c.req.method === "HEAD") {
      await authorizeTable(ctx, nameOf(c), "read");
      return c.body(null, 204);
    }
    const table = await openTable(ctx, partsOf(nameOf(c)), { access: "read" });
    return c.json(await loadResponse(ctx, table.entry));
  });
  app.delete(TABLE, async (c) => {
    await dropTable(ctxOf(c), partsOf(nameOf(c)));
    return c.body(null, 204);
  });
  app.post(TABLE, async (c) => {
    const ctx = ctxOf(c);
    const qn = nameOf(c);
    // The commit needs MODIFY; the table's snapshot is read only where a rule needs it.
    const entry = await authorizeTable(ctx, qn, "write");
    await updateTable(ctx, entry, displayName(qn), await knownBody(c, ["requirements", "updates"]));
    return c.json(await loadResponse(ctx, entry));
  });

  app.get(`${TABLE}/credentials`, async (c) => {
    const operation = requiredString(onlyKnownParams(c, ["operation"]), "operation");
    const qn = nameOf(c);
    const vended = await temporaryTableCredentials(ctxOf(c), {
      tableName: displayName(qn),
      operation,
    });
    return c.json({ "storage-credentials": storageCredentials(vended, operation) });
  });
  app.post(`${TABLE}/metrics`, async (c) => {
    const body = await knownBody(c, ["table-id", "report"]);
    const entry = await authorizeTable(ctxOf(c), nameOf(c), "write");
    if (requiredString(body, "table-id") !== entry.tableId) {
      throw siltError("INVALID_PARAMETER_VALUE:TABLE_ID_MISMATCH", {
        tableId: String(body["table-id"]),
        table: displayName(nameOf(c)),
      });
    }
    return c.body(null, 204);
  });
  app.post(`${TABLE}/rename`, async (c) => {
    const body = await knownBody(c, ["new-name"]);
    // One name part: the API renames within the table's schema only.
    const { catalog, schema, table } = nameOf(c);
    await renameTable(ctxOf(c), [catalog, schema, table], [requiredString(body, "new-name")]);
    return c.body(null, 204);
  });
  app.get(`${P}/temporary-path-credentials`, () => {
    throw noExternalLocations();
  });
}

/** The load answer: metadata at the latest snapshot and the commits not yet in `_delta_log/`. */
async function loadResponse(ctx: SiltContext, entry: TableEntry) {
  const { latestVersion, commits } = await unpublishedCommits(ctx, entry);
  const snapshot = await readSnapshot(ctx, entry);
  const listed: DeltaCommitInfo[] = commits
    .map((k) => ({
      version: k.version,
      timestamp: k.timestamp,
      "file-name": k.fileName,
      "file-size": k.fileSize,
      "file-modification-timestamp": k.fileModificationTimestamp,
    }))
    .reverse();
  return deltaLoadTableResponse(
    ctx,
    entry,
    snapshot,
    Math.max(latestVersion, snapshot.version),
    listed,
  );
}

/**
 * Metadata updates that travel beside a commit. Silt reads metadata from the Delta log, where the
 * commit carries the same change (checked in external-commit.ts), so these are accepted with an
 * `add-commit` and refused alone: a table's metadata changes only through a commit.
 */
const REQUIREMENT_FIELDS: Record<string, string[]> = {
  "assert-table-uuid": ["type", "uuid"],
  "assert-etag": ["type", "etag"],
};

/** Each update action's fields besides `action`, as delta.yaml declares them. */
const UPDATE_FIELDS: Record<string, string[]> = {
  "add-commit": ["commit", "uniform"],
  "set-latest-backfilled-version": ["latest-published-version"],
  "set-properties": ["updates"],
  "remove-properties": ["removals"],
  "set-columns": ["columns"],
  "set-table-comment": ["comment"],
  "set-partition-columns": ["partition-columns"],
  "set-protocol": ["protocol"],
  "set-domain-metadata": ["updates"],
  "remove-domain-metadata": ["domains"],
  "update-metadata-snapshot-version": ["last-commit-version", "last-commit-timestamp-ms"],
};

const COMMIT_FIELDS = [
  "version",
  "timestamp",
  "file-name",
  "file-size",
  "file-modification-timestamp",
];

const CREATE_TABLE_FIELDS = [
  "name",
  "location",
  "table-type",
  "comment",
  "columns",
  "partition-columns",
  "protocol",
  "properties",
  "domain-metadata",
  "last-commit-timestamp-ms",
  "uniform",
];

const WITH_COMMIT = new Set([
  "set-properties",
  "remove-properties",
  "set-columns",
  "set-table-comment",
  "set-partition-columns",
  "set-protocol",
  "set-domain-metadata",
  "remove-domain-metadata",
  "update-metadata-snapshot-version",
]);

/** POST …/tables/{t}: requirements first, then the updates, at most one of each kind. */
async function updateTable(
  ctx: SiltContext,
  entry: TableEntry,
  tableName: string,
  body: Json,
): Promise<void> {
  const requirements = listOf(body, "requirements");
  const updates = listOf(body, "updates");
  if (updates.length === 0) {
    throw siltError("INVALID_PARAMETER_VALUE:NO_UPDATES");
  }
  const latest = await ctx.arbiter.latest(entry.tableId);
  for (const req of requirements) {
    const type = requiredString(req, "type");
    onlyKnownFields(req, REQUIREMENT_FIELDS[type] ?? ["type"], `requirement ${type}`);
    if (type === "assert-table-uuid") {
      if (requiredString(req, "uuid") !== entry.tableId) {
        throw siltError("UPDATE_REQUIREMENT_CONFLICT:UUID", {
          tableName,
          tableId: entry.tableId,
          uuid: String(req.uuid),
        });
      }
    } else if (type === "assert-etag") {
      const current = etagOf(entry.tableId, latest?.version ?? -1);
      if (requiredString(req, "etag") !== current) {
        throw siltError("UPDATE_REQUIREMENT_CONFLICT:ETAG", {
          tableName,
          etag: String(req.etag),
          current,
        });
      }
    } else {
      throw siltError("INVALID_PARAMETER_VALUE:UNKNOWN_REQUIREMENT_TYPE", { type });
    }
  }
  const byAction = new Map<string, Json>();
  for (const update of updates) {
    const action = requiredString(update, "action");
    const fields = UPDATE_FIELDS[action];
    if (fields !== undefined) onlyKnownFields(update, ["action", ...fields], `update ${action}`);
    if (
      action !== "add-commit" &&
      action !== "set-latest-backfilled-version" &&
      !WITH_COMMIT.has(action)
    ) {
      throw siltError("INVALID_PARAMETER_VALUE:UNKNOWN_UPDATE_ACTION", { action });
    }
    if (byAction.has(action)) {
      throw siltError("INVALID_PARAMETER_VALUE:UPDATE_ACTION_TWICE", { action });
    }
    byAction.set(action, update);
  }
  const addCommit = byAction.get("add-commit");
  const alone = [...byAction.keys()].filter((a) => WITH_COMMIT.has(a));
  if (addCommit === undefined && alone.length > 0) {
    throw siltError("INVALID_PARAMETER_VALUE:UPDATE_WITHOUT_COMMIT", { alone: alone.join(", ") });
  }
  // Against the table's latest version, not the commit's: a client whose commit lost the race
  // may already have seen the winners published, and must get the 409 that makes it rebase.
  const backfill = byAction.get("set-latest-backfilled-version");
  if (backfill !== undefined) {
    const published = requiredInteger(backfill, "latest-published-version");
    const last = latest?.version ?? -1;
    if (published > last) {
      throw siltError("INVALID_PARAMETER_VALUE:PUBLISHED_VERSION_AHEAD", { published, last });
    }
  }
  if (addCommit !== undefined) {
    const commit = asObject(addCommit.commit, "field 'commit'");
    onlyKnownFields(commit, COMMIT_FIELDS, "the add-commit's commit");
    if (addCommit.uniform !== undefined && addCommit.uniform !== null) throw noUniForm();
    await acceptExternalCommit(ctx, entry, tableName, {
      version: requiredInteger(commit, "version"),
      fileName: requiredString(commit, "file-name"),
      fileSize: requiredInteger(commit, "file-size"),
      timestamp: requiredInteger(commit, "timestamp"),
    });
  }
}

function listOf(body: Json, field: string): Json[] {
  const v = body[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw siltError("INVALID_PARAMETER_VALUE:FIELD_NOT_LIST", { field });
  return v.map((item, i) => asObject(item, `${field}[${i}]`));
}

/** Vended credentials as the Delta API lists them; none for a local directory. */
function storageCredentials(
  vended: {
    aws_temp_credentials: {
      access_key_id: string;
      secret_access_key: string;
      session_token: string;
    } | null;
    expiration_time: number | null;
    url: string;
  },
  operation: string,
) {
  if (vended.aws_temp_credentials === null) return [];
  return [
    {
      prefix: vended.url,
      operation,
      config: {
        "s3.access-key-id": vended.aws_temp_credentials.access_key_id,
        "s3.secret-access-key": vended.aws_temp_credentials.secret_access_key,
        "s3.session-token": vended.aws_temp_credentials.session_token,
      },
      "expiration-time-ms": vended.expiration_time,
    },
  ];
}
