/**
 * The HTTP API (DESIGN §6): one Hono app, served by `silt serve` locally and by the Lambda
 * adapters in functions/. Routes only parse, call an operation and shape the answer; errors
 * become `{error_class, message, sqlstate?, message_parameters?}` with their status, never a stack trace.
 *
 * Before any route: the request's caller (`c.get("ctx")` is the context its operations run in,
 * naming that caller), then the body size limit, then Idempotency-Key handling.
 */
import { randomUUID } from "node:crypto";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type * as z from "zod";
import {
  type AuthMode,
  principalOf,
  principalOfToken,
  unauthenticated,
} from "../auth/principal.ts";
import { type SiltContext, withDeadline } from "../context.ts";
import { sparkTypeName } from "../delta/schema.ts";
import { type SiltError, siltError } from "../errors.ts";
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
import { scanTableStream } from "../ops/scan.ts";
import { executeSql } from "../sql/execute.ts";
import {
  arrowStream,
  inSlices,
  jsonAnswer,
  jsonAnswerFailure,
  jsonLines,
  jsonLinesFailure,
  readAll,
  rowSlices,
  sendAnswer,
} from "./answer.ts";
import {
  ARROW_STREAM,
  answerFormat,
  defaultsOf,
  type Env,
  JSON_LINES,
  MAX_BODY_BYTES,
  type NameDefaults,
  payloadTooLarge,
} from "./http.ts";
import { idempotencyMiddleware } from "./idempotency.ts";
import { knownError } from "./known-error.ts";
import { openApiDocument } from "./openapi.ts";
import { OPERATIONS, type Operation } from "./operations.ts";
import { ROUTES } from "./request-schemas.ts";
import { validated } from "./request-validation.ts";
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
  /**
   * Where every answer is one buffered payload (Lambda): the most bytes a row answer may take.
   * Without it, row answers stream (answer.ts).
   */
  maxResponseBytes?: number;
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

  app.onError((caught, c) => errorResponse(c, knownError(caught, c, ctx.logger)));

  app.notFound((c) =>
    errorResponse(c, siltError("NOT_FOUND", { method: c.req.method, path: c.req.path })),
  );

  // Ahead of the middleware below, so they answer without a caller: they reveal nothing.
  app.get(ROUTES.health.path, validated(ROUTES.health), (c) => c.json({ status: "ok" }));
  app.get(ROUTES.openapi.path, validated(ROUTES.openapi), (c) => c.json(openApiDocument()));

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
  if (serves.has("rows")) registerRows(app, opts.maxResponseBytes);
  if (serves.has("history")) registerHistory(app);
  if (serves.has("detail")) registerDetail(app);
  if (serves.has("drop")) registerDrop(app);
  if (serves.has("sql")) registerSql(app, opts.maxResponseBytes);
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
  const R = ROUTES;
  app.post(R.createCatalog.path, validated(R.createCatalog), async (c) => {
    const { name, comment, ifNotExists } = c.req.valid("json");
    return c.json(await createCatalog(c.get("ctx"), name, { comment, ifNotExists }), 201);
  });
  app.get(R.listCatalogs.path, validated(R.listCatalogs), async (c) =>
    c.json(await listCatalogs(c.get("ctx"))),
  );
  app.delete(R.dropCatalog.path, validated(R.dropCatalog), async (c) =>
    c.json(await dropCatalog(c.get("ctx"), c.req.param("catalog"), c.req.valid("query"))),
  );
  app.post(R.createSchema.path, validated(R.createSchema), async (c) => {
    const { name, comment, ifNotExists } = c.req.valid("json");
    const entry = await createSchema(c.get("ctx"), c.req.param("catalog"), name, {
      comment,
      ifNotExists,
    });
    return c.json(entry, 201);
  });
  app.get(R.listSchemas.path, validated(R.listSchemas), async (c) =>
    c.json(await listSchemas(c.get("ctx"), c.req.param("catalog"))),
  );
  app.delete(R.dropSchema.path, validated(R.dropSchema), async (c) =>
    c.json(
      await dropSchema(
        c.get("ctx"),
        c.req.param("catalog"),
        c.req.param("schema"),
        c.req.valid("query"),
      ),
    ),
  );
  app.get(R.listTables.path, validated(R.listTables), async (c) =>
    c.json(await listTables(c.get("ctx"), c.req.param("catalog"), c.req.param("schema"))),
  );
}

function registerCreate(app: Hono<Env>): void {
  app.post(ROUTES.createTable.path, validated(ROUTES.createTable), async (c) => {
    const body = c.req.valid("json");
    if (isReplaceRequest(body)) return createOrReplaceRoute(c, body, c.req.valid("query"));
    if (body.columns === undefined) throw siltError("INVALID_REQUEST:FIELD_COLUMNS_ARRAY");
    const result = await createTable(c.get("ctx"), {
      name: body.name,
      defaults: defaultsOf(c.req.valid("query"), body),
      columns: body.columns,
      partitionedBy: body.partitionedBy,
      properties: body.properties,
      ifNotExists: body.ifNotExists,
      using: body.using,
      comment: body.comment,
    });
    return c.json(result, result.created ? 201 : 200);
  });
}

