/**
 * Idempotency-Key records (lib/api/idempotency.ts applies them to requests), one item per scoped
 * key in the idempotency table:
 *
 * 1. Claim: conditional PutItem of {key, status IN_PROGRESS, fingerprint, claimId, leaseUntil,
 *    expiresAt} that succeeds only when no record exists or the one there has expired (TTL
 *    deletes lazily, so an expired record may still be readable). `claimId` names this run of
 *    the request. In Lambda the lease is the function's timeout, so once it has passed the run
 *    holding it is dead (Lambda stopped it) rather than slow. Where nothing stops a request at a
 *    timeout (the local server) the lease is short and the running request renews it (step 3),
 *    so a claim outlives its run by at most one lease: a retry after a crash soon finishes.
 * 2. Claim lost: the record there, read back, says whether it is another request's
 *    (fingerprint), finished (COMPLETED, with its response), still running (IN_PROGRESS within
 *    its lease) or abandoned (IN_PROGRESS past its lease). An abandoned claim is taken over with
 *    a conditional update on its claimId (one retry wins it), handing the new run the commit the
 *    dead run last began, if any, so the caller can learn whether it committed.
 * 3. Before each commit the run records it (table, read version, the txnId the commit carries),
 *    conditioned on still holding the claim: a run whose claim was taken over commits nothing.
 *    A renewed lease is extended the same way, every third of a lease while the request runs.
 * 4. Complete stores the response; release deletes the claim so a retry can run. Both act only
 *    while the run holds the claim.
 * 5. Records expire 24 h after the claim through the table's TTL attribute `expiresAt` (epoch
 *    seconds).
 */
import { randomUUID } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ensureTable } from "./dynamo-item-store.ts";
import {
  and,
  attributeNotExists,
  eq,
  IDEMPOTENCY_TABLE_KEYS,
  type Item,
  type ItemStore,
  lt,
  or,
} from "./item-store.ts";

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** The TTL attribute the CDK stack configures on the table. */
export const TTL_ATTRIBUTE = "expiresAt";
/**
 * The lease where nothing stops a request at a timeout (the local server), renewed while the
 * request runs: the longest a retry waits after the server died mid-request.
 */
export const RENEWED_LEASE_MS = 30_000;

/** A commit a run of the request began: where to look for it, and what it carries. */
export interface CommitIntent {
  tableId: string;
  /** The commit lands above this version (-1 for a new table). */
  readVersion: number;
  /** The commit's commitInfo.txnId, on the arbiter's row of the version it wins. */
  txnId: string;
}

export type Claim =
  | { kind: "claimed"; claimId: string }
  /** An abandoned claim, now this run's; `lastCommit` is the dead run's last commit begun. */
  | { kind: "takenOver"; claimId: string; lastCommit?: CommitIntent }
  | { kind: "inProgress" }
  | { kind: "mismatch" }
  | { kind: "completed"; status: number; contentType: string; body: string };

export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
}

export class IdempotencyStore {
  /** How long a claim holds before a retry may take it over, unless renewed. */
  private readonly leaseMs: number;
  /** How often a running request renews its claim; undefined when the lease is not renewed. */
  readonly renewEveryMs: number | undefined;

  /**
   * `items`: the idempotency table (IDEMPOTENCY_TABLE_KEYS), in DynamoDB or in memory.
   * `functionTimeoutMs`: the timeout that stops every request (Lambda's), which is then the
   * lease; without one the lease is RENEWED_LEASE_MS, renewed while the request runs.
   */
  constructor(
    private readonly items: ItemStore,
    private readonly clock: () => number = Date.now,
    functionTimeoutMs?: number,
  ) {
    this.leaseMs = functionTimeoutMs ?? RENEWED_LEASE_MS;
    this.renewEveryMs = functionTimeoutMs === undefined ? RENEWED_LEASE_MS / 3 : undefined;
  }

