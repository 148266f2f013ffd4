/**
 * Credential vending (lib/auth/credentials.ts): the roles whose sessions callers receive, READ
 * (the table-access role) or READ_WRITE (the table-write role). The vending functions (the
 * credentials one, and the Unity Catalog one for its clients) assume them per request with a
 * session policy narrowing them to one table's prefix; a role itself may do its object actions
 * on the objects under the tables prefix and list that prefix, nothing else. Neither may delete
 * there: that is for Silt's functions alone, and the bucket policy denies it to everyone else
 * anyway.
 */
import { Duration, aws_iam as iam, type aws_lambda_nodejs as nodejs } from "aws-cdk-lib";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";
import type { Storage } from "./storage.ts";

interface VendedRoleOptions {
  description: string;
  objectActions: string[];
  environmentVariable: string;
  /** The function in lib/auth/credentials.ts that narrows each session (for cdk-nag's reason). */
  sessionPolicy: string;
}

export class CredentialVending {
  /** Assumed per request by the vending functions, narrowed to one table. */
  readonly tableAccessRole: iam.Role;
  /**
   * As the table-access role, for READ_WRITE credentials: also puts objects under tables/ (the
   * bucket policy admits it there), never deletes them.
   */
  readonly tableWriteRole: iam.Role;

  constructor(scope: Construct, vendors: readonly nodejs.NodejsFunction[], storage: Storage) {
    const vendedRole = (id: string, opts: VendedRoleOptions) =>
      createVendedRole(scope, id, vendors, storage, opts);
    this.tableAccessRole = vendedRole("TableAccessRole", {
      description: "Silt: read access to one table per session, vended by Silt's functions",
      objectActions: ["s3:GetObject"],
      environmentVariable: "SILT_TABLE_ACCESS_ROLE_ARN",
      sessionPolicy: "readSessionPolicy",
    });
    this.tableWriteRole = vendedRole("TableWriteRole", {
      description:
        "Silt: read and write (no delete) access to one table per session, vended by Silt's functions",
      // TABLE_WRITE_ACTIONS of lib/auth/credentials.ts, the READ_WRITE session policy's
      // (test/infra.test.ts compares them): PutObject is also every step of a multipart upload
      // but its abort, which Hadoop S3A sends when an upload fails.
      objectActions: ["s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"],
      environmentVariable: "SILT_TABLE_WRITE_ROLE_ARN",
      sessionPolicy: "readWriteSessionPolicy",
    });
  }
}

/** A role the vendors may assume, its ARN in each vendor's `environmentVariable`. */
function createVendedRole(
  scope: Construct,
  id: string,
  vendors: readonly nodejs.NodejsFunction[],
  storage: Storage,
  opts: VendedRoleOptions,
): iam.Role {
  const { bucket, tablesPrefix } = storage;
  const role = new iam.Role(scope, id, {
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
      resources: [bucket.arnForObjects(`${tablesPrefix}*`)],
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ["s3:ListBucket"],
      resources: [bucket.bucketArn],
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
        appliesTo: [storage.objectsFinding(`${tablesPrefix}*`)],
      },
    ],
    true,
  );
  return role;
}
