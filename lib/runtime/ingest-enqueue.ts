/**
 * The enqueue function. S3 cannot notify an SQS FIFO queue, so EventBridge hands each
 * "Object Created" event under `<prefix>ingest/` to this function, which puts it on the ingestion
 * FIFO queue the ingest function consumes:
 *
 * 1. Key (relative to the storage root) -> target table. Keys that feed no table (folder markers,
 *    hidden or temporary files, paths without catalog/schema/table) are dropped with a log line:
 *    the ingest function would ignore them too.
 * 2. MessageGroupId = the table's lower-cased `catalog.schema.table`. The catalog stores names
 *    lower-cased, so two spellings of one table share a group and its commits stay serialized.
 *    A name with characters SQS refuses in a group id, or longer than 128, becomes its SHA-256.
 * 3. MessageDeduplicationId = SHA-256 of bucket, key and the event's `sequencer` (its `etag` when
 *    it has none). S3 may emit an event twice and EventBridge may deliver one twice: the copies
 *    carry the same sequencer and dedupe within SQS's 5-minute window; any later copy is a no-op
 *    anyway, because ingestion skips objects its Delta `txn` records already hold. A new upload
 *    to the same key has a new sequencer, so it is enqueued (and then found ingested: the key is
 *    the identity, see lib/ops/ingest.ts).
 * 4. The message body is the EventBridge event as received, which the ingest function parses.
 *
 * A failed send throws: Lambda retries the asynchronous invocation, then hands the event to the
 * function's dead-letter queue, whose depth is alarmed on.
 */
import { createHash } from "node:crypto";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, EventBridgeEvent, S3ObjectCreatedNotificationEventDetail } from "aws-lambda";
import { createSqsClient } from "../aws-clients.ts";
import { siltError } from "../errors.ts";
import { jsonLogger, type Logger } from "../logger.ts";
import { ingestTarget } from "../ops/ingest-keys.ts";
import { required } from "./env.ts";
import { withInvocation } from "./invocation.ts";

/**
 * What the EventBridge rule delivers: S3 "Object Created" events, checked at run time, since a
 * rule changed by hand could route other events here.
 */
export type ObjectCreatedEvent = EventBridgeEvent<string, S3ObjectCreatedNotificationEventDetail>;

export interface EnqueueOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** Key prefix of the storage root inside the bucket ("" or ending in "/"). */
  storagePrefix: string;
  logger: Logger;
}

export interface Enqueued {
  messageGroupId: string;
  messageDeduplicationId: string;
  messageId: string | undefined;
}

/** SQS's characters for a group id: alphanumerics and ASCII punctuation, 1 to 128 of them. */
const GROUP_ID = /^[\x21-\x7e]{1,128}$/;

export async function enqueueObjectCreated(
  event: ObjectCreatedEvent,
  opts: EnqueueOptions,
): Promise<Enqueued | undefined> {
  const object = event.detail?.object;
  if (event.source !== "aws.s3" || event["detail-type"] !== "Object Created" || !object?.key) {
    throw siltError("INVALID_INGEST_EVENT", { source: event.source, event: event["detail-type"] });
  }
  // Step 1.
  const key = object.key.startsWith(opts.storagePrefix)
    ? object.key.slice(opts.storagePrefix.length)
    : undefined;
  const target = key === undefined ? undefined : ingestTarget(key);
  if (target === undefined) {
    opts.logger.info("ignoring object outside ingest/<catalog>/<schema>/<table>/", {
      key: object.key,
    });
    return undefined;
  }
  // Steps 2-3.
  const table = `${target.catalog}.${target.schema}.${target.table}`.toLowerCase();
  const messageGroupId = GROUP_ID.test(table) ? table : sha256([table]);
  const messageDeduplicationId = sha256([
    event.detail.bucket.name,
    object.key,
    object.sequencer ?? object.etag ?? "",
  ]);
  // Step 4.
  const out = await opts.sqs.send(
    new SendMessageCommand({
      QueueUrl: opts.queueUrl,
      MessageBody: JSON.stringify(event),
      MessageGroupId: messageGroupId,
      MessageDeduplicationId: messageDeduplicationId,
    }),
  );
  opts.logger.info("ingest object enqueued", {
    key: object.key,
    table,
    messageGroupId,
    messageId: out.MessageId,
  });
  return { messageGroupId, messageDeduplicationId, messageId: out.MessageId };
}

const sha256 = (parts: string[]) =>
  createHash("sha256").update(JSON.stringify(parts)).digest("hex");

/** The Lambda handler (EventBridge rule target), configured from the environment. */
export function enqueueHandler(env: NodeJS.ProcessEnv = process.env) {
  let options: EnqueueOptions | undefined;
  return async (event: ObjectCreatedEvent, lambdaContext?: Context) => {
    options ??= {
      sqs: createSqsClient(),
      queueUrl: required(env, "SILT_INGEST_QUEUE_URL"),
      storagePrefix: env.SILT_STORAGE_PREFIX ?? "",
      logger: jsonLogger({ service: "silt", function: env.AWS_LAMBDA_FUNCTION_NAME }),
    };
    const opts = options;
    await withInvocation(opts.logger, lambdaContext, { operation: "ENQUEUE" }, () =>
      enqueueObjectCreated(event, opts),
    );
  };
}
