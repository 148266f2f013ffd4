/**
 * The Lambda side of the API: each function serves one operation's routes of the same Hono app
 * the local server runs. SDK clients and the context are built once per container (cold start)
 * from the environment the CDK stack sets; each request then runs as its authenticated caller
 * (SILT_AUTH, lib/auth/principal.ts).
 */
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { handle, type LambdaEvent } from "hono/aws-lambda";
import { LAMBDA_RESPONSE_BYTES } from "../api/answer.ts";
import { createApp } from "../api/app.ts";
import type { Operation } from "../api/operations.ts";
import { StsTableCredentials } from "../auth/credentials.ts";
import { parseAuthMode } from "../auth/principal.ts";
import { createDynamoClient, createS3Client, createStsClient } from "../aws-clients.ts";
import type { SiltContext } from "../context.ts";
import { jsonLogger } from "../logger.ts";
import { S3ObjectStore } from "../storage/s3-store.ts";
import { buildContext } from "./context-factory.ts";
import { optionalMilliseconds, postCommitMode, required } from "./env.ts";
import { withInvocation } from "./invocation.ts";

let context: Promise<SiltContext> | undefined;

/**
 * The context for this container, from SILT_BUCKET, SILT_COMMITS_TABLE, SILT_CATALOG_TABLE (and,
 * where credentials are vended, SILT_TABLE_ACCESS_ROLE_ARN for READ and SILT_TABLE_WRITE_ROLE_ARN
 * for READ_WRITE; SILT_POST_COMMIT for how commits checkpoint; SILT_REQUEST_TIMEOUT_MS, the
 * function's timeout, and SILT_OPTIMIZE_TIME_BUDGET_MS, OPTIMIZE's default budget). Its principal is the service's own:
 * system callers run as it, without privilege checks; HTTP requests derive their own.
 */
export function contextFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<SiltContext> {
  context ??= (async () => {
    const bucket = required(env, "SILT_BUCKET");
    const prefix = env.SILT_STORAGE_PREFIX ?? "";
    const roleArn = env.SILT_TABLE_ACCESS_ROLE_ARN || undefined;
    const writeRoleArn = env.SILT_TABLE_WRITE_ROLE_ARN || undefined;
    if (writeRoleArn !== undefined && roleArn === undefined) {
      // READ_WRITE vending comes with READ vending (the stack sets both).
      throw new Error(
        "SILT_TABLE_WRITE_ROLE_ARN is set without SILT_TABLE_ACCESS_ROLE_ARN: set both or neither.",
      );
    }
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
      postCommit: { mode: postCommitMode(env) },
      requestTimeoutMs: optionalMilliseconds(env, "SILT_REQUEST_TIMEOUT_MS"),
      optimizeTimeBudgetMs: optionalMilliseconds(env, "SILT_OPTIMIZE_TIME_BUDGET_MS"),
      tableCredentials:
        roleArn === undefined
          ? undefined
          : new StsTableCredentials({
              client: createStsClient(),
              roleArn,
              writeRoleArn,
              bucket,
              prefix,
            }),
    });
  })();
  return context;
}

/**
 * A Lambda handler (API Gateway HTTP API, payload v2) serving one operation's routes, with
 * callers authenticated as SILT_AUTH says (required: iam, jwt, or none).
 */
export function httpHandler(operation: Operation, env: NodeJS.ProcessEnv = process.env) {
  let handler: ReturnType<typeof handle> | undefined;
  return async (event: APIGatewayProxyEventV2, lambdaContext?: Context) => {
    const ctx = await contextFromEnv(env);
    handler ??= handle(
      createApp(ctx, {
        operations: [operation],
        auth: parseAuthMode(env.SILT_AUTH),
        // The response is one payload, capped by Lambda: a row answer past it asks to be paged.
        maxResponseBytes: LAMBDA_RESPONSE_BYTES,
      }),
    );
    const serve = handler;
    // The request ids on every log line of the request (API Gateway's is the access log's), and
    // its commits' metrics (invocation.ts).
    const apiRequestId = event.requestContext.requestId;
    return withInvocation(ctx.logger, lambdaContext, { operation, apiRequestId }, () =>
      serve(honoEvent(event), lambdaContext),
    );
  };
}

/**
 * The event for Hono's adapter. Fetch's Request cannot carry the body of a GET, which Unity
 * Catalog's legacy commits API sends, so the body moves to `getBody` before Hono builds the
 * request (lib/api/uc/request.ts reads it).
 */
function honoEvent(event: APIGatewayProxyEventV2): LambdaEvent {
  const { method } = event.requestContext.http;
  const moved =
    (method !== "GET" && method !== "HEAD") || !event.body
      ? event
      : {
          ...event,
          body: null,
          getBody: event.isBase64Encoded
            ? Buffer.from(event.body, "base64").toString("utf8")
            : event.body,
        };
  // Hono's adapter declares event types of its own, which API Gateway's events do not meet
  // (they require `requestContext.authorizer` even on routes without one); Hono reads only what
  // API Gateway sends.
  return moved as unknown as LambdaEvent;
}
