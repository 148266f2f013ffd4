/**
 * The item store (lib/kv) on DynamoDB and in memory, case by case: the in-memory store must
 * answer every operation the stores use exactly as DynamoDB does, or the suites that run on it
 * prove nothing. Each case runs on both backends.
 */
import { afterAll, describe, expect, it } from "vitest";
import { GrantStore } from "../lib/catalog/grants.ts";
import {
  and,
  attributeExists,
  attributeNotExists,
  CATALOG_TABLE_KEYS,
  COMMIT_TABLE_KEYS,
  eq,
  IDEMPOTENCY_TABLE_KEYS,
  type Item,
  le,
  lt,
  or,
  queryAll,
} from "../lib/kv/item-store.ts";
import { itemStoreBackends } from "./helpers/item-stores.ts";

const backends = itemStoreBackends();

afterAll(async () => {
  for (const backend of backends) await backend.close();
});

const S = (s: string) => ({ S: s });
const N = (n: number | string) => ({ N: String(n) });

async function rejection(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

describe.each(backends)("item store on $name", (backend) => {
  const catalogTable = () => backend.table("kv-catalog", CATALOG_TABLE_KEYS);
  const commitTable = () => backend.table("kv-commits", COMMIT_TABLE_KEYS);

  it("puts, gets and deletes, copying items in and out", async () => {
    const { store, itemCount } = await catalogTable();
    const item: Item = { pk: S("p"), sk: S("a"), n: N(1), flag: { BOOL: true } };
    expect(await store.put(item)).toBe(true);
    item.n = N(2);
    const got = await store.get({ pk: S("p"), sk: S("a") });
    expect(got).toEqual({ pk: S("p"), sk: S("a"), n: N(1), flag: { BOOL: true } });
    (got as Item).n = N(3);
    expect((await store.get({ pk: S("p"), sk: S("a") }))?.n).toEqual(N(1));
    expect(await store.get({ pk: S("p"), sk: S("b") })).toBeUndefined();
    expect(await itemCount()).toBe(1);
    expect(await store.delete({ pk: S("p"), sk: S("a") })).toBe(true);
    expect(await store.delete({ pk: S("p"), sk: S("a") })).toBe(true);
    expect(await itemCount()).toBe(0);
  });

  it("evaluates the stores' conditions as DynamoDB does", async () => {
    const { store } = await catalogTable();
    const key = { pk: S("p"), sk: S("a") };
    const item = { ...key, state: S("ACTIVE"), changedAt: N(100), id: S("x") };
    expect(await store.put(item, attributeNotExists("pk"))).toBe(true);
    expect(await store.put(item, attributeNotExists("pk"))).toBe(false);
    // A missing attribute, or one of another type, compares false, for = and < alike.
    expect(await store.delete(key, eq("nothing", S("ACTIVE")))).toBe(false);
    expect(await store.delete(key, eq("changedAt", S("100")))).toBe(false);
    expect(await store.delete(key, lt("nothing", N(5)))).toBe(false);
    // Numbers compare by value, not by text.
    expect(await store.update(key, { set: { seen: N(1) } }, eq("changedAt", N("100.0")))).toBe(
      true,
    );
    expect(await store.update(key, { set: { seen: N(2) } }, le("changedAt", N(99)))).toBe(false);
    expect(await store.update(key, { set: { seen: N(3) } }, lt("changedAt", N(1000)))).toBe(true);
    expect(await store.update(key, { set: { seen: N(4) } }, le("changedAt", N(100)))).toBe(true);
    // The catalog's drop mark: id matches and (ACTIVE or a stale DROPPING).
    const mark = and(
      eq("id", S("x")),
      or(eq("state", S("ACTIVE")), and(eq("state", S("DROPPING")), le("changedAt", N(50)))),
    );
    expect(
      await store.update(key, { set: { state: S("DROPPING"), dropToken: S("t") } }, mark),
    ).toBe(true);
    expect(await store.update(key, { set: { dropToken: S("u") } }, mark)).toBe(false);
    expect(await store.get(key)).toMatchObject({ state: S("DROPPING"), dropToken: S("t") });
    // Conditions on an absent item.
    const absent = { pk: S("p"), sk: S("zz") };
    expect(await store.update(absent, { set: { a: N(1) } }, attributeExists("pk"))).toBe(false);
    expect(await store.delete(absent, eq("state", S("ACTIVE")))).toBe(false);
    expect(await store.get(absent)).toBeUndefined();
  });

  it("creates a missing item on an unconditional update, and SETs and REMOVEs", async () => {
    const { store } = await catalogTable();
    const key = { pk: S("p"), sk: S("new") };
    expect(await store.update(key, { set: { a: S("1"), b: N(2) } })).toBe(true);
    expect(await store.get(key)).toEqual({ ...key, a: S("1"), b: N(2) });
    expect(await store.update(key, { set: { a: S("3") }, remove: ["b", "missing"] })).toBe(true);
    expect(await store.get(key)).toEqual({ ...key, a: S("3") });
  });

  it("ADDs to and DELETEs from string sets, dropping a set left empty", async () => {
    const { store } = await catalogTable();
    const key = { pk: S("GRANTS#o"), sk: S("GRANTS") };
    await store.update(key, { add: { "p:a": { SS: ["SELECT", "MODIFY"] }, "p:b": { SS: ["X"] } } });
    await store.update(key, { add: { "p:a": { SS: ["SELECT", "USE"] } } });
    const sets = async () => {
      const item = (await store.get(key)) ?? {};
      return Object.fromEntries(
        Object.entries(item)
          .filter(([k]) => k.startsWith("p:"))
          .map(([k, v]) => [k, [...(v.SS ?? [])].sort()]),
      );
    };
    expect(await sets()).toEqual({ "p:a": ["MODIFY", "SELECT", "USE"], "p:b": ["X"] });
    await store.update(key, { delete: { "p:a": { SS: ["SELECT"] }, "p:b": { SS: ["X"] } } });
    expect(await sets()).toEqual({ "p:a": ["MODIFY", "USE"] });
    await store.update(key, { delete: { "p:a": { SS: ["MODIFY", "USE"] }, "p:c": { SS: ["Y"] } } });
    expect(await store.get(key)).toEqual(key);
  });

  it("rejects what DynamoDB rejects, writing nothing", async () => {
    const { store, itemCount } = await catalogTable();
    const key = { pk: S("p"), sk: S("a") };
    await rejection(store.put({ pk: S("p") }));
    await rejection(store.put({ pk: S("p"), sk: N(1) }));
    await rejection(store.put({ pk: S(""), sk: S("a") }));
    await rejection(store.get({ pk: S("p"), sk: S("a"), extra: S("x") }));
    await rejection(store.update(key, { set: { pk: S("q") } }));
    await rejection(store.update(key, { set: { a: S("1") }, remove: ["a"] }));
    await rejection(store.update(key, { add: { s: { SS: [] } } }));
    await rejection(store.put({ ...key, big: S("x".repeat(401 * 1024)) }));
    await store.put({ ...key, a: S("text") });
    await rejection(store.update(key, { add: { a: { SS: ["x"] } } }));
    expect(await store.get(key)).toEqual({ ...key, a: S("text") });
    expect(await itemCount()).toBe(1);
  });

  it("queries a partition in sort-key order, either way, with key bounds", async () => {
    const { store } = await commitTable();
    for (const v of [5, 0, 12, 3, 100, 7]) {
      await store.put({ tableId: S("t"), version: N(v), x: S(`v${v}`) });
    }
    await store.put({ tableId: S("other"), version: N(1) });
    const versions = (items: Item[]) => items.map((i) => Number(i.version?.N));
    expect(versions(await queryAll(store, { partition: S("t") }))).toEqual([0, 3, 5, 7, 12, 100]);
    expect(versions(await queryAll(store, { partition: S("t"), descending: true }))).toEqual([
      100, 12, 7, 5, 3, 0,
    ]);
    expect(
      versions(await queryAll(store, { partition: S("t"), sortKey: { op: ">=", value: N(7) } })),
    ).toEqual([7, 12, 100]);
    expect(
      versions(
        await queryAll(store, {
          partition: S("t"),
          sortKey: { op: "between", low: N(3), high: N(12) },
          descending: true,
        }),
      ),
    ).toEqual([12, 7, 5, 3]);
    expect(await queryAll(store, { partition: S("none") })).toEqual([]);
    await rejection(
      store.query({ partition: S("t"), sortKey: { op: "between", low: N(5), high: N(4) } }),
    );
  });

  it("orders string keys by their UTF-8 bytes", async () => {
    const { store } = await catalogTable();
    // JavaScript's order (UTF-16 units) puts U+1F600 (0xD83D 0xDE00) before U+FF5E; UTF-8 and
    // DynamoDB put it after (F0 9F 98 80 > EF BD 9E).
    const names = ["b", "a", "B", "ü", "\uff5e", "\u{1f600}", "a b", "ab"];
    for (const n of names) await store.put({ pk: S("p"), sk: S(n) });
    const order = (await queryAll(store, { partition: S("p") })).map((i) => i.sk?.S);
    expect(order).toEqual(
      [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))),
    );
    expect(order.indexOf("\uff5e")).toBeLessThan(order.indexOf("\u{1f600}"));
  });

  it("pages as DynamoDB does: the limit counts items before the filter", async () => {
    const { store } = await catalogTable();
    const states = ["ACTIVE", "CREATING", "CREATING", "DROPPING"].concat(Array(4).fill("ACTIVE"));
    for (const [i, state] of states.entries()) {
      await store.put({ pk: S("p"), sk: S(`t${i}`), state: S(state) });
    }
    const pages: string[][] = [];
    let startKey: Item | undefined;
    do {
      const page = await store.query({
        partition: S("p"),
        filter: eq("state", S("ACTIVE")),
        limit: 2,
        startKey,
      });
      pages.push(page.items.map((i) => i.sk?.S ?? ""));
      startKey = page.lastKey;
    } while (startKey !== undefined);
    // A page may be empty, and a page stopped by the limit carries lastKey even when nothing
    // follows it: 8 items, 5 pages.
    expect(pages).toEqual([["t0"], [], ["t4", "t5"], ["t6", "t7"], []]);
    const exact = await store.query({ partition: S("p"), limit: 8 });
    expect(exact.items).toHaveLength(8);
    expect(exact.lastKey).toEqual({ pk: S("p"), sk: S("t7") });
    const after = await store.query({ partition: S("p"), startKey: exact.lastKey });
    expect(after).toEqual({ items: [] });
    // A start key need not name an existing item; descending pages walk downwards.
    const down = await store.query({
      partition: S("p"),
      descending: true,
      limit: 2,
      startKey: { pk: S("p"), sk: S("t45") },
    });
    expect(down.items.map((i) => i.sk?.S)).toEqual(["t4", "t3"]);
    expect(down.lastKey).toEqual({ pk: S("p"), sk: S("t3") });
    await rejection(store.query({ partition: S("p"), startKey: { pk: S("q"), sk: S("t1") } }));
  });

  it("keeps a table without a sort key (the idempotency table)", async () => {
    const { store } = await backend.table("kv-idem", IDEMPOTENCY_TABLE_KEYS);
    const key = { key: S("k") };
    const claim = or(attributeNotExists("key"), lt("expiresAt", N(100)));
    expect(await store.put({ ...key, expiresAt: N(150) }, claim)).toBe(true);
    expect(await store.put({ ...key, expiresAt: N(160) }, claim)).toBe(false);
    expect(
      await store.put(
        { ...key, expiresAt: N(50) },
        or(attributeNotExists("key"), lt("expiresAt", N(151))),
      ),
    ).toBe(true);
    expect(await store.get(key)).toEqual({ ...key, expiresAt: N(50) });
    await rejection(store.get({ key: S("k"), sk: S("x") }));
  });

  it("lets exactly one of many concurrent conditional puts win", async () => {
    const { store } = await commitTable();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.put(
          { tableId: S("t"), version: N(1), txn: S(`w${i}`) },
          attributeNotExists("tableId"),
        ),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await store.get({ tableId: S("t"), version: N(1) }))?.txn).toEqual(S(`w${winner}`));
  });

  it("GrantStore: grants, revokes, never creates an item by revoking, forgets", async () => {
    const { store, itemCount } = await catalogTable();
    const grants = new GrantStore(store);
    await grants.update("obj", [{ principal: "alice", add: [], remove: ["SELECT"] }]);
    expect(await itemCount()).toBe(0);
    await grants.update("obj", [
      { principal: "alice", add: ["SELECT", "MODIFY"], remove: [] },
      { principal: "bob", add: ["SELECT"], remove: [] },
    ]);
    await grants.update("obj", [
      { principal: "alice", add: ["USE SCHEMA"], remove: ["MODIFY"] },
      { principal: "bob", add: [], remove: ["SELECT"] },
    ]);
    const on = await grants.grantsOn("obj");
    expect([...on.keys()]).toEqual(["alice"]);
    expect([...(on.get("alice") ?? [])].sort()).toEqual(["SELECT", "USE SCHEMA"]);
    await grants.removeAll("obj");
    expect((await grants.grantsOn("obj")).size).toBe(0);
    expect(await itemCount()).toBe(0);
  });
});
