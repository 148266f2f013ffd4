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
import type { PostCommitMode } from "../commit/post-commit.ts";
import type { SiltContext } from "../context.ts";
import { siltError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { Progress } from "../ops/progress.ts";
import { LocalObjectStore } from "../storage/local-store.ts";
import { buildContext } from "./context-factory.ts";
import { type DataDirLock, lockDataDir } from "./data-dir-lock.ts";
import { startEmbeddedDynamo } from "./embedded-dynamo.ts";
import { describeOutcome, type IngestOutcome, localIngester } from "./local-ingest.ts";
import { maintainLocally } from "./local-maintenance.ts";
import { type LocalWork, withLocalRoutes } from "./local-routes.ts";
import { repeatEvery } from "./repeat-task.ts";

export interface LocalDataDirOptions {
  dataDir: string;
  logger?: Logger;
  /**
   * Bearer token -> principal. With tokens, every request must carry one and runs as its
   * principal with privileges checked (SILT_AUTH=token); without, every caller is the owner of
   * everything, as on a laptop.
   */
  tokens?: ReadonlyMap<string, string>;
  /** How commits run their automatic checkpoint (SILT_POST_COMMIT); default "await". */
  postCommitMode?: PostCommitMode;
}

export interface LocalServerOptions extends LocalDataDirOptions {
  port: number;
  host?: string;
  /** How often the server looks for objects dropped under storage/ingest/. Default 2 seconds. */
  ingestPollMs?: number;
  /** How often the server runs the maintenance pass (SILT_MAINTENANCE_INTERVAL); default never. */
  maintenanceIntervalMs?: number;
}

const DEFAULT_INGEST_POLL_MS = 2_000;

/** A data directory opened by this process: the app over it, answering through `fetch`. */
export interface LocalDataDir {
  ctx: SiltContext;
  /** The app's own fetch: the Node server's bindings (the unread request a GET body needs) pass through. */
  fetch: ReturnType<typeof createApp>["fetch"];
  /** Ingestion and maintenance passes over this directory, one of each kind at a time. */
  work: LocalWork;
  lock: DataDirLock;
  close(): Promise<void>;
}

export interface LocalServer {
  url: string;
  ctx: SiltContext;
  close(): Promise<void>;
}

/**
 * 1. Take the data directory's lock (data-dir-lock.ts): one process per directory.
 * 2. Start the embedded dynalite on it and build the context and the app.
 * A failure at any step undoes the ones before it, so the process can exit instead of hanging
 * on a dynalite nobody will close.
 */
export async function openLocalDataDir(opts: LocalDataDirOptions): Promise<LocalDataDir> {
  const dataDir = path.resolve(opts.dataDir);
  const storageDir = path.join(dataDir, "storage");
  const dynamoDir = path.join(dataDir, "dynamodb");
  mkdirSync(storageDir, { recursive: true });
  mkdirSync(dynamoDir, { recursive: true });
  const undo = undoStack();
  try {
    const lock = lockDataDir(dataDir);
    undo.push(() => lock.release());
    const dynamo = await startEmbeddedDynamo({ path: dynamoDir });
    undo.push(() => dynamo.close());
    const client = createDynamoClient({ endpoint: dynamo.endpoint, region: "us-east-1" });
    undo.push(() => client.destroy());
    const ctx = await buildContext({
      store: new LocalObjectStore(storageDir),
      storageRootUri: pathToFileURL(storageDir).href,
      dynamo: client,
      commitsTable: "silt_commits",
      catalogTable: "silt_catalog",
      idempotencyTable: "silt_idempotency",
      logger: opts.logger,
      ensureTables: true,
      postCommit: opts.postCommitMode === undefined ? undefined : { mode: opts.postCommitMode },
    });
    const app = createApp(
      ctx,
      opts.tokens === undefined ? {} : { auth: "token", tokens: opts.tokens },
    );
    const ingester = localIngester(ctx);
    const work: LocalWork = {
      ingest: (table) => ingester.run(table),
      maintain: (table) => maintainLocally(ctx, { table, onProgress: logProgress(ctx.logger) }),
    };
    return { ctx, fetch: withLocalRoutes(app.fetch, work), work, lock, close: undo.run };
  } catch (err) {
    await undo.run();
    throw err;
  }
}

/**
 * `openLocalDataDir`, then listen and record the URL in the lock. A port already taken is the
 * caller's to fix (PORT), not a crash.
 */
export async function startLocalServer(opts: LocalServerOptions): Promise<LocalServer> {
  const host = opts.host ?? "127.0.0.1";
  const local = await openLocalDataDir(opts);
  const undo = undoStack();
  undo.push(() => local.close());
  try {
    const server = await listen(local.fetch, opts.port, host);
    undo.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : opts.port;
    const url = `http://${host}:${port}`;
    local.lock.recordUrl(url);
    const log = local.ctx.logger;
    const watcher = repeatEvery(
      opts.ingestPollMs ?? DEFAULT_INGEST_POLL_MS,
      async () => {
        for (const o of await local.work.ingest()) logOutcome(log, o);
      },
      (err) => log.warn("ingest pass failed", { error: (err as Error).message }),
    );
    undo.push(() => watcher.stop());
    if (opts.maintenanceIntervalMs !== undefined) {
      const maintenance = repeatEvery(
        opts.maintenanceIntervalMs,
        () => local.work.maintain(),
        (err) => log.warn("maintenance pass failed", { error: (err as Error).message }),
      );
      undo.push(() => maintenance.stop());
    }
    return { url, ctx: local.ctx, close: undo.run };
  } catch (err) {
    await undo.run();
    throw err;
  }
}

function logOutcome(log: Logger, o: IngestOutcome): void {
  const fields = { key: o.key, table: o.table, status: o.status };
  if (o.status === "rejected" || o.status === "failed") log.warn(describeOutcome(o), fields);
  else log.info(describeOutcome(o), fields);
}

/** OPTIMIZE and VACUUM progress of a maintenance pass, as server log lines. */
function logProgress(log: Logger) {
  return (table: string, step: string, p: Progress) =>
    log.info("maintenance progress", { table, step, ...p });
}

/** Steps to undo, run last first, each once. */
function undoStack() {
  const steps: (() => unknown)[] = [];
  return {
    push: (step: () => unknown) => steps.push(step),
    run: async () => {
      for (let step = steps.pop(); step !== undefined; step = steps.pop()) await step();
    },
  };
}

function listen(
  fetch: LocalDataDir["fetch"],
  port: number,
  host: string,
): Promise<ReturnType<typeof serve>> {
  return new Promise((resolve, reject) => {
    const s = serve({ fetch, port, hostname: host }, () => resolve(s));
    s.once("error", (err: NodeJS.ErrnoException) => {
      reject(
        err.code === "EADDRINUSE"
          ? siltError("SILT_PORT_IN_USE", {
              port,
              host,
              suggestion: port < 65535 ? port + 1 : 8080,
            })
          : err,
      );
    });
  });
}
