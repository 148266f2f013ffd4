/**
 * Authorization through the real HTTP app with IAM authentication: each request's principal comes
 * from an API Gateway payload v2 authorizer context (as hono/aws-lambda hands it to the app), the
 * grants live in dynalite, and every refused request is checked to have changed nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import { REPLAYED_HEADER } from "../lib/api/idempotency.ts";
import { parseAuthMode, principalOf } from "../lib/auth/principal.ts";
import {
  ACCOUNT_USERS,
  effectivePrivileges,
  type Level,
  parsePrivilege,
} from "../lib/auth/privileges.ts";
import type { SiltContext } from "../lib/context.ts";
import { silentLogger } from "../lib/logger.ts";
import { buildContext } from "../lib/runtime/context-factory.ts";
import { parseStatement } from "../lib/sql/statement-parser.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import { type DynamoHandle, startDynamo } from "./helpers/dynamo-emulator.ts";

const ALICE = "arn:aws:iam::123456789012:user/alice";
const BOB = "arn:aws:iam::123456789012:user/bob";
const CAROL = "arn:aws:iam::123456789012:user/carol";

let dynamo: DynamoHandle;
let dir: string;
let ctx: SiltContext;
let app: ReturnType<typeof createApp>;

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field.
  body: any;
}

/** A request as API Gateway's IAM authorizer passes it on; no principal = unsigned. */
async function call(
  principal: string | undefined,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const authorizer = principal === undefined ? undefined : { iam: { userArn: principal } };
  const res = await app.request(
    `http://silt.test${url}`,
    {
      method,
      headers: { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    },
    { event: { requestContext: { authorizer } } },
  );
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === "" ? undefined : JSON.parse(text),
  };
}

const sql = (principal: string, statement: string) =>
  call(principal, "POST", "/api/v1/sql", { statement });

