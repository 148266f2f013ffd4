/**
 * Typed routes of the replace operations (README "Replacing and overwriting"):
 *
 * - POST /api/v1/tables with `mode` and `rows` or `query`: CTAS, CREATE OR REPLACE, REPLACE
 *   (registered through the create route, which hands such bodies here)
 * - POST /api/v1/tables/{name}/overwrite        INSERT OVERWRITE [dynamic partition overwrite]
 * - POST /api/v1/tables/{name}/replace-where    INSERT INTO … REPLACE WHERE
 * - POST /api/v1/tables/{name}/replace-using    INSERT INTO … REPLACE USING (…) / REPLACE ON …
 * - POST /api/v1/tables/{name}/restore          RESTORE TABLE … TO VERSION | TIMESTAMP AS OF
 *
 * Rows come as JSON (`"rows"`) or as an Arrow IPC stream body; with Arrow, the other fields
 * travel as query parameters.
 */
import type { Context, Hono } from "hono";
import { siltError } from "../errors.ts";
import { parseExpression, parseQuery } from "../expr/parse.ts";
import type { InputRows } from "../ops/input-rows.ts";
import { overwriteRows } from "../ops/overwrite.ts";
import { type CreationMode, createOrReplaceTable } from "../ops/replace-table.ts";
import { replaceUsing } from "../ops/replace-using.ts";
import { replaceWhere } from "../ops/replace-where.ts";
import { restoreTable } from "../ops/restore.ts";
import type { WriteResult } from "../ops/write-commit.ts";
import { runQuery } from "../sql/query.ts";
import { ARROW_STREAM, columnsOf, defaultsOf, type Env, jsonBody, rowsInput } from "./http.ts";
import type { Operation } from "./operations.ts";
import {
  type Json,
  optionalBoolean,
  optionalInteger,
  optionalString,
  optionalStringArray,
  optionalStringMap,
  requiredString,
} from "./request.ts";

export function registerReplaceRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("overwrite")) {
    app.post("/api/v1/tables/:name/overwrite", async (c) => {
      const { input, params } = await writeRequest(c);
      const result = await overwriteRows(c.get("ctx"), c.req.param("name"), input, {
        defaults: defaultsOf(c, params),
        dynamicPartitionOverwrite: optionalBoolean(params, "dynamicPartitionOverwrite"),
      });
      return c.json(writeAnswer(result));
    });
  }
  if (serves.has("replace-where")) {
    app.post("/api/v1/tables/:name/replace-where", async (c) => {
      const { input, params } = await writeRequest(c);
      const text = requiredString(params, "predicate");
      const result = await replaceWhere(
        c.get("ctx"),
        c.req.param("name"),
        parseExpression(text),
        input,
        {
          defaults: defaultsOf(c, params),
          // Recorded as given, as Spark records a replaceWhere option.
          predicateText: text,
          dynamicPartitionOverwrite: optionalBoolean(params, "dynamicPartitionOverwrite"),
        },
      );
      return c.json(writeAnswer(result));
    });
  }
  if (serves.has("replace-using")) {
    app.post("/api/v1/tables/:name/replace-using", async (c) => {
      const { input, params } = await writeRequest(c);
      const on = optionalString(params, "on");
      const result = await replaceUsing(c.get("ctx"), c.req.param("name"), input, {
        defaults: defaultsOf(c, params),
        using: optionalStringArray(params, "columns"),
        on:
          on === undefined
            ? undefined
            : {
                condition: parseExpression(on),
                text: on,
                targetAlias: optionalString(params, "targetAlias") ?? "t",
                sourceAlias: optionalString(params, "sourceAlias") ?? "s",
              },
        predicate: optionalString(params, "predicate"),
        dynamicPartitionOverwrite: optionalBoolean(params, "dynamicPartitionOverwrite"),
      });
      return c.json(writeAnswer(result));
    });
  }
  if (serves.has("restore")) {
    app.post("/api/v1/tables/:name/restore", async (c) => {
      const body = await jsonBody(c);
      const result = await restoreTable(c.get("ctx"), c.req.param("name"), {
        version: optionalInteger(body, "version"),
        timestamp: optionalTimestamp(body),
        defaults: defaultsOf(c, body),
      });
      return c.json(result);
    });
  }
}

/** Whether a POST /api/v1/tables body asks for more than a plain CREATE TABLE. */
export function isReplaceRequest(body: Json): boolean {
  return body.mode !== undefined || body.rows !== undefined || body.query !== undefined;
}

/** CTAS / CREATE OR REPLACE / REPLACE through POST /api/v1/tables. */
export async function createOrReplaceRoute(c: Context<Env>, body: Json) {
  const ctx = c.get("ctx");
  const mode = (optionalString(body, "mode") ?? "create") as CreationMode;
  if (!["create", "createOrReplace", "replace"].includes(mode)) {
    throw siltError("INVALID_REQUEST:CREATE_MODE", { mode });
  }
  const query = optionalString(body, "query");
  if (query !== undefined && (body.rows !== undefined || body.columns !== undefined)) {
    throw siltError("INVALID_REQUEST:QUERY_AND_COLUMNS");
  }
  if (body.rows !== undefined && !Array.isArray(body.rows)) {
    throw siltError("INVALID_REQUEST:FIELD_ROWS_ARRAY");
  }
  const defaults = defaultsOf(c, body);
  const rows = body.rows as unknown[] | undefined;
  const result = await createOrReplaceTable(ctx, {
    name: requiredString(body, "name"),
    defaults,
    mode,
    ifNotExists: optionalBoolean(body, "ifNotExists"),
    columns: body.columns === undefined ? undefined : columnsOf(body),
    partitionedBy: optionalStringArray(body, "partitionedBy"),
    properties: optionalStringMap(body, "properties"),
    using: optionalString(body, "using"),
    comment: optionalString(body, "comment"),
    source:
      query !== undefined
        ? async () => {
            const session = { defaults, conf: {}, now: ctx.clock() };
            const r = await runQuery(ctx, parseQuery(query), session);
            const columns = r.fields.map((f) => {
              if (f.type === "null") {
                throw siltError("UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE:VOID_COLUMN", {
                  name: f.name,
                });
              }
              return { name: f.name, type: f.type, nullable: true };
            });
            return { columns, rows: { arrow: r.table } };
          }
        : rows !== undefined
          ? async () => ({ rows: { rows } })
          : undefined,
  });
  return c.json(result, result.created ? 201 : 200);
}

async function writeRequest(c: Context<Env>): Promise<{ input: InputRows; params: Json }> {
  if ((c.req.header("content-type") ?? "").startsWith(ARROW_STREAM)) {
    return { input: await rowsInput(c), params: c.req.query() };
  }
  const body = await jsonBody(c);
  if (!Array.isArray(body.rows)) {
    throw siltError("INVALID_REQUEST:FIELD_ROWS_REQUIRED");
  }
  return { input: { rows: body.rows }, params: body };
}

function writeAnswer(result: WriteResult) {
  return {
    version: result.version,
    committed: result.committed,
    metrics: Object.fromEntries(Object.entries(result.metrics).map(([k, v]) => [k, Number(v)])),
  };
}

function optionalTimestamp(body: Json): string | number | undefined {
  const v = body.timestamp;
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string" || typeof v === "number") return v;
  throw siltError("INVALID_REQUEST:FIELD_TIMESTAMP");
}
