/**
 * The HTTP API in front of the operation functions: an authorizer on every route (IAM or JWT),
 * each route to the function of the operation FUNCTIONS gives it, an access-logged and throttled
 * default stage, and an alarm on 5xx answers.
 */
import {
  aws_apigatewayv2 as apigw,
  aws_apigatewayv2_integrations as apigwIntegrations,
  aws_apigatewayv2_authorizers as authorizers,
  Duration,
  aws_logs as logs,
  type aws_lambda_nodejs as nodejs,
} from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import type { Construct } from "constructs";
import type { Operation } from "../lib/api/operations.ts";
import type { Alarms } from "./alarms.ts";
import { constructName, FUNCTIONS, type FunctionSpec } from "./functions-table.ts";

export type SiltAuth =
  | { type: "iam" }
  | {
      type: "jwt";
      /** Token issuer URL, e.g. a Cognito user pool or any OIDC provider. */
      issuer: string;
      /** Accepted `aud` (or Cognito `client_id`) values. */
      audience: string[];
    };

export class HttpApi {
  readonly api: apigw.HttpApi;
  /** The default stage's URL. */
  readonly url: string;

  constructor(
    scope: Construct,
    opts: {
      auth: SiltAuth;
      functions: Record<Operation, nodejs.NodejsFunction>;
      logRetention: logs.RetentionDays;
      alarms: Alarms;
      /** Requests per second the default stage admits, steady (rateLimit) and in bursts. */
      throttle: Required<apigw.ThrottleSettings>;
    },
  ) {
    const { auth } = opts;
    const defaultAuthorizer =
      auth.type === "iam"
        ? new authorizers.HttpIamAuthorizer()
        : new authorizers.HttpJwtAuthorizer("JwtAuthorizer", auth.issuer, {
            jwtAudience: auth.audience,
          });

    this.api = new apigw.HttpApi(scope, "HttpApi", {
      description: "Silt: catalog-managed Delta Lake tables",
      defaultAuthorizer,
      // The default stage is created below, with access logging, which HttpApi cannot set.
      createDefaultStage: false,
    });
    const accessLogGroup = new logs.LogGroup(scope, "ApiAccessLogs", {
      retention: opts.logRetention,
    });
    const stage = new apigw.HttpStage(scope, "DefaultStage", {
      httpApi: this.api,
      stageName: "$default",
      autoDeploy: true,
      // Beyond it callers get 429 before any function runs, instead of every commit of a burst
      // contending for the same tables and DynamoDB partitions.
      throttle: opts.throttle,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogGroup),
        // Who called what and how it ended; never headers or bodies, which carry table data.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: "$context.requestId",
            ip: "$context.identity.sourceIp",
            requestTime: "$context.requestTime",
            routeKey: "$context.routeKey",
            status: "$context.status",
            protocol: "$context.protocol",
            responseLength: "$context.responseLength",
            integrationLatency: "$context.integrationLatency",
            integrationError: "$context.integrationErrorMessage",
            authorizerError: "$context.authorizer.error",
            principal:
              auth.type === "iam" ? "$context.identity.userArn" : "$context.authorizer.claims.sub",
          }),
        ),
      },
    });
    this.url = stage.url;

    for (const [operation, spec] of Object.entries(FUNCTIONS) as [Operation, FunctionSpec][]) {
      const integration = new apigwIntegrations.HttpLambdaIntegration(
        `${constructName(operation)}Integration`,
        opts.functions[operation],
      );
      for (const [method, path] of spec.routes) {
        this.api.addRoutes({ path, methods: [method], integration });
      }
    }

    opts.alarms.add("ApiServerErrorsAlarm", {
      alarmDescription: "Silt HTTP API answered 5xx (internal errors, function failures)",
      metric: this.api.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
    });
  }
}
