/**
 * ALTER TABLE … ADD COLUMNS / RENAME COLUMN / DROP COLUMNS / ALTER COLUMN through POST
 * /api/v1/sql: one metaData commit with Delta's history rows, column-mapping ids and physical
 * names in the log, reads across the change (old files, new rows, time travel, the plain reader
 * path), and every refusal leaving the table's version and rows unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { arrowToRows } from "../lib/data/arrow-to-json.ts";
import { commitFileName, type Metadata, parseActions } from "../lib/delta/actions.ts";
import { parseSchema, type StructField } from "../lib/delta/schema.ts";
import { loadSnapshot } from "../lib/delta/snapshot.ts";
import { readSnapshotRows } from "../lib/ops/read-files.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { sqlClient } from "./helpers/sql-client.ts";

let silt: SiltHarness;
const { ok, sql, history, failsUnchanged } = sqlClient(() => silt, { catalog: "ac", schema: "s" });

const location = async (t: string) => (await silt.ctx.catalog.getTable("ac", "s", t)).location;

/** The metaData action a published commit wrote. */
async function metadataAt(t: string, version: number): Promise<Metadata> {
  const text = new TextDecoder().decode(
    await silt.ctx.store.get(`${await location(t)}_delta_log/${commitFileName(version)}`),
  );
  const m = parseActions(text).find((a) => "metaData" in a);
  if (m === undefined || !("metaData" in m)) throw new Error(`no metaData at ${version}`);
  return m.metaData;
}

/** The metadata of the latest published snapshot. */
const currentMetadata = async (t: string): Promise<Metadata> =>
  (await loadSnapshot(silt.ctx.store, await location(t))).metadata;

/** Rows through the reader path only: the published log and the files, as any reader sees them. */
async function readerRows(t: string) {
  const snapshot = await loadSnapshot(silt.ctx.store, await location(t));
  const { schema, table } = await readSnapshotRows(silt.ctx.store, snapshot);
  return {
    names: schema.fields.map((f) => f.name),
    rows: arrowToRows(table, schema)
      .map((r) => JSON.stringify(r))
      .sort(),
  };
}

const field = (m: Metadata, name: string): StructField => {
  const f = parseSchema(m.schemaString).fields.find((x) => x.name === name);
  if (f === undefined) throw new Error(`no field ${name}`);
  return f;
};
/** Rows in schema order through the insert endpoint (SQL has no struct constructor yet). */
async function insertRows(t: string, rows: unknown[][]) {
  const res = await silt.call("POST", `/api/v1/tables/ac.s.${t}/insert`, { rows });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}
const columnNames = async (t: string) =>
  (await ok(`SELECT * FROM ${t}`)).columns.map((c) => c.name);

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await ok("CREATE CATALOG ac");
  await ok("CREATE SCHEMA ac.s");
  await ok("CREATE TABLE t (id INT, p STRING, s STRUCT<a: INT>) USING DELTA PARTITIONED BY (p)");
  await insertRows("t", [
    [1, "x", { a: 10 }],
    [2, "y", { a: 20 }],
  ]);
  await ok(
    "CREATE TABLE plain (id INT, v STRING) USING DELTA TBLPROPERTIES ('delta.columnMapping.mode' = 'none')",
  );
  await ok("INSERT INTO plain VALUES (1, 'a')");
}, 60_000);
afterAll(async () => {
  await silt?.close();
});