function registerInsert(app: Hono<Env>): void {
  app.post(ROUTES.insert.path, validated(ROUTES.insert), async (c) => {
    const { input, ...params } = c.req.valid("json");
    const result = await appendRows(c.get("ctx"), c.req.param("name"), input, {
      defaults: defaultsOf(c.req.valid("query"), params),
    });
    return c.json(result);
  });
}

type ReadRequest = z.output<typeof ROUTES.readRows.query>;

function registerRows(app: Hono<Env>, maxBytes: number | undefined): void {
  const rows = async (c: Context<Env>, name: string, read: ReadRequest, query: NameDefaults) => {
    const { columns, version, timestamp, limit, max_rows: maxRows, page_token: pageToken } = read;
    const ctx = withDeadline(
      c.get("ctx"),
      read.statement_timeout,
      "the field statement_timeout (seconds)",
    );
    const stream = await scanTableStream(ctx, name, {
      columns,
      version,
      timestamp,
      limit,
      defaults: defaultsOf(query, read),
      maxRows,
      pageToken,
    });
    // A page is bounded, so it is read whole first and its token can go in a header; without
    // max_rows there is no next page and the rows stream as they are read.
    const parts = maxRows === undefined ? stream.parts : await readAll(stream.parts);
    const token = () => stream.nextPageToken();
    const headers = (): Record<string, string> => {
      const next = maxRows === undefined ? undefined : token();
      return {
        "x-silt-version": String(stream.version),
        ...(next !== undefined && { "x-silt-next-page-token": next }),
      };
    };
    switch (answerFormat(c, read.format)) {
      case "arrow":
        return sendAnswer(c, arrowStream(stream.arrowSchema, parts, ctx.deadline), {
          contentType: ARROW_STREAM,
          headers: headers(),
          maxBytes,
        });
      case "jsonl":
        return sendAnswer(c, jsonLines(parts, stream.schema, ctx.deadline), {
          contentType: JSON_LINES,
          headers: headers(),
          maxBytes,
          failure: jsonLinesFailure,
        });
      case "json": {
        const head = {
          version: stream.version,
          columns: stream.schema.fields.map((f) => ({ name: f.name, type: sparkTypeName(f.type) })),
        };
        const tail = () => {
          const next = token();
          return next === undefined ? {} : { next_page_token: next };
        };
        const rows = rowSlices(parts, stream.schema, ctx.deadline);
        return sendAnswer(c, jsonAnswer(head, rows, tail), {
          contentType: "application/json",
          maxBytes,
          failure: jsonAnswerFailure,
        });
      }
    }
  };
  app.get(ROUTES.readRows.path, validated(ROUTES.readRows), async (c) =>
    rows(c, c.req.param("name"), c.req.valid("query"), {}),
  );
  app.post(ROUTES.readRowsPost.path, validated(ROUTES.readRowsPost), async (c) =>
    rows(c, c.req.param("name"), c.req.valid("json"), c.req.valid("query")),
  );
}

function registerHistory(app: Hono<Env>): void {
  app.get(ROUTES.history.path, validated(ROUTES.history), async (c) => {
    const { limit, ...defaults } = c.req.valid("query");
    return c.json(
      await describeHistory(c.get("ctx"), c.req.param("name"), {
        limit,
        defaults: defaultsOf(defaults),
      }),
    );
  });
}

function registerDetail(app: Hono<Env>): void {
  app.get(ROUTES.detail.path, validated(ROUTES.detail), async (c) =>
    c.json(
      await describeDetail(c.get("ctx"), c.req.param("name"), {
        defaults: defaultsOf(c.req.valid("query")),
      }),
    ),
  );
}

function registerDrop(app: Hono<Env>): void {
  app.delete(ROUTES.dropTable.path, validated(ROUTES.dropTable), async (c) => {
    const { ifExists, ...defaults } = c.req.valid("query");
    return c.json(
      await dropTable(c.get("ctx"), c.req.param("name"), {
        ifExists,
        defaults: defaultsOf(defaults),
      }),
    );
  });
}

function registerSql(app: Hono<Env>, maxBytes: number | undefined): void {
  app.post(ROUTES.sql.path, validated(ROUTES.sql), async (c) => {
    const { max_rows: maxRows, page_token: pageToken, ...request } = c.req.valid("json");
    const { rows, ...rest } = await executeSql(c.get("ctx"), {
      ...request,
      maxRows,
      pageToken,
      signal: c.req.raw.signal,
    });
    return sendAnswer(c, jsonAnswer(rest, inSlices(rows)), {
      contentType: "application/json",
      maxBytes,
    });
  });
}
