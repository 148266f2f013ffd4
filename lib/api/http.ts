/**
 * Request parsing shared by every route module: the JSON body, an Arrow IPC stream body, name
 * defaults, and whether the caller wants Arrow back.
 */
import type * as arrow from "apache-arrow";
import type { Context } from "hono";
import { locationUri, type SiltContext } from "../context.ts";
import { decodeArrowStream } from "../data/arrow-stream.ts";
import { type SiltError, siltError } from "../errors.ts";
import { parseExactJson } from "../values/exact-json.ts";
import { asObject, type Json } from "./request.ts";

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
    parsed = parseExactJson(text);
  } catch (err) {
    throw siltError("MALFORMED_REQUEST:BODY_NOT_JSON", { message: (err as Error).message });
  }
  return asObject(parsed);
}

/** Name defaults: the body's, else the query string's. */
export function defaultsOf(query: NameDefaults, body: NameDefaults = {}): NameDefaults {
  return { catalog: body.catalog ?? query.catalog, schema: body.schema ?? query.schema };
}

export interface NameDefaults {
  catalog?: string;
  schema?: string;
}

/** A request body that is an Arrow IPC stream. */
export async function arrowBody(c: Context<Env>): Promise<arrow.Table> {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  try {
    return decodeArrowStream(bytes);
  } catch (err) {
    throw siltError("MALFORMED_REQUEST:BODY_NOT_ARROW", { message: (err as Error).message });
  }
}

export const JSON_LINES = "application/x-ndjson";

export type AnswerFormat = "json" | "jsonl" | "arrow";

/** The answer's format: `format` (json, jsonl, arrow), else the Accept header, else JSON. */
export function answerFormat(c: Context<Env>, format: AnswerFormat | undefined): AnswerFormat {
  if (format !== undefined) return format;
  const accept = c.req.header("accept") ?? "";
  if (accept.includes(ARROW_STREAM)) return "arrow";
  if (accept.includes(JSON_LINES)) return "jsonl";
  return "json";
}