describe("ALTER TABLE ADD COLUMNS", () => {
  it("adds nullable columns with new ids and physical names; old rows read NULL", async () => {
    const before = (await history("t"))[0]!.version;
    const max = Number((await metadataAt("t", 0)).configuration["delta.columnMapping.maxColumnId"]);
    await ok("ALTER TABLE t ADD COLUMNS (c STRING COMMENT 'the c', b BIGINT AFTER id)");
    const [h] = await history("t");
    expect(h).toMatchObject({ version: before + 1, operation: "ADD COLUMNS" });
    expect(JSON.parse(h!.parameters.columns!)).toEqual([
      { column: { name: "c", type: "string", nullable: true, metadata: { comment: "the c" } } },
      { column: { name: "b", type: "long", nullable: true, metadata: {} }, position: "AFTER id" },
    ]);
    const m = await metadataAt("t", before + 1);
    expect(parseSchema(m.schemaString).fields.map((f) => f.name)).toEqual([
      "id",
      "b",
      "p",
      "s",
      "c",
    ]);
    expect(field(m, "c").metadata).toMatchObject({
      comment: "the c",
      "delta.columnMapping.id": max + 2,
      "delta.columnMapping.physicalName": expect.stringMatching(/^col-[0-9a-f-]{36}$/),
    });
    // Ids go in schema order, as Delta assigns them: b now precedes c.
    expect(field(m, "b").metadata["delta.columnMapping.id"]).toBe(max + 1);
    expect(m.configuration["delta.columnMapping.maxColumnId"]).toBe(String(max + 2));
    expect(m.partitionColumns).toEqual(["p"]);

    await insertRows("t", [[3, 30, "x", { a: 30 }, "new"]]);
    expect((await ok("SELECT id, b, c FROM t ORDER BY id")).rows).toEqual([
      [1, null, null],
      [2, null, null],
      [3, 30, "new"],
    ]);
    const describe = await ok("DESCRIBE TABLE t");
    expect(describe.rows).toContainEqual(["c", "string", "the c"]);
    // Time travel to before the change shows the old schema.
    expect(await columnNames(`t VERSION AS OF ${before}`)).toEqual(["id", "p", "s"]);
  });

  it("adds a field into a struct, the single-column form, and FIRST", async () => {
    await ok("ALTER TABLE t ADD COLUMN s.z STRING");
    const [h] = await history("t");
    expect(JSON.parse(h!.parameters.columns!)[0].column.name).toBe("s.z");
    await ok("ALTER TABLE t ADD COLUMN f INT FIRST");
    expect(await columnNames("t")).toEqual(["f", "id", "b", "p", "s", "c"]);
    const m = await metadataAt("t", (await history("t"))[0]!.version);
    const s = field(m, "s");
    expect(s.type).toMatchObject({
      fields: [
        { name: "a" },
        { name: "z", metadata: { "delta.columnMapping.physicalName": expect.any(String) } },
      ],
    });
    expect((await ok("SELECT id, s FROM t WHERE id = 1")).rows).toEqual([[1, { a: 10, z: null }]]);
  });

  it("refuses NOT NULL, existing names, unknown parents and positions, changing nothing", async () => {
    const notNull = await failsUnchanged("t", "DELTA_OPERATION_NOT_ALLOWED", () =>
      sql("ALTER TABLE t ADD COLUMNS (n INT NOT NULL)"),
    );
    expect(notNull.message).toBe(
      "Operation not allowed: `NOT NULL in ALTER TABLE ADD COLUMNS` is not supported for Delta tables",
    );
    const exists = await failsUnchanged("t", "FIELDS_ALREADY_EXISTS", () =>
      sql("ALTER TABLE t ADD COLUMNS (x INT, ID STRING)"),
    );
    expect(exists.message).toContain("Cannot add column, because `ID` already exists");
    await failsUnchanged("t", "COLUMN_ALREADY_EXISTS", () =>
      sql("ALTER TABLE t ADD COLUMNS (x INT, X INT)"),
    );
    await failsUnchanged("t", "UNRESOLVED_COLUMN.WITH_SUGGESTION", () =>
      sql("ALTER TABLE t ADD COLUMN nope.x INT"),
    );
    await failsUnchanged("t", "DELTA_ADD_COLUMN_PARENT_NOT_STRUCT", () =>
      sql("ALTER TABLE t ADD COLUMN id.x INT"),
    );
    await failsUnchanged("t", "FIELD_NOT_FOUND", () =>
      sql("ALTER TABLE t ADD COLUMN x INT AFTER nope"),
    );
    await failsUnchanged("t", "ALTER_TABLE_COLUMN_DESCRIPTOR_DUPLICATE", () =>
      sql("ALTER TABLE t ADD COLUMN x INT COMMENT 'a' COMMENT 'b'"),
    );
  });

  it("without column mapping adds the column under its own name", async () => {
    await ok("ALTER TABLE plain ADD COLUMN w DOUBLE");
    const m = await metadataAt("plain", (await history("plain"))[0]!.version);
    expect(field(m, "w")).toEqual({ name: "w", type: "double", nullable: true, metadata: {} });
    expect(m.configuration).not.toHaveProperty("delta.columnMapping.maxColumnId");
    await ok("INSERT INTO plain VALUES (2, 'b', 2.5)");
    expect((await ok("SELECT * FROM plain ORDER BY id")).rows).toEqual([
      [1, "a", null],
      [2, "b", 2.5],
    ]);
  });
});

