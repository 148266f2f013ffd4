/**
 * The deployed shape of Silt (DESIGN §7): one bucket for table data, two DynamoDB tables (the
 * commit arbiter and the catalog), one Lambda per operation in functions/, an HTTP API in front
 * with an authorizer on every route, and alarms.
 *
 * Permissions are written out per function from what its code path actually calls (see FUNCTIONS
 * below), never from the CDK `grant*` helpers, whose action lists carry wildcards (`s3:GetObject*`,
 * `s3:List*`) and far more than a function uses.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  aws_apigatewayv2 as apigw,
  aws_apigatewayv2_integrations as apigwIntegrations,
  aws_apigatewayv2_authorizers as authorizers,
  CfnOutput,
  aws_cloudwatch as cloudwatch,
  aws_cloudwatch_actions as cwActions,
  Duration,
  aws_dynamodb as dynamodb,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
  type StackProps,
  aws_s3 as s3,
  aws_sns as sns,
} from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";
import type { Operation } from "../lib/api/app.ts";

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the Lambda runtime unpacks a zip function; the bundle and the .wasm sit at its root. */
const LAMBDA_TASK_ROOT = "/var/task";
const PARQUET_WASM = "parquet_wasm_bg.wasm";

export type SiltAuth =
  | { type: "iam" }
  | {
      type: "jwt";
      /** Token issuer URL, e.g. a Cognito user pool or any OIDC provider. */
      issuer: string;
      /** Accepted `aud` (or Cognito `client_id`) values. */
      audience: string[];
    };

export interface SiltStackProps extends StackProps {
  /** DynamoDB deletion protection on the commit and catalog tables. Default true. */
  deletionProtection?: boolean;
  /** Route authorization. Default IAM (SigV4-signed callers). */
  auth?: SiltAuth;
  /**
   * Removal policy of the bucket and the DynamoDB tables. Default RETAIN: deleting the stack must
   * never delete tables' data or the only record of ratified-but-unpublished commits.
   */
  dataRemovalPolicy?: RemovalPolicy;
  /** Key prefix of the storage root inside the bucket ("" or ending in "/"). Default "". */
  storagePrefix?: string;
  /** Retention of the functions' and the API's log groups. Default one month. */
  logRetention?: logs.RetentionDays;
  /** SNS topic the alarms notify. Default none (alarms still show in CloudWatch). */
  alarmTopicArn?: string;
}

type DynamoAction = "GetItem" | "PutItem" | "UpdateItem" | "DeleteItem" | "Query";

interface FunctionSpec {
  description: string;
  memorySize: number;
  routes: ReadonlyArray<readonly [apigw.HttpMethod, string]>;
  /**
   * S3 access under `<prefix>tables/`: read = GetObject (also what HeadObject needs); write =
   * PutObject anywhere in a table, or only into `_delta_log/` for the cooperative publishing
   * that opening a table performs (lib/ops/open-table.ts); delete = DeleteObject (DeleteObjects
   * is authorised per key by it).
   */
  s3: { read: boolean; write: "table" | "log" | false; delete: boolean } | false;
  /**
   * GetObject under `<prefix>ingest/`, where callers stage the Parquet/CSV/JSON objects an
   * operation takes as input (lib/api/merge-source.ts).
   */
  ingest?: boolean;
  /** Items of the commits table (arbiter): ratify = PutItem, markPublished = UpdateItem. */
  commits: readonly DynamoAction[];
  /** Items of the catalog table. */
  catalog: readonly DynamoAction[];
}

const { GET, POST, DELETE } = apigw.HttpMethod;

/**
 * One entry per file in functions/, keyed by the operation it serves (lib/api/app.ts), so adding
 * an operation without deciding its routes and permissions does not compile. The action lists
 * follow each operation's code path through lib/ (catalog-store.ts, arbiter.ts, s3-store.ts).
 */
