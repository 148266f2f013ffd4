/**
 * Credential vending (seed 002: "When an engine reads or writes the table, it asks the server for
 * credentials scoped to the table's location"), answered the way Unity Catalog's
 * `POST /temporary-table-credentials` answers, so engines that speak it can read and write Silt's tables.
 *
 * 1. Find the table by id or by name and check the caller's privileges: READ needs SELECT,
 *    READ_WRITE needs SELECT and MODIFY (with USE on its schema and catalog).
 * 2. Where the storage root is a local directory (`silt serve`), the url is a file:// URL and there
 *    are no credentials to hand out: the caller reads and writes the files with its own access to
 *    that directory, as Unity Catalog does for local storage.
 * 3. READ: temporary credentials of the table-access role (SILT_TABLE_ACCESS_ROLE_ARN), narrowed
 *    by a session policy to this table's prefix (GetObject below it, ListBucket of it), valid for
 *    one hour.
 * 4. READ_WRITE: engines that speak Unity Catalog's commit protocol write data files and staged
 *    commits under the location, and Silt's arbiter ratifies each commit (lib/ops/
 *    external-commit.ts). Their credentials are the table-write role's (SILT_TABLE_WRITE_ROLE_ARN),
 *    narrowed the same way (GetObject, PutObject and AbortMultipartUpload below the prefix,
 *    ListBucket of it): no DeleteObject, so removing a table's files stays with Silt's
 *    functions, and the published log only by create-if-absent puts, so no client rewrites a
 *    version the arbiter ratified. The bucket policy lets that role write under tables/ besides Silt's functions.
 *    A deployment without the role answers 501 CREDENTIAL_VENDING_NOT_CONFIGURED, as READ does
 *    without the table-access role: the refusal is this deployment's configuration, not the
 *    caller's privileges or the table's.
 */
import { AssumeRoleCommand, type STSClient } from "@aws-sdk/client-sts";
import type { TableEntry } from "../catalog/catalog-store.ts";
import { type QualifiedName, resolveName } from "../catalog/names.ts";
import { locationUri, type SiltContext } from "../context.ts";
import { siltError } from "../errors.ts";
import type {
  AwsTempCredentials,
  TableCredentialVendor,
  VendedCredentials,
} from "../storage/prefix-credentials.ts";
import { authorizeTable } from "./authorize.ts";

export const TABLE_OPERATIONS = ["READ", "READ_WRITE"] as const;
export type TableOperation = (typeof TABLE_OPERATIONS)[number];

/** How long vended credentials last (AssumeRole's DurationSeconds): one hour, as issue 6 asks. */
export const CREDENTIAL_SECONDS = 3600;

export interface TemporaryTableCredentials {
  aws_temp_credentials: AwsTempCredentials | null;
  /** Epoch milliseconds; null when there are no credentials. */
  expiration_time: number | null;
  url: string;
}

export interface TableCredentialRequest {
  tableId?: string;
  tableName?: string;
  operation: string;
  defaults?: { catalog?: string; schema?: string };
}

export async function temporaryTableCredentials(
  ctx: SiltContext,
  req: TableCredentialRequest,
): Promise<TemporaryTableCredentials> {
  const operation = TABLE_OPERATIONS.find((op) => op === req.operation);
  if (operation === undefined) {
    throw siltError("INVALID_PARAMETER_VALUE:OPERATION", {
      operation: JSON.stringify(req.operation),
    });
  }
  if ((req.tableId === undefined) === (req.tableName === undefined)) {
    throw siltError("INVALID_PARAMETER_VALUE:TABLE_ID_OR_NAME");
  }
  // Step 1.
  const qn =
    req.tableId === undefined
      ? resolveName(req.tableName as string, req.defaults)
      : await ctx.catalog.getTableById(req.tableId).then((e) => ({
          catalog: e.catalog,
          schema: e.schema,
          table: e.name,
        }));
  const entry = await authorizeTable(ctx, qn, operation === "READ" ? "read" : "readWrite");
  return vendFor(ctx, entry, qn, operation);
}

/**
 * READ_WRITE credentials for a table a Unity Catalog client staged and is about to create: only
 * the caller that staged it may write its first version.
 */
