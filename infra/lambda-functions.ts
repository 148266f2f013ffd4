/**
 * Builds Silt's Lambda functions, one per file in functions/: each with its own log group, its
 * own role holding exactly the access its code path needs (data-access.ts), an alarm on its
 * Errors, and an esbuild bundle with parquet-wasm's Node build (glue and .wasm) next to it. Only plain
 * CloudFormation resources and local bundling: nothing needs Docker or a deploy-time Lambda.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Duration,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  type aws_sqs as sqs,
} from "aws-cdk-lib";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";
import type { Alarms } from "./alarms.ts";
import { type AccessSpec, grantDataAccess } from "./data-access.ts";
import type { Storage } from "./storage.ts";

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the Lambda runtime unpacks a zip function; the bundle and the .wasm sit at its root. */
const LAMBDA_TASK_ROOT = "/var/task";
const PARQUET_WASM = "parquet_wasm_bg.wasm";
/** parquet-wasm's Node glue, which reads PARQUET_WASM from its own directory; .cjs keeps it CommonJS. */
const PARQUET_WASM_GLUE = "parquet_wasm.cjs";

export interface FunctionOptions {
  /** The file in functions/ the function runs. */
  operation: string;
  description: string;
  memorySize: number;
  timeout: Duration;
  environment: Record<string, string>;
  access: AccessSpec;
  /** What the Errors metric counting up means for this function. */
  errorsMeaning: string;
  deadLetterQueue?: sqs.IQueue;
  reservedConcurrentExecutions?: number;
}

export interface SiltFunction {
  fn: nodejs.NodejsFunction;
  role: iam.Role;
}

export class LambdaFunctions {
  /** Roles of the functions that work on tables: the only writers the bucket policy allows. */
  readonly tableRoles: iam.Role[] = [];
  readonly #scope: Construct;
  readonly #storage: Storage;
  readonly #alarms: Alarms;
  readonly #logRetention: logs.RetentionDays;

  constructor(
    scope: Construct,
    opts: { storage: Storage; alarms: Alarms; logRetention: logs.RetentionDays },
  ) {
    this.#scope = scope;
    this.#storage = opts.storage;
    this.#alarms = opts.alarms;
    this.#logRetention = opts.logRetention;
  }

  /** What every function that builds a context from the environment reads (lambda.ts). */
  tableEnvironment(): Record<string, string> {
    const storage = this.#storage;
    return {
      SILT_BUCKET: storage.bucket.bucketName,
      SILT_STORAGE_PREFIX: storage.storagePrefix,
      SILT_COMMITS_TABLE: storage.commitsTable.tableName,
      SILT_CATALOG_TABLE: storage.catalogTable.tableName,
      SILT_PRINCIPAL: "silt",
      // Points lib/data/parquet-wasm.ts straight at the glue shipped beside the bundle instead
      // of letting it probe module resolution (NODE_PATH includes the runtime's own directories).
      SILT_PARQUET_WASM_GLUE: `${LAMBDA_TASK_ROOT}/${PARQUET_WASM_GLUE}`,
      // Unhandled-error stack traces in the logs then name lib/ sources, not minified code.
      NODE_OPTIONS: "--enable-source-maps",
    };
  }

  /**
   * One function from functions/<operation>.ts, its constructs' ids prefixed with `name`. A role
   * with S3 access joins `tableRoles`, which the bucket policy lets write under the tables prefix.
   */
  add(name: string, opts: FunctionOptions): SiltFunction {
    const scope = this.#scope;
    const logGroup = new logs.LogGroup(scope, `${name}Logs`, { retention: this.#logRetention });
    // An own role per function instead of the default one: the default attaches the managed
    // AWSLambdaBasicExecutionRole, whose log permissions span every log group in the account.
    const role = new iam.Role(scope, `${name}Role`, {
      assumedBy: new iam.ServicePrincipal("lambda.amazonaws.com"),
      description: `Silt ${opts.operation} function`,
    });
    if (opts.access.s3 !== false) this.tableRoles.push(role);
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [logGroup.logGroupArn],
      }),
    );
    grantDataAccess(role, opts.access, this.#storage);

    const glueSource = createRequire(import.meta.url).resolve("parquet-wasm/node");
    const wasmSource = join(dirname(glueSource), PARQUET_WASM);
    const fn = new nodejs.NodejsFunction(scope, `${name}Function`, {
      entry: join(PROJECT_ROOT, "functions", `${opts.operation}.ts`),
      handler: "handler",
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, "package-lock.json"),
      description: `Silt: ${opts.description}`,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: opts.memorySize,
      timeout: opts.timeout,
      role,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: opts.environment,
      deadLetterQueue: opts.deadLetterQueue,
      reservedConcurrentExecutions: opts.reservedConcurrentExecutions,
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
          // lib/data/parquet-wasm.ts loads the glue from SILT_PARQUET_WASM_GLUE at run time (a
          // bundled copy could never be replaced after a trap), i.e. next to the bundle.
          afterBundling: (_inputDir: string, outputDir: string) => [
            `cp "${glueSource}" "${join(outputDir, PARQUET_WASM_GLUE)}"`,
            `cp "${wasmSource}" "${join(outputDir, PARQUET_WASM)}"`,
          ],
        },
      },
    });

    this.#alarms.add(`${name}ErrorsAlarm`, {
      alarmDescription: `Silt ${opts.operation} function: ${opts.errorsMeaning}`,
      metric: fn.metricErrors({ period: Duration.minutes(5), statistic: "Sum" }),
    });

    NagSuppressions.addResourceSuppressions(fn, [
      {
        id: "AwsSolutions-L1",
        reason:
          "Pinned to Node.js 22, the runtime the project targets and tests against; moving " +
          "to a newer runtime is a deliberate upgrade, not a synth-time default.",
      },
    ]);
    return { fn, role };
  }
}
