/**
 * The HTTP API (DESIGN §6): one Hono app, served by `silt serve` locally and by the Lambda
 * adapters in functions/. Routes only parse, call an operation and shape the answer; errors
 * become `{error_class, message, sqlstate?, message_parameters?}` with their status, never a stack trace.
 *
 * Before any route: the request's caller (`c.get("ctx")` is the context its operations run in,
 * naming that caller), then the body size limit, then Idempotency-Key handling.
 */
import { randomUUID } from "node:crypto";
import * as arrow from "apache-arrow";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import {
  type AuthMode,
  principalOf,
  principalOfToken,
  unauthenticated,
} from "../auth/principal.ts";
import type { SiltContext } from "../context.ts";
import { arrowToRows } from "../data/arrow-to-json.ts";
import { sparkTypeName } from "../delta/schema.ts";
import { SiltError, siltError } from "../errors.ts";
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
import { scanTable } from "../ops/scan.ts";
import { executeSql } from "../sql/execute.ts";
import {
  ARROW_STREAM,
  columnsOf,
  defaultsOf,
  dropFlags,
  type Env,
  jsonBody,
  MAX_BODY_BYTES,
  payloadTooLarge,
  rowsInput,
  wantsArrow,
} from "./http.ts";
import { idempotencyMiddleware } from "./idempotency.ts";
import { OPERATIONS, type Operation } from "./operations.ts";
import {
  type Json,
  optionalBoolean,
  optionalInteger,
  optionalString,
  optionalStringArray,
  optionalStringMap,
  requiredString,
} from "./request.ts";
import { registerAuthRoutes } from "./routes-auth.ts";
import { registerDmlRoutes } from "./routes-dml.ts";
import { registerMaintenanceRoutes } from "./routes-maintenance.ts";
import { createOrReplaceRoute, isReplaceRequest, registerReplaceRoutes } from "./routes-replace.ts";
import { ucErrorResponse } from "./uc/errors.ts";
import { registerUnityCatalogRoutes } from "./uc/routes.ts";

export interface AppOptions {
  operations?: readonly Operation[];
  /**
   * How callers are authenticated (lib/auth/principal.ts). "none", the default, runs every request
   * as `ctx.principal` without privilege checks; "iam" and "jwt" take the caller from the API
   * Gateway event and check its privileges.
   */
  auth?: AuthMode;
  /** With auth "token": bearer token -> principal (lib/auth/principal.ts parseTokens). */
  tokens?: ReadonlyMap<string, string>;
}

export function createApp(ctx: SiltContext, opts: AppOptions = {}): Hono<Env> {
  const app = new Hono<Env>();
  const serves = new Set<Operation>(opts.operations ?? OPERATIONS);
  const auth = opts.auth ?? "none";

  app.use(async (c, next) => {
    c.set("requestId", c.req.header("x-request-id") ?? randomUUID());
    await next();
    c.header("x-request-id", c.get("requestId"));
  });

  app.onError((caught, c) => {
    // Analysis and evaluation recurse over expression trees, whose depth the parser bounds only
    // for nesting: a flat chain of thousands of OR terms can still exhaust the stack. The input
    // is at fault, and nothing was half done (a commit is not recursive).
    const err =
      caught instanceof RangeError && caught.message.includes("call stack")
        ? siltError("STATEMENT_TOO_COMPLEX")
        : caught;
    if (!(err instanceof SiltError)) {
      ctx.logger.error("unhandled error", {
        requestId: c.get("requestId"),
        route: c.req.path,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        stack: err instanceof Error ? err.stack : undefined,
      });
    }
    const known =
      err instanceof SiltError
        ? err
        : siltError("INTERNAL_ERROR:UNEXPECTED_FAILURE", { requestId: c.get("requestId") });
    return errorResponse(c, known);
  });

  app.notFound((c) =>
    errorResponse(c, siltError("NOT_FOUND", { method: c.req.method, path: c.req.path })),
  );

  // Ahead of the middleware below, so it answers without a caller: it reveals nothing.
  app.get("/api/v1/health", (c) => c.json({ status: "ok" }));

  // The caller before anything else: an unauthenticated request is refused unread.
  app.use(async (c, next) => {
    c.set(
      "ctx",
      callerContext(ctx, auth, c.env?.event, c.req.header("authorization"), opts.tokens),
    );
    await next();
  });
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        throw payloadTooLarge(c.get("ctx"));
      },
    }),
  );
  // Ahead of Idempotency-Key handling: neither commits anything, and vended credentials are
  // secrets that no idempotency record may keep for replay.
  registerAuthRoutes(app, serves);
  registerUnityCatalogRoutes(app, serves);
  if (ctx.idempotency !== undefined) {
    app.use(idempotencyMiddleware(ctx.idempotency, (c) => c.get("ctx").principal));
  }

  if (serves.has("catalog")) registerCatalogRoutes(app);
  if (serves.has("create")) registerCreate(app);
  if (serves.has("insert")) registerInsert(app);
  if (serves.has("rows")) registerRows(app);
  if (serves.has("history")) registerHistory(app);
  if (serves.has("detail")) registerDetail(app);
  if (serves.has("drop")) registerDrop(app);
  if (serves.has("sql")) registerSql(app);
  registerReplaceRoutes(app, serves);
  registerDmlRoutes(app, serves);
  registerMaintenanceRoutes(app, serves);
  return app;
}