export async function stagingTableCredentials(
  ctx: SiltContext,
  tableId: string,
): Promise<TemporaryTableCredentials> {
  const entry = await ctx.catalog.findTableById(tableId);
  if (entry === undefined || entry.state !== "CREATING" || !entry.staging) {
    throw siltError("TABLE_NOT_FOUND:STAGING_ID", { tableId });
  }
  if (ctx.enforcePrivileges === true && entry.owner !== ctx.principal) {
    throw siltError("INSUFFICIENT_PERMISSIONS:NOT_STAGER", {
      principal: ctx.principal,
      catalog: entry.catalog,
      schema: entry.schema,
      name: entry.name,
    });
  }
  return vendFor(
    ctx,
    entry,
    { catalog: entry.catalog, schema: entry.schema, table: entry.name },
    "READ_WRITE",
  );
}

/** Steps 2 to 4 for a table the caller was found to have the privileges for. */
async function vendFor(
  ctx: SiltContext,
  entry: TableEntry,
  qn: QualifiedName,
  operation: TableOperation,
): Promise<TemporaryTableCredentials> {
  // Step 2.
  const url = locationUri(ctx, entry.location);
  if (url.startsWith("file:")) {
    return { aws_temp_credentials: null, expiration_time: null, url };
  }
  // Steps 3 and 4.
  const vendor = ctx.tableCredentials;
  const vend =
    operation === "READ"
      ? vendor?.readCredentials.bind(vendor)
      : vendor?.readWriteCredentials?.bind(vendor);
  if (vend === undefined) {
    const table = `${qn.catalog}.${qn.schema}.${qn.table}`;
    throw operation === "READ"
      ? siltError("CREDENTIAL_VENDING_NOT_CONFIGURED:READ")
      : siltError("CREDENTIAL_VENDING_NOT_CONFIGURED:READ_WRITE", {
          table,
          tableId: entry.tableId,
          ingestPrefix: `ingest/${qn.catalog}/${qn.schema}/${qn.table}/`,
        });
  }
  const vended = await vend(entry.location, ctx.principal);
  return {
    aws_temp_credentials: vended.credentials,
    expiration_time: vended.expirationTime,
    url,
  };
}

/**
 * The object actions of READ_WRITE credentials; the table-write role the stack creates has
 * exactly these (infra/silt-stack.ts; test/infra.test.ts compares them).
 */
export const TABLE_WRITE_ACTIONS = [
  "s3:AbortMultipartUpload",
  "s3:GetObject",
  "s3:PutObject",
] as const;

/** An IAM policy document, as STS takes it for a session. */
export interface SessionPolicy {
  Version: "2012-10-17";
  Statement: {
    Sid: string;
    Effect: "Allow" | "Deny";
    Action: string | string[];
    Resource: string;
    Condition?: Record<string, Record<string, string | string[]>>;
  }[];
}

/**
 * The session policy of a READ credential: what the table-access role may do, narrowed to one
 * table's key prefix. ListBucket is limited by `s3:prefix`, so a reader can list the table's log
 * but not the other tables' ids.
 */
export function readSessionPolicy(
  partition: string,
  bucket: string,
  keyPrefix: string,
): SessionPolicy {
  return tableSessionPolicy(partition, bucket, keyPrefix, "ReadTableObjects", "s3:GetObject");
}

/**
 * The session policy of a READ_WRITE credential: what the table-write role may do, narrowed to
 * one table's key prefix as a READ credential is. PutObject covers single and multipart uploads
 * (CreateMultipartUpload, UploadPart, CompleteMultipartUpload) of data files and staged commits;
 * AbortMultipartUpload lets a client clean up an upload that failed. Nothing deletes.
 *
 * The published log (`_delta_log/<version>.…`: commits, checkpoints, checksums) may only be
 * created, never overwritten: a put there must carry `If-None-Match: *`. That keeps the log what
 * the arbiter ratified while clients still backfill cooperatively: DuckDB (delta-kernel) puts
 * with If-None-Match; Spark checks for the file first and finds the copy Silt published right
 * after ratifying.
 */
