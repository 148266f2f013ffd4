/**
 * A function role's access to Silt's state, written out action by action from what its code
 * path calls, never from the CDK `grant*` helpers, whose action lists carry wildcards
 * (`s3:GetObject*`, `s3:List*`) and far more than a function uses.
 */
import { type aws_dynamodb as dynamodb, aws_iam as iam } from "aws-cdk-lib";
import { NagSuppressions } from "cdk-nag";
import type { Storage } from "./storage.ts";

export type DynamoAction = "GetItem" | "PutItem" | "UpdateItem" | "DeleteItem" | "Query";

/** What a function's code path touches in the bucket and the DynamoDB tables. */
export interface AccessSpec {
  /**
   * S3 access under `<prefix>tables/`: read = GetObject (also what HeadObject needs); write =
   * PutObject anywhere in a table, or only into `_delta_log/` for the cooperative publishing
   * that opening a table performs (lib/ops/open-table.ts); delete = DeleteObject (DeleteObjects
   * is authorised per key by it).
   */
  s3: { read: boolean; write: "table" | "log" | false; delete: boolean } | false;
  /**
   * GetObject under `<prefix>ingest/`, where callers stage the Parquet/CSV/JSON objects an
   * operation takes as input (lib/ops/source-objects.ts).
   */
  ingest?: boolean;
  /** Other key prefixes under the storage root, with the object actions used there. */
  objects?: ReadonlyArray<{ prefix: string; actions: readonly string[] }>;
  /** Items of the commits table (arbiter): ratify = PutItem, markPublished = UpdateItem. */
  commits: readonly DynamoAction[];
  /** Items of the catalog table. */
  catalog: readonly DynamoAction[];
}

export function grantDataAccess(role: iam.Role, spec: AccessSpec, storage: Storage): void {
  const { bucket, storagePrefix, tablesPrefix, ingestPrefix } = storage;
  const wildcardFindings: string[] = [];
  if (spec.s3 !== false) {
    // Not narrowed by an s3:prefix condition on purpose: S3 answers a GET or HEAD of a
    // missing key with 404 only to callers allowed ListBucket on the bucket (403 otherwise),
    // and that check carries no prefix. The engine depends on the 404 (a table without
    // `_last_checkpoint`, publish's "already there?" probe); keys reveal no table data.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] }),
    );
    const objectActions = [
      ...(spec.s3.read ? ["s3:GetObject"] : []),
      ...(spec.s3.write === "table" ? ["s3:PutObject"] : []),
      ...(spec.s3.delete ? ["s3:DeleteObject"] : []),
    ];
    const grantObjects = (actions: readonly string[], keyPattern: string) => {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: [...actions],
          resources: [bucket.arnForObjects(keyPattern)],
        }),
      );
      wildcardFindings.push(storage.objectsFinding(keyPattern));
    };
    if (objectActions.length > 0) grantObjects(objectActions, `${tablesPrefix}*`);
    if (spec.ingest) grantObjects(["s3:GetObject"], `${ingestPrefix}*`);
    for (const { prefix, actions } of spec.objects ?? []) {
      grantObjects(actions, `${storagePrefix}${prefix}*`);
    }
    if (spec.s3.write === "log") grantObjects(["s3:PutObject"], `${tablesPrefix}*/_delta_log/*`);
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
  dynamo(storage.commitsTable, spec.commits);
  dynamo(storage.catalogTable, spec.catalog);
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
