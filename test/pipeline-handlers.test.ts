/**
 * The deployed ingestion path, handler by handler, on the stand-ins and with the event shapes AWS
 * delivers: S3 -> EventBridge "Object Created" -> the enqueue function -> SQS FIFO (an SQS-speaking
 * stub, reached by the real SDK over HTTP) -> the ingest function's SQS batch. A duplicated event,
 * a bad file and an unavailable rejected-files queue; the log lines and EMF metric records the
 * functions write.
 */
import { createHash } from "node:crypto";
import type {
  Context,
  S3ObjectCreatedNotificationEvent,
  SQSBatchResponse,
  SQSEvent,
} from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObjectCreatedEvent } from "../lib/runtime/ingest-enqueue.ts";
import { REJECTED_PREFIX, type RejectedFile } from "../lib/runtime/ingest-handler.ts";
import { contextFromEnv } from "../lib/runtime/lambda.ts";
import {
  captureStdout,
  type HttpHandler,
  httpEvent,
  type LambdaEnv,
  lambdaContext,
  sqlThroughHandler,
  startLambdaEnv,
} from "./helpers/lambda-env.ts";
import { lambdaRecord } from "./helpers/sqs-server.ts";

type EnqueueHandler = (e: ObjectCreatedEvent, c?: Context) => Promise<void>;
type IngestHandler = (e: SQSEvent, c?: Context) => Promise<SQSBatchResponse>;

let env: LambdaEnv;
let sql: HttpHandler;
let enqueue: EnqueueHandler;
let ingest: IngestHandler;
let sequencer = 0x1000;

const { ok, operations } = sqlThroughHandler(() => sql);
const put = async (key: string, text: string) =>
  (await contextFromEnv()).store.put(key, new TextEncoder().encode(text));

/** The event S3 sends EventBridge for a new object (a new sequencer per upload). */
function objectCreated(
  key: string,
  seq = (++sequencer).toString(16),
): S3ObjectCreatedNotificationEvent {
  return {
    version: "0",
    id: `evt-${seq}`,
    "detail-type": "Object Created",
    source: "aws.s3",
    account: "123456789012",
    time: "2026-01-01T00:00:00Z",
    region: "us-east-1",
    resources: [`arn:aws:s3:::${env.bucket}`],
    detail: {
      version: "0",
      bucket: { name: env.bucket },
      object: {
        key: `${env.prefix}${key}`,
        size: 42,
        etag: `etag-${key}`,
        "version-id": `version-${seq}`,
        sequencer: seq,
      },
      "request-id": `request-${seq}`,
      requester: "123456789012",
      "source-ip-address": "192.0.2.1",
      reason: "PutObject",
    },
  };
}

beforeAll(async () => {
  env = await startLambdaEnv();
  sql = (await import("../functions/sql.ts")).handler as unknown as HttpHandler;
  enqueue = (await import("../functions/ingest-enqueue.ts")).handler as EnqueueHandler;
  ingest = (await import("../functions/ingest.ts")).handler as IngestHandler;
  await ok("CREATE CATALOG pipe");
  await ok("CREATE SCHEMA pipe.s");
});
afterAll(async () => {
  await env?.close();
});

describe("HTTP functions", () => {
  it("log each request's lines with its request ids and report its commits as metrics", async () => {
    await ok("CREATE TABLE pipe.s.http (id INT) USING DELTA");
    const { result, lines } = await captureStdout(() =>
      sql(
        httpEvent("POST", "/api/v1/sql", {
          statement: "INSERT INTO pipe.s.http VALUES (1), (2), (3)",
        }),
        lambdaContext("http-1"),
      ),
    );
    expect(result.statusCode).toBe(200);
    const commit = lines.find((l) => l.message === "commit");
    expect(commit).toMatchObject({
      requestId: "http-1",
      apiRequestId: "req-http",
      table: "pipe.s.http",
      operation: "WRITE",
      version: 1,
      rows: 3,
      Operation: "WRITE",
      CommitsCommitted: 1,
      RowsWritten: 3,
    });
    for (const line of lines) expect(line.requestId, JSON.stringify(line)).toBe("http-1");
  });
});

