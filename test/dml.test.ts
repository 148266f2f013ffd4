/**
 * DELETE and UPDATE end to end: the seed walkthroughs through POST /api/v1/sql and the JSON
 * routes with the results the seeds print, deletion vectors across several operations on one
 * file (decoded with the reference layout of delta-protocol.md §4), file pruning, the history
 * rows Spark writes, and every error path leaving the table's version and rows unchanged.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { arrowToRows } from "../lib/data/arrow-to-json.ts";
import { type Action, type AddFile, commitFileName, parseActions } from "../lib/delta/actions.ts";
import { dvFileKey, loadDeletionVector } from "../lib/delta/deletion-vectors.ts";
import { loadSnapshot } from "../lib/delta/snapshot.ts";
import { readSnapshotRows } from "../lib/ops/read-files.ts";
import { type SiltHarness, type StorageKind, startSilt } from "./helpers/silt-harness.ts";

const ROOT = path.resolve(import.meta.dirname, "..");

type Result = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  version?: number;
};

function client(get: () => SiltHarness) {
  const sql = (statement: string, extra: Record<string, unknown> = {}) =>
    get().call("POST", "/api/v1/sql", { statement, ...extra });
  const ok = async (statement: string, extra: Record<string, unknown> = {}): Promise<Result> => {
    const res = await sql(statement, extra);
    expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
    return res.body as Result;
  };
  /** Rows sorted by their JSON text, and the version, as the rows route reads them. */
  const state = async (table: string) => {
    const res = await get().call("GET", `/api/v1/tables/${table}/rows`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const rows = (res.body.rows as unknown[][]).map((r) => JSON.stringify(r)).sort();
    return { version: res.body.version as number, rows };
  };
  /** The request fails with `errorClass` and the table keeps its version and rows. */
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
  const history = async (table: string) => {
    const h = await ok(`DESCRIBE HISTORY ${table}`);
    const col = (n: string) => h.columns.findIndex((c) => c.name === n);
    return h.rows.map((r) => ({
      version: r[col("version")] as number,
      operation: r[col("operation")] as string,
      parameters: r[col("operationParameters")] as Record<string, string>,
      metrics: r[col("operationMetrics")] as Record<string, string>,
      readVersion: r[col("readVersion")] as number,
      isBlindAppend: r[col("isBlindAppend")] as boolean,
    }));
  };
  return { sql, ok, state, failsUnchanged, history };
}

/** The actions of a published commit. */
async function commitActions(silt: SiltHarness, table: string, version: number) {
  const [c, s, t] = table.split(".");
  const entry = await silt.ctx.catalog.getTable(c, s, t);
  const text = new TextDecoder().decode(
    await silt.ctx.store.get(`${entry.location}_delta_log/${commitFileName(version)}`),
  );
  return parseActions(text);
}

/** Rows through the reader path only: the published log and the files, as any reader sees them. */
async function readerRows(silt: SiltHarness, table: string, version?: number) {
  const [c, s, t] = table.split(".");
  const entry = await silt.ctx.catalog.getTable(c, s, t);
  const snapshot = await loadSnapshot(silt.ctx.store, entry.location, { version });
  const { schema, table: rows } = await readSnapshotRows(silt.ctx.store, snapshot);
  return arrowToRows(rows, schema)
    .map((r) => JSON.stringify(r))
    .sort();
}

const removes = (actions: Action[]) => actions.flatMap((a) => ("remove" in a ? [a.remove] : []));
const adds = (actions: Action[]) => actions.flatMap((a) => ("add" in a ? [a.add] : []));

