/**
 * Idempotency-Key records (lib/api/idempotency.ts applies them to requests), one item per scoped
 * key in the idempotency table:
 *
 * 1. Claim: conditional PutItem of {key, status IN_PROGRESS, fingerprint, expiresAt} that
 *    succeeds only when no record exists or the one there has expired (TTL deletes lazily, so an
 *    expired record may still be readable).
 * 2. Claim lost: the record there, read back, says whether it is another request's
 *    (fingerprint), still running (IN_PROGRESS) or finished (COMPLETED, with its response).
 * 3. Complete stores the response; release deletes the claim so a retry can run.
 * 4. Records expire 24 h after the claim through the table's TTL attribute `expiresAt` (epoch
 *    seconds).
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ensureTable } from "./dynamo-item-store.ts";
import {
  attributeNotExists,
  IDEMPOTENCY_TABLE_KEYS,
  type ItemStore,
  lt,
  or,
} from "./item-store.ts";

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** The TTL attribute the CDK stack configures on the table. */
export const TTL_ATTRIBUTE = "expiresAt";

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

  /** Steps 1-2. */
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

  /** Step 3, success. */
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

  /** Step 3, failure. */
  async release(key: string): Promise<void> {
    await this.items.delete({ key: { S: key } });
  }
}

/** Creates the idempotency table when absent (local mode and tests; CDK creates it in AWS). */
export const ensureIdempotencyTable = (
  client: DynamoDBClient,
  tableName: string,
  options: { timeoutMs?: number } = {},
): Promise<void> => ensureTable(client, tableName, IDEMPOTENCY_TABLE_KEYS, options);
