/**
 * Idempotency-Key through the real HTTP app, with the records in DynamoDB (dynalite) and, once
 * more, in the in-memory store: a retried request
 * replays the first response and commits once, a different request under the same key is
 * refused, a duplicate arriving while the first runs gets 409, failures release the key, a run
 * that died (faults injected into its idempotency store: it stops before it records its answer,
 * or before it can release the key) holds the key only for its lease, after which a retry
 * answers the commit that landed or runs the request, and requests without the header behave as
 * before.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../lib/api/app.ts";
import { REPLAYED_HEADER, requestFingerprint, scopedKey } from "../lib/api/idempotency.ts";
import type { SiltContext } from "../lib/context.ts";
import { DynamoItemStore } from "../lib/kv/dynamo-item-store.ts";
import { IdempotencyStore, RENEWED_LEASE_MS } from "../lib/kv/idempotency-store.ts";
import { IDEMPOTENCY_TABLE_KEYS } from "../lib/kv/item-store.ts";
import { MemoryItemStore } from "../lib/kv/memory-item-store.ts";
import { silentLogger } from "../lib/logger.ts";
import { buildContext } from "../lib/runtime/context-factory.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import { itemStoreBackends } from "./helpers/item-stores.ts";
import { hookedStore } from "./helpers/store-hooks.ts";

const backends = itemStoreBackends();
let dir: string;
let ctx: SiltContext;
let app: ReturnType<typeof createApp>;
let now: number;
/** The function's timeout, which is also the claim's lease. */
const LEASE_MS = 29_000;