for (const storage of ["local", "s3"] as StorageKind[]) {
  describe(`seed 002 walkthrough through /api/v1/sql (${storage} storage)`, () => {
    let silt: SiltHarness;
    const { ok, history } = client(() => silt);
    beforeAll(async () => {
      silt = await startSilt(storage, { memory: true });
    });
    afterAll(() => silt.close());

    it("creates, inserts, updates, deletes, reads, time travels and drops", async () => {
      await ok("CREATE CATALOG inventory");
      await ok("CREATE SCHEMA inventory.stock");
      // seed 002, "Create a managed table"
      await ok(`
    CREATE TABLE inventory.stock.items (
        sku STRING,
        qty INT
    ) USING DELTA
`);
      // seed 002, "Append rows with INSERT INTO"
      const ins = await ok(`
    INSERT INTO inventory.stock.items VALUES
        ('apple', 10),
        ('pear', 4),
        ('plum', 0)
`);
      expect(ins.version).toBe(1);
      // seed 002, "Update and delete rows in Spark"
      const upd = await ok("UPDATE inventory.stock.items SET qty = qty + 5 WHERE sku = 'pear'");
      expect(upd).toEqual({
        columns: [{ name: "num_affected_rows", type: "bigint" }],
        rows: [[1]],
        version: 2,
      });
      const del = await ok("DELETE FROM inventory.stock.items WHERE qty = 0");
      expect(del).toEqual({
        columns: [{ name: "num_affected_rows", type: "bigint" }],
        rows: [[1]],
        version: 3,
      });
      // seed 002, "Query the table by its three-part name"
      const read = await ok(`
    SELECT sku, qty
    FROM inventory.stock.items
    ORDER BY sku
`);
      expect(read).toEqual({
        columns: [
          { name: "sku", type: "string" },
          { name: "qty", type: "int" },
        ],
        rows: [
          ["apple", 10],
          ["pear", 9],
        ],
      });
      // seed 002, "Read an earlier version": version 1 is the table after the first insert.
      const v1 = await ok(`
    SELECT sku, qty
    FROM inventory.stock.items VERSION AS OF 1
    ORDER BY sku
`);
      expect(v1.rows).toEqual([
        ["apple", 10],
        ["pear", 4],
        ["plum", 0],
      ]);
      expect(await readerRows(silt, "inventory.stock.items")).toEqual([
        '["apple",10]',
        '["pear",9]',
      ]);

      const h = await history("inventory.stock.items");
      expect(h.map((r) => r.operation)).toEqual(["DELETE", "UPDATE", "WRITE", "CREATE TABLE"]);
      expect(h[0].parameters).toEqual({ predicate: '["(qty = 0)"]' });
      expect(h[1].parameters).toEqual({ predicate: "[\"(sku = 'pear')\"]" });
      expect(h[0].isBlindAppend).toBe(false);
      expect(h[0].readVersion).toBe(2);

      // seed 002, "Drop the table in Spark"
      await ok("DROP TABLE inventory.stock.items");
      expect((await ok("SHOW TABLES IN inventory.stock")).rows).toEqual([]);
    });
  });
}

