/**
 * Credential vending (seed 002: "When an engine reads or writes the table, it asks the server for
 * credentials scoped to the table's location"), answered the way Unity Catalog's
 * `POST /temporary-table-credentials` answers, so engines that speak it can read Silt's tables.
 *
 * 1. Find the table by id or by name and check the caller's privileges: READ needs SELECT,
 *    READ_WRITE needs SELECT and MODIFY (with USE on its schema and catalog).
 * 2. READ_WRITE: engines that speak Unity Catalog's commit protocol write data files and staged
 *    commits under the location, and Silt's arbiter ratifies each commit (lib/ops/
 *    external-commit.ts). Where the storage root is a local directory that needs no credentials.
 *    In S3 the bucket policy denies writes under tables/ to all but Silt's own functions, and no
 *    write-scoped role exists yet, so READ_WRITE is refused there
 *    (EXTERNAL_WRITE_NOT_ALLOWED_FOR_TABLE, as Unity Catalog refuses external writes): write
 *    through Silt's insert, merge and SQL routes, or objects under ingest/<catalog>/<schema>/<table>/.
 * 3. READ: temporary credentials of the table-access role, narrowed by a session policy to this
 *    table's prefix (GetObject below it, ListBucket of it), valid for one hour. Where the storage
 *    root is a local directory (`silt serve`), the url is a file:// URL and there are no
 *    credentials to hand out: the caller reads the files with its own access to that directory.
 */
import { AssumeRoleCommand, type STSClient } from "@aws-sdk/client-sts";
import type { TableEntry } from "../catalog/catalog-store.ts";
import type { QualifiedName } from "../catalog/names.ts";
import { locationUri, type SiltContext } from "../context.ts";
import { badRequest, SiltError } from "../errors.ts";
import { resolveName } from "../ops/open-table.ts";
import { authorizeTable } from "./authorize.ts";

export const TABLE_OPERATIONS = ["READ", "READ_WRITE"] as const;
export type TableOperation = (typeof TABLE_OPERATIONS)[number];

/** How long vended credentials last (AssumeRole's DurationSeconds): one hour, as issue 6 asks. */
export const CREDENTIAL_SECONDS = 3600;

export interface AwsTempCredentials {
  access_key_id: string;
  secret_access_key: string;
  session_token: string;
}

export interface TemporaryTableCredentials {
  aws_temp_credentials: AwsTempCredentials | null;
  /** Epoch milliseconds; null when there are no credentials. */
  expiration_time: number | null;
  url: string;
}

/**
 * Issues read credentials limited to the objects under one key prefix of the storage root, on
 * behalf of `principal` (recorded with the session for audit).
 */
export interface TableCredentialVendor {
  readCredentials(
    prefix: string,
    principal: string,
  ): Promise<{ credentials: AwsTempCredentials; expirationTime: number }>;
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
    throw badRequest(
      "INVALID_PARAMETER_VALUE",
      `Field 'operation' must be READ or READ_WRITE (got ${JSON.stringify(req.operation)}).`,
      "22023",
    );
  }
  if ((req.tableId === undefined) === (req.tableName === undefined)) {
    throw badRequest(
      "INVALID_PARAMETER_VALUE",
      "Name the table by exactly one of 'table_id' (its id, as DESCRIBE DETAIL shows it) or " +
        "'table_name' (catalog.schema.table).",
      "22023",
    );
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
    throw new SiltError(
      "TABLE_NOT_FOUND",
      `No staging table has id ${tableId}. Stage the table first (POST /staging-tables).`,
      404,
    );
  }
  if (ctx.enforcePrivileges === true && entry.owner !== ctx.principal) {
    throw new SiltError(
      "INSUFFICIENT_PERMISSIONS",
      `Insufficient privileges: User ${ctx.principal} did not stage table ${entry.catalog}.${entry.schema}.${entry.name}.`,
      403,
      "42501",
    );
  }
  return vendFor(
    ctx,
    entry,
    { catalog: entry.catalog, schema: entry.schema, table: entry.name },
    "READ_WRITE",
  );
}

/** Steps 2 and 3 for a table the caller was found to have the privileges for. */
async function vendFor(
  ctx: SiltContext,
  entry: TableEntry,
  qn: QualifiedName,
  operation: TableOperation,
): Promise<TemporaryTableCredentials> {
  // Step 2.
  const url = locationUri(ctx, entry.location);
  if (operation === "READ_WRITE" && !url.startsWith("file:")) {
    throw new SiltError(
      "EXTERNAL_WRITE_NOT_ALLOWED_FOR_TABLE",
      `Table ${qn.catalog}.${qn.schema}.${qn.table} (id ${entry.tableId}) cannot be written from ` +
        "outside of Silt in this deployment: its bucket lets only Silt's functions write tables, " +
        "and vended credentials are read-only. Request READ credentials to read its files, and " +
        "write through Silt (the insert, merge or SQL routes, or objects under " +
        `ingest/${qn.catalog}/${qn.schema}/${qn.table}/ in the bucket).`,
      403,
    );
  }
  // Step 3.
  if (ctx.tableCredentials === undefined) {
    if (url.startsWith("file:")) {
      return { aws_temp_credentials: null, expiration_time: null, url };
    }
    throw new SiltError(
      "CREDENTIAL_VENDING_NOT_CONFIGURED",
      "This deployment vends no table credentials: set SILT_TABLE_ACCESS_ROLE_ARN to the role " +
        "readers assume (the CDK stack creates it and sets the variable).",
      501,
    );
  }
  const vended = await ctx.tableCredentials.readCredentials(entry.location, ctx.principal);
  return {
    aws_temp_credentials: vended.credentials,
    expiration_time: vended.expirationTime,
    url,
  };
}

/**
 * The session policy of a READ credential: what the table-access role may do, narrowed to one
 * table's key prefix. ListBucket is limited by `s3:prefix`, so a reader can list the table's log
 * but not the other tables' ids.
 */
export function readSessionPolicy(partition: string, bucket: string, keyPrefix: string) {
  const dir = keyPrefix.replace(/\/+$/, "");
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "ReadTableObjects",
        Effect: "Allow",
        Action: "s3:GetObject",
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

/** AssumeRole of the table-access role the stack creates, one session per request. */
export class StsTableCredentials implements TableCredentialVendor {
  private readonly partition: string;

  constructor(
    private readonly opts: {
      client: STSClient;
      roleArn: string;
      bucket: string;
      /** Key prefix of the storage root in the bucket ("" or ending in "/"). */
      prefix: string;
    },
  ) {
    // arn:<partition>:iam::<account>:role/<name>: bucket ARNs live in the role's partition.
    this.partition = opts.roleArn.split(":")[1] || "aws";
  }

  async readCredentials(prefix: string, principal: string) {
    const policy = readSessionPolicy(
      this.partition,
      this.opts.bucket,
      `${this.opts.prefix}${prefix}`,
    );
    const out = await this.opts.client.send(
      new AssumeRoleCommand({
        RoleArn: this.opts.roleArn,
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
      throw new SiltError("INTERNAL_ERROR", "STS AssumeRole answered without credentials.", 500);
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
