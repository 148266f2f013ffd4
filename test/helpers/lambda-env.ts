/**
 * The environment a deployed Silt function sees, on the stand-ins: s3rver for the bucket, dynalite
 * for the commit and catalog tables, an SQS stub for the queues, and the SILT_* / AWS_ENDPOINT_URL_*
 * variables the CDK stack sets pointing at them. Handlers loaded from functions/ then build their
 * context from process.env exactly as in Lambda (lib/runtime/lambda.ts contextFromEnv).
 */
import type { Context } from "aws-lambda";
import { ensureCatalogTable } from "../../lib/catalog/catalog-store.ts";
import { ensureCommitTable } from "../../lib/commit/arbiter.ts";
import { startDynamo } from "./dynamo-emulator.ts";
import { startS3Emulator } from "./s3-emulator.ts";
import { type SqsStub, startSqsStub } from "./sqs-server.ts";

export interface LambdaEnv {
  bucket: string;
  /** Key prefix of the storage root in the bucket ("" on the emulator). */
  prefix: string;
  sqs: SqsStub;
  ingestQueueUrl: string;
  rejectedQueueUrl: string;
  close(): Promise<void>;
}

export async function startLambdaEnv(): Promise<LambdaEnv> {
  const saved = { ...process.env };
  const s3 = await startS3Emulator();
  const dynamo = await startDynamo();
  const sqs = await startSqsStub();
  const commits = dynamo.tableName("fn_commits");
  const catalog = dynamo.tableName("fn_catalog");
  await ensureCommitTable(dynamo.client, commits);
  await ensureCatalogTable(dynamo.client, catalog);
  const ingestQueueUrl = sqs.createQueue("silt-ingest.fifo");
  const rejectedQueueUrl = sqs.createQueue("silt-rejected-files");
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    SILT_BUCKET: s3.bucket,
    SILT_STORAGE_PREFIX: s3.prefix,
    SILT_COMMITS_TABLE: commits,
    SILT_CATALOG_TABLE: catalog,
    SILT_INGEST_QUEUE_URL: ingestQueueUrl,
    SILT_REJECTED_QUEUE_URL: rejectedQueueUrl,
    AWS_LAMBDA_FUNCTION_NAME: "silt-test",
    // Callers are not authenticated here: these tests are about the functions, not about auth.
    SILT_AUTH: "none",
  });
  return {
    bucket: s3.bucket,
    prefix: s3.prefix,
    sqs,
    ingestQueueUrl,
    rejectedQueueUrl,
    async close() {
      process.env = saved;
      await sqs.close();
      await dynamo.close();
      await s3.close();
    },
  };
}

/** A Lambda context object with a fixed request id and the given time left (ms). */
export function lambdaContext(
  awsRequestId: string,
  remainingMs: () => number = () => 600_000,
): Context {
  const unused = () => {
    throw new Error(
      "Silt's handlers return promises; the callback-style context methods are unused",
    );
  };
  return {
    awsRequestId,
    functionName: "silt-test",
    functionVersion: "$LATEST",
    invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:silt-test",
    memoryLimitInMB: "1024",
    logGroupName: "/aws/lambda/silt-test",
    logStreamName: "2026/01/01/[$LATEST]0123456789abcdef",
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: remainingMs,
    done: unused,
    fail: unused,
    succeed: unused,
  };
}

/** Lines the code under test writes to stdout while `fn` runs, parsed as JSON where they are. */
export async function captureStdout<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const parsed = String(chunk)
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return undefined;
        }
      });
    // Our JSON lines are kept out of the test output; anything else passes through.
    if (parsed.length === 0 || parsed.some((p) => p === undefined)) {
      return original(chunk, ...(rest as []));
    }
    lines.push(...(parsed as Record<string, unknown>[]));
    return true;
  }) as typeof process.stdout.write;
  try {
    return { result: await fn(), lines };
  } finally {
    process.stdout.write = original;
  }
}

/**
 * An API Gateway HTTP API (payload 2.0) event, as the functions behind the API receive it;
 * `principal` adds the IAM authorizer context API Gateway would.
 */
export function httpEvent(
  method: string,
  path: string,
  body?: unknown,
  query = "",
  principal?: string,
) {
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: query,
    headers: { "content-type": "application/json", host: "api.example.com" },
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.example.com",
      domainPrefix: "api",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "vitest" },
      requestId: "req-http",
      routeKey: "$default",
      stage: "$default",
      time: "01/Jan/2026:00:00:00 +0000",
      timeEpoch: 1767225600000,
      ...(principal === undefined ? {} : { authorizer: { iam: { userArn: principal } } }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

export type HttpHandler = (
  e: ReturnType<typeof httpEvent>,
  c?: unknown,
) => Promise<{ statusCode: number; body: string }>;

/** SQL through the sql function's handler (read on each call, so it can be loaded later). */
export function sqlThroughHandler(handler: () => HttpHandler) {
  const ok = async (statement: string) => {
    const res = await handler()(httpEvent("POST", "/api/v1/sql", { statement }));
    if (res.statusCode !== 200) throw new Error(`${statement}\n${res.statusCode} ${res.body}`);
    return JSON.parse(res.body) as { columns: { name: string }[]; rows: unknown[][] };
  };
  /** A table's operations, newest first. */
  const operations = async (table: string) => {
    const h = await ok(`DESCRIBE HISTORY ${table}`);
    const at = h.columns.findIndex((c) => c.name === "operation");
    return h.rows.map((r) => r[at]);
  };
  return { ok, operations };
}