describe("seed 003: CRUD on Delta tables", () => {
  let silt: SiltHarness;
  const { ok, state, failsUnchanged, history } = client(() => silt);
  // seed 003 runs `CREATE DATABASE retail; USE retail;`. Silt's SQL endpoint is stateless, so
  // the session's catalog and schema travel with each request instead of USE.
  const retail = { catalog: "shop", schema: "retail" };
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await ok("CREATE CATALOG shop");
    await ok("CREATE SCHEMA IF NOT EXISTS shop.retail");
  });
  afterAll(() => silt.close());

  it("customers: create, insert, update, delete and MERGE through SQL", async () => {
    // seed 003, "1. Create a Delta table"
    await ok(
      `CREATE TABLE IF NOT EXISTS customers (
  customer_id INT,
  name STRING,
  email STRING,
  signup_date DATE
) USING DELTA`,
      retail,
    );
    // seed 003, "2. Insert data"
    await ok(
      `INSERT INTO customers VALUES
  (1, 'Alice', 'alice@example.com', '2025-01-10'),
  (2, 'Bob', 'bob@example.com', '2025-02-14');`,
      retail,
    );
    // seed 003, "3. Update rows"
    const upd = await ok(
      `UPDATE customers
SET email = 'alice.new@example.com'
WHERE customer_id = 1;`,
      retail,
    );
    expect(upd.rows).toEqual([[1]]);
    // seed 003, "4. Delete rows"
    const del = await ok("DELETE FROM customers WHERE customer_id = 2;", retail);
    expect(del.rows).toEqual([[1]]);
    // seed 003, "5. Merge data (upsert)"
    const merged = await ok(
      `MERGE INTO customers AS t
USING (SELECT 1 AS customer_id, 'Alice Updated' AS name, 'alice@new.com' AS email, '2025-01-10' AS signup_date) AS s
ON t.customer_id = s.customer_id
WHEN MATCHED THEN UPDATE SET name = s.name, email = s.email
WHEN NOT MATCHED THEN INSERT *`,
      retail,
    );
    expect(merged).toEqual({
      columns: [
        { name: "num_affected_rows", type: "bigint" },
        { name: "num_updated_rows", type: "bigint" },
        { name: "num_deleted_rows", type: "bigint" },
        { name: "num_inserted_rows", type: "bigint" },
      ],
      rows: [[1, 1, 0, 0]],
      version: 4,
    });
    const rows = await ok("SELECT * FROM customers ORDER BY customer_id", retail);
    expect(rows.rows).toEqual([[1, "Alice Updated", "alice@new.com", "2025-01-10"]]);

    // The same MERGE for a new customer takes the INSERT * branch; its STRING signup_date is
    // cast to the DATE column (store assignment).
    const inserted = await ok(
      `MERGE INTO customers AS t
USING (SELECT 3 AS customer_id, 'Cleo' AS name, 'cleo@example.com' AS email, '2025-03-01' AS signup_date) AS s
ON t.customer_id = s.customer_id
WHEN MATCHED THEN UPDATE SET name = s.name, email = s.email
WHEN NOT MATCHED THEN INSERT *`,
      retail,
    );
    expect(inserted.rows).toEqual([[1, 0, 0, 1]]);
    expect(
      (await ok("SELECT customer_id, signup_date FROM customers ORDER BY 1", retail)).rows,
    ).toEqual([
      [1, "2025-01-10"],
      [3, "2025-03-01"],
    ]);

    // seed 003 says "Delta refuses to update/delete without a WHERE clause". Delta does not:
    // an UPDATE or DELETE without WHERE changes every row, and that is what Silt does.
    const all = await ok("UPDATE customers SET name = upper(name)", retail);
    expect(all.rows).toEqual([[2]]);
    const gone = await ok("DELETE FROM customers", retail);
    expect(gone.rows).toEqual([[2]]);
    expect((await state("shop.retail.customers")).rows).toEqual([]);
  });

  it("orders: DeltaTable update / delete / merge through the JSON routes", async () => {
    // seed 003, "Step 1 — Create and insert" (saveAsTable with the seed's schema)
    const created = await silt.call("POST", "/api/v1/tables", {
      name: "shop.retail.orders",
      columns: [
        { name: "order_id", type: "INT" },
        { name: "customer_id", type: "INT" },
        { name: "status", type: "STRING" },
        { name: "order_date", type: "DATE" },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await silt.call("POST", "/api/v1/tables/shop.retail.orders/insert", {
      rows: [
        [1001, 501, "PENDING", "2025-03-01"],
        [1002, 502, "SHIPPED", "2025-03-02"],
        [1003, 503, "DELIVERED", "2025-03-03"],
      ],
    });

    // seed 003, "Step 3 — Update". The seed writes set={"status": "PROCESSING"}; DeltaTable
    // takes SQL expressions there, so Delta reads PROCESSING as a column and fails. The string
    // literal is "'PROCESSING'".
    const bare = await failsUnchanged(
      "shop.retail.orders",
      "UNRESOLVED_COLUMN.WITH_SUGGESTION",
      () =>
        silt.call("POST", "/api/v1/tables/shop.retail.orders/update", {
          condition: "order_id = 1001",
          set: { status: "PROCESSING" },
        }),
    );
    expect(bare.message).toContain("`PROCESSING`");
    const upd = await silt.call("POST", "/api/v1/tables/shop.retail.orders/update", {
      condition: "order_id = 1001",
      set: { status: "'PROCESSING'" },
    });
    expect(upd.status, JSON.stringify(upd.body)).toBe(200);
    expect(upd.body).toMatchObject({ version: 2, committed: true, numUpdatedRows: 1 });
    const one = await ok("SELECT * FROM shop.retail.orders WHERE order_id = 1001");
    expect(one.rows).toEqual([[1001, 501, "PROCESSING", "2025-03-01"]]);

    // seed 003, "Step 4 — Delete"
    const del = await silt.call("POST", "/api/v1/tables/shop.retail.orders/delete", {
      condition: "order_id = 1003",
    });
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(del.body).toMatchObject({ version: 3, committed: true, numDeletedRows: 1 });
    expect((await ok("SELECT * FROM shop.retail.orders ORDER BY order_id")).rows).toEqual([
      [1001, 501, "PROCESSING", "2025-03-01"],
      [1002, 502, "SHIPPED", "2025-03-02"],
    ]);

    // seed 003, "Step 5 — Upsert with MERGE"
    const merge = await silt.call("POST", "/api/v1/tables/shop.retail.orders/merge", {
      source: {
        rows: [
          [1002, 502, "OUT_FOR_DELIVERY", "2025-03-02"],
          [2001, 504, "PENDING", "2025-03-05"],
        ],
        columns: [
          { name: "order_id", type: "INT" },
          { name: "customer_id", type: "INT" },
          { name: "status", type: "STRING" },
          { name: "order_date", type: "DATE" },
        ],
      },
      targetAlias: "target",
      sourceAlias: "source",
      on: "target.order_id = source.order_id",
      whenMatched: [{ update: { status: "source.status" } }],
      whenNotMatched: [{ insertAll: true }],
    });
    expect(merge.status, JSON.stringify(merge.body)).toBe(200);
    expect(merge.body).toMatchObject({
      version: 4,
      committed: true,
      numTargetRowsUpdated: 1,
      numTargetRowsDeleted: 0,
      numTargetRowsInserted: 1,
    });
    // The seed's printed table, ordered by order_id.
    const after = await ok("SELECT * FROM shop.retail.orders ORDER BY order_id");
    expect(after.rows).toEqual([
      [1001, 501, "PROCESSING", "2025-03-01"],
      [1002, 502, "OUT_FOR_DELIVERY", "2025-03-02"],
      [2001, 504, "PENDING", "2025-03-05"],
    ]);

    // seed 003, "2. MERGE with multiple matches": a duplicated source row fails the merge with
    // Delta's error class and message, and nothing changes.
    const dup = await failsUnchanged(
      "shop.retail.orders",
      "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE",
      () =>
        silt.call("POST", "/api/v1/tables/shop.retail.orders/merge", {
          source: {
            rows: [
              { order_id: 1002, customer_id: 502, status: "RETURNED", order_date: "2025-03-02" },
              { order_id: 1002, customer_id: 502, status: "LOST", order_date: "2025-03-02" },
            ],
          },
          on: "target.order_id = source.order_id",
          whenMatched: [{ update: { status: "source.status" } }],
          whenNotMatched: [{ insertAll: true }],
        }),
    );
    expect(dup.sqlstate).toBe("21506");
    expect(dup.message).toMatch(
      /^Cannot perform Merge as multiple source rows matched and attempted to modify the same\ntarget row in the Delta table in possibly conflicting ways\./,
    );

    const h = await history("shop.retail.orders");
    expect(h.map((r) => r.operation)).toEqual([
      "MERGE",
      "DELETE",
      "UPDATE",
      "WRITE",
      "CREATE TABLE",
    ]);
    expect(h[0].parameters).toEqual({
      predicate: '["(target.order_id = source.order_id)"]',
      matchedPredicates: '[{"actionType":"update"}]',
      notMatchedPredicates: '[{"actionType":"insert"}]',
      notMatchedBySourcePredicates: "[]",
    });
    expect(h[1].parameters).toEqual({ predicate: '["(order_id = 1003)"]' });
    expect(h[2].parameters).toEqual({ predicate: '["(order_id = 1001)"]' });
  });
});

describe("deletion vectors across operations on one file", () => {
  let silt: SiltHarness;
  const { ok, history } = client(() => silt);
  const T = "dv.s.t";
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await ok("CREATE CATALOG dv");
    await ok("CREATE SCHEMA dv.s");
    await ok(`CREATE TABLE ${T} (id INT, grp STRING, amount BIGINT) USING DELTA`);
    // One insert, one file of eight rows.
    await ok(
      `INSERT INTO ${T} VALUES (0, 'a', 10), (1, 'a', 11), (2, 'b', 12), (3, 'b', 13),
       (4, 'c', 14), (5, 'c', 15), (6, 'd', 16), (7, 'd', 17)`,
    );
  });
  afterAll(() => silt.close());

  const location = async () => (await silt.ctx.catalog.getTable("dv", "s", "t")).location;
  const originalFile = async (): Promise<AddFile> => {
    const actions = await commitActions(silt, T, 1);
    return adds(actions)[0];
  };

  it("delete, then update, then delete again: one vector grows on the file", async () => {
    const file = await originalFile();
    const root = await location();

    // 1. DELETE: a new deletion vector on the file (remove without DV + add with DV).
    await ok(`DELETE FROM ${T} WHERE id IN (1, 6)`);
    let actions = await commitActions(silt, T, 2);
    expect(removes(actions)).toHaveLength(1);
    expect(removes(actions)[0]).toMatchObject({ path: file.path, dataChange: true });
    expect(removes(actions)[0].deletionVector).toBeUndefined();
    let added = adds(actions);
    expect(added).toHaveLength(1);
    expect(added[0].path).toBe(file.path);
    expect(added[0].deletionVector).toMatchObject({ storageType: "u", cardinality: 2 });
    expect(JSON.parse(added[0].stats as string)).toMatchObject({
      numRecords: 8,
      tightBounds: false,
    });
    // Row tracking: the re-added file keeps its row ids.
    expect(added[0].baseRowId).toBe(file.baseRowId);
    expect(added[0].defaultRowCommitVersion).toBe(file.defaultRowCommitVersion);
    const dv1 = added[0].deletionVector!;
    expect([...(await loadDeletionVector(silt.ctx.store, root, dv1))]).toEqual([1, 6]);

    // 2. UPDATE: the vector is updated (remove with the old DV + add with the new one) and the
    // new versions of the rows go to a new file.
    await ok(`UPDATE ${T} SET amount = amount * 100 WHERE grp = 'b'`);
    actions = await commitActions(silt, T, 3);
    const rm = removes(actions);
    expect(rm).toHaveLength(1);
    expect(rm[0].deletionVector).toEqual(dv1);
    added = adds(actions);
    expect(added).toHaveLength(2);
    const readded = added.find((a) => a.path === file.path)!;
    const fresh = added.find((a) => a.path !== file.path)!;
    expect(readded.deletionVector?.cardinality).toBe(4);
    expect([...(await loadDeletionVector(silt.ctx.store, root, readded.deletionVector!))]).toEqual([
      1, 2, 3, 6,
    ]);
    expect(fresh.deletionVector ?? undefined).toBeUndefined();
    expect(JSON.parse(fresh.stats as string).numRecords).toBe(2);
    // Fresh row ids above the table's high-water mark (Spark would keep the updated rows' ids).
    expect(fresh.baseRowId).toBeGreaterThan(7);

    // 3. DELETE again, on both files: the old file's vector grows once more, the new file gets
    // its first vector, and all of them live in one new DV file.
    await ok(`DELETE FROM ${T} WHERE id IN (0, 2)`);
    actions = await commitActions(silt, T, 4);
    added = adds(actions);
    expect(added).toHaveLength(2);
    const third = added.find((a) => a.path === file.path)!;
    const second = added.find((a) => a.path === fresh.path)!;
    expect([...(await loadDeletionVector(silt.ctx.store, root, third.deletionVector!))]).toEqual([
      0, 1, 2, 3, 6,
    ]);
    expect([...(await loadDeletionVector(silt.ctx.store, root, second.deletionVector!))]).toEqual([
      0,
    ]);
    expect(third.deletionVector?.pathOrInlineDv).toBe(second.deletionVector?.pathOrInlineDv);

    // The DV file decodes with the reference layout (§4.4): version byte 1, then per vector a
    // big-endian size, the portable bitmap (magic 1681511377 little-endian), a CRC-32.
    const dv = third.deletionVector!;
    const bytes = await silt.ctx.store.get(dvFileKey(dv, root));
    expect(bytes[0]).toBe(1);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const offset = dv.offset ?? 1;
    expect(view.getInt32(offset, false)).toBe(dv.sizeInBytes);
    expect(view.getUint32(offset + 4, true)).toBe(1681511377);
    expect(dvFileKey(dv, root)).toMatch(/deletion_vector_[0-9a-f-]{36}\.bin$/);

    const rows = await ok(`SELECT id, grp, amount FROM ${T} ORDER BY id`);
    expect(rows.rows).toEqual([
      [3, "b", 1300],
      [4, "c", 14],
      [5, "c", 15],
      [7, "d", 17],
    ]);
    // Time travel sees each version's vectors.
    expect((await ok(`SELECT id FROM ${T} VERSION AS OF 2 ORDER BY id`)).rows.flat()).toEqual([
      0, 2, 3, 4, 5, 7,
    ]);
    expect(
      (await ok(`SELECT id, amount FROM ${T} VERSION AS OF 3 WHERE grp = 'b' ORDER BY id`)).rows,
    ).toEqual([
      [2, 1200],
      [3, 1300],
    ]);

    // History rows as Spark writes them: vectors added/removed/updated per its conventions.
    const h = await history(T);
    expect(h[0]).toMatchObject({
      operation: "DELETE",
      parameters: { predicate: '["(id IN (0, 2))"]' },
    });
    expect(Object.keys(h[0].metrics)).toEqual([
      "numAddedFiles",
      "numRemovedFiles",
      "numDeletionVectorsAdded",
      "numDeletionVectorsRemoved",
      "numDeletionVectorsUpdated",
      "numAddedChangeFiles",
      "numDeletedRows",
      "numCopiedRows",
      "executionTimeMs",
      "scanTimeMs",
      "rewriteTimeMs",
      "numRemovedBytes",
      "numAddedBytes",
    ]);
    expect(h[0].metrics).toMatchObject({
      numAddedFiles: "0",
      numRemovedFiles: "0",
      numDeletionVectorsAdded: "2",
      numDeletionVectorsRemoved: "1",
      numDeletionVectorsUpdated: "1",
      numDeletedRows: "2",
      numCopiedRows: "0",
      numRemovedBytes: "0",
      numAddedBytes: "0",
    });
    expect(h[1]).toMatchObject({
      operation: "UPDATE",
      parameters: { predicate: "[\"(grp = 'b')\"]" },
      metrics: {
        numAddedFiles: "1",
        numRemovedFiles: "1",
        numAddedChangeFiles: "0",
        numDeletionVectorsAdded: "1",
        numDeletionVectorsRemoved: "1",
        numDeletionVectorsUpdated: "1",
        numUpdatedRows: "2",
        numCopiedRows: "0",
        numRemovedBytes: "0",
        numAddedBytes: String(fresh.size),
      },
    });
    expect(Object.keys(h[1].metrics).sort()).toEqual(
      [
        "numAddedFiles",
        "numRemovedFiles",
        "numAddedChangeFiles",
        "numDeletionVectorsAdded",
        "numDeletionVectorsRemoved",
        "numDeletionVectorsUpdated",
        "numUpdatedRows",
        "numCopiedRows",
        "executionTimeMs",
        "scanTimeMs",
        "rewriteTimeMs",
        "numRemovedBytes",
        "numAddedBytes",
      ].sort(),
    );
    expect(h[2].metrics).toMatchObject({
      numDeletionVectorsAdded: "1",
      numDeletionVectorsRemoved: "0",
      numDeletionVectorsUpdated: "0",
      numDeletedRows: "2",
    });
  });

  it("reads correctly through the reader path and `silt read` (reader conformance)", async () => {
    const expected = ['[3,"b",1300]', '[4,"c",14]', '[5,"c",15]', '[7,"d",17]'];
    expect(await readerRows(silt, T)).toEqual(expected);
    expect(await readerRows(silt, T, 2)).toHaveLength(6);
    const dir = fileURLToPath(silt.ctx.storageRootUri);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, "bin", "silt.mjs"), "read", path.join(dir, await location()), "--json"],
      { cwd: ROOT },
    );
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .map((r) => JSON.stringify([r.id, r.grp, r.amount]))
      .sort();
    expect(lines).toEqual(expected);
  });

  it("RESTORE to a version before the deletes brings the rows back", async () => {
    await ok(`RESTORE TABLE ${T} TO VERSION AS OF 1`);
    expect((await ok(`SELECT id, amount FROM ${T} ORDER BY id`)).rows).toEqual([
      [0, 10],
      [1, 11],
      [2, 12],
      [3, 13],
      [4, 14],
      [5, 15],
      [6, 16],
      [7, 17],
    ]);
    // And back to the state after the last DELETE (version 4), vectors included.
    await ok(`RESTORE TABLE ${T} TO VERSION AS OF 4`);
    expect((await ok(`SELECT id FROM ${T} ORDER BY id`)).rows.flat()).toEqual([3, 4, 5, 7]);
  });

  it("a file whose every live row goes is removed, carrying its vector", async () => {
    const file = await originalFile();
    const res = await ok(`DELETE FROM ${T} WHERE grp <> 'b' OR grp IS NULL`);
    expect(res.rows).toEqual([[3]]);
    const actions = await commitActions(silt, T, res.version as number);
    const rm = removes(actions).find((r) => r.path === file.path)!;
    expect(rm.deletionVector?.cardinality).toBe(5);
    expect(adds(actions).some((a) => a.path === file.path)).toBe(false);
    expect((await ok(`SELECT id, amount FROM ${T}`)).rows).toEqual([[3, 1300]]);
    const h = await history(T);
    // Only the original file had matching rows (the UPDATE's file holds grp 'b' only).
    expect(h[0].metrics).toMatchObject({
      numRemovedFiles: "1",
      numRemovedBytes: String(file.size),
      numDeletionVectorsAdded: "0",
      numDeletionVectorsRemoved: "1",
      numDeletionVectorsUpdated: "0",
      numDeletedRows: "3",
    });
  });
});

