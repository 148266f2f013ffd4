/**
 * Request parsing shared by every route module: the JSON body, name defaults, rows given as JSON
 * or as an Arrow IPC stream, and whether the caller wants Arrow back.
 */
import type { Context } from "hono";
import { locationUri, type SiltContext } from "../context.ts";
import { decodeArrowStream } from "../data/arrow-stream.ts";
import { type SiltError, siltError } from "../errors.ts";
import type { ColumnSpec } from "../ops/create-table.ts";
import type { InputRows } from "../ops/input-rows.ts";
import { asObject, type Json, optionalBoolean, optionalString, requiredString } from "./request.ts";

export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

/**
 * Hono environment of the app: every request carries an id for logs and error messages, and the
 * context its operations run in, whose principal is the request's caller. Under Lambda the
 * bindings hold the API Gateway event (hono/aws-lambda passes it as `event`).
 */
export type Env = {
  Variables: { requestId: string; ctx: SiltContext };
  Bindings: { event?: unknown } | undefined;
};

/**
 * The largest request body served: Lambda's limit for a synchronous invocation's payload (6 MB),
 * so a body the local server accepts is one the deployed functions can receive too. (Deployed,
 * the limit covers the whole event, so a body just under it may still be refused upstream.)
 */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;

/** 413 for a body over MAX_BODY_BYTES, pointing to the S3 paths big inputs take instead. */
export function payloadTooLarge(ctx: SiltContext): SiltError {
  const ingest = `${locationUri(ctx, "ingest")}/<catalog>/<schema>/<table>/`;
  return siltError("PAYLOAD_TOO_LARGE", { maxBytes: MAX_BODY_BYTES, ingest });
}

export async function jsonBody(c: Context<Env>, allowEmpty = false): Promise<Json> {
  const text = await c.req.text();
  if (text.trim() === "") {
    if (allowEmpty) return {};
    throw siltError("INVALID_REQUEST:NO_BODY");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw siltError("MALFORMED_REQUEST:BODY_NOT_JSON", { message: (err as Error).message });
  }
  return asObject(parsed);
}

export function defaultsOf(c: Context<Env>, body: Json): { catalog?: string; schema?: string } {
  return {
    catalog: optionalString(body, "catalog") ?? c.req.query("catalog"),
    schema: optionalString(body, "schema") ?? c.req.query("schema"),
  };
}

export function dropFlags(c: Context<Env>) {
  return {
    ifExists: optionalBoolean(c.req.query(), "ifExists"),
    cascade: optionalBoolean(c.req.query(), "cascade"),
  };
}

export function columnsOf(body: Json): ColumnSpec[] {
  const columns = body.columns;
  if (!Array.isArray(columns)) {
    throw siltError("INVALID_REQUEST:FIELD_COLUMNS_ARRAY");
  }
  return columns.map((raw, i) => {
    const col = asObject(raw, `column ${i + 1}`);
    return {
      name: requiredString(col, "name"),
      type: requiredString(col, "type"),
      nullable: optionalBoolean(col, "nullable"),
      comment: optionalString(col, "comment"),
    };
  });
}

export async function rowsInput(c: Context<Env>): Promise<InputRows> {
  if ((c.req.header("content-type") ?? "").startsWith(ARROW_STREAM)) {
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    try {
      return { arrow: decodeArrowStream(bytes) };
    } catch (err) {
      throw siltError("MALFORMED_REQUEST:BODY_NOT_ARROW", { message: (err as Error).message });
    }
  }
  const body = await jsonBody(c);
  if (!Array.isArray(body.rows)) {
    throw siltError("INVALID_REQUEST:FIELD_ROWS_REQUIRED");
  }
  return { rows: body.rows };
}

export function wantsArrow(c: Context<Env>, params: Json): boolean {
  return params.format === "arrow" || (c.req.header("accept") ?? "").includes(ARROW_STREAM);
}
