/**
 * Idempotency-Key for POST and DELETE requests: a retried request gets the first request's
 * response and commits nothing more.
 *
 * 1. Scope the caller's key by principal, method and path (two routes or two callers never share a
 *    record) and fingerprint the request (method, path, query, body) with SHA-256.
 * 2. Claim it: conditional PutItem of {key, status IN_PROGRESS, fingerprint, expiresAt} that
 *    succeeds only when no record exists or the one there has expired (TTL deletes lazily, so an
 *    expired record may still be readable).
 * 3. Claim lost: read the record. A different fingerprint is a misuse of the key (422
 *    IDEMPOTENCY_KEY_REUSED); IN_PROGRESS means a duplicate is running right now (409, retry
 *    later); COMPLETED replays the stored status, content type and body, marked with the
 *    `idempotent-replayed: true` header.
 * 4. Claim won: run the request. A response below 500 is deterministic for the request, so it is
 *    stored (status COMPLETED); a 5xx or a thrown error releases the claim (DeleteItem), since
 *    what the request did is unknown to us but commits are themselves atomic and a retry must be
 *    able to run.
 * 5. Records expire 24 h after the claim through the table's TTL attribute `expiresAt` (epoch
 *    seconds), like Stripe's keys: a retry after a day is a new request.
 */
import { createHash } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Context, MiddlewareHandler } from "hono";
import { siltError } from "../errors.ts";
import { ensureTable } from "../kv/dynamo-item-store.ts";
import {
  attributeNotExists,
  IDEMPOTENCY_TABLE_KEYS,
  type ItemStore,
  lt,
  or,
} from "../kv/item-store.ts";
import type { Env } from "./http.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const REPLAYED_HEADER = "idempotent-replayed";
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** The TTL attribute the CDK stack configures on the table. */
export const TTL_ATTRIBUTE = "expiresAt";
/** Stored bodies stay well inside DynamoDB's 400 KB item limit. */
const MAX_STORED_BODY = 300_000;
const MAX_KEY_LENGTH = 255;

export type Claim =
  | { kind: "claimed" }
  | { kind: "inProgress" }
  | { kind: "mismatch" }
  | { kind: "completed"; status: number; contentType: string; body: string };

export class IdempotencyStore {
  /** `items`: the idempotency table (IDEMPOTENCY_TABLE_KEYS), in DynamoDB or in memory. */
  constructor(
    private readonly items: ItemStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Steps 2-3. */
  async claim(key: string, fingerprint: string): Promise<Claim> {
    const now = Math.floor(this.clock() / 1000);
    const claimed = await this.items.put(
      {
        key: { S: key },
        status: { S: "IN_PROGRESS" },
        fingerprint: { S: fingerprint },
        [TTL_ATTRIBUTE]: { N: String(now + IDEMPOTENCY_TTL_SECONDS) },
      },
      or(attributeNotExists("key"), lt(TTL_ATTRIBUTE, { N: String(now) })),
    );
    if (claimed) return { kind: "claimed" };
    const item = await this.items.get({ key: { S: key } });
    // Released between our put and our read: the caller may simply retry.
    if (item === undefined) return { kind: "inProgress" };
    if (item.fingerprint?.S !== fingerprint) return { kind: "mismatch" };
    if (item.status?.S !== "COMPLETED") return { kind: "inProgress" };
    return {
      kind: "completed",
      status: Number(item.responseStatus?.N ?? "200"),
      contentType: item.contentType?.S ?? "application/json",
      body: item.body?.S ?? "",
    };
  }

  /** Step 4, success. */
  async complete(
    key: string,
    response: { status: number; contentType: string; body: string },
  ): Promise<void> {
    await this.items.update(
      { key: { S: key } },
      {
        set: {
          status: { S: "COMPLETED" },
          responseStatus: { N: String(response.status) },
          contentType: { S: response.contentType },
          body: { S: response.body },
        },
      },
    );
  }

  /** Step 4, failure. */
  async release(key: string): Promise<void> {
    await this.items.delete({ key: { S: key } });
  }
}

/**
 * Hono middleware applying the store to POST and DELETE requests that carry the header;
 * `principal` names the request's caller, so two callers' keys never meet.
 */
export function idempotencyMiddleware(
  store: IdempotencyStore,
  principal: (c: Context<Env>) => string,
): MiddlewareHandler<Env> {
  return async (c, next) => {
    const method = c.req.method;
    const callerKey = c.req.header(IDEMPOTENCY_HEADER);
    if ((method !== "POST" && method !== "DELETE") || callerKey === undefined) return next();
    if (callerKey.trim() === "" || callerKey.length > MAX_KEY_LENGTH) {
      throw siltError("INVALID_IDEMPOTENCY_KEY", { maxLength: MAX_KEY_LENGTH });
    }
    // Step 1.
    const url = new URL(c.req.url);
    const body = new Uint8Array(await c.req.raw.clone().arrayBuffer());
    const fingerprint = requestFingerprint(method, url.pathname, url.search, body);
    const key = scopedKey(principal(c), method, url.pathname, callerKey);

    const claim = await store.claim(key, fingerprint);
    switch (claim.kind) {
      case "mismatch":
        throw siltError("IDEMPOTENCY_KEY_REUSED", { callerKey: JSON.stringify(callerKey) });
      case "inProgress":
        throw siltError("IDEMPOTENCY_REQUEST_IN_PROGRESS", {
          callerKey: JSON.stringify(callerKey),
        });
      case "completed":
        c.res = new Response(claim.body, {
          status: claim.status,
          headers: { "content-type": claim.contentType, [REPLAYED_HEADER]: "true" },
        });
        return;
      case "claimed":
        break;
    }

    // Step 4.
    try {
      await next();
    } catch (err) {
      await store.release(key);
      throw err;
    }
    // Hono turns thrown errors into c.res through onError before we get here, so the status
    // tells success from failure.
    const res = c.res;
    if (res.status >= 500) {
      await store.release(key);
      return;
    }
    let text = await res.clone().text();
    let contentType = res.headers.get("content-type") ?? "application/octet-stream";
    if (Buffer.byteLength(text) > MAX_STORED_BODY || !isTextual(contentType)) {
      text = JSON.stringify({
        replayed: true,
        message:
          "The first response to this Idempotency-Key was too large or binary to keep; the " +
          "request was applied once. Read the table to see its effect.",
      });
      contentType = "application/json";
    }
    await store.complete(key, { status: res.status, contentType, body: text });
  };
}

/** Step 1: the record's key. */
export const scopedKey = (principal: string, method: string, pathname: string, key: string) =>
  JSON.stringify([principal, method, pathname, key]);

/** Step 1: what makes two requests "the same request". */
export function requestFingerprint(
  method: string,
  pathname: string,
  search: string,
  body: Uint8Array,
): string {
  return createHash("sha256")
    .update(`${method}\n${pathname}\n${search}\n`)
    .update(body)
    .digest("hex");
}

const isTextual = (contentType: string) =>
  contentType.includes("json") || contentType.startsWith("text/");

/** Creates the idempotency table when absent (local mode and tests; CDK creates it in AWS). */
export const ensureIdempotencyTable = (
  client: DynamoDBClient,
  tableName: string,
  options: { timeoutMs?: number } = {},
): Promise<void> => ensureTable(client, tableName, IDEMPOTENCY_TABLE_KEYS, options);
