/**
 * Every SQL statement and typed read runs within a time budget (lib/deadline.ts): past it, the
 * statement answers 408 QUERY_EXECUTION_TIMEOUT_EXCEEDED and changes nothing. Time is an injected
 * clock that the object store advances as work happens (reading or writing a data file), so
 * nothing here sleeps or depends on how fast the machine is.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import type { SiltContext } from "../lib/context.ts";
import { budgetSeconds, Deadline, LOCAL_BUDGET, statementBudget } from "../lib/deadline.ts";
import { SiltError } from "../lib/errors.ts";
import { silentLogger } from "../lib/logger.ts";
import { buildContext } from "../lib/runtime/context-factory.ts";
import { sortIndices } from "../lib/sql/sort.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import type { ObjectStore } from "../lib/storage/object-store.ts";
import { hookedStore } from "./helpers/store-hooks.ts";

/** The injected clock, and what each data-file read and write costs on it. */
const time = { now: 1_800_000_000_000, readMs: 0, writeMs: 0 };

function timedStore(store: ObjectStore): ObjectStore {
  const isData = (key: string) => key.endsWith(".parquet");
  return hookedStore(
    store,
    async (k) => {
      if (isData(k)) time.now += time.writeMs;
    },
    (k) => {
      if (isData(k)) time.now += time.readMs;
    },
  );
}

let dir: string;
let ctx: SiltContext;
let app: ReturnType<typeof createApp>;

/** A response; its body is inspected field by field. */
// biome-ignore lint/suspicious/noExplicitAny: test responses are inspected field by field.
type Answer = { status: number; body: any };

async function call(method: string, url: string, body?: unknown, on = app): Promise<Answer> {
  const res = await on.request(`http://silt.test${url}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const sql = (statement: string, conf?: Record<string, string>) =>
  call("POST", "/api/v1/sql", { statement, conf });

/** Version and rows as they stand, read with free I/O. */
async function state() {
  const cost = { ...time };
  time.readMs = 0;
  const rows = await sql("SELECT id, qty FROM shop.sales.orders ORDER BY id");
  const history = await call("GET", "/api/v1/tables/shop.sales.orders/history?limit=1");
  Object.assign(time, { readMs: cost.readMs, writeMs: cost.writeMs });
  return { version: history.body.rows[0][0] as number, rows: rows.body.rows };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "silt-budget-"));
  ctx = await buildContext({
    store: timedStore(new LocalObjectStore(dir)),
    storageRootUri: pathToFileURL(dir).href,
    memory: true,
    logger: silentLogger,
    clock: () => time.now,
  });
  app = createApp(ctx);
  const setup = [
    "CREATE CATALOG shop",
    "CREATE SCHEMA shop.sales",
    "CREATE TABLE shop.sales.orders (id INT, qty INT) USING DELTA",
    // Five appends, five data files: a full read costs five reads.
    ...[1, 2, 3, 4, 5].map((i) => `INSERT INTO shop.sales.orders VALUES (${i}, ${i * 10})`),
  ];
  for (const statement of setup) {
    const res = await sql(statement);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));
beforeEach(() => {
  time.readMs = 0;
  time.writeMs = 0;
});

const expectTimedOut = (
  res: { status: number; body: Record<string, string> },
  seconds: number,
  setting: string,
) => {
  expect(res.status, JSON.stringify(res.body)).toBe(408);
  expect(res.body.error_class).toBe("QUERY_EXECUTION_TIMEOUT_EXCEEDED");
  expect(res.body.sqlstate).toBe("57KD0");
  expect(res.body.message).toContain(`time budget of ${seconds} s`);
  expect(res.body.message).toContain(setting);
};

describe("a query past its budget", () => {
  it("stops with QUERY_EXECUTION_TIMEOUT_EXCEEDED at the default budget, naming the conf", async () => {
    time.readMs = 10_000;
    const res = await sql("SELECT * FROM shop.sales.orders");
    expectTimedOut(res, LOCAL_BUDGET.defaultSeconds, "STATEMENT_TIMEOUT");
  });

  it("stops an aggregation between batches", async () => {
    time.readMs = 10_000;
    const res = await sql("SELECT sum(qty) FROM shop.sales.orders");
    expectTimedOut(res, LOCAL_BUDGET.defaultSeconds, "STATEMENT_TIMEOUT");
  });

  it("runs to the end within a budget the request sets", async () => {
    time.readMs = 10_000;
    const res = await sql("SELECT sum(qty) FROM shop.sales.orders", { STATEMENT_TIMEOUT: "60" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.rows).toEqual([[150]]);
  });

  it("stops sooner under a smaller budget the request sets", async () => {
    time.readMs = 10_000;
    const res = await sql("SELECT * FROM shop.sales.orders", { STATEMENT_TIMEOUT: "5" });
    expectTimedOut(res, 5, "STATEMENT_TIMEOUT");
  });
});

describe("a typed read past its budget", () => {
  it("stops at the default budget, naming the field", async () => {
    time.readMs = 10_000;
    const res = await call("GET", "/api/v1/tables/shop.sales.orders/rows");
    expectTimedOut(res, LOCAL_BUDGET.defaultSeconds, "statement_timeout");
  });

  it("runs to the end within the budget the request sets (query string or body)", async () => {
    time.readMs = 10_000;
    const get = await call("GET", "/api/v1/tables/shop.sales.orders/rows?statement_timeout=25");
    expectTimedOut(get, 25, "statement_timeout");
    time.readMs = 4_000;
    const post = await call("POST", "/api/v1/tables/shop.sales.orders/rows", {
      statement_timeout: 21,
    });
    expect(post.status, JSON.stringify(post.body)).toBe(200);
    expect(post.body.rows).toHaveLength(5);
  });
});

describe("a streamed read that passes its budget after its first rows", () => {
  /** The body up to where it broke off, and the error it broke off with. */
  async function brokenBody(res: Response) {
    const reader = res.body!.getReader();
    let text = "";
    const decoder = new TextDecoder();
    for (;;) {
      try {
        const { done, value } = await reader.read();
        if (done) return { text, error: undefined };
        text += decoder.decode(value);
      } catch (error) {
        return { text, error };
      }
    }
  }
  // Four files are read before the first rows (30 s budget: 28 s), the fifth after them.
  const slowRead = (format: string) => {
    time.readMs = 7_000;
    return app.request(
      `http://silt.test/api/v1/tables/shop.sales.orders/rows?statement_timeout=30${format}`,
    );
  };
  const timedOut = expect.objectContaining({ error_class: "QUERY_EXECUTION_TIMEOUT_EXCEEDED" });

  it("JSON: the rows close with the error, then the body breaks off", async () => {
    const res = await slowRead("");
    expect(res.status).toBe(200);
    const { text, error } = await brokenBody(res);
    expect(error).toBeDefined();
    const answer = JSON.parse(text);
    expect(answer.rows).toHaveLength(4);
    expect(answer.error).toEqual(timedOut);
  });

  it("JSON lines: an error line ends the rows, then the body breaks off", async () => {
    const res = await slowRead("&format=jsonl");
    expect(res.status).toBe(200);
    const { text, error } = await brokenBody(res);
    expect(error).toBeDefined();
    const lines = text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    expect(lines.at(-1)).toEqual(timedOut);
  });
});

