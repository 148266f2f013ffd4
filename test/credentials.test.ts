/**
 * Credential vending (`POST /api/v1/temporary-table-credentials`) through the real HTTP app with
 * IAM authentication, the catalog in dynalite and the table in s3rver. STS is a small in-test
 * HTTP server speaking the STS Query API, so the real SDK client signs and sends a real
 * AssumeRole request and parses a real XML answer.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import {
  readSessionPolicy,
  readWriteSessionPolicy,
  StsTableCredentials,
  sessionName,
} from "../lib/auth/credentials.ts";
import { createStsClient } from "../lib/aws-clients.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

const ALICE = "arn:aws:iam::123456789012:user/alice";
const BOB = "arn:aws:iam::123456789012:user/bob";
const ROLE_ARN = "arn:aws:iam::123456789012:role/silt-table-access";
const WRITE_ROLE_ARN = "arn:aws:iam::123456789012:role/silt-table-write";
const EXPIRATION = "2026-11-29T18:00:00Z";

describe("the session policies", () => {
  it("lets the role read and list one table's prefix and nothing else", () => {
    expect(readSessionPolicy("aws", "data", "pre/tables/7f0c/")).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "ReadTableObjects",
          Effect: "Allow",
          Action: "s3:GetObject",
          Resource: "arn:aws:s3:::data/pre/tables/7f0c/*",
        },
        {
          Sid: "ListTableObjects",
          Effect: "Allow",
          Action: "s3:ListBucket",
          Resource: "arn:aws:s3:::data",
          Condition: { StringLike: { "s3:prefix": ["pre/tables/7f0c", "pre/tables/7f0c/*"] } },
        },
      ],
    });
  });

  it("lets the write role read, put and list one table's prefix, delete nothing, and overwrite no published log entry", () => {
    expect(readWriteSessionPolicy("aws-cn", "data", "pre/tables/7f0c")).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "ReadWriteTableObjects",
          Effect: "Allow",
          Action: ["s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"],
          Resource: "arn:aws-cn:s3:::data/pre/tables/7f0c/*",
        },
        {
          Sid: "ListTableObjects",
          Effect: "Allow",
          Action: "s3:ListBucket",
          Resource: "arn:aws-cn:s3:::data",
          Condition: { StringLike: { "s3:prefix": ["pre/tables/7f0c", "pre/tables/7f0c/*"] } },
        },
        {
          Sid: "CreateOnlyPublishedLog",
          Effect: "Deny",
          Action: "s3:PutObject",
          Resource: "arn:aws-cn:s3:::data/pre/tables/7f0c/_delta_log/0*",
          Condition: { Null: { "s3:if-none-match": "true" } },
        },
      ],
    });
  });

  it("names the session after the caller in the characters STS allows", () => {
    expect(sessionName(BOB)).toBe("silt-arn-aws-iam--123456789012-user-bob");
    expect(sessionName("x".repeat(100))).toHaveLength(64);
  });
});

describe("POST /api/v1/temporary-table-credentials", () => {
  let silt: SiltHarness;
  let sts: Server;
  const assumed: URLSearchParams[] = [];
  let app: ReturnType<typeof createApp>;
  let readOnlyApp: ReturnType<typeof createApp>;
  let bucket: string;
  let prefix: string;
  let tableId: string;

  const call = async (principal: string, body: unknown, via = app) => {
    const res = await via.request(
      "http://silt.test/api/v1/temporary-table-credentials",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      },
      { event: { requestContext: { authorizer: { iam: { userArn: principal } } } } },
    );
    // biome-ignore lint/suspicious/noExplicitAny: inspected field by field.
    return { status: res.status, body: (await res.json()) as any };
  };
  const sql = async (statement: string) => {
    const res = await app.request(
      "http://silt.test/api/v1/sql",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ statement }),
      },
      { event: { requestContext: { authorizer: { iam: { userArn: ALICE } } } } },
    );
    expect(res.status, statement).toBe(200);
  };

  beforeAll(async () => {
    sts = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        const params = new URLSearchParams(body);
        assumed.push(params);
        res.writeHead(200, { "content-type": "text/xml" });
        res.end(
          `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <Credentials>
      <AccessKeyId>ASIAEXAMPLE${assumed.length}</AccessKeyId>
      <SecretAccessKey>secret-${assumed.length}</SecretAccessKey>
      <SessionToken>token-${assumed.length}</SessionToken>
      <Expiration>${EXPIRATION}</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/silt-table-access/${params.get("RoleSessionName")}</Arn>
      <AssumedRoleId>AROAEXAMPLE:${params.get("RoleSessionName")}</AssumedRoleId>
    </AssumedRoleUser>
    <PackedPolicySize>9</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>req-${assumed.length}</RequestId></ResponseMetadata>
</AssumeRoleResponse>`,
        );
      });
    });
    await new Promise<void>((resolve) => sts.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(sts.address() as AddressInfo).port}`;

    silt = await startSilt("s3");
    const root = new URL(silt.ctx.storageRootUri);
    bucket = root.host;
    prefix = root.pathname.slice(1);
    const tableCredentials = new StsTableCredentials({
      client: createStsClient({ endpoint, region: "us-east-1" }),
      roleArn: ROLE_ARN,
      writeRoleArn: WRITE_ROLE_ARN,
      bucket,
      prefix,
    });
    app = createApp({ ...silt.ctx, tableCredentials }, { auth: "iam" });
    // The same deployment before it had a table-write role: READ only.
    readOnlyApp = createApp(
      {
        ...silt.ctx,
        tableCredentials: new StsTableCredentials({
          client: createStsClient({ endpoint, region: "us-east-1" }),
          roleArn: ROLE_ARN,
          bucket,
          prefix,
        }),
      },
      { auth: "iam" },
    );
    for (const statement of [
      "CREATE CATALOG lake",
      "CREATE SCHEMA lake.raw",
      "CREATE TABLE lake.raw.events (id INT) USING DELTA",
      "INSERT INTO lake.raw.events VALUES (1)",
      `GRANT USE CATALOG ON CATALOG lake TO \`${BOB}\``,
      `GRANT USE SCHEMA ON SCHEMA lake.raw TO \`${BOB}\``,
    ]) {
      await sql(statement);
    }
    tableId = (await silt.ctx.catalog.getTable("lake", "raw", "events")).tableId;
  }, 60_000);

  afterAll(async () => {
    await silt.close();
    await new Promise((resolve) => sts.close(resolve));
  });

  it("refuses a caller without SELECT, asking STS for nothing", async () => {
    const res = await call(BOB, { table_name: "lake.raw.events", operation: "READ" });
    expect(res.status).toBe(403);
    expect(res.body.error_class).toBe("INSUFFICIENT_PERMISSIONS");
    expect(res.body.message).toContain("does not have SELECT on Table 'lake.raw.events'");
    expect(assumed).toHaveLength(0);
  });

  it("vends READ credentials scoped to the table's prefix for one hour", async () => {
    await sql(`GRANT SELECT ON TABLE lake.raw.events TO \`${BOB}\``);
    const res = await call(BOB, { table_name: "lake.raw.events", operation: "READ" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      aws_temp_credentials: {
        access_key_id: "ASIAEXAMPLE1",
        secret_access_key: "secret-1",
        session_token: "token-1",
      },
      expiration_time: Date.parse(EXPIRATION),
      url: `s3://${bucket}/${prefix}tables/${tableId}`,
    });
    const request = assumed[0];
    expect(request.get("Action")).toBe("AssumeRole");
    expect(request.get("Version")).toBe("2011-06-15");
    expect(request.get("RoleArn")).toBe(ROLE_ARN);
    expect(request.get("RoleSessionName")).toBe("silt-arn-aws-iam--123456789012-user-bob");
    expect(request.get("DurationSeconds")).toBe("3600");
    expect(JSON.parse(request.get("Policy") ?? "")).toEqual(
      readSessionPolicy("aws", bucket, `${prefix}tables/${tableId}/`),
    );
  });

  it("finds the table by id as Unity Catalog's clients name it", async () => {
    const res = await call(BOB, { table_id: tableId, operation: "READ" });
    expect(res.status).toBe(200);
    expect(res.body.aws_temp_credentials.access_key_id).toBe("ASIAEXAMPLE2");
  });

  it("vends READ_WRITE credentials of the write role, scoped to the table, to callers with MODIFY", async () => {
    const calls = assumed.length;
    const noModify = await call(BOB, { table_id: tableId, operation: "READ_WRITE" });
    expect(noModify.status).toBe(403);
    expect(noModify.body.error_class).toBe("INSUFFICIENT_PERMISSIONS");
    expect(noModify.body.message).toContain("does not have MODIFY on Table 'lake.raw.events'");
    expect(assumed).toHaveLength(calls);
    await sql(`GRANT MODIFY ON TABLE lake.raw.events TO \`${BOB}\``);
    const res = await call(BOB, { table_id: tableId, operation: "READ_WRITE" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const n = calls + 1;
    expect(res.body).toEqual({
      aws_temp_credentials: {
        access_key_id: `ASIAEXAMPLE${n}`,
        secret_access_key: `secret-${n}`,
        session_token: `token-${n}`,
      },
      expiration_time: Date.parse(EXPIRATION),
      url: `s3://${bucket}/${prefix}tables/${tableId}`,
    });
    expect(assumed).toHaveLength(n);
    const request = assumed[calls];
    expect(request.get("Action")).toBe("AssumeRole");
    expect(request.get("RoleArn")).toBe(WRITE_ROLE_ARN);
    expect(request.get("RoleSessionName")).toBe("silt-arn-aws-iam--123456789012-user-bob");
    expect(request.get("DurationSeconds")).toBe("3600");
    // Exactly this policy: put, read and list this table's prefix, delete nothing anywhere,
    // create but never overwrite the published log.
    const dir = `${prefix}tables/${tableId}`;
    expect(JSON.parse(request.get("Policy") ?? "")).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "ReadWriteTableObjects",
          Effect: "Allow",
          Action: ["s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"],
          Resource: `arn:aws:s3:::${bucket}/${dir}/*`,
        },
        {
          Sid: "ListTableObjects",
          Effect: "Allow",
          Action: "s3:ListBucket",
          Resource: `arn:aws:s3:::${bucket}`,
          Condition: { StringLike: { "s3:prefix": [dir, `${dir}/*`] } },
        },
        {
          Sid: "CreateOnlyPublishedLog",
          Effect: "Deny",
          Action: "s3:PutObject",
          Resource: `arn:aws:s3:::${bucket}/${dir}/_delta_log/0*`,
          Condition: { Null: { "s3:if-none-match": "true" } },
        },
      ],
    });
    // READ still assumes the read-only role.
    const read = await call(BOB, { table_id: tableId, operation: "READ" });
    expect(read.status).toBe(200);
    expect(assumed[n].get("RoleArn")).toBe(ROLE_ARN);
  });

  it("answers READ_WRITE through the Delta API's credentials and staging routes", async () => {
    const UC = "http://silt.test/api/2.1/unity-catalog";
    const uc = async (method: string, path: string, body?: unknown) => {
      const res = await app.request(
        `${UC}${path}`,
        {
          method,
          headers: { "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        },
        { event: { requestContext: { authorizer: { iam: { userArn: ALICE } } } } },
      );
      // biome-ignore lint/suspicious/noExplicitAny: inspected field by field.
      return { status: res.status, body: (await res.json()) as any };
    };
    const calls = assumed.length;
    const creds = await uc(
      "GET",
      "/delta/v1/catalogs/lake/schemas/raw/tables/events/credentials?operation=READ_WRITE",
    );
    expect(creds.status, JSON.stringify(creds.body)).toBe(200);
    expect(creds.body["storage-credentials"]).toEqual([
      {
        prefix: `s3://${bucket}/${prefix}tables/${tableId}`,
        operation: "READ_WRITE",
        config: {
          "s3.access-key-id": `ASIAEXAMPLE${calls + 1}`,
          "s3.secret-access-key": `secret-${calls + 1}`,
          "s3.session-token": `token-${calls + 1}`,
        },
        "expiration-time-ms": Date.parse(EXPIRATION),
      },
    ]);
    expect(assumed[calls].get("RoleArn")).toBe(WRITE_ROLE_ARN);
    // A staging table: its first version is written with the write role, scoped to its id.
    const staged = await uc("POST", "/delta/v1/catalogs/lake/schemas/raw/staging-tables", {
      name: "staged",
    });
    expect(staged.status, JSON.stringify(staged.body)).toBe(200);
    const [stagedCreds] = staged.body["storage-credentials"];
    expect(stagedCreds).toMatchObject({ operation: "READ_WRITE", prefix: staged.body.location });
    const stagedRequest = assumed[calls + 1];
    expect(stagedRequest.get("RoleArn")).toBe(WRITE_ROLE_ARN);
    expect(JSON.parse(stagedRequest.get("Policy") ?? "")).toEqual(
      readWriteSessionPolicy("aws", bucket, `${prefix}tables/${staged.body["table-id"]}/`),
    );
    const again = await uc(
      "GET",
      `/delta/v1/staging-tables/${staged.body["table-id"]}/credentials`,
    );
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body["storage-credentials"]).toMatchObject([
      { operation: "READ_WRITE", prefix: staged.body.location },
    ]);
    expect(assumed[calls + 2].get("RoleArn")).toBe(WRITE_ROLE_ARN);
    // The legacy API's temporary-table-credentials for the staging id, as Spark asks in that mode.
    const legacy = await uc("POST", "/temporary-table-credentials", {
      table_id: staged.body["table-id"],
      operation: "READ_WRITE",
    });
    expect(legacy.status, JSON.stringify(legacy.body)).toBe(200);
    expect(legacy.body).toMatchObject({
      aws_temp_credentials: { access_key_id: `ASIAEXAMPLE${calls + 4}` },
      url: staged.body.location,
    });
    expect(assumed[calls + 3].get("RoleArn")).toBe(WRITE_ROLE_ARN);
    expect(JSON.parse(assumed[calls + 3].get("Policy") ?? "")).toEqual(
      readWriteSessionPolicy("aws", bucket, `${prefix}tables/${staged.body["table-id"]}/`),
    );
  });

  it("says READ_WRITE vending is not configured where the deployment has no table-write role", async () => {
    const calls = assumed.length;
    const res = await call(BOB, { table_id: tableId, operation: "READ_WRITE" }, readOnlyApp);
    expect(res.status).toBe(501);
    expect(res.body.error_class).toBe("CREDENTIAL_VENDING_NOT_CONFIGURED");
    expect(res.body.message).toContain("SILT_TABLE_WRITE_ROLE_ARN");
    expect(res.body.message).toContain("Request READ credentials");
    expect(assumed).toHaveLength(calls);
    // READ still works there.
    const read = await call(BOB, { table_id: tableId, operation: "READ" }, readOnlyApp);
    expect(read.status).toBe(200);
    expect(assumed[calls].get("RoleArn")).toBe(ROLE_ARN);
  });

  it("answers bad requests with what to fix", async () => {
    const cases: [unknown, number, string][] = [
      [{ table_name: "lake.raw.events", operation: "WRITE" }, 400, "INVALID_PARAMETER_VALUE"],
      [{ operation: "READ" }, 400, "INVALID_PARAMETER_VALUE"],
      [
        { table_id: tableId, table_name: "lake.raw.events", operation: "READ" },
        400,
        "INVALID_PARAMETER_VALUE",
      ],
      [
        { table_id: "00000000-0000-0000-0000-000000000000", operation: "READ" },
        404,
        "TABLE_OR_VIEW_NOT_FOUND",
      ],
      [[], 400, "INVALID_REQUEST"],
    ];
    const calls = assumed.length;
    for (const [body, status, errorClass] of cases) {
      const res = await call(BOB, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error_class).toBe(errorClass);
    }
    expect(assumed).toHaveLength(calls);
  });

  it("says vending is not configured where an S3 deployment has no table-access role", async () => {
    const res = await silt.call("POST", "/api/v1/temporary-table-credentials", {
      table_name: "lake.raw.events",
      operation: "READ",
    });
    expect(res.status).toBe(501);
    expect(res.body.error_class).toBe("CREDENTIAL_VENDING_NOT_CONFIGURED");
  });
});

describe("credential vending on a local directory", () => {
  let silt: SiltHarness;
  beforeAll(async () => {
    silt = await startSilt("local");
    for (const statement of [
      "CREATE CATALOG c",
      "CREATE SCHEMA c.s",
      "CREATE TABLE c.s.t (id INT) USING DELTA",
    ]) {
      expect((await silt.call("POST", "/api/v1/sql", { statement })).status).toBe(200);
    }
  });
  afterAll(() => silt.close());

  it("answers the table's file:// URL and no credentials", async () => {
    const res = await silt.call("POST", "/api/v1/temporary-table-credentials", {
      table_name: "c.s.t",
      operation: "READ",
    });
    const { tableId } = await silt.ctx.catalog.getTable("c", "s", "t");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      aws_temp_credentials: null,
      expiration_time: null,
      url: `${silt.ctx.storageRootUri.replace(/\/$/, "")}/tables/${tableId}`,
    });
    expect(res.body.url).toMatch(/^file:\/\//);
  });
});
