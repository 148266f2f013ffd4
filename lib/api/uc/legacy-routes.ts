/**
 * Unity Catalog's REST API (`/api/2.1/unity-catalog`, snake_case), the routes its Python SDK,
 * DuckDB's `unity_catalog` extension and Spark's `UCSingleCatalog` call (Spark with
 * `deltaRestApi.enabled=false` uses nothing else). Every route runs the same operations and
 * privilege checks as `/api/v1`; only the shapes differ (shapes.ts, errors.ts).
 */
import { createHash } from "node:crypto";
import type { Context, Hono } from "hono";
import { authorizeTable } from "../../auth/authorize.ts";
import { stagingTableCredentials, temporaryTableCredentials } from "../../auth/credentials.ts";
import type { NamespaceChanges } from "../../catalog/catalog-store.ts";
import { parseQualifiedName, type QualifiedName } from "../../catalog/names.ts";
import { keyOfLocationUri, type SiltContext } from "../../context.ts";
import { siltError } from "../../errors.ts";
import { type ColumnSpec, createTable } from "../../ops/create-table.ts";
import { dropTable } from "../../ops/drop-table.ts";
import { acceptExternalCommit, unpublishedCommits } from "../../ops/external-commit.ts";
import { finalizeTable } from "../../ops/finalize-table.ts";
import {
  alterCatalog,
  alterSchema,
  catalogsOf,
  createCatalog,
  createSchema,
  describeCatalog,
  describeSchema,
  dropCatalog,
  dropSchema,
  schemasOf,
  tablesOf,
} from "../../ops/namespaces.ts";
import { openTable, readSnapshot } from "../../ops/open-table.ts";
import { stageTable } from "../../ops/stage-table.ts";
import type { Env } from "../http.ts";
import {
  asObject,
  type Json,
  optionalBoolean,
  optionalString,
  optionalStringMap,
  requiredString,
} from "../request.ts";
import { registerPermissionRoutes } from "../routes-auth.ts";
import { noExternalLocations, noUniForm, UC_PREFIX } from "./errors.ts";
import {
  getRequestBody,
  knownBody,
  onlyKnownFields,
  onlyKnownParams,
  optionalInteger,
  paginate,
  partsOf,
  requiredInteger,
} from "./request.ts";
import { catalogInfo, fromDeltaApiType, schemaInfo, tableInfo } from "./shapes.ts";

const P = UC_PREFIX;
const ctxOf = (c: Context<Env>): SiltContext => c.get("ctx");