async function ok(principal: string, statement: string) {
  const res = await sql(principal, statement);
  expect(res.status, `${statement}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as { columns: { name: string }[]; rows: unknown[][] };
}

/** What the table holds, read as its owner: version and rows. */
async function state(table: string) {
  const hist = await ok(ALICE, `DESCRIBE HISTORY ${table}`);
  return {
    version: hist.rows[0][0],
    rows: (await ok(ALICE, `SELECT * FROM ${table} ORDER BY 1`)).rows,
  };
}

/** A refused request: its class and status, and the table as it was. */
async function refused(
  table: string,
  status: number,
  errorClass: string,
  run: () => Promise<Answer>,
): Promise<string> {
  const before = await state(table);
  const res = await run();
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error_class).toBe(errorClass);
  expect(await state(table)).toEqual(before);
  return res.body.message as string;
}

beforeAll(async () => {
  dynamo = await startDynamo();
  dir = await mkdtemp(path.join(os.tmpdir(), "silt-auth-"));
  ctx = await buildContext({
    store: new LocalObjectStore(dir),
    storageRootUri: pathToFileURL(dir).href,
    dynamo: dynamo.client,
    commitsTable: dynamo.tableName("auth_commits"),
    catalogTable: dynamo.tableName("auth_catalog"),
    idempotencyTable: dynamo.tableName("auth_idempotency"),
    logger: silentLogger,
    principal: "silt",
    ensureTables: true,
  });
  app = createApp(ctx, { auth: "iam" });
  for (const statement of [
    "CREATE CATALOG sales",
    "CREATE SCHEMA sales.eu",
    "CREATE TABLE sales.eu.orders (id INT, amount INT) USING DELTA",
    "INSERT INTO sales.eu.orders VALUES (1, 10), (2, 20)",
    "CREATE TABLE sales.eu.secret (id INT) USING DELTA",
  ]) {
    await ok(ALICE, statement);
  }
});

afterAll(async () => {
  await dynamo.close();
  await rm(dir, { recursive: true, force: true });
});

describe("privilege rules", () => {
  const level = (
    type: Level["type"],
    owner: string,
    granted: string[] = [],
    fullName = type,
  ): Level => ({ type, fullName, owner, granted: new Set(granted) });

  it("give owners every privilege on what they own, but not on what their containers hold", () => {
    const path = [level("catalog", "cat-owner"), level("schema", "sch-owner"), level("table", "t")];
    expect([...effectivePrivileges("t", path)].sort()).toEqual(["MODIFY", "SELECT"]);
    expect([...effectivePrivileges("sch-owner", path)]).toEqual([]);
    expect([...effectivePrivileges("sch-owner", path.slice(0, 2))].sort()).toEqual([
      "CREATE TABLE",
      "MODIFY",
      "SELECT",
      "USE SCHEMA",
    ]);
  });

  it("let grants on a catalog or schema reach the objects inside, ALL PRIVILEGES expanded", () => {
    const path = [
      level("catalog", "o", ["USE CATALOG", "CREATE SCHEMA"]),
      level("schema", "o", ["SELECT"]),
      level("table", "o"),
    ];
    // USE CATALOG and CREATE SCHEMA do not apply to a table; SELECT on the schema does.
    expect([...effectivePrivileges("x", path)]).toEqual(["SELECT"]);
    const all = [
      level("catalog", "o", ["ALL PRIVILEGES"]),
      level("schema", "o"),
      level("table", "o"),
    ];
    expect([...effectivePrivileges("x", all)].sort()).toEqual(["MODIFY", "SELECT"]);
    expect([...effectivePrivileges("x", all.slice(0, 1))]).toHaveLength(6);
    // ALL PRIVILEGES on a table stops at the table's privileges.
    expect([...effectivePrivileges("x", [level("table", "o", ["ALL PRIVILEGES"])])].sort()).toEqual(
      ["MODIFY", "SELECT"],
    );
  });

  it("parse privileges as SQL and the REST API name them, refusing unknown or misplaced ones", () => {
    expect(parsePrivilege("use_catalog", "catalog", "c")).toBe("USE CATALOG");
    expect(parsePrivilege("all", "table", "c.s.t")).toBe("ALL PRIVILEGES");
    expect(parsePrivilege("ALL_PRIVILEGES", "schema", "c.s")).toBe("ALL PRIVILEGES");
    expect(() => parsePrivilege("USE CATALOG", "table", "c.s.t")).toThrow(
      "Privilege USE CATALOG is not applicable to Table 'c.s.t'",
    );
    expect(() => parsePrivilege("DANCE", "table", "c.s.t")).toThrow("Unknown privilege");
  });

  it("parse GRANT, REVOKE and SHOW GRANTS", () => {
    expect(parseStatement("GRANT SELECT, MODIFY ON TABLE a.b.c TO `alice@x.com`")).toMatchObject({
      kind: "grant",
      revoke: false,
      privileges: ["SELECT", "MODIFY"],
      on: { type: "table", name: ["a", "b", "c"] },
      principal: "alice@x.com",
    });
    expect(parseStatement("revoke all privileges on schema x.y from bob")).toMatchObject({
      kind: "grant",
      revoke: true,
      privileges: ["ALL PRIVILEGES"],
      on: { type: "schema", name: ["x", "y"] },
      principal: "bob",
    });
    expect(parseStatement("GRANT USE CATALOG ON CATALOG TO `account users`")).toMatchObject({
      on: { type: "catalog", name: [] },
      principal: "account users",
    });
    expect(parseStatement("SHOW GRANTS `bob` ON t")).toMatchObject({
      kind: "showGrants",
      principal: "bob",
      on: { type: "table", name: ["t"] },
    });
    // A table that happens to be in a catalog called `catalog`.
    expect(parseStatement("SHOW GRANT ON catalog.s.t")).toMatchObject({
      on: { type: "table", name: ["catalog", "s", "t"] },
    });
    expect(() => parseStatement("GRANT ON TABLE t TO bob")).toThrow("Syntax error at or near 'ON'");
  });
});

describe("authentication", () => {
  it("refuses a request without an authenticated caller with 401, doing nothing", async () => {
    const message = await refused("sales.eu.orders", 401, "UNAUTHENTICATED", () =>
      call(undefined, "POST", "/api/v1/tables/sales.eu.orders/insert", { rows: [[3, 30]] }),
    );
    expect(message).toContain("Signature Version 4");
    expect((await call(undefined, "GET", "/api/v1/catalogs")).status).toBe(401);
  });

  it("reads the caller from the IAM or JWT authorizer context of a payload v2 event", () => {
    const iam = { requestContext: { authorizer: { iam: { userArn: ALICE, accountId: "1" } } } };
    const jwt = {
      requestContext: { authorizer: { jwt: { claims: { sub: "u-1" }, scopes: null } } },
    };
    expect(principalOf("iam", iam)).toBe(ALICE);
    expect(principalOf("jwt", jwt)).toBe("u-1");
    expect(principalOf("jwt", iam)).toBeUndefined();
    expect(principalOf("iam", { requestContext: {} })).toBeUndefined();
    expect(principalOf("iam", undefined)).toBeUndefined();
    expect(parseAuthMode("jwt")).toBe("jwt");
    expect(() => parseAuthMode(undefined)).toThrow("SILT_AUTH must be one of none, iam, jwt");
  });

  it("answers health without a caller", async () => {
    const res = await call(undefined, "GET", "/api/v1/health");
    expect([res.status, res.body]).toEqual([200, { status: "ok" }]);
  });
});

describe("table privileges", () => {
  it("reveal nothing inside a catalog to a caller without USE CATALOG", async () => {
    const message = await refused("sales.eu.orders", 403, "INSUFFICIENT_PERMISSIONS", () =>
      call(BOB, "GET", "/api/v1/tables/sales.eu.orders/rows"),
    );
    expect(message).toBe(
      `Insufficient privileges: User ${BOB} does not have USE CATALOG on Catalog 'sales'. Ask ` +
        `its owner to run: GRANT USE CATALOG ON CATALOG sales TO \`${BOB}\`.`,
    );
    // A missing schema or table answers the same as an existing one.
    for (const name of ["sales.nope.orders", "sales.eu.nope"]) {
      const res = await call(BOB, "GET", `/api/v1/tables/${name}/rows`);
      expect(res.status).toBe(403);
      expect(res.body.message).toContain("USE CATALOG on Catalog 'sales'");
    }
    // The catalog itself is no secret (anyone may create catalogs).
    expect((await call(BOB, "GET", "/api/v1/tables/nope.eu.orders/rows")).body.error_class).toBe(
      "CATALOG_NOT_FOUND",
    );
  });

  it("need USE SCHEMA next, and only then name a missing table", async () => {
    await ok(ALICE, `GRANT USE CATALOG ON CATALOG sales TO \`${BOB}\``);
    const res = await call(BOB, "GET", "/api/v1/tables/sales.eu.orders/rows");
    expect(res.body.message).toContain("does not have USE SCHEMA on Schema 'sales.eu'");
    expect((await call(BOB, "GET", "/api/v1/tables/sales.nope.t/rows")).body.error_class).toBe(
      "SCHEMA_NOT_FOUND",
    );
    await ok(ALICE, `GRANT USE SCHEMA ON SCHEMA sales.eu TO \`${BOB}\``);
    const noSelect = await call(BOB, "GET", "/api/v1/tables/sales.eu.orders/rows");
    expect(noSelect.status).toBe(403);
    expect(noSelect.body).toMatchObject({
      error_class: "INSUFFICIENT_PERMISSIONS",
      sqlstate: "42501",
    });
    expect(noSelect.body.message).toContain(
      `User ${BOB} does not have SELECT on Table 'sales.eu.orders'.`,
    );
    expect((await call(BOB, "GET", "/api/v1/tables/sales.eu.nope/rows")).body.error_class).toBe(
      "TABLE_OR_VIEW_NOT_FOUND",
    );
  });

  it("let SELECT on the schema read its tables, and nothing more", async () => {
    await ok(ALICE, `GRANT SELECT ON SCHEMA sales.eu TO \`${BOB}\``);
    expect((await ok(BOB, "SELECT id FROM sales.eu.orders ORDER BY id")).rows).toEqual([[1], [2]]);
    expect((await call(BOB, "GET", "/api/v1/tables/sales.eu.orders/history")).status).toBe(200);
    expect((await ok(BOB, "SELECT * FROM sales.eu.orders VERSION AS OF 1")).rows).toHaveLength(2);
    for (const write of [
      () => call(BOB, "POST", "/api/v1/tables/sales.eu.orders/insert", { rows: [[3, 30]] }),
      () => sql(BOB, "INSERT INTO sales.eu.orders VALUES (3, 30)"),
      () => sql(BOB, "DELETE FROM sales.eu.orders WHERE id = 1"),
      () => sql(BOB, "OPTIMIZE sales.eu.orders"),
      () => sql(BOB, "RESTORE TABLE sales.eu.orders TO VERSION AS OF 1"),
    ]) {
      const message = await refused("sales.eu.orders", 403, "INSUFFICIENT_PERMISSIONS", write);
      expect(message).toContain("does not have MODIFY on Table 'sales.eu.orders'");
    }
  });

  it("need MODIFY to write and SELECT too to change rows it reads", async () => {
    await ok(ALICE, `GRANT MODIFY ON TABLE sales.eu.orders TO \`${BOB}\``);
    await ok(BOB, "INSERT INTO sales.eu.orders VALUES (3, 30)");
    await ok(BOB, "UPDATE sales.eu.orders SET amount = 31 WHERE id = 3");
    await ok(ALICE, `REVOKE SELECT ON SCHEMA sales.eu FROM \`${BOB}\``);
    for (const change of [
      () => sql(BOB, "UPDATE sales.eu.orders SET amount = 0"),
      () => sql(BOB, "DELETE FROM sales.eu.orders WHERE id = 3"),
      () =>
        sql(
          BOB,
          "MERGE INTO sales.eu.orders t USING (SELECT 9 AS id, 90 AS amount) s ON t.id = s.id " +
            "WHEN NOT MATCHED THEN INSERT *",
        ),
      () => sql(BOB, "INSERT INTO sales.eu.orders REPLACE WHERE id = 3 VALUES (3, 0)"),
    ]) {
      const message = await refused("sales.eu.orders", 403, "INSUFFICIENT_PERMISSIONS", change);
      expect(message).toContain("does not have SELECT on Table 'sales.eu.orders'");
    }
    // Appending and overwriting read no rows: MODIFY is enough.
    await ok(BOB, "INSERT INTO sales.eu.orders VALUES (4, 40)");
    expect((await state("sales.eu.orders")).rows).toEqual([
      [1, 10],
      [2, 20],
      [3, 31],
      [4, 40],
    ]);
  });

  it("need SELECT on a source table that a write reads", async () => {
    // BOB may write orders but not read secret.
    for (const statement of [
      "INSERT INTO sales.eu.orders SELECT id, id FROM sales.eu.secret",
      "MERGE INTO sales.eu.orders t USING sales.eu.secret s ON t.id = s.id " +
        "WHEN NOT MATCHED THEN INSERT (id, amount) VALUES (s.id, 0)",
    ]) {
      await ok(ALICE, `GRANT SELECT ON TABLE sales.eu.orders TO \`${BOB}\``);
      const message = await refused("sales.eu.orders", 403, "INSUFFICIENT_PERMISSIONS", () =>
        sql(BOB, statement),
      );
      expect(message).toContain("does not have SELECT on Table 'sales.eu.secret'");
    }
    // Objects staged in another table's ingest folder are that table's data on its way in.
    await ctx.store.put(
      "ingest/sales/eu/secret/staged.ndjson",
      new TextEncoder().encode('{"id": 5, "amount": 50}\n'),
    );
    const merge = (key: string) => () =>
      call(BOB, "POST", "/api/v1/tables/sales.eu.orders/merge", {
        source: { json: key },
        on: "target.id = source.id",
        whenNotMatched: { insertAll: true },
      });
    const staged = await refused(
      "sales.eu.orders",
      403,
      "INSUFFICIENT_PERMISSIONS",
      merge("ingest/sales/eu/secret/staged.ndjson"),
    );
    expect(staged).toContain("does not have SELECT on Table 'sales.eu.secret'");
    await ctx.store.put(
      "ingest/loose.ndjson",
      new TextEncoder().encode('{"id": 5, "amount": 50}\n'),
    );
    expect((await merge("ingest/loose.ndjson")()).status).toBe(200);
    await ok(ALICE, "DELETE FROM sales.eu.orders WHERE id = 5");
    const ctas = await sql(
      BOB,
      "CREATE TABLE sales.eu.copy USING DELTA AS SELECT * FROM sales.eu.secret",
    );
    expect(ctas.status, JSON.stringify(ctas.body)).toBe(403);
    // Refused before its query runs.
    expect(ctas.body.message).toContain("does not have CREATE TABLE on Schema 'sales.eu'");
  });

  it("let only owners of the table or its containers drop or replace it", async () => {
    for (const statement of [
      "DROP TABLE sales.eu.orders",
      "CREATE OR REPLACE TABLE sales.eu.orders (id INT) USING DELTA",
      "ALTER TABLE sales.eu.orders RENAME TO orders2",
    ]) {
      const message = await refused("sales.eu.orders", 403, "INSUFFICIENT_PERMISSIONS", () =>
        sql(BOB, statement),
      );
      expect(message).toContain(`User ${BOB} is not an owner of Table 'sales.eu.orders'`);
    }
    expect((await call(BOB, "DELETE", "/api/v1/tables/sales.eu.orders")).status).toBe(403);
    expect((await call(BOB, "DELETE", "/api/v1/tables/sales.eu.orders?ifExists=true")).status).toBe(
      403,
    );
  });
});

