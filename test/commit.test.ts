import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommitArbiter, ensureCommitTable } from "../lib/commit/arbiter.ts";
import {
  checkConflicts,
  EMPTY_READ_SET,
  type IsolationLevel,
  type PendingTransaction,
  type ReadSet,
  rebaseRowTracking,
} from "../lib/commit/conflicts.ts";
import { catalogView, publishedKey, publishUpTo } from "../lib/commit/publisher.ts";
import {
  type CommitRequest,
  type CommitResult,
  commitTransaction,
  ENGINE_INFO,
} from "../lib/commit/transaction.ts";
import {
  type Action,
  type AddFile,
  type CommitInfo,
  LOG_DIR,
  parseActions,
  STAGED_DIR,
} from "../lib/delta/actions.ts";
import { SiltError } from "../lib/errors.ts";
import { COMMIT_TABLE_KEYS } from "../lib/kv/item-store.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import { listAll } from "../lib/storage/object-store.ts";
import { itemStoreBackends } from "./helpers/item-stores.ts";

// The arbiter's and the transaction's tests run once on DynamoDB and once on the in-memory store.
const backends = itemStoreBackends();
let arbiter: CommitArbiter;
let dir: string;
let store: LocalObjectStore;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "silt-commit-"));
  store = new LocalObjectStore(dir);
});

afterAll(async () => {
  for (const backend of backends) await backend.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Fixtures

interface Table {
  tableId: string;
  tableRoot: string;
}

const newTable = (): Table => {
  const tableId = randomUUID();
  return { tableId, tableRoot: `tables/${tableId}/` };
};

const FEATURES = ["catalogManaged", "deletionVectors", "v2Checkpoint", "vacuumProtocolCheck"];

const protocol = (extraWriter: string[] = []): Action => ({
  protocol: {
    minReaderVersion: 3,
    minWriterVersion: 7,
    readerFeatures: FEATURES,
    writerFeatures: [...FEATURES, "inCommitTimestamp", ...extraWriter],
  },
});

const metadata = (configuration: Record<string, string> = {}): Action => ({
  metaData: {
    id: randomUUID(),
    format: { provider: "parquet", options: {} },
    schemaString:
      '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}',
    partitionColumns: [],
    configuration: { "delta.enableInCommitTimestamps": "true", ...configuration },
    createdTime: 1,
  },
});

const add = (p: string, extra: Partial<AddFile> & { rows?: number } = {}): Action => {
  const { rows = 1, ...rest } = extra;
  return {
    add: {
      path: p,
      partitionValues: {},
      size: 100,
      modificationTime: 1,
      dataChange: true,
      stats: JSON.stringify({ numRecords: rows }),
      ...rest,
    },
  };
};

const remove = (p: string): Action => ({
  remove: { path: p, deletionTimestamp: 1, dataChange: true },
});

const hwm = (n: number): Action => ({
  domainMetadata: {
    domain: "delta.rowTracking",
    configuration: JSON.stringify({ rowIdHighWaterMark: n }),
    removed: false,
  },
});

const APPEND = {
  operation: "WRITE",
  operationParameters: { mode: "Append", partitionBy: "[]" },
  isBlindAppend: true,
} satisfies Partial<CommitInfo>;

type Overrides = Partial<Omit<CommitRequest, "store" | "arbiter" | "tableId" | "tableRoot">>;

const commit = (t: Table, overrides: Overrides & Pick<CommitRequest, "readVersion">) =>
  commitTransaction({
    store,
    arbiter,
    tableId: t.tableId,
    tableRoot: t.tableRoot,
    actions: [],
    commitInfo: APPEND,
    ...overrides,
  });

const create = (t: Table, overrides: Overrides = {}) =>
  commit(t, {
    readVersion: -1,
    actions: [protocol(), metadata()],
    commitInfo: { operation: "CREATE TABLE", isBlindAppend: true },
    ...overrides,
  });

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Published commits of a table, by version (staged files excluded). */
async function publishedLog(t: Table): Promise<Map<number, { key: string; text: string }>> {
  const out = new Map<number, { key: string; text: string }>();
  for (const info of await listAll(store, `${t.tableRoot}${LOG_DIR}`)) {
    const m = /_delta_log\/(\d{20})\.json$/.exec(info.key);
    if (m) out.set(Number(m[1]), { key: info.key, text: decode(await store.get(info.key)) });
  }
  return out;
}

const stagedFiles = async (t: Table) =>
  (await listAll(store, `${t.tableRoot}${STAGED_DIR}`)).map((i) => i.key);

const commitInfoOf = (actions: Action[]): CommitInfo => {
  const first = actions[0];
  if (!first || !("commitInfo" in first)) throw new Error("commitInfo is not the first action");
  return first.commitInfo;
};

const adds = (actions: Action[]): AddFile[] => actions.flatMap((a) => ("add" in a ? [a.add] : []));

async function expectSiltError(p: Promise<unknown>, errorClass: string): Promise<SiltError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SiltError);
  const silt = err as SiltError;
  expect(silt.errorClass).toBe(errorClass);
  return silt;
}

