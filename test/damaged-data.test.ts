/**
 * Damaged data files: a Parquet file of a table with a byte flipped (in a page header, or in page
 * data where parquet-rs panics) or cut short. Reads (/rows, SELECT of every column and of one)
 * and a DML that must read the file answer 500 FAILED_READ_FILE.NO_HINT naming the file, the
 * same again on a retry (no poisoned decoder), commit nothing, and leave the process serving
 * other requests: in the app the local server runs and in the Lambda handler.
 */
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readParquet, readParquetFooter, writeParquet } from "../lib/data/parquet.ts";
import { isTrap, onParquetWasm } from "../lib/data/parquet-wasm.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { contextFromEnv, httpHandler } from "../lib/runtime/lambda.ts";
import {
  type HttpHandler,
  httpEvent,
  type LambdaEnv,
  startLambdaEnv,
} from "./helpers/lambda-env.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { sqlClient } from "./helpers/sql-client.ts";

/** A copy of `bytes` with byte `at` inverted. */
const flipped = (bytes: Uint8Array, at: number) => {
  const copy = bytes.slice();
  copy[at] ^= 0xff;
  return copy;
};

/** Where the first column chunk's first page (its header) starts. */
async function firstPageHeader(bytes: Uint8Array): Promise<number> {
  const chunk = (await readParquetFooter(bytes)).rowGroups[0]!.columns[0]!;
  return chunk.dictionaryPageOffset ?? chunk.dataPageOffset;
}

/**
 * A byte in the data of the last column chunk whose flip makes parquet-rs panic (a wasm trap),
 * found by trying each: which one depends on the encoder's output, not on anything a test
 * could name in advance.
 */
async function trappingByte(bytes: Uint8Array): Promise<number> {
  const columns = (await readParquetFooter(bytes)).rowGroups[0]!.columns;
  const chunk = columns[columns.length - 1]!;
  const start = chunk.dictionaryPageOffset ?? chunk.dataPageOffset;
  for (let at = start; at < start + chunk.compressedSize; at++) {
    const copy = flipped(bytes, at);
    try {
      onParquetWasm((wasm) => wasm.readParquet(copy).free());
    } catch (e) {
      if (isTrap(e)) return at;
    }
  }
  throw new Error("no byte of the chunk makes parquet-rs panic");
}

/** Each damage, and the column it leaves undecodable (a truncated file: every column). */
const damages: [string, string, (bytes: Uint8Array) => Promise<Uint8Array>][] = [
  ["a byte flipped in a page header", "id", async (b) => flipped(b, await firstPageHeader(b))],
  [
    "a byte flipped in page data that parquet-rs panics on",
    "name",
    async (b) => flipped(b, await trappingByte(b)),
  ],
  ["a truncated file", "id", async (b) => b.slice(0, Math.floor(b.length / 2))],
];

const ROWS = Array.from({ length: 500 }, (_, i) => [i, `name-${i % 37}`]);
const values = ROWS.map(([id, name]) => `(${id}, '${name}')`).join(", ");

