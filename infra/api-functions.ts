/**
 * The functions behind the HTTP API: one per entry of FUNCTIONS, each running requests as the
 * caller the authorizer names, and those serving POST or DELETE keeping Idempotency-Key records.
 */
import {
  aws_apigatewayv2 as apigw,
  Duration,
  aws_iam as iam,
  type aws_lambda_nodejs as nodejs,
} from "aws-cdk-lib";
import type { Operation } from "../lib/api/operations.ts";
import type { DynamoAction } from "./data-access.ts";
import { constructName, FUNCTIONS, type FunctionSpec } from "./functions-table.ts";
import type { SiltAuth } from "./http-api.ts";
import type { LambdaFunctions } from "./lambda-functions.ts";
import type { Storage } from "./storage.ts";

/** Per operation: executions to reserve, or null for none (see createApiFunctions). */
export type ReservedConcurrency = Partial<Record<Operation, number | null>>;

/**
 * Claim (PutItem), read a lost claim (GetItem), complete (UpdateItem), release (DeleteItem):
 * lib/api/idempotency.ts, for POST and DELETE requests that carry an Idempotency-Key.
 */
const IDEMPOTENCY_ACTIONS: readonly DynamoAction[] = [
  "GetItem",
  "PutItem",
  "UpdateItem",
  "DeleteItem",
];

/**
 * `reservedConcurrency` overrides FUNCTIONS' reserved concurrency per operation: a number
 * reserves that many executions, null removes the table's reservation.
 */
export function createApiFunctions(
  functions: LambdaFunctions,
  storage: Storage,
  auth: SiltAuth,
  reservedConcurrency: ReservedConcurrency = {},
): Record<Operation, nodejs.NodejsFunction> {
  const { POST, DELETE } = apigw.HttpMethod;
  const created = {} as Record<Operation, nodejs.NodejsFunction>;
  // HTTP APIs stop waiting for an integration after 30 s and cannot be configured longer;
  // ending first means a slow request is recorded as a function timeout (and alarmed on)
  // rather than running on unseen after the caller got a 503.
  const timeout = Duration.seconds(29);
  for (const [operation, spec] of Object.entries(FUNCTIONS) as [Operation, FunctionSpec][]) {
    // The Idempotency-Key middleware handles POST and DELETE requests only.
    const mutating =
      spec.idempotent ?? spec.routes.some(([method]) => method === POST || method === DELETE);
    const environment: Record<string, string> = {
      ...functions.tableEnvironment(),
      // Each request runs as the caller the authorizer names (lib/auth/principal.ts).
      SILT_AUTH: auth.type,
      // What long work (OPTIMIZE's default budget) and Idempotency-Key claims fit into.
      SILT_REQUEST_TIMEOUT_MS: String(timeout.toMilliseconds()),
      ...(mutating ? { SILT_IDEMPOTENCY_TABLE: storage.idempotencyTable.tableName } : {}),
    };
    const { fn, role } = functions.add(constructName(operation), {
      operation,
      description: spec.description,
      memorySize: spec.memorySize,
      timeout,
      environment,
      access: spec,
      errorsMeaning:
        "invocations failed (unhandled error, timeout or start-up failure; handled errors " +
        "become HTTP responses and show in the API 5xx alarm)",
      reservedConcurrentExecutions:
        (operation in reservedConcurrency
          ? reservedConcurrency[operation]
          : spec.reservedConcurrency) ?? undefined,
    });
    if (mutating) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: IDEMPOTENCY_ACTIONS.map((a) => `dynamodb:${a}`),
          resources: [storage.idempotencyTable.tableArn],
        }),
      );
    }
    created[operation] = fn;
  }
  return created;
}
