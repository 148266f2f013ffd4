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
 */
import { type App, Aspects } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import type { SiltAuth } from "./http-api.ts";
import { SiltStack } from "./silt-stack.ts";

export function defineSiltApp(app: App): SiltStack {
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  const text = (key: string): string | undefined => {
    const value: unknown = app.node.tryGetContext(key);
    return value === undefined || value === null ? undefined : String(value);
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
  });
}