describe("a write past its budget commits nothing", () => {
  it("UPDATE whose reads spend the budget", async () => {
    const before = await state();
    time.readMs = 10_000;
    const res = await sql("UPDATE shop.sales.orders SET qty = qty + 1");
    expectTimedOut(res, LOCAL_BUDGET.defaultSeconds, "STATEMENT_TIMEOUT");
    expect(await state()).toEqual(before);
  });

  it("UPDATE whose file writes spend the budget after its reads", async () => {
    const before = await state();
    time.writeMs = 30_000;
    const res = await sql("UPDATE shop.sales.orders SET qty = qty + 1 WHERE id = 3");
    expectTimedOut(res, LOCAL_BUDGET.defaultSeconds, "STATEMENT_TIMEOUT");
    expect(await state()).toEqual(before);
  });

  it("INSERT whose file write spends the budget", async () => {
    const before = await state();
    time.writeMs = 26_000;
    const res = await sql("INSERT INTO shop.sales.orders VALUES (6, 60)");
    expectTimedOut(res, LOCAL_BUDGET.defaultSeconds, "STATEMENT_TIMEOUT");
    expect(await state()).toEqual(before);
  });

  it("commits when the work fits the budget", async () => {
    const before = await state();
    time.writeMs = 20_000;
    const res = await sql("UPDATE shop.sales.orders SET qty = qty + 1 WHERE id = 3");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const after = await state();
    expect(after.version).toBe(before.version + 1);
    expect(after.rows[2]).toEqual([3, 31]);
  });
});

