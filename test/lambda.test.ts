/**
 * The Lambda adapters: each function answers API Gateway (HTTP API, payload v2) events for its
 * own operation, against S3 and DynamoDB reached through the same SDK clients a deployment uses
 * (here pointed at the emulators by AWS_ENDPOINT_URL_*), and 404s the routes of the others.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureCatalogTable } from "../lib/catalog/catalog-store.ts";
import { ensureCommitTable } from "../lib/commit/arbiter.ts";
import { type DynamoHandle, startDynamo } from "./helpers/dynamo-emulator.ts";
import { type S3TestEndpoint, startS3Emulator } from "./helpers/s3-emulator.ts";

function event(method: string, path: string, body?: unknown, query = "") {
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: query,
    headers: { "content-type": "application/json", host: "api.example.com" },
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.example.com",
      domainPrefix: "api",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "vitest" },
      requestId: "req-1",
      routeKey: "$default",
      stage: "$default",
      time: "29/Nov/2026:00:00:00 +0000",
      timeEpoch: 0,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

type Handler = (e: ReturnType<typeof event>) => Promise<{ statusCode: number; body: string }>;

describe("Lambda handlers", () => {
  let s3: S3TestEndpoint;
  let dynamo: DynamoHandle;
  const saved = { ...process.env };
  beforeAll(async () => {
    s3 = await startS3Emulator();
    dynamo = await startDynamo();
    const commits = dynamo.tableName("lambda_commits");
    const catalog = dynamo.tableName("lambda_catalog");
    await ensureCommitTable(dynamo.client, commits);
    await ensureCatalogTable(dynamo.client, catalog);
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      SILT_BUCKET: s3.bucket,
      SILT_STORAGE_PREFIX: s3.prefix,
      SILT_COMMITS_TABLE: commits,
      SILT_CATALOG_TABLE: catalog,
    });
  });
  afterAll(async () => {
    process.env = saved;
    await dynamo.close();
    await s3.close();
  });

  const load = async (op: string): Promise<Handler> =>
    (await import(`../functions/${op}.ts`)).handler as Handler;

  it("runs a table's lifecycle through one function per operation", async () => {
    const catalog = await load("catalog");
    const create = await load("create");
    const insert = await load("insert");
    const rows = await load("rows");
    const history = await load("history");
    const detail = await load("detail");
    const drop = await load("drop");

    expect((await catalog(event("POST", "/api/v1/catalogs", { name: "lam" }))).statusCode).toBe(
      201,
    );
    expect(
      (await catalog(event("POST", "/api/v1/catalogs/lam/schemas", { name: "s" }))).statusCode,
    ).toBe(201);
    const created = await create(
      event("POST", "/api/v1/tables", { name: "lam.s.t", columns: [{ name: "id", type: "INT" }] }),
    );
    expect(created.statusCode, created.body).toBe(201);
    const ins = await insert(event("POST", "/api/v1/tables/lam.s.t/insert", { rows: [[1], [2]] }));
    expect(ins.statusCode, ins.body).toBe(200);
    const read = await rows(event("GET", "/api/v1/tables/lam.s.t/rows", undefined, "version=1"));
    expect(read.statusCode).toBe(200);
    expect(JSON.parse(read.body).rows).toEqual([[1], [2]]);
    const hist = await history(event("GET", "/api/v1/tables/lam.s.t/history"));
    expect(JSON.parse(hist.body).rows).toHaveLength(2);
    const det = await detail(event("GET", "/api/v1/tables/lam.s.t/detail"));
    expect(JSON.parse(det.body).rows[0][4]).toMatch(/^s3:\/\//);

    // A function serves only its own routes.
    const wrong = await rows(event("POST", "/api/v1/tables/lam.s.t/insert", { rows: [[3]] }));
    expect(wrong.statusCode).toBe(404);
    const errored = await insert(
      event("POST", "/api/v1/tables/lam.s.nope/insert", { rows: [[3]] }),
    );
    expect(errored.statusCode).toBe(404);
    expect(JSON.parse(errored.body).error_class).toBe("TABLE_OR_VIEW_NOT_FOUND");
    expect(errored.body).not.toContain(".ts:");

    expect((await drop(event("DELETE", "/api/v1/tables/lam.s.t"))).statusCode).toBe(200);
    expect((await rows(event("GET", "/api/v1/tables/lam.s.t/rows"))).statusCode).toBe(404);
  });
});