describe("creating, listing and dropping", () => {
  it("needs CREATE TABLE on the schema, and makes the creator the owner", async () => {
    const denied = await sql(CAROL, "CREATE TABLE sales.eu.carol (id INT) USING DELTA");
    expect(denied.body.message).toContain("USE CATALOG on Catalog 'sales'");
    await ok(ALICE, `GRANT USE CATALOG ON CATALOG sales TO \`${CAROL}\``);
    await ok(ALICE, `GRANT USE SCHEMA ON SCHEMA sales.eu TO \`${CAROL}\``);
    const noCreate = await sql(CAROL, "CREATE TABLE sales.eu.carol (id INT) USING DELTA");
    expect(noCreate.status).toBe(403);
    expect(noCreate.body.message).toContain("does not have CREATE TABLE on Schema 'sales.eu'");
    // CREATE TABLE granted on the catalog reaches every schema in it.
    await ok(ALICE, `GRANT CREATE TABLE ON CATALOG sales TO \`${CAROL}\``);
    await ok(CAROL, "CREATE TABLE sales.eu.carol (id INT) USING DELTA");
    await ok(CAROL, "INSERT INTO sales.eu.carol VALUES (7)");
    expect((await ok(CAROL, "SELECT * FROM sales.eu.carol")).rows).toEqual([[7]]);
    // The schema's owner does not read a table it does not own, but may drop it.
    expect((await sql(ALICE, "SELECT * FROM sales.eu.carol")).status).toBe(403);
    await ok(CAROL, `GRANT SELECT ON TABLE sales.eu.carol TO \`${BOB}\``);
    const { tableId } = await ctx.catalog.getTable("sales", "eu", "carol");
    expect((await ctx.grants.grantsOn(tableId)).get(BOB)).toEqual(new Set(["SELECT"]));
    // A renamed table keeps its grants: they belong to the table, not its name.
    await ok(CAROL, "ALTER TABLE sales.eu.carol RENAME TO carol2");
    expect((await ok(BOB, "SELECT * FROM sales.eu.carol2")).rows).toEqual([[7]]);
    expect((await sql(BOB, "SELECT * FROM sales.eu.carol")).status).toBe(404);
    await ok(CAROL, "ALTER TABLE sales.eu.carol2 RENAME TO carol");
    await ok(ALICE, "DROP TABLE sales.eu.carol");
    expect((await ctx.grants.grantsOn(tableId)).size).toBe(0);
  });

  it("needs CREATE SCHEMA on the catalog; any caller may create a catalog", async () => {
    const res = await call(CAROL, "POST", "/api/v1/catalogs/sales/schemas", { name: "us" });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("does not have CREATE SCHEMA on Catalog 'sales'");
    expect((await call(CAROL, "POST", "/api/v1/catalogs", { name: "carols" })).status).toBe(201);
    expect(
      (await call(CAROL, "POST", "/api/v1/catalogs/carols/schemas", { name: "s" })).status,
    ).toBe(201);
  });

  it("lists only what the caller owns or holds a privilege on", async () => {
    const names = async (principal: string, url: string, column: string) => {
      const res = await call(principal, "GET", url);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const at = res.body.columns.findIndex((c: { name: string }) => c.name === column);
      return res.body.rows.map((r: unknown[]) => r[at]);
    };
    expect(await names(CAROL, "/api/v1/catalogs", "catalog")).toEqual(["carols", "sales"]);
    expect(await names(ALICE, "/api/v1/catalogs", "catalog")).toEqual(["sales"]);
    expect(await names(BOB, "/api/v1/catalogs/sales/schemas/eu/tables", "tableName")).toEqual([
      "orders",
    ]);
    expect(await names(ALICE, "/api/v1/catalogs/sales/schemas/eu/tables", "tableName")).toEqual([
      "orders",
      "secret",
    ]);
    expect((await ok(BOB, "SHOW TABLES IN sales.eu")).rows).toEqual([["eu", "orders", false]]);
    // Listing a catalog's schemas needs USE CATALOG.
    const res = await call(BOB, "GET", "/api/v1/catalogs/carols/schemas");
    expect(res.status).toBe(403);
  });

  it("drops schemas and catalogs only for their owners, and their grants with them", async () => {
    await ok(CAROL, "CREATE TABLE carols.s.t (id INT) USING DELTA");
    await ok(CAROL, `GRANT SELECT ON TABLE carols.s.t TO \`${BOB}\``);
    await ok(CAROL, `GRANT USE SCHEMA ON SCHEMA carols.s TO \`${BOB}\``);
    await ok(CAROL, `GRANT USE CATALOG ON CATALOG carols TO \`${BOB}\``);
    const ids = await Promise.all([
      ctx.catalog.getCatalog("carols").then((c) => c.id),
      ctx.catalog.getSchema("carols", "s").then((s) => s.id),
      ctx.catalog.getTable("carols", "s", "t").then((t) => t.tableId),
    ]);
    for (const id of ids) expect((await ctx.grants.grantsOn(id)).get(BOB)?.size).toBe(1);
    // Changing a comment or properties is for owners too, through Unity Catalog's PATCH.
    const UC = "/api/2.1/unity-catalog";
    const patch = await call(BOB, "PATCH", `${UC}/schemas/carols.s`, { comment: "bob's" });
    expect([patch.status, patch.body.message]).toEqual([
      403,
      expect.stringContaining("is not an owner of Schema 'carols.s'"),
    ]);
    expect((await ctx.catalog.getSchema("carols", "s")).comment).toBeUndefined();
    expect((await call(CAROL, "PATCH", `${UC}/catalogs/carols`, { comment: "c" })).status).toBe(
      200,
    );
    expect((await sql(BOB, "DROP SCHEMA carols.s CASCADE")).body.message).toContain(
      "is not an owner of Schema 'carols.s'",
    );
    expect((await sql(BOB, "DROP CATALOG carols CASCADE")).status).toBe(403);
    await ok(CAROL, "DROP CATALOG carols CASCADE");
    for (const id of ids) expect((await ctx.grants.grantsOn(id)).size).toBe(0);
  });
});

