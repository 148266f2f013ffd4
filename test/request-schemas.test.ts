/**
 * Silt's own API refuses what it does not declare: a misspelt field or query parameter is a 400
 * naming it (and the field it was probably meant to be), and the operation does not run, where
 * ignoring it would run the unconditional one (a DELETE of every row, a real VACUUM). The lenient
 * forms the API documents still pass, and the OpenAPI document generated from the same schemas
 * lists exactly the routes the app serves, as does the README's route table.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

const T = "shop.s.orders";
const API = `/api/v1/tables/${T}`;

let silt: SiltHarness;
beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  const sql = (statement: string) => silt.call("POST", "/api/v1/sql", { statement });
  for (const statement of [
    "CREATE CATALOG shop",
    "CREATE SCHEMA shop.s",
    `CREATE TABLE ${T} (id INT, status STRING) USING DELTA`,
    `INSERT INTO ${T} VALUES (1, 'NEW'), (2, 'NEW')`,
    `INSERT INTO ${T} VALUES (3, 'SHIPPED')`,
  ]) {
    const res = await sql(statement);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
});
afterAll(() => silt.close());

async function state() {
  const res = await silt.call("GET", `${API}/rows`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const rows = [...(res.body.rows as [number, string][])].sort((a, b) => a[0] - b[0]);
  return { version: res.body.version as number, rows };
}

/** The request is refused with `message`, and the table keeps its version and rows. */
async function refusedUnchanged(
  request: () => Promise<{ status: number; body: { error_class: string; message: string } }>,
  message: string,
) {
  const before = await state();
  expect(before.rows).toHaveLength(3);
  const res = await request();
  expect([res.status, res.body.error_class, res.body.message]).toEqual([
    400,
    "INVALID_REQUEST",
    message,
  ]);
  expect(await state()).toEqual(before);
}

describe("an unknown field never widens an operation", () => {
  it("DELETE with `where` instead of `condition` deletes nothing", async () => {
    await refusedUnchanged(
      () => silt.call("POST", `${API}/delete`, { where: "id = 1" }),
      "Unknown field 'where' in the request body. The fields allowed there are: catalog, schema, condition.",
    );
  });

  it("UPDATE with `condtion` updates nothing", async () => {
    await refusedUnchanged(
      () => silt.call("POST", `${API}/update`, { condtion: "id = 1", set: { status: "'PAID'" } }),
      "Unknown field 'condtion' in the request body (did you mean 'condition'?). The fields allowed there are: catalog, schema, condition, set.",
    );
  });

  it("VACUUM with `dry_run` runs no VACUUM", async () => {
    await refusedUnchanged(
      () => silt.call("POST", `${API}/vacuum`, { dry_run: true }),
      "Unknown field 'dry_run' in the request body (did you mean 'dryRun'?). The fields allowed there are: catalog, schema, retainHours, dryRun, mode, conf.",
    );
  });

  it("OPTIMIZE with `zOrderBy` compacts nothing", async () => {
    await refusedUnchanged(
      () => silt.call("POST", `${API}/optimize`, { zOrderBy: ["id"] }),
      "Unknown field 'zOrderBy' in the request body (did you mean 'zorderBy'?). The fields allowed there are: catalog, schema, where, zorderBy, timeBudgetMs.",
    );
  });

  it("a MERGE clause with `conditon` merges nothing, named by its path", async () => {
    await refusedUnchanged(
      () =>
        silt.call("POST", `${API}/merge`, {
          source: { rows: [{ id: 1, status: "PAID" }] },
          on: "target.id = source.id",
          whenMatched: [{ conditon: "source.status = 'X'", updateAll: true }],
        }),
      "Unknown field 'whenMatched[0].conditon' in the request body (did you mean 'condition'?). The fields allowed there are: condition, update, updateAll, delete.",
    );
  });

  it("a merge source with `colums` merges nothing", async () => {
    await refusedUnchanged(
      () =>
        silt.call("POST", `${API}/merge`, {
          source: { rows: [[1, "PAID"]], colums: [{ name: "id", type: "INT" }] },
          on: "target.id = source.id",
          whenMatched: [{ delete: true }],
        }),
      "Unknown field 'source.colums' in the request body (did you mean 'columns'?). The fields allowed there are: rows, columns, arrow, table, version, timestamp, parquet, csv, header, delimiter, json.",
    );
  });

  it("a misspelt query parameter is refused, not read as no limit", async () => {
    const res = await silt.call("GET", `${API}/rows?limt=1`);
    expect([res.status, res.body.error_class, res.body.message]).toEqual([
      400,
      "INVALID_REQUEST",
      "Unknown field 'limt' in the query string (did you mean 'limit'?). The fields allowed there are: catalog, schema, columns, version, timestamp, limit, format, statement_timeout, max_rows, page_token.",
    ]);
  });

  it("a misspelt query parameter of a DROP TABLE drops nothing", async () => {
    await refusedUnchanged(
      () => silt.call("DELETE", `${API}?ifExist=true`),
      "Unknown field 'ifExist' in the query string (did you mean 'ifExists'?). The fields allowed there are: catalog, schema, ifExists.",
    );
  });

  it("with an Arrow body, the other fields come from the query string and are checked there", async () => {
    const rows = arrow.tableFromArrays({
      id: Int32Array.from([9]),
      status: ["X"],
    });
    const body = arrow.tableToIPC(rows, "stream");
    await refusedUnchanged(
      () =>
        silt.call("POST", `${API}/overwrite?dynamicPartitionOverwrit=true`, body, {
          "content-type": "application/vnd.apache.arrow.stream",
        }),
      "Unknown field 'dynamicPartitionOverwrit' in the query string (did you mean 'dynamicPartitionOverwrite'?). The fields allowed there are: catalog, schema, dynamicPartitionOverwrite.",
    );
  });

  it("a field of the right name and the wrong type says what it must be", async () => {
    await refusedUnchanged(
      () => silt.call("POST", `${API}/vacuum`, { dryRun: "yes" }),
      "Field 'dryRun' must be true or false.",
    );
    await refusedUnchanged(
      () => silt.call("POST", `${API}/update`, { set: { status: 1 } }),
      "Field 'set.status' must be a SQL expression string.",
    );
    await refusedUnchanged(
      () => silt.call("POST", `${API}/update`, { condition: "id = 1" }),
      "Field 'set' is required: an object of column name -> SQL expression.",
    );
    await refusedUnchanged(
      () =>
        silt.call("POST", `${API}/merge`, {
          source: { table: 7 },
          on: "target.id = source.id",
          whenMatched: [{ delete: true }],
        }),
      "Field 'source.table' must be a non-empty string.",
    );
    await refusedUnchanged(
      () =>
        silt.call("POST", `${API}/merge`, {
          source: { nothing: true },
          on: "target.id = source.id",
          whenMatched: [{ delete: true }],
        }),
      "Field 'source' must be an object with one of: rows, arrow, table, parquet, csv, json.",
    );
    const res = await silt.call("GET", `${API}/history?limit=0`);
    expect([res.status, res.body.message]).toEqual([400, "Field 'limit' must be an integer >= 1."]);
  });
});

