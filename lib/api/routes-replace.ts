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
import type * as z from "zod";
import { siltError } from "../errors.ts";
import { parseExpression, parseQuery } from "../expr/parse.ts";
import { overwriteRows } from "../ops/overwrite.ts";
import { createOrReplaceTable } from "../ops/replace-table.ts";
import { replaceUsing } from "../ops/replace-using.ts";
import { replaceWhere } from "../ops/replace-where.ts";
import { restoreTable } from "../ops/restore.ts";
import type { WriteResult } from "../ops/write-commit.ts";
import { runQuery } from "../sql/query.ts";
import { defaultsOf, type Env } from "./http.ts";
import type { Operation } from "./operations.ts";
import { ROUTES } from "./request-schemas.ts";
import { validated } from "./request-validation.ts";

export function registerReplaceRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("overwrite")) {
    app.post(ROUTES.overwrite.path, validated(ROUTES.overwrite), async (c) => {
      const { input, ...params } = c.req.valid("json");
      const result = await overwriteRows(c.get("ctx"), c.req.param("name"), input, {
        defaults: defaultsOf(c.req.valid("query"), params),
        dynamicPartitionOverwrite: params.dynamicPartitionOverwrite,
      });
      return c.json(writeAnswer(result));
    });
  }
  if (serves.has("replace-where")) {
    app.post(ROUTES.replaceWhere.path, validated(ROUTES.replaceWhere), async (c) => {
      const { input, ...params } = c.req.valid("json");
      const result = await replaceWhere(
        c.get("ctx"),
        c.req.param("name"),
        parseExpression(params.predicate),
        input,
        {
          defaults: defaultsOf(c.req.valid("query"), params),
          // Recorded as given, as Spark records a replaceWhere option.
          predicateText: params.predicate,
          dynamicPartitionOverwrite: params.dynamicPartitionOverwrite,
        },
      );
      return c.json(writeAnswer(result));
    });
  }
  if (serves.has("replace-using")) {
    app.post(ROUTES.replaceUsing.path, validated(ROUTES.replaceUsing), async (c) => {
      const { input, ...params } = c.req.valid("json");
      const { on } = params;
      const result = await replaceUsing(c.get("ctx"), c.req.param("name"), input, {
        defaults: defaultsOf(c.req.valid("query"), params),
        using: params.columns,
        on:
          on === undefined
            ? undefined
            : {
                condition: parseExpression(on),
                text: on,
                targetAlias: params.targetAlias ?? "t",
                sourceAlias: params.sourceAlias ?? "s",
              },
        predicate: params.predicate,
        dynamicPartitionOverwrite: params.dynamicPartitionOverwrite,
      });
      return c.json(writeAnswer(result));
    });
  }
  if (serves.has("restore")) {
    app.post(ROUTES.restore.path, validated(ROUTES.restore), async (c) => {
      const body = c.req.valid("json");
      const result = await restoreTable(c.get("ctx"), c.req.param("name"), {
        version: body.version,
        timestamp: body.timestamp,
        defaults: defaultsOf(c.req.valid("query"), body),
      });
      return c.json(result);
    });
  }
}

type CreateRequest = z.output<typeof ROUTES.createTable.body>;

/** Whether a POST /api/v1/tables body asks for more than a plain CREATE TABLE. */
export function isReplaceRequest(body: CreateRequest): boolean {
  return body.mode !== undefined || body.rows !== undefined || body.query !== undefined;
}

/** CTAS / CREATE OR REPLACE / REPLACE through POST /api/v1/tables. */
export async function createOrReplaceRoute(
  c: Context<Env>,
  body: CreateRequest,
  query: { catalog?: string; schema?: string },
) {
  const ctx = c.get("ctx");
  const { query: text, rows } = body;
  if (text !== undefined && (rows !== undefined || body.columns !== undefined)) {
    throw siltError("INVALID_REQUEST:QUERY_AND_COLUMNS");
  }
  const defaults = defaultsOf(query, body);
  const result = await createOrReplaceTable(ctx, {
    name: body.name,
    defaults,
    mode: body.mode ?? "create",
    ifNotExists: body.ifNotExists,
    columns: body.columns,
    partitionedBy: body.partitionedBy,
    properties: body.properties,
    using: body.using,
    comment: body.comment,
    source:
      text !== undefined
        ? async () => {
            const session = { defaults, conf: {}, now: ctx.clock() };
            const r = await runQuery(ctx, parseQuery(text), session);
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

function writeAnswer(result: WriteResult) {
  return {
    version: result.version,
    committed: result.committed,
    metrics: Object.fromEntries(Object.entries(result.metrics).map(([k, v]) => [k, Number(v)])),
  };
}