describe("readParquet on a damaged file", () => {
  const table = arrow.tableFromArrays({
    id: Int32Array.from(ROWS, (r) => r[0] as number),
    name: ROWS.map((r) => r[1] as string),
  });
  const good = writeParquet(table);

  it.each(damages)(
    "rejects %s as DELTA_PARQUET_CORRUPT and keeps decoding",
    async (_, column, damage) => {
      const bad = await damage(good);
      for (const columns of [undefined, [column], ["name", "id"]]) {
        for (let attempt = 0; attempt < 2; attempt++) {
          const err = await readParquet(bad, { columns }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect((err as { errorClass?: string })?.errorClass, String(err)).toBe(
            "DELTA_PARQUET_CORRUPT",
          );
        }
      }
      expect((await readParquet(good)).getChild("name")!.toArray()).toEqual(
        table.getChild("name")!.toArray(),
      );
    },
  );

  it("decodes only the columns asked for, so a damaged other column does not matter", async () => {
    const bad = flipped(good, await trappingByte(good)); // a byte of `name`
    const ids = await readParquet(bad, { columns: ["id"] });
    expect(ids.schema.fields.map((f) => f.name)).toEqual(["id"]);
    expect(Array.from(ids.getChild("id")!.toArray())).toEqual(ROWS.map((r) => r[0]));
  });
});

describe("a table with a damaged data file, through the app", () => {
  let silt: SiltHarness;
  const { sql, ok, history, rows } = sqlClient(() => silt, { catalog: "d", schema: "s" });

  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await ok("CREATE CATALOG d");
    await ok("CREATE SCHEMA d.s");
    await ok("CREATE TABLE other (id INT) USING DELTA");
    await ok("INSERT INTO other VALUES (7)");
  });
  afterAll(async () => {
    await silt?.close();
  });

  // A table per damage, so one case's outcome cannot leak into the next.
  it.each(damages.map(([what, , damage], i) => [what, `t${i}`, damage] as const))(
    "answers FAILED_READ_FILE.NO_HINT for %s, commits nothing and serves on",
    async (_, t, damage) => {
      await ok(`CREATE TABLE ${t} (id INT, name STRING) USING DELTA`);
      await ok(`INSERT INTO ${t} VALUES ${values}`);
      const { snapshot, entry } = await openTable(silt.ctx, `d.s.${t}`);
      expect(snapshot.files).toHaveLength(1);
      const path = snapshot.files[0]!.path;
      const key = `${entry.location}${path}`;
      const original = await silt.ctx.store.get(key);
      const versionBefore = (await history(t))[0]!.version;
      const bad = await damage(original);
      await silt.ctx.store.put(key, bad);
      try {
        const requests = [
          () => silt.call("GET", `/api/v1/tables/d.s.${t}/rows`),
          () => sql(`SELECT * FROM ${t}`),
          () => sql(`SELECT name FROM ${t} WHERE id > 3`),
          // Both read the two columns: the WHERE reads id, and the rewritten row carries name.
          () => sql(`UPDATE ${t} SET id = id + 1000 WHERE id = 1`),
          () => sql(`DELETE FROM ${t} WHERE id = 2 OR name = 'name-3'`),
        ];
        for (const request of requests) {
          const first = await request();
          expect(first.status, JSON.stringify(first.body)).toBe(500);
          expect(first.body.error_class).toBe("FAILED_READ_FILE.NO_HINT");
          expect(first.body.sqlstate).toBe("KD001");
          expect(first.body.message).toContain(`Encountered error while reading file ${path}.`);
          // A retry meets the same file, not a decoder left broken by the first attempt.
          const again = await request();
          expect([again.status, again.body]).toEqual([first.status, first.body]);
          expect((await silt.call("GET", "/api/v1/health")).status).toBe(200);
          expect(await rows("other")).toEqual([[7]]);
        }
        expect((await history(t))[0]!.version).toBe(versionBefore);
        expect(await silt.ctx.store.get(key)).toEqual(bad);
      } finally {
        await silt.ctx.store.put(key, original);
      }
      expect(await rows(t)).toEqual(ROWS);
    },
  );
});

describe("a table with a damaged data file, through the Lambda handler", () => {
  let env: LambdaEnv;
  let sqlFn: HttpHandler;
  let rowsFn: HttpHandler;
  const call = async (fn: HttpHandler, method: string, url: string, body?: unknown) => {
    const res = await fn(httpEvent(method, url, body));
    return { status: res.statusCode, body: JSON.parse(res.body) };
  };
  const sql = (statement: string) => call(sqlFn, "POST", "/api/v1/sql", { statement });

  beforeAll(async () => {
    env = await startLambdaEnv();
    sqlFn = httpHandler("sql") as unknown as HttpHandler;
    rowsFn = httpHandler("rows") as unknown as HttpHandler;
    for (const statement of [
      "CREATE CATALOG l",
      "CREATE SCHEMA l.s",
      "CREATE TABLE l.s.t (id INT, name STRING) USING DELTA",
      `INSERT INTO l.s.t VALUES ${values}`,
      "CREATE TABLE l.s.other (id INT) USING DELTA",
      "INSERT INTO l.s.other VALUES (7)",
    ]) {
      expect((await sql(statement)).status, statement).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    await env?.close();
  });

  it("answers FAILED_READ_FILE.NO_HINT naming the file, the same on a retry, and serves on", async () => {
    const ctx = await contextFromEnv();
    const t = await openTable(ctx, "l.s.t");
    const path = t.snapshot.files[0]!.path;
    const key = `${t.entry.location}${path}`;
    const original = await ctx.store.get(key);
    await ctx.store.put(key, flipped(original, await trappingByte(original)));
    try {
      for (const request of [
        () => call(rowsFn, "GET", "/api/v1/tables/l.s.t/rows"),
        () => sql("SELECT name FROM l.s.t"),
        () => sql("UPDATE l.s.t SET id = id + 1000 WHERE id = 1"),
      ]) {
        for (let attempt = 0; attempt < 2; attempt++) {
          const res = await request();
          expect(res.status, JSON.stringify(res.body)).toBe(500);
          expect(res.body.error_class).toBe("FAILED_READ_FILE.NO_HINT");
          expect(res.body.message).toContain(path);
        }
        expect((await call(sqlFn, "GET", "/api/v1/health")).status).toBe(200);
        expect((await sql("SELECT id FROM l.s.other")).body.rows).toEqual([[7]]);
      }
      expect((await openTable(ctx, "l.s.t")).snapshot.version).toBe(t.snapshot.version);
    } finally {
      await ctx.store.put(key, original);
    }
    expect((await sql("SELECT count(*) FROM l.s.t")).body.rows).toEqual([[ROWS.length]]);
  });
});
