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
 *    failures: each is written to the dead-letter sinks with the reason (deployed: a message on
 *    the rejected-files SQS queue and a JSON record under `_ingest_rejected/` in the bucket) and
 *    its message is acknowledged, so a bad file never blocks the files behind it.
 * 4. Anything else that fails (throttling, network, a race lost too often) is retryable: every
 *    message of that table is returned in `batchItemFailures`, so SQS redelivers only those, and
 *    after maxReceiveCount moves them to the queue's DLQ (whose depth has an alarm). Redelivery is
 *    safe because ingestion skips objects its `txn` records already hold.
 * 5. One log line per batch, which is also the IngestedObjects / RejectedObjects metric record
 *    (lib/metrics.ts); each commit is reported on its own by the commit loop.
 */
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { createSqsClient } from "../aws-clients.ts";
import type { QualifiedName } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { SiltError } from "../errors.ts";
import { emitMetrics } from "../metrics.ts";
import { type IngestResult, ingestObjects } from "../ops/ingest.ts";
import { ingestTarget } from "../ops/ingest-keys.ts";
import { displayName } from "../ops/open-table.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { withInvocation } from "./invocation.ts";
import { contextFromEnv } from "./lambda.ts";

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

/**
 * Sends each rejected file's record, as JSON, to an SQS queue, where an operator or a consumer
 * sees why a file was refused. Unlike the ingest queue's own dead-letter queue, which receives
 * the messages that kept failing, it receives a reason per file.
 */
export function sqsDeadLetterSink(client: SQSClient, queueUrl: string): DeadLetterSink {
  return {
    async reject(file) {
      await client.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(file) }),
      );
    },
  };
}

/** Records each rejection in every sink, in order; the first failure fails the rejection. */
export function allSinks(...sinks: DeadLetterSink[]): DeadLetterSink {
  return {
    async reject(file) {
      for (const sink of sinks) await sink.reject(file);
    },
  };
}

export async function handleIngestBatch(
  ctx: SiltContext,
  event: SQSEvent,
  opts: { deadLetters: DeadLetterSink; storagePrefix?: string },
): Promise<SQSBatchResponse> {
  const prefix = opts.storagePrefix ?? "";
  const failed = new Set<string>();
  const byTable = new Map<string, { name: QualifiedName; keys: string[]; messages: string[] }>();
  const messagesOfKey = new Map<string, string[]>();
  const counts = { ingested: 0, alreadyIngested: 0, rejected: 0 };

  // Step 1.
  for (const record of event.Records) {
    let keys: string[];
    try {
      keys = objectKeysOf(record.body);
    } catch (err) {
      await deadLetter(ctx, opts.deadLetters, failed, counts, {
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
    const table = displayName(group.name);
    try {
      const result = await ingestOrReject(ctx, group.name, group.keys);
      counts.ingested += result.ingested.length;
      counts.alreadyIngested += result.alreadyIngested.length;
      // Step 3.
      for (const r of result.rejected) {
        for (const messageId of messagesOfKey.get(r.key) ?? []) {
          await deadLetter(ctx, opts.deadLetters, failed, counts, { ...r, table, messageId });
        }
      }
    } catch (err) {
      // Step 4.
      ctx.logger.warn("ingest failed, messages will be redelivered", {
        table,
        error: (err as Error).message,
      });
      for (const m of group.messages) failed.add(m);
    }
  }
  // Step 5.
  emitMetrics(
    "ingest batch done",
    "INGEST",
    { IngestedObjects: counts.ingested, RejectedObjects: counts.rejected },
    {
      messages: event.Records.length,
      tables: [...byTable.values()].map((g) => displayName(g.name)),
      alreadyIngested: counts.alreadyIngested,
      retried: failed.size,
    },
  );
  return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
}

/**
 * ingestObjects, with a table that is itself unusable (dropped, unknown, a protocol Silt cannot
 * write) answered as every object rejected with that reason rather than retried forever. Any
 * other failure is thrown: it is retryable. The local ingester (local-ingest.ts) shares it.
 */
export async function ingestOrReject(
  ctx: SiltContext,
  name: QualifiedName,
  keys: readonly string[],
): Promise<IngestResult> {
  try {
    return await ingestObjects(ctx, name, keys);
  } catch (err) {
    if (
      !(err instanceof SiltError) ||
      err.status < 400 ||
      err.status >= 500 ||
      err.status === 409
    ) {
      throw err;
    }
    const unique = [...new Set(keys)];
    return {
      table: displayName(name),
      version: -1,
      commits: 0,
      ingested: [],
      committed: {},
      alreadyIngested: [],
      rejected: unique.map((key) => ({ key, errorClass: err.errorClass, message: err.message })),
      numOutputRows: 0,
    };
  }
}

async function deadLetter(
  ctx: SiltContext,
  sink: DeadLetterSink,
  failed: Set<string>,
  counts: { rejected: number },
  file: Omit<RejectedFile, "rejectedAt">,
): Promise<void> {
  const { message: reason, ...fields } = file;
  ctx.logger.error("ingest object rejected", { ...fields, reason });
  try {
    await sink.reject({ ...file, rejectedAt: new Date(ctx.clock()).toISOString() });
    counts.rejected++;
  } catch (err) {
    // Without its record the rejection would be silent: let SQS redeliver and try again.
    ctx.logger.warn("could not record a rejected object", { error: (err as Error).message });
    failed.add(file.messageId);
  }
}

/**
 * The Lambda handler (SQS event source with ReportBatchItemFailures), context from the env. The
 * ingest function acts as the service principal (SILT_PRINCIPAL), not as a caller: who dropped
 * the file is decided by who may write under ingest/ in the bucket.
 */
export function ingestHandler(env: NodeJS.ProcessEnv = process.env) {
  let deadLetters: DeadLetterSink | undefined;
  return async (event: SQSEvent, lambdaContext?: Context): Promise<SQSBatchResponse> => {
    const ctx = await contextFromEnv(env);
    deadLetters ??= deployedSinks(ctx.store, env.SILT_REJECTED_QUEUE_URL || undefined);
    const sinks = deadLetters;
    return withInvocation(ctx.logger, lambdaContext, { operation: "INGEST" }, () =>
      handleIngestBatch(ctx, event, {
        deadLetters: sinks,
        storagePrefix: env.SILT_STORAGE_PREFIX ?? "",
      }),
    );
  };
}

/**
 * The rejected-files queue when the stack configured one (it notifies, and holds the record 14
 * days), plus the bucket record (it stays until deleted, next to the data it is about).
 */
function deployedSinks(store: ObjectStore, rejectedQueueUrl: string | undefined): DeadLetterSink {
  const bucketRecords = storeDeadLetterSink(store);
  if (rejectedQueueUrl === undefined) return bucketRecords;
  return allSinks(sqsDeadLetterSink(createSqsClient(), rejectedQueueUrl), bucketRecords);
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