describe("ALTER TABLE RENAME COLUMN", () => {
  it("renames only the logical name; old files still read; partition columns follow", async () => {
    const before = await currentMetadata("t");
    await ok("ALTER TABLE t RENAME COLUMN C TO label");
    const [h] = await history("t");
    expect(h).toMatchObject({ operation: "RENAME COLUMN" });
    expect(h!.parameters).toEqual({ oldColumnPath: "c", newColumnPath: "label" });
    const after = await metadataAt("t", h!.version);
    expect(field(after, "label").metadata).toEqual(field(before, "c").metadata);
    expect((await ok("SELECT id, label FROM t WHERE id = 3")).rows).toEqual([[3, "new"]]);
    const old = await sql("SELECT c FROM t");
    expect(old.status).toBe(400);
    expect(old.body.error_class).toBe("UNRESOLVED_COLUMN.WITH_SUGGESTION");

    await ok("ALTER TABLE t RENAME COLUMN p TO part");
    const m = await metadataAt("t", (await history("t"))[0]!.version);
    expect(m.partitionColumns).toEqual(["part"]);
    expect((await ok("SELECT id FROM t WHERE part = 'y'")).rows).toEqual([[2]]);
    await ok("ALTER TABLE t RENAME COLUMN s.a TO aa");
    expect((await history("t"))[0]!.parameters).toEqual({
      oldColumnPath: "s.a",
      newColumnPath: "s.aa",
    });
    expect((await ok("SELECT s.aa FROM t WHERE id = 2")).rows).toEqual([[20]]);
    await insertRows("t", [[null, 4, null, "z", { aa: 40, z: "q" }, "four"]]);
    expect((await ok("SELECT id, part, s.aa FROM t WHERE id >= 3 ORDER BY id")).rows).toEqual([
      [3, "x", 30],
      [4, "z", 40],
    ]);
  });

  it("refuses without column mapping, onto an existing name, or an unknown column", async () => {
    const plain = await failsUnchanged("plain", "DELTA_UNSUPPORTED_RENAME_COLUMN", () =>
      sql("ALTER TABLE plain RENAME COLUMN v TO w2"),
    );
    expect(plain.message).toContain("Column rename is not supported for your Delta table.");
    await failsUnchanged("t", "FIELDS_ALREADY_EXISTS", () =>
      sql("ALTER TABLE t RENAME COLUMN label TO ID"),
    );
    await failsUnchanged("t", "UNRESOLVED_COLUMN.WITH_SUGGESTION", () =>
      sql("ALTER TABLE t RENAME COLUMN nope TO x"),
    );
  });
});