export function readWriteSessionPolicy(
  partition: string,
  bucket: string,
  keyPrefix: string,
): SessionPolicy {
  const policy = tableSessionPolicy(partition, bucket, keyPrefix, "ReadWriteTableObjects", [
    ...TABLE_WRITE_ACTIONS,
  ]);
  const dir = keyPrefix.replace(/\/+$/, "");
  return {
    ...policy,
    Statement: [
      ...policy.Statement,
      {
        Sid: "CreateOnlyPublishedLog",
        Effect: "Deny",
        Action: "s3:PutObject",
        Resource: `arn:${partition}:s3:::${bucket}/${dir}/_delta_log/0*`,
        Condition: { Null: { "s3:if-none-match": "true" } },
      },
    ],
  };
}

function tableSessionPolicy(
  partition: string,
  bucket: string,
  keyPrefix: string,
  sid: string,
  action: string | string[],
): SessionPolicy {
  const dir = keyPrefix.replace(/\/+$/, "");
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: sid,
        Effect: "Allow",
        Action: action,
        Resource: `arn:${partition}:s3:::${bucket}/${dir}/*`,
      },
      {
        Sid: "ListTableObjects",
        Effect: "Allow",
        Action: "s3:ListBucket",
        Resource: `arn:${partition}:s3:::${bucket}`,
        Condition: { StringLike: { "s3:prefix": [dir, `${dir}/*`] } },
      },
    ],
  };
}

/**
 * AssumeRole of the roles the stack creates, one session per request: the table-access role for
 * READ, the table-write role (where given) for READ_WRITE.
 */
export class StsTableCredentials implements TableCredentialVendor {
  private readonly partition: string;
  readonly readWriteCredentials?: (prefix: string, principal: string) => Promise<VendedCredentials>;

  constructor(
    private readonly opts: {
      client: STSClient;
      /** The table-access role (read only). */
      roleArn: string;
      /** The table-write role; without it there are no READ_WRITE credentials. */
      writeRoleArn?: string;
      bucket: string;
      /** Key prefix of the storage root in the bucket ("" or ending in "/"). */
      prefix: string;
    },
  ) {
    // arn:<partition>:iam::<account>:role/<name>: bucket ARNs live in the role's partition.
    this.partition = opts.roleArn.split(":")[1] || "aws";
    const writeRoleArn = opts.writeRoleArn;
    if (writeRoleArn !== undefined) {
      this.readWriteCredentials = (prefix, principal) =>
        this.assume(writeRoleArn, readWriteSessionPolicy, prefix, principal);
    }
  }

  readCredentials(prefix: string, principal: string): Promise<VendedCredentials> {
    return this.assume(this.opts.roleArn, readSessionPolicy, prefix, principal);
  }

  private async assume(
    roleArn: string,
    sessionPolicy: (partition: string, bucket: string, keyPrefix: string) => SessionPolicy,
    prefix: string,
    principal: string,
  ): Promise<VendedCredentials> {
    const policy = sessionPolicy(this.partition, this.opts.bucket, `${this.opts.prefix}${prefix}`);
    const out = await this.opts.client.send(
      new AssumeRoleCommand({
        RoleArn: roleArn,
        RoleSessionName: sessionName(principal),
        Policy: JSON.stringify(policy),
        DurationSeconds: CREDENTIAL_SECONDS,
      }),
    );
    const c = out.Credentials;
    if (
      c?.AccessKeyId === undefined ||
      c.SecretAccessKey === undefined ||
      c.SessionToken === undefined ||
      c.Expiration === undefined
    ) {
      throw siltError("INTERNAL_ERROR:STS_NO_CREDENTIALS");
    }
    return {
      credentials: {
        access_key_id: c.AccessKeyId,
        secret_access_key: c.SecretAccessKey,
        session_token: c.SessionToken,
      },
      expirationTime: c.Expiration.getTime(),
    };
  }
}

/**
 * The caller, as CloudTrail shows the session: RoleSessionName allows 2-64 characters of
 * [\w+=,.@-], so other characters (an ARN's ':' and '/') become '-'.
 */
export function sessionName(principal: string): string {
  return `silt-${principal.replace(/[^\w+=,.@-]/g, "-")}`.slice(0, 64);
}
