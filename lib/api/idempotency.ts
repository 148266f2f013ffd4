/**
 * Idempotency-Key for POST and DELETE requests: a retried request gets the first request's
 * response and commits nothing more, even when the first run died before it answered.
 *
 * 1. Scope the caller's key by principal, method and path (two routes or two callers never share a
 *    record) and fingerprint the request (method, path, query, body) with SHA-256.
 * 2. Claim it in the idempotency store (lib/kv/idempotency-store.ts) for a lease no longer than
 *    the function's timeout, or, where no timeout stops a request, a short lease renewed until
 *    the response is stored: a record exists per key until it expires.
 * 3. Claim lost: read the record. A different fingerprint is a misuse of the key (422
 *    IDEMPOTENCY_KEY_REUSED); IN_PROGRESS within its lease means a duplicate is running right
 *    now (409, retry later); COMPLETED replays the stored status, content type and body, marked
 *    with the `idempotent-replayed: true` header.
 * 4. IN_PROGRESS past its lease: the run holding it died (killed, out of memory, timed out). Take
 *    the claim over. If the dead run had begun a commit, look its txnId up on the arbiter's rows
 *    above the version it read: committed means the request happened, so answer what it committed
 *    (`{version, committed: true, operation, recovered: true}`, status 200) and store that;
 *    otherwise run the request.
 * 5. Claim won: run the request, its commits carrying txnIds recorded first (step 4 finds them;
 *    SiltContext.commitTxnId). A response below 500 is deterministic for the request, so it is
 *    stored (status COMPLETED); a 5xx or a thrown error releases the claim (DeleteItem), since
 *    what the request did is unknown to us but commits are themselves atomic and a retry must be
 *    able to run.
 * 6. Records expire 24 h after the claim through the table's TTL attribute `expiresAt` (epoch
 *    seconds), like Stripe's keys: a retry after a day is a new request.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Context, MiddlewareHandler, Next } from "hono";
import type { CommitArbiter } from "../commit/arbiter.ts";
import { siltError } from "../errors.ts";
import type { CommitIntent, IdempotencyStore, StoredResponse } from "../kv/idempotency-store.ts";
import type { Env } from "./http.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const REPLAYED_HEADER = "idempotent-replayed";
/** Stored bodies stay well inside DynamoDB's 400 KB item limit. */
const MAX_STORED_BODY = 300_000;
const MAX_KEY_LENGTH = 255;

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
    const quotedKey = JSON.stringify(callerKey);
    switch (claim.kind) {
      case "mismatch":
        throw siltError("IDEMPOTENCY_KEY_REUSED", { callerKey: quotedKey });
      case "inProgress":
        throw siltError("IDEMPOTENCY_REQUEST_IN_PROGRESS", { callerKey: quotedKey });
      case "completed":
        c.res = replay(claim);
        return;
      case "takenOver": {
        // Step 4.
        const ctx = c.get("ctx");
        const committed =
          claim.lastCommit && (await committedResult(ctx.arbiter, claim.lastCommit));
        if (committed !== undefined) {
          await store.complete(key, claim.claimId, committed);
          c.res = replay(committed);
          return;
        }
        break;
      }
      case "claimed":
        break;
    }

    // Step 5.
    const { claimId } = claim;
    const ctx = c.get("ctx");
    const renewal =
      store.renewEveryMs === undefined
        ? undefined
        : setInterval(() => {
            store.renew(key, claimId).catch((err: unknown) => {
              ctx.logger.warn("idempotency.renew_failed", { error: String(err) });
            });
          }, store.renewEveryMs).unref();
    try {
      await runClaimed(c, next, store, key, claimId, quotedKey);
    } finally {
      clearInterval(renewal);
    }
  };
}

/** Step 5: the request, run under the claim this run holds. */
async function runClaimed(
  c: Context<Env>,
  next: Next,
  store: IdempotencyStore,
  key: string,
  claimId: string,
  quotedKey: string,
) {
  const ctx = c.get("ctx");
  c.set("ctx", {
    ...ctx,
    commitTxnId: async (commit) => {
      const txnId = randomUUID();
      if (!(await store.recordCommit(key, claimId, { ...commit, txnId }))) {
        // A retry took the key over while this run was thought dead: it answers the caller.
        throw siltError("IDEMPOTENCY_REQUEST_IN_PROGRESS", { callerKey: quotedKey });
      }
      return txnId;
    },
  });
  try {
    await next();
  } catch (err) {
    await store.release(key, claimId);
    throw err;
  }
  // Hono turns thrown errors into c.res through onError before we get here, so the status
  // tells success from failure.
  const res = c.res;
  if (res.status >= 500) {
    await store.release(key, claimId);
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
  await store.complete(key, claimId, { status: res.status, contentType, body: text });
}

const replay = (stored: StoredResponse): Response =>
  new Response(stored.body, {
    status: stored.status,
    headers: { "content-type": stored.contentType, [REPLAYED_HEADER]: "true" },
  });

/** Step 4: the answer for a dead run's commit that landed, or undefined when it did not. */
async function committedResult(
  arbiter: CommitArbiter,
  commit: CommitIntent,
): Promise<StoredResponse | undefined> {
  const rows = await arbiter.range(commit.tableId, commit.readVersion + 1);
  const row = rows.find((r) => r.txnId === commit.txnId);
  if (row === undefined) return undefined;
  return {
    status: 200,
    contentType: "application/json",
    body: JSON.stringify({
      version: row.version,
      committed: true,
      operation: row.operation,
      recovered: true,
      message:
        `The first run of this request committed version ${row.version} and stopped before ` +
        "it answered; this is what it committed. Read the table for the rest of its effect.",
    }),
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