  /** Steps 1-2. */
  async claim(key: string, fingerprint: string): Promise<Claim> {
    const nowMs = this.clock();
    const now = Math.floor(nowMs / 1000);
    const claimId = randomUUID();
    const claimed = await this.items.put(
      {
        key: { S: key },
        status: { S: "IN_PROGRESS" },
        fingerprint: { S: fingerprint },
        claimId: { S: claimId },
        leaseUntil: { N: String(nowMs + this.leaseMs) },
        [TTL_ATTRIBUTE]: { N: String(now + IDEMPOTENCY_TTL_SECONDS) },
      },
      or(attributeNotExists("key"), lt(TTL_ATTRIBUTE, { N: String(now) })),
    );
    if (claimed) return { kind: "claimed", claimId };
    const item = await this.items.get({ key: { S: key } });
    // Released between our put and our read: the caller may simply retry.
    if (item === undefined) return { kind: "inProgress" };
    if (item.fingerprint?.S !== fingerprint) return { kind: "mismatch" };
    if (item.status?.S === "COMPLETED") {
      return {
        kind: "completed",
        status: Number(item.responseStatus?.N ?? "200"),
        contentType: item.contentType?.S ?? "application/json",
        body: item.body?.S ?? "",
      };
    }
    const held = item.claimId?.S;
    const leaseUntil = Number(item.leaseUntil?.N ?? Number.POSITIVE_INFINITY);
    // Records claimed before leases existed have none: they wait for their 24 h expiry.
    if (held === undefined || leaseUntil > nowMs) return { kind: "inProgress" };
    const takenOver = await this.items.update(
      { key: { S: key } },
      {
        set: { claimId: { S: claimId }, leaseUntil: { N: String(nowMs + this.leaseMs) } },
        remove: ["commitTableId", "commitReadVersion", "commitTxnId"],
      },
      and(eq("status", { S: "IN_PROGRESS" }), eq("claimId", { S: held })),
    );
    if (!takenOver) return { kind: "inProgress" };
    return { kind: "takenOver", claimId, lastCommit: commitIntentOf(item) };
  }

  /** Step 3: extends the lease; false when the run no longer holds the claim. */
  renew(key: string, claimId: string): Promise<boolean> {
    return this.items.update(
      { key: { S: key } },
      { set: { leaseUntil: { N: String(this.clock() + this.leaseMs) } } },
      this.held(claimId),
    );
  }

  /** Step 3: false when the run no longer holds the claim (a retry took it over). */
  recordCommit(key: string, claimId: string, intent: CommitIntent): Promise<boolean> {
    return this.items.update(
      { key: { S: key } },
      {
        set: {
          commitTableId: { S: intent.tableId },
          commitReadVersion: { N: String(intent.readVersion) },
          commitTxnId: { S: intent.txnId },
        },
      },
      this.held(claimId),
    );
  }

  /** Step 4, success. */
  async complete(key: string, claimId: string, response: StoredResponse): Promise<void> {
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
      this.held(claimId),
    );
  }

  /** Step 4, failure. */
  async release(key: string, claimId: string): Promise<void> {
    await this.items.delete({ key: { S: key } }, this.held(claimId));
  }

  private held(claimId: string) {
    return and(eq("status", { S: "IN_PROGRESS" }), eq("claimId", { S: claimId }));
  }
}

function commitIntentOf(item: Item): CommitIntent | undefined {
  const tableId = item.commitTableId?.S;
  const readVersion = item.commitReadVersion?.N;
  const txnId = item.commitTxnId?.S;
  if (tableId === undefined || readVersion === undefined || txnId === undefined) return undefined;
  return { tableId, readVersion: Number(readVersion), txnId };
}

/** Creates the idempotency table when absent (local mode and tests; CDK creates it in AWS). */
export const ensureIdempotencyTable = (
  client: DynamoDBClient,
  tableName: string,
  options: { timeoutMs?: number } = {},
): Promise<void> => ensureTable(client, tableName, IDEMPOTENCY_TABLE_KEYS, options);
