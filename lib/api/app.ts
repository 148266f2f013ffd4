/**
 * The HTTP API (DESIGN §6): one Hono app, served by `silt serve` locally and by the Lambda
 * adapters in functions/. Routes only parse, call an operation and shape the answer; errors
 * become `{error_class, message, sqlstate?}` with their status, never a stack trace.
 */
import { randomUUID } from "node:crypto";
import * as arrow from "apache-arrow";
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { SiltContext } from "../context.ts";
import { arrowToRows } from "../data/json-rows.ts";
import { sparkTypeName } from "../delta/schema.ts";
import { SiltError } from "../errors.ts";
import { appendRows } from "../ops/append.ts";
import { createTable } from "../ops/create-table.ts";
import { describeDetail } from "../ops/detail.ts";
import { dropTable } from "../ops/drop-table.ts";
import { describeHistory } from "../ops/history.ts";
import {
  createCatalog,
  createSchema,
  dropCatalog,
  dropSchema,
  listCatalogs,
  listSchemas,
  listTables,
} from "../ops/namespaces.ts";
import type { ResultSet } from "../ops/result-set.ts";
import { scanTable } from "../ops/scan.ts";
import { executeSql } from "../sql/execute.ts";
import {
  ARROW_STREAM,
  columnsOf,
  defaultsOf,
  dropFlags,
  type Env,
  jsonBody,
  rowsInput,
  wantsArrow,
} from "./http.ts";
import { idempotencyMiddleware } from "./idempotency.ts";
import {
  type Json,
  optionalBoolean,
  optionalInteger,
  optionalString,
  optionalStringArray,
  optionalStringMap,
  requiredString,
} from "./request.ts";
import { registerDmlRoutes } from "./routes-dml.ts";
import { registerMaintenanceRoutes } from "./routes-maintenance.ts";
import { createOrReplaceRoute, isReplaceRequest, registerReplaceRoutes } from "./routes-replace.ts";

/** Route groups, one per deployed function; the local server serves them all. */
export const OPERATIONS = [
  "catalog",
  "create",
  "insert",
  "rows",
  "history",
  "detail",
  "drop",
  "sql",
  "overwrite",
  "replace-where",
  "replace-using",
  "restore",
  "update",
  "delete",
  "merge",
  "optimize",
  "vacuum",
] as const;
export type Operation = (typeof OPERATIONS)[number];