describe("GRANT, REVOKE and SHOW GRANTS", () => {
  it("show the owner, direct and inherited grants with Databricks' columns", async () => {
    const res = await ok(ALICE, "SHOW GRANTS ON TABLE sales.eu.orders");
    expect(res.columns.map((c) => c.name)).toEqual([
      "principal",
      "actionType",
      "objectType",
      "objectKey",
    ]);
    expect(res.rows).toEqual([
      [ALICE, "OWN", "TABLE", "sales.eu.orders"],
      [BOB, "MODIFY", "TABLE", "sales.eu.orders"],
      [BOB, "SELECT", "TABLE", "sales.eu.orders"],
      [BOB, "USE SCHEMA", "SCHEMA", "sales.eu"],
      [CAROL, "USE SCHEMA", "SCHEMA", "sales.eu"],
      [BOB, "USE CATALOG", "CATALOG", "sales"],
      [CAROL, "USE CATALOG", "CATALOG", "sales"],
      // CAROL's CREATE TABLE on the catalog does not bear on a table.
    ]);
  });

  it("let a caller see its own grants, and only owners everyone's or change them", async () => {
    const own = await ok(BOB, `SHOW GRANTS \`${BOB}\` ON TABLE sales.eu.orders`);
    expect(own.rows.map((r) => r[1])).toEqual(["MODIFY", "SELECT", "USE SCHEMA", "USE CATALOG"]);
    expect((await sql(BOB, "SHOW GRANTS ON TABLE sales.eu.orders")).status).toBe(403);
    const grant = await sql(BOB, `GRANT SELECT ON TABLE sales.eu.secret TO \`${BOB}\``);
    expect(grant.status).toBe(403);
    expect(grant.body.message).toContain("is not an owner of Table 'sales.eu.secret'");
    expect((await ok(ALICE, "SHOW GRANTS ON TABLE sales.eu.secret")).rows).toEqual([
      [ALICE, "OWN", "TABLE", "sales.eu.secret"],
      [BOB, "USE SCHEMA", "SCHEMA", "sales.eu"],
      [CAROL, "USE SCHEMA", "SCHEMA", "sales.eu"],
      [BOB, "USE CATALOG", "CATALOG", "sales"],
      [CAROL, "USE CATALOG", "CATALOG", "sales"],
    ]);
  });

  it("refuse privileges that do not apply, writing nothing", async () => {
    const res = await sql(
      ALICE,
      `GRANT SELECT, USE CATALOG ON TABLE sales.eu.secret TO \`${BOB}\``,
    );
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("INVALID_PARAMETER_VALUE");
    expect((await ok(ALICE, `SHOW GRANTS \`${BOB}\` ON TABLE sales.eu.secret`)).rows).toEqual([
      [BOB, "USE SCHEMA", "SCHEMA", "sales.eu"],
      [BOB, "USE CATALOG", "CATALOG", "sales"],
    ]);
  });

  it("answer Unity Catalog's permissions REST shape", async () => {
    const url = "/api/v1/permissions/table/sales.eu.secret";
    const patched = await call(ALICE, "PATCH", url, {
      changes: [
        { principal: CAROL, add: ["SELECT", "modify"] },
        { principal: ACCOUNT_USERS, add: ["ALL_PRIVILEGES"] },
      ],
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toEqual({
      privilege_assignments: [
        { principal: ACCOUNT_USERS, privileges: ["ALL_PRIVILEGES"] },
        { principal: CAROL, privileges: ["MODIFY", "SELECT"] },
      ],
    });
    // Grants to account users reach every caller.
    expect((await ok(BOB, "SELECT * FROM sales.eu.secret")).rows).toEqual([]);
    await call(ALICE, "PATCH", url, {
      changes: [
        { principal: ACCOUNT_USERS, remove: ["ALL_PRIVILEGES"] },
        { principal: CAROL, remove: ["MODIFY"] },
      ],
    });
    expect((await call(ALICE, "GET", url)).body).toEqual({
      privilege_assignments: [{ principal: CAROL, privileges: ["SELECT"] }],
    });
    expect((await call(CAROL, "GET", `${url}?principal=${encodeURIComponent(CAROL)}`)).status).toBe(
      200,
    );
    expect((await call(CAROL, "GET", url)).status).toBe(403);
    expect(
      (await call(BOB, "PATCH", url, { changes: [{ principal: BOB, add: ["SELECT"] }] })).status,
    ).toBe(403);
    expect((await call(ALICE, "GET", "/api/v1/permissions/volume/a.b.c")).body.error_class).toBe(
      "INVALID_PARAMETER_VALUE",
    );
    expect((await call(ALICE, "GET", "/api/v1/permissions/table/sales.eu")).status).toBe(400);
  });
});

describe("idempotency keys", () => {
  it("are scoped by the authenticated caller: one caller never replays another's answer", async () => {
    const key = { "idempotency-key": "same-key" };
    const insert = (who: string) =>
      call(who, "POST", "/api/v1/tables/sales.eu.secret/insert", { rows: [[1]] }, key);
    expect((await insert(ALICE)).status).toBe(200);
    const before = await state("sales.eu.secret");
    const replay = await insert(ALICE);
    expect(replay.status).toBe(200);
    // CAROL holds SELECT only: her request runs (and is refused) instead of replaying ALICE's.
    const carol = await insert(CAROL);
    expect(carol.status, JSON.stringify(carol.body)).toBe(403);
    expect(carol.body.message).toContain("does not have MODIFY");
    expect(await state("sales.eu.secret")).toEqual(before);
  });

  it("are not applied to credential vending, whose answers are secrets", async () => {
    const vend = () =>
      call(
        ALICE,
        "POST",
        "/api/v1/temporary-table-credentials",
        { table_name: "sales.eu.secret", operation: "READ" },
        { "idempotency-key": "vend-key" },
      );
    for (const res of [await vend(), await vend()]) {
      expect(res.status).toBe(200);
      expect(res.headers.get(REPLAYED_HEADER)).toBeNull();
    }
  });
});
