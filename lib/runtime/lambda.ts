/**
 * The Lambda side of the API: each function serves one operation's routes of the same Hono app
 * the local server runs. SDK clients and the context are built once per container (cold start)
 * from the environment the CDK stack sets.
 */
import type { LambdaEvent } from "hono/aws-lambda";
import { handle } from "hono/aws-lambda";
import { createApp, type Operation } from "../api/app.ts";
import { createDynamoClient, createS3Client } from "../aws-clients.ts";
import type { SiltContext } from "../context.ts";
import { internal } from "../errors.ts";
import { jsonLogger } from "../logger.ts";
import { S3ObjectStore } from "../storage/s3-store.ts";
import { buildContext } from "./context-factory.ts";

let context: Promise<SiltContext> | undefined;

/** The context for this container, from SILT_BUCKET, SILT_COMMITS_TABLE, SILT_CATALOG_TABLE. */
export function contextFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<SiltContext> {
  context ??= (async () => {
    const bucket = required(env, "SILT_BUCKET");
    const prefix = env.SILT_STORAGE_PREFIX ?? "";
    return buildContext({
      store: new S3ObjectStore({ client: createS3Client(), bucket, prefix }),
      storageRootUri: `s3://${bucket}/${prefix}`,
      dynamo: createDynamoClient(),
      commitsTable: required(env, "SILT_COMMITS_TABLE"),
      catalogTable: required(env, "SILT_CATALOG_TABLE"),
      // Optional so functions deployed without the table keep serving (the header is ignored).
      idempotencyTable: env.SILT_IDEMPOTENCY_TABLE || undefined,
      logger: jsonLogger({ service: "silt", function: env.AWS_LAMBDA_FUNCTION_NAME }),
      principal: env.SILT_PRINCIPAL ?? "silt",
    });
  })();
  return context;
}

/** A Lambda handler (API Gateway HTTP API, payload v2) serving one operation's routes. */
export function httpHandler(operation: Operation) {
  let handler: ReturnType<typeof handle> | undefined;
  return async (event: LambdaEvent, lambdaContext?: unknown) => {
    handler ??= handle(createApp(await contextFromEnv(), { operations: [operation] }));
    return handler(event, lambdaContext as never);
  };
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === "") {
    throw internal("SILT_MISCONFIGURED", `Environment variable ${name} is not set.`);
  }
  return value;
}