export function createApp(
  ctx: SiltContext,
  opts: { operations?: readonly Operation[] } = {},
): Hono<Env> {
  const app = new Hono<Env>();
  const serves = new Set<Operation>(opts.operations ?? OPERATIONS);

  app.use(async (c, next) => {
    c.set("requestId", c.req.header("x-request-id") ?? randomUUID());
    await next();
    c.header("x-request-id", c.get("requestId"));
  });
  if (ctx.idempotency !== undefined) {
    app.use(idempotencyMiddleware(ctx.idempotency, () => ctx.principal));
  }

  app.onError((err, c) => {
    if (err instanceof SiltError) {
      return c.json(err.toJSON(), err.status as ContentfulStatusCode);
    }
    ctx.logger.error("unhandled error", {
      requestId: c.get("requestId"),
      route: c.req.path,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    return c.json(
      {
        error_class: "INTERNAL_ERROR",
        message: `An internal error occurred. Quote request id ${c.get("requestId")} when reporting it.`,
      },
      500,
    );
  });

  app.notFound((c) =>
    c.json(
      {
        error_class: "NOT_FOUND",
        message: `No route for ${c.req.method} ${c.req.path}. See the README for the API.`,
      },
      404,
    ),
  );

  app.get("/api/v1/health", (c) => c.json({ status: "ok" }));

  if (serves.has("catalog")) registerCatalogRoutes(app, ctx);
  if (serves.has("create")) registerCreate(app, ctx);
  if (serves.has("insert")) registerInsert(app, ctx);
  if (serves.has("rows")) registerRows(app, ctx);
  if (serves.has("history")) registerHistory(app, ctx);
  if (serves.has("detail")) registerDetail(app, ctx);
  if (serves.has("drop")) registerDrop(app, ctx);
  if (serves.has("sql")) registerSql(app, ctx);
  registerReplaceRoutes(app, ctx, serves);
  registerDmlRoutes(app, ctx, serves);
  registerMaintenanceRoutes(app, ctx, serves);
  return app;
}

function registerCatalogRoutes(app: Hono<Env>, ctx: SiltContext): void {
  app.post("/api/v1/catalogs", async (c) => {
    const body = await jsonBody(c);
    const entry = await createCatalog(ctx, requiredString(body, "name"), {
      comment: optionalString(body, "comment"),
      ifNotExists: optionalBoolean(body, "ifNotExists"),
    });
    return c.json(entry, 201);
  });
  app.get("/api/v1/catalogs", async (c) => c.json(await listCatalogs(ctx)));
  app.delete("/api/v1/catalogs/:catalog", async (c) =>
    c.json(await dropCatalog(ctx, c.req.param("catalog"), dropFlags(c))),
  );
  app.post("/api/v1/catalogs/:catalog/schemas", async (c) => {
    const body = await jsonBody(c);
    const entry = await createSchema(ctx, c.req.param("catalog"), requiredString(body, "name"), {
      comment: optionalString(body, "comment"),
      ifNotExists: optionalBoolean(body, "ifNotExists"),
    });
    return c.json(entry, 201);
  });
  app.get("/api/v1/catalogs/:catalog/schemas", async (c) =>
    c.json(await listSchemas(ctx, c.req.param("catalog"))),
  );
  app.delete("/api/v1/catalogs/:catalog/schemas/:schema", async (c) =>
    c.json(await dropSchema(ctx, c.req.param("catalog"), c.req.param("schema"), dropFlags(c))),
  );
  app.get("/api/v1/catalogs/:catalog/schemas/:schema/tables", async (c) =>
    c.json(await listTables(ctx, c.req.param("catalog"), c.req.param("schema"))),
  );
}

function registerCreate(app: Hono<Env>, ctx: SiltContext): void {
  app.post("/api/v1/tables", async (c) => {
    const body = await jsonBody(c);
    if (isReplaceRequest(body)) return createOrReplaceRoute(ctx, c, body);
    const result = await createTable(ctx, {
      name: requiredString(body, "name"),
      defaults: defaultsOf(c, body),
      columns: columnsOf(body),
      partitionedBy: optionalStringArray(body, "partitionedBy"),
      properties: optionalStringMap(body, "properties"),
      ifNotExists: optionalBoolean(body, "ifNotExists"),
      using: optionalString(body, "using"),
      comment: optionalString(body, "comment"),
    });
    return c.json(result, result.created ? 201 : 200);
  });
}

function registerInsert(app: Hono<Env>, ctx: SiltContext): void {
  app.post("/api/v1/tables/:name/insert", async (c) => {
    const input = await rowsInput(c);
    const result = await appendRows(ctx, c.req.param("name"), input, {
      defaults: defaultsOf(c, {}),
    });
    return c.json(result);
  });
}

function registerRows(app: Hono<Env>, ctx: SiltContext): void {
  const rows = async (c: Context<Env>, params: Json) => {
    const result = await scanTable(ctx, c.req.param("name") as string, {
      columns: optionalStringArray(params, "columns"),
      version: optionalInteger(params, "version"),
      timestamp: optionalString(params, "timestamp"),
      limit: optionalInteger(params, "limit"),
      defaults: defaultsOf(c, params),
    });
    if (wantsArrow(c, params)) {
      return c.body(arrow.tableToIPC(result.table, "stream") as Uint8Array<ArrayBuffer>, 200, {
        "content-type": ARROW_STREAM,
        "x-silt-version": String(result.version),
      });
    }
    return c.json({
      version: result.version,
      columns: result.schema.fields.map((f) => ({ name: f.name, type: sparkTypeName(f.type) })),
      rows: arrowToRows(result.table, result.schema),
    });
  };
  app.get("/api/v1/tables/:name/rows", async (c) => rows(c, c.req.query()));
  app.post("/api/v1/tables/:name/rows", async (c) => rows(c, await jsonBody(c, true)));
}

function registerHistory(app: Hono<Env>, ctx: SiltContext): void {
  app.get("/api/v1/tables/:name/history", async (c) =>
    c.json(
      await describeHistory(ctx, c.req.param("name"), {
        limit: optionalInteger(c.req.query(), "limit", 1),
        defaults: defaultsOf(c, {}),
      }),
    ),
  );
}

function registerDetail(app: Hono<Env>, ctx: SiltContext): void {
  app.get("/api/v1/tables/:name/detail", async (c) =>
    c.json(await describeDetail(ctx, c.req.param("name"), { defaults: defaultsOf(c, {}) })),
  );
}

function registerDrop(app: Hono<Env>, ctx: SiltContext): void {
  app.delete("/api/v1/tables/:name", async (c) =>
    c.json(
      await dropTable(ctx, c.req.param("name"), {
        ifExists: optionalBoolean(c.req.query(), "ifExists"),
        defaults: defaultsOf(c, {}),
      }),
    ),
  );
}

function registerSql(app: Hono<Env>, ctx: SiltContext): void {
  app.post("/api/v1/sql", async (c) => {
    const body = await jsonBody(c);
    return c.json(
      await executeSql(ctx, {
        statement: requiredString(body, "statement"),
        catalog: optionalString(body, "catalog"),
        schema: optionalString(body, "schema"),
        conf: optionalStringMap(body, "conf"),
      }),
    );
  });
}

export type { ResultSet };
