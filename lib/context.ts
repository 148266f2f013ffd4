/**
 * What every operation runs against. Built once per process (a Lambda container or the local
 * server) and passed in, never reached through globals, so ops run the same on S3 + DynamoDB and
 * on the embedded stand-ins.
 */
import type { IdempotencyStore } from "./api/idempotency.ts";
import type { Catalog } from "./catalog/catalog-store.ts";
import type { CommitArbiter } from "./commit/arbiter.ts";
import type { Logger } from "./logger.ts";
import type { ObjectStore } from "./storage/object-store.ts";

export interface SiltContext {
  /** The storage root: table data lives under `tables/<table-uuid>/` in it. */
  store: ObjectStore;
  /** URI of the storage root as other engines name it (s3://bucket/prefix, file:///dir). */
  storageRootUri: string;
  arbiter: CommitArbiter;
  catalog: Catalog;
  clock: () => number;
  logger: Logger;
  /** The caller, recorded as owner of what it creates. */
  principal: string;
  /** Where Idempotency-Key records live; without it the header is ignored. */
  idempotency?: IdempotencyStore;
}

/** `storageRootUri` joined with a key relative to the root, without a trailing slash. */
export function locationUri(ctx: SiltContext, key: string): string {
  const root = ctx.storageRootUri.endsWith("/") ? ctx.storageRootUri : `${ctx.storageRootUri}/`;
  return `${root}${key}`.replace(/\/+$/, "");
}
