/**
 * MERGE INTO end to end through POST /api/v1/sql and POST /api/v1/tables/{name}/merge: sources
 * of every kind, the hash join's NULL semantics, clause order, NOT MATCHED BY SOURCE, empty
 * sources, the multiple-match rule and its exemptions, schema evolution on and off, file
 * pruning by the source's keys, the history row, and every error path leaving the table's
 * version and rows unchanged.
 */
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { arrowToRows } from "../lib/data/arrow-to-json.ts";
import { writeParquet } from "../lib/data/parquet.ts";
import { commitFileName, parseActions } from "../lib/delta/actions.ts";
import { parseSchema } from "../lib/delta/schema.ts";
import { loadSnapshot } from "../lib/delta/snapshot.ts";
import { readSnapshotRows } from "../lib/ops/read-files.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

type Result = { columns: { name: string; type: string }[]; rows: unknown[][]; version?: number };

describe("MERGE INTO", () => {
  let silt: SiltHarness;
  const sql = (statement: string, extra: Record<string, unknown> = {}) =>
    silt.call("POST", "/api/v1/sql", { statement, ...extra });
  const ok = async (statement: string, extra: Record<string, unknown> = {}): Promise<Result> => {
    const res = await sql(statement, extra);
    expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
    return res.body as Result;
  };
  const merge = (table: string, body: Record<string, unknown>) =>
    silt.call("POST", `/api/v1/tables/${table}/merge`, body);
  /** MERGE of `source` into `table` on `id`: matched rows updated, the others inserted. */
  const upsertById = (table: string, source: unknown) =>
    merge(table, {
      source,
      on: "target.id = source.id",
      whenMatched: [{ updateAll: true }],
      whenNotMatched: [{ insertAll: true }],
    });
  const rows = async (query: string) => (await ok(query)).rows;
  const state = async (table: string) => {
    const res = await silt.call("GET", `/api/v1/tables/${table}/rows`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return {
      version: res.body.version as number,
      columns: res.body.columns,
      rows: (res.body.rows as unknown[][]).map((r) => JSON.stringify(r)).sort(),
    };
  };
  const failsUnchanged = async (
    table: string,
    errorClass: string,
    request: () => Promise<{ status: number; body: { error_class?: string } }>,
  ) => {
    const before = await state(table);
    const res = await request();
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    expect(res.body.error_class, JSON.stringify(res.body)).toBe(errorClass);
    expect(await state(table)).toEqual(before);
    return res.body as { error_class: string; message: string; sqlstate?: string };
  };
  const lastHistory = async (table: string) => {
    const h = await ok(`DESCRIBE HISTORY ${table} LIMIT 1`);
    const col = (n: string) => h.columns.findIndex((c) => c.name === n);
    const r = h.rows[0];
    return {
      version: r[col("version")] as number,
      operation: r[col("operation")] as string,
      parameters: r[col("operationParameters")] as Record<string, string>,
      metrics: r[col("operationMetrics")] as Record<string, string>,
    };
  };
  /** A table `m.s.<name>` (id INT, v STRING) holding `values`, one insert per group (one file each). */
  const table = async (name: string, ...groups: string[]) => {
    await ok(`CREATE TABLE m.s.${name} (id INT, v STRING) USING DELTA`);
    for (const g of groups) await ok(`INSERT INTO m.s.${name} VALUES ${g}`);
    return `m.s.${name}`;
  };
  const parquetReads = async (fn: () => Promise<unknown>) => {
    const store = silt.ctx.store;
    const get = store.get.bind(store);
    const keys: string[] = [];
    store.get = async (key: string) => {
      if (key.endsWith(".parquet") && key.startsWith("tables/")) keys.push(key);
      return get(key);
    };
    try {
      await fn();
    } finally {
      store.get = get;
    }
    return keys;
  };

  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await ok("CREATE CATALOG m");
    await ok("CREATE SCHEMA m.s");
  });
  afterAll(() => silt.close());

  describe("sources", () => {
    it("a table at an earlier version, a subquery, VALUES", async () => {
      const t = await table("src_t", "(1, 'a'), (2, 'b')");
      await ok(`UPDATE ${t} SET v = 'changed'`);
      // The table merged with its own version 1: every row goes back to its old value.
      const res = await ok(
        `MERGE INTO ${t} USING ${t} VERSION AS OF 1 AS old ON ${t}.id = old.id
         WHEN MATCHED THEN UPDATE SET *`,
      );
      expect(res.rows).toEqual([[2, 2, 0, 0]]);
      expect(await rows(`SELECT * FROM ${t} ORDER BY id`)).toEqual([
        [1, "a"],
        [2, "b"],
      ]);
      await ok(
        `MERGE INTO ${t} x USING (SELECT id + 1 AS id, upper(v) AS v FROM ${t}) y ON x.id = y.id
         WHEN MATCHED THEN UPDATE SET v = y.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (y.id, y.v)`,
      );
      expect(await rows(`SELECT * FROM ${t} ORDER BY id`)).toEqual([
        [1, "a"],
        [2, "A"],
        [3, "B"],
      ]);
      await ok(
        `MERGE INTO ${t} USING (VALUES (3, 'c'), (4, 'd')) AS s(id, v) ON ${t}.id = s.id
         WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *`,
      );
      expect(await rows(`SELECT * FROM ${t} ORDER BY id`)).toEqual([
        [1, "a"],
        [2, "A"],
        [4, "d"],
      ]);
    });

    it("JSON rows, Arrow, a table, and Parquet / CSV / JSON objects under ingest/", async () => {
      const t = await table("src_json", "(1, 'a')");
      const upsert = (source: unknown) => upsertById(t, source);
      let res = await upsert({
        rows: [
          { id: 1, v: "json" },
          { id: 2, v: "json" },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const ipc = arrow.tableToIPC(
        arrow.tableFromArrays({ id: Int32Array.from([2, 3]), v: ["arrow", "arrow"] }),
        "stream",
      );
      res = await upsert({ arrow: Buffer.from(ipc).toString("base64") });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await silt.ctx.store.put(
        "ingest/batch.parquet",
        writeParquet(arrow.tableFromArrays({ id: Int32Array.from([3, 4]), v: ["pq", "pq"] })),
      );
      res = await upsert({ parquet: "ingest/batch.parquet" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await silt.ctx.store.put(
        "ingest/batch.csv",
        new TextEncoder().encode('id,v\n4,"csv, quoted"\n5,csv\n'),
      );
      res = await upsert({ csv: "ingest/batch.csv" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await silt.ctx.store.put(
        "ingest/batch.ndjson",
        new TextEncoder().encode('{"id": 5, "v": "ndjson"}\n{"id": 6, "v": "ndjson"}\n'),
      );
      res = await upsert({ json: "ingest/batch.ndjson" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await rows(`SELECT * FROM ${t} ORDER BY id`)).toEqual([
        [1, "json"],
        [2, "arrow"],
        [3, "pq"],
        [4, "csv, quoted"],
        [5, "ndjson"],
        [6, "ndjson"],
      ]);
      // A table at a version: back to version 2 (after the JSON rows).
      res = await upsert({ table: t, version: 2 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await rows(`SELECT v FROM ${t} WHERE id <= 2 ORDER BY id`)).toEqual([
        ["json"],
        ["json"],
      ]);

      await failsUnchanged(t, "INVALID_REQUEST", () => upsert({ parquet: "tables/x.parquet" }));
      await failsUnchanged(t, "INVALID_REQUEST", () => upsert({ parquet: "ingest/../tables/x" }));
      // An empty segment is as invalid as `..`: a 400 naming the key, not the store's 500.
      for (const source of [
        { parquet: "ingest//x.parquet" },
        { csv: "ingest/a//b.csv" },
        { json: "ingest/batch/" },
      ]) {
        let status = 0;
        const body = await failsUnchanged(t, "INVALID_REQUEST", async () => {
          const res = await upsert(source);
          status = res.status;
          return res;
        });
        expect(status).toBe(400);
        expect(body.message).toContain(JSON.stringify(Object.values(source)[0]));
      }
      await failsUnchanged(t, "PATH_NOT_FOUND", () =>
        upsert({ parquet: "ingest/missing.parquet" }),
      );
      await failsUnchanged(t, "INVALID_REQUEST", () => upsert({ nothing: true }));
    });

    it("CSV objects as Spark reads them: empty and quoted-empty fields NULL, quoted fields kept", async () => {
      const t = await table("src_csv", "(1, 'old')");
      const upsert = (source: unknown) => upsertById(t, source);
      const put = (key: string, text: string) =>
        silt.ctx.store.put(key, new TextEncoder().encode(text));
      // What Spark 4.1 reads from this file with header, multiLine and escape '"' (the options an
      // RFC 4180 file needs) and its default nullValue "".
      await put(
        "ingest/spark.csv",
        'id,v\n1,\n2,""\n3,"a,b"\n4,"x\ny"\n5,"say ""hi"""\n6, \n7,a"b\n',
      );
      let res = await upsert({ csv: "ingest/spark.csv" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await rows(`SELECT * FROM ${t} ORDER BY id`)).toEqual([
        [1, null],
        [2, null],
        [3, "a,b"],
        [4, "x\ny"],
        [5, 'say "hi"'],
        [6, " "],
        [7, 'a"b'],
      ]);
      // Without a header the declared columns name the fields; a short record ends in NULLs.
      await put("ingest/no-header.csv", '8;"p;q"\r\n9\r\n');
      res = await upsert({
        csv: "ingest/no-header.csv",
        header: false,
        delimiter: ";",
        columns: [
          { name: "id", type: "INT" },
          { name: "v", type: "STRING" },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await rows(`SELECT * FROM ${t} WHERE id >= 8 ORDER BY id`)).toEqual([
        [8, "p;q"],
        [9, null],
      ]);
      // Spark would read the rest of the file into the unclosed field; Silt refuses the file.
      await put("ingest/unclosed.csv", 'id,v\n10,"never closed\n11,x\n');
      await failsUnchanged(t, "MALFORMED_RECORD_IN_PARSING", () =>
        upsert({ csv: "ingest/unclosed.csv" }),
      );
    });
  });

  describe("join semantics", () => {
    it("NULL keys never match with =, and match with <=>", async () => {
      const t = await table("nulls", "(1, 'one'), (NULL, 'null target')");
      const src = "(VALUES (1, 'src one'), (CAST(NULL AS INT), 'null source')) AS s(id, v)";
      let res = await ok(
        `MERGE INTO ${t} t USING ${src} ON t.id = s.id
         WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *`,
      );
      expect(res.rows).toEqual([[2, 1, 0, 1]]);
      expect(await rows(`SELECT id, v FROM ${t} ORDER BY v`)).toEqual([
        [null, "null source"],
        [null, "null target"],
        [1, "src one"],
      ]);
      await ok(`DELETE FROM ${t} WHERE v = 'null source'`);
      res = await ok(
        `MERGE INTO ${t} t USING ${src} ON t.id <=> s.id
         WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *`,
      );
      expect(res.rows).toEqual([[2, 2, 0, 0]]);
      expect(await rows(`SELECT id, v FROM ${t} ORDER BY v`)).toEqual([
        [null, "null source"],
        [1, "src one"],
      ]);
    });

    it("composite keys, a residual condition, and an ON without equalities", async () => {
      await ok("CREATE TABLE m.s.pairs (a INT, b STRING, n BIGINT) USING DELTA");
      await ok("INSERT INTO m.s.pairs VALUES (1, 'x', 10), (1, 'y', 20), (2, 'x', 30)");
      // Only pairs whose source n is larger update.
      await ok(
        `MERGE INTO m.s.pairs t USING (VALUES (1, 'x', 5), (1, 'y', 25), (2, 'y', 1)) AS s(a, b, n)
         ON t.a = s.a AND s.b = t.b AND s.n > t.n
         WHEN MATCHED THEN UPDATE SET n = s.n WHEN NOT MATCHED THEN INSERT *`,
      );
      expect(await rows("SELECT a, b, n FROM m.s.pairs ORDER BY a, b, n")).toEqual([
        [1, "x", 5],
        [1, "x", 10],
        [1, "y", 25],
        [2, "x", 30],
        [2, "y", 1],
      ]);
      // No equality at all: every pair is checked.
      const res = await ok(
        `MERGE INTO m.s.pairs t USING (VALUES (20)) AS s(limit_n) ON t.n > s.limit_n
         WHEN MATCHED THEN DELETE`,
      );
      expect(res.rows).toEqual([[2, 0, 2, 0]]);
      expect(await rows("SELECT n FROM m.s.pairs ORDER BY n")).toEqual([[1], [5], [10]]);
    });

    it("first matching clause wins, per kind, in order", async () => {
      const t = await table("clauses", "(1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')");
      const res = await ok(
        `MERGE INTO ${t} t USING (VALUES (1, 'x'), (2, 'y'), (3, 'z'), (5, 'new'), (6, 'skip')) AS s(id, v)
         ON t.id = s.id
         WHEN MATCHED AND s.v = 'x' THEN DELETE
         WHEN MATCHED AND t.id >= 2 AND t.id <= 2 THEN UPDATE SET v = 'second'
         WHEN MATCHED THEN UPDATE SET v = concat(t.v, s.v)
         WHEN NOT MATCHED AND s.v = 'skip' THEN INSERT (id) VALUES (s.id + 100)
         WHEN NOT MATCHED THEN INSERT *
         WHEN NOT MATCHED BY SOURCE AND t.id = 4 THEN UPDATE SET v = 'orphan'`,
      );
      expect(res.rows).toEqual([[6, 3, 1, 2]]);
      expect(await rows(`SELECT id, v FROM ${t} ORDER BY id`)).toEqual([
        [2, "second"],
        [3, "cz"],
        [4, "orphan"],
        [5, "new"],
        [106, null],
      ]);
      const h = await lastHistory(t);
      expect(h.parameters).toEqual({
        predicate: '["(t.id = s.id)"]',
        matchedPredicates: JSON.stringify([
          { predicate: "(s.v = 'x')", actionType: "delete" },
          { predicate: "((t.id >= 2) AND (t.id <= 2))", actionType: "update" },
          { actionType: "update" },
        ]),
        notMatchedPredicates: JSON.stringify([
          { predicate: "(s.v = 'skip')", actionType: "insert" },
          { actionType: "insert" },
        ]),
        notMatchedBySourcePredicates: JSON.stringify([
          { predicate: "(t.id = 4)", actionType: "update" },
        ]),
      });
      expect(h.metrics).toMatchObject({
        numSourceRows: "5",
        numTargetRowsInserted: "2",
        numTargetRowsUpdated: "3",
        numTargetRowsMatchedUpdated: "2",
        numTargetRowsNotMatchedBySourceUpdated: "1",
        numTargetRowsDeleted: "1",
        numTargetRowsMatchedDeleted: "1",
        numTargetRowsNotMatchedBySourceDeleted: "0",
        numTargetRowsCopied: "0",
        numOutputRows: "5",
        numTargetFilesAdded: "1",
        // Every target row was touched, so the one target file went whole.
        numTargetFilesRemoved: "1",
        numTargetChangeFilesAdded: "0",
        numTargetDeletionVectorsAdded: "0",
        numTargetDeletionVectorsRemoved: "0",
        numTargetDeletionVectorsUpdated: "0",
      });
      expect(Number(h.metrics.numTargetBytesRemoved)).toBeGreaterThan(0);
      expect(Number(h.metrics.numTargetBytesAdded)).toBeGreaterThan(0);
      expect(Object.keys(h.metrics).sort()).toEqual(
        [
          "numSourceRows",
          "numTargetRowsInserted",
          "numTargetRowsUpdated",
          "numTargetRowsMatchedUpdated",
          "numTargetRowsNotMatchedBySourceUpdated",
          "numTargetRowsDeleted",
          "numTargetRowsMatchedDeleted",
          "numTargetRowsNotMatchedBySourceDeleted",
          "numTargetRowsCopied",
          "numTargetBytesAdded",
          "numTargetBytesRemoved",
          "numOutputRows",
          "numTargetFilesAdded",
          "numTargetFilesRemoved",
          "numTargetChangeFilesAdded",
          "executionTimeMs",
          "materializeSourceTimeMs",
          "scanTimeMs",
          "rewriteTimeMs",
          "numTargetDeletionVectorsAdded",
          "numTargetDeletionVectorsRemoved",
          "numTargetDeletionVectorsUpdated",
        ].sort(),
      );
    });

    it("NOT MATCHED BY SOURCE deletes what the source no longer has (reading every file)", async () => {
      const t = await table("sync", "(1, 'a'), (2, 'b'), (6, 'f')", "(3, 'c')", "(4, 'd')");
      let reads: string[] = [];
      reads = await parquetReads(async () => {
        const res = await merge(t, {
          source: {
            rows: [
              { id: 2, v: "B" },
              { id: 5, v: "E" },
            ],
          },
          on: "target.id = source.id",
          whenMatched: [{ updateAll: true }],
          whenNotMatched: [{ insertAll: true }],
          whenNotMatchedBySource: [
            { condition: "target.id = 4", update: { v: "'kept'" } },
            { condition: "target.id < 4", delete: true },
          ],
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body).toMatchObject({
          numTargetRowsUpdated: 2,
          numTargetRowsDeleted: 2,
          numTargetRowsInserted: 1,
        });
      });
      expect(reads).toHaveLength(3);
      expect(await rows(`SELECT id, v FROM ${t} ORDER BY id`)).toEqual([
        [2, "B"],
        [4, "kept"],
        [5, "E"],
        [6, "f"],
      ]);
      const h = await lastHistory(t);
      expect(h.metrics).toMatchObject({
        numTargetRowsNotMatchedBySourceUpdated: "1",
        numTargetRowsNotMatchedBySourceDeleted: "2",
        numTargetRowsMatchedUpdated: "1",
        // The files of ids 3 and 4 lost their only row; the first file keeps id 6 under a
        // deletion vector.
        numTargetFilesRemoved: "2",
        numTargetDeletionVectorsAdded: "1",
      });
    });

    it("an empty source changes nothing, unless NOT MATCHED BY SOURCE says so", async () => {
      const t = await table("empty_src", "(1, 'a'), (2, 'b')");
      const before = await state(t);
      const empty = "(SELECT id, v FROM m.s.empty_src WHERE id < 0) s";
      const res = await ok(
        `MERGE INTO ${t} t USING ${empty} ON t.id = s.id
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`,
      );
      expect(res).toEqual({ ...res, rows: [[0, 0, 0, 0]], version: before.version });
      expect(await state(t)).toEqual(before);
      const wipe = await ok(
        `MERGE INTO ${t} t USING ${empty} ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE`,
      );
      expect(wipe.rows).toEqual([[2, 0, 2, 0]]);
      expect(await rows(`SELECT * FROM ${t}`)).toEqual([]);
    });

    it("reads only the target files the source's keys can match", async () => {
      const t = await table(
        "pruned",
        "(1, 'a'), (2, 'a'), (3, 'a')",
        "(11, 'b'), (12, 'b'), (13, 'b')",
        "(21, 'c'), (22, 'c'), (23, 'c')",
        "(31, 'd'), (32, 'd'), (33, 'd')",
      );
      const reads = await parquetReads(() =>
        ok(
          `MERGE INTO ${t} t USING (VALUES (12, 'x'), (14, 'y')) AS s(id, v) ON t.id = s.id
           WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *`,
        ),
      );
      expect(reads).toHaveLength(1);
      // Many distinct keys prune by their range instead of a list: [21, 139] spans two files.
      const values = ["(21, 'r')", ...Array.from({ length: 100 }, (_, i) => `(${40 + i}, 'n')`)];
      const byRange = await parquetReads(() =>
        ok(
          `MERGE INTO ${t} t USING (VALUES ${values.join(", ")}) AS s(id, v)
           ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v`,
        ),
      );
      expect(byRange).toHaveLength(2);
      // Conditions on the target alone in ON prune too.
      const byTarget = await parquetReads(() =>
        ok(
          `MERGE INTO ${t} t USING (VALUES ('zz')) AS s(v) ON t.id > 30 AND t.v = 'd'
           WHEN MATCHED THEN UPDATE SET v = s.v`,
        ),
      );
      expect(byTarget).toHaveLength(1);
      expect(await rows(`SELECT id, v FROM ${t} WHERE v NOT IN ('a') ORDER BY id`)).toEqual([
        [11, "b"],
        [12, "x"],
        [13, "b"],
        [14, "y"],
        [21, "r"],
        [22, "c"],
        [23, "c"],
        [31, "zz"],
        [32, "zz"],
        [33, "zz"],
      ]);
    });
  });

  describe("multiple matches", () => {
    it("fail, unless the only MATCHED clause is an unconditional DELETE or the merge only inserts", async () => {
      const t = await table("multi", "(1, 'a'), (2, 'b')");
      const dup = "(VALUES (1, 'x'), (1, 'y'), (3, 'z'), (3, 'w')) AS s(id, v)";
      const e = await failsUnchanged(
        t,
        "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE",
        () =>
          sql(`MERGE INTO ${t} t USING ${dup} ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v`),
      );
      expect(e.sqlstate).toBe("21506");
      // A conditional DELETE is not exempt, nor are NOT MATCHED BY SOURCE merges.
      await failsUnchanged(t, "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE", () =>
        sql(`MERGE INTO ${t} t USING ${dup} ON t.id = s.id WHEN MATCHED AND s.v = 'x' THEN DELETE`),
      );
      await failsUnchanged(t, "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE", () =>
        sql(`MERGE INTO ${t} t USING ${dup} ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE`),
      );
      // Insert-only: duplicates are fine, both unmatched source rows go in.
      let res = await ok(
        `MERGE INTO ${t} t USING ${dup} ON t.id = s.id WHEN NOT MATCHED THEN INSERT *`,
      );
      expect(res.rows).toEqual([[2, 0, 0, 2]]);
      // One unconditional DELETE: the row goes once.
      res = await ok(`MERGE INTO ${t} t USING ${dup} ON t.id = s.id WHEN MATCHED THEN DELETE`);
      expect(res.rows).toEqual([[3, 0, 3, 0]]);
      expect(await rows(`SELECT * FROM ${t}`)).toEqual([[2, "b"]]);
    });
  });

  describe("schema evolution", () => {
    // Issue 5 asks for an error naming a source's extra columns when `*` meets them without
    // schema evolution. Delta does not do that: its MERGE resolution expands `*` over the
    // target's columns when autoMerge is off, so extra source columns are ignored (the Delta docs
    // say so too), and only a target column the source lacks fails. Silt follows Delta.
    it("off: extra source columns are ignored by * (as Delta does), named ones fail", async () => {
      const t = await table("evo_off", "(1, 'a')");
      const src = "(VALUES (1, 'A', 'gold'), (2, 'B', 'silver')) AS s(id, v, tier)";
      const before = await state(t);
      await ok(
        `MERGE INTO ${t} t USING ${src} ON t.id = s.id
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`,
      );
      const after = await state(t);
      expect(after.columns).toEqual(before.columns);
      expect(after.rows).toEqual(['[1,"A"]', '[2,"B"]']);
      const e = await failsUnchanged(t, "DELTA_MERGE_UNRESOLVED_EXPRESSION", () =>
        sql(
          `MERGE INTO ${t} t USING ${src} ON t.id = s.id WHEN MATCHED THEN UPDATE SET tier = s.tier`,
        ),
      );
      expect(e.message).toBe("Cannot resolve tier in UPDATE clause given columns t.id, t.v.");
      await failsUnchanged(t, "DELTA_MERGE_UNRESOLVED_EXPRESSION", () =>
        sql(
          `MERGE INTO ${t} t USING ${src} ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, tier) VALUES (s.id, s.tier)`,
        ),
      );
      // A target column the source lacks cannot come from `*`.
      const missing = await failsUnchanged(t, "DELTA_MERGE_UNRESOLVED_EXPRESSION", () =>
        sql(
          `MERGE INTO ${t} t USING (VALUES (1)) AS s(id) ON t.id = s.id WHEN MATCHED THEN UPDATE SET *`,
        ),
      );
      expect(missing.message).toBe("Cannot resolve v in UPDATE clause given columns s.id.");
    });

    it("on (session conf or WITH SCHEMA EVOLUTION): new columns, with column-mapping ids", async () => {
      const t = await table("evo_on", "(1, 'a'), (2, 'b')");
      const src = "(VALUES (1, 'A', 'gold'), (3, 'C', 'bronze')) AS s(id, v, tier)";
      const res = await ok(
        `MERGE INTO ${t} t USING ${src} ON t.id = s.id
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`,
        { conf: { "spark.databricks.delta.schema.autoMerge.enabled": "true" } },
      );
      expect(res.rows).toEqual([[2, 1, 0, 1]]);
      expect((await ok(`SELECT * FROM ${t} ORDER BY id`)).rows).toEqual([
        [1, "A", "gold"],
        [2, "b", null],
        [3, "C", "bronze"],
      ]);
      // The metaData action is in the merge's own commit, with a column-mapping id above the
      // table's maximum and a fresh physical name.
      const [c, s, n] = t.split(".");
      const entry = await silt.ctx.catalog.getTable(c, s, n);
      const actions = parseActions(
        new TextDecoder().decode(
          await silt.ctx.store.get(
            `${entry.location}_delta_log/${commitFileName(res.version as number)}`,
          ),
        ),
      );
      const meta = actions.flatMap((a) => ("metaData" in a ? [a.metaData] : []));
      expect(meta).toHaveLength(1);
      const tier = parseSchema(meta[0].schemaString).fields[2];
      expect(tier.name).toBe("tier");
      expect(tier.nullable).toBe(true);
      expect(tier.metadata["delta.columnMapping.id"]).toBe(3);
      expect(tier.metadata["delta.columnMapping.physicalName"]).toMatch(/^col-[0-9a-f-]{36}$/);
      expect(meta[0].configuration["delta.columnMapping.maxColumnId"]).toBe("3");

      // WITH SCHEMA EVOLUTION, an explicit SET of a new column, and a nested struct field.
      await ok(
        `MERGE WITH SCHEMA EVOLUTION INTO ${t} t USING (VALUES (2, 7)) AS s(id, score) ON t.id = s.id
         WHEN MATCHED THEN UPDATE SET score = s.score`,
      );
      expect((await ok(`SELECT id, score FROM ${t} ORDER BY id`)).rows).toEqual([
        [1, null],
        [2, 7],
        [3, null],
      ]);
      // Earlier versions still read with their own schema.
      expect((await ok(`SELECT * FROM ${t} VERSION AS OF 1 ORDER BY id`)).rows).toEqual([
        [1, "a"],
        [2, "b"],
      ]);
      const snapshot = await loadSnapshot(silt.ctx.store, entry.location);
      const read = await readSnapshotRows(silt.ctx.store, snapshot);
      expect(
        arrowToRows(read.table, read.schema)
          .map((r) => JSON.stringify(r))
          .sort(),
      ).toEqual(['[1,"A","gold",null]', '[2,"b",null,7]', '[3,"C","bronze",null]']);
    });

    it("evolves nested struct fields for UPDATE SET * and INSERT *", async () => {
      await ok("CREATE TABLE m.s.evo_nested (id INT, info STRUCT<city: STRING>) USING DELTA");
      await silt.call("POST", "/api/v1/tables/m.s.evo_nested/insert", {
        rows: [{ id: 1, info: { city: "Oslo" } }],
      });
      const res = await merge("m.s.evo_nested", {
        source: {
          rows: [
            { id: 1, info: { city: "Bergen", zip: 5003 } },
            { id: 2, info: { city: "Tromsø", zip: 9008 } },
          ],
          columns: [
            { name: "id", type: "INT" },
            { name: "info", type: "STRUCT<city: STRING, zip: INT>" },
          ],
        },
        on: "target.id = source.id",
        whenMatched: [{ updateAll: true }],
        whenNotMatched: [{ insertAll: true }],
        schemaEvolution: true,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((await ok("SELECT * FROM m.s.evo_nested ORDER BY id")).rows).toEqual([
        [1, { city: "Bergen", zip: 5003 }],
        [2, { city: "Tromsø", zip: 9008 }],
      ]);
    });
  });

  describe("error paths leave the table unchanged", () => {
    it("analysis errors, before anything is read", async () => {
      const t = await table("errs", "(1, 'a')");
      const src = "(VALUES (1, 'x')) AS s(id, v)";
      let e = await failsUnchanged(t, "DELTA_MERGE_UNRESOLVED_EXPRESSION", () =>
        sql(`MERGE INTO ${t} t USING ${src} ON t.id = s.idd WHEN MATCHED THEN DELETE`),
      );
      expect(e.message).toBe(
        "Cannot resolve s.idd in search condition given columns t.id, t.v, s.id, s.v.",
      );
      e = await failsUnchanged(t, "DELTA_MERGE_UNRESOLVED_EXPRESSION", () =>
        sql(
          `MERGE INTO ${t} t USING ${src} ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, t.v)`,
        ),
      );
      expect(e.message).toBe("Cannot resolve t.v in INSERT clause given columns s.id, s.v.");
      e = await failsUnchanged(t, "DELTA_MERGE_UNRESOLVED_EXPRESSION", () =>
        sql(
          `MERGE INTO ${t} t USING ${src} ON t.id = s.id WHEN NOT MATCHED BY SOURCE AND s.v = 'x' THEN DELETE`,
        ),
      );
      expect(e.message).toBe("Cannot resolve s.v in DELETE condition given columns t.id, t.v.");
      await failsUnchanged(t, "DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION", () =>
        sql(
          `MERGE INTO ${t} t USING ${src} ON t.id = s.id WHEN MATCHED THEN UPDATE SET id = DATE'2020-01-01'`,
        ),
      );
      await failsUnchanged(t, "AMBIGUOUS_REFERENCE", () =>
        sql(`MERGE INTO ${t} t USING ${src} ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = v`),
      );
      await failsUnchanged(t, "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION", () =>
        merge(t, {
          source: { rows: [{ id: 1, v: "x" }] },
          on: "target.id = source.id",
          whenMatched: [{ delete: true }, { condition: "source.v = 'x'", updateAll: true }],
        }),
      );
      await failsUnchanged(t, "MERGE_WITHOUT_WHEN", () =>
        merge(t, { source: { rows: [] }, on: "target.id = source.id" }),
      );
      await failsUnchanged(t, "INVALID_REQUEST", () =>
        merge(t, {
          source: { rows: [] },
          on: "target.id = source.id",
          whenMatched: [{ delete: true, updateAll: true }],
        }),
      );
      await failsUnchanged(t, "PARSE_SYNTAX_ERROR", () =>
        merge(t, { source: { rows: [] }, on: "target.id = = 1", whenMatched: [{ delete: true }] }),
      );
    });

    it("run-time errors and constraints", async () => {
      await ok("CREATE TABLE m.s.strict (id INT NOT NULL, v STRING) USING DELTA");
      await ok("INSERT INTO m.s.strict VALUES (1, 'a')");
      await failsUnchanged("m.s.strict", "DELTA_NOT_NULL_CONSTRAINT_VIOLATED", () =>
        sql(
          `MERGE INTO m.s.strict t USING (VALUES (2, 'b')) AS s(id, v) ON t.id = s.id
           WHEN NOT MATCHED THEN INSERT (v) VALUES (s.v)`,
        ),
      );
      await failsUnchanged("m.s.strict", "CAST_INVALID_INPUT", () =>
        sql(
          `MERGE INTO m.s.strict t USING (VALUES ('1', 'oops')) AS s(id, v) ON t.id = s.id
           WHEN MATCHED THEN UPDATE SET id = s.v`,
        ),
      );
    });

    it("append-only tables take insert-only merges and refuse the rest", async () => {
      await ok(
        "CREATE TABLE m.s.ledger (id INT, v STRING) USING DELTA TBLPROPERTIES ('delta.appendOnly' = 'true')",
      );
      await ok("INSERT INTO m.s.ledger VALUES (1, 'a')");
      const src = "(VALUES (1, 'x'), (2, 'y')) AS s(id, v)";
      await failsUnchanged("m.s.ledger", "DELTA_CANNOT_MODIFY_APPEND_ONLY", () =>
        sql(`MERGE INTO m.s.ledger t USING ${src} ON t.id = s.id WHEN MATCHED THEN UPDATE SET *`),
      );
      const res = await ok(
        `MERGE INTO m.s.ledger t USING ${src} ON t.id = s.id WHEN NOT MATCHED THEN INSERT *`,
      );
      expect(res.rows).toEqual([[1, 0, 0, 1]]);
      expect(await rows("SELECT * FROM m.s.ledger ORDER BY id")).toEqual([
        [1, "a"],
        [2, "y"],
      ]);
    });
  });
});
