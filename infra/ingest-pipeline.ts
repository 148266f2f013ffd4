/**
 * The ingestion pipeline. S3 cannot notify an SQS FIFO queue, so the bucket sends its events to
 * EventBridge; a rule for "Object Created" under `<prefix>ingest/` invokes the enqueue function,
 * which puts each event on the ingestion FIFO queue with the target table as message group (one
 * table's commits serialized, tables in parallel) and a per-upload deduplication id; the ingest
 * function consumes the queue in batches, one commit per table per batch. Messages that keep
 * failing go to the queue's dead-letter queue; files that can never be ingested are recorded,
 * with the reason, on the rejected-files queue (lib/runtime/ingest-handler.ts).
 */
import {
  Duration,
  aws_events as events,
  aws_events_targets as eventTargets,
  aws_iam as iam,
  aws_lambda as lambda,
  type aws_lambda_nodejs as nodejs,
  Stack,
  aws_sqs as sqs,
  Token,
} from "aws-cdk-lib";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";
import { type Alarms, siltMetric } from "./alarms.ts";
import type { LambdaFunctions } from "./lambda-functions.ts";
import type { Storage } from "./storage.ts";

/** Where rejected-file records go in the bucket (lib/runtime/ingest-handler.ts REJECTED_PREFIX). */
const REJECTED_RECORDS = "_ingest_rejected/";

/**
 * Ten messages is the most a FIFO event source delivers at once; the handler turns each table's
 * messages of a batch into one commit, so larger batches mean fewer commits.
 */
const INGEST_BATCH_SIZE = 10;
/** Ten files of a batch are read, conformed and written in one go. */
const INGEST_TIMEOUT = Duration.minutes(5);
/** A message that failed this often goes to the dead-letter queue. */
const INGEST_MAX_RECEIVE_COUNT = 5;

export class IngestPipeline {
  /** FIFO queue of S3 "Object Created" events, one message group per table. */
  readonly ingestQueue: sqs.Queue;
  /** Messages the ingest function failed INGEST_MAX_RECEIVE_COUNT times. */
  readonly ingestDeadLetterQueue: sqs.Queue;
  /** Events the enqueue function could not put on the ingest queue. */
  readonly ingestEventsDeadLetterQueue: sqs.Queue;
  /** One message per file that could not be ingested, saying why. */
  readonly rejectedFilesQueue: sqs.Queue;
  /** functions/ingest-enqueue.ts */
  readonly enqueueFunction: nodejs.NodejsFunction;
  /** functions/ingest.ts */
  readonly ingestFunction: nodejs.NodejsFunction;

  constructor(
    scope: Construct,
    opts: { functions: LambdaFunctions; storage: Storage; alarms: Alarms },
  ) {
    const { functions, storage, alarms } = opts;
    const queueDefaults = {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    } as const;
    // FIFO queues are named: CloudFormation appends ".fifo" to a generated name, but not every
    // AWS-compatible deploy target does (moto), and a FIFO queue's name must end in it.
    const fifoName = (suffix: string) => {
      const name = `${Stack.of(scope).stackName}-${suffix}.fifo`;
      if (!Token.isUnresolved(name) && name.length > 80) {
        throw new Error(
          `Queue name ${name} is over SQS's 80 characters: use a shorter stack name.`,
        );
      }
      return name;
    };
    this.ingestDeadLetterQueue = new sqs.Queue(scope, "IngestDeadLetterQueue", {
      ...queueDefaults,
      queueName: fifoName("ingest-dead-letters"),
      fifo: true,
      retentionPeriod: Duration.days(14),
    });
    this.ingestQueue = new sqs.Queue(scope, "IngestQueue", {
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
    this.ingestEventsDeadLetterQueue = new sqs.Queue(scope, "IngestEventsDeadLetterQueue", {
      ...queueDefaults,
      retentionPeriod: Duration.days(14),
    });
    this.rejectedFilesQueue = new sqs.Queue(scope, "RejectedFilesQueue", {
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

    const enqueue = functions.add("IngestEnqueue", {
      operation: "ingest-enqueue",
      description:
        "Puts S3 Object Created events under ingest/ on the FIFO queue, grouped by table",
      memorySize: 512,
      timeout: Duration.seconds(30),
      environment: {
        SILT_STORAGE_PREFIX: storage.storagePrefix,
        SILT_INGEST_QUEUE_URL: this.ingestQueue.queueUrl,
        NODE_OPTIONS: "--enable-source-maps",
      },
      access: { s3: false, commits: [], catalog: [] },
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
    new events.Rule(scope, "IngestObjectCreatedRule", {
      description: "Silt: objects created under the ingest/ prefix, to the enqueue function",
      eventPattern: {
        source: ["aws.s3"],
        detailType: ["Object Created"],
        detail: {
          bucket: { name: [storage.bucket.bucketName] },
          object: { key: events.Match.prefix(storage.ingestPrefix) },
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

    const ingest = functions.add("Ingest", {
      operation: "ingest",
      description:
        "Appends (or merges) the files of an SQS batch into their tables, one commit each",
      // Ten input files are held as Arrow data at once, plus the Parquet written from them.
      memorySize: 3008,
      timeout: INGEST_TIMEOUT,
      environment: {
        ...functions.tableEnvironment(),
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
    const ingestSource = new lambda.EventSourceMapping(scope, "IngestEventSource", {
      target: ingest.fn,
      eventSourceArn: this.ingestQueue.queueArn,
      batchSize: INGEST_BATCH_SIZE,
      // The handler answers which messages failed; only those are redelivered.
      reportBatchItemFailures: true,
    });
    // The mapping is validated against the role's permissions when it is created.
    ingestSource.node.addDependency(ingest.role);

    alarms.add("IngestDeadLetterAlarm", {
      alarmDescription:
        "Silt ingestion: messages failed ingestion repeatedly and wait in the dead-letter queue " +
        "(see the ingest function's logs, fix the cause, then redrive them)",
      metric: this.ingestDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: "Maximum",
      }),
    });
    alarms.add("IngestEventsDeadLetterAlarm", {
      alarmDescription:
        "Silt ingestion: S3 events could not be enqueued and wait in a dead-letter queue; their " +
        "files are not ingested until the events are sent again",
      metric: this.ingestEventsDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: "Maximum",
      }),
    });
    alarms.add("RejectedFilesAlarm", {
      alarmDescription:
        "Silt ingestion: files under ingest/ were rejected (bad format or schema, missing " +
        "table); each one's reason is on the rejected-files queue and under _ingest_rejected/",
      metric: siltMetric("RejectedObjects", "INGEST"),
    });
    this.enqueueFunction = enqueue.fn;
    this.ingestFunction = ingest.fn;
  }
}