/** An error in the shape of the API the request went to: Unity Catalog's, or Silt's own. */
function errorResponse(c: Context<Env>, err: SiltError): Response {
  const uc = ucErrorResponse(c.req.path, err);
  if (uc !== undefined) return c.json(uc.body, uc.status as ContentfulStatusCode);
  return c.json(err.toJSON(), err.status as ContentfulStatusCode);
}

/**
 * The context a request's operations run in. With auth on it names the authenticated caller and
 * checks its privileges; the process-wide context stays as it is for system callers.
 */
function callerContext(
  ctx: SiltContext,
  auth: AuthMode,
  event: unknown,
  authorization: string | undefined,
  tokens: ReadonlyMap<string, string> | undefined,
): SiltContext {
  if (auth === "none") return ctx;
  const principal =
    auth === "token"
      ? principalOfToken(authorization, tokens ?? new Map())
      : principalOf(auth, event);
  if (principal === undefined) throw unauthenticated(auth);
  return { ...ctx, principal, enforcePrivileges: true };
}

function registerCatalogRoutes(app: Hono<Env>): void {
  app.post("/api/v1/catalogs", async (c) => {
    const body = await jsonBody(c);
    const entry = await createCatalog(c.get("ctx"), requiredString(body, "name"), {
      comment: optionalString(body, "comment"),
      ifNotExists: optionalBoolean(body, "ifNotExists"),
    });
    return c.json(entry, 201);
  });
  app.get("/api/v1/catalogs", async (c) => c.json(await listCatalogs(c.get("ctx"))));
  app.delete("/api/v1/catalogs/:catalog", async (c) =>
    c.json(await dropCatalog(c.get("ctx"), c.req.param("catalog"), dropFlags(c))),
  );
  app.post("/api/v1/catalogs/:catalog/schemas", async (c) => {
    const body = await jsonBody(c);
    const entry = await createSchema(
      c.get("ctx"),
      c.req.param("catalog"),
      requiredString(body, "name"),
      {
        comment: optionalString(body, "comment"),
        ifNotExists: optionalBoolean(body, "ifNotExists"),
      },
    );
    return c.json(entry, 201);
  });
  app.get("/api/v1/catalogs/:catalog/schemas", async (c) =>
    c.json(await listSchemas(c.get("ctx"), c.req.param("catalog"))),
  );
  app.delete("/api/v1/catalogs/:catalog/schemas/:schema", async (c) =>
    c.json(
      await dropSchema(c.get("ctx"), c.req.param("catalog"), c.req.param("schema"), dropFlags(c)),
    ),
  );
  app.get("/api/v1/catalogs/:catalog/schemas/:schema/tables", async (c) =>
    c.json(await listTables(c.get("ctx"), c.req.param("catalog"), c.req.param("schema"))),
  );
}

function registerCreate(app: Hono<Env>): void {
  app.post("/api/v1/tables", async (c) => {
    const body = await jsonBody(c);
    if (isReplaceRequest(body)) return createOrReplaceRoute(c, body);
    const result = await createTable(c.get("ctx"), {
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

function registerInsert(app: Hono<Env>): void {
  app.post("/api/v1/tables/:name/insert", async (c) => {
    const input = await rowsInput(c);
    const result = await appendRows(c.get("ctx"), c.req.param("name"), input, {
      defaults: defaultsOf(c, {}),
    });
    return c.json(result);
  });
}

function registerRows(app: Hono<Env>): void {
  const rows = async (c: Context<Env>, params: Json) => {
    const result = await scanTable(c.get("ctx"), c.req.param("name") as string, {
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

function registerHistory(app: Hono<Env>): void {
  app.get("/api/v1/tables/:name/history", async (c) =>
    c.json(
      await describeHistory(c.get("ctx"), c.req.param("name"), {
        limit: optionalInteger(c.req.query(), "limit", 1),
        defaults: defaultsOf(c, {}),
      }),
    ),
  );
}

function registerDetail(app: Hono<Env>): void {
  app.get("/api/v1/tables/:name/detail", async (c) =>
    c.json(
      await describeDetail(c.get("ctx"), c.req.param("name"), { defaults: defaultsOf(c, {}) }),
    ),
  );
}

function registerDrop(app: Hono<Env>): void {
  app.delete("/api/v1/tables/:name", async (c) =>
    c.json(
      await dropTable(c.get("ctx"), c.req.param("name"), {
        ifExists: optionalBoolean(c.req.query(), "ifExists"),
        defaults: defaultsOf(c, {}),
      }),
    ),
  );
}

function registerSql(app: Hono<Env>): void {
  app.post("/api/v1/sql", async (c) => {
    const body = await jsonBody(c);
    return c.json(
      await executeSql(c.get("ctx"), {
        statement: requiredString(body, "statement"),
        catalog: optionalString(body, "catalog"),
        schema: optionalString(body, "schema"),
        conf: optionalStringMap(body, "conf"),
      }),
    );
  });
}