describe("ALTER TABLE DROP COLUMNS", () => {
  it("drops columns; SELECT * lacks them; re-adding the name gives a new physical column", async () => {
    const dropped = await currentMetadata("t");
    const old = field(dropped, "label").metadata;
    await ok("ALTER TABLE t DROP COLUMNS (label, f)");
    const [h] = await history("t");
    expect(h).toMatchObject({ operation: "DROP COLUMNS" });
    expect(JSON.parse(h!.parameters.columns!)).toEqual(["label", "f"]);
    expect(await columnNames("t")).toEqual(["id", "b", "part", "s"]);
    const m = await metadataAt("t", h!.version);
    expect(m.configuration["delta.columnMapping.maxColumnId"]).toBe(
      dropped.configuration["delta.columnMapping.maxColumnId"],
    );

    await ok("ALTER TABLE t ADD COLUMN label STRING");
    const readded = field(await metadataAt("t", (await history("t"))[0]!.version), "label");
    expect(readded.metadata["delta.columnMapping.id"]).toBeGreaterThan(
      Number(dropped.configuration["delta.columnMapping.maxColumnId"]),
    );
    expect(readded.metadata["delta.columnMapping.physicalName"]).not.toBe(
      old["delta.columnMapping.physicalName"],
    );
    expect((await ok("SELECT id, label FROM t WHERE id = 3")).rows).toEqual([[3, null]]);
    await ok("ALTER TABLE t DROP COLUMN s.z");
    expect((await ok("SELECT s FROM t WHERE id = 1")).rows).toEqual([[{ aa: 10 }]]);
    // DROP COLUMN IF EXISTS of absent columns commits nothing.
    const version = (await history("t"))[0]!.version;
    await ok("ALTER TABLE t DROP COLUMN IF EXISTS nope");
    expect((await history("t"))[0]!.version).toBe(version);
  });

  it("reads correctly through the reader path after the changes", async () => {
    const { names, rows } = await readerRows("t");
    expect(names).toEqual(["id", "b", "part", "s", "label"]);
    expect(rows).toEqual([
      '[1,null,"x",{"aa":10},null]',
      '[2,null,"y",{"aa":20},null]',
      '[3,30,"x",{"aa":30},null]',
      '[4,null,"z",{"aa":40},null]',
    ]);
  });

  it("refuses partition columns, the last field, absent columns and unmapped tables", async () => {
    const part = await failsUnchanged("t", "DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN", () =>
      sql("ALTER TABLE t DROP COLUMN part"),
    );
    expect(part.message).toBe("Dropping partition columns (part) is not allowed.");
    await failsUnchanged("t", "DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA", () =>
      sql("ALTER TABLE t DROP COLUMN s.aa"),
    );
    await failsUnchanged("t", "UNRESOLVED_COLUMN.WITH_SUGGESTION", () =>
      sql("ALTER TABLE t DROP COLUMNS (b, nope)"),
    );
    await failsUnchanged("plain", "DELTA_UNSUPPORTED_DROP_COLUMN", () =>
      sql("ALTER TABLE plain DROP COLUMN v"),
    );
  });
});

describe("ALTER TABLE ALTER COLUMN", () => {
  it("sets a comment (CHANGE COLUMN) and DROP NOT NULL lets NULLs in", async () => {
    await ok("ALTER TABLE t ALTER COLUMN id COMMENT 'the key'");
    const [h] = await history("t");
    expect(h).toMatchObject({ operation: "CHANGE COLUMN" });
    const logged = JSON.parse(h!.parameters.column!);
    expect(logged).toMatchObject({
      name: "id",
      type: "integer",
      nullable: true,
      metadata: { comment: "the key", "delta.columnMapping.id": 1 },
    });
    expect((await ok("DESCRIBE TABLE t")).rows).toContainEqual(["id", "int", "the key"]);

    await ok("CREATE TABLE nn (k INT NOT NULL, v STRING) USING DELTA");
    await ok("INSERT INTO nn VALUES (1, 'a')");
    expect((await sql("INSERT INTO nn VALUES (NULL, 'b')")).status).toBe(400);
    await ok("ALTER TABLE nn CHANGE COLUMN k DROP NOT NULL");
    expect(JSON.parse((await history("nn"))[0]!.parameters.column!)).toMatchObject({
      name: "k",
      nullable: true,
    });
    await ok("INSERT INTO nn VALUES (NULL, 'b')");
    expect((await ok("SELECT * FROM nn ORDER BY v")).rows).toEqual([
      [1, "a"],
      [null, "b"],
    ]);
    await failsUnchanged("nn", "UNRESOLVED_COLUMN.WITH_SUGGESTION", () =>
      sql("ALTER TABLE nn ALTER COLUMN nope COMMENT 'x'"),
    );
    await failsUnchanged("nn", "PARSE_SYNTAX_ERROR", () =>
      sql("ALTER TABLE nn ALTER COLUMN k SET NOT NULL"),
    );
  });
});