/** A hook that runs `fn` on its first call only: one interleaving, deterministically. */
const once = (fn: () => Promise<unknown>) => {
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    await fn();
  };
};

// ---------------------------------------------------------------------------------------------

describe("ensureCommitTable", () => {
  it("is idempotent and safe to race", async () => {
    const dynamo = await backends[0].dynamo();
    const name = dynamo.tableName("silt-commits-race");
    await Promise.all([
      ensureCommitTable(dynamo.client, name),
      ensureCommitTable(dynamo.client, name),
    ]);
    await ensureCommitTable(dynamo.client, name);
  });
});

describe.each(backends)("on $name", (backend) => {
  beforeAll(async () => {
    const table = await backend.table("silt-commits", COMMIT_TABLE_KEYS);
    arbiter = new CommitArbiter({ items: table.store });
  });

  describe("CommitArbiter", () => {
    it("lets exactly one of 20 concurrent writers ratify a version", async () => {
      const tableId = randomUUID();
      const entries = Array.from({ length: 20 }, (_, i) => ({
        tableId,
        version: 7,
        stagedKey: `staged/${i}`,
        inCommitTimestamp: 1000 + i,
        txnId: `txn-${i}`,
        operation: "WRITE",
      }));
      const results = await Promise.all(entries.map((e) => arbiter.ratify(e)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = entries[results.indexOf(true)];
      const latest = await arbiter.latest(tableId);
      expect(latest).toMatchObject({ ...winner, published: false });
      expect(await arbiter.ratify({ ...winner, txnId: "late" })).toBe(false);
    });

    it("answers latest, range, tail and unpublished from the rows", async () => {
      const tableId = randomUUID();
      expect(await arbiter.latest(tableId)).toBeUndefined();
      expect(await catalogView(arbiter, tableId)).toEqual({ latestRatified: -1, ratified: [] });
      for (let v = 0; v < 40; v++) {
        const entry = {
          tableId,
          version: v,
          stagedKey: `k${v}`,
          inCommitTimestamp: 100 + v,
          txnId: `t${v}`,
          operation: "WRITE",
        };
        expect(await arbiter.ratify(entry)).toBe(true);
        if (v < 35) await arbiter.markPublished(tableId, v);
      }
      expect((await arbiter.latest(tableId))?.version).toBe(39);
      expect((await arbiter.range(tableId, 3, 6)).map((r) => r.version)).toEqual([3, 4, 5, 6]);
      expect((await arbiter.range(tableId, 37)).map((r) => r.version)).toEqual([37, 38, 39]);
      expect(await arbiter.range(tableId, 5, 4)).toEqual([]);
      expect((await arbiter.unpublished(tableId)).map((r) => r.version)).toEqual([
        35, 36, 37, 38, 39,
      ]);
      const view = await catalogView(arbiter, tableId);
      expect(view.latestRatified).toBe(39);
      expect(view.ratified[0]).toEqual({ version: 35, key: "k35", inCommitTimestamp: 135 });
      await arbiter.markPublished(tableId, 35);
      await arbiter.markPublished(tableId, 35);
      expect((await arbiter.unpublished(tableId)).map((r) => r.version)).toEqual([36, 37, 38, 39]);
    });

    it("refuses to mark a version published that was never ratified", async () => {
      const err = await expectSiltError(
        arbiter.markPublished(randomUUID(), 3),
        "SILT_COMMIT_NOT_RATIFIED",
      );
      expect(err.status).toBe(500);
    });
  });

  describe("commitTransaction", () => {
    it("writes commitInfo first, in Spark's key order, with ICT, engineInfo and txnId", async () => {
      const t = newTable();
      const clock = () => 1_000;
      const v0 = await create(t, { clock });
      expect(v0).toMatchObject({
        version: 0,
        inCommitTimestamp: 1_000,
        attempts: 1,
        published: true,
      });
      const v1 = await commit(t, {
        readVersion: 0,
        actions: [add("a.parquet")],
        commitInfo: { ...APPEND, operationMetrics: { numFiles: "1" }, userMetadata: "hello" },
        clock,
      });
      expect(v1.inCommitTimestamp).toBe(1_001);
      const log = await publishedLog(t);
      expect([...log.keys()]).toEqual([0, 1]);
      const ci0 = commitInfoOf(parseActions(log.get(0)!.text));
      expect(Object.keys(ci0)).toEqual([
        "inCommitTimestamp",
        "timestamp",
        "operation",
        "operationParameters",
        "isolationLevel",
        "isBlindAppend",
        "operationMetrics",
        "engineInfo",
        "txnId",
      ]);
      expect(
        log.get(1)!.text.startsWith('{"commitInfo":{"inCommitTimestamp":1001,"timestamp":1001,'),
      ).toBe(true);
      const ci1 = commitInfoOf(parseActions(log.get(1)!.text));
      expect(Object.keys(ci1)).toEqual([
        "inCommitTimestamp",
        "timestamp",
        "operation",
        "operationParameters",
        "readVersion",
        "isolationLevel",
        "isBlindAppend",
        "operationMetrics",
        "userMetadata",
        "engineInfo",
        "txnId",
      ]);
      expect(ci1).toMatchObject({
        readVersion: 0,
        isolationLevel: "Serializable",
        isBlindAppend: true,
        engineInfo: ENGINE_INFO,
        txnId: v1.txnId,
      });
      const row = await arbiter.latest(t.tableId);
      expect(row).toMatchObject({
        version: 1,
        inCommitTimestamp: 1_001,
        txnId: v1.txnId,
        published: true,
      });
    });

    it("keeps engineInfo in step with package.json", async () => {
      const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
      expect(ENGINE_INFO).toBe(`Silt/${pkg.version}`);
    });

    it("16 concurrent appenders x 10 commits publish 160 gap-free versions, nothing lost", async () => {
      const t = newTable();
      const clock = () => 5_000;
      await create(t, { clock });
      const results: CommitResult[] = [];
      await Promise.all(
        Array.from({ length: 16 }, async (_, w) => {
          let readVersion = 0;
          for (let i = 0; i < 10; i++) {
            const r = await commit(t, {
              readVersion,
              actions: [add(`part-w${w}-c${i}.parquet`)],
              clock,
            });
            results.push(r);
            readVersion = r.version;
          }
        }),
      );

      expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 160 }, (_, i) => i + 1),
      );
      const log = await publishedLog(t);
      expect([...log.keys()].sort((a, b) => a - b)).toEqual(
        Array.from({ length: 161 }, (_, i) => i),
      );

      const seenPaths: string[] = [];
      const txnIds = new Set<string>();
      let previousIct = -1;
      for (let v = 0; v <= 160; v++) {
        const actions = parseActions(log.get(v)!.text);
        const ci = commitInfoOf(actions);
        expect(ci.inCommitTimestamp).toBeGreaterThan(previousIct);
        // A clock that never moves leaves the +1 floor as the only source of increase.
        expect(ci.inCommitTimestamp).toBe(5_000 + v);
        previousIct = ci.inCommitTimestamp!;
        txnIds.add(ci.txnId!);
        expect(actions.filter((a) => "commitInfo" in a)).toHaveLength(1);
        if (v > 0) seenPaths.push(...adds(actions).map((a) => a.path));
      }
      expect(txnIds.size).toBe(161);
      expect(seenPaths).toHaveLength(160);
      expect(new Set(seenPaths)).toEqual(
        new Set(
          Array.from({ length: 160 }, (_, i) => `part-w${Math.floor(i / 10)}-c${i % 10}.parquet`),
        ),
      );

      expect(await arbiter.unpublished(t.tableId)).toEqual([]);
      const rows = await arbiter.range(t.tableId, 0);
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: 161 }, (_, i) => i));
      for (const row of rows) {
        const published = log.get(row.version)!.text;
        expect(decode(await store.get(row.stagedKey))).toBe(published);
        expect(commitInfoOf(parseActions(published)).txnId).toBe(row.txnId);
      }
    });

    it("fails DELTA_CONCURRENT_DELETE_READ when a winner removed a file it read, publishing nothing", async () => {
      const t = newTable();
      await create(t);
      await commit(t, { readVersion: 0, actions: [add("a.parquet")] });
      let logAfterWinner: Map<number, { key: string; text: string }> | undefined;
      let winner: CommitResult | undefined;

      const err = await expectSiltError(
        commit(t, {
          readVersion: 1,
          actions: [add("b.parquet")],
          commitInfo: { operation: "MERGE", isBlindAppend: false },
          readSet: { readWholeTable: false, readFilePaths: new Set(["a.parquet"]) },
          hooks: {
            afterStage: once(async () => {
              winner = await commit(t, {
                readVersion: 1,
                actions: [remove("a.parquet")],
                commitInfo: { operation: "DELETE", isBlindAppend: false },
                readSet: { readWholeTable: false, readFilePaths: new Set(["a.parquet"]) },
              });
              logAfterWinner = await publishedLog(t);
            }),
          },
        }),
        "DELTA_CONCURRENT_DELETE_READ",
      );
      expect(err.status).toBe(409);
      expect(err.sqlstate).toBe("2D521");
      expect(err.message).toBe(
        `Transaction conflict detected. A concurrent DELETE deleted data from table ${t.tableId} ` +
          "committed at version 2 that this transaction read. Please try the operation again.",
      );
      expect(winner?.version).toBe(2);
      expect(await publishedLog(t)).toEqual(logAfterWinner);
      expect([...(logAfterWinner ?? new Map()).keys()]).toEqual([0, 1, 2]);
      expect((await arbiter.latest(t.tableId))?.version).toBe(2);
      // The loser's staged file stays behind for VACUUM; no reader looks at it.
      expect(await stagedFiles(t)).toHaveLength(4);
    });

    it("fails DELTA_METADATA_CHANGED on a concurrent metadata change, racing or already behind", async () => {
      const t = newTable();
      await create(t);
      const setProps = (readVersion: number) =>
        commit(t, {
          readVersion,
          actions: [metadata({ "delta.appendOnly": "false" })],
          commitInfo: { operation: "SET TBLPROPERTIES", isBlindAppend: false },
          readSet: EMPTY_READ_SET,
        });

      const raced = await expectSiltError(
        commit(t, {
          readVersion: 0,
          actions: [add("x.parquet")],
          hooks: { afterStage: once(() => setProps(0)) },
        }),
        "DELTA_METADATA_CHANGED",
      );
      expect(raced.status).toBe(409);
      expect(raced.sqlstate).toBe("2D521");
      expect(raced.message).toMatch(
        new RegExp(
          `^MetadataChangedException: The metadata of the Delta table ${t.tableId} has been changed ` +
            "by a concurrent update\\. Please try the operation again\\.",
        ),
      );

      // A writer whose snapshot is already stale never stages or ratifies anything.
      const stagedBefore = await stagedFiles(t);
      await expectSiltError(
        commit(t, { readVersion: 0, actions: [add("y.parquet")], tableName: "main.s.t" }),
        "DELTA_METADATA_CHANGED",
      );
      expect(await stagedFiles(t)).toEqual(stagedBefore);
      expect([...(await publishedLog(t)).keys()]).toEqual([0, 1]);
    });

    it("rebases non-conflicting commits onto the winner and keeps readVersion as read", async () => {
      const t = newTable();
      await create(t, { clock: () => 10 });
      let winner: CommitResult | undefined;
      const loser = await commit(t, {
        readVersion: 0,
        actions: [add("l.parquet")],
        clock: () => 10,
        hooks: {
          afterStage: once(async () => {
            winner = await commit(t, {
              readVersion: 0,
              actions: [add("w.parquet")],
              clock: () => 50,
            });
          }),
        },
      });
      expect(winner?.version).toBe(1);
      expect(loser).toMatchObject({ version: 2, attempts: 2, inCommitTimestamp: 51 });
      const ci = commitInfoOf(parseActions((await publishedLog(t)).get(2)!.text));
      expect(ci.readVersion).toBe(0);
      expect(ci.txnId).toBe(loser.txnId);
    });

    /**
     * A writer that loses every ratification (the first `losses` of them, when given) to a rival,
     * on a clock that moves only while it backs off: time passes exactly as the waits say.
     */
    const loser = (t: Table, opts: { losses?: number; random?: () => number } = {}) => {
      let latest = 0;
      let now = 1_000;
      const waits: number[] = [];
      const steal = async () => {
        if (opts.losses !== undefined && latest >= opts.losses) return;
        latest = (await commit(t, { readVersion: latest, actions: [add(`s${latest}.parquet`)] }))
          .version;
      };
      const run = (overrides: Overrides = {}) =>
        commit(t, {
          readVersion: 0,
          actions: [add("mine.parquet")],
          clock: () => now,
          backoff: {
            random: opts.random ?? (() => 0.5),
            sleep: async (ms) => {
              waits.push(ms);
              now += ms;
            },
          },
          hooks: { afterStage: steal },
          ...overrides,
        });
      return { run, waits };
    };

    it("keeps retrying past 20 lost ratifications while its time budget lasts", async () => {
      const t = newTable();
      await create(t);
      const { run } = loser(t, { losses: 30 });
      const result = await run();
      expect(result).toMatchObject({ version: 31, attempts: 31 });
      const log = await publishedLog(t);
      expect(log.get(31)!.text).toContain("mine.parquet");
    });

    it("gives up with DELTA_CONCURRENT_WRITE once its time budget is spent", async () => {
      const t = newTable();
      await create(t);
      const { run, waits } = loser(t, { random: () => 1 });
      const err = await expectSiltError(run({ retryBudgetMs: 3_000 }), "DELTA_CONCURRENT_WRITE");
      expect(err.status).toBe(409);
      expect(err.sqlstate).toBe("2D521");
      // Exponential backoff capped at 1 s; the tenth loss comes 3.27 s after the first.
      expect(waits).toEqual([10, 20, 40, 80, 160, 320, 640, 1_000, 1_000]);
      expect(err.message).toContain("10 times in a row over 3270 ms");
      const log = await publishedLog(t);
      expect([...log.keys()]).toEqual(Array.from({ length: 11 }, (_, i) => i));
      expect([...log.values()].some((c) => c.text.includes("mine.parquet"))).toBe(false);
    });

    it("waits a random share (full jitter) of each backoff step", async () => {
      const t = newTable();
      await create(t);
      const shares = [0.5, 0.25, 0];
      const { run, waits } = loser(t, { losses: 3, random: () => shares.shift()! });
      expect((await run()).attempts).toBe(4);
      expect(waits).toEqual([5, 5, 0]);
    });

    it("rebases row ids past a concurrent winner's high-water mark", async () => {
      const t = newTable();
      await create(t, {
        actions: [
          protocol(["domainMetadata", "rowTracking"]),
          metadata({ "delta.enableRowTracking": "true" }),
        ],
      });
      const rt = { rowTracking: true } as const;
      const result = await commit(t, {
        ...rt,
        readVersion: 0,
        readRowIdHighWaterMark: -1,
        actions: [add("a.parquet", { rows: 5, baseRowId: 0, defaultRowCommitVersion: 1 }), hwm(4)],
        hooks: {
          afterStage: once(() =>
            commit(t, {
              ...rt,
              readVersion: 0,
              // No readRowIdHighWaterMark: inferred from the fresh add.
              actions: [
                add("b.parquet", { rows: 3, baseRowId: 0, defaultRowCommitVersion: 1 }),
                hwm(2),
              ],
            }),
          ),
        },
      });
      expect(result.version).toBe(2);
      const log = await publishedLog(t);
      const v1 = parseActions(log.get(1)!.text);
      const v2 = parseActions(log.get(2)!.text);
      expect(adds(v1)[0]).toMatchObject({
        path: "b.parquet",
        baseRowId: 0,
        defaultRowCommitVersion: 1,
      });
      expect(adds(v2)[0]).toMatchObject({
        path: "a.parquet",
        baseRowId: 3,
        defaultRowCommitVersion: 2,
      });
      expect(v2.find((a) => "domainMetadata" in a)).toEqual(hwm(7));
    });

    it("keeps row ids disjoint and the high-water mark exact under concurrent appends", async () => {
      const t = newTable();
      await create(t, {
        actions: [
          protocol(["domainMetadata", "rowTracking"]),
          metadata({ "delta.enableRowTracking": "true" }),
        ],
      });
      const sizes = new Map<string, number>();
      await Promise.all(
        Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; i < 3; i++) {
            const rows = 1 + ((w * 3 + i) % 5);
            const p = `rt-w${w}-c${i}.parquet`;
            sizes.set(p, rows);
            // Every commit is built on the empty v0 snapshot, so every commit after the first rebases.
            await commit(t, {
              readVersion: 0,
              rowTracking: true,
              actions: [add(p, { rows, baseRowId: 0, defaultRowCommitVersion: 1 }), hwm(rows - 1)],
            });
          }
        }),
      );
      const log = await publishedLog(t);
      expect(log.size).toBe(13);
      const spans: [number, number][] = [];
      let lastHwm = -1;
      for (let v = 1; v <= 12; v++) {
        const actions = parseActions(log.get(v)!.text);
        const [a] = adds(actions);
        expect(a.defaultRowCommitVersion).toBe(v);
        const end = a.baseRowId! + sizes.get(a.path)! - 1;
        spans.push([a.baseRowId!, end]);
        const dm = actions.find((x) => "domainMetadata" in x);
        expect(dm).toEqual(hwm(end));
        expect(end).toBeGreaterThan(lastHwm);
        lastHwm = end;
      }
      spans.sort((x, y) => x[0] - y[0]);
      let next = 0;
      for (const [start, end] of spans) {
        expect(start).toBe(next);
        next = end + 1;
      }
      expect(lastHwm).toBe([...sizes.values()].reduce((s, n) => s + n, 0) - 1);
    });

    it("a crash after ratify is finished by publishUpTo, identical to the staged commit", async () => {
      const t = newTable();
      await create(t);
      const crash = new Error("crash after ratify");
      let staged = "";
      await expect(
        commit(t, {
          readVersion: 0,
          actions: [add("c.parquet")],
          hooks: {
            afterRatify: async (info) => {
              staged = info.stagedKey;
              throw crash;
            },
          },
        }),
      ).rejects.toBe(crash);

      expect(await store.head(publishedKey(t.tableRoot, 1))).toBeUndefined();
      const row = await arbiter.latest(t.tableId);
      expect(row).toMatchObject({ version: 1, stagedKey: staged, published: false });

      // A reader sees the ratified commit through the catalog before anyone publishes it.
      const view = await catalogView(arbiter, t.tableId);
      expect(view).toEqual({
        latestRatified: 1,
        ratified: [{ version: 1, key: staged, inCommitTimestamp: row!.inCommitTimestamp }],
      });
      const readerSaw = decode(await store.get(view.ratified[0].key));
      expect(adds(parseActions(readerSaw)).map((a) => a.path)).toEqual(["c.parquet"]);

      // Cooperative publishers racing each other all succeed and agree.
      const done = await Promise.all([
        publishUpTo(store, arbiter, t.tableId, t.tableRoot, 1),
        publishUpTo(store, arbiter, t.tableId, t.tableRoot, 1),
        publishUpTo(store, arbiter, t.tableId, t.tableRoot, 1),
      ]);
      expect(done.flat().length).toBeGreaterThanOrEqual(1);
      expect(decode(await store.get(publishedKey(t.tableRoot, 1)))).toBe(readerSaw);
      expect(await arbiter.unpublished(t.tableId)).toEqual([]);
      expect(await publishUpTo(store, arbiter, t.tableId, t.tableRoot, 1)).toEqual([]);
    });

    it("a crash after ratify is finished by the next writer before it commits", async () => {
      const t = newTable();
      await create(t);
      let staged = "";
      await expect(
        commit(t, {
          readVersion: 0,
          actions: [add("c.parquet")],
          hooks: {
            afterRatify: async (info) => {
              staged = info.stagedKey;
              throw new Error("crash");
            },
          },
        }),
      ).rejects.toThrow("crash");
      const stagedText = decode(await store.get(staged));

      const { latestRatified } = await catalogView(arbiter, t.tableId);
      const next = await commit(t, { readVersion: latestRatified, actions: [add("d.parquet")] });
      expect(next.version).toBe(2);
      const log = await publishedLog(t);
      expect([...log.keys()]).toEqual([0, 1, 2]);
      expect(log.get(1)!.text).toBe(stagedText);
    });

    it("a crash before ratify leaves no row and no commit; the next writer takes that version", async () => {
      const t = newTable();
      await create(t);
      let orphan = "";
      await expect(
        commit(t, {
          readVersion: 0,
          actions: [add("lost.parquet")],
          hooks: {
            afterStage: async (info) => {
              orphan = info.stagedKey;
              throw new Error("crash before ratify");
            },
          },
        }),
      ).rejects.toThrow("crash before ratify");

      expect((await arbiter.latest(t.tableId))?.version).toBe(0);
      expect(await arbiter.range(t.tableId, 1)).toEqual([]);
      expect(await store.head(publishedKey(t.tableRoot, 1))).toBeUndefined();
      expect(await store.head(orphan)).toBeDefined();
      expect(await catalogView(arbiter, t.tableId)).toEqual({ latestRatified: 0, ratified: [] });

      const next = await commit(t, { readVersion: 0, actions: [add("kept.parquet")] });
      expect(next.version).toBe(1);
      const text = (await publishedLog(t)).get(1)!.text;
      expect(text).toContain("kept.parquet");
      expect(text).not.toContain("lost.parquet");
    });

    it("rejects a readVersion the catalog never ratified", async () => {
      const t = newTable();
      await create(t);
      await expectSiltError(
        commit(t, { readVersion: 5, actions: [add("z.parquet")] }),
        "SILT_READ_VERSION_AHEAD",
      );
    });
  });

  // ---------------------------------------------------------------------------------------------
  // Conflict rules, without I/O
});

