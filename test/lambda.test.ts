/**
 * The Lambda adapters: each function answers API Gateway (HTTP API, payload v2) events for its
 * own operation, against S3 and DynamoDB reached through the same SDK clients a deployment uses
 * (here pointed at the emulators by AWS_ENDPOINT_URL_*), and 404s the routes of the others.
 * With SILT_AUTH=iam each request runs as the caller its IAM authorizer context names, and bad
 * input of every kind is refused with its error, committing nothing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Operation } from "../lib/api/app.ts";
import { MAX_BODY_BYTES } from "../lib/api/http.ts";
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
