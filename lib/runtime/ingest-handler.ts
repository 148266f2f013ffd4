/**
 * The ingest function: a batch of SQS FIFO messages, each an S3 "Object Created" event (as
 * EventBridge delivers it, or an S3 notification with `Records`), becomes one ingestion per table.
 *
 * 1. Parse every message into object keys relative to the storage root (EventBridge keys are
 *    plain; S3 notification keys are URL-encoded with '+' for spaces). Keys outside
 *    `ingest/<catalog>/<schema>/<table>/`, S3 test events and unparseable bodies are acknowledged:
 *    retrying them cannot help (an unparseable body is also dead-lettered, so it is seen).
 * 2. Group the keys by table, keeping the batch's order; one message group per table means a batch
 *    normally holds one table, and ingestObjects makes one commit per table.
 * 3. Objects ingestion rejects (bad format, schema mismatch, missing table) are permanent
 *    failures: each is written to the dead-letter sink with the reason and its message is
 *    acknowledged, so a bad file never blocks the files behind it.
 * 4. Anything else that fails (throttling, network, a race lost too often) is retryable: every
 *    message of that table is returned in `batchItemFailures`, so SQS redelivers only those, and
 *    after maxReceiveCount moves them to the queue's DLQ (whose depth has an alarm). Redelivery is
 *    safe because ingestion skips objects its `txn` records already hold.
 */
import type { QualifiedName } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { SiltError } from "../errors.ts";
import { ingestObjects, ingestTarget } from "../ops/ingest.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { contextFromEnv } from "./lambda.ts";

export interface SqsRecord {
  messageId: string;
  body: string;
  attributes?: Record<string, string | undefined>;
}

export interface SqsEvent {
  Records: SqsRecord[];
}

export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

export interface RejectedFile {
  key: string;
  table?: string;
  errorClass: string;
  message: string;
  messageId: string;
  rejectedAt: string;
}

/** Where permanently bad inputs go, with the reason. */
export interface DeadLetterSink {
  reject(file: RejectedFile): Promise<void>;
}

/** Storage-root prefix under which rejected-file records are written (outside `ingest/`). */
export const REJECTED_PREFIX = "_ingest_rejected/";

/**
 * Records rejected files as JSON objects in the bucket, next to (not under) `ingest/` so the
 * record does not trigger ingestion itself. Readable by the caller who dropped the file, and a
 * metric filter on the "ingest object rejected" log line can alarm.
 */
export function storeDeadLetterSink(store: ObjectStore): DeadLetterSink {
  return {
    async reject(file) {
      const name = `${REJECTED_PREFIX}${file.key}.${file.messageId}.json`;
      await store.put(name, new TextEncoder().encode(`${JSON.stringify(file, null, 2)}\n`));
    },
  };
}