export function registerLegacyCatalogRoutes(app: Hono<Env>): void {
  app.get(`${P}/metastore_summary`, (c) =>
    c.json({ metastore_id: metastoreId(ctxOf(c)), name: "silt" }),
  );

  app.post(`${P}/catalogs`, async (c) => {
    const body = await knownBody(c, ["name", "comment", "properties", "storage_root"]);
    if (body.storage_root !== undefined && body.storage_root !== null) {
      throw storageChosen("storage_root");
    }
    const entry = await createCatalog(ctxOf(c), requiredString(body, "name"), {
      comment: optionalString(body, "comment"),
      properties: optionalStringMap(body, "properties"),
    });
    return c.json(catalogInfo(ctxOf(c), entry));
  });
  app.get(`${P}/catalogs`, async (c) => {
    const query = onlyKnownParams(c, ["max_results", "page_token"]);
    const { page, nextPageToken } = paginate(await catalogsOf(ctxOf(c)), (e) => e.name, query);
    return c.json({
      catalogs: page.map((e) => catalogInfo(ctxOf(c), e)),
      next_page_token: nextPageToken,
    });
  });
  app.get(`${P}/catalogs/:name`, async (c) =>
    c.json(catalogInfo(ctxOf(c), await describeCatalog(ctxOf(c), c.req.param("name")))),
  );
  app.patch(`${P}/catalogs/:name`, async (c) => {
    const name = c.req.param("name");
    const changes = await namespaceChanges(c, name, "catalog");
    return c.json(catalogInfo(ctxOf(c), await alterCatalog(ctxOf(c), name, changes)));
  });
  app.delete(`${P}/catalogs/:name`, async (c) => {
    await dropCatalog(ctxOf(c), c.req.param("name"), { cascade: force(c) });
    return c.json({});
  });

  app.post(`${P}/schemas`, async (c) => {
    const body = await knownBody(c, [
      "name",
      "catalog_name",
      "comment",
      "properties",
      "storage_root",
    ]);
    if (body.storage_root !== undefined && body.storage_root !== null) {
      throw storageChosen("storage_root");
    }
    const entry = await createSchema(
      ctxOf(c),
      requiredString(body, "catalog_name"),
      requiredString(body, "name"),
      {
        comment: optionalString(body, "comment"),
        properties: optionalStringMap(body, "properties"),
      },
    );
    return c.json(schemaInfo(entry));
  });
  app.get(`${P}/schemas`, async (c) => {
    const query = onlyKnownParams(c, ["catalog_name", "max_results", "page_token"]);
    const catalog = requiredString(query, "catalog_name");
    const { page, nextPageToken } = paginate(
      await schemasOf(ctxOf(c), catalog),
      (e) => e.name,
      query,
    );
    return c.json({ schemas: page.map(schemaInfo), next_page_token: nextPageToken });
  });
  app.get(`${P}/schemas/:full_name`, async (c) => {
    const [catalog, schema] = schemaParts(c.req.param("full_name"));
    return c.json(schemaInfo(await describeSchema(ctxOf(c), catalog, schema)));
  });
  app.patch(`${P}/schemas/:full_name`, async (c) => {
    const [catalog, schema] = schemaParts(c.req.param("full_name"));
    const changes = await namespaceChanges(c, schema, "schema");
    return c.json(schemaInfo(await alterSchema(ctxOf(c), catalog, schema, changes)));
  });
  app.delete(`${P}/schemas/:full_name`, async (c) => {
    const [catalog, schema] = schemaParts(c.req.param("full_name"));
    await dropSchema(ctxOf(c), catalog, schema, { cascade: force(c) });
    return c.json({});
  });

  app.get(`${P}/tables`, async (c) => {
    const query = onlyKnownParams(c, ["catalog_name", "schema_name", "max_results", "page_token"]);
    const ctx = ctxOf(c);
    const tables = await tablesOf(
      ctx,
      requiredString(query, "catalog_name"),
      requiredString(query, "schema_name"),
    );
    const { page, nextPageToken } = paginate(tables, (e) => e.name, query);
    const infos = await Promise.all(
      page.map(async (entry) => tableInfo(ctx, entry, await readSnapshot(ctx, entry))),
    );
    return c.json({ tables: infos, next_page_token: nextPageToken });
  });
  app.get(`${P}/tables/:full_name`, async (c) => {
    // Silt has no streaming tables or materialized views, so both flags change nothing.
    onlyKnownParams(c, ["read_streaming_table_as_managed", "read_materialized_view_as_managed"]);
    const ctx = ctxOf(c);
    const table = await openTable(ctx, partsOf(tableName(c.req.param("full_name"))), {
      access: "read",
    });
    return c.json(tableInfo(ctx, table.entry, table.snapshot));
  });
  app.delete(`${P}/tables/:full_name`, async (c) => {
    await dropTable(ctxOf(c), partsOf(tableName(c.req.param("full_name"))));
    return c.json({});
  });
  app.post(`${P}/tables`, async (c) =>
    c.json(await createTableRoute(ctxOf(c), await knownBody(c, CREATE_TABLE_FIELDS))),
  );

  app.post(`${P}/staging-tables`, async (c) => {
    const body = await knownBody(c, ["name", "catalog_name", "schema_name"]);
    const qn: QualifiedName = {
      catalog: requiredString(body, "catalog_name"),
      schema: requiredString(body, "schema_name"),
      table: requiredString(body, "name"),
    };
    const staged = await stageTable(ctxOf(c), qn);
    return c.json({
      id: staged.entry.tableId,
      name: staged.entry.name,
      catalog_name: staged.entry.catalog,
      schema_name: staged.entry.schema,
      staging_location: staged.location,
      created_at: staged.entry.createdAt,
      owner: staged.entry.owner,
    });
  });

  app.post(`${P}/temporary-table-credentials`, async (c) => {
    const ctx = ctxOf(c);
    const body = await knownBody(c, ["table_id", "operation"]);
    const tableId = requiredString(body, "table_id");
    const operation = optionalString(body, "operation") ?? "";
    const staged = await ctx.catalog.findTableById(tableId);
    if (staged?.state === "CREATING" && staged.staging && operation === "READ_WRITE") {
      return c.json(await stagingTableCredentials(ctx, tableId));
    }
    return c.json(await temporaryTableCredentials(ctx, { tableId, operation }));
  });
  app.post(`${P}/temporary-path-credentials`, () => {
    throw noExternalLocations();
  });

  app.get(`${P}/delta/preview/commits`, async (c) => {
    const ctx = ctxOf(c);
    const body = await getRequestBody(c);
    onlyKnownFields(
      body,
      ["table_id", "table_uri", "start_version", "end_version"],
      "the commits query",
    );
    const entry = await commitTarget(ctx, body, "read");
    const start = requiredInteger(body, "start_version");
    const end = optionalInteger(body, "end_version");
    const { latestVersion, commits } = await unpublishedCommits(ctx, entry);
    const inRange = commits
      .filter((k) => k.version >= start && (end === undefined || k.version <= end))
      .slice(0, 10);
    return c.json({
      commits: inRange.map((k) => ({
        version: k.version,
        timestamp: k.timestamp,
        file_name: k.fileName,
        file_size: k.fileSize,
        file_modification_timestamp: k.fileModificationTimestamp,
      })),
      latest_table_version: Math.max(latestVersion, 0),
    });
  });
  app.post(`${P}/delta/preview/commits`, async (c) => {
    const ctx = ctxOf(c);
    // `metadata` repeats what the staged commit holds; Silt reads it from the commit itself.
    const body = await knownBody(c, [
      "table_id",
      "table_uri",
      "commit_info",
      "latest_backfilled_version",
      "metadata",
      "uniform",
    ]);
    if (body.uniform !== undefined && body.uniform !== null) throw noUniForm();
    const entry = await commitTarget(ctx, body, "write");
    const latestBefore = (await ctx.arbiter.latest(entry.tableId))?.version ?? -1;
    const commitInfo =
      body.commit_info === undefined || body.commit_info === null
        ? undefined
        : asObject(body.commit_info, "field 'commit_info'");
    if (commitInfo !== undefined) onlyKnownFields(commitInfo, COMMIT_INFO_FIELDS, "commit_info");
    const backfilled = optionalInteger(body, "latest_backfilled_version");
    // Against the table's latest version (see delta-routes.ts): a race loser gets its 409.
    if (backfilled !== undefined && backfilled > latestBefore) {
      throw siltError("INVALID_PARAMETER_VALUE:BACKFILLED_VERSION_AHEAD", {
        backfilled,
        latestBefore,
      });
    }
    if (commitInfo !== undefined) {
      await acceptExternalCommit(ctx, entry, `${entry.catalog}.${entry.schema}.${entry.name}`, {
        version: requiredInteger(commitInfo, "version"),
        fileName: requiredString(commitInfo, "file_name"),
        fileSize: requiredInteger(commitInfo, "file_size"),
        timestamp: requiredInteger(commitInfo, "timestamp"),
      });
    }
    return c.json({});
  });

  registerPermissionRoutes(app, `${P}/permissions/:securable_type/:full_name`);
}