describe("the lenient forms the API documents still pass", () => {
  it("booleans and integers as strings, lists comma-separated, an empty value as absent", async () => {
    const res = await silt.call("GET", `${API}/rows?columns=status,%20id&version=1&limit=`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.columns.map((c: { name: string }) => c.name)).toEqual(["status", "id"]);
    expect(res.body.rows).toHaveLength(2);
    const dry = await silt.call("POST", `${API}/vacuum`, { dryRun: "true", mode: "LITE" });
    expect([dry.status, dry.body.dryRun]).toEqual([200, true]);
    const post = await silt.call("POST", `${API}/rows`, { columns: ["id"], limit: "1" });
    expect([post.status, post.body.rows.length]).toEqual([200, 1]);
  });

  it("null reads as an absent optional field", async () => {
    const res = await silt.call("POST", `${API}/rows`, { version: null, columns: null });
    expect([res.status, res.body.rows.length]).toEqual([200, 3]);
  });
});

describe("the OpenAPI document", () => {
  const documented = async () => {
    const res = await silt.call("GET", "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    return res.body as {
      openapi: string;
      paths: Record<string, Record<string, { parameters: { name: string; in: string }[] }>>;
    };
  };
  const routesOf = (paths: Record<string, object>) =>
    Object.entries(paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    );

  it("lists every /api/v1 route the app serves, and serves every route it lists", async () => {
    const doc = await documented();
    expect(doc.openapi).toBe("3.1.0");
    const served = new Set(
      createApp(silt.ctx)
        .routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/api/v1/"))
        .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`),
    );
    expect(served.size).toBeGreaterThan(25);
    expect(new Set(routesOf(doc.paths))).toEqual(served);
  });

  it("documents the query parameters and body fields the routes take", async () => {
    const doc = await documented();
    const rows = doc.paths["/api/v1/tables/{name}/rows"].get;
    expect(rows.parameters.map((p) => `${p.in} ${p.name}`)).toEqual([
      "path name",
      "query catalog",
      "query schema",
      "query columns",
      "query version",
      "query timestamp",
      "query limit",
      "query format",
      "query statement_timeout",
      "query max_rows",
      "query page_token",
    ]);
    const del = doc.paths["/api/v1/tables/{name}/delete"].post as unknown as {
      requestBody: { content: { "application/json": { schema: Record<string, unknown> } } };
    };
    expect(del.requestBody.content["application/json"].schema).toMatchObject({
      type: "object",
      properties: { condition: { type: ["string", "null"] } },
      additionalProperties: false,
    });
  });

  it("is the README's route table: every row a documented route, every documented route a row", async () => {
    const doc = await documented();
    const readme = readFileSync(path.join(import.meta.dirname, "..", "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## The HTTP API"));
    const table = section.slice(0, section.indexOf("\n\n", section.indexOf("| route |")));
    const rows = table
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .map((line) => /^\| `(GET|POST|PATCH|DELETE) (\/api\/v1\/[^`?]*)(\?[^`]*)?`/.exec(line))
      .filter((m) => m !== null);
    const inReadme = rows.map((m) => `${m[1]} ${m[2]}`);
    expect(inReadme.length).toBe(table.split("\n").filter((l) => l.includes("/api/v1/")).length);
    expect(new Set(inReadme).size).toBe(inReadme.length);
    expect(new Set(inReadme)).toEqual(new Set(routesOf(doc.paths)));
    for (const [, method, route, query] of rows) {
      const params = doc.paths[route][method.toLowerCase()].parameters.map((p) => p.name);
      for (const name of (query ?? "").slice(1).split("&").filter(Boolean)) {
        expect(params, `${method} ${route}`).toContain(name.split("=")[0]);
      }
    }
  });
});
