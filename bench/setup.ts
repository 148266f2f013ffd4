/**
 * A SiltContext wired the way `silt serve` wires it (local object store + embedded dynalite), so
 * the benchmarks run the same op path as the service.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createDynamoClient } from "../lib/aws-clients.ts";
import type { SiltContext } from "../lib/context.ts";
import { silentLogger } from "../lib/logger.ts";
import { createCatalog, createSchema } from "../lib/ops/namespaces.ts";
import { buildContext } from "../lib/runtime/context-factory.ts";
import { startEmbeddedDynamo } from "../lib/runtime/embedded-dynamo.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import type { ObjectInfo, ObjectStore } from "../lib/storage/object-store.ts";

export interface BenchEnv {
  ctx: SiltContext;
  storageDir: string;
  /** Bytes the engine moved through its object store since the last `io.reset()`. */
  io: IoCounter;
  close(): Promise<void>;
}

export interface IoCounts {
  /** Payload bytes returned by get/getRange/getSuffix. */
  bytesRead: number;
  /** Payload bytes sent by put/putIfAbsent (a refused putIfAbsent counts: it was uploaded). */
  bytesWritten: number;
  /** The part of each that was `_delta_log/` (commits, checkpoints), the rest being data and DVs. */
  logBytesRead: number;
  logBytesWritten: number;
  gets: number;
  puts: number;
}

const zero = (): IoCounts => ({
  bytesRead: 0,
  bytesWritten: 0,
  logBytesRead: 0,
  logBytesWritten: 0,
  gets: 0,
  puts: 0,
});

export interface IoCounter {
  readonly counts: IoCounts;
  reset(): void;
}

const isLog = (key: string): boolean => key.includes("/_delta_log/");

/**
 * Counts what goes over the wire on S3: the payloads of reads and writes, the way a request
 * bill or a network graph would see them. Metadata calls (head, list, delete) and server-side
 * copies move no payload and are not counted.
 */
class CountingStore implements ObjectStore, IoCounter {
  counts = zero();
  readonly #inner: ObjectStore;

  constructor(inner: ObjectStore) {
    this.#inner = inner;
  }

  reset(): void {
    this.counts = zero();
  }

  #read(key: string, body: Uint8Array): Uint8Array {
    this.counts.gets++;
    this.counts.bytesRead += body.byteLength;
    if (isLog(key)) this.counts.logBytesRead += body.byteLength;
    return body;
  }

  #write(key: string, body: Uint8Array): void {
    this.counts.puts++;
    this.counts.bytesWritten += body.byteLength;
    if (isLog(key)) this.counts.logBytesWritten += body.byteLength;
  }

  async get(key: string): Promise<Uint8Array> {
    return this.#read(key, await this.#inner.get(key));
  }
  async getRange(key: string, start: number, end: number): Promise<Uint8Array> {
    return this.#read(key, await this.#inner.getRange(key, start, end));
  }
  async getSuffix(key: string, length: number): Promise<Uint8Array> {
    return this.#read(key, await this.#inner.getSuffix(key, length));
  }
  head(key: string): Promise<ObjectInfo | undefined> {
    return this.#inner.head(key);
  }
  async put(key: string, body: Uint8Array): Promise<void> {
    this.#write(key, body);
    await this.#inner.put(key, body);
  }
  async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    this.#write(key, body);
    return this.#inner.putIfAbsent(key, body);
  }
  list(prefix: string, options?: { startAfter?: string }): AsyncIterable<ObjectInfo> {
    return this.#inner.list(prefix, options);
  }
  delete(key: string): Promise<void> {
    return this.#inner.delete(key);
  }
  deleteMany(keys: string[]): Promise<void> {
    return this.#inner.deleteMany(keys);
  }
  copyIfAbsent(srcKey: string, dstKey: string): Promise<boolean> {
    return this.#inner.copyIfAbsent(srcKey, dstKey);
  }
}

/**
 * The store alone, I/O counted, over a directory an earlier `openEnv` filled: for cases that
 * read or write a table's log directly, so neither dynalite nor the catalog is in their RSS.
 */
export function openStore(storageDir: string): ObjectStore & IoCounter {
  return new CountingStore(new LocalObjectStore(storageDir));
}

/**
 * `persistent` keeps dynalite's LevelDB under `dir`, so a table prepared by one child process can
 * be read by another: a process's peak RSS cannot be reset, and the scan's must not include the
 * append that made its table.
 */
export async function openEnv(dir: string, opts: { persistent: boolean }): Promise<BenchEnv> {
  const storageDir = path.join(dir, "storage");
  mkdirSync(storageDir, { recursive: true });
  let dynamoPath: string | undefined;
  if (opts.persistent) {
    dynamoPath = path.join(dir, "dynamodb");
    mkdirSync(dynamoPath, { recursive: true });
  }
  const dynamo = await startEmbeddedDynamo(dynamoPath === undefined ? {} : { path: dynamoPath });
  const client = createDynamoClient({ endpoint: dynamo.endpoint, region: "us-east-1" });
  const store = openStore(storageDir);
  const ctx = await buildContext({
    store,
    storageRootUri: pathToFileURL(storageDir).href,
    dynamo: client,
    commitsTable: "silt_commits",
    catalogTable: "silt_catalog",
    logger: silentLogger,
    ensureTables: true,
  });
  return {
    ctx,
    storageDir,
    io: store,
    async close() {
      client.destroy();
      await dynamo.close();
    },
  };
}

export async function ensureNamespace(ctx: SiltContext): Promise<void> {
  await createCatalog(ctx, "bench", { ifNotExists: true });
  await createSchema(ctx, "bench", "s", { ifNotExists: true });
}