export async function handleIngestBatch(
  ctx: SiltContext,
  event: SqsEvent,
  opts: { deadLetters: DeadLetterSink; storagePrefix?: string },
): Promise<SqsBatchResponse> {
  const prefix = opts.storagePrefix ?? "";
  const failed = new Set<string>();
  const byTable = new Map<string, { name: QualifiedName; keys: string[]; messages: string[] }>();
  const messagesOfKey = new Map<string, string[]>();

  // Step 1.
  for (const record of event.Records) {
    let keys: string[];
    try {
      keys = objectKeysOf(record.body);
    } catch (err) {
      await deadLetter(ctx, opts.deadLetters, failed, {
        key: "(unparseable message)",
        errorClass: "INVALID_INGEST_EVENT",
        message: `Message body is not an S3 object-created event: ${(err as Error).message}`,
        messageId: record.messageId,
      });
      continue;
    }
    for (const fullKey of keys) {
      if (!fullKey.startsWith(prefix)) continue;
      const key = fullKey.slice(prefix.length);
      const name = ingestTarget(key);
      if (name === undefined) {
        ctx.logger.info("ignoring object outside ingest/<catalog>/<schema>/<table>/", { key });
        continue;
      }
      // Step 2.
      const id = JSON.stringify([name.catalog, name.schema, name.table]);
      let group = byTable.get(id);
      if (group === undefined) {
        group = { name, keys: [], messages: [] };
        byTable.set(id, group);
      }
      group.keys.push(key);
      if (!group.messages.includes(record.messageId)) group.messages.push(record.messageId);
      messagesOfKey.set(key, [...(messagesOfKey.get(key) ?? []), record.messageId]);
    }
  }

  for (const group of byTable.values()) {
    const table = `${group.name.catalog}.${group.name.schema}.${group.name.table}`;
    try {
      const result = await ingestObjects(ctx, group.name, group.keys);
      // Step 3.
      for (const r of result.rejected) {
        for (const messageId of messagesOfKey.get(r.key) ?? []) {
          await deadLetter(ctx, opts.deadLetters, failed, { ...r, table, messageId });
        }
      }
    } catch (err) {
      if (err instanceof SiltError && err.status >= 400 && err.status < 500 && err.status !== 409) {
        // The table itself is unusable (dropped, unknown, protocol Silt cannot write): every
        // object of it is dead-lettered with that reason rather than retried forever.
        for (const key of new Set(group.keys)) {
          for (const messageId of messagesOfKey.get(key) ?? []) {
            await deadLetter(ctx, opts.deadLetters, failed, {
              key,
              table,
              errorClass: err.errorClass,
              message: err.message,
              messageId,
            });
          }
        }
        continue;
      }
      // Step 4.
      ctx.logger.warn("ingest failed, messages will be redelivered", {
        table,
        error: (err as Error).message,
      });
      for (const m of group.messages) failed.add(m);
    }
  }
  return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
}

async function deadLetter(
  ctx: SiltContext,
  sink: DeadLetterSink,
  failed: Set<string>,
  file: Omit<RejectedFile, "rejectedAt">,
): Promise<void> {
  ctx.logger.error("ingest object rejected", { ...file });
  try {
    await sink.reject({ ...file, rejectedAt: new Date(ctx.clock()).toISOString() });
  } catch (err) {
    // Without its record the rejection would be silent: let SQS redeliver and try again.
    ctx.logger.warn("could not record a rejected object", { error: (err as Error).message });
    failed.add(file.messageId);
  }
}

/** The Lambda handler (SQS event source with ReportBatchItemFailures), context from the env. */
export function ingestHandler(env: NodeJS.ProcessEnv = process.env) {
  return async (event: SqsEvent): Promise<SqsBatchResponse> => {
    const ctx = await contextFromEnv(env);
    return handleIngestBatch(ctx, event, {
      deadLetters: storeDeadLetterSink(ctx.store),
      storagePrefix: env.SILT_STORAGE_PREFIX ?? "",
    });
  };
}

/** Object keys of one SQS message body (module comment, step 1). */
export function objectKeysOf(body: string): string[] {
  const event = JSON.parse(body) as Record<string, unknown>;
  if (event === null || typeof event !== "object") throw new Error("not a JSON object");
  if (event.Event === "s3:TestEvent") return [];
  const detail = event.detail as { object?: { key?: unknown } } | undefined;
  if (event.source === "aws.s3" && detail !== undefined) {
    if (event["detail-type"] !== "Object Created") return [];
    const key = detail.object?.key;
    if (typeof key !== "string") throw new Error("detail.object.key is missing");
    return [key];
  }
  if (Array.isArray(event.Records)) {
    return event.Records.filter((r: { eventName?: string }) =>
      String(r.eventName ?? "").startsWith("ObjectCreated:"),
    ).map((r: { s3?: { object?: { key?: unknown } } }) => {
      const key = r.s3?.object?.key;
      if (typeof key !== "string") throw new Error("Records[].s3.object.key is missing");
      return decodeURIComponent(key.replaceAll("+", " "));
    });
  }
  throw new Error("neither an EventBridge S3 event nor an S3 notification");
}
