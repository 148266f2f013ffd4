/**
 * Idempotency-Key through the real HTTP app, with the records in DynamoDB (dynalite) and, once
 * more, in the in-memory store: a retried request
 * replays the first response and commits once, a different request under the same key is
 * refused, a duplicate arriving while the first runs gets 409, failures release the key, and
 * requests without the header behave as before.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import { REPLAYED_HEADER, requestFingerprint, scopedKey } from "../lib/api/idempotency.ts";
import type { SiltContext } from "../lib/context.ts";
import { silentLogger } from "../lib/logger.ts";
import { buildContext } from "../lib/runtime/context-factory.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import { itemStoreBackends } from "./helpers/item-stores.ts";

const backends = itemStoreBackends();
let dir: string;
let ctx: SiltContext;
let app: ReturnType<typeof createApp>;
let now: number;

async function call(method: string, url: string, body?: unknown, key?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== undefined) headers["idempotency-key"] = key;
  const res = await app.request(`http://silt.test${url}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await res.json()) as { error_class?: string; rows?: unknown[][] };
  return { status: res.status, body: parsed, headers: res.headers };
}
const history = async (table: string) =>
  ((await call("GET", `/api/v1/tables/${table}/history`)).body.rows ?? []).map((r) => ({
    version: r[0] as number,
  }));

afterAll(async () => {
  for (const backend of backends) await backend.close();
});

describe.each(backends)("Idempotency-Key on $name", (backend) => {
  beforeAll(async () => {
    now = Date.UTC(2025, 0, 1);
    dir = await mkdtemp(path.join(os.tmpdir(), "silt-idem-"));
    const common = {
      store: new LocalObjectStore(dir),
      storageRootUri: pathToFileURL(dir).href,
      logger: silentLogger,
      principal: "tester",
      clock: () => now,
    };
    if (backend.name === "memory") {
      ctx = await buildContext({ ...common, memory: true, idempotency: true });
    } else {
      const dynamo = await backend.dynamo();
      ctx = await buildContext({
        ...common,
        dynamo: dynamo.client,
        commitsTable: dynamo.tableName("silt_commits"),
        catalogTable: dynamo.tableName("silt_catalog"),
        idempotencyTable: dynamo.tableName("silt_idempotency"),
        ensureTables: true,
      });
    }
    app = createApp(ctx);
    for (const statement of [
      "CREATE CATALOG idem",
      "CREATE SCHEMA idem.s",
      "CREATE TABLE idem.s.t (id INT) USING DELTA",
    ]) {
      expect((await call("POST", "/api/v1/sql", { statement })).status).toBe(200);
    }
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("replays the first response to a retry and commits once", async () => {
    const body = { rows: [{ id: 1 }, { id: 2 }] };
    const first = await call("POST", "/api/v1/tables/idem.s.t/insert", body, "k-1");
    expect(first.status).toBe(200);
    expect(first.headers.get(REPLAYED_HEADER)).toBeNull();
    const retry = await call("POST", "/api/v1/tables/idem.s.t/insert", body, "k-1");
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get(REPLAYED_HEADER)).toBe("true");
    const h = await history("idem.s.t");
    expect(h.map((e) => e.version)).toEqual([1, 0]);
  });

  it("refuses a different request under a used key with 422 and commits nothing", async () => {
    const res = await call("POST", "/api/v1/tables/idem.s.t/insert", { rows: [{ id: 9 }] }, "k-1");
    expect(res.status).toBe(422);
    expect(res.body.error_class).toBe("IDEMPOTENCY_KEY_REUSED");
    expect((await history("idem.s.t"))[0]!.version).toBe(1);
  });

  it("answers 409 to a duplicate that arrives while the first is running", async () => {
    const route = "/api/v1/tables/idem.s.t/insert";
    const body = { rows: [{ id: 3 }] };
    const before = (await history("idem.s.t"))[0]!.version;
    // The first request has claimed the key and not finished (its Lambda is still running).
    const first = ctx.idempotency!;
    const key = scopedKey("tester", "POST", route, "k-busy");
    const fingerprint = requestFingerprint(
      "POST",
      route,
      "",
      new TextEncoder().encode(JSON.stringify(body)),
    );
    expect((await first.claim(key, fingerprint)).kind).toBe("claimed");
    const dup = await call("POST", route, body, "k-busy");
    expect(dup.status).toBe(409);
    expect(dup.body.error_class).toBe("IDEMPOTENCY_REQUEST_IN_PROGRESS");
    expect((await history("idem.s.t"))[0]!.version).toBe(before);
    // A failure of the first releases the key; the retry then runs.
    await first.release(key);
    expect((await call("POST", route, body, "k-busy")).status).toBe(200);
    expect((await history("idem.s.t"))[0]!.version).toBe(before + 1);
  });

  it("keeps the caller's error response (4xx) for the retry", async () => {
    const bad = await call("POST", "/api/v1/tables/idem.s.nope/insert", { rows: [] }, "k-404");
    expect(bad.status).toBe(404);
    const again = await call("POST", "/api/v1/tables/idem.s.nope/insert", { rows: [] }, "k-404");
    expect(again.status).toBe(404);
    expect(again.headers.get(REPLAYED_HEADER)).toBe("true");
    expect(again.body).toEqual(bad.body);
  });

  it("lets a key be reused once its record has expired (24 h)", async () => {
    const body = { rows: [{ id: 4 }] };
    const before = (await history("idem.s.t"))[0]!.version;
    expect((await call("POST", "/api/v1/tables/idem.s.t/insert", body, "k-old")).status).toBe(200);
    now += 24 * 60 * 60 * 1000 + 1000;
    expect((await call("POST", "/api/v1/tables/idem.s.t/insert", body, "k-old")).status).toBe(200);
    expect((await history("idem.s.t"))[0]!.version).toBe(before + 2);
  });

  it("leaves requests without the header, and GETs, alone", async () => {
    const before = (await history("idem.s.t"))[0]!.version;
    const body = { rows: [{ id: 5 }] };
    expect((await call("POST", "/api/v1/tables/idem.s.t/insert", body)).status).toBe(200);
    expect((await call("POST", "/api/v1/tables/idem.s.t/insert", body)).status).toBe(200);
    expect((await history("idem.s.t"))[0]!.version).toBe(before + 2);
    const bad = await call("POST", "/api/v1/tables/idem.s.t/insert", body, "");
    expect(bad.status).toBe(400);
    expect(bad.body.error_class).toBe("INVALID_IDEMPOTENCY_KEY");
  });
});
