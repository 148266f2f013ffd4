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

export interface BenchEnv {
  ctx: SiltContext;
  storageDir: string;
  close(): Promise<void>;
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
  const ctx = await buildContext({
    store: new LocalObjectStore(storageDir),
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
