import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { type ObjectInfo, ObjectNotFoundError, type ObjectStore } from "./object-store.ts";

interface AwsErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

const errorName = (err: unknown): string | undefined => (err as AwsErrorShape)?.name;
const httpStatus = (err: unknown): number | undefined =>
  (err as AwsErrorShape)?.$metadata?.httpStatusCode;

// GetObject says NoSuchKey; HeadObject has no body, so the SDK can only call it NotFound.
const isNotFound = (err: unknown): boolean =>
  errorName(err) === "NoSuchKey" || errorName(err) === "NotFound";

const isUnsatisfiableRange = (err: unknown): boolean =>
  httpStatus(err) === 416 || errorName(err) === "InvalidRange";

const CONFLICT_RETRIES = 5;
const DELETE_BATCH = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An ObjectStore on an S3 bucket, optionally under a key prefix. Keys given to and returned by
 * the store are relative to that prefix.
 */
export class S3ObjectStore implements ObjectStore {
  readonly client: S3Client;
  readonly bucket: string;
  /** "" or ends with "/". */
  readonly prefix: string;

  constructor(opts: { client: S3Client; bucket: string; prefix?: string }) {
    this.client = opts.client;
    this.bucket = opts.bucket;
    const prefix = opts.prefix ?? "";
    this.prefix = prefix === "" || prefix.endsWith("/") ? prefix : `${prefix}/`;
  }

  async get(key: string): Promise<Uint8Array> {
    return this.#get(key, undefined);
  }

  async getRange(key: string, start: number, end: number): Promise<Uint8Array> {
    const from = Math.max(0, start);
    // HTTP cannot ask for zero bytes; the object must still exist for the call to succeed.
    if (end <= from) return this.#emptyIfExists(key);
    return this.#get(key, `bytes=${from}-${end - 1}`);
  }

  async getSuffix(key: string, length: number): Promise<Uint8Array> {
    if (length <= 0) return this.#emptyIfExists(key);
    return this.#get(key, `bytes=-${length}`);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
      );
      return { key, size: out.ContentLength ?? 0, lastModified: out.LastModified?.getTime() ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: body }),
    );
  }

  /**
   * A conditional PutObject. If the SDK retries after a lost response to a request that did
   * land, the retry sees our own object and this answers false; callers that publish immutable
   * content (the commit log) treat "already there" as done either way.
   */
  async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: this.prefix + key,
            Body: body,
            IfNoneMatch: "*",
          }),
        );
        return true;
      } catch (err) {
        if (httpStatus(err) === 412 || errorName(err) === "PreconditionFailed") return false;
        // S3 answers 409 ConditionalRequestConflict while another conditional write to the key
        // is in flight; it asks the caller to retry, and the retry then gets 412 or succeeds.
        if (httpStatus(err) === 409 && attempt < CONFLICT_RETRIES) {
          await sleep(25 * 2 ** attempt * (1 + Math.random()));
          continue;
        }
        throw err;
      }
    }
  }

  async *list(prefix: string, options?: { startAfter?: string }): AsyncIterable<ObjectInfo> {
    let continuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + prefix,
          ...(continuationToken !== undefined
            ? { ContinuationToken: continuationToken }
            : options?.startAfter !== undefined
              ? { StartAfter: this.prefix + options.startAfter }
              : {}),
        }),
      );
      for (const obj of page.Contents ?? []) {
        if (obj.Key === undefined) continue;
        yield {
          key: obj.Key.slice(this.prefix.length),
          size: obj.Size ?? 0,
          lastModified: obj.LastModified?.getTime() ?? 0,
        };
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
  }

  async delete(key: string): Promise<void> {
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
    );
  }

  async deleteMany(keys: string[]): Promise<void> {
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += DELETE_BATCH) {
      const batch = unique.slice(i, i + DELETE_BATCH);
      const out = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((key) => ({ Key: this.prefix + key })), Quiet: true },
        }),
      );
      // DeleteObjects answers 200 even when single keys fail; absent keys are not failures.
      const failed = (out.Errors ?? []).filter((e) => e.Code !== "NoSuchKey");
      if (failed.length > 0) {
        const first = failed[0];
        throw new Error(
          `DeleteObjects failed for ${failed.length} key(s), first ${first.Key}: ${first.Code} ${first.Message}`,
        );
      }
    }
  }

  /**
   * Get then conditional put: CopyObject honours If-None-Match only on some S3 implementations,
   * and a copy that silently overwrites would break the publish step of the commit protocol.
   */
  async copyIfAbsent(srcKey: string, dstKey: string): Promise<boolean> {
    return this.putIfAbsent(dstKey, await this.get(srcKey));
  }

  async #get(key: string, range: string | undefined): Promise<Uint8Array> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.prefix + key,
          ...(range !== undefined ? { Range: range } : {}),
        }),
      );
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFoundError(key);
      // Only an existing object can have an unsatisfiable range: the request starts at or past
      // its end, or it is empty. Either way there are no bytes to return.
      if (range !== undefined && isUnsatisfiableRange(err)) return new Uint8Array(0);
      throw err;
    }
  }

  async #emptyIfExists(key: string): Promise<Uint8Array> {
    if ((await this.head(key)) === undefined) throw new ObjectNotFoundError(key);
    return new Uint8Array(0);
  }
}