describe("DELETE and UPDATE: pruning, metadata-only deletes, no-ops", () => {
  let silt: SiltHarness;
  const { ok, state, history } = client(() => silt);
  /** Data-file GETs (Parquet) made while `fn` runs. */
  const parquetReads = async (fn: () => Promise<unknown>) => {
    const store = silt.ctx.store;
    const get = store.get.bind(store);
    const keys: string[] = [];
    store.get = async (key: string) => {
      if (key.endsWith(".parquet")) keys.push(key);
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
    await ok("CREATE CATALOG p");
    await ok("CREATE SCHEMA p.s");
    await ok("CREATE TABLE p.s.flat (id INT, v STRING) USING DELTA");
    // Four inserts, four files with disjoint id ranges.
    for (let f = 0; f < 4; f++) {
      await ok(
        `INSERT INTO p.s.flat VALUES (${f * 10}, 'x'), (${f * 10 + 1}, 'y'), (${f * 10 + 2}, 'z')`,
      );
    }
    await ok("CREATE TABLE p.s.parts (day DATE, n INT) USING DELTA PARTITIONED BY (day)");
    await ok(
      "INSERT INTO p.s.parts VALUES (DATE'2026-01-01', 1), (DATE'2026-01-01', 2), (DATE'2026-01-02', 3), (DATE'2026-01-03', 4)",
    );
  });
  afterAll(() => silt.close());

  it("reads only the files whose statistics can match", async () => {
    const keys = await parquetReads(() => ok("DELETE FROM p.s.flat WHERE id = 21"));
    expect(keys).toHaveLength(1);
    const updated = await parquetReads(() => ok("UPDATE p.s.flat SET v = 'w' WHERE id >= 30"));
    expect(updated).toHaveLength(1);
    expect((await ok("SELECT id, v FROM p.s.flat WHERE id >= 20 ORDER BY id")).rows).toEqual([
      [20, "x"],
      [22, "z"],
      [30, "w"],
      [31, "w"],
      [32, "w"],
    ]);
  });

  it("decides files by partition values alone, with row counts from statistics", async () => {
    const before = await state("p.s.parts");
    const keys = await parquetReads(async () => {
      const res = await ok("DELETE FROM p.s.parts WHERE day = DATE'2026-01-01'");
      expect(res.rows).toEqual([[2]]);
    });
    expect(keys).toEqual([]);
    const h = await history("p.s.parts");
    expect(h[0].parameters).toEqual({ predicate: "[\"(day = DATE '2026-01-01')\"]" });
    expect(h[0].metrics).toMatchObject({
      numRemovedFiles: "1",
      numDeletedRows: "2",
      numDeletionVectorsAdded: "0",
    });
    expect((await state("p.s.parts")).version).toBe(before.version + 1);
    expect((await ok("SELECT n FROM p.s.parts ORDER BY n")).rows.flat()).toEqual([3, 4]);
  });

  it("UPDATE of a partition column moves the rows to their new partition", async () => {
    await ok("UPDATE p.s.parts SET day = DATE'2026-02-01' WHERE n = 3");
    expect((await ok("SELECT day, n FROM p.s.parts ORDER BY n")).rows).toEqual([
      ["2026-02-01", 3],
      ["2026-01-03", 4],
    ]);
    expect((await ok("SELECT n FROM p.s.parts WHERE day = DATE'2026-01-02'")).rows).toEqual([]);
  });

  it("DELETE without WHERE removes every file without reading one", async () => {
    await ok("CREATE TABLE p.s.all (id INT) USING DELTA");
    await ok("INSERT INTO p.s.all VALUES (1), (2)");
    await ok("INSERT INTO p.s.all VALUES (3), (4)");
    await ok("DELETE FROM p.s.all WHERE id = 3");
    const keys = await parquetReads(async () => {
      const res = await ok("DELETE FROM p.s.all");
      expect(res.rows).toEqual([[3]]);
    });
    expect(keys).toEqual([]);
    const h = await history("p.s.all");
    expect(h[0].parameters).toEqual({ predicate: "[]" });
    expect(h[0].metrics).toMatchObject({
      numRemovedFiles: "2",
      numDeletedRows: "3",
      numDeletionVectorsRemoved: "1",
      numAddedFiles: "0",
    });
    expect((await ok("SELECT * FROM p.s.all")).rows).toEqual([]);
  });

  it("commits nothing when nothing matches (Delta skips empty commits)", async () => {
    const before = await state("p.s.flat");
    const del = await ok("DELETE FROM p.s.flat WHERE id = 999");
    expect(del).toMatchObject({ rows: [[0]], version: before.version });
    const upd = await ok("UPDATE p.s.flat SET v = 'q' WHERE v = 'nothing'");
    expect(upd).toMatchObject({ rows: [[0]], version: before.version });
    const never = await ok("DELETE FROM p.s.flat WHERE 1 = 0");
    expect(never).toMatchObject({ rows: [[0]], version: before.version });
    expect(await state("p.s.flat")).toEqual(before);
  });

  it("UPDATE assigns nested struct fields and keeps the others", async () => {
    await ok("CREATE TABLE p.s.nested (id INT, info STRUCT<city: STRING, zip: INT>) USING DELTA");
    await silt.call("POST", "/api/v1/tables/p.s.nested/insert", {
      rows: [
        { id: 1, info: { city: "Oslo", zip: 150 } },
        { id: 2, info: null },
      ],
    });
    await ok("UPDATE p.s.nested SET info.zip = info.zip + 1, id = id * 10");
    expect((await ok("SELECT id, info FROM p.s.nested ORDER BY id")).rows).toEqual([
      [10, { city: "Oslo", zip: 151 }],
      [20, { city: null, zip: null }],
    ]);
  });
});

