/**
 * The deployed shape of Silt (DESIGN §7), composed of its parts: storage (storage.ts: the bucket
 * for table data and the DynamoDB tables: the commit arbiter, the catalog, Idempotency-Key
 * records), one Lambda per operation in functions/ (functions-table.ts, api-functions.ts) behind
 * an HTTP API with an authorizer on every route (http-api.ts), credential vending
 * (credential-vending.ts), the ingestion pipeline (ingest-pipeline.ts), the maintenance schedule
 * (maintenance.ts), and alarms (alarms.ts).
 *
 * The parts build their resources in the stack's own scope rather than as nested constructs: a
 * resource's logical ID is derived from its construct path, and a changed logical ID makes
 * CloudFormation replace the resource, which for the retained bucket and tables means orphaning
 * the deployed data and starting empty. The order the parts are built in is the template's order.
 *
 * Only plain CloudFormation resources: no custom resources (so nothing needs a Lambda to run at
 * deploy time) and no Docker.
 */
import {
  type aws_apigatewayv2 as apigw,
  CfnOutput,
  type aws_dynamodb as dynamodb,
  type aws_iam as iam,
  aws_logs as logs,
  type aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
  type StackProps,
  type aws_s3 as s3,
  type aws_sqs as sqs,
} from "aws-cdk-lib";
import type { Construct } from "constructs";
import type { Operation } from "../lib/api/operations.ts";
import { Alarms } from "./alarms.ts";
import { createApiFunctions, type ReservedConcurrency } from "./api-functions.ts";
import { CredentialVending } from "./credential-vending.ts";
import { FUNCTIONS } from "./functions-table.ts";
import { HttpApi, type SiltAuth } from "./http-api.ts";
import { IngestPipeline } from "./ingest-pipeline.ts";
import { LambdaFunctions } from "./lambda-functions.ts";
import { Maintenance } from "./maintenance.ts";
import { Storage } from "./storage.ts";

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
  /**
   * Reserved concurrency of the operations' functions, over FUNCTIONS' defaults (optimize and
   * vacuum: 2 each; the others none): a number reserves that many executions, null none.
   */
  reservedConcurrency?: ReservedConcurrency;
  /**
   * Throttling of the HTTP API's default stage, in requests per second. Default rate 100,
   * burst 200.
   */
  throttle?: { rateLimit?: number; burstLimit?: number };
}

export const DEFAULT_THROTTLE = { rateLimit: 100, burstLimit: 200 } as const;

/** The functions outside the HTTP API, keyed by their file in functions/. */
export type PipelineFunction = "ingest-enqueue" | "ingest" | "maintenance";

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
  /** Messages the ingest function failed repeatedly. */
  readonly ingestDeadLetterQueue: sqs.Queue;
  /** Events the enqueue function could not put on the ingest queue. */
  readonly ingestEventsDeadLetterQueue: sqs.Queue;
  /** One message per file that could not be ingested, saying why. */
  readonly rejectedFilesQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: SiltStackProps = {}) {
    super(scope, id, props);
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const auth = props.auth ?? { type: "iam" };

    const storage = new Storage(this, {
      storagePrefix: props.storagePrefix ?? "",
      deletionProtection: props.deletionProtection ?? true,
      removalPolicy: props.dataRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.bucket = storage.bucket;
    this.commitsTable = storage.commitsTable;
    this.catalogTable = storage.catalogTable;
    this.idempotencyTable = storage.idempotencyTable;
    const alarms = new Alarms(this, props.alarmTopicArn);
    const functions = new LambdaFunctions(this, { storage, alarms, logRetention });

    this.functions = createApiFunctions(functions, storage, auth, props.reservedConcurrency);
    const vendors = (Object.keys(FUNCTIONS) as Operation[])
      .filter((op) => FUNCTIONS[op].vendsCredentials === true)
      .map((op) => this.functions[op]);
    const vending = new CredentialVending(this, vendors, storage);
    this.tableAccessRole = vending.tableAccessRole;
    this.tableWriteRole = vending.tableWriteRole;

    const ingest = new IngestPipeline(this, { functions, storage, alarms });
    this.ingestQueue = ingest.ingestQueue;
    this.ingestDeadLetterQueue = ingest.ingestDeadLetterQueue;
    this.ingestEventsDeadLetterQueue = ingest.ingestEventsDeadLetterQueue;
    this.rejectedFilesQueue = ingest.rejectedFilesQueue;
    const maintenance = new Maintenance(this, {
      functions,
      alarms,
      schedule: props.maintenanceSchedule ?? "rate(1 hour)",
    });
    this.pipelineFunctions = {
      "ingest-enqueue": ingest.enqueueFunction,
      ingest: ingest.ingestFunction,
      maintenance: maintenance.fn,
    };

    // Every function that works on tables exists by now, so the writers' list is complete.
    storage.restrictTableWrites(functions.tableRoles, this.tableWriteRole);

    const httpApi = new HttpApi(this, {
      auth,
      functions: this.functions,
      logRetention,
      alarms,
      throttle: {
        rateLimit: props.throttle?.rateLimit ?? DEFAULT_THROTTLE.rateLimit,
        burstLimit: props.throttle?.burstLimit ?? DEFAULT_THROTTLE.burstLimit,
      },
    });
    this.api = httpApi.api;

    new CfnOutput(this, "ApiUrl", { value: httpApi.url });
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
}
