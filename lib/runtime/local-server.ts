/**
 * `silt serve` / `npm start`: the whole service on one machine. Data files and the Delta log go
 * to a directory through the local object store; the catalog and the commit arbiter live in an
 * embedded dynalite whose LevelDB files sit beside them. Node only: no Docker, no cloud account.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { serve } from "@hono/node-server";
import { createApp } from "../api/app.ts";
import { createDynamoClient } from "../aws-clients.ts";
import type { SiltContext } from "../context.ts";
import type { Logger } from "../logger.ts";
import { LocalObjectStore } from "../storage/local-store.ts";
import { buildContext } from "./context-factory.ts";
import { startEmbeddedDynamo } from "./embedded-dynamo.ts";

export interface LocalServerOptions {
  dataDir: string;
  port: number;
  host?: string;
  logger?: Logger;
  /**
   * Bearer token -> principal. With tokens, every request must carry one and runs as its
   * principal with privileges checked (SILT_AUTH=token); without, every caller is the owner of
   * everything, as on a laptop.
   */
  tokens?: ReadonlyMap<string, string>;
}

export interface LocalServer {
  url: string;
  ctx: SiltContext;
  close(): Promise<void>;
}

export async function startLocalServer(opts: LocalServerOptions): Promise<LocalServer> {
  const dataDir = path.resolve(opts.dataDir);
  const storageDir = path.join(dataDir, "storage");
  const dynamoDir = path.join(dataDir, "dynamodb");
  mkdirSync(storageDir, { recursive: true });
  mkdirSync(dynamoDir, { recursive: true });
  const dynamo = await startEmbeddedDynamo({ path: dynamoDir });
  const client = createDynamoClient({ endpoint: dynamo.endpoint, region: "us-east-1" });
  const ctx = await buildContext({
    store: new LocalObjectStore(storageDir),
    storageRootUri: pathToFileURL(storageDir).href,
    dynamo: client,
    commitsTable: "silt_commits",
    catalogTable: "silt_catalog",
    idempotencyTable: "silt_idempotency",
    logger: opts.logger,
    ensureTables: true,
  });
  const app = createApp(
    ctx,
    opts.tokens === undefined ? {} : { auth: "token", tokens: opts.tokens },
  );
  const host = opts.host ?? "127.0.0.1";
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port, hostname: host }, () => resolve(s));
    s.once("error", reject);
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : opts.port;
  return {
    url: `http://${host}:${port}`,
    ctx,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      client.destroy();
      await dynamo.close();
    },
  };
}
