/**
 * Silt's Unity Catalog REST APIs through the real app (local storage, the catalog and arbiter in
 * dynalite), driven the way Spark and DuckDB drive them: shapes, each API's error bodies, the
 * staging → version 0 → finalize create, and commits other engines write, with every refusal
 * leaving the table's version and rows as they were. The real clients run in uc-spark, uc-duckdb
 * and uc-sdk.test.ts.
 */
import { randomUUID } from "node:crypto";
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import { parseTokens } from "../lib/auth/principal.ts";
import { commitTransaction } from "../lib/commit/transaction.ts";
import { keyOfLocationUri } from "../lib/context.ts";
import { writeParquet } from "../lib/data/parquet.ts";
import {
  type Action,
  commitFileName,
  LOG_DIR,
  STAGED_DIR,
  serializeActions,
} from "../lib/delta/actions.ts";
import { type ApiResponse, type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

const UC = "/api/2.1/unity-catalog";
const DT = `${UC}/delta/v1/catalogs/shop/schemas/s/tables`;

let silt: SiltHarness;

beforeAll(async () => {
  silt = await startSilt("local");
  expect((await silt.call("POST", `${UC}/catalogs`, { name: "shop", comment: "c" })).status).toBe(
    200,
  );
  expect(
    (await silt.call("POST", `${UC}/schemas`, { name: "s", catalog_name: "shop" })).status,
  ).toBe(200);
});

afterAll(async () => {
  await silt?.close();
});

/** The table's version and rows through Silt's own API. */
async function state(table: string) {
  const res = await silt.call("GET", `/api/v1/tables/shop.s.${table}/rows`);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  const rows = (res.body.rows as unknown[][]).map((r) => JSON.stringify(r)).sort();
  return { version: res.body.version as number, rows };
}

/** Writes `actions` as a client's staged commit for `version`; answers the add-commit fields. */
async function stage(location: string, version: number, actions: Action[]) {
  const key = keyOfLocationUri(silt.ctx, location) as string;
  const fileName = `${String(version).padStart(20, "0")}.${randomUUID()}.json`;
  const bytes = new TextEncoder().encode(serializeActions(actions));
  await silt.ctx.store.put(`${key}/${STAGED_DIR}${fileName}`, bytes);
  return { version, "file-name": fileName, "file-size": bytes.length, timestamp: Date.now() };
}

/** A Parquet data file under the table's location with these column names; its add action. */
async function dataFile(location: string, columns: Record<string, arrow.Vector>) {
  const key = keyOfLocationUri(silt.ctx, location) as string;
  const bytes = writeParquet(new arrow.Table(columns));
  const path = `part-${randomUUID()}.parquet`;
  await silt.ctx.store.put(`${key}/${path}`, bytes);
  return {
    add: {
      path,
      partitionValues: {},
      size: bytes.length,
      modificationTime: Date.now(),
      dataChange: true,
      stats: JSON.stringify({ numRecords: columns[Object.keys(columns)[0] as string]?.length }),
    },
  } as Action;
}

const commitInfo = (ict: number, operation = "WRITE"): Action => ({
  commitInfo: { inCommitTimestamp: ict, timestamp: ict, operation, engineInfo: "test-engine" },
});

async function load(table: string) {
  const res = await silt.call("GET", `${DT}/${table}`);
  expect(res.status).toBe(200);
  return res.body;
}

async function addCommit(table: string, commit: unknown, requirements?: unknown[]) {
  return silt.call("POST", `${DT}/${table}`, {
    requirements: requirements ?? [
      { type: "assert-table-uuid", uuid: (await load(table)).metadata["table-uuid"] },
    ],
    updates: [{ action: "add-commit", commit }],
  });
}

describe("the legacy API's catalogs and schemas", () => {
  it("answers UC's shapes, pages lists and names what is missing", async () => {
    await silt.call("POST", `${UC}/catalogs`, { name: "zz_second", properties: { team: "a" } });
    const page1 = await silt.call("GET", `${UC}/catalogs?max_results=1`);
    expect(page1.body.catalogs.map((c: { name: string }) => c.name)).toEqual(["shop"]);
    expect(page1.body.catalogs[0]).toMatchObject({ comment: "c", owner: "tester", properties: {} });
    expect(typeof page1.body.catalogs[0].created_at).toBe("number");
    const page2 = await silt.call(
      "GET",
      `${UC}/catalogs?max_results=1&page_token=${page1.body.next_page_token}`,
    );
    expect(page2.body).toMatchObject({
      catalogs: [{ name: "zz_second", properties: { team: "a" } }],
      next_page_token: null,
    });
    const schema = await silt.call("GET", `${UC}/schemas/shop.s`);
    expect(schema.body).toMatchObject({ name: "s", catalog_name: "shop", full_name: "shop.s" });

    const again = await silt.call("POST", `${UC}/catalogs`, { name: "shop" });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({
      error_code: "CATALOG_ALREADY_EXISTS",
      details: [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "CATALOG_ALREADY_EXISTS" },
      ],
    });
    expect((await silt.call("GET", `${UC}/catalogs/nope`)).body.error_code).toBe(
      "CATALOG_NOT_FOUND",
    );
    expect((await silt.call("GET", `${UC}/schemas/shop.nope`)).body.error_code).toBe(
      "SCHEMA_NOT_FOUND",
    );
    expect((await silt.call("GET", `${UC}/schemas/shop`)).status).toBe(400);
    const root = await silt.call("POST", `${UC}/catalogs`, { name: "x", storage_root: "s3://b/x" });
    expect([root.status, root.body.error_code]).toEqual([400, "INVALID_ARGUMENT"]);
    expect((await silt.call("GET", `${UC}/catalogs/x`)).status).toBe(404);
    expect((await silt.call("DELETE", `${UC}/catalogs/zz_second`)).body).toEqual({});
  });

  it("drops a schema with tables only with force", async () => {
    await silt.call("POST", `${UC}/schemas`, { name: "tmp", catalog_name: "shop" });
    await silt.call("POST", "/api/v1/tables", {
      name: "shop.tmp.t",
      columns: [{ name: "a", type: "INT" }],
    });
    const refused = await silt.call("DELETE", `${UC}/schemas/shop.tmp`);
    expect([refused.status, refused.body.error_code]).toEqual([400, "FAILED_PRECONDITION"]);
    expect((await silt.call("GET", "/api/v1/tables/shop.tmp.t/detail")).status).toBe(200);
    expect((await silt.call("DELETE", `${UC}/schemas/shop.tmp?force=true`)).status).toBe(200);
    expect((await silt.call("GET", `${UC}/schemas/shop.tmp`)).status).toBe(404);
  });
});