const CREATE_TABLE_FIELDS = [
  "name",
  "catalog_name",
  "schema_name",
  "table_type",
  "data_source_format",
  "columns",
  "storage_location",
  "comment",
  "properties",
  "view_definition",
  "view_dependencies",
];
const COLUMN_FIELDS = [
  "name",
  "type_text",
  "type_json",
  "type_name",
  "type_precision",
  "type_scale",
  "type_interval_type",
  "position",
  "comment",
  "nullable",
  "partition_index",
];
const COMMIT_INFO_FIELDS = [
  "version",
  "timestamp",
  "file_name",
  "file_size",
  "file_modification_timestamp",
];

const storageChosen = (field: string) =>
  siltError("INVALID_PARAMETER_VALUE:STORAGE_FIELD", { field });

/**
 * POST /tables: the finalize of a table the client staged and wrote (it names the location),
 * or — with no location — a managed table Silt creates itself from the columns, as `/api/v1`
 * does. External tables do not exist in Silt.
 */
async function createTableRoute(ctx: SiltContext, body: Json) {
  const qn: QualifiedName = {
    catalog: requiredString(body, "catalog_name"),
    schema: requiredString(body, "schema_name"),
    table: requiredString(body, "name"),
  };
  const tableType = (optionalString(body, "table_type") ?? "MANAGED").toUpperCase();
  if (tableType !== "MANAGED") {
    throw siltError("UNIMPLEMENTED:LEGACY_TABLE_TYPE", { tableType });
  }
  const format = (optionalString(body, "data_source_format") ?? "DELTA").toUpperCase();
  if (format !== "DELTA") {
    throw siltError("INVALID_PARAMETER_VALUE:NON_DELTA_FORMAT", {
      catalog: qn.catalog,
      schema: qn.schema,
      table: qn.table,
    });
  }
  const location = optionalString(body, "storage_location");
  let entry: Awaited<ReturnType<typeof finalizeTable>>;
  if (location !== undefined) {
    entry = await finalizeTable(ctx, { name: qn, location });
  } else {
    const created = await createTable(ctx, {
      name: [qn.catalog, qn.schema, qn.table],
      columns: columnSpecs(body.columns),
      properties: optionalStringMap(body, "properties"),
      comment: optionalString(body, "comment"),
    });
    entry = await ctx.catalog.getTableById(created.tableId);
  }
  return tableInfo(ctx, entry, await readSnapshot(ctx, entry));
}

