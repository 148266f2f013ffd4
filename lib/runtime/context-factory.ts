/**
 * Builds a SiltContext from its parts: the one place that wires the catalog and the arbiter to
 * their DynamoDB tables, whether those live in AWS or in the embedded stand-in.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ensureIdempotencyTable, IdempotencyStore } from "../api/idempotency.ts";
import type { TableCredentialVendor } from "../auth/credentials.ts";
import { Catalog, ensureCatalogTable } from "../catalog/catalog-store.ts";
import { GrantStore } from "../catalog/grants.ts";
import { CommitArbiter, ensureCommitTable } from "../commit/arbiter.ts";
import type { SiltContext } from "../context.ts";
import { jsonLogger, type Logger } from "../logger.ts";
import type { ObjectStore } from "../storage/object-store.ts";

export interface ContextParts {
  store: ObjectStore;
  storageRootUri: string;
  dynamo: DynamoDBClient;
  commitsTable: string;
  catalogTable: string;
  /** DynamoDB table of Idempotency-Key records; without it the header is ignored. */
  idempotencyTable?: string;
  logger?: Logger;
  /** The caller every operation runs as; privileges are not checked (see SiltContext). */
  principal?: string;
  /** Vends table-scoped read credentials (AWS: STS AssumeRole of the table-access role). */
  tableCredentials?: TableCredentialVendor;
  clock?: () => number;
  /** Create the DynamoDB tables when absent (local mode and tests; CDK creates them in AWS). */
  ensureTables?: boolean;
}

export async function buildContext(parts: ContextParts): Promise<SiltContext> {
  if (parts.ensureTables) {
    await ensureCommitTable(parts.dynamo, parts.commitsTable);
    await ensureCatalogTable(parts.dynamo, parts.catalogTable);
    if (parts.idempotencyTable !== undefined) {
      await ensureIdempotencyTable(parts.dynamo, parts.idempotencyTable);
    }
  }
  const clock = parts.clock ?? Date.now;
  return {
    store: parts.store,
    storageRootUri: parts.storageRootUri,
    arbiter: new CommitArbiter({ client: parts.dynamo, tableName: parts.commitsTable, clock }),
    catalog: new Catalog(parts.dynamo, parts.catalogTable, { clock }),
    grants: new GrantStore(parts.dynamo, parts.catalogTable),
    clock,
    logger: parts.logger ?? jsonLogger(),
    principal: parts.principal ?? "silt",
    tableCredentials: parts.tableCredentials,
    idempotency:
      parts.idempotencyTable === undefined
        ? undefined
        : new IdempotencyStore(parts.dynamo, parts.idempotencyTable, clock),
  };
}