describe("tables through the legacy API", () => {
  it("creates a managed table from columns and describes it as TableInfo", async () => {
    const res = await silt.call("POST", `${UC}/tables`, {
      name: "orders",
      catalog_name: "shop",
      schema_name: "s",
      table_type: "MANAGED",
      data_source_format: "DELTA",
      columns: [
        { name: "id", type_text: "bigint", type_name: "LONG", position: 0, nullable: false },
        {
          name: "amount",
          type_json: JSON.stringify({
            name: "amount",
            type: "decimal(10,2)",
            nullable: true,
            metadata: {},
          }),
          position: 1,
        },
        { name: "tags", type_text: "array<string>", position: 2, comment: "labels" },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: "orders",
      full_name: "shop.s.orders",
      table_type: "MANAGED",
      data_source_format: "DELTA",
      properties: { "delta.feature.catalogManaged": "supported" },
    });
    expect(res.body.properties["io.unitycatalog.tableId"]).toBe(res.body.table_id);
    expect(res.body.columns).toEqual([
      {
        name: "id",
        type_text: "bigint",
        type_json: JSON.stringify({ name: "id", type: "long", nullable: false, metadata: {} }),
        type_name: "LONG",
        type_precision: 0,
        type_scale: 0,
        position: 0,
        nullable: false,
      },
      expect.objectContaining({
        name: "amount",
        type_text: "decimal(10,2)",
        type_name: "DECIMAL",
        type_precision: 10,
        type_scale: 2,
      }),
      expect.objectContaining({
        name: "tags",
        type_text: "array<string>",
        type_name: "ARRAY",
        comment: "labels",
      }),
    ]);
    const listed = await silt.call("GET", `${UC}/tables?catalog_name=shop&schema_name=s`);
    expect(listed.body.tables.map((t: { name: string }) => t.name)).toContain("orders");
    const one = await silt.call("GET", `${UC}/tables/shop.s.orders`);
    expect(one.body.columns).toEqual(res.body.columns);
  });

  it("refuses external and non-Delta tables, and names a missing one", async () => {
    const base = {
      catalog_name: "shop",
      schema_name: "s",
      columns: [{ name: "a", type_text: "int" }],
    };
    const ext = await silt.call("POST", `${UC}/tables`, {
      ...base,
      name: "e",
      table_type: "EXTERNAL",
    });
    expect([ext.status, ext.body.error_code]).toEqual([501, "UNIMPLEMENTED"]);
    const csv = await silt.call("POST", `${UC}/tables`, {
      ...base,
      name: "c",
      data_source_format: "CSV",
    });
    expect([csv.status, csv.body.error_code]).toEqual([400, "INVALID_ARGUMENT"]);
    expect(csv.body.message).toContain("Unity Catalog does not support non-Delta managed table");
    for (const name of ["e", "c"]) {
      expect((await silt.call("GET", `/api/v1/tables/shop.s.${name}/detail`)).status).toBe(404);
    }
    const missing = await silt.call("GET", `${UC}/tables/shop.s.nope`);
    expect([missing.status, missing.body.error_code]).toEqual([404, "TABLE_NOT_FOUND"]);
    const delta = await silt.call("GET", `${DT}/nope`);
    expect(delta.status).toBe(404);
    expect(delta.body).toEqual({
      error: {
        message: expect.stringContaining("cannot be found"),
        type: "NoSuchTableException",
        code: 404,
      },
    });
    expect(
      (await silt.call("GET", `${UC}/delta/v1/catalogs/nope/schemas/s/tables/t`)).body.error.type,
    ).toBe("NoSuchCatalogException");
  });
});

/** What Spark does for CREATE TABLE: stage, write version 0 itself, finalize. */
async function createAsClient(
  name: string,
  configuration: Record<string, string>,
  schema?: string,
) {
  const staged = await silt.call("POST", `${UC}/delta/v1/catalogs/shop/schemas/s/staging-tables`, {
    name,
  });
  expect(staged.status).toBe(200);
  const { "table-id": id, location } = staged.body;
  const protocol = {
    minReaderVersion: 3,
    minWriterVersion: 7,
    readerFeatures: staged.body["required-protocol"]["reader-features"],
    writerFeatures: [
      ...staged.body["required-protocol"]["writer-features"],
      "appendOnly",
      "invariants",
    ],
  };
  const ict = Date.now();
  const v0: Action[] = [
    commitInfo(ict, "CREATE TABLE"),
    { protocol },
    {
      metaData: {
        id: randomUUID(),
        format: { provider: "parquet", options: {} },
        schemaString:
          schema ??
          JSON.stringify({
            type: "struct",
            fields: [
              { name: "sku", type: "string", nullable: true, metadata: {} },
              { name: "qty", type: "integer", nullable: true, metadata: {} },
            ],
          }),
        partitionColumns: [],
        configuration: { ...staged.body["required-properties"], ...configuration },
        createdTime: ict,
      },
    },
  ];
  const key = keyOfLocationUri(silt.ctx, location) as string;
  await silt.ctx.store.put(
    `${key}/${LOG_DIR}${commitFileName(0)}`,
    new TextEncoder().encode(serializeActions(v0)),
  );
  const finalized = await silt.call("POST", DT, {
    name,
    location: location.replace("file:///", "file:/"),
    "table-type": "MANAGED",
    columns: { type: "struct", fields: [] },
    "partition-columns": [],
    protocol: {},
    properties: {},
    "last-commit-timestamp-ms": ict,
  });
  return { id: id as string, location: location as string, key, finalized };
}

describe("creating a table as a UC client does", () => {
  it("stages with the catalog's contract and finalizes the client's version 0", async () => {
    const staged = await silt.call(
      "POST",
      `${UC}/delta/v1/catalogs/shop/schemas/s/staging-tables`,
      {
        name: "probe",
      },
    );
    expect(staged.body).toMatchObject({
      "table-type": "MANAGED",
      "storage-credentials": [],
      "required-protocol": {
        "min-reader-version": 3,
        "min-writer-version": 7,
        "reader-features": [
          "catalogManaged",
          "deletionVectors",
          "v2Checkpoint",
          "vacuumProtocolCheck",
        ],
        "writer-features": [
          "catalogManaged",
          "deletionVectors",
          "v2Checkpoint",
          "vacuumProtocolCheck",
          "inCommitTimestamp",
        ],
      },
      "suggested-protocol": {
        "writer-features": ["columnMapping", "domainMetadata", "rowTracking"],
      },
      "required-properties": {
        "delta.enableDeletionVectors": "true",
        "delta.checkpoint.writeStatsAsStruct": "true",
        "io.unitycatalog.tableId": staged.body["table-id"],
      },
      "suggested-properties": {
        "delta.columnMapping.mode": "name",
        "delta.columnMapping.maxColumnId": null,
      },
    });
    // Staged, not created: invisible until finalized.
    expect((await silt.call("GET", `${DT}/probe`)).status).toBe(404);

    const t = await createAsClient("made", { "delta.columnMapping.mode": "none" });
    expect(t.finalized.status).toBe(200);
    expect(t.finalized.body["latest-table-version"]).toBe(0);
    expect(t.finalized.body.metadata).toMatchObject({
      "table-uuid": t.id,
      location: t.location,
      etag: `${t.id}@0`,
    });
    // Silt's own writers build on the client's version 0.
    const insert = await silt.call("POST", "/api/v1/tables/shop.s.made/insert", {
      rows: [["fig", 7]],
    });
    expect(insert.status).toBe(200);
    expect(await state("made")).toEqual({ version: 1, rows: ['["fig",7]'] });
    expect((await load("made"))["latest-table-version"]).toBe(1);
  });

  it("refuses a version 0 without deletion vectors with the seed's text, and forgets the table", async () => {
    const t = await createAsClient("returns", { "delta.enableDeletionVectors": "false" });
    expect(t.finalized.status).toBe(400);
    expect(t.finalized.body.error).toEqual({
      message:
        "Cannot create table shop.s.returns: catalog requires table property 'delta.enableDeletionVectors'='true' but the caller supplied 'delta.enableDeletionVectors'='false'. Remove the conflicting TBLPROPERTIES entry and retry.",
      type: "InvalidParameterValueException",
      code: 400,
    });
    expect((await silt.call("GET", `${DT}/returns`)).status).toBe(404);
    expect(await silt.ctx.store.head(`${t.key}/${LOG_DIR}${commitFileName(0)}`)).toBeUndefined();
    // The name is free again.
    const retry = await createAsClient("returns", { "delta.columnMapping.mode": "none" });
    expect(retry.finalized.status).toBe(200);
  });

  it("answers 404 for a location it never handed out", async () => {
    const res = await silt.call("POST", DT, {
      name: "made",
      location: "file:///elsewhere/x",
      "table-type": "MANAGED",
    });
    expect([res.status, res.body.error.type]).toEqual([404, "NoSuchTableException"]);
  });
});

describe("commits another engine writes", () => {
  let loc: string;

  beforeAll(async () => {
    const t = await createAsClient("ext", { "delta.columnMapping.mode": "none" });
    expect(t.finalized.status).toBe(200);
    loc = t.location;
  });

  it("ratifies the next version, replays the same file, and refuses another at a taken version", async () => {
    const add = await dataFile(loc, {
      sku: arrow.vectorFromArray(["kiwi"], new arrow.Utf8()),
      qty: arrow.vectorFromArray([3], new arrow.Int32()),
    });
    const commit = await stage(loc, 1, [commitInfo(Date.now() + 1), add]);
    const res = await addCommit("ext", commit);
    expect(res.status).toBe(200);
    expect(res.body["latest-table-version"]).toBe(1);
    expect(
      await silt.ctx.store.head(
        `${keyOfLocationUri(silt.ctx, loc)}/${LOG_DIR}${commitFileName(1)}`,
      ),
    ).toBeDefined();
    expect(await state("ext")).toEqual({ version: 1, rows: ['["kiwi",3]'] });

    expect((await addCommit("ext", commit)).status).toBe(200);
    const rival = await stage(loc, 1, [commitInfo(Date.now() + 2), add]);
    const lost = await addCommit("ext", rival);
    expect(lost.status).toBe(409);
    expect(lost.body.error.type).toBe("CommitVersionConflictException");
    expect(lost.body.error.message).toContain(
      `Version 1 was accepted with commit file ${commit["file-name"]}`,
    );
    expect(await state("ext")).toEqual({ version: 1, rows: ['["kiwi",3]'] });
  });

  it("refuses gaps, missing or resized files, stale timestamps and broken requirements, changing nothing", async () => {
    const before = await state("ext");
    const etag = (await load("ext")).metadata.etag;
    const good = await stage(loc, 2, [commitInfo(Date.now() + 10)]);
    const cases: [string, Promise<Awaited<ReturnType<typeof addCommit>>>, number, string][] = [
      [
        "gap",
        addCommit("ext", { ...(await stage(loc, 3, [commitInfo(Date.now() + 20)])) }),
        400,
        "InvalidParameterValueException",
      ],
      [
        "missing file",
        addCommit("ext", {
          ...good,
          "file-name": `${commitFileName(2).slice(0, 20)}.${randomUUID()}.json`,
        }),
        400,
        "InvalidParameterValueException",
      ],
      [
        "wrong size",
        addCommit("ext", { ...good, "file-size": good["file-size"] + 1 }),
        400,
        "InvalidParameterValueException",
      ],
      [
        "name not of its version",
        addCommit("ext", { ...good, version: 2, "file-name": "00000000000000000009.x.json" }),
        400,
        "InvalidParameterValueException",
      ],
      [
        "older timestamp",
        addCommit("ext", await stage(loc, 2, [commitInfo(1000)])),
        400,
        "InvalidParameterValueException",
      ],
      [
        "no commitInfo",
        addCommit("ext", await stage(loc, 2, [{ txn: { appId: "a", version: 1 } }])),
        400,
        "InvalidParameterValueException",
      ],
      [
        "other uuid",
        addCommit("ext", good, [{ type: "assert-table-uuid", uuid: randomUUID() }]),
        409,
        "UpdateRequirementConflictException",
      ],
      [
        "stale etag",
        addCommit("ext", good, [{ type: "assert-etag", etag: `${etag}0` }]),
        409,
        "UpdateRequirementConflictException",
      ],
      [
        "unknown requirement",
        addCommit("ext", good, [{ type: "assert-nothing" }]),
        400,
        "InvalidParameterValueException",
      ],
    ];
    for (const [what, pending, status, type] of cases) {
      const res = await pending;
      expect([what, res.status, res.body.error.type]).toEqual([what, status, type]);
    }
    const uuid = (await load("ext")).metadata["table-uuid"];
    const shapes: [string, unknown][] = [
      [
        "unknown action",
        {
          requirements: [{ type: "assert-table-uuid", uuid }],
          updates: [{ action: "add-commitz", commit: good }],
        },
      ],
      ["no updates", { requirements: [{ type: "assert-table-uuid", uuid }], updates: [] }],
      [
        "metadata without a commit",
        { requirements: [], updates: [{ action: "set-properties", updates: { a: "b" } }] },
      ],
      [
        "twice",
        {
          requirements: [],
          updates: [
            { action: "add-commit", commit: good },
            { action: "add-commit", commit: good },
          ],
        },
      ],
      [
        "backfill ahead",
        {
          requirements: [],
          updates: [{ action: "set-latest-backfilled-version", "latest-published-version": 7 }],
        },
      ],
    ];
    for (const [what, body] of shapes) {
      const res = await silt.call("POST", `${DT}/ext`, body);
      expect([what, res.status]).toEqual([what, 400]);
    }
    expect(await state("ext")).toEqual(before);
    // And the good one still commits afterwards.
    expect((await addCommit("ext", good, [{ type: "assert-etag", etag }])).status).toBe(200);
  });

  it("tells a race loser that already saw the winners published to rebase (409), not 400", async () => {
    const before = await state("ext");
    const uuid = (await load("ext")).metadata["table-uuid"];
    // The loser read version V-2 and wrote its commit for V-1; by the time it sends it, it has
    // listed the log up to the latest version V as published.
    const loser = await stage(loc, before.version - 1, [commitInfo(Date.now() + 50_000)]);
    const res = await silt.call("POST", `${DT}/ext`, {
      requirements: [{ type: "assert-table-uuid", uuid }],
      updates: [
        { action: "add-commit", commit: loser },
        { action: "set-latest-backfilled-version", "latest-published-version": before.version },
      ],
    });
    expect([res.status, res.body.error.type]).toEqual([409, "CommitVersionConflictException"]);
    expect(await state("ext")).toEqual(before);
  });

  it("refuses a commit that turns a requirement off", async () => {
    const before = await state("ext");
    const snapshotMeta = (await load("ext")).metadata;
    const commit = await stage(loc, before.version + 1, [
      commitInfo(Date.now() + 100, "SET TBLPROPERTIES"),
      {
        metaData: {
          id: randomUUID(),
          format: { provider: "parquet", options: {} },
          schemaString: JSON.stringify({
            type: "struct",
            fields: [{ name: "sku", type: "string", nullable: true, metadata: {} }],
          }),
          partitionColumns: [],
          configuration: { ...snapshotMeta.properties, "delta.enableDeletionVectors": "false" },
        },
      },
    ]);
    const res = await addCommit("ext", commit);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(
      "catalog requires table property 'delta.enableDeletionVectors'='true'",
    );
    expect(await state("ext")).toEqual(before);
  });

  it("refuses data files without the physical column names of a column-mapped table", async () => {
    const t = await createAsClient(
      "mapped",
      { "delta.columnMapping.mode": "name" },
      JSON.stringify({
        type: "struct",
        fields: [
          {
            name: "sku",
            type: "string",
            nullable: true,
            metadata: { "delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-a" },
          },
          {
            name: "qty",
            type: "integer",
            nullable: true,
            metadata: { "delta.columnMapping.id": 2, "delta.columnMapping.physicalName": "col-b" },
          },
        ],
      }),
    );
    expect(t.finalized.status).toBe(200);
    const logical = await dataFile(t.location, {
      sku: arrow.vectorFromArray(["fig"], new arrow.Utf8()),
      qty: arrow.vectorFromArray([7], new arrow.Int32()),
    });
    const res = await addCommit(
      "mapped",
      await stage(t.location, 1, [commitInfo(Date.now() + 1), logical]),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("must name columns by their physical names");
    expect(res.body.error.message).toContain("sku, qty");
    expect(await state("mapped")).toEqual({ version: 0, rows: [] });
    const physical = await dataFile(t.location, {
      "col-a": arrow.vectorFromArray(["fig"], new arrow.Utf8()),
      "col-b": arrow.vectorFromArray([7], new arrow.Int32()),
    });
    expect(
      (
        await addCommit(
          "mapped",
          await stage(t.location, 1, [commitInfo(Date.now() + 2), physical]),
        )
      ).status,
    ).toBe(200);
    expect(await state("mapped")).toEqual({ version: 1, rows: ['["fig",7]'] });
  });

  it("takes legacy commits (POST) and lists the unpublished tail (GET with a body)", async () => {
    const before = await state("ext");
    const entry = (await silt.call("GET", `${UC}/tables/shop.s.ext`)).body;
    const commit = await stage(loc, before.version + 1, [commitInfo(Date.now() + 1000)]);
    const legacy = {
      table_id: entry.table_id,
      table_uri: entry.storage_location.replace("file:///", "file:/"),
      commit_info: {
        version: commit.version,
        timestamp: commit.timestamp,
        file_name: commit["file-name"],
        file_size: commit["file-size"],
        file_modification_timestamp: Date.now(),
      },
      latest_backfilled_version: before.version,
    };
    const wrongUri = await silt.call("POST", `${UC}/delta/preview/commits`, {
      ...legacy,
      table_uri: "file:///x",
    });
    expect([wrongUri.status, wrongUri.body.error_code]).toEqual([400, "INVALID_ARGUMENT"]);
    const ok = await silt.call("POST", `${UC}/delta/preview/commits`, legacy);
    expect([ok.status, ok.body]).toEqual([200, {}]);
    const rival = await silt.call("POST", `${UC}/delta/preview/commits`, {
      ...legacy,
      commit_info: {
        ...legacy.commit_info,
        file_name: `${commitFileName(commit.version).slice(0, 20)}.${randomUUID()}.json`,
      },
    });
    expect([rival.status, rival.body.error_code]).toEqual([409, "COMMIT_VERSION_CONFLICT"]);
    // Spark sends this GET with a JSON body, which Fetch cannot; the route also reads the query.
    const listed = await silt.call(
      "GET",
      `${UC}/delta/preview/commits?table_id=${entry.table_id}&table_uri=${encodeURIComponent(legacy.table_uri)}&start_version=0`,
    );
    expect(listed.body).toEqual({ commits: [], latest_table_version: commit.version });
  });

  it("lets a Silt writer that lost a version to another engine rebase or fail as Delta does", async () => {
    const entry = await silt.ctx.catalog.getTable("shop", "s", "ext");
    const base = (await state("ext")).version;
    const add = await dataFile(loc, {
      sku: arrow.vectorFromArray(["plum"], new arrow.Utf8()),
      qty: arrow.vectorFromArray([1], new arrow.Int32()),
    });
    expect(
      (await addCommit("ext", await stage(loc, base + 1, [commitInfo(Date.now() + 5000), add])))
        .status,
    ).toBe(200);
    const request = {
      store: silt.ctx.store,
      arbiter: silt.ctx.arbiter,
      tableId: entry.tableId,
      tableRoot: entry.location,
      tableName: "shop.s.ext",
      readVersion: base,
    };
    // A blind append read nothing: it rebases over the other engine's commit.
    const blind = await commitTransaction({
      ...request,
      actions: [],
      commitInfo: { operation: "WRITE", isBlindAppend: true },
    });
    expect(blind.version).toBe(base + 2);
    // A transaction that read the whole table conflicts with the file the engine added.
    await expect(
      commitTransaction({
        ...request,
        actions: [],
        commitInfo: { operation: "DELETE", isBlindAppend: false },
        readSet: { readWholeTable: true, readFilePaths: new Set() },
      }),
    ).rejects.toMatchObject({ errorClass: "DELTA_CONCURRENT_APPEND", status: 409 });
  });
});

describe("bearer tokens (SILT_AUTH=token)", () => {
  const tokens = parseTokens("tok-alice=alice@example.com,tok-bob=bob@example.com");
  const call = async (token: string | undefined, method: string, url: string, body?: unknown) => {
    const app = createApp(silt.ctx, { auth: "token", tokens });
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const res = await app.request(`http://silt.test${url}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as ApiResponse["body"] };
  };

  it("runs each request as its token's principal, with the same privileges as /api/v1", async () => {
    expect((await call("tok-alice", "POST", `${UC}/catalogs`, { name: "alices" })).body.owner).toBe(
      "alice@example.com",
    );
    await call("tok-alice", "POST", `${UC}/schemas`, { name: "s", catalog_name: "alices" });
    const made = await call("tok-alice", "POST", `${UC}/tables`, {
      name: "t",
      catalog_name: "alices",
      schema_name: "s",
      columns: [{ name: "a", type_text: "int" }],
    });
    expect(made.status).toBe(200);

    const anonymous = await call(undefined, "GET", `${UC}/tables/alices.s.t`);
    expect([anonymous.status, anonymous.body.error_code]).toEqual([401, "UNAUTHENTICATED"]);
    const unknown = await call(
      "tok-mallory",
      "GET",
      `${UC}/delta/v1/catalogs/alices/schemas/s/tables/t`,
    );
    expect([unknown.status, unknown.body.error.type]).toEqual([401, "NotAuthorizedException"]);
    const bob = await call("tok-bob", "GET", `${UC}/tables/alices.s.t`);
    expect([bob.status, bob.body.error_code]).toEqual([403, "PERMISSION_DENIED"]);
    const bobDelta = await call(
      "tok-bob",
      "GET",
      `${UC}/delta/v1/catalogs/alices/schemas/s/tables/t`,
    );
    expect([bobDelta.status, bobDelta.body.error.type]).toEqual([403, "PermissionDeniedException"]);
    expect((await call("tok-bob", "GET", `${UC}/catalogs`)).body.catalogs).toEqual([]);

    for (const [type, name, privileges] of [
      ["catalog", "alices", ["USE_CATALOG"]],
      ["schema", "alices.s", ["USE_SCHEMA"]],
      ["table", "alices.s.t", ["SELECT"]],
    ] as const) {
      const granted = await call("tok-alice", "PATCH", `${UC}/permissions/${type}/${name}`, {
        changes: [{ principal: "bob@example.com", add: privileges, remove: [] }],
      });
      expect(granted.status).toBe(200);
    }
    expect((await call("tok-bob", "GET", `${UC}/tables/alices.s.t`)).status).toBe(200);
    // SELECT does not let bob commit or drop.
    const drop = await call("tok-bob", "DELETE", `${UC}/tables/alices.s.t`);
    expect([drop.status, drop.body.error_code]).toEqual([403, "PERMISSION_DENIED"]);
    expect((await call("tok-alice", "GET", `${UC}/tables/alices.s.t`)).status).toBe(200);
  });

  it("lets a reader list a table's commits but not commit, and only the stager finalize", async () => {
    const info = (await call("tok-alice", "GET", `${UC}/tables/alices.s.t`)).body;
    const query = `table_id=${info.table_id}&table_uri=${encodeURIComponent(info.storage_location)}&start_version=0`;
    const listed = await call("tok-bob", "GET", `${UC}/delta/preview/commits?${query}`);
    expect([listed.status, listed.body.latest_table_version]).toEqual([200, 0]);
    const commit = await call("tok-bob", "POST", `${UC}/delta/preview/commits`, {
      table_id: info.table_id,
      table_uri: info.storage_location,
      latest_backfilled_version: 0,
    });
    expect([commit.status, commit.body.error_code]).toEqual([403, "PERMISSION_DENIED"]);

    await call("tok-alice", "PATCH", `${UC}/permissions/schema/alices.s`, {
      changes: [{ principal: "bob@example.com", add: ["CREATE_TABLE"], remove: [] }],
    });
    const staged = await call("tok-alice", "POST", `${UC}/staging-tables`, {
      name: "mine",
      catalog_name: "alices",
      schema_name: "s",
    });
    expect(staged.status).toBe(200);
    const stolen = await call("tok-bob", "POST", `${UC}/tables`, {
      name: "mine",
      catalog_name: "alices",
      schema_name: "s",
      table_type: "MANAGED",
      data_source_format: "DELTA",
      columns: [{ name: "a", type_text: "int" }],
      storage_location: staged.body.staging_location,
    });
    expect([stolen.status, stolen.body.error_code]).toEqual([403, "PERMISSION_DENIED"]);
  });

  it("refuses a malformed token list", () => {
    expect(() => parseTokens("")).toThrow("SILT_AUTH=token needs SILT_TOKENS");
    expect(() => parseTokens("alice")).toThrow("token=principal pairs");
  });
});

describe("limits and leftovers", () => {
  it("answers 429 while too many accepted commits are unpublished, and commits once they publish", async () => {
    const t = await createAsClient("backlog", { "delta.columnMapping.mode": "none" });
    expect(t.finalized.status).toBe(200);
    // Ten ratified versions whose staged files are not there yet: publishing them fails.
    const pending: string[] = [];
    for (let v = 1; v <= 10; v++) {
      const stagedKey = `${t.key}/${STAGED_DIR}${String(v).padStart(20, "0")}.${randomUUID()}.json`;
      pending.push(stagedKey);
      expect(
        await silt.ctx.arbiter.ratify({
          tableId: t.id,
          version: v,
          stagedKey,
          inCommitTimestamp: Date.now() + v,
          txnId: randomUUID(),
          operation: "WRITE",
        }),
      ).toBe(true);
    }
    const next = await stage(t.location, 11, [commitInfo(Date.now() + 100)]);
    const uuid = [{ type: "assert-table-uuid", uuid: t.id }];
    const refused = await addCommit("backlog", next, uuid);
    expect([refused.status, refused.body.error.type]).toEqual([429, "ResourceExhaustedException"]);
    expect((await silt.ctx.arbiter.latest(t.id))?.version).toBe(10);
    // The staged files arrive (a slow client): the next attempt publishes them and commits.
    for (const [i, key] of pending.entries()) {
      await silt.ctx.store.put(
        key,
        new TextEncoder().encode(serializeActions([commitInfo(Date.now() + i + 1)])),
      );
    }
    const accepted = await addCommit("backlog", next, uuid);
    expect([accepted.status, accepted.body["latest-table-version"]]).toEqual([200, 11]);
    expect(accepted.body.commits).toEqual([]);
  });

  it("lets a new create take over a staging entry nobody finalized", async () => {
    const first = await silt.call("POST", `${UC}/staging-tables`, {
      name: "abandoned",
      catalog_name: "shop",
      schema_name: "s",
    });
    expect(first.status).toBe(200);
    expect(first.body.staging_location).toContain(first.body.id);
    const creds = await silt.call("POST", `${UC}/temporary-table-credentials`, {
      table_id: first.body.id,
      operation: "READ_WRITE",
    });
    expect(creds.body).toEqual({
      aws_temp_credentials: null,
      expiration_time: null,
      url: first.body.staging_location,
    });
    // The client gave up; someone else creates the name.
    const second = await createAsClient("abandoned", { "delta.columnMapping.mode": "none" });
    expect(second.finalized.status).toBe(200);
    const stale = await silt.call("POST", `${UC}/temporary-table-credentials`, {
      table_id: first.body.id,
      operation: "READ_WRITE",
    });
    expect(stale.status).toBe(404);
    const late = await silt.call("POST", DT, {
      name: "abandoned",
      location: first.body.staging_location,
      "table-type": "MANAGED",
    });
    expect([late.status, late.body.error.type]).toEqual([404, "NoSuchTableException"]);
    expect((await load("abandoned")).metadata["table-uuid"]).toBe(second.id);
  });
});

describe("unknown fields", () => {
  it("are refused with the nearest known field, before anything changes", async () => {
    const list = await silt.call("GET", `${UC}/catalogs?max_result=1`);
    expect([list.status, list.body.error_code]).toEqual([400, "INVALID_ARGUMENT"]);
    expect(list.body.message).toContain("Unknown field 'max_result'");
    expect(list.body.message).toContain("did you mean 'max_results'");
    const table = await silt.call("POST", `${UC}/tables`, {
      name: "typo",
      catalog_name: "shop",
      schema_name: "s",
      colums: [{ name: "a", type_text: "int" }],
    });
    expect(table.body.message).toContain("did you mean 'columns'");
    const column = await silt.call("POST", `${UC}/tables`, {
      name: "typo",
      catalog_name: "shop",
      schema_name: "s",
      columns: [{ name: "a", type_txt: "int" }],
    });
    expect(column.body.message).toContain("Unknown field 'type_txt' in column 1");
    expect((await silt.call("GET", `${UC}/tables/shop.s.typo`)).status).toBe(404);

    const before = await state("ext");
    const good = await stage((await load("ext")).metadata.location, before.version + 1, [
      commitInfo(Date.now() + 90_000),
    ]);
    const { "file-name": fileName, ...rest } = good;
    const typo = await addCommit("ext", { ...rest, file_name: fileName });
    expect([typo.status, typo.body.error.type]).toEqual([400, "InvalidParameterValueException"]);
    expect(typo.body.error.message).toContain("did you mean 'file-name'");
    const uuid = (await load("ext")).metadata["table-uuid"];
    const misspeltUpdate = await silt.call("POST", `${DT}/ext`, {
      requirements: [{ type: "assert-table-uuid", uuid }],
      updates: [{ action: "add-commit", comit: good }],
    });
    expect(misspeltUpdate.body.error.message).toContain("did you mean 'commit'");
    const extraTop = await silt.call("POST", `${DT}/ext`, {
      requirements: [{ type: "assert-table-uuid", uuid }],
      updates: [{ action: "add-commit", commit: good }],
      force: true,
    });
    expect(extraTop.status).toBe(400);
    expect(await state("ext")).toEqual(before);
    expect((await addCommit("ext", good)).status).toBe(200);
  });
});

describe("changing catalogs and schemas", () => {
  it("sets comments and replaces properties; refuses bad input and new names, changing nothing", async () => {
    await silt.call("POST", `${UC}/catalogs`, { name: "patched", properties: { a: "1" } });
    await silt.call("POST", `${UC}/schemas`, { name: "ps", catalog_name: "patched" });
    const catalog = async () => (await silt.call("GET", `${UC}/catalogs/patched`)).body;
    const before = await catalog();
    for (const [body, status] of [
      [{ comments: "typo" }, 400],
      [{ comment: 7 }, 400],
      [{ properties: ["a"] }, 400],
      [{ properties: { a: { b: "c" } } }, 400],
      [{ new_name: "elsewhere" }, 501],
    ] as const) {
      const res = await silt.call("PATCH", `${UC}/catalogs/patched`, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
    }
    expect(await catalog()).toEqual(before);
    expect((await silt.call("PATCH", `${UC}/catalogs/nope`, { comment: "x" })).status).toBe(404);

    const changed = await silt.call("PATCH", `${UC}/catalogs/patched`, {
      comment: "now with a comment",
      properties: { b: "2" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ comment: "now with a comment", properties: { b: "2" } });
    // An empty or absent properties map leaves them as they are, as Unity Catalog does.
    const kept = await silt.call("PATCH", `${UC}/catalogs/patched`, { properties: {} });
    expect(kept.body).toMatchObject({ comment: "now with a comment", properties: { b: "2" } });
    expect(await catalog()).toEqual(kept.body);

    const schema = await silt.call("PATCH", `${UC}/schemas/patched.ps`, { comment: "s" });
    expect(schema.body).toMatchObject({ full_name: "patched.ps", comment: "s", properties: {} });
    expect((await silt.call("PATCH", `${UC}/schemas/patched.nope`, { comment: "x" })).status).toBe(
      404,
    );
    expect((await silt.call("PATCH", `${UC}/schemas/patched`, { comment: "x" })).status).toBe(400);
    expect((await silt.call("GET", `${UC}/schemas/patched.ps`)).body.comment).toBe("s");
  });
});

describe("the rest of the Delta API", () => {
  it("renames a table within its schema: same id, rows and history, the old name gone", async () => {
    await silt.call("POST", "/api/v1/tables", {
      name: "shop.s.before",
      columns: [{ name: "a", type: "INT" }],
    });
    await silt.call("POST", "/api/v1/sql", {
      statement: "INSERT INTO shop.s.before VALUES (1), (2)",
    });
    await silt.call("POST", "/api/v1/tables", {
      name: "shop.s.taken",
      columns: [{ name: "b", type: "STRING" }],
    });
    const was = await state("before");
    const uuid = (await load("before")).metadata["table-uuid"];

    const refusals = [
      [{ "new-name": "taken" }, 409, "AlreadyExistsException"],
      [{ "new-name": "before" }, 409, "AlreadyExistsException"],
      [{ new_name: "after" }, 400, "InvalidParameterValueException"],
      [{}, 400, "InvalidParameterValueException"],
      [{ "new-name": "other.after" }, 400, "InvalidParameterValueException"],
    ] as const;
    for (const [body, status, type] of refusals) {
      const res = await silt.call("POST", `${DT}/before/rename`, body);
      expect([res.status, res.body.error?.type], JSON.stringify(body)).toEqual([status, type]);
    }
    expect(await state("before")).toEqual(was);
    const missing = await silt.call("POST", `${DT}/nope/rename`, { "new-name": "x" });
    expect([missing.status, missing.body.error.type]).toEqual([404, "NoSuchTableException"]);

    const renamed = await silt.call("POST", `${DT}/before/rename`, { "new-name": "After" });
    expect(renamed.status).toBe(204);
    expect(await state("after")).toEqual(was);
    expect((await load("after")).metadata["table-uuid"]).toBe(uuid);
    expect((await silt.call("GET", `${DT}/before`)).status).toBe(404);
    const listed = await silt.call("GET", `${UC}/tables?catalog_name=shop&schema_name=s`);
    const names = (listed.body.tables as { name: string }[]).map((t) => t.name);
    expect(names).toContain("after");
    expect(names).not.toContain("before");
    const history = await silt.call("GET", "/api/v1/tables/shop.s.after/history");
    expect((history.body.rows as unknown[]).length).toBe(was.version + 1);
  });

  it("answers config, HEAD, credentials, metrics and delete", async () => {
    const config = await silt.call(
      "GET",
      `${UC}/delta/v1/config?catalog=shop&protocol-versions=1.0`,
    );
    expect(config.body["protocol-version"]).toBe("1.0");
    expect(config.body.endpoints).toContain(
      "POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
    );
    expect(
      (await silt.call("GET", `${UC}/delta/v1/config?catalog=nope&protocol-versions=1.0`)).status,
    ).toBe(404);

    const app = createApp(silt.ctx);
    const head = (table: string) =>
      app.request(`http://silt.test${DT}/${table}`, { method: "HEAD" });
    expect((await head("ext")).status).toBe(204);
    expect((await head("nope")).status).toBe(404);

    for (const operation of ["READ", "READ_WRITE"]) {
      const creds = await silt.call("GET", `${DT}/ext/credentials?operation=${operation}`);
      expect([creds.status, creds.body]).toEqual([200, { "storage-credentials": [] }]);
    }
    const badOp = await silt.call("GET", `${DT}/ext/credentials?operation=WRITE`);
    expect([badOp.status, badOp.body.error.type]).toEqual([400, "InvalidParameterValueException"]);
    const staged = await silt.call(
      "POST",
      `${UC}/delta/v1/catalogs/shop/schemas/s/staging-tables`,
      {
        name: "creds",
      },
    );
    const stagingCreds = await silt.call(
      "GET",
      `${UC}/delta/v1/staging-tables/${staged.body["table-id"]}/credentials`,
    );
    expect(stagingCreds.body).toEqual({ "storage-credentials": [] });
    expect(
      (await silt.call("GET", `${UC}/delta/v1/staging-tables/${randomUUID()}/credentials`)).status,
    ).toBe(404);

    const uuid = (await load("ext")).metadata["table-uuid"];
    const metrics = await app.request(`http://silt.test${DT}/ext/metrics`, {
      method: "POST",
      body: JSON.stringify({
        "table-id": uuid,
        report: { "commit-report": { "num-files-added": 1 } },
      }),
    });
    expect(metrics.status).toBe(204);
    const wrongId = await silt.call("POST", `${DT}/ext/metrics`, {
      "table-id": randomUUID(),
      report: {},
    });
    expect(wrongId.status).toBe(400);
    expect(
      (
        await silt.call(
          "GET",
          `${UC}/delta/v1/temporary-path-credentials?location=file:///x&operation=READ`,
        )
      ).status,
    ).toBe(403);

    await silt.call("POST", "/api/v1/tables", {
      name: "shop.s.doomed",
      columns: [{ name: "a", type: "INT" }],
    });
    const dropped = await app.request(`http://silt.test${DT}/doomed`, { method: "DELETE" });
    expect(dropped.status).toBe(204);
    expect((await silt.call("GET", "/api/v1/tables/shop.s.doomed/detail")).status).toBe(404);
  });
});
