/**
 * Builds a SiltContext from its parts: the one place that wires the catalog, the grants, the
 * arbiter and the idempotency store to their tables, whether those live in DynamoDB (in AWS or in
 * the embedded stand-in) or in memory (`memory: true`, for tests and embedders that need no
 * DynamoDB). Both run the same store classes over an item store (lib/kv/item-store.ts).
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Catalog, ensureCatalogTable } from "../catalog/catalog-store.ts";
import { GrantStore } from "../catalog/grants.ts";
import { CommitArbiter, ensureCommitTable } from "../commit/arbiter.ts";
import type { PostCommitConfig } from "../commit/post-commit.ts";
import type { SiltContext } from "../context.ts";
import { DynamoItemStore } from "../kv/dynamo-item-store.ts";
import { ensureIdempotencyTable, IdempotencyStore } from "../kv/idempotency-store.ts";
import {
  CATALOG_TABLE_KEYS,
  COMMIT_TABLE_KEYS,
  IDEMPOTENCY_TABLE_KEYS,
  type ItemStore,
  type KeySchema,
} from "../kv/item-store.ts";
import { MemoryItemStore } from "../kv/memory-item-store.ts";
import { jsonLogger, type Logger } from "../logger.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { TableCredentialVendor } from "../storage/prefix-credentials.ts";

interface CommonParts {
  store: ObjectStore;
  storageRootUri: string;
  logger?: Logger;
  /** The caller every operation runs as; privileges are not checked (see SiltContext). */
  principal?: string;
  /** Vends table-scoped read credentials (AWS: STS AssumeRole of the table-access role). */
  tableCredentials?: TableCredentialVendor;
  clock?: () => number;
  /** How commits made with the context run their post-commit work (SiltContext.postCommit). */
  postCommit?: Partial<PostCommitConfig>;
  /** SiltContext.requestTimeoutMs: the function's timeout; unset when nothing stops a request. */
  requestTimeoutMs?: number;
  /** SiltContext.optimizeTimeBudgetMs; default half of requestTimeoutMs. */
  optimizeTimeBudgetMs?: number;
}

/**
 * The rest of a request's time goes to the bin in flight when the budget runs out (one bin is up
 * to delta.targetFileSize of Parquet read, rewritten and uploaded) and to the commit.
 */
const OPTIMIZE_SHARE_OF_TIMEOUT = 0.5;

export interface DynamoContextParts extends CommonParts {
  memory?: false;
  dynamo: DynamoDBClient;
  commitsTable: string;
  catalogTable: string;
  /** DynamoDB table of Idempotency-Key records; without it the header is ignored. */
  idempotencyTable?: string;
  /** Create the DynamoDB tables when absent (local mode and tests; CDK creates them in AWS). */
  ensureTables?: boolean;
}

/** Commits, catalog, grants and Idempotency-Key records in this process's memory. */
export interface MemoryContextParts extends CommonParts {
  memory: true;
  /** Keep Idempotency-Key records; without it the header is ignored (as without a table). */
  idempotency?: boolean;
}

export type ContextParts = DynamoContextParts | MemoryContextParts;

export async function buildContext(parts: ContextParts): Promise<SiltContext> {
  let tables: { commits: ItemStore; catalog: ItemStore; idempotency?: ItemStore };
  if (parts.memory === true) {
    tables = {
      commits: new MemoryItemStore(COMMIT_TABLE_KEYS),
      catalog: new MemoryItemStore(CATALOG_TABLE_KEYS),
      ...(parts.idempotency === true
        ? { idempotency: new MemoryItemStore(IDEMPOTENCY_TABLE_KEYS) }
        : {}),
    };
  } else {
    if (parts.ensureTables) {
      await ensureCommitTable(parts.dynamo, parts.commitsTable);
      await ensureCatalogTable(parts.dynamo, parts.catalogTable);
      if (parts.idempotencyTable !== undefined) {
        await ensureIdempotencyTable(parts.dynamo, parts.idempotencyTable);
      }
    }
    const table = (name: string, keys: KeySchema) => new DynamoItemStore(parts.dynamo, name, keys);
    tables = {
      commits: table(parts.commitsTable, COMMIT_TABLE_KEYS),
      catalog: table(parts.catalogTable, CATALOG_TABLE_KEYS),
      ...(parts.idempotencyTable === undefined
        ? {}
        : { idempotency: table(parts.idempotencyTable, IDEMPOTENCY_TABLE_KEYS) }),
    };
  }
  const clock = parts.clock ?? Date.now;
  return {
    store: parts.store,
    storageRootUri: parts.storageRootUri,
    arbiter: new CommitArbiter({ items: tables.commits, clock }),
    catalog: new Catalog(tables.catalog, { clock }),
    grants: new GrantStore(tables.catalog),
    clock,
    logger: parts.logger ?? jsonLogger(),
    principal: parts.principal ?? "silt",
    tableCredentials: parts.tableCredentials,
    postCommit: parts.postCommit,
    requestTimeoutMs: parts.requestTimeoutMs,
    optimizeTimeBudgetMs:
      parts.optimizeTimeBudgetMs ??
      (parts.requestTimeoutMs === undefined
        ? undefined
        : Math.floor(parts.requestTimeoutMs * OPTIMIZE_SHARE_OF_TIMEOUT)),
    idempotency:
      tables.idempotency === undefined
        ? undefined
        : new IdempotencyStore(tables.idempotency, clock, parts.requestTimeoutMs),
  };
}
