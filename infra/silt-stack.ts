/**
 * The deployed shape of Silt (DESIGN §7): one bucket for table data, DynamoDB tables (the commit
 * arbiter, the catalog, Idempotency-Key records), one Lambda per operation in functions/, an HTTP
 * API in front with an authorizer on every route, the ingestion pipeline, the maintenance
 * schedule, and alarms.
 *
 * Ingestion: S3 cannot notify an SQS FIFO queue, so the bucket sends its events to EventBridge; a
 * rule for "Object Created" under `<prefix>ingest/` invokes the enqueue function, which puts each
 * event on the ingestion FIFO queue with the target table as message group (one table's commits
 * serialized, tables in parallel) and a per-upload deduplication id; the ingest function consumes
 * the queue in batches, one commit per table per batch. Messages that keep failing go to the
 * queue's dead-letter queue; files that can never be ingested are recorded, with the reason, on
 * the rejected-files queue (lib/runtime/ingest-handler.ts). Maintenance: an EventBridge schedule
 * invokes the maintenance function (lib/runtime/maintenance-handler.ts).
 *
 * Only plain CloudFormation resources: no custom resources (so nothing needs a Lambda to run at
 * deploy time) and no Docker.
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
  aws_events as events,
  aws_events_targets as eventTargets,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
  type StackProps,
  aws_s3 as s3,
  aws_sns as sns,
  aws_sqs as sqs,
  Token,
} from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";
import type { Operation } from "../lib/api/app.ts";
import { TTL_ATTRIBUTE } from "../lib/api/idempotency.ts";
import { METRICS_DIMENSION, METRICS_NAMESPACE } from "../lib/metrics.ts";

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
  /**
   * When the maintenance function runs: an EventBridge schedule expression. Default
   * "rate(1 hour)". Each run works at most 15 minutes and the next one continues where it stopped.
   */
  maintenanceSchedule?: string;
}

type DynamoAction = "GetItem" | "PutItem" | "UpdateItem" | "DeleteItem" | "Query";

/** What a function's code path touches in the bucket and the DynamoDB tables. */
interface AccessSpec {
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
  /** Other key prefixes under the storage root, with the object actions used there. */
  objects?: ReadonlyArray<{ prefix: string; actions: readonly string[] }>;
  /** Items of the commits table (arbiter): ratify = PutItem, markPublished = UpdateItem. */
  commits: readonly DynamoAction[];
  /** Items of the catalog table. */
  catalog: readonly DynamoAction[];
}

interface FunctionSpec extends AccessSpec {
  description: string;
  memorySize: number;
  routes: ReadonlyArray<readonly [apigw.HttpMethod, string]>;
  /** Whether Idempotency-Key records apply; default when it serves POST or DELETE. */
  idempotent?: boolean;
  /**
   * Vends table credentials (lib/auth/credentials.ts): may assume the table-access role (READ)
   * and the table-write role (READ_WRITE), whose ARNs it reads from SILT_TABLE_ACCESS_ROLE_ARN
   * and SILT_TABLE_WRITE_ROLE_ARN.
   */
  vendsCredentials?: boolean;
}

const { GET, POST, DELETE, PATCH, ANY } = apigw.HttpMethod;

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
  permissions: {
    description: "GRANT / REVOKE / SHOW GRANTS on catalogs, schemas and tables",
    memorySize: 1024,
    routes: [
      [GET, "/api/v1/permissions/{securable_type}/{full_name}"],
      [PATCH, "/api/v1/permissions/{securable_type}/{full_name}"],
    ],
    // Entries and grant items by key; a grant or revoke is an UpdateItem of one grant item.
    s3: false,
    commits: [],
    catalog: ["GetItem", "UpdateItem"],
  },
  credentials: {
    description:
      "Temporary credentials to read or write one table's files (AssumeRole, session policy)",
    memorySize: 1024,
    routes: [[POST, "/api/v1/temporary-table-credentials"]],
    // Vending commits nothing, and its answers are secrets no idempotency record may keep.
    idempotent: false,
    vendsCredentials: true,
    s3: false,
    commits: [],
    catalog: ["GetItem"],
  },
  "unity-catalog": {
    description:
      "Unity Catalog REST API (legacy and Delta): catalogs, schemas, tables, staging, commits of other engines",
    memorySize: 1024,
    // Both UC APIs share one function: each route is small, and Spark calls several per statement.
    routes: [[ANY, "/api/2.1/unity-catalog/{proxy+}"]],
    // Commits and stagings are decided by the arbiter and the catalog; a replay is an idempotent
    // 200 by the UC protocol itself. (Its routes come before the Idempotency-Key middleware in
    // lib/api/app.ts, whose records would also keep the credentials it vends.)
    idempotent: false,
    // UC clients read and write a table's files with the credentials of
    // temporary-table-credentials, the Delta API's …/credentials and staging, as the credentials
    // function vends them.
    vendsCredentials: true,
    // Reads footers and commits, publishes them, and deletes a table's files on drop or on a
    // refused finalize.
    s3: { read: true, write: "log", delete: true },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query"],
  },
};

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

