/**
 * What each operation's function is: its routes, its memory and exactly what its code path
 * touches in the bucket and the DynamoDB tables. The stack builds one function per entry
 * (api-functions.ts) and routes the HTTP API to it (http-api.ts).
 */
import { aws_apigatewayv2 as apigw } from "aws-cdk-lib";
import type { Operation } from "../lib/api/operations.ts";
import type { AccessSpec } from "./data-access.ts";

export interface FunctionSpec extends AccessSpec {
  description: string;
  memorySize: number;
  routes: ReadonlyArray<readonly [apigw.HttpMethod, string]>;
  /**
   * Executions kept for this function and never exceeded (Lambda reserved concurrency); unset,
   * the account's unreserved pool. Stack props / `silt:reservedConcurrency` override it.
   */
  reservedConcurrency?: number;
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
 * One entry per file in functions/, keyed by the operation it serves (lib/api/operations.ts), so adding
 * an operation without deciding its routes and permissions does not compile. The action lists
 * follow each operation's code path through lib/ (catalog-store.ts, arbiter.ts, s3-store.ts).
 */
export const FUNCTIONS: Record<Operation, FunctionSpec> = {
  catalog: {
    description: "Catalogs and schemas: create, list, drop (CASCADE deletes the tables' files)",
    memorySize: 1024,
    routes: [
      // Every function answers health and the API's document; the catalog one loads no table,
      // so it is the cheapest.
      [GET, "/api/v1/health"],
      [GET, "/api/v1/openapi.json"],
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
    // Each run rewrites a table's small files: more at once only conflict with each other (and
    // hold 3 GB each), so a few keep a burst of callers from starving the account's pool.
    reservedConcurrency: 2,
    routes: [[POST, "/api/v1/tables/{name}/optimize"]],
    // Reads the files it compacts and writes the new ones; the old ones stay for VACUUM.
    s3: { read: true, write: "table", delete: false },
    commits: ["Query", "PutItem", "UpdateItem"],
    catalog: ["GetItem"],
  },
  vacuum: {
    description: "VACUUM: deletes files no version within the retention references",
    memorySize: 1024,
    // Lists and deletes a table's files; a second at once on one table only repeats the work.
    reservedConcurrency: 2,
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

/** The prefix of the construct ids of an operation's function and integration. */
export function constructName(operation: string): string {
  return operation[0]!.toUpperCase() + operation.slice(1);
}
