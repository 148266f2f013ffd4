/**
 * The Lambda adapters: each function answers API Gateway (HTTP API, payload v2) events for its
 * own operation, against S3 and DynamoDB reached through the same SDK clients a deployment uses
 * (here pointed at the emulators by AWS_ENDPOINT_URL_*), and 404s the routes of the others.
 * With SILT_AUTH=iam each request runs as the caller its IAM authorizer context names, and bad
 * input of every kind is refused with its error, committing nothing.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_BODY_BYTES } from "../lib/api/http.ts";
import type { Operation } from "../lib/api/operations.ts";
import { ensureCatalogTable } from "../lib/catalog/catalog-store.ts";
import { ensureCommitTable } from "../lib/commit/arbiter.ts";
import { httpHandler } from "../lib/runtime/lambda.ts";
import { type DynamoHandle, startDynamo } from "./helpers/dynamo-emulator.ts";
import { httpEvent } from "./helpers/lambda-env.ts";
import { type S3TestEndpoint, startS3Emulator } from "./helpers/s3-emulator.ts";

const event = httpEvent;

type Handler = (e: ReturnType<typeof event>) => Promise<{ statusCode: number; body: string }>;

const ALICE = "arn:aws:iam::123456789012:user/alice";
const BOB = "arn:aws:iam::123456789012:user/bob";

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
      SILT_AUTH: "none",
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

  it("refuses a row answer past Lambda's 6 MB response with RESULT_TOO_LARGE, and serves it paged", async () => {
    const catalog = await load("catalog");
    const create = await load("create");
    const insert = await load("insert");
    const rows = await load("rows");
    await catalog(event("POST", "/api/v1/catalogs", { name: "big" }));
    await catalog(event("POST", "/api/v1/catalogs/big/schemas", { name: "s" }));
    const columns = [
      { name: "id", type: "INT" },
      { name: "text", type: "STRING" },
    ];
    expect(
      (await create(event("POST", "/api/v1/tables", { name: "big.s.t", columns }))).statusCode,
    ).toBe(201);
    // Four rows of 2 MB each, one insert (body) per row: an 8 MB answer.
    for (let id = 1; id <= 4; id++) {
      const body = { rows: [[id, "q".repeat(2 * 1024 * 1024)]] };
      const res = await insert(event("POST", "/api/v1/tables/big.s.t/insert", body));
      expect(res.statusCode, res.body).toBe(200);
    }
    const whole = await rows(event("GET", "/api/v1/tables/big.s.t/rows"));
    expect(whole.statusCode).toBe(400);
    const error = JSON.parse(whole.body);
    expect(error.error_class).toBe("RESULT_TOO_LARGE");
    expect(error.message).toContain("max_rows (e.g. 2)");
    let token: string | undefined;
    const ids: number[] = [];
    do {
      const query = `max_rows=2${token === undefined ? "" : `&page_token=${encodeURIComponent(token)}`}`;
      const page = await rows(event("GET", "/api/v1/tables/big.s.t/rows", undefined, query));
      expect(page.statusCode).toBe(200);
      // What Lambda's runtime sends back: the result object as JSON, within its 6 MB.
      expect(JSON.stringify(page).length).toBeLessThanOrEqual(6 * 1024 * 1024);
      const body = JSON.parse(page.body);
      ids.push(...body.rows.map((r: unknown[]) => r[0]));
      token = body.next_page_token;
    } while (token !== undefined);
    expect(ids.sort()).toEqual([1, 2, 3, 4]);
  });

  it("serves every other operation's routes through its own function file", async () => {
    const sql = await load("sql");
    const call = async (op: string, method: string, path: string, body?: unknown) => {
      const res = await (await load(op))(event(method, path, body));
      expect(res.statusCode, `${op} ${method} ${path}: ${res.body}`).toBeLessThan(300);
      return JSON.parse(res.body);
    };
    const rowsNow = async () =>
      (await call("rows", "GET", "/api/v1/tables/ops.s.t/rows")).rows.sort(
        (a: number[], b: number[]) => a[0]! - b[0]!,
      );
    await call("catalog", "POST", "/api/v1/catalogs", { name: "ops" });
    await call("catalog", "POST", "/api/v1/catalogs/ops/schemas", { name: "s" });
    await call("create", "POST", "/api/v1/tables", {
      name: "ops.s.t",
      columns: [
        { name: "id", type: "INT" },
        { name: "p", type: "STRING" },
      ],
      partitionedBy: ["p"],
      rows: [
        [1, "a"],
        [2, "b"],
      ],
    });
    const t = "/api/v1/tables/ops.s.t";
    await call("overwrite", "POST", `${t}/overwrite`, {
      dynamicPartitionOverwrite: true,
      rows: [[3, "a"]],
    });
    await call("replace-where", "POST", `${t}/replace-where`, {
      predicate: "p = 'b'",
      rows: [[4, "b"]],
    });
    await call("replace-using", "POST", `${t}/replace-using`, { columns: ["p"], rows: [[5, "b"]] });
    expect(await rowsNow()).toEqual([
      [3, "a"],
      [5, "b"],
    ]);
    await call("update", "POST", `${t}/update`, { condition: "id = 3", set: { id: "30" } });
    await call("delete", "POST", `${t}/delete`, { condition: "id = 5" });
    await call("merge", "POST", `${t}/merge`, {
      source: {
        rows: [
          { id: 30, p: "a" },
          { id: 6, p: "c" },
        ],
      },
      on: "target.id = source.id",
      whenMatched: [{ delete: true }],
      whenNotMatched: [{ insertAll: true }],
    });
    expect(await rowsNow()).toEqual([[6, "c"]]);
    await call("restore", "POST", `${t}/restore`, { version: 0 });
    expect(await rowsNow()).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    await call("insert", "POST", `${t}/insert`, { rows: [[7, "a"]] });
    // Partition a now has two small files to compact.
    await call("optimize", "POST", `${t}/optimize`, {});
    await call("vacuum", "POST", `${t}/vacuum`, { dryRun: true });
    const grants = await call("permissions", "GET", "/api/v1/permissions/table/ops.s.t");
    expect(grants).toHaveProperty("privilege_assignments");
    // The function answers its route; with no table-access role configured in this environment
    // it says so (vending itself, through STS, is tested in credentials.test.ts).
    const creds = await (await load("credentials"))(
      event("POST", "/api/v1/temporary-table-credentials", {
        table_name: "ops.s.t",
        operation: "READ",
      }),
    );
    expect(creds.statusCode).toBe(501);
    expect(JSON.parse(creds.body).error_class).toBe("CREDENTIAL_VENDING_NOT_CONFIGURED");
    const history = await sql(
      event("POST", "/api/v1/sql", { statement: "DESCRIBE HISTORY ops.s.t" }),
    );
    expect(
      JSON.parse(history.body)
        .rows.map((r: unknown[]) => r[4])
        .reverse(),
    ).toEqual([
      "CREATE TABLE AS SELECT",
      "WRITE",
      "WRITE",
      "WRITE",
      "UPDATE",
      "DELETE",
      "MERGE",
      "RESTORE",
      "WRITE",
      "OPTIMIZE",
    ]);
  });

  it("serves both Unity Catalog APIs through functions/unity-catalog.ts", async () => {
    const uc = await load("unity-catalog");
    const P = "/api/2.1/unity-catalog";
    const ok = async (method: string, path: string, body?: unknown, query = "") => {
      const res = await uc(event(method, path, body, query));
      expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(200);
      return JSON.parse(res.body);
    };
    const storageRoot = `s3://${s3.bucket}/${s3.prefix}`.replace(/\/+$/, "");

    // The legacy API's CatalogInfo and SchemaInfo.
    expect(await ok("POST", `${P}/catalogs`, { name: "ucl", comment: "for UC clients" })).toEqual({
      name: "ucl",
      comment: "for UC clients",
      properties: {},
      owner: "silt",
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      id: expect.any(String),
      storage_root: `${storageRoot}/tables`,
    });
    expect(
      await ok("POST", `${P}/schemas`, {
        catalog_name: "ucl",
        name: "s",
        properties: { team: "data" },
      }),
    ).toEqual({
      name: "s",
      catalog_name: "ucl",
      full_name: "ucl.s",
      comment: null,
      properties: { team: "data" },
      owner: "silt",
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      schema_id: expect.any(String),
    });
    const listed = await ok("GET", `${P}/schemas`, undefined, "catalog_name=ucl");
    expect(listed.schemas.map((x: { full_name: string }) => x.full_name)).toEqual(["ucl.s"]);

    // A managed table Silt creates from the columns (no storage_location), then read back.
    const created = await ok("POST", `${P}/tables`, {
      catalog_name: "ucl",
      schema_name: "s",
      name: "t",
      table_type: "MANAGED",
      data_source_format: "DELTA",
      columns: [
        { name: "id", type_text: "int", type_name: "INT", position: 0, nullable: false },
        { name: "note", type_text: "string", type_name: "STRING", position: 1 },
      ],
    });
    const table = await ok("GET", `${P}/tables/ucl.s.t`);
    expect(table).toEqual(created);
    expect(table).toMatchObject({
      name: "t",
      catalog_name: "ucl",
      schema_name: "s",
      full_name: "ucl.s.t",
      table_type: "MANAGED",
      data_source_format: "DELTA",
      table_id: expect.any(String),
      storage_location: expect.stringMatching(new RegExp(`^${storageRoot}/tables/[\\w-]+$`)),
      owner: "silt",
    });
    expect(
      table.columns.map((c: Record<string, unknown>) => [
        c.name,
        c.type_name,
        c.position,
        c.nullable,
      ]),
    ).toEqual([
      ["id", "INT", 0, false],
      ["note", "STRING", 1, true],
    ]);
    expect(table.properties["delta.lastUpdateVersion"]).toBe("0");
    // The Delta API loads the same table.
    const loaded = await ok("GET", `${P}/delta/v1/catalogs/ucl/schemas/s/tables/t`);
    expect(JSON.stringify(loaded)).toContain(table.table_id);

    // Errors in each API's own shape.
    const missing = await uc(event("GET", `${P}/tables/ucl.s.nope`));
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({
      error_code: "TABLE_NOT_FOUND",
      message: expect.stringContaining("nope"),
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TABLE_NOT_FOUND" }],
    });
    const missingDelta = await uc(event("GET", `${P}/delta/v1/catalogs/ucl/schemas/s/tables/nope`));
    expect(missingDelta.statusCode).toBe(404);
    expect(JSON.parse(missingDelta.body)).toEqual({
      error: { type: "NoSuchTableException", code: 404, message: expect.stringContaining("nope") },
    });

    // The legacy commits API reads its arguments from the body of a GET, which the Lambda
    // adapter must carry past Fetch's Request (it cannot hold a GET body) to the route.
    const commitsQuery = {
      table_id: table.table_id,
      table_uri: table.storage_location,
      start_version: 0,
    };
    const commits = await uc(event("GET", `${P}/delta/preview/commits`, commitsQuery));
    expect(commits.statusCode, commits.body).toBe(200);
    expect(JSON.parse(commits.body)).toEqual({ commits: [], latest_table_version: 0 });
    // The same body base64-encoded, as API Gateway sends bodies it deems binary.
    const encoded = event("GET", `${P}/delta/preview/commits`);
    Object.assign(encoded, {
      body: Buffer.from(JSON.stringify(commitsQuery)).toString("base64"),
      isBase64Encoded: true,
    });
    const fromBase64 = await uc(encoded);
    expect(fromBase64.statusCode, fromBase64.body).toBe(200);
    expect(JSON.parse(fromBase64.body)).toEqual({ commits: [], latest_table_version: 0 });
    // What the body says is what the route answers: another table's id is refused by the check
    // of table_uri against it, and a body without table_id is refused for that.
    const other = await ok("POST", `${P}/tables`, {
      catalog_name: "ucl",
      schema_name: "s",
      name: "u",
      columns: [{ name: "id", type_text: "int", type_name: "INT", position: 0 }],
    });
    const mismatched = await uc(
      event("GET", `${P}/delta/preview/commits`, { ...commitsQuery, table_id: other.table_id }),
    );
    expect(mismatched.statusCode, mismatched.body).toBe(400);
    expect(JSON.parse(mismatched.body).message).toContain(other.table_id);
    const noBody = await uc(event("GET", `${P}/delta/preview/commits`));
    expect(noBody.statusCode, noBody.body).toBe(400);
    expect(JSON.parse(noBody.body).message).toContain("table_id");

    // Without a table-access role in this environment vending says so, as the credentials
    // function does (the stack gives this function the role too).
    const creds = await uc(
      event("POST", `${P}/temporary-table-credentials`, {
        table_id: table.table_id,
        operation: "READ",
      }),
    );
    expect(creds.statusCode, creds.body).toBe(501);
    expect(JSON.parse(creds.body).message).toContain("SILT_TABLE_ACCESS_ROLE_ARN");
    // Nor, without the table-write role, READ_WRITE (the stack gives the function both roles).
    const writeCreds = await uc(
      event("POST", `${P}/temporary-table-credentials`, {
        table_id: table.table_id,
        operation: "READ_WRITE",
      }),
    );
    expect(writeCreds.statusCode, writeCreds.body).toBe(501);
    expect(JSON.parse(writeCreds.body).message).toContain("SILT_TABLE_WRITE_ROLE_ARN");

    // It serves only the UC routes, and the /api/v1 functions none of them.
    expect((await uc(event("GET", "/api/v1/tables/ucl.s.t/rows"))).statusCode).toBe(404);
    expect((await (await load("catalog"))(event("GET", `${P}/catalogs`))).statusCode).toBe(404);
    // Dropping through it removes the table for /api/v1 as well.
    expect((await uc(event("DELETE", `${P}/tables/ucl.s.u`))).statusCode).toBe(200);
    const gone = await (await load("rows"))(event("GET", "/api/v1/tables/ucl.s.u/rows"));
    expect(gone.statusCode).toBe(404);
  });

  it("vends READ and READ_WRITE credentials through the Unity Catalog function once it has the roles", async () => {
    // A minimal STS (Query API): the real SDK client signs, sends and parses a real AssumeRole.
    const assumed: URLSearchParams[] = [];
    const sts = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        assumed.push(new URLSearchParams(body));
        res.writeHead(200, { "content-type": "text/xml" });
        res.end(
          `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
  <Credentials><AccessKeyId>ASIAUC</AccessKeyId><SecretAccessKey>uc-secret</SecretAccessKey>
  <SessionToken>uc-token</SessionToken><Expiration>2026-11-29T18:00:00Z</Expiration></Credentials>
  <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/silt-table-access/s</Arn>
  <AssumedRoleId>AROAUC:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult><ResponseMetadata><RequestId>uc-1</RequestId></ResponseMetadata></AssumeRoleResponse>`,
        );
      });
    });
    await new Promise<void>((resolve) => sts.listen(0, "127.0.0.1", resolve));
    const before = { ...process.env };
    try {
      // The environment the stack gives the function (infra/silt-stack.ts vendsCredentials), in
      // a fresh container: the context is built once per module instance.
      Object.assign(process.env, {
        SILT_TABLE_ACCESS_ROLE_ARN: "arn:aws:iam::123456789012:role/silt-table-access",
        SILT_TABLE_WRITE_ROLE_ARN: "arn:aws:iam::123456789012:role/silt-table-write",
        AWS_ENDPOINT_URL_STS: `http://127.0.0.1:${(sts.address() as AddressInfo).port}`,
      });
      vi.resetModules();
      const uc = (await import("../functions/unity-catalog.ts")).handler as unknown as Handler;
      const P = "/api/2.1/unity-catalog";
      for (const [method, path, body] of [
        ["POST", `${P}/catalogs`, { name: "ucv" }],
        ["POST", `${P}/schemas`, { catalog_name: "ucv", name: "s" }],
        [
          "POST",
          `${P}/tables`,
          {
            catalog_name: "ucv",
            schema_name: "s",
            name: "t",
            columns: [{ name: "id", type_text: "int", type_name: "INT", position: 0 }],
          },
        ],
      ] as const) {
        const res = await uc(event(method, path, body));
        expect(res.statusCode, res.body).toBe(200);
      }
      const table = JSON.parse((await uc(event("GET", `${P}/tables/ucv.s.t`))).body);
      const res = await uc(
        event("POST", `${P}/temporary-table-credentials`, {
          table_id: table.table_id,
          operation: "READ",
        }),
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({
        aws_temp_credentials: {
          access_key_id: "ASIAUC",
          secret_access_key: "uc-secret",
          session_token: "uc-token",
        },
        url: table.storage_location,
      });
      const delta = await uc(
        event(
          "GET",
          `${P}/delta/v1/catalogs/ucv/schemas/s/tables/t/credentials`,
          undefined,
          "operation=READ",
        ),
      );
      expect(delta.statusCode, delta.body).toBe(200);
      expect(JSON.parse(delta.body)["storage-credentials"]).toMatchObject([
        { prefix: table.storage_location, operation: "READ" },
      ]);
      // READ_WRITE assumes the table-write role instead (its session policy: credentials.test.ts).
      const write = await uc(
        event(
          "GET",
          `${P}/delta/v1/catalogs/ucv/schemas/s/tables/t/credentials`,
          undefined,
          "operation=READ_WRITE",
        ),
      );
      expect(write.statusCode, write.body).toBe(200);
      expect(JSON.parse(write.body)["storage-credentials"]).toMatchObject([
        {
          prefix: table.storage_location,
          operation: "READ_WRITE",
          config: { "s3.access-key-id": "ASIAUC", "s3.session-token": "uc-token" },
        },
      ]);
      expect(assumed.map((p) => p.get("RoleArn"))).toEqual([
        "arn:aws:iam::123456789012:role/silt-table-access",
        "arn:aws:iam::123456789012:role/silt-table-access",
        "arn:aws:iam::123456789012:role/silt-table-write",
      ]);
    } finally {
      process.env = before;
      vi.resetModules();
      await new Promise((resolve) => sts.close(resolve));
    }
  });

  describe("with IAM authentication, bad input", () => {
    // Built once the outer beforeAll has set the environment.
    let sql: Handler;
    let insert: Handler;
    let rows: Handler;
    const table = "/api/v1/tables/sec.s.t";
    const run = async (statement: string, principal = ALICE) => {
      const res = await sql(event("POST", "/api/v1/sql", { statement }, "", principal));
      expect(res.statusCode, res.body).toBe(200);
      return JSON.parse(res.body);
    };
    /** The table as its owner sees it: every refused request below must leave it so. */
    const state = async () => ({
      history: (await run("DESCRIBE HISTORY sec.s.t")).rows.length,
      rows: (await run("SELECT * FROM sec.s.t ORDER BY id")).rows,
    });
    const refused = async (
      res: { statusCode: number; body: string },
      status: number,
      cls: string,
    ) => {
      expect(res.statusCode, res.body).toBe(status);
      expect(JSON.parse(res.body).error_class).toBe(cls);
      return JSON.parse(res.body).message as string;
    };

    beforeAll(async () => {
      const secured = (op: Operation) =>
        httpHandler(op, { ...process.env, SILT_AUTH: "iam" }) as unknown as Handler;
      [sql, insert, rows] = [secured("sql"), secured("insert"), secured("rows")];
      await run("CREATE CATALOG sec");
      await run("CREATE SCHEMA sec.s");
      await run("CREATE TABLE sec.s.t (id INT, note STRING) USING DELTA");
      await run("INSERT INTO sec.s.t VALUES (1, 'top-secret-note')");
    });

    it("refuses unsigned callers (401) and callers without privileges (403), logging no data", async () => {
      const before = await state();
      const written: string[] = [];
      const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
        written.push(String(chunk));
        return true;
      });
      let messages: string[];
      try {
        messages = [
          await refused(await rows(event("GET", `${table}/rows`)), 401, "UNAUTHENTICATED"),
          await refused(
            await insert(event("POST", `${table}/insert`, { rows: [[2, "x"]] })),
            401,
            "UNAUTHENTICATED",
          ),
          await refused(
            await rows(event("GET", `${table}/rows`, undefined, "", BOB)),
            403,
            "INSUFFICIENT_PERMISSIONS",
          ),
          await refused(
            await insert(event("POST", `${table}/insert`, { rows: [[2, "x"]] }, "", BOB)),
            403,
            "INSUFFICIENT_PERMISSIONS",
          ),
          await refused(
            await sql(event("POST", "/api/v1/sql", { statement: "DROP TABLE sec.s.t" }, "", BOB)),
            403,
            "INSUFFICIENT_PERMISSIONS",
          ),
        ];
      } finally {
        spy.mockRestore();
      }
      for (const text of [...messages, ...written]) expect(text).not.toContain("top-secret-note");
      expect(await state()).toEqual(before);
    });

    it("rejects a body over the Lambda payload limit with 413, pointing to the S3 upload path", async () => {
      const before = await state();
      const big = { rows: [[2, "x".repeat(MAX_BODY_BYTES)]] };
      const message = await refused(
        await insert(event("POST", `${table}/insert`, big, "", ALICE)),
        413,
        "PAYLOAD_TOO_LARGE",
      );
      expect(message).toContain("/ingest/<catalog>/<schema>/<table>/");
      expect(message).toContain('"source": {"parquet": "ingest/..."}');
      // The same body base64-encoded, as API Gateway sends binary bodies.
      const encoded = event("POST", `${table}/insert`, undefined, "", ALICE);
      Object.assign(encoded, {
        body: Buffer.from(JSON.stringify(big)).toString("base64"),
        isBase64Encoded: true,
      });
      await refused(await insert(encoded), 413, "PAYLOAD_TOO_LARGE");
      expect(await state()).toEqual(before);
    });

    it("answers malformed and missing bodies with 400", async () => {
      const before = await state();
      const malformed = event("POST", `${table}/insert`, undefined, "", ALICE);
      Object.assign(malformed, { body: '{"rows": [[2, "x"]' });
      await refused(await insert(malformed), 400, "MALFORMED_REQUEST");
      await refused(
        await insert(event("POST", `${table}/insert`, undefined, "", ALICE)),
        400,
        "INVALID_REQUEST",
      );
      await refused(
        await insert(event("POST", `${table}/insert`, { row: [2, "x"] }, "", ALICE)),
        400,
        "INVALID_REQUEST",
      );
      await refused(
        await sql(event("POST", "/api/v1/sql", { statement: "INSERT INTO" }, "", ALICE)),
        400,
        "PARSE_SYNTAX_ERROR",
      );
      expect(await state()).toEqual(before);
    });

    it("answers unknown routes with 404, and refuses to run without SILT_AUTH", async () => {
      await refused(
        await rows(event("GET", "/api/v1/nope", undefined, "", ALICE)),
        404,
        "NOT_FOUND",
      );
      const { SILT_AUTH: _, ...unset } = process.env;
      const misconfigured = httpHandler("rows", unset) as unknown as Handler;
      await expect(
        misconfigured(event("GET", `${table}/rows`, undefined, "", ALICE)),
      ).rejects.toThrow("SILT_AUTH must be one of none, iam, jwt");
    });
  });
});