/** The functions outside the HTTP API, keyed by their file in functions/. */
export type PipelineFunction = "ingest-enqueue" | "ingest" | "maintenance";

/** Where rejected-file records go in the bucket (lib/runtime/ingest-handler.ts REJECTED_PREFIX). */
const REJECTED_RECORDS = "_ingest_rejected/";
/** The maintenance run's cursor (lib/runtime/maintenance-handler.ts CURSOR_KEY). */
const MAINTENANCE_STATE = "_maintenance/";

/**
 * Ten messages is the most a FIFO event source delivers at once; the handler turns each table's
 * messages of a batch into one commit, so larger batches mean fewer commits.
 */
const INGEST_BATCH_SIZE = 10;
/** Ten files of a batch are read, conformed and written in one go. */
const INGEST_TIMEOUT = Duration.minutes(5);
/** A message that failed this often goes to the dead-letter queue. */
const INGEST_MAX_RECEIVE_COUNT = 5;

export class SiltStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly commitsTable: dynamodb.Table;
  readonly catalogTable: dynamodb.Table;
  readonly idempotencyTable: dynamodb.Table;
  readonly api: apigw.HttpApi;
  readonly functions: Record<Operation, nodejs.NodejsFunction>;
  /** Assumed per request by the vending functions, narrowed to one table (credential vending). */
  readonly tableAccessRole: iam.Role;
  /**
   * As the table-access role, for READ_WRITE credentials: also puts objects under tables/ (the
   * bucket policy admits it there), never deletes them.
   */
  readonly tableWriteRole: iam.Role;
  readonly pipelineFunctions: Record<PipelineFunction, nodejs.NodejsFunction>;
  /** FIFO queue of S3 "Object Created" events, one message group per table. */
  readonly ingestQueue: sqs.Queue;
  /** Messages the ingest function failed INGEST_MAX_RECEIVE_COUNT times. */
  readonly ingestDeadLetterQueue: sqs.Queue;
  /** Events the enqueue function could not put on the ingest queue. */
  readonly ingestEventsDeadLetterQueue: sqs.Queue;
  /** One message per file that could not be ingested, saying why. */
  readonly rejectedFilesQueue: sqs.Queue;
  readonly #alarmAction: cloudwatch.IAlarmAction | undefined;
  /** Roles of the functions that work on tables: the only writers the bucket policy allows. */
  readonly #functionRoles: iam.Role[] = [];

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
    // Object events go to EventBridge (the ingestion rule below picks `ingest/` out of them).
    // Set on the CloudFormation resource: the Bucket construct's `eventBridgeEnabled` deploys it
    // through a custom resource and its Lambda instead.
    (this.bucket.node.defaultChild as s3.CfnBucket).notificationConfiguration = {
      eventBridgeConfiguration: { eventBridgeEnabled: true },
    };

    // Plain single-region tables (AWS::DynamoDB::Table) rather than TableV2's GlobalTable: Silt
    // needs no replicas, and the offline deploy test's emulator (moto) cannot create GlobalTables.
    // Commit arbiter rows (DESIGN §3): no TTL, ever. A row is the only durable record of a
    // ratified-but-unpublished commit; expiring it early loses that commit (delta-io #1410).
    this.commitsTable = new dynamodb.Table(this, "CommitsTable", {
      partitionKey: { name: "tableId", type: dynamodb.AttributeType.STRING },
      sortKey: { name: "version", type: dynamodb.AttributeType.NUMBER },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy: dataRemovalPolicy,
    });
    this.catalogTable = new dynamodb.Table(this, "CatalogTable", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
      sortKey: { name: "sk", type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy: dataRemovalPolicy,
    });
    // Idempotency-Key records (lib/api/idempotency.ts): the TTL attribute expires them a day
    // after their request; losing one early only lets a late retry run again.
    this.idempotencyTable = new dynamodb.Table(this, "IdempotencyTable", {
      partitionKey: { name: "key", type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy: dataRemovalPolicy,
    });

    this.#alarmAction =
      props.alarmTopicArn === undefined
        ? undefined
        : new cwActions.SnsAction(sns.Topic.fromTopicArn(this, "AlarmTopic", props.alarmTopicArn));

    const auth = props.auth ?? { type: "iam" };
    const functions = {} as Record<Operation, nodejs.NodejsFunction>;
    for (const [operation, spec] of Object.entries(FUNCTIONS) as [Operation, FunctionSpec][]) {
      const name = operation[0]!.toUpperCase() + operation.slice(1);
      // The Idempotency-Key middleware handles POST and DELETE requests only.
      const mutating =
        spec.idempotent ?? spec.routes.some(([method]) => method === POST || method === DELETE);
      const environment: Record<string, string> = {
        ...this.#tableEnvironment(storagePrefix),
        // Each request runs as the caller the authorizer names (lib/auth/principal.ts).
        SILT_AUTH: auth.type,
        ...(mutating ? { SILT_IDEMPOTENCY_TABLE: this.idempotencyTable.tableName } : {}),
      };
      const { fn, role } = this.#function(name, {
        operation,
        description: spec.description,
        memorySize: spec.memorySize,
        // HTTP APIs stop waiting for an integration after 30 s and cannot be configured longer;
        // ending first means a slow request is recorded as a function timeout (and alarmed on)
        // rather than running on unseen after the caller got a 503.
        timeout: Duration.seconds(29),
        environment,
        access: spec,
        tablesPrefix,
        logRetention,
        errorsMeaning:
          "invocations failed (unhandled error, timeout or start-up failure; handled errors " +
          "become HTTP responses and show in the API 5xx alarm)",
      });
      if (mutating) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: IDEMPOTENCY_ACTIONS.map((a) => `dynamodb:${a}`),
            resources: [this.idempotencyTable.tableArn],
          }),
        );
      }
      functions[operation] = fn;
    }
    this.functions = functions;
    const vendors = (Object.keys(FUNCTIONS) as Operation[]).filter(
      (op) => FUNCTIONS[op].vendsCredentials === true,
    );
    const vendorFunctions = vendors.map((op) => functions[op]);
    this.tableAccessRole = this.#vendedRole("TableAccessRole", vendorFunctions, tablesPrefix, {
      description: "Silt: read access to one table per session, vended by Silt's functions",
      objectActions: ["s3:GetObject"],
      environmentVariable: "SILT_TABLE_ACCESS_ROLE_ARN",
      sessionPolicy: "readSessionPolicy",
    });
    this.tableWriteRole = this.#vendedRole("TableWriteRole", vendorFunctions, tablesPrefix, {
      description:
        "Silt: read and write (no delete) access to one table per session, vended by Silt's functions",
      // TABLE_WRITE_ACTIONS of lib/auth/credentials.ts, the READ_WRITE session policy's
      // (test/infra.test.ts compares them): PutObject is also every step of a multipart upload
      // but its abort, which Hadoop S3A sends when an upload fails.
      objectActions: ["s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"],
      environmentVariable: "SILT_TABLE_WRITE_ROLE_ARN",
      sessionPolicy: "readWriteSessionPolicy",
    });

    // ---- Ingestion ----
    const queueDefaults = {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    } as const;
    // FIFO queues are named: CloudFormation appends ".fifo" to a generated name, but not every
    // AWS-compatible deploy target does (moto), and a FIFO queue's name must end in it.
    const fifoName = (suffix: string) => {
      const name = `${this.stackName}-${suffix}.fifo`;
      if (!Token.isUnresolved(name) && name.length > 80) {
        throw new Error(
          `Queue name ${name} is over SQS's 80 characters: use a shorter stack name.`,
        );
      }
      return name;
    };
    this.ingestDeadLetterQueue = new sqs.Queue(this, "IngestDeadLetterQueue", {
      ...queueDefaults,
      queueName: fifoName("ingest-dead-letters"),
      fifo: true,
      retentionPeriod: Duration.days(14),
    });
    this.ingestQueue = new sqs.Queue(this, "IngestQueue", {
      ...queueDefaults,
      queueName: fifoName("ingest"),
      fifo: true,
      // The enqueue function sets a deduplication id per upload, scoped to the table's group;
      // high-throughput FIFO then scales with the number of tables.
      contentBasedDeduplication: false,
      deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      // AWS's guidance for a Lambda event source: at least six times the function's timeout,
      // so a batch is not redelivered to a second invocation while the first still works on it.
      visibilityTimeout: Duration.seconds(INGEST_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: {
        queue: this.ingestDeadLetterQueue,
        maxReceiveCount: INGEST_MAX_RECEIVE_COUNT,
      },
    });
    this.ingestEventsDeadLetterQueue = new sqs.Queue(this, "IngestEventsDeadLetterQueue", {
      ...queueDefaults,
      retentionPeriod: Duration.days(14),
    });
    this.rejectedFilesQueue = new sqs.Queue(this, "RejectedFilesQueue", {
      ...queueDefaults,
      retentionPeriod: Duration.days(14),
    });
    NagSuppressions.addResourceSuppressions(this.rejectedFilesQueue, [
      {
        id: "AwsSolutions-SQS3",
        reason:
          "The rejected-files queue is itself a dead-letter destination: it receives one record " +
          "per file that can never be ingested, for operators and tools to read; nothing " +
          "consumes it automatically, so there is nothing to redrive from it.",
      },
    ]);

    const enqueue = this.#function("IngestEnqueue", {
      operation: "ingest-enqueue",
      description:
        "Puts S3 Object Created events under ingest/ on the FIFO queue, grouped by table",
      memorySize: 512,
      timeout: Duration.seconds(30),
      environment: {
        SILT_STORAGE_PREFIX: storagePrefix,
        SILT_INGEST_QUEUE_URL: this.ingestQueue.queueUrl,
        NODE_OPTIONS: "--enable-source-maps",
      },
      access: { s3: false, commits: [], catalog: [] },
      tablesPrefix,
      logRetention,
      errorsMeaning: "could not enqueue an S3 event (retried, then kept in its dead-letter queue)",
      // After Lambda's two retries of the asynchronous invocation.
      deadLetterQueue: this.ingestEventsDeadLetterQueue,
    });
    enqueue.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["sqs:SendMessage"],
        resources: [this.ingestQueue.queueArn],
      }),
    );
    new events.Rule(this, "IngestObjectCreatedRule", {
      description: "Silt: objects created under the ingest/ prefix, to the enqueue function",
      eventPattern: {
        source: ["aws.s3"],
        detailType: ["Object Created"],
        detail: {
          bucket: { name: [this.bucket.bucketName] },
          object: { key: events.Match.prefix(`${storagePrefix}ingest/`) },
        },
      },
      targets: [
        new eventTargets.LambdaFunction(enqueue.fn, {
          deadLetterQueue: this.ingestEventsDeadLetterQueue,
          maxEventAge: Duration.hours(24),
          retryAttempts: 185,
        }),
      ],
    });

    const ingest = this.#function("Ingest", {
      operation: "ingest",
      description:
        "Appends (or merges) the files of an SQS batch into their tables, one commit each",
      // Ten input files are held as Arrow data at once, plus the Parquet written from them.
      memorySize: 3008,
      timeout: INGEST_TIMEOUT,
      environment: {
        ...this.#tableEnvironment(storagePrefix),
        SILT_REJECTED_QUEUE_URL: this.rejectedFilesQueue.queueUrl,
      },
      access: {
        // Appends write data files; merges also write deletion vectors. Nothing is deleted.
        s3: { read: true, write: "table", delete: false },
        ingest: true,
        objects: [{ prefix: REJECTED_RECORDS, actions: ["s3:PutObject"] }],
        commits: ["Query", "PutItem", "UpdateItem"],
        catalog: ["GetItem"],
      },
      tablesPrefix,
      logRetention,
      errorsMeaning: "a batch failed as a whole (its messages are redelivered)",
    });
    // What the event source mapping needs to poll the queue on the function's behalf.
    ingest.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
        resources: [this.ingestQueue.queueArn],
      }),
    );
    ingest.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["sqs:SendMessage"],
        resources: [this.rejectedFilesQueue.queueArn],
      }),
    );
    const ingestSource = new lambda.EventSourceMapping(this, "IngestEventSource", {
      target: ingest.fn,
      eventSourceArn: this.ingestQueue.queueArn,
      batchSize: INGEST_BATCH_SIZE,
      // The handler answers which messages failed; only those are redelivered.
      reportBatchItemFailures: true,
    });
    // The mapping is validated against the role's permissions when it is created.
    ingestSource.node.addDependency(ingest.role);

    this.#alarm("IngestDeadLetterAlarm", {
      alarmDescription:
        "Silt ingestion: messages failed ingestion repeatedly and wait in the dead-letter queue " +
        "(see the ingest function's logs, fix the cause, then redrive them)",
      metric: this.ingestDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: "Maximum",
      }),
    });
    this.#alarm("IngestEventsDeadLetterAlarm", {
      alarmDescription:
        "Silt ingestion: S3 events could not be enqueued and wait in a dead-letter queue; their " +
        "files are not ingested until the events are sent again",
      metric: this.ingestEventsDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: "Maximum",
      }),
    });
    this.#alarm("RejectedFilesAlarm", {
      alarmDescription:
        "Silt ingestion: files under ingest/ were rejected (bad format or schema, missing " +
        "table); each one's reason is on the rejected-files queue and under _ingest_rejected/",
      metric: siltMetric("RejectedObjects", "INGEST"),
    });

    // ---- Maintenance ----
    const maintenance = this.#function("Maintenance", {
      operation: "maintenance",
      description: "Scheduled checkpoints, OPTIMIZE, VACUUM and log cleanup, as tables ask",
      // One OPTIMIZE bin at a time, as the optimize function.
      memorySize: FUNCTIONS.optimize.memorySize,
      // Lambda's limit; the run stops starting work well before it (maintenance-handler.ts).
      timeout: Duration.minutes(15),
      environment: this.#tableEnvironment(storagePrefix),
      access: {
        // Checkpoints (log), OPTIMIZE (data files), VACUUM and log cleanup (deletes).
        s3: { read: true, write: "table", delete: true },
        objects: [{ prefix: MAINTENANCE_STATE, actions: ["s3:GetObject", "s3:PutObject"] }],
        commits: ["Query", "PutItem", "UpdateItem"],
        // Listing catalogs, schemas and tables is Query; opening a table is GetItem; the storage
        // sweep deletes abandoned entries, their id index and grants (DeleteItem).
        catalog: ["GetItem", "Query", "DeleteItem"],
      },
      tablesPrefix,
      logRetention,
      errorsMeaning: "a maintenance run failed as a whole (one table's failure is only logged)",
      // Runs never overlap: a slow one finishing while the next is due would redo its work.
      reservedConcurrentExecutions: 1,
    });
    new events.Rule(this, "MaintenanceSchedule", {
      description: "Silt: scheduled table maintenance",
      schedule: events.Schedule.expression(props.maintenanceSchedule ?? "rate(1 hour)"),
      targets: [new eventTargets.LambdaFunction(maintenance.fn)],
    });
    this.#alarm("MaintenanceFailuresAlarm", {
      alarmDescription:
        "Silt maintenance: a checkpoint, OPTIMIZE, VACUUM or log cleanup of a table failed " +
        "(the maintenance function's log says which and why; it is retried next run)",
      metric: siltMetric("MaintenanceFailures", "MAINTENANCE"),
    });
    this.pipelineFunctions = {
      "ingest-enqueue": enqueue.fn,
      ingest: ingest.fn,
      maintenance: maintenance.fn,
    };

    // Nobody but Silt's functions writes under the tables prefix (issue 6, Authorization): a
    // foreign writer could put files the log does not know or delete files it references. The
    // one exception is the table-write role, whose sessions (READ_WRITE credentials, one table
    // each) put the data files and staged commits of the engines that commit through Silt's
    // arbiter; it may not delete there either.
    const functionRoleArns = this.#functionRoles.map((r) => r.roleArn);
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: "OnlySiltWritesTables",
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ["s3:PutObject"],
        resources: [this.bucket.arnForObjects(`${tablesPrefix}*`)],
        conditions: {
          ArnNotEquals: {
            "aws:PrincipalArn": [...functionRoleArns, this.tableWriteRole.roleArn],
          },
        },
      }),
    );
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: "OnlySiltFunctionsDeleteTables",
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ["s3:DeleteObject"],
        resources: [this.bucket.arnForObjects(`${tablesPrefix}*`)],
        conditions: { ArnNotEquals: { "aws:PrincipalArn": functionRoleArns } },
      }),
    );

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

    this.#alarm("ApiServerErrorsAlarm", {
      alarmDescription: "Silt HTTP API answered 5xx (internal errors, function failures)",
      metric: this.api.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
    });

    new CfnOutput(this, "ApiUrl", { value: stage.url });
    new CfnOutput(this, "BucketName", { value: this.bucket.bucketName });
    new CfnOutput(this, "CommitsTableName", { value: this.commitsTable.tableName });
    new CfnOutput(this, "CatalogTableName", { value: this.catalogTable.tableName });
    new CfnOutput(this, "IdempotencyTableName", { value: this.idempotencyTable.tableName });
    new CfnOutput(this, "IngestQueueUrl", { value: this.ingestQueue.queueUrl });
    new CfnOutput(this, "IngestDeadLetterQueueUrl", { value: this.ingestDeadLetterQueue.queueUrl });
    new CfnOutput(this, "IngestEventsDeadLetterQueueUrl", {
      value: this.ingestEventsDeadLetterQueue.queueUrl,
    });
    new CfnOutput(this, "RejectedFilesQueueUrl", { value: this.rejectedFilesQueue.queueUrl });
  }

  /**
   * Credential vending (lib/auth/credentials.ts): a role whose sessions callers receive, READ
   * (the table-access role) or READ_WRITE (the table-write role). The vending functions (the
   * credentials one, and the Unity Catalog one for its clients) assume it per request with a
   * session policy narrowing it to one table's prefix; the role itself may do `objectActions`
   * on the objects under the tables prefix and list that prefix, nothing else. Neither may
   * delete there: that is for Silt's functions alone, and the bucket policy denies it to
   * everyone else anyway.
   */
  #vendedRole(
    id: string,
    vendors: nodejs.NodejsFunction[],
    tablesPrefix: string,
    opts: {
      description: string;
      objectActions: string[];
      environmentVariable: string;
      /** The function in lib/auth/credentials.ts that narrows each session (for cdk-nag's reason). */
      sessionPolicy: string;
    },
  ): iam.Role {
    const role = new iam.Role(this, id, {
      assumedBy: new iam.CompositePrincipal(
        ...vendors.map((vendor) => new iam.ArnPrincipal((vendor.role as iam.Role).roleArn)),
      ),
      description: opts.description,
      // Vended credentials last one hour; a role chained from a Lambda role cannot exceed that.
      maxSessionDuration: Duration.hours(1),
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: opts.objectActions,
        resources: [this.bucket.arnForObjects(`${tablesPrefix}*`)],
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["s3:ListBucket"],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { "s3:prefix": [`${tablesPrefix}*`] } },
      }),
    );
    for (const vendor of vendors) {
      (vendor.role as iam.Role).addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ["sts:AssumeRole"], resources: [role.roleArn] }),
      );
      vendor.addEnvironment(opts.environmentVariable, role.roleArn);
    }
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: "AwsSolutions-IAM5",
          reason:
            "Table objects are keyed tables/<uuid>/<file>, so a prefix pattern is the narrowest " +
            "resource naming them all; each session is narrowed further to one table by its " +
            `session policy (lib/auth/credentials.ts ${opts.sessionPolicy}).`,
          appliesTo: [`Resource::<${this.#logicalId(this.bucket)}.Arn>/${tablesPrefix}*`],
        },
      ],
      true,
    );
    return role;
  }

  /** What every function that builds a context from the environment reads (lambda.ts). */
  #tableEnvironment(storagePrefix: string): Record<string, string> {
    return {
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
    };
  }

  /**
   * Every Silt alarm fires on the first occurrence in a period (an error, a dead letter, a
   * rejected file), and a quiet period is not a breach.
   */
  #alarm(
    id: string,
    alarmProps: Pick<cloudwatch.AlarmProps, "alarmDescription" | "metric">,
  ): cloudwatch.Alarm {
    const a = new cloudwatch.Alarm(this, id, {
      ...alarmProps,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (this.#alarmAction !== undefined) a.addAlarmAction(this.#alarmAction);
    return a;
  }

  /**
   * One function from functions/<operation>.ts: its own log group, its own role with exactly the
   * access given, an alarm on its Errors. Its role may write under the tables prefix (the bucket
   * policy lets only these roles).
   */
  #function(
    name: string,
    opts: {
      operation: string;
      description: string;
      memorySize: number;
      timeout: Duration;
      environment: Record<string, string>;
      access: AccessSpec;
      tablesPrefix: string;
      logRetention: logs.RetentionDays;
      /** What the Errors metric counting up means for this function. */
      errorsMeaning: string;
      deadLetterQueue?: sqs.IQueue;
      reservedConcurrentExecutions?: number;
    },
  ): { fn: nodejs.NodejsFunction; role: iam.Role } {
    const logGroup = new logs.LogGroup(this, `${name}Logs`, { retention: opts.logRetention });
    // An own role per function instead of the default one: the default attaches the managed
    // AWSLambdaBasicExecutionRole, whose log permissions span every log group in the account.
    const role = new iam.Role(this, `${name}Role`, {
      assumedBy: new iam.ServicePrincipal("lambda.amazonaws.com"),
      description: `Silt ${opts.operation} function`,
    });
    if (opts.access.s3 !== false) this.#functionRoles.push(role);
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [logGroup.logGroupArn],
      }),
    );
    this.#grantData(role, opts.access, opts.tablesPrefix);

    const wasmSource = createRequire(import.meta.url).resolve(`parquet-wasm/esm/${PARQUET_WASM}`);
    const fn = new nodejs.NodejsFunction(this, `${name}Function`, {
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
          // lib/data/parquet.ts loads the wasm from SILT_PARQUET_WASM, i.e. next to the bundle.
          afterBundling: (_inputDir: string, outputDir: string) => [
            `cp "${wasmSource}" "${join(outputDir, PARQUET_WASM)}"`,
          ],
        },
      },
    });

    this.#alarm(`${name}ErrorsAlarm`, {
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

  #grantData(role: iam.Role, spec: AccessSpec, tablesPrefix: string): void {
    const tableObjects = this.bucket.arnForObjects(`${tablesPrefix}*`);
    const storagePrefix = tablesPrefix.replace(/tables\/$/, "");
    const ingestPrefix = `${storagePrefix}ingest/`;
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
      for (const { prefix, actions } of spec.objects ?? []) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: [...actions],
            resources: [this.bucket.arnForObjects(`${storagePrefix}${prefix}*`)],
          }),
        );
        wildcardFindings.push(
          `Resource::<${this.#logicalId(this.bucket)}.Arn>/${storagePrefix}${prefix}*`,
        );
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
    const dynamo = (table: dynamodb.Table, actions: readonly DynamoAction[]) => {
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
              "and per file, input objects under the ingest prefix are named by callers, and " +
              "rejected-file records and the maintenance cursor live under their own prefixes, " +
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

/** A metric the functions write as EMF lines (lib/metrics.ts), summed over five minutes. */
function siltMetric(metricName: string, operation: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { [METRICS_DIMENSION]: operation },
    period: Duration.minutes(5),
    statistic: "Sum",
  });
}