/** ColumnInfo[] of a create request -> Silt's column specs (type_json, else type_text). */
function columnSpecs(raw: unknown): ColumnSpec[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    throw siltError("INVALID_PARAMETER_VALUE:NO_COLUMNS");
  }
  const indexed = raw.map((item, i) => {
    const col = asObject(item, `column ${i + 1}`);
    onlyKnownFields(col, COLUMN_FIELDS, `column ${i + 1}`);
    const json = optionalString(col, "type_json");
    const spec: ColumnSpec = {
      name: requiredString(col, "name"),
      type:
        json === undefined
          ? requiredString(col, "type_text")
          : fromDeltaApiType(JSON.parse(json).type),
      nullable: optionalBoolean(col, "nullable"),
      comment: optionalString(col, "comment"),
    };
    return { spec, position: typeof col.position === "number" ? col.position : i };
  });
  return indexed.sort((a, b) => a.position - b.position).map((x) => x.spec);
}

/**
 * The table a commits request names by id, checked against its `table_uri`, with the privilege
 * checked by name like every other table operation: listing commits is part of reading the table
 * (Spark's legacy path lists them for every SELECT), committing takes MODIFY.
 */
async function commitTarget(ctx: SiltContext, body: Json, access: "read" | "write") {
  const entry = await ctx.catalog.getTableById(requiredString(body, "table_id"));
  const uri = optionalString(body, "table_uri");
  if (uri !== undefined && keyOfLocationUri(ctx, uri) !== entry.location.replace(/\/$/, "")) {
    throw siltError("INVALID_PARAMETER_VALUE:TABLE_URI_MISMATCH", { uri, tableId: entry.tableId });
  }
  return authorizeTable(
    ctx,
    { catalog: entry.catalog, schema: entry.schema, table: entry.name },
    access,
  );
}

/**
 * A PATCH of a catalog or schema, as Unity Catalog reads it: a comment replaces the comment, a
 * non-empty properties map replaces the properties, and what is absent stays. A new name is
 * refused: Silt keys every schema and table by the names above it.
 */
async function namespaceChanges(
  c: Context<Env>,
  current: string,
  kind: "catalog" | "schema",
): Promise<NamespaceChanges> {
  const body = await knownBody(c, ["comment", "properties", "new_name"]);
  const newName = optionalString(body, "new_name");
  if (newName !== undefined) {
    throw siltError("UNIMPLEMENTED:RENAME_NAMESPACE", { kind, current, newName });
  }
  const properties = optionalStringMap(body, "properties");
  return {
    comment: optionalString(body, "comment"),
    properties:
      properties !== undefined && Object.keys(properties).length > 0 ? properties : undefined,
  };
}

function force(c: Context<Env>): boolean {
  return optionalBoolean(c.req.query(), "force") ?? false;
}

function schemaParts(fullName: string): [string, string] {
  const parts = fullName.split(".");
  if (parts.length !== 2 || parts.some((p) => p === "")) {
    throw siltError("INVALID_PARAMETER_VALUE:SCHEMA_FULL_NAME", { fullName });
  }
  return [parts[0] as string, parts[1] as string];
}

function tableName(fullName: string): QualifiedName {
  const qn = parseQualifiedName(fullName);
  if (fullName.split(".").length !== 3) {
    throw siltError("INVALID_PARAMETER_VALUE:TABLE_FULL_NAME", { fullName });
  }
  return qn;
}

/** A stable id for this deployment's metastore, derived from where it keeps its tables. */
function metastoreId(ctx: SiltContext): string {
  const h = createHash("sha256").update(ctx.storageRootUri).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
