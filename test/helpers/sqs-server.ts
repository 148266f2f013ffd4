/**
 * An SQS endpoint for tests: a loopback HTTP server speaking the protocol AWS SDK v3's SQS client
 * speaks (AWS JSON 1.0: POST /, `X-Amz-Target: AmazonSQS.<Action>`), so the real client sends
 * real requests over the wire. Only SendMessage is implemented, with the checks SQS makes that a
 * sender can get wrong: the queue must exist, a FIFO queue needs a MessageGroupId and (without
 * content-based deduplication) a MessageDeduplicationId, and the answer carries the body's MD5,
 * which the SDK verifies. Messages are kept as sent (no deduplication window, no receiving):
 * tests look at what was sent and turn it into the SQS event records Lambda would deliver.
 */
import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SQSRecord } from "aws-lambda";

export const ACCOUNT = "123456789012";
const REGION = "us-east-1";

export interface SentMessage {
  messageId: string;
  body: string;
  messageGroupId?: string;
  messageDeduplicationId?: string;
  sequenceNumber?: string;
  sentAt: number;
}

export interface SqsStub {
  endpoint: string;
  /** Creates a queue (FIFO when the name ends in `.fifo`) and returns its URL. */
  createQueue(name: string): string;
  sent(queueUrl: string): SentMessage[];
  /** `X-Amz-Target` of every request received, in order. */
  targets: string[];
  /** The next `count` SendMessage calls fail with this SQS error code (fault injection). */
  failNext(count: number, code: string): void;
  close(): Promise<void>;
}

export async function startSqsStub(): Promise<SqsStub> {
  const queues = new Map<string, SentMessage[]>();
  const targets: string[] = [];
  let failures: { count: number; code: string } = { count: 0, code: "" };
  let sequence = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) =>
      reply(res, 500, { __type: "InternalFailure", message: String(err) }),
    );
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers["x-amz-target"] ?? "");
    targets.push(target);
    if (req.method !== "POST" || !String(req.headers["content-type"]).includes("amz-json-1.0")) {
      return reply(res, 400, error("InvalidAction", "Expected an AWS JSON 1.0 request."));
    }
    if (target !== "AmazonSQS.SendMessage") {
      return reply(res, 400, error("UnsupportedOperation", `${target} is not implemented here.`));
    }
    if (failures.count > 0) {
      failures = { ...failures, count: failures.count - 1 };
      return reply(res, 400, error(failures.code, "Injected failure."));
    }
    const input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, string>;
    const messages = queues.get(input.QueueUrl ?? "");
    if (messages === undefined) {
      return reply(res, 400, error("QueueDoesNotExist", "The specified queue does not exist."));
    }
    const fifo = input.QueueUrl!.endsWith(".fifo");
    for (const param of fifo ? ["MessageGroupId", "MessageDeduplicationId"] : []) {
      if (!input[param]) {
        return reply(res, 400, error("MissingParameter", `The request must contain ${param}.`));
      }
    }
    const message: SentMessage = {
      messageId: randomUUID(),
      body: input.MessageBody ?? "",
      messageGroupId: input.MessageGroupId,
      messageDeduplicationId: input.MessageDeduplicationId,
      sequenceNumber: fifo ? String(++sequence).padStart(20, "0") : undefined,
      sentAt: Date.now(),
    };
    messages.push(message);
    reply(res, 200, {
      MessageId: message.messageId,
      MD5OfMessageBody: createHash("md5").update(message.body, "utf8").digest("hex"),
      ...(fifo ? { SequenceNumber: message.sequenceNumber } : {}),
    });
  };

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    targets,
    createQueue(name) {
      const url = `${endpoint}/${ACCOUNT}/${name}`;
      queues.set(url, []);
      return url;
    },
    sent(queueUrl) {
      return [...(queues.get(queueUrl) ?? [])];
    },
    failNext(count, code) {
      failures = { count, code };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function error(code: string, message: string) {
  return { __type: `com.amazonaws.sqs#${code}`, message };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const code = (body as { __type?: string }).__type?.split("#")[1];
  res.writeHead(status, {
    "content-type": "application/x-amz-json-1.0",
    "x-amzn-requestid": randomUUID(),
    // What SQS adds for clients of its older query protocol; the SDK reads the code from it.
    ...(status >= 400 && code ? { "x-amzn-query-error": `${code};Sender` } : {}),
  });
  res.end(JSON.stringify(body));
}

/** The record Lambda's SQS event source delivers for a message (receive count 1 by default). */
export function lambdaRecord(queueUrl: string, message: SentMessage, receiveCount = 1): SQSRecord {
  const name = queueUrl.slice(queueUrl.lastIndexOf("/") + 1);
  return {
    messageId: message.messageId,
    receiptHandle: `rh-${message.messageId}-${receiveCount}`,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: "AROAEXAMPLE:silt-ingest-enqueue",
      ApproximateFirstReceiveTimestamp: String(message.sentAt),
      ...(message.messageGroupId === undefined
        ? {}
        : {
            MessageGroupId: message.messageGroupId,
            MessageDeduplicationId: message.messageDeduplicationId,
            SequenceNumber: message.sequenceNumber,
          }),
    },
    messageAttributes: {},
    md5OfBody: createHash("md5").update(message.body, "utf8").digest("hex"),
    eventSource: "aws:sqs",
    eventSourceARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`,
    awsRegion: REGION,
  };
}