describe("checkConflicts", () => {
  const winner = (operation: string, isBlindAppend: boolean, actions: Action[], version = 5) => ({
    version,
    actions: [{ commitInfo: { operation, isBlindAppend } }, ...actions],
  });
  const txn = (
    actions: Action[],
    readSet: ReadSet,
    opts: { isolationLevel?: IsolationLevel; isBlindAppend?: boolean } = {},
  ): PendingTransaction => ({
    actions,
    readSet,
    isolationLevel: opts.isolationLevel ?? "Serializable",
    isBlindAppend: opts.isBlindAppend ?? false,
    tableName: "main.sales.orders",
  });
  const whole: ReadSet = { readWholeTable: true, readFilePaths: new Set() };
  const classOf = (fn: () => void): string | undefined => {
    try {
      fn();
      return undefined;
    } catch (err) {
      return (err as SiltError).errorClass;
    }
  };

  it("reports a concurrent append into what the transaction read", () => {
    let err: SiltError | undefined;
    try {
      checkConflicts(txn([remove("a")], whole), winner("WRITE", true, [add("n")], 12));
    } catch (e) {
      err = e as SiltError;
    }
    expect(err?.errorClass).toBe("DELTA_CONCURRENT_APPEND");
    expect(err?.status).toBe(409);
    expect(err?.sqlstate).toBe("2D521");
    expect(err?.message).toBe(
      "Transaction conflict detected. A concurrent WRITE added data to table main.sales.orders " +
        "committed at version 12. Please try the operation again.",
    );
  });

  it("lets WriteSerializable ignore blind appends but not other writers' adds", () => {
    const ws = { isolationLevel: "WriteSerializable" as const };
    expect(
      classOf(() => checkConflicts(txn([], whole, ws), winner("WRITE", true, [add("n")]))),
    ).toBeUndefined();
    expect(
      classOf(() => checkConflicts(txn([], whole, ws), winner("MERGE", false, [add("n")]))),
    ).toBe("DELTA_CONCURRENT_APPEND");
    expect(
      classOf(() =>
        checkConflicts(txn([metadata()], whole, ws), winner("WRITE", true, [add("n")])),
      ),
    ).toBe("DELTA_CONCURRENT_APPEND");
  });

  it("never fails blind appends against appends, nor on dataChange=false adds", () => {
    const blind = txn([add("mine")], EMPTY_READ_SET, { isBlindAppend: true });
    expect(classOf(() => checkConflicts(blind, winner("WRITE", true, [add("n")])))).toBeUndefined();
    expect(
      classOf(() => checkConflicts(blind, winner("MERGE", false, [add("n")]))),
    ).toBeUndefined();
    const compaction = winner("OPTIMIZE", false, [add("big", { dataChange: false })]);
    expect(classOf(() => checkConflicts(txn([], whole), compaction))).toBeUndefined();
  });

  it("uses the read predicate to decide whether a new file could have been read", () => {
    const readSet: ReadSet = {
      readWholeTable: false,
      readFilePaths: new Set(["old"]),
      readPredicate: (f) => f.partitionValues.day === "mon",
    };
    const mon = winner("WRITE", false, [add("n1", { partitionValues: { day: "mon" } })]);
    const tue = winner("WRITE", false, [add("n2", { partitionValues: { day: "tue" } })]);
    expect(classOf(() => checkConflicts(txn([], readSet), mon))).toBe("DELTA_CONCURRENT_APPEND");
    expect(classOf(() => checkConflicts(txn([], readSet), tue))).toBeUndefined();
  });

  it("reports delete/read and delete/delete", () => {
    const read: ReadSet = { readWholeTable: false, readFilePaths: new Set(["a"]) };
    expect(
      classOf(() => checkConflicts(txn([], read), winner("DELETE", false, [remove("a")]))),
    ).toBe("DELTA_CONCURRENT_DELETE_READ");
    expect(
      classOf(() => checkConflicts(txn([], read), winner("DELETE", false, [remove("b")]))),
    ).toBeUndefined();
    expect(
      classOf(() => checkConflicts(txn([], whole), winner("DELETE", false, [remove("b")]))),
    ).toBe("DELTA_CONCURRENT_DELETE_READ");
    expect(
      classOf(() =>
        checkConflicts(txn([remove("b")], EMPTY_READ_SET), winner("DELETE", false, [remove("b")])),
      ),
    ).toBe("DELTA_CONCURRENT_DELETE_DELETE");
  });

  it("reports protocol, metadata, app-transaction and domain conflicts", () => {
    expect(
      classOf(() =>
        checkConflicts(txn([], EMPTY_READ_SET), winner("UPGRADE PROTOCOL", false, [protocol()])),
      ),
    ).toBe("DELTA_PROTOCOL_CHANGED");
    expect(
      classOf(() =>
        checkConflicts(txn([], EMPTY_READ_SET), winner("SET TBLPROPERTIES", false, [metadata()])),
      ),
    ).toBe("DELTA_METADATA_CHANGED");
    const txnAction = (appId: string): Action => ({ txn: { appId, version: 3 } });
    expect(
      classOf(() =>
        checkConflicts(
          txn([txnAction("job")], EMPTY_READ_SET),
          winner("WRITE", true, [txnAction("job")]),
        ),
      ),
    ).toBe("DELTA_CONCURRENT_TRANSACTION");
    expect(
      classOf(() =>
        checkConflicts(
          txn([txnAction("a")], EMPTY_READ_SET),
          winner("WRITE", true, [txnAction("b")]),
        ),
      ),
    ).toBeUndefined();
    const domain = (d: string): Action => ({
      domainMetadata: { domain: d, configuration: "{}", removed: false },
    });
    expect(
      classOf(() =>
        checkConflicts(
          txn([domain("acme.x")], EMPTY_READ_SET),
          winner("WRITE", true, [domain("acme.x")]),
        ),
      ),
    ).toBe("DELTA_CONCURRENT_TRANSACTION");
    expect(
      classOf(() => checkConflicts(txn([hwm(9)], EMPTY_READ_SET), winner("WRITE", true, [hwm(4)]))),
    ).toBeUndefined();
  });
});

describe("rebaseRowTracking", () => {
  it("moves only fresh ids, restamps only fresh adds, and adds a missing high-water mark", () => {
    const carried = add("dv-updated", { rows: 10, baseRowId: 2, defaultRowCommitVersion: 3 });
    const fresh = add("new", { rows: 4, baseRowId: 20, defaultRowCommitVersion: 8 });
    const { actions, baseHwm } = rebaseRowTracking([carried, fresh], 19, 29, 8, 11);
    expect(baseHwm).toBe(29);
    expect(adds(actions)).toEqual([
      (carried as { add: AddFile }).add,
      { ...(fresh as { add: AddFile }).add, baseRowId: 30, defaultRowCommitVersion: 11 },
    ]);
    expect(actions[2]).toEqual(hwm(33));
  });

  it("leaves ids alone when no winner moved the mark", () => {
    const { actions } = rebaseRowTracking(
      [add("n", { baseRowId: 5, defaultRowCommitVersion: 2 }), hwm(5)],
      4,
      undefined,
      2,
      3,
    );
    expect(adds(actions)[0]).toMatchObject({ baseRowId: 5, defaultRowCommitVersion: 3 });
    expect(actions[1]).toEqual(hwm(5));
  });
});