describe("OPTIMIZE within its budget", () => {
  it("commits the bins it finished in half the statement's budget, complete false, and the rest when run again", async () => {
    const table = "shop.sales.parts";
    for (const statement of [
      `CREATE TABLE ${table} (id INT, part INT) USING DELTA PARTITIONED BY (part)`,
      // Three partitions of two files: three bins of two reads each.
      ...[1, 2].flatMap((i) =>
        [1, 2, 3].map((p) => `INSERT INTO ${table} VALUES (${i * 10 + p}, ${p})`),
      ),
    ]) {
      expect((await sql(statement)).status).toBe(200);
    }
    const files = async () =>
      (await sql(`DESCRIBE DETAIL ${table}`)).body.rows[0][
        (await sql(`DESCRIBE DETAIL ${table}`)).body.columns.findIndex(
          (c: { name: string }) => c.name === "numFiles",
        )
      ];
    expect(await files()).toBe(6);
    // Each bin reads for 10 s: two bins fit in half the 25 s default, the third does not start.
    time.readMs = 5_000;
    const first = await sql(`OPTIMIZE ${table}`);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ committed: true, complete: false });
    expect(first.body.rows[0][1]).toMatchObject({ numFilesRemoved: 4, numFilesAdded: 2 });
    time.readMs = 0;
    expect(await files()).toBe(4);
    const second = await sql(`OPTIMIZE ${table}`);
    expect(second.body).toMatchObject({ committed: true, complete: true });
    expect(await files()).toBe(3);
    const rows = await sql(`SELECT id FROM ${table} ORDER BY id`);
    expect(rows.body.rows.flat()).toEqual([11, 12, 13, 21, 22, 23]);
  });
});

describe("the budget a request asks for", () => {
  it.each([
    ["0", "0"],
    ["-5", "-5"],
    ["2.5", "2.5"],
    ["soon", "soon"],
    ["3601", "3601"],
  ])("refuses STATEMENT_TIMEOUT=%s and runs nothing", async (value, shown) => {
    const before = await state();
    const res = await sql("INSERT INTO shop.sales.orders VALUES (7, 70)", {
      STATEMENT_TIMEOUT: value,
    });
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("INVALID_STATEMENT_TIMEOUT");
    expect(res.body.message).toContain(`'${shown}'`);
    expect(res.body.message).toContain(`from 1 to ${LOCAL_BUDGET.maxSeconds}`);
    expect(await state()).toEqual(before);
  });

  it("refuses a /rows statement_timeout that is not whole seconds, as its schema does", async () => {
    const res = await call("POST", "/api/v1/tables/shop.sales.orders/rows", {
      statement_timeout: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("INVALID_REQUEST");
    expect(res.body.message).toContain("statement_timeout");
  });

  it("refuses a /rows statement_timeout past the most the server allows", async () => {
    const res = await call("GET", "/api/v1/tables/shop.sales.orders/rows?statement_timeout=3601");
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("INVALID_STATEMENT_TIMEOUT");
    expect(res.body.message).toContain(`from 1 to ${LOCAL_BUDGET.maxSeconds}`);
  });

  it("is the default when absent; deployed, it can only be lowered below the function's timeout", () => {
    const deployed = statementBudget(29_000);
    expect(deployed).toEqual({ defaultSeconds: 25, maxSeconds: 25 });
    expect(budgetSeconds(undefined, deployed, "x")).toBe(25);
    expect(budgetSeconds(undefined, LOCAL_BUDGET, "x")).toBe(25);
    expect(budgetSeconds(" 10 ", deployed, "x")).toBe(10);
    expect(() => budgetSeconds("26", deployed, "x")).toThrow(SiltError);
    expect(statementBudget(undefined)).toBe(LOCAL_BUDGET);
  });

  it("deployed, comes from the function's timeout (requestTimeoutMs), with headroom below it", async () => {
    const deployed = createApp({ ...ctx, requestTimeoutMs: 14_000 });
    const asked = await call(
      "POST",
      "/api/v1/sql",
      { statement: "SELECT 1", conf: { STATEMENT_TIMEOUT: "11" } },
      deployed,
    );
    expect(asked.status).toBe(400);
    expect(asked.body.message).toContain("from 1 to 10");
    time.readMs = 4_000;
    const read = await call("GET", "/api/v1/tables/shop.sales.orders/rows", undefined, deployed);
    expectTimedOut(read, 10, "statement_timeout");
  });
});

describe("sorting", () => {
  it("checks the deadline while it compares", () => {
    let now = 0;
    const deadline = new Deadline(() => (now += 1000), 1, LOCAL_BUDGET, "x");
    const n = 50_000;
    const keys = [
      {
        values: Array.from({ length: n }, (_, i) => (i * 7919) % n),
        type: "integer" as const,
        descending: false,
        nullsFirst: true,
      },
    ];
    const sorted = Array.from(sortIndices(keys, n), (i) => keys[0].values[i]);
    expect(sorted.slice(0, 3)).toEqual([0, 1, 2]);
    expect(() => sortIndices(keys, n, deadline)).toThrow(/time budget of 1 s/);
  });
});