describe("enqueue function (EventBridge -> SQS FIFO)", () => {
  it("sends one message per object, grouped by table, deduplicated per upload", async () => {
    const before = env.sqs.sent(env.ingestQueueUrl).length;
    const first = objectCreated("ingest/Pipe/S/Orders/2026/a.csv");
    await enqueue(first, lambdaContext("enq-1"));
    // EventBridge delivers the same event a second time.
    await enqueue(structuredClone(first), lambdaContext("enq-2"));
    // The same key uploaded again: a new sequencer.
    await enqueue(objectCreated("ingest/Pipe/S/Orders/2026/a.csv"), lambdaContext("enq-3"));
    await enqueue(objectCreated("ingest/pipe/s/orders/b.csv"), lambdaContext("enq-4"));
    const sent = env.sqs.sent(env.ingestQueueUrl).slice(before);
    expect(sent).toHaveLength(4);
    // Group: the table as the catalog stores it (lower-cased), whatever the key's spelling.
    expect(sent.map((m) => m.messageGroupId)).toEqual(Array(4).fill("pipe.s.orders"));
    const dedup = sent.map((m) => m.messageDeduplicationId!);
    for (const id of dedup) expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(dedup[1]).toBe(dedup[0]);
    expect(new Set(dedup).size).toBe(3);
    // The body is the event itself, which the ingest function parses.
    expect(JSON.parse(sent[0]!.body)).toEqual(first);
    expect(new Set(env.sqs.targets)).toEqual(new Set(["AmazonSQS.SendMessage"]));
  });

  it("hashes a table name SQS would refuse as a group id", async () => {
    const before = env.sqs.sent(env.ingestQueueUrl).length;
    await enqueue(objectCreated("ingest/pipe/s/tablé with space/x.csv"), lambdaContext("enq-5"));
    const [message] = env.sqs.sent(env.ingestQueueUrl).slice(before);
    expect(message!.messageGroupId).toBe(
      createHash("sha256")
        .update(JSON.stringify(["pipe.s.tablé with space"]))
        .digest("hex"),
    );
  });

  it("drops keys that feed no table and fails loudly on events that are not S3 Object Created", async () => {
    const before = env.sqs.sent(env.ingestQueueUrl).length;
    await enqueue(objectCreated("ingest/pipe/s/orders/"), lambdaContext("enq-6"));
    await enqueue(objectCreated("ingest/pipe/s/orders/_tmp.csv"), lambdaContext("enq-7"));
    await enqueue(objectCreated("ingest/pipe/s/a.csv"), lambdaContext("enq-8"));
    expect(env.sqs.sent(env.ingestQueueUrl).length).toBe(before);
    const scheduled = {
      ...objectCreated("x"),
      "detail-type": "Scheduled Event",
      source: "aws.events",
    };
    await expect(enqueue(scheduled, lambdaContext("enq-9"))).rejects.toMatchObject({
      errorClass: "INVALID_INGEST_EVENT",
    });
    expect(env.sqs.sent(env.ingestQueueUrl).length).toBe(before);
  });

  it("throws when SQS refuses the message, so Lambda retries the event", async () => {
    env.sqs.failNext(1, "AccessDenied");
    await expect(
      enqueue(objectCreated("ingest/pipe/s/orders/c.csv"), lambdaContext("enq-10")),
    ).rejects.toMatchObject({ name: "AccessDenied" });
  });
});

