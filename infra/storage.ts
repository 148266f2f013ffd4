/**
 * Where Silt keeps its state: the data bucket (tables, ingestion inputs, the functions' own
 * records, each under its prefix of the storage root), the bucket its access logs go to, and the
 * DynamoDB tables (the commit arbiter, the catalog, Idempotency-Key records).
 */
import {
  Duration,
  aws_dynamodb as dynamodb,
  aws_iam as iam,
  type RemovalPolicy,
  Stack,
  aws_s3 as s3,
} from "aws-cdk-lib";
import type { Construct } from "constructs";
import { TTL_ATTRIBUTE } from "../lib/kv/idempotency-store.ts";

export interface StorageProps {
  /** Key prefix of the storage root inside the bucket ("" or ending in "/"). */
  storagePrefix: string;
  /** DynamoDB deletion protection on the tables. */
  deletionProtection: boolean;
  /** Removal policy of the buckets and the DynamoDB tables. */
  removalPolicy: RemovalPolicy;
}

export class Storage {
  readonly bucket: s3.Bucket;
  readonly commitsTable: dynamodb.Table;
  readonly catalogTable: dynamodb.Table;
  readonly idempotencyTable: dynamodb.Table;
  /** The storage root's key prefix in the bucket. */
  readonly storagePrefix: string;
  /** Where the tables' files live: `<storagePrefix>tables/`. */
  readonly tablesPrefix: string;
  /** Where callers stage the objects ingestion and operations take as input: `<storagePrefix>ingest/`. */
  readonly ingestPrefix: string;

  constructor(scope: Construct, props: StorageProps) {
    const { storagePrefix, deletionProtection, removalPolicy } = props;
    if (storagePrefix !== "" && !storagePrefix.endsWith("/")) {
      throw new Error(`storagePrefix must be "" or end with "/", got "${storagePrefix}"`);
    }
    this.storagePrefix = storagePrefix;
    this.tablesPrefix = `${storagePrefix}tables/`;
    this.ingestPrefix = `${storagePrefix}ingest/`;

    const accessLogs = new s3.Bucket(scope, "AccessLogBucket", {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: "expire-access-logs", expiration: Duration.days(365) }],
      removalPolicy,
    });

    // Versioning stays off: Delta keeps its own versions in the log and never overwrites a
    // file (commits are put-if-absent, data files have unique names), so S3 versions would only
    // add noncurrent copies that VACUUM and DROP TABLE are meant to remove for good (storage
    // cost, and erasure requests would not erase). Point-in-time recovery of the arbiter plus
    // time travel cover recovery.
    this.bucket = new s3.Bucket(scope, "DataBucket", {
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
      removalPolicy,
    });
    // Object events go to EventBridge (the ingestion rule picks `ingest/` out of them). Set on
    // the CloudFormation resource: the Bucket construct's `eventBridgeEnabled` deploys it
    // through a custom resource and its Lambda instead.
    (this.bucket.node.defaultChild as s3.CfnBucket).notificationConfiguration = {
      eventBridgeConfiguration: { eventBridgeEnabled: true },
    };

    // Plain single-region tables (AWS::DynamoDB::Table) rather than TableV2's GlobalTable: Silt
    // needs no replicas, and the offline deploy test's emulator (moto) cannot create GlobalTables.
    const tableDefaults = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy,
    };
    // Commit arbiter rows (DESIGN §3): no TTL, ever. A row is the only durable record of a
    // ratified-but-unpublished commit; expiring it early loses that commit (delta-io #1410).
    this.commitsTable = new dynamodb.Table(scope, "CommitsTable", {
      partitionKey: { name: "tableId", type: dynamodb.AttributeType.STRING },
      sortKey: { name: "version", type: dynamodb.AttributeType.NUMBER },
      ...tableDefaults,
    });
    this.catalogTable = new dynamodb.Table(scope, "CatalogTable", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
      sortKey: { name: "sk", type: dynamodb.AttributeType.STRING },
      ...tableDefaults,
    });
    // Idempotency-Key records (lib/kv/idempotency-store.ts): the TTL attribute expires them a day
    // after their request; losing one early only lets a late retry run again. Its props are
    // not spread from tableDefaults: the stack's CDK metadata records props in the order given,
    // and this order keeps the deployed template unchanged.
    this.idempotencyTable = new dynamodb.Table(scope, "IdempotencyTable", {
      partitionKey: { name: "key", type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy,
    });
  }

  /**
   * Nobody but Silt's functions writes under the tables prefix (issue 6, Authorization): a
   * foreign writer could put files the log does not know or delete files it references. The
   * one exception is the table-write role, whose sessions (READ_WRITE credentials, one table
   * each) put the data files and staged commits of the engines that commit through Silt's
   * arbiter; it may not delete there either.
   */
  restrictTableWrites(functionRoles: readonly iam.Role[], tableWriteRole: iam.Role): void {
    const functionRoleArns = functionRoles.map((r) => r.roleArn);
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: "OnlySiltWritesTables",
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ["s3:PutObject"],
        resources: [this.bucket.arnForObjects(`${this.tablesPrefix}*`)],
        conditions: {
          ArnNotEquals: {
            "aws:PrincipalArn": [...functionRoleArns, tableWriteRole.roleArn],
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
        resources: [this.bucket.arnForObjects(`${this.tablesPrefix}*`)],
        conditions: { ArnNotEquals: { "aws:PrincipalArn": functionRoleArns } },
      }),
    );
  }

  /**
   * How cdk-nag names a resource pattern over the bucket's objects (`appliesTo` of a
   * suppression), e.g. `Resource::<DataBucketE3889A50.Arn>/tables/*`.
   */
  objectsFinding(keyPattern: string): string {
    const logicalId = Stack.of(this.bucket).getLogicalId(
      this.bucket.node.defaultChild as s3.CfnBucket,
    );
    return `Resource::<${logicalId}.Arn>/${keyPattern}`;
  }
}