describe("DELETE and UPDATE error paths leave the table unchanged", () => {
  let silt: SiltHarness;
  const { sql, ok, failsUnchanged } = client(() => silt);
  const T = "e.s.t";
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await ok("CREATE CATALOG e");
    await ok("CREATE SCHEMA e.s");
    await ok(`CREATE TABLE ${T} (id INT NOT NULL, name STRING, born DATE) USING DELTA`);
    await ok(`INSERT INTO ${T} VALUES (1, 'a', DATE'2000-01-01'), (2, 'b', NULL)`);
    await ok(
      "CREATE TABLE e.s.ledger (id INT, v STRING) USING DELTA TBLPROPERTIES ('delta.appendOnly' = 'true')",
    );
    await ok("INSERT INTO e.s.ledger VALUES (1, 'x')");
  });
  afterAll(() => silt.close());

  it("unknown columns in SET and WHERE", async () => {
    const e = await failsUnchanged(T, "UNRESOLVED_COLUMN.WITH_SUGGESTION", () =>
      sql(`UPDATE ${T} SET nmae = 'z' WHERE id = 1`),
    );
    expect(e.message).toMatch(
      /^A column, variable, or function parameter with name `nmae` cannot be resolved\. Did you mean one of the following\? \[.*`name`.*\]\.$/,
    );
    await failsUnchanged(T, "UNRESOLVED_COLUMN.WITH_SUGGESTION", () =>
      sql(`UPDATE ${T} SET name = 'z' WHERE idd = 1`),
    );
    await failsUnchanged(T, "UNRESOLVED_COLUMN.WITH_SUGGESTION", () =>
      sql(`DELETE FROM ${T} WHERE nope > 1`),
    );
    await failsUnchanged(T, "INVALID_EXTRACT_BASE_FIELD_TYPE", () =>
      sql(`UPDATE ${T} SET name.x = 'z'`),
    );
  });

  it("type mismatches: refused at analysis, or failing at run time for matched rows only", async () => {
    const e = await failsUnchanged(T, "DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION", () =>
      sql(`UPDATE ${T} SET id = DATE'2024-01-01'`),
    );
    expect(e.message).toContain("\"CAST(DATE '2024-01-01' AS INT)\"");
    await failsUnchanged(T, "CAST_INVALID_INPUT", () =>
      sql(`UPDATE ${T} SET born = 'soon' WHERE id = 1`),
    );
    // Spark evaluates the new values of matched rows only: no row matches, nothing fails.
    const none = await ok(`UPDATE ${T} SET born = 'soon' WHERE id = 99`);
    expect(none.rows).toEqual([[0]]);
    await failsUnchanged(T, "DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN", () =>
      sql(`DELETE FROM ${T} WHERE id + 1`),
    );
    await failsUnchanged(T, "DIVIDE_BY_ZERO", () =>
      sql(`UPDATE ${T} SET id = id / 0 WHERE id = 1`),
    );
  });

  it("NOT NULL columns, conflicting SET targets, aggregates", async () => {
    await failsUnchanged(T, "DELTA_NOT_NULL_CONSTRAINT_VIOLATED", () =>
      sql(`UPDATE ${T} SET id = NULL WHERE name = 'b'`),
    );
    const e = await failsUnchanged(T, "DELTA_CONFLICT_SET_COLUMN", () =>
      sql(`UPDATE ${T} SET name = 'x', name = 'y'`),
    );
    expect(e.message).toBe("There is a conflict from these SET columns: [name, name].");
    await failsUnchanged(T, "DELTA_AGGREGATION_NOT_SUPPORTED", () =>
      sql(`DELETE FROM ${T} WHERE max(id) > 1`),
    );
  });

  it("append-only tables refuse DELETE and UPDATE, even when nothing would match", async () => {
    const e = await failsUnchanged("e.s.ledger", "DELTA_CANNOT_MODIFY_APPEND_ONLY", () =>
      sql("DELETE FROM e.s.ledger WHERE id = 42"),
    );
    expect(e).toEqual({
      error_class: "DELTA_CANNOT_MODIFY_APPEND_ONLY",
      message:
        "This table is configured to only allow appends. If you would like to permit updates or deletes, use 'ALTER TABLE e.s.ledger SET TBLPROPERTIES (delta.appendOnly=false)'.",
      sqlstate: "42809",
      message_parameters: { tableName: "e.s.ledger" },
    });
    await failsUnchanged("e.s.ledger", "DELTA_CANNOT_MODIFY_APPEND_ONLY", () =>
      sql("UPDATE e.s.ledger SET v = 'y'"),
    );
    await failsUnchanged("e.s.ledger", "DELTA_CANNOT_MODIFY_APPEND_ONLY", () =>
      silt.call("POST", "/api/v1/tables/e.s.ledger/delete", {}),
    );
  });

  it("JSON routes validate their bodies", async () => {
    await failsUnchanged(T, "INVALID_REQUEST", () =>
      silt.call("POST", `/api/v1/tables/${T}/update`, { condition: "id = 1" }),
    );
    await failsUnchanged(T, "INVALID_REQUEST", () =>
      silt.call("POST", `/api/v1/tables/${T}/update`, { set: {} }),
    );
    await failsUnchanged(T, "PARSE_SYNTAX_ERROR", () =>
      silt.call("POST", `/api/v1/tables/${T}/delete`, { condition: "id = = 1" }),
    );
    await failsUnchanged(T, "INVALID_REQUEST", () =>
      silt.call("POST", `/api/v1/tables/${T}/update`, { set: { "id + 1": "2" } }),
    );
    const missing = await silt.call("POST", "/api/v1/tables/e.s.nothere/delete", {});
    expect(missing.status).toBe(404);
    expect(missing.body.error_class).toBe("TABLE_OR_VIEW_NOT_FOUND");
  });
});
