/**
 * A whole Silt for a test: the real HTTP app over a real object store (S3 through the s3rver
 * emulator, or the local filesystem) and the catalog and arbiter in dynalite, or, with
 * `{ memory: true }`, in the in-memory item store (lib/kv/memory-item-store.ts), which answers as
 * DynamoDB does (test/item-store.test.ts) and starts no emulator: for op- and SQL-level suites
 * that do not test DynamoDB itself. Requests go through Hono's fetch interface, so routing,
 * parsing and error mapping are the ones users hit.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createApp } from "../../lib/api/app.ts";
import type { SiltContext } from "../../lib/context.ts";
import { silentLogger } from "../../lib/logger.ts";
import { buildContext } from "../../lib/runtime/context-factory.ts";
import { LocalObjectStore } from "../../lib/storage/local-store.ts";
import type { ObjectStore } from "../../lib/storage/object-store.ts";
import { S3ObjectStore } from "../../lib/storage/s3-store.ts";
import { startDynamo } from "./dynamo-emulator.ts";
import { startS3Emulator } from "./s3-emulator.ts";

export type StorageKind = "local" | "s3";

export interface SiltHarness {
  ctx: SiltContext;
  /** Sends a request to the app; `body` objects are sent as JSON. */
  call(
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test responses are inspected field by field.
  body: any;
  headers: Headers;
  raw: Uint8Array;
}

export interface SiltOptions {
  /** Commits, catalog and grants in memory instead of dynalite. */
  memory?: boolean;
}

export async function startSilt(
  storage: StorageKind = "local",
  options: SiltOptions = {},
): Promise<SiltHarness> {
  const dynamo = options.memory ? undefined : await startDynamo();
  const context = (root: { store: ObjectStore; storageRootUri: string }) => {
    const common = { ...root, logger: silentLogger, principal: "tester" };
    return dynamo === undefined
      ? buildContext({ ...common, memory: true })
      : buildContext({
          ...common,
          dynamo: dynamo.client,
          commitsTable: dynamo.tableName("silt_commits"),
          catalogTable: dynamo.tableName("silt_catalog"),
          ensureTables: true,
        });
  };
  let closeStorage: () => Promise<void>;
  let ctx: SiltContext;
  if (storage === "s3") {
    const s3 = await startS3Emulator();
    ctx = await context({
      store: new S3ObjectStore({ client: s3.client, bucket: s3.bucket, prefix: s3.prefix }),
      storageRootUri: `s3://${s3.bucket}/${s3.prefix}`,
    });
    closeStorage = () => s3.close();
  } else {
    const dir = await mkdtemp(path.join(os.tmpdir(), "silt-test-"));
    ctx = await context({
      store: new LocalObjectStore(dir),
      storageRootUri: pathToFileURL(dir).href,
    });
    closeStorage = () => rm(dir, { recursive: true, force: true });
  }
  const app = createApp(ctx);
  return {
    ctx,
    async call(method, url, body, headers = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (body instanceof Uint8Array) {
        init.body = body;
      } else if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] = "application/json";
      }
      const res = await app.request(`http://silt.test${url}`, init);
      const raw = new Uint8Array(await res.arrayBuffer());
      const type = res.headers.get("content-type") ?? "";
      const json = type.includes("json") && !type.includes("ndjson");
      const parsed = json ? JSON.parse(new TextDecoder().decode(raw)) : undefined;
      return { status: res.status, body: parsed, headers: res.headers, raw };
    },
    async close() {
      await dynamo?.close();
      await closeStorage();
    },
  };
}
