/**
 * Composes the CDK app: the Silt stack, configured from CDK context (cdk.json or `-c key=value`),
 * with the cdk-nag AwsSolutions checks applied to everything in it. infra/app.ts runs this for
 * the CLI; the tests run the same function, so what they check is what deploys.
 *
 * Context keys:
 *   silt:stackName           stack name (default "Silt")
 *   silt:deletionProtection  "false" turns off DynamoDB deletion protection (default on)
 *   silt:jwtIssuer           with silt:jwtAudience, a JWT authorizer instead of IAM
 *   silt:jwtAudience         comma-separated audiences
 *   silt:storagePrefix       key prefix of the storage root in the bucket (default "")
 *   silt:alarmTopicArn       SNS topic the alarms notify
 *   silt:maintenanceSchedule EventBridge schedule expression of the maintenance run
 *                            (default "rate(1 hour)", e.g. "cron(0 3 * * ? *)")
 *   silt:reservedConcurrency per operation, e.g. "optimize=4,insert=50,vacuum=none": executions
 *                            reserved for its function ("none": no reservation)
 *   silt:throttleRateLimit   requests per second the HTTP API admits, steady (default 100)
 *   silt:throttleBurstLimit  … and in bursts (default 200)
 */
import { type App, Aspects } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { OPERATIONS, type Operation } from "../lib/api/operations.ts";
import { nearestNames } from "../lib/values/did-you-mean.ts";
import type { ReservedConcurrency } from "./api-functions.ts";
import type { SiltAuth } from "./http-api.ts";
import { SiltStack } from "./silt-stack.ts";

export function defineSiltApp(app: App): SiltStack {
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  const text = (key: string): string | undefined => {
    const value: unknown = app.node.tryGetContext(key);
    return value === undefined || value === null ? undefined : String(value);
  };

  const count = (key: string): number | undefined => {
    const value = text(key);
    return value === undefined ? undefined : wholeNumber(key, value);
  };

  const issuer = text("silt:jwtIssuer");
  const audience = (text("silt:jwtAudience") ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  if ((issuer === undefined) !== (audience.length === 0)) {
    throw new Error(
      "Set both silt:jwtIssuer and silt:jwtAudience for a JWT authorizer, or neither.",
    );
  }
  const auth: SiltAuth = issuer === undefined ? { type: "iam" } : { type: "jwt", issuer, audience };

  return new SiltStack(app, text("silt:stackName") ?? "Silt", {
    // Environment-agnostic unless the CLI resolved an account and region.
    env: {
      account: process.env.CDK_DEFAULT_ACCOUNT,
      region: process.env.CDK_DEFAULT_REGION,
    },
    description: "Silt: serverless catalog-managed Delta Lake tables",
    deletionProtection: text("silt:deletionProtection") !== "false",
    auth,
    storagePrefix: text("silt:storagePrefix"),
    alarmTopicArn: text("silt:alarmTopicArn"),
    maintenanceSchedule: text("silt:maintenanceSchedule"),
    reservedConcurrency: reservedConcurrencyOf(text("silt:reservedConcurrency")),
    throttle: {
      rateLimit: count("silt:throttleRateLimit"),
      burstLimit: count("silt:throttleBurstLimit"),
    },
  });
}

/** `op=n,op=none,…` (silt:reservedConcurrency); a mistake stops the synth, naming it. */
function reservedConcurrencyOf(value: string | undefined): ReservedConcurrency {
  const out: ReservedConcurrency = {};
  for (const entry of (value ?? "").split(",")) {
    if (entry.trim() === "") continue;
    const [name = "", count = ""] = entry.split("=").map((p) => p.trim());
    const operation = OPERATIONS.find((op) => op === name);
    if (operation === undefined) {
      const near = nearestNames(name, OPERATIONS);
      throw new Error(
        `silt:reservedConcurrency: no operation ${JSON.stringify(name)}` +
          (near.length > 0 ? `; did you mean ${near.join(", ")}?` : "") +
          ` Entries are operation=count or operation=none (operations: ${OPERATIONS.join(", ")}).`,
      );
    }
    (out as Record<Operation, number | null>)[operation] =
      count === "none" ? null : wholeNumber(`silt:reservedConcurrency ${operation}`, count);
  }
  return out;
}

function wholeNumber(key: string, value: string): number {
  if (!/^\d+$/.test(value)) {
    throw new Error(`${key} must be a whole number (got ${JSON.stringify(value)}).`);
  }
  return Number(value);
}