async function call(method: string, url: string, body?: unknown, key?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== undefined) headers["idempotency-key"] = key;
  const res = await app.request(`http://silt.test${url}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await res.json()) as {
    error_class?: string;
    rows?: unknown[][];
    recovered?: boolean;
  };
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
      requestTimeoutMs: LEASE_MS,
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
    const claim = await first.claim(key, fingerprint);
    if (claim.kind !== "claimed") throw new Error(`claim: ${claim.kind}`);
    const dup = await call("POST", route, body, "k-busy");
    expect(dup.status).toBe(409);
    expect(dup.body.error_class).toBe("IDEMPOTENCY_REQUEST_IN_PROGRESS");
    expect((await history("idem.s.t"))[0]!.version).toBe(before);
    // A failure of the first releases the key; the retry then runs.
    await first.release(key, claim.claimId);
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

  describe("after a run died mid-flight", () => {
    const route = "/api/v1/tables/idem.s.t/insert";
    /** The idempotency store of a process killed at `at`: that call and nothing after lands. */
    const dying = (at: "complete" | "release"): IdempotencyStore => {
      const store = ctx.idempotency!;
      const killed = () => Promise.reject(new Error(`killed before ${at}`));
      return Object.assign(Object.create(store) as IdempotencyStore, {
        [at]: killed,
        ...(at === "release" ? {} : { release: killed }),
      });
    };
    const callWith = async (c: SiltContext, body: unknown, key: string) =>
      createApp(c).request(`http://silt.test${route}`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
      });
    const tableRows = async () =>
      ((await call("GET", "/api/v1/tables/idem.s.t/rows")).body.rows ?? []).map((r) => r[0]);

    it("after it committed: holds the key for its lease, then answers the commit and records it", async () => {
      const body = { rows: [{ id: 100 }] };
      const before = (await history("idem.s.t"))[0]!.version;
      // Killed between its commit and recording the answer.
      const dead = await callWith({ ...ctx, idempotency: dying("complete") }, body, "k-dead-1");
      expect(dead.status).toBe(500);
      expect((await history("idem.s.t"))[0]!.version).toBe(before + 1);
      // Within the lease the run might still be alive.
      now += LEASE_MS - 1;
      const early = await call("POST", route, body, "k-dead-1");
      expect(early.status).toBe(409);
      expect(early.body.error_class).toBe("IDEMPOTENCY_REQUEST_IN_PROGRESS");
      now += 2;
      const retry = await call("POST", route, body, "k-dead-1");
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({
        version: before + 1,
        committed: true,
        operation: "WRITE",
        recovered: true,
      });
      expect(retry.headers.get(REPLAYED_HEADER)).toBe("true");
      // Once: no second commit, and the answer is now the record's.
      const again = await call("POST", route, body, "k-dead-1");
      expect(again.body).toEqual(retry.body);
      expect((await history("idem.s.t"))[0]!.version).toBe(before + 1);
      expect((await tableRows()).filter((id) => id === 100)).toHaveLength(1);
    });

    it("before it committed: after its lease a retry runs the request, once", async () => {
      const body = { rows: [{ id: 200 }] };
      const before = (await history("idem.s.t"))[0]!.version;
      // Killed after it recorded the commit it began and before ratifying it.
      const stagedFails: SiltContext = {
        ...ctx,
        idempotency: dying("release"),
        store: hookedStore(ctx.store, async (key) => {
          if (key.includes("_staged_commits/")) throw new Error("killed before staging");
        }),
      };
      expect((await callWith(stagedFails, body, "k-dead-2")).status).toBe(500);
      expect((await history("idem.s.t"))[0]!.version).toBe(before);
      now += LEASE_MS + 1;
      const retry = await call("POST", route, body, "k-dead-2");
      expect(retry.status).toBe(200);
      expect(retry.body.recovered).toBeUndefined();
      expect(retry.headers.get(REPLAYED_HEADER)).toBeNull();
      expect((await history("idem.s.t"))[0]!.version).toBe(before + 1);
      expect((await call("POST", route, body, "k-dead-2")).headers.get(REPLAYED_HEADER)).toBe(
        "true",
      );
      expect((await history("idem.s.t"))[0]!.version).toBe(before + 1);
      expect((await tableRows()).filter((id) => id === 200)).toHaveLength(1);
    });

    it("lets one retry take an abandoned key over; the old run can no longer commit under it", async () => {
      const store = ctx.idempotency!;
      const key = scopedKey("tester", "POST", route, "k-dead-3");
      const old = await store.claim(key, "fp");
      if (old.kind !== "claimed") throw new Error(`claim: ${old.kind}`);
      now += LEASE_MS + 1;
      const [a, b] = await Promise.all([store.claim(key, "fp"), store.claim(key, "fp")]);
      expect([a.kind, b.kind].sort()).toEqual(["inProgress", "takenOver"]);
      expect(
        await store.recordCommit(key, old.claimId, { tableId: "t", readVersion: 0, txnId: "x" }),
      ).toBe(false);
    });
  });

  describe("where no timeout stops a request (the local server)", () => {
    const route = "/api/v1/tables/idem.s.t/insert";
    /** `ctx` with the idempotency store `silt serve` builds: no function timeout. */
    let local: SiltContext;
    beforeAll(async () => {
      const items =
        backend.name === "memory"
          ? new MemoryItemStore(IDEMPOTENCY_TABLE_KEYS)
          : new DynamoItemStore(
              (await backend.dynamo()).client,
              (await backend.dynamo()).tableName("silt_idempotency"),
              IDEMPOTENCY_TABLE_KEYS,
            );
      local = { ...ctx, idempotency: new IdempotencyStore(items, () => now) };
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it("lets a retry take over a claim nobody renewed once its short lease has passed", async () => {
      const store = local.idempotency!;
      expect(store.renewEveryMs).toBe(RENEWED_LEASE_MS / 3);
      const key = scopedKey("tester", "POST", route, "k-local-1");
      expect((await store.claim(key, "fp")).kind).toBe("claimed");
      now += RENEWED_LEASE_MS - 1;
      expect((await store.claim(key, "fp")).kind).toBe("inProgress");
      now += 2;
      expect((await store.claim(key, "fp")).kind).toBe("takenOver");
    });

    it("renews the claim of a running request, so a duplicate waits however long it runs", async () => {
      vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
      const renewals: Promise<boolean>[] = [];
      const base = local.idempotency!;
      const store = Object.assign(Object.create(base) as IdempotencyStore, {
        renew: (key: string, claimId: string) => {
          const renewed = base.renew(key, claimId);
          renewals.push(renewed);
          return renewed;
        },
      });
      let unblock!: () => void;
      const blocked = new Promise<void>((resolve) => {
        unblock = resolve;
      });
      let blocking = true;
      let writing!: () => void;
      const reached = new Promise<void>((resolve) => {
        writing = resolve;
      });
      const slow: SiltContext = {
        ...local,
        idempotency: store,
        store: hookedStore(local.store, async (key) => {
          if (!blocking || !key.endsWith(".parquet")) return;
          writing();
          await blocked;
        }),
      };
      const send = () =>
        createApp(slow).request(`http://silt.test${route}`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": "k-local-2" },
          body: JSON.stringify({ rows: [{ id: 300 }] }),
        });
      const before = (await history("idem.s.t"))[0]!.version;
      const first = send();
      // The request is now writing its file; a lease and a half later it still runs.
      await reached;
      now += RENEWED_LEASE_MS / 2;
      vi.advanceTimersByTime(store.renewEveryMs!);
      now += RENEWED_LEASE_MS;
      vi.advanceTimersByTime(store.renewEveryMs!);
      expect(renewals.length).toBe(2);
      expect(await Promise.all(renewals)).toEqual([true, true]);
      const duplicate = await send();
      expect(duplicate.status).toBe(409);
      blocking = false;
      unblock();
      expect((await first).status).toBe(200);
      // Answered: the timer is gone, and the retry replays the answer.
      vi.advanceTimersByTime(store.renewEveryMs! * 3);
      expect(renewals.length).toBe(2);
      const retry = await send();
      expect(retry.headers.get(REPLAYED_HEADER)).toBe("true");
      expect((await history("idem.s.t"))[0]!.version).toBe(before + 1);
    });
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
