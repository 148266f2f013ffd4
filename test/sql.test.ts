/**
 * The SQL endpoint end to end: statements from the seeds run verbatim through POST /api/v1/sql,
 * with the results the seeds print, plus the query features and errors of the SQL issue.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

describe("POST /api/v1/sql", () => {
  let silt: SiltHarness;
  const sql = async (statement: string, extra: Record<string, unknown> = {}) => {
    const res = await silt.call("POST", "/api/v1/sql", { statement, ...extra });
    return res;
  };
  const ok = async (statement: string, extra: Record<string, unknown> = {}) => {
    const res = await sql(statement, extra);
    expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
    return res.body as {
      columns: { name: string; type: string }[];
      rows: unknown[][];
      version?: number;
      numAffectedRows?: number;
    };
  };
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
  });
  afterAll(() => silt.close());

  describe("seed 002: read and write catalog-managed Delta tables", () => {
    it("creates inventory.stock.items and refuses inventory.stock.returns", async () => {
      await ok("CREATE CATALOG inventory");
      await ok("CREATE SCHEMA inventory.stock");
      // seed 002, "Create a managed table"
      await ok(`
    CREATE TABLE inventory.stock.items (
        sku STRING,
        qty INT
    ) USING DELTA
`);
      // seed 002, "To list a table's protocol versions and features"
      const detail = await ok(`
        DESCRIBE DETAIL inventory.stock.items
    `);
      const col = (n: string) => detail.columns.findIndex((c) => c.name === n);
      expect(detail.rows[0][col("minReaderVersion")]).toBe(3);
      expect(detail.rows[0][col("minWriterVersion")]).toBe(7);
      expect(detail.rows[0][col("tableFeatures")]).toEqual(
        expect.arrayContaining([
          "catalogManaged",
          "deletionVectors",
          "v2Checkpoint",
          "vacuumProtocolCheck",
          "inCommitTimestamp",
        ]),
      );
      // seed 002, "A create that turns off deletion vectors fails"
      const res = await sql(`
        CREATE TABLE inventory.stock.returns (sku STRING, qty INT)
        USING DELTA
        TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')
    `);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        "Cannot create table inventory.stock.returns: catalog requires table property 'delta.enableDeletionVectors'='true' but the caller supplied 'delta.enableDeletionVectors'='false'. Remove the conflicting TBLPROPERTIES entry and retry.",
      );
      const tables = await ok("SHOW TABLES IN inventory.stock");
      expect(tables.rows.map((r) => r[1])).toEqual(["items"]);
    });

    it("inserts, reads ordered, and reads VERSION AS OF 1", async () => {
      // seed 002, "Append rows with INSERT INTO"
      const ins = await ok(`
    INSERT INTO inventory.stock.items VALUES
        ('apple', 10),
        ('pear', 4),
        ('plum', 0)
`);
      expect(ins.version).toBe(1);
      // seed 002, "Query the table by its three-part name" (before UPDATE/DELETE: all three rows)
      const read = await ok(`
    SELECT sku, qty
    FROM inventory.stock.items
    ORDER BY sku
`);
      expect(read.columns).toEqual([
        { name: "sku", type: "string" },
        { name: "qty", type: "int" },
      ]);
      expect(read.rows).toEqual([
        ["apple", 10],
        ["pear", 4],
        ["plum", 0],
      ]);
      await ok("INSERT INTO inventory.stock.items VALUES ('fig', 7)");
      // seed 002, "To query the table as it was at an earlier version"
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
    });

    it("drops the table", async () => {
      // seed 002, "Drop the table in Spark"
      await ok("DROP TABLE inventory.stock.items");
      const res = await sql("SELECT * FROM inventory.stock.items");
      expect(res.status).toBe(404);
      expect(res.body.error_class).toBe("TABLE_OR_VIEW_NOT_FOUND");
    });
  });

  it("answers a statement too deep to evaluate with a clear 400, and stays up", async () => {
    const chain = Array.from({ length: 10_000 }, (_, i) => `${i} = 1`).join(" OR ");
    const res = await sql(`SELECT ${chain} AS x`);
    expect([res.status, res.body.error_class, res.body.sqlstate]).toEqual([
      400,
      "STATEMENT_TOO_COMPLEX",
      "54001",
    ]);
    expect(res.body.message).toContain("IN (…)");
    expect((await ok("SELECT 1 = 1 OR 2 = 1 AS x")).rows).toEqual([[true]]);
  });

  describe("conf and SET on the stateless endpoint", () => {
    it("refuses settings Silt would ignore and values they do not take, changing nothing", async () => {
      await ok("CREATE CATALOG IF NOT EXISTS cf");
      await ok("CREATE SCHEMA IF NOT EXISTS cf.s");
      await ok("CREATE TABLE cf.s.t (id INT) USING DELTA");
      const insert = "INSERT INTO cf.s.t VALUES (1)";
      for (const [conf, errorClass, says] of [
        [
          { "spark.sql.ansi.enabled": "false" },
          "UNSUPPORTED_FEATURE.CONF",
          "spark.sql.ansi.enabled",
        ],
        [
          { "spark.sql.sources.partitionOverwriteModes": "dynamic" },
          "UNSUPPORTED_FEATURE.CONF",
          "Did you mean spark.sql.sources.partitionOverwriteMode?",
        ],
        [
          { "spark.sql.sources.partitionOverwriteMode": "dinamic" },
          "INVALID_CONF_VALUE",
          "It takes one of: static, dynamic.",
        ],
      ] as const) {
        const res = await sql(insert, { conf });
        expect([res.status, res.body.error_class], JSON.stringify(conf)).toEqual([400, errorClass]);
        expect(res.body.message).toContain(says);
      }
      expect((await ok("SELECT count(*) FROM cf.s.t")).rows).toEqual([[0]]);
      // Honoured settings pass, in any case.
      await ok(insert, { conf: { "spark.sql.sources.partitionOverwriteMode": "DYNAMIC" } });
      expect((await ok("SELECT count(*) FROM cf.s.t")).rows).toEqual([[1]]);
    });

    it("reports the request's settings with SET and refuses to set one, pointing to conf", async () => {
      const conf = { "spark.databricks.delta.schema.autoMerge.enabled": "true" };
      expect((await ok("SET", { conf })).rows).toEqual([
        ["spark.databricks.delta.schema.autoMerge.enabled", "true"],
      ]);
      expect(
        (await ok("SET spark.databricks.delta.schema.autoMerge.enabled", { conf })).rows,
      ).toEqual([["spark.databricks.delta.schema.autoMerge.enabled", "true"]]);
      expect((await ok("SET spark.sql.sources.partitionOverwriteMode")).rows).toEqual([
        ["spark.sql.sources.partitionOverwriteMode", "<undefined>"],
      ]);
      for (const statement of [
        "SET spark.sql.sources.partitionOverwriteMode = dynamic",
        "SET TIME ZONE 'UTC'",
      ]) {
        const res = await sql(statement);
        expect([res.status, res.body.error_class], statement).toEqual([
          400,
          "UNSUPPORTED_FEATURE.SET",
        ]);
        expect(res.body.message).toContain('"conf": {');
      }
    });
  });

  describe("ALTER TABLE … RENAME TO", () => {
    it("renames within the schema: same rows and history, the old name gone", async () => {
      await ok("CREATE CATALOG IF NOT EXISTS ren");
      await ok("CREATE SCHEMA IF NOT EXISTS ren.s");
      await ok("CREATE SCHEMA IF NOT EXISTS ren.t");
      await ok("CREATE TABLE ren.s.a (id INT, v STRING) USING DELTA");
      await ok("INSERT INTO ren.s.a VALUES (1, 'x'), (2, 'y')");
      await ok("CREATE TABLE ren.s.taken (id INT) USING DELTA");
      const rows = (await ok("SELECT * FROM ren.s.a ORDER BY id")).rows;
      const history = (await ok("DESCRIBE HISTORY ren.s.a")).rows;

      for (const [statement, errorClass, status] of [
        ["ALTER TABLE ren.s.a RENAME TO ren.t.a", "CANNOT_RENAME_ACROSS_SCHEMA", 400],
        ["ALTER TABLE ren.s.a RENAME TO taken", "TABLE_OR_VIEW_ALREADY_EXISTS", 409],
        ["ALTER TABLE ren.s.nope RENAME TO b", "TABLE_OR_VIEW_NOT_FOUND", 404],
      ] as const) {
        const res = await sql(statement);
        expect([res.status, res.body.error_class], statement).toEqual([status, errorClass]);
      }
      expect((await ok("SELECT * FROM ren.s.a ORDER BY id")).rows).toEqual(rows);
      expect((await sql("SELECT * FROM ren.t.a")).status).toBe(404);

      expect((await ok("ALTER TABLE ren.s.a RENAME TO b")).rows).toEqual([]);
      expect((await ok("SELECT * FROM ren.s.b ORDER BY id")).rows).toEqual(rows);
      expect((await ok("DESCRIBE HISTORY ren.s.b")).rows).toEqual(history);
      const old = await sql("SELECT * FROM ren.s.a");
      expect([old.status, old.body.error_class]).toEqual([404, "TABLE_OR_VIEW_NOT_FOUND"]);
      // Qualified with its own catalog and schema, and under USE-style defaults.
      await ok("ALTER TABLE ren.s.b RENAME TO ren.s.c");
      await ok("ALTER TABLE c RENAME TO d", { catalog: "ren", schema: "s" });
      await ok("INSERT INTO ren.s.d VALUES (3, 'z')");
      expect((await ok("SELECT count(*) FROM ren.s.d")).rows).toEqual([[3]]);
      expect((await ok("SHOW TABLES IN ren.s")).rows.map((r) => r[1])).toEqual(["d", "taken"]);
    });
  });

  describe("seed 003: create and insert (the statements this issue covers)", () => {
    it("creates the database and table, inserts with date strings, and reads back", async () => {
      await ok("CREATE CATALOG IF NOT EXISTS main");
      await ok("CREATE DATABASE IF NOT EXISTS retail;", { catalog: "main" });
      const defaults = { catalog: "main", schema: "retail" };
      await ok(
        `CREATE TABLE IF NOT EXISTS customers (
  customer_id INT,
  name STRING,
  email STRING,
  signup_date DATE
) USING DELTA`,
        defaults,
      );
      await ok(
        `INSERT INTO customers VALUES
  (1, 'Alice', 'alice@example.com', '2025-01-10'),
  (2, 'Bob', 'bob@example.com', '2025-02-14');`,
        defaults,
      );
      const rows = await ok("SELECT * FROM customers ORDER BY customer_id", defaults);
      expect(rows.columns.map((c) => c.type)).toEqual(["int", "string", "string", "date"]);
      expect(rows.rows).toEqual([
        [1, "Alice", "alice@example.com", "2025-01-10"],
        [2, "Bob", "bob@example.com", "2025-02-14"],
      ]);
      // Running the CREATE again is a no-op with IF NOT EXISTS.
      await ok("CREATE TABLE IF NOT EXISTS customers (customer_id INT) USING DELTA", defaults);
      expect((await ok("SELECT count(*) FROM customers", defaults)).rows).toEqual([[2]]);
    });
  });

  describe("queries", () => {
    beforeAll(async () => {
      await ok("CREATE SCHEMA IF NOT EXISTS main.q");
      await ok(
        "CREATE TABLE main.q.orders (order_id INT, customer STRING, amount DECIMAL(5,2), day DATE) USING DELTA PARTITIONED BY (day)",
      );
      await ok(`INSERT INTO main.q.orders VALUES
        (1, 'ada', 9.50, DATE'2026-10-01'),
        (2, 'grace', 20.00, DATE'2026-10-01'),
        (3, 'linus', 3.25, DATE'2026-10-02')`);
      await ok(`INSERT INTO main.q.orders VALUES
        (4, 'ada', 12.00, DATE'2026-10-03'),
        (5, NULL, NULL, DATE'2026-10-03')`);
    });
    const q = (s: string) => ok(s, { catalog: "main", schema: "q" });

    it("SELECT * FROM VALUES … AS t(…) types literals as Spark does (seed 000)", async () => {
      const res = await q(`SELECT * FROM VALUES
        (1, 'ada',   9.50,  DATE'2026-10-01'),
        (2, 'grace', 20.00, DATE'2026-10-01'),
        (3, 'linus', 3.25,  DATE'2026-10-02')
    AS t(order_id, customer, amount, day)`);
      expect(res.columns).toEqual([
        { name: "order_id", type: "int" },
        { name: "customer", type: "string" },
        { name: "amount", type: "decimal(4,2)" },
        { name: "day", type: "date" },
      ]);
      expect(res.rows[0]).toEqual([1, "ada", "9.50", "2026-10-01"]);
    });

    it("filters, projects, orders and limits", async () => {
      const res = await q(
        "SELECT order_id, amount * 2 AS doubled, upper(customer) FROM orders WHERE day >= '2026-10-02' ORDER BY order_id DESC LIMIT 2",
      );
      expect(res.columns).toEqual([
        { name: "order_id", type: "int" },
        { name: "doubled", type: "decimal(7,2)" },
        { name: "upper(customer)", type: "string" },
      ]);
      expect(res.rows).toEqual([
        [5, null, null],
        [4, "24.00", "ADA"],
      ]);
      const nulls = await q("SELECT order_id FROM orders ORDER BY customer NULLS LAST, order_id");
      expect(nulls.rows.map((r) => r[0])).toEqual([1, 4, 2, 3, 5]);
      const three = await q(
        "SELECT order_id FROM orders WHERE customer IN ('ada', 'linus') AND amount BETWEEN 3 AND 10 ORDER BY 1",
      );
      expect(three.rows).toEqual([[1], [3]]);
      const like = await q("SELECT customer FROM orders WHERE customer LIKE 'g%'");
      expect(like.rows).toEqual([["grace"]]);
      const isnull = await q("SELECT order_id FROM orders WHERE customer IS NULL");
      expect(isnull.rows).toEqual([[5]]);
      const cased = await q(
        "SELECT order_id, CASE WHEN amount > 10 THEN 'big' WHEN amount IS NULL THEN 'none' ELSE 'small' END AS size FROM orders ORDER BY order_id",
      );
      expect(cased.rows.map((r) => r[1])).toEqual(["small", "big", "small", "big", "none"]);
    });

    it("counts and aggregates", async () => {
      expect((await q("SELECT count(*) FROM orders")).rows).toEqual([[5]]);
      const agg = await q(
        "SELECT count(customer) AS n, sum(amount), min(day), max(amount), count(DISTINCT customer) FROM orders",
      );
      expect(agg.rows).toEqual([[4, "44.75", "2026-10-01", "20.00", 3]]);
      const grouped = await q(
        "SELECT customer, count(*) AS n, sum(amount) AS total FROM orders GROUP BY customer HAVING count(*) >= 1 ORDER BY customer NULLS FIRST",
      );
      expect(grouped.rows).toEqual([
        [null, 1, null],
        ["ada", 2, "21.50"],
        ["grace", 1, "20.00"],
        ["linus", 1, "3.25"],
      ]);
      expect((await q("SELECT count(*) FROM orders WHERE order_id > 100")).rows).toEqual([[0]]);
    });

    it("reads earlier versions by version and timestamp, and DESCRIBE HISTORY with LIMIT", async () => {
      expect((await q("SELECT count(*) FROM orders VERSION AS OF 1")).rows).toEqual([[3]]);
      const history = await q("DESCRIBE HISTORY orders");
      expect(history.rows.map((r) => r[0])).toEqual([2, 1, 0]);
      const ts = history.rows[1][1] as string;
      expect((await q(`SELECT count(*) FROM orders TIMESTAMP AS OF '${ts}'`)).rows).toEqual([[3]]);
      expect((await q("DESCRIBE HISTORY orders LIMIT 1")).rows).toHaveLength(1);
    });

    it("INSERT … SELECT and column lists", async () => {
      await q("CREATE TABLE copy (order_id INT, customer STRING) USING DELTA");
      const res = await q(
        "INSERT INTO copy SELECT order_id, customer FROM orders WHERE order_id <= 2",
      );
      expect(res.numAffectedRows).toBe(2);
      await q("INSERT INTO copy (customer, order_id) VALUES ('zed', 9)");
      const rows = await q("SELECT * FROM copy ORDER BY order_id");
      expect(rows.rows).toEqual([
        [1, "ada"],
        [2, "grace"],
        [9, "zed"],
      ]);
      const described = await q("DESCRIBE TABLE orders");
      expect(described.rows.slice(0, 4)).toEqual([
        ["order_id", "int", null],
        ["customer", "string", null],
        ["amount", "decimal(5,2)", null],
        ["day", "date", null],
      ]);
    });

    it("prunes files by partition values and statistics", async () => {
      const t = await silt.call("GET", "/api/v1/tables/main.q.orders/detail");
      const gets: string[] = [];
      const store = silt.ctx.store;
      const original = store.get.bind(store);
      store.get = async (key: string) => {
        gets.push(key);
        return original(key);
      };
      try {
        const res = await q("SELECT order_id FROM orders WHERE day = DATE'2026-10-02'");
        expect(res.rows).toEqual([[3]]);
      } finally {
        store.get = original;
      }
      const parquetReads = gets.filter((k) => k.endsWith(".parquet"));
      expect(t.body.rows[0][9]).toBe(3);
      expect(parquetReads).toHaveLength(1);
    });
  });

  describe("errors change nothing", () => {
    const q = (s: string) => sql(s, { catalog: "main", schema: "q" });
    const version = async () => (await ok("DESCRIBE HISTORY main.q.orders LIMIT 1")).rows[0][0];

    it.each([
      ["SELEC * FROM orders", "PARSE_SYNTAX_ERROR", 400],
      ["SELECT nope FROM orders", "UNRESOLVED_COLUMN.WITH_SUGGESTION", 400],
      ["SELECT frobnicate(order_id) FROM orders", "UNRESOLVED_ROUTINE", 400],
      ["SELECT * FROM nowhere", "TABLE_OR_VIEW_NOT_FOUND", 404],
      ["SELECT order_id + 'x' FROM orders", "CAST_INVALID_INPUT", 400],
      ["INSERT INTO orders VALUES (1, 'x')", "DELTA_INSERT_COLUMN_ARITY_MISMATCH", 400],
      [
        "INSERT INTO orders VALUES (1, 'x', 1.0, DATE'2026-10-01', 5)",
        "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS",
        400,
      ],
      ["INSERT INTO orders VALUES ('one', 'x', 1.0, DATE'2026-10-01')", "CAST_INVALID_INPUT", 400],
      ["CREATE TABLE t2 (a INT)", "INVALID_PARAMETER_VALUE", 400],
      ["SELECT * FROM orders VERSION AS OF 42", "DELTA_VERSION_NOT_FOUND", 400],
    ])("%s → %s", async (statement, errorClass, status) => {
      const before = await version();
      const res = await q(statement);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error_class).toBe(errorClass);
      expect(await version()).toBe(before);
      expect((await ok("SELECT count(*) FROM main.q.orders")).rows).toEqual([[5]]);
    });

    it("refuses a LIMIT or OFFSET that is not a constant INT as Spark does", async () => {
      const values = "SELECT * FROM VALUES (1), (2), (3) AS v(a)";
      // Spark 4.1's classes, messages and messageParameters for each (checkLimitLikeClause).
      const typeError = (name: string, expr: string, type: string) => ({
        error_class: "INVALID_LIMIT_LIKE_EXPRESSION.DATA_TYPE",
        message: `The limit like expression "${expr}" is invalid. The ${name} expression must be integer type, but got "${type}".`,
        message_parameters: { name, expr: `"${expr}"`, dataType: `"${type}"` },
      });
      const cases: [string, Record<string, unknown>][] = [
        ["LIMIT 'a'", typeError("limit", "a", "STRING")],
        ["LIMIT '2'", typeError("limit", "2", "STRING")],
        ["LIMIT 1.5", typeError("limit", "1.5", "DECIMAL(2,1)")],
        ["LIMIT 2L", typeError("limit", "2", "BIGINT")],
        ["LIMIT 3000000000", typeError("limit", "3000000000", "BIGINT")],
        ["LIMIT NULL", typeError("limit", "NULL", "VOID")],
        ["OFFSET 'a'", typeError("offset", "a", "STRING")],
        ["OFFSET 1.5", typeError("offset", "1.5", "DECIMAL(2,1)")],
        ["OFFSET 3000000000", typeError("offset", "3000000000", "BIGINT")],
        ["OFFSET NULL", typeError("offset", "NULL", "VOID")],
        [
          "LIMIT -1",
          {
            error_class: "INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE",
            message:
              'The limit like expression "-1" is invalid. The limit expression must be equal to or greater than 0, but got -1.',
            message_parameters: { name: "limit", expr: '"-1"', v: "-1" },
          },
        ],
        [
          "LIMIT 1 OFFSET -1",
          {
            error_class: "INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE",
            message:
              'The limit like expression "-1" is invalid. The offset expression must be equal to or greater than 0, but got -1.',
            message_parameters: { name: "offset", expr: '"-1"', v: "-1" },
          },
        ],
        [
          "LIMIT CAST(NULL AS INT)",
          {
            error_class: "INVALID_LIMIT_LIKE_EXPRESSION.IS_NULL",
            message:
              'The limit like expression "CAST(NULL AS INT)" is invalid. The evaluated limit expression must not be null.',
            message_parameters: { name: "limit", expr: '"CAST(NULL AS INT)"' },
          },
        ],
        [
          "LIMIT a",
          {
            error_class: "INVALID_LIMIT_LIKE_EXPRESSION.IS_UNFOLDABLE",
            message:
              'The limit like expression "a" is invalid. The limit expression must evaluate to a constant value.',
            message_parameters: { name: "limit", expr: '"a"' },
          },
        ],
      ];
      for (const [clause, expected] of cases) {
        const res = await sql(`${values} ${clause}`);
        expect(res.status, clause).toBe(400);
        expect(res.body, clause).toEqual({ ...expected, sqlstate: "42K0E" });
      }
      // What Spark takes: an INT constant, folded (1 + 1), up to 2147483647.
      expect((await ok(`${values} LIMIT 1 + 1`)).rows).toEqual([[1], [2]]);
      expect((await ok(`${values} LIMIT 2147483647 OFFSET 2`)).rows).toEqual([[3]]);
      // A name that is not a column is still unresolved, not "not constant".
      expect((await sql(`${values} LIMIT b`)).body.error_class).toBe(
        "UNRESOLVED_COLUMN.WITH_SUGGESTION",
      );
      // Refused statements that write nothing; one that writes refuses before committing.
      const before = await version();
      const ins = await q("INSERT INTO orders SELECT * FROM orders LIMIT 'a'");
      expect(ins.body.error_class).toBe("INVALID_LIMIT_LIKE_EXPRESSION.DATA_TYPE");
      expect(await version()).toBe(before);
      expect((await ok("SELECT count(*) FROM main.q.orders")).rows).toEqual([[5]]);
    });

    it("reports the syntax error position and token", async () => {
      const res = await q("SELECT order_id FROM orders WHERE");
      expect(res.body.error_class).toBe("PARSE_SYNTAX_ERROR");
      expect(res.body.message).toMatch(/end of input/);
      const tok = await q("SELECT * FROM orders ORDER order_id");
      expect(tok.body.message).toMatch(/'order_id'|'ORDER'/);
    });
  });
});