describe("ingest function (SQS FIFO batch -> one commit per table)", () => {
  it("commits the good file once despite a duplicated message and dead-letters the bad file", async () => {
    await ok("CREATE TABLE pipe.s.events (id INT, name STRING) USING DELTA");
    await put("ingest/pipe/s/events/good.csv", "id,name\n1,ann\n2,bob\n");
    await put("ingest/pipe/s/events/bad.csv", "id,name,colour\n3,cy,red\n");
    const good = objectCreated("ingest/pipe/s/events/good.csv");
    const bad = objectCreated("ingest/pipe/s/events/bad.csv");
    const before = env.sqs.sent(env.ingestQueueUrl).length;
    await enqueue(good, lambdaContext("enq-g"));
    await enqueue(bad, lambdaContext("enq-b"));
    // The duplicate of the good event, sent after SQS's 5-minute deduplication window closed.
    await enqueue(structuredClone(good), lambdaContext("enq-g2"));
    const messages = env.sqs.sent(env.ingestQueueUrl).slice(before);
    expect(messages).toHaveLength(3);
    const batch: SQSEvent = {
      Records: messages.map((m) => lambdaRecord(env.ingestQueueUrl, m)),
    };

    const { result, lines } = await captureStdout(() => ingest(batch, lambdaContext("ingest-1")));
    expect(result).toEqual({ batchItemFailures: [] });
    expect((await ok("SELECT * FROM pipe.s.events ORDER BY id")).rows).toEqual([
      [1, "ann"],
      [2, "bob"],
    ]);
    expect(await operations("pipe.s.events")).toEqual(["WRITE", "CREATE TABLE"]);

    // The bad file's record went to the rejected-files queue and to the bucket.
    const rejected = env.sqs
      .sent(env.rejectedQueueUrl)
      .map((m) => JSON.parse(m.body) as RejectedFile);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({
      key: "ingest/pipe/s/events/bad.csv",
      table: "pipe.s.events",
      errorClass: "DELTA_SCHEMA_MISMATCH",
      messageId: messages[1]!.messageId,
    });
    expect(rejected[0]!.message).toContain("`colour`");
    const store = (await contextFromEnv()).store;
    const record = JSON.parse(
      new TextDecoder().decode(
        await store.get(
          `${REJECTED_PREFIX}ingest/pipe/s/events/bad.csv.${messages[1]!.messageId}.json`,
        ),
      ),
    ) as RejectedFile;
    expect(record.errorClass).toBe("DELTA_SCHEMA_MISMATCH");

    // Every line carries the invocation's request id; the commit line and the batch line are
    // also EMF records.
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.requestId, JSON.stringify(line)).toBe("ingest-1");
    const commit = lines.find((l) => l.message === "commit");
    expect(commit).toMatchObject({
      table: "pipe.s.events",
      operation: "WRITE",
      version: 1,
      rows: 2,
      filesAdded: 1,
      Operation: "WRITE",
      CommitsCommitted: 1,
      RowsWritten: 2,
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: "Silt",
            Dimensions: [["Operation"]],
            Metrics: [
              { Name: "CommitsCommitted", Unit: "Count" },
              { Name: "RowsWritten", Unit: "Count" },
              { Name: "BytesWritten", Unit: "Bytes" },
            ],
          },
        ],
      },
    });
    expect(commit!.BytesWritten).toBe(commit!.bytes);
    expect(commit!.bytes as number).toBeGreaterThan(0);
    const summary = lines.find((l) => l.message === "ingest batch done");
    expect(summary).toMatchObject({
      Operation: "INGEST",
      IngestedObjects: 1,
      RejectedObjects: 1,
      messages: 3,
      tables: ["pipe.s.events"],
    });
    expect(lines.find((l) => l.message === "ingest object rejected")).toMatchObject({
      level: "error",
      key: "ingest/pipe/s/events/bad.csv",
      errorClass: "DELTA_SCHEMA_MISMATCH",
      reason: rejected[0]!.message,
    });

    // SQS redelivers the good message later (visibility timeout passed): still one commit.
    const again = await ingest(
      { Records: [lambdaRecord(env.ingestQueueUrl, messages[0]!, 2)] },
      lambdaContext("ingest-2"),
    );
    expect(again).toEqual({ batchItemFailures: [] });
    expect(await operations("pipe.s.events")).toEqual(["WRITE", "CREATE TABLE"]);
  });

  it("returns a bad file's message for redelivery when the rejected-files queue is unavailable", async () => {
    await ok("CREATE TABLE pipe.s.strict (id INT) USING DELTA");
    await put("ingest/pipe/s/strict/wrong.csv", "id,extra\n1,2\n");
    const before = env.sqs.sent(env.ingestQueueUrl).length;
    await enqueue(objectCreated("ingest/pipe/s/strict/wrong.csv"), lambdaContext("enq-s"));
    const [message] = env.sqs.sent(env.ingestQueueUrl).slice(before);
    const rejectedBefore = env.sqs.sent(env.rejectedQueueUrl).length;
    env.sqs.failNext(1, "AccessDenied");
    const res = await ingest(
      { Records: [lambdaRecord(env.ingestQueueUrl, message!)] },
      lambdaContext("ingest-3"),
    );
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: message!.messageId }] });
    expect(env.sqs.sent(env.rejectedQueueUrl).length).toBe(rejectedBefore);
    expect(await operations("pipe.s.strict")).toEqual(["CREATE TABLE"]);

    // Redelivered with the queue back: recorded, acknowledged, still nothing committed.
    const retry = await ingest(
      { Records: [lambdaRecord(env.ingestQueueUrl, message!, 2)] },
      lambdaContext("ingest-4"),
    );
    expect(retry).toEqual({ batchItemFailures: [] });
    expect(env.sqs.sent(env.rejectedQueueUrl).length).toBe(rejectedBefore + 1);
    expect(await operations("pipe.s.strict")).toEqual(["CREATE TABLE"]);
  });
});