const FUNCTIONS: Record<Operation, FunctionSpec> = {
  catalog: {
    description: "Catalogs and schemas: create, list, drop (CASCADE deletes the tables' files)",
    memorySize: 1024,
    routes: [
      // Every function answers health; the catalog one loads no table, so it is the cheapest.
      [GET, "/api/v1/health"],
      [POST, "/api/v1/catalogs"],
      [GET, "/api/v1/catalogs"],
      [DELETE, "/api/v1/catalogs/{catalog}"],
      [POST, "/api/v1/catalogs/{catalog}/schemas"],
      [GET, "/api/v1/catalogs/{catalog}/schemas"],
      [DELETE, "/api/v1/catalogs/{catalog}/schemas/{schema}"],
      [GET, "/api/v1/catalogs/{catalog}/schemas/{schema}/tables"],
    ],
    s3: { read: false, write: false, delete: true },
    commits: [],
    catalog: ["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query"],
  },
  create: {
    description: "CREATE TABLE: catalog entry, first commit",
    memorySize: 1024,
    routes: [[POST, "/api/v1/tables"]],
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem", "PutItem", "UpdateItem", "DeleteItem"],
  },
  insert: {
    description: "INSERT INTO: write Parquet files, commit an append",
    // Encoding Parquet is CPU-bound and Lambda's CPU share grows with memory (1 vCPU at 1769 MB).
    memorySize: 2048,
    routes: [[POST, "/api/v1/tables/{name}/insert"]],
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  rows: {
    description: "SELECT rows at the latest version or by time travel",
    memorySize: 2048,
    routes: [
      [GET, "/api/v1/tables/{name}/rows"],
      [POST, "/api/v1/tables/{name}/rows"],
    ],
    s3: { read: true, write: "log", delete: false },
    commits: ["Query", "UpdateItem"],
    catalog: ["GetItem"],
  },
  history: {
    description: "DESCRIBE HISTORY",
    memorySize: 1024,
    routes: [[GET, "/api/v1/tables/{name}/history"]],
    // History reads through the catalog view without publishing (lib/ops/history.ts).
    s3: { read: true, write: false, delete: false },
    commits: ["Query"],
    catalog: ["GetItem"],
  },
  detail: {
    description: "DESCRIBE DETAIL",
    memorySize: 1024,
    routes: [[GET, "/api/v1/tables/{name}/detail"]],
    s3: { read: true, write: "log", delete: false },
    commits: ["Query", "UpdateItem"],
    catalog: ["GetItem"],
  },
  sql: {
    description: "Spark SQL statements: DDL, SELECT, INSERT (any operation the typed routes do)",
    memorySize: 2048,
    routes: [[POST, "/api/v1/sql"]],
    s3: { read: true, write: "table", delete: true },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query"],
  },
  drop: {
    description: "DROP TABLE: forget the name, delete the files (arbiter rows stay)",
    memorySize: 1024,
    routes: [[DELETE, "/api/v1/tables/{name}"]],
    s3: { read: false, write: false, delete: true },
    commits: [],
    catalog: ["GetItem", "UpdateItem", "DeleteItem"],
  },
  overwrite: {
    description: "INSERT OVERWRITE (whole table, or dynamic partition overwrite)",
    memorySize: 2048,
    routes: [[POST, "/api/v1/tables/{name}/overwrite"]],
    // Replaced files are removed in the log only; their bytes stay for time travel and VACUUM.
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  "replace-where": {
    description: "INSERT INTO … REPLACE WHERE: delete matching rows, insert, one commit",
    memorySize: 2048,
    routes: [[POST, "/api/v1/tables/{name}/replace-where"]],
    // Reads the files it may delete from; writes data files and deletion-vector files.
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  "replace-using": {
    description: "INSERT INTO … REPLACE USING / ON: delete matched rows, insert, one commit",
    memorySize: 2048,
    routes: [[POST, "/api/v1/tables/{name}/replace-using"]],
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  restore: {
    description: "RESTORE TABLE to an earlier version or timestamp",
    memorySize: 1024,
    routes: [[POST, "/api/v1/tables/{name}/restore"]],
    // Re-adds existing files by reference: reads (and HEADs) them, writes only the log.
    s3: { read: true, write: "log", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  update: {
    description: "UPDATE: deletion vectors on the old rows, new files for the new ones",
    memorySize: 2048,
    routes: [[POST, "/api/v1/tables/{name}/update"]],
    // Reads the files that may match; writes data files and deletion-vector files. Removed
    // files stay for time travel until VACUUM.
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  delete: {
    description: "DELETE: deletion vectors, or whole files removed from the log",
    memorySize: 2048,
    routes: [[POST, "/api/v1/tables/{name}/delete"]],
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  merge: {
    description: "MERGE INTO: hash join of a source with the target, deletion vectors, new files",
    // The source, the hash of its keys and two target files at a time: the 100k-row source into
    // 10M rows stays under 1.5 GB (issue 5).
    memorySize: 2048,
    routes: [[POST, "/api/v1/tables/{name}/merge"]],
    s3: { read: true, write: "table", delete: false },
    ingest: true,
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  optimize: {
    description: "OPTIMIZE [ZORDER BY]: bin-packs small files into target-size files",
    // One bin (delta.targetFileSize, 128 MiB of Parquet by default) is held as Arrow data,
    // several times its Parquet size, plus the Z-order keys.
    memorySize: 3008,
    routes: [[POST, "/api/v1/tables/{name}/optimize"]],
    // Reads the files it compacts and writes the new ones; the old ones stay for VACUUM.
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  vacuum: {
    description: "VACUUM: deletes files no version within the retention references",
    memorySize: 1024,
    routes: [[POST, "/api/v1/tables/{name}/vacuum"]],
    // Lists the table (ListBucket), HEADs tombstoned files, deletes; writes only the VACUUM
    // START / END commits into _delta_log/.
    s3: { read: true, write: "log", delete: true },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
};

export class SiltStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly commitsTable: dynamodb.TableV2;
  readonly catalogTable: dynamodb.TableV2;
  readonly api: apigw.HttpApi;
  readonly functions: Record<Operation, nodejs.NodejsFunction>;

  constructor(scope: Construct, id: string, props: SiltStackProps = {}) {
    super(scope, id, props);
    const dataRemovalPolicy = props.dataRemovalPolicy ?? RemovalPolicy.RETAIN;
    const deletionProtection = props.deletionProtection ?? true;
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const storagePrefix = props.storagePrefix ?? "";
    if (storagePrefix !== "" && !storagePrefix.endsWith("/")) {
      throw new Error(`storagePrefix must be "" or end with "/", got "${storagePrefix}"`);
    }
    const tablesPrefix = `${storagePrefix}tables/`;

    const accessLogs = new s3.Bucket(this, "AccessLogBucket", {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: "expire-access-logs", expiration: Duration.days(365) }],
      removalPolicy: dataRemovalPolicy,
    });

    // Versioning stays off: Delta keeps its own versions in the log and never overwrites a
    // file (commits are put-if-absent, data files have unique names), so S3 versions would only
    // add noncurrent copies that VACUUM and DROP TABLE are meant to remove for good (storage
    // cost, and erasure requests would not erase). Point-in-time recovery of the arbiter plus
    // time travel cover recovery.
    this.bucket = new s3.Bucket(this, "DataBucket", {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      // SSE-S3 rather than KMS: no key policy to keep in step with every function role and no
      // per-request KMS charge on a workload that reads many small log files; callers vended
      // table credentials later need no kms:Decrypt either.
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: "data-bucket/",
      lifecycleRules: [
        {
          // Big inputs arrive by multipart upload (the ingest path); an abandoned one is billed
          // until aborted.
          id: "abort-incomplete-multipart-uploads",
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: dataRemovalPolicy,
    });

    // Commit arbiter rows (DESIGN §3): no TTL, ever. A row is the only durable record of a
    // ratified-but-unpublished commit; expiring it early loses that commit (delta-io #1410).
    this.commitsTable = new dynamodb.TableV2(this, "CommitsTable", {
      partitionKey: { name: "tableId", type: dynamodb.AttributeType.STRING },
      sortKey: { name: "version", type: dynamodb.AttributeType.NUMBER },
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy: dataRemovalPolicy,
    });
    this.catalogTable = new dynamodb.TableV2(this, "CatalogTable", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
      sortKey: { name: "sk", type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy: dataRemovalPolicy,
    });

    const alarmAction =
      props.alarmTopicArn === undefined
        ? undefined
        : new cwActions.SnsAction(sns.Topic.fromTopicArn(this, "AlarmTopic", props.alarmTopicArn));
    const alarm = (id: string, alarmProps: cloudwatch.AlarmProps) => {
      const a = new cloudwatch.Alarm(this, id, alarmProps);
      if (alarmAction !== undefined) a.addAlarmAction(alarmAction);
      return a;
    };

    const wasmSource = createRequire(import.meta.url).resolve(`parquet-wasm/esm/${PARQUET_WASM}`);
    const functionRoles: iam.Role[] = [];
    const functions = {} as Record<Operation, nodejs.NodejsFunction>;
    for (const [operation, spec] of Object.entries(FUNCTIONS) as [Operation, FunctionSpec][]) {
      const name = operation[0].toUpperCase() + operation.slice(1);
      const logGroup = new logs.LogGroup(this, `${name}Logs`, { retention: logRetention });
      // An own role per function instead of the default one: the default attaches the managed
      // AWSLambdaBasicExecutionRole, whose log permissions span every log group in the account.
      const role = new iam.Role(this, `${name}Role`, {
        assumedBy: new iam.ServicePrincipal("lambda.amazonaws.com"),
        description: `Silt ${operation} function`,
      });
      functionRoles.push(role);
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
          resources: [logGroup.logGroupArn],
        }),
      );
      this.#grantData(role, spec, tablesPrefix);

      const fn = new nodejs.NodejsFunction(this, `${name}Function`, {
        entry: join(PROJECT_ROOT, "functions", `${operation}.ts`),
        handler: "handler",
        projectRoot: PROJECT_ROOT,
        depsLockFilePath: join(PROJECT_ROOT, "package-lock.json"),
        description: `Silt: ${spec.description}`,
        runtime: lambda.Runtime.NODEJS_22_X,
        architecture: lambda.Architecture.ARM_64,
        memorySize: spec.memorySize,
        // HTTP APIs stop waiting for an integration after 30 s and cannot be configured longer;
        // ending first means a slow request is recorded as a function timeout (and alarmed on)
        // rather than running on unseen after the caller got a 503.
        timeout: Duration.seconds(29),
        role,
        logGroup,
        loggingFormat: lambda.LoggingFormat.JSON,
        environment: {
          SILT_BUCKET: this.bucket.bucketName,
          SILT_STORAGE_PREFIX: storagePrefix,
          SILT_COMMITS_TABLE: this.commitsTable.tableName,
          SILT_CATALOG_TABLE: this.catalogTable.tableName,
          SILT_PRINCIPAL: "silt",
          // Points parquet-wasm straight at the copy shipped in the bundle instead of letting
          // it probe module resolution (NODE_PATH includes the runtime's own directories).
          SILT_PARQUET_WASM: `${LAMBDA_TASK_ROOT}/${PARQUET_WASM}`,
          // Unhandled-error stack traces in the logs then name lib/ sources, not minified code.
          NODE_OPTIONS: "--enable-source-maps",
        },
        bundling: {
          forceDockerBundling: false,
          format: nodejs.OutputFormat.ESM,
          target: "node22",
          platform: "node",
          // Prefer packages' ESM builds so esbuild can drop what the handlers never import.
          mainFields: ["module", "main"],
          minify: true,
          sourceMap: true,
          // Mappings are all a stack trace needs; embedding the sources would more than double the map.
          sourcesContent: false,
          // Bundle the AWS SDK too instead of using the copy the Node 22 runtime ships: that
          // copy's version is whatever the runtime carries that day, while the commit protocol
          // relies on conditional PutObject (If-None-Match), which we test against the pinned
          // SDK in package.json. Bundling also lets esbuild tree-shake it.
          externalModules: [],
          // No createRequire banner: every dependency resolves to ESM today, so the bundle has
          // no require() calls (test/infra.test.ts fails if esbuild ever emits its shim).
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            // lib/data/parquet.ts loads the wasm from SILT_PARQUET_WASM, i.e. next to the bundle.
            afterBundling: (_inputDir: string, outputDir: string) => [
              `cp "${wasmSource}" "${join(outputDir, PARQUET_WASM)}"`,
            ],
          },
        },
      });
      functions[operation] = fn;

      alarm(`${name}ErrorsAlarm`, {
        alarmDescription:
          `Silt ${operation} function: invocations failed (unhandled error, timeout or ` +
          "start-up failure; handled errors become HTTP responses and show in the API 5xx alarm)",
        metric: fn.metricErrors({ period: Duration.minutes(5), statistic: "Sum" }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });

      NagSuppressions.addResourceSuppressions(fn, [
        {
          id: "AwsSolutions-L1",
          reason:
            "Pinned to Node.js 22, the runtime the project targets and tests against; moving " +
            "to a newer runtime is a deliberate upgrade, not a synth-time default.",
        },
      ]);
    }
    this.functions = functions;

    // Nobody but Silt's functions writes under the tables prefix (issue 6, Authorization): a
    // foreign writer could put files the log does not know or delete files it references.
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: "OnlySiltFunctionsWriteTables",
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ["s3:PutObject", "s3:DeleteObject"],
        resources: [this.bucket.arnForObjects(`${tablesPrefix}*`)],
        conditions: {
          ArnNotEquals: { "aws:PrincipalArn": functionRoles.map((r) => r.roleArn) },
        },
      }),
    );

    const auth = props.auth ?? { type: "iam" };
    const defaultAuthorizer =
      auth.type === "iam"
        ? new authorizers.HttpIamAuthorizer()
        : new authorizers.HttpJwtAuthorizer("JwtAuthorizer", auth.issuer, {
            jwtAudience: auth.audience,
          });

    this.api = new apigw.HttpApi(this, "HttpApi", {
      description: "Silt: catalog-managed Delta Lake tables",
      defaultAuthorizer,
      // The default stage is created below, with access logging, which HttpApi cannot set.
      createDefaultStage: false,
    });
    const accessLogGroup = new logs.LogGroup(this, "ApiAccessLogs", { retention: logRetention });
    const stage = new apigw.HttpStage(this, "DefaultStage", {
      httpApi: this.api,
      stageName: "$default",
      autoDeploy: true,
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

    for (const [operation, spec] of Object.entries(FUNCTIONS) as [Operation, FunctionSpec][]) {
      const name = operation[0].toUpperCase() + operation.slice(1);
      const integration = new apigwIntegrations.HttpLambdaIntegration(
        `${name}Integration`,
        functions[operation],
      );
      for (const [method, path] of spec.routes) {
        this.api.addRoutes({ path, methods: [method], integration });
      }
    }

    alarm("ApiServerErrorsAlarm", {
      alarmDescription: "Silt HTTP API answered 5xx (internal errors, function failures)",
      metric: this.api.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    new CfnOutput(this, "ApiUrl", { value: stage.url });
    new CfnOutput(this, "BucketName", { value: this.bucket.bucketName });
    new CfnOutput(this, "CommitsTableName", { value: this.commitsTable.tableName });
    new CfnOutput(this, "CatalogTableName", { value: this.catalogTable.tableName });
  }

  #grantData(role: iam.Role, spec: FunctionSpec, tablesPrefix: string): void {
    const tableObjects = this.bucket.arnForObjects(`${tablesPrefix}*`);
    const ingestPrefix = tablesPrefix.replace(/tables\/$/, "ingest/");
    const wildcardFindings: string[] = [];
    if (spec.s3 !== false) {
      // Not narrowed by an s3:prefix condition on purpose: S3 answers a GET or HEAD of a
      // missing key with 404 only to callers allowed ListBucket on the bucket (403 otherwise),
      // and that check carries no prefix. The engine depends on the 404 (a table without
      // `_last_checkpoint`, publish's "already there?" probe); keys reveal no table data.
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ["s3:ListBucket"], resources: [this.bucket.bucketArn] }),
      );
      const objectActions = [
        ...(spec.s3.read ? ["s3:GetObject"] : []),
        ...(spec.s3.write === "table" ? ["s3:PutObject"] : []),
        ...(spec.s3.delete ? ["s3:DeleteObject"] : []),
      ];
      if (objectActions.length > 0) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: objectActions, resources: [tableObjects] }),
        );
        wildcardFindings.push(`Resource::<${this.#logicalId(this.bucket)}.Arn>/${tablesPrefix}*`);
      }
      if (spec.ingest) {
        const ingestObjects = this.bucket.arnForObjects(`${ingestPrefix}*`);
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: ["s3:GetObject"], resources: [ingestObjects] }),
        );
        wildcardFindings.push(`Resource::<${this.#logicalId(this.bucket)}.Arn>/${ingestPrefix}*`);
      }
      if (spec.s3.write === "log") {
        const logObjects = this.bucket.arnForObjects(`${tablesPrefix}*/_delta_log/*`);
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: ["s3:PutObject"], resources: [logObjects] }),
        );
        wildcardFindings.push(
          `Resource::<${this.#logicalId(this.bucket)}.Arn>/${tablesPrefix}*/_delta_log/*`,
        );
      }
    }
    const dynamo = (table: dynamodb.TableV2, actions: readonly DynamoAction[]) => {
      if (actions.length === 0) return;
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: actions.map((a) => `dynamodb:${a}`),
          resources: [table.tableArn],
        }),
      );
    };
    dynamo(this.commitsTable, spec.commits);
    dynamo(this.catalogTable, spec.catalog);
    if (wildcardFindings.length > 0) {
      NagSuppressions.addResourceSuppressions(
        role,
        [
          {
            id: "AwsSolutions-IAM5",
            reason:
              "Object keys under the tables prefix are generated per table (tables/<uuid>/...) " +
              "and per file, and input objects under the ingest prefix are named by callers, " +
              "so a prefix pattern is the narrowest resource that names them; " +
              "the actions are listed one by one.",
            appliesTo: wildcardFindings,
          },
        ],
        true,
      );
    }
  }

  #logicalId(bucket: s3.Bucket): string {
    return this.getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
  }
}
