import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decimal } from "../lib/delta/schema.ts";
import { SiltError } from "../lib/errors.ts";
import type { Expr, FromItem, Query, Statement } from "../lib/expr/ast.ts";
import { tokenize } from "../lib/expr/lexer.ts";
import { parseDataType, parseExpression, parseQuery } from "../lib/expr/parse.ts";
import { MAX_DEPTH } from "../lib/expr/parser-base.ts";
import { parseStatement } from "../lib/sql/statement-parser.ts";

/** Narrows a statement to one kind, failing the test otherwise. */
function stmt<K extends Statement["kind"]>(sql: string, kind: K): Statement & { kind: K } {
  const s = parseStatement(sql);
  expect(s.kind).toBe(kind);
  return s as Statement & { kind: K };
}

function select(q: Query | undefined): Query & { kind: "select" } {
  expect(q?.kind).toBe("select");
  return q as Query & { kind: "select" };
}

function queryOf(sql: string): Query & { kind: "select" } {
  return select(stmt(sql, "query").query);
}

/** The SiltError a call throws (fails the test if it returns or throws anything else). */
function errorOf(fn: () => unknown): SiltError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SiltError);
    return e as SiltError;
  }
  throw new Error("expected a SiltError, got a result");
}

/** Drops positions so trees compare by shape. */
function shape(x: unknown): unknown {
  return JSON.parse(
    JSON.stringify(x, (k, v) => (k === "pos" ? undefined : typeof v === "bigint" ? `${v}n` : v)),
  );
}

const lit = (value: unknown, type: unknown) => ({ kind: "literal", value, type });
const col = (...name: string[]) => ({ kind: "column", name });

// ---------------------------------------------------------------------------------------------
// Seeds: every SQL statement in ../shared/seeds/*.txt, verbatim

describe("seed 000 (replace or overwrite a managed Delta table)", () => {
  it("CREATE TABLE … USING DELTA AS SELECT * FROM VALUES … AS t(…)", () => {
    // seeds/000_9c0f6036d605100b.txt
    const s = stmt(
      `
    CREATE TABLE sales.orders USING DELTA AS
    SELECT * FROM VALUES
        (1, 'ada',   9.50,  DATE'2026-10-01'),
        (2, 'grace', 20.00, DATE'2026-10-01'),
        (3, 'linus', 3.25,  DATE'2026-10-02')
    AS t(order_id, customer, amount, day)
`,
      "createTable",
    );
    expect(s.name).toEqual(["sales", "orders"]);
    expect(s.mode).toBe("create");
    expect(s.using).toBe("DELTA");
    expect(s.partitionedBy).toEqual([]);
    expect(s.columns).toBeUndefined();
    const q = select(s.asQuery);
    expect(shape(q.items)).toEqual([{ expr: { kind: "star" } }]);
    const from = q.from as FromItem & { kind: "values" };
    expect(from.kind).toBe("values");
    expect(from.alias).toBe("t");
    expect(from.columns).toEqual(["order_id", "customer", "amount", "day"]);
    expect(from.rows).toHaveLength(3);
    expect(shape(from.rows[0])).toEqual([
      lit(1, "integer"),
      lit("ada", "string"),
      lit("9.50", decimal(3, 2)),
      lit("2026-10-01", "date"),
    ]);
    expect(shape(from.rows[1][2])).toEqual(lit("20.00", decimal(4, 2)));
  });

  it("CREATE OR REPLACE TABLE … PARTITIONED BY (day) AS SELECT *, amount * 0.20 AS tax", () => {
    // seeds/000_9c0f6036d605100b.txt
    const s = stmt(
      `
    CREATE OR REPLACE TABLE sales.orders USING DELTA
    PARTITIONED BY (day) AS
    SELECT *, amount * 0.20 AS tax FROM sales.orders
`,
      "createTable",
    );
    expect(s.mode).toBe("createOrReplace");
    expect(s.partitionedBy).toEqual(["day"]);
    const q = select(s.asQuery);
    expect(shape(q.items)).toEqual([
      { expr: { kind: "star" } },
      {
        expr: { kind: "binary", op: "*", left: col("amount"), right: lit("0.20", decimal(2, 2)) },
        alias: "tax",
      },
    ]);
    expect(shape(q.from)).toEqual({ kind: "table", name: ["sales", "orders"] });
  });

  it("INSERT OVERWRITE … VALUES (both the full and the dynamic overwrite)", () => {
    // seeds/000_9c0f6036d605100b.txt
    const s = stmt(
      `
    INSERT OVERWRITE sales.orders VALUES
        (4, 'ada',   12.00, DATE'2026-10-03', 2.40),
        (5, 'grace', 8.00,  DATE'2026-10-03', 1.60),
        (6, 'linus', 5.00,  DATE'2026-10-04', 1.00)
`,
      "insert",
    );
    expect(s.overwrite).toBe(true);
    expect(s.table).toEqual(["sales", "orders"]);
    expect(s.query.kind).toBe("values");
    expect((s.query as Query & { kind: "values" }).rows.map((r) => r.length)).toEqual([5, 5, 5]);

    // seeds/000_9c0f6036d605100b.txt (with partitionOverwriteMode = dynamic)
    const d = stmt(
      `
    INSERT OVERWRITE sales.orders VALUES
        (8, 'grace', 4.00, DATE'2026-10-04', 0.80)
`,
      "insert",
    );
    expect(d.overwrite).toBe(true);
    expect(shape((d.query as Query & { kind: "values" }).rows[0][4])).toEqual(
      lit("0.80", decimal(2, 2)),
    );
  });

  it("INSERT INTO … REPLACE WHERE day = DATE'2026-10-03' VALUES …", () => {
    // seeds/000_9c0f6036d605100b.txt
    const s = stmt(
      `
    INSERT INTO sales.orders
    REPLACE WHERE day = DATE'2026-10-03'
    VALUES (7, 'ada', 30.00, DATE'2026-10-03', 6.00)
`,
      "insert",
    );
    expect(s.overwrite).toBe(false);
    expect(shape(s.replaceWhere)).toEqual({
      kind: "binary",
      op: "=",
      left: col("day"),
      right: lit("2026-10-03", "date"),
    });
    expect(s.query.kind).toBe("values");
  });

  it("DESCRIBE HISTORY, VERSION AS OF, RESTORE", () => {
    // seeds/000_9c0f6036d605100b.txt
    expect(shape(parseStatement("DESCRIBE HISTORY sales.orders"))).toEqual({
      kind: "describeHistory",
      table: ["sales", "orders"],
    });
    // seeds/000_9c0f6036d605100b.txt
    const q = queryOf("SELECT order_id, day FROM sales.orders VERSION AS OF 3 ORDER BY order_id");
    expect(shape(q.from)).toEqual({
      kind: "table",
      name: ["sales", "orders"],
      timeTravel: { version: 3 },
    });
    expect(shape(q.orderBy)).toEqual([
      { expr: col("order_id"), descending: false, nullsFirst: true },
    ]);
    // seeds/000_9c0f6036d605100b.txt
    expect(shape(parseStatement("RESTORE TABLE sales.orders TO VERSION AS OF 3"))).toEqual({
      kind: "restore",
      table: ["sales", "orders"],
      version: 3,
    });
  });

  it("a replacement with TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')", () => {
    // seeds/000_9c0f6036d605100b.txt quotes this clause inside a CREATE OR REPLACE
    const s = stmt(
      "CREATE OR REPLACE TABLE sales.orders USING DELTA " +
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false') AS SELECT * FROM sales.orders",
      "createTable",
    );
    expect(s.properties).toEqual({ "delta.enableDeletionVectors": "false" });
  });
});

describe("seed 002 (read and write catalog-managed Delta tables)", () => {
  it("CREATE TABLE with columns, USING DELTA", () => {
    // seeds/002_02dcca03b9d05a70.txt
    const s = stmt(
      `
    CREATE TABLE inventory.stock.items (
        sku STRING,
        qty INT
    ) USING DELTA
`,
      "createTable",
    );
    expect(s.name).toEqual(["inventory", "stock", "items"]);
    expect(shape(s.columns)).toEqual([
      { name: "sku", type: "string", nullable: true },
      { name: "qty", type: "integer", nullable: true },
    ]);
    expect(s.using).toBe("DELTA");
    expect(s.asQuery).toBeUndefined();
  });

  it("DESCRIBE DETAIL", () => {
    // seeds/002_02dcca03b9d05a70.txt
    expect(shape(parseStatement("\n    DESCRIBE DETAIL inventory.stock.items\n"))).toEqual({
      kind: "describeDetail",
      table: ["inventory", "stock", "items"],
    });
  });

  it("CREATE TABLE … TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')", () => {
    // seeds/002_02dcca03b9d05a70.txt
    const s = stmt(
      `
        CREATE TABLE inventory.stock.returns (sku STRING, qty INT)
        USING DELTA
        TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')
    `,
      "createTable",
    );
    expect(s.properties).toEqual({ "delta.enableDeletionVectors": "false" });
    expect(s.columns?.map((c) => c.name)).toEqual(["sku", "qty"]);
  });

  it("INSERT INTO … VALUES (Spark and DuckDB forms)", () => {
    // seeds/002_02dcca03b9d05a70.txt
    const s = stmt(
      `
    INSERT INTO inventory.stock.items VALUES
        ('apple', 10),
        ('pear', 4),
        ('plum', 0)
`,
      "insert",
    );
    expect(s.overwrite).toBe(false);
    expect(shape(s.query)).toEqual({
      kind: "values",
      rows: [
        [lit("apple", "string"), lit(10, "integer")],
        [lit("pear", "string"), lit(4, "integer")],
        [lit("plum", "string"), lit(0, "integer")],
      ],
    });
    // seeds/002_02dcca03b9d05a70.txt (run through DuckDB there; plain SQL all the same)
    expect(stmt("INSERT INTO inventory.stock.restock VALUES ('fig', 7)", "insert").table).toEqual([
      "inventory",
      "stock",
      "restock",
    ]);
    // seeds/002_02dcca03b9d05a70.txt
    stmt("INSERT INTO inventory.stock.restock VALUES ('lime', 3)", "insert");
  });

  it("UPDATE and DELETE", () => {
    // seeds/002_02dcca03b9d05a70.txt
    const u = stmt("UPDATE inventory.stock.items SET qty = qty + 5 WHERE sku = 'pear'", "update");
    expect(shape(u.assignments)).toEqual([
      {
        column: ["qty"],
        value: { kind: "binary", op: "+", left: col("qty"), right: lit(5, "integer") },
      },
    ]);
    expect(shape(u.where)).toEqual({
      kind: "binary",
      op: "=",
      left: col("sku"),
      right: lit("pear", "string"),
    });
    // seeds/002_02dcca03b9d05a70.txt
    const d = stmt("DELETE FROM inventory.stock.items WHERE qty = 0", "delete");
    expect(d.table).toEqual(["inventory", "stock", "items"]);
    expect(shape(d.where)).toEqual({
      kind: "binary",
      op: "=",
      left: col("qty"),
      right: lit(0, "integer"),
    });
  });

  it("SELECT … ORDER BY, with and without VERSION AS OF", () => {
    // seeds/002_02dcca03b9d05a70.txt
    const q = queryOf(`
    SELECT sku, qty
    FROM inventory.stock.items
    ORDER BY sku
`);
    expect(shape(q.items)).toEqual([{ expr: col("sku") }, { expr: col("qty") }]);
    expect(q.orderBy).toHaveLength(1);
    // seeds/002_02dcca03b9d05a70.txt
    const v = queryOf(`
    SELECT sku, qty
    FROM inventory.stock.items VERSION AS OF 1
    ORDER BY sku
`);
    expect((v.from as FromItem & { kind: "table" }).timeTravel).toEqual({ version: 1 });
  });

  it("DROP TABLE", () => {
    // seeds/002_02dcca03b9d05a70.txt
    expect(shape(parseStatement("DROP TABLE inventory.stock.items"))).toEqual({
      kind: "dropTable",
      table: ["inventory", "stock", "items"],
      ifExists: false,
    });
  });
});

describe("seed 003 (CRUD on Delta tables)", () => {
  it("CREATE TABLE IF NOT EXISTS with a DATE column", () => {
    // seeds/003_fec9bc0882bc0275.txt
    const s = stmt(
      `CREATE TABLE IF NOT EXISTS customers (
  customer_id INT,
  name STRING,
  email STRING,
  signup_date DATE
) USING DELTA`,
      "createTable",
    );
    expect(s.ifNotExists).toBe(true);
    expect(s.name).toEqual(["customers"]);
    expect(s.columns?.map((c) => [c.name, c.type])).toEqual([
      ["customer_id", "integer"],
      ["name", "string"],
      ["email", "string"],
      ["signup_date", "date"],
    ]);
  });

  it("INSERT, UPDATE, DELETE with trailing semicolons", () => {
    // seeds/003_fec9bc0882bc0275.txt
    const i = stmt(
      `INSERT INTO customers VALUES
  (1, 'Alice', 'alice@example.com', '2025-01-10'),
  (2, 'Bob', 'bob@example.com', '2025-02-14');`,
      "insert",
    );
    expect((i.query as Query & { kind: "values" }).rows[1].map((e) => shape(e))).toEqual([
      lit(2, "integer"),
      lit("Bob", "string"),
      lit("bob@example.com", "string"),
      lit("2025-02-14", "string"),
    ]);
    // seeds/003_fec9bc0882bc0275.txt
    const u = stmt(
      `UPDATE customers
SET email = 'alice.new@example.com'
WHERE customer_id = 1;`,
      "update",
    );
    expect(u.assignments[0].column).toEqual(["email"]);
    // seeds/003_fec9bc0882bc0275.txt
    expect(stmt("DELETE FROM customers WHERE customer_id = 2;", "delete").table).toEqual([
      "customers",
    ]);
  });

  it("MERGE INTO … USING (SELECT …) AS s … UPDATE SET / INSERT *", () => {
    // seeds/003_fec9bc0882bc0275.txt
    const m = stmt(
      `MERGE INTO customers AS t
USING (SELECT 1 AS customer_id, 'Alice Updated' AS name, 'alice@new.com' AS email, '2025-01-10' AS signup_date) AS s
ON t.customer_id = s.customer_id
WHEN MATCHED THEN UPDATE SET name = s.name, email = s.email
WHEN NOT MATCHED THEN INSERT *`,
      "merge",
    );
    expect(m.target).toEqual(["customers"]);
    expect(m.targetAlias).toBe("t");
    expect(m.withSchemaEvolution).toBe(false);
    const src = m.source as FromItem & { kind: "subquery" };
    expect(src.kind).toBe("subquery");
    expect(src.alias).toBe("s");
    expect(select(src.query).items.map((i) => i.alias)).toEqual([
      "customer_id",
      "name",
      "email",
      "signup_date",
    ]);
    expect(shape(m.on)).toEqual({
      kind: "binary",
      op: "=",
      left: col("t", "customer_id"),
      right: col("s", "customer_id"),
    });
    expect(shape(m.clauses)).toEqual([
      {
        kind: "matched",
        action: {
          kind: "update",
          assignments: [
            { column: ["name"], value: col("s", "name") },
            { column: ["email"], value: col("s", "email") },
          ],
        },
      },
      { kind: "notMatched", action: { kind: "insertStar" } },
    ]);
  });

  it("CREATE DATABASE IF NOT EXISTS retail; USE retail;", () => {
    // seeds/003_fec9bc0882bc0275.txt
    expect(shape(parseStatement("CREATE DATABASE IF NOT EXISTS retail;"))).toEqual({
      kind: "createSchema",
      name: ["retail"],
      ifNotExists: true,
    });
    // seeds/003_fec9bc0882bc0275.txt: USE has no AST kind; it parses into a marked SET.
    expect(shape(parseStatement("USE retail;"))).toEqual({
      kind: "set",
      key: "__use__",
      value: "retail",
    });
  });

  it("OPTIMIZE, VACUUM … RETAIN 7 HOURS, SET autoMerge", () => {
    // seeds/003_fec9bc0882bc0275.txt
    expect(shape(parseStatement("OPTIMIZE orders"))).toEqual({
      kind: "optimize",
      table: ["orders"],
      zorderBy: [],
    });
    // seeds/003_fec9bc0882bc0275.txt
    expect(shape(parseStatement("VACUUM orders RETAIN 7 HOURS"))).toEqual({
      kind: "vacuum",
      table: ["orders"],
      retainHours: 7,
      dryRun: false,
    });
    // seeds/003_fec9bc0882bc0275.txt
    expect(
      shape(parseStatement("SET spark.databricks.delta.schema.autoMerge.enabled = true")),
    ).toEqual({
      kind: "set",
      key: "spark.databricks.delta.schema.autoMerge.enabled",
      value: "true",
    });
  });

  it("predicates given as strings to the DeltaTable API parse as expressions", () => {
    // seeds/003_fec9bc0882bc0275.txt: condition="order_id = 1001", delete("order_id = 1003"),
    // merge condition "target.order_id = source.order_id", set value "source.status",
    // filter "rn = 1", and the "WHERE 1=1" advice.
    expect(shape(parseExpression("order_id = 1001"))).toEqual({
      kind: "binary",
      op: "=",
      left: col("order_id"),
      right: lit(1001, "integer"),
    });
    expect(render(parseExpression("order_id = 1003"))).toBe("(order_id = 1003)");
    expect(shape(parseExpression("target.order_id = source.order_id"))).toEqual({
      kind: "binary",
      op: "=",
      left: col("target", "order_id"),
      right: col("source", "order_id"),
    });
    expect(shape(parseExpression("source.status"))).toEqual(col("source", "status"));
    expect(shape(parseExpression("rn = 1"))).toMatchObject({ op: "=" });
    expect(shape(parseExpression("1=1"))).toEqual({
      kind: "binary",
      op: "=",
      left: lit(1, "integer"),
      right: lit(1, "integer"),
    });
  });
});

describe("seed 004 (selective overwrite: REPLACE USING / REPLACE ON)", () => {
  // Seed 004 is a talk transcript with no verbatim SQL; these are the statements it describes,
  // in the Databricks grammar quoted by issue 4.
  it("INSERT INTO … REPLACE USING (date) SELECT * FROM latest_updated_sales", () => {
    const s = stmt(
      "INSERT INTO history_store_sales REPLACE USING (date) SELECT * FROM latest_updated_sales",
      "insert",
    );
    expect(s.replaceUsing).toEqual(["date"]);
    expect(shape(select(s.query).from)).toEqual({ kind: "table", name: ["latest_updated_sales"] });
    const byName = stmt(
      "INSERT INTO TABLE history_store_sales BY NAME REPLACE USING (date, store) " +
        "SELECT * FROM latest_updated_sales",
      "insert",
    );
    expect(byName.byName).toBe(true);
    expect(byName.replaceUsing).toEqual(["date", "store"]);
  });

  it("INSERT INTO t alias REPLACE ON cond (query) alias, and the plain-query form", () => {
    const s = stmt(
      "INSERT INTO history_store_sales AS h REPLACE ON h.date <=> s.date " +
        "(SELECT * FROM latest_updated_sales) AS s",
      "insert",
    );
    expect(s.alias).toBe("h");
    expect(shape(s.replaceOn)).toEqual({
      condition: { kind: "binary", op: "<=>", left: col("h", "date"), right: col("s", "date") },
      sourceAlias: "s",
    });
    expect(shape(select(s.query).from)).toEqual({ kind: "table", name: ["latest_updated_sales"] });

    const bare = stmt(
      "INSERT INTO history_store_sales h REPLACE ON h.date <=> date SELECT * FROM latest",
      "insert",
    );
    expect(bare.alias).toBe("h");
    expect(bare.replaceOn?.sourceAlias).toBeUndefined();
    // An unqualified column right before the parenthesized query is not a function call.
    const unq = stmt("INSERT INTO t REPLACE ON t.d = d (SELECT 1 AS d) s", "insert");
    expect(shape(unq.replaceOn?.condition)).toMatchObject({ right: col("d") });
    expect(unq.replaceOn?.sourceAlias).toBe("s");
  });
});

// ---------------------------------------------------------------------------------------------
// Lexer

describe("lexer", () => {
  it("classifies tokens and records 1-based positions", () => {
    const toks = tokenize(
      "a.`b``c` >= 1L -- note\n  /* x /* y */ */ 'p' \"q\" <=> x::int 1.5e-3D 2.",
    );
    expect(
      toks.map((t) => [
        t.kind,
        t.kind === "number" ? t.numberKind : t.text,
        t.pos.line,
        t.pos.column,
      ]),
    ).toEqual([
      ["word", "a", 1, 1],
      ["op", ".", 1, 2],
      ["quoted", "b`c", 1, 3],
      ["op", ">=", 1, 10],
      ["number", "bigint", 1, 13],
      ["string", "pq", 2, 19],
      ["op", "<=>", 2, 27],
      ["word", "x", 2, 31],
      ["op", "::", 2, 32],
      ["word", "int", 2, 34],
      ["number", "double", 2, 38],
      ["number", "decimal", 2, 46],
      ["eof", "", 2, 48],
    ]);
  });

  it("reads digits followed by letters as a word, as Spark's IDENTIFIER rule does", () => {
    expect(tokenize("1a 1e3 1e3L 10BD 7S 7Y 2.5F").map((t) => t.numberKind ?? t.kind)).toEqual([
      "word",
      "exponent",
      "word",
      "bigdecimal",
      "smallint",
      "tinyint",
      "float",
      "eof",
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Literals

describe("literal typing", () => {
  const cases: [string, unknown, unknown][] = [
    ["1", 1, "integer"],
    ["0", 0, "integer"],
    ["2147483647", 2147483647, "integer"],
    ["2147483648", 2147483648, "long"],
    ["-2147483648", -2147483648, "integer"],
    ["-2147483649", -2147483649, "long"],
    ["9007199254740993", "9007199254740993n", "long"],
    ["9223372036854775807", "9223372036854775807n", "long"],
    ["9223372036854775808", "9223372036854775808", decimal(19, 0)],
    ["9.50", "9.50", decimal(3, 2)],
    ["-9.50", "-9.50", decimal(3, 2)],
    [".5", "0.5", decimal(1, 1)],
    ["0.5", "0.5", decimal(1, 1)],
    ["100.", "100", decimal(3, 0)],
    ["0.00", "0.00", decimal(2, 2)],
    ["007.50", "7.50", decimal(3, 2)],
    ["1e3", 1000, "double"],
    ["1E-3", 0.001, "double"],
    ["1.5e3", 1500, "double"],
    ["1L", 1, "long"],
    ["-9223372036854775808L", "-9223372036854775808n", "long"],
    ["1Y", 1, "byte"],
    ["-128Y", -128, "byte"],
    ["1S", 1, "short"],
    ["32767S", 32767, "short"],
    ["1D", 1, "double"],
    ["2.5D", 2.5, "double"],
    ["1.5F", 1.5, "float"],
    ["0.1F", 0.1, "float"],
    ["1BD", "1", decimal(1, 0)],
    ["1.50BD", "1.50", decimal(3, 2)],
    ["1e3BD", "1000", decimal(4, 0)],
    ["1e-5BD", "0.00001", decimal(5, 5)],
    ["'it''s'", "it's", "string"],
    ["'a' 'b' \"c\"", "abc", "string"],
    ["'tab\\there'", "tab\there", "string"],
    ["'\\u0041\\101'", "AA", "string"],
    ["'100\\%'", "100\\%", "string"],
    ["r'C:\\new'", "C:\\new", "string"],
    ["TRUE", true, "boolean"],
    ["false", false, "boolean"],
    ["NULL", null, "null"],
    ["DATE'2026-10-01'", "2026-10-01", "date"],
    ["DATE '2026-1-5'", "2026-01-05", "date"],
    ["DATE'2026'", "2026-01-01", "date"],
    ["DATE'2026-10-01 12:00:00'", "2026-10-01", "date"],
    ["TIMESTAMP'2026-10-03 12:00:00'", "2026-10-03T12:00:00.000000Z", "timestamp"],
    ["TIMESTAMP'2026-10-03T12:00:00.123456789Z'", "2026-10-03T12:00:00.123456Z", "timestamp"],
    ["TIMESTAMP'2026-10-03 12:00:00+02:00'", "2026-10-03T10:00:00.000000Z", "timestamp"],
    ["TIMESTAMP'2026-10-03'", "2026-10-03T00:00:00.000000Z", "timestamp"],
    ["TIMESTAMP'2026-10'", "2026-10-01T00:00:00.000000Z", "timestamp"],
    ["TIMESTAMP_LTZ'2026-10-03 12:00'", "2026-10-03T12:00:00.000000Z", "timestamp"],
    ["TIMESTAMP_NTZ'2026-10-03 12:00:00.5'", "2026-10-03T12:00:00.500000", "timestamp_ntz"],
    ["X'0A'", "Cg==", "binary"],
    ["X'0a1'", "AKE=", "binary"],
    ["x''", "", "binary"],
  ];
  for (const [sql, value, type] of cases) {
    it(`${sql} → ${JSON.stringify(type)}`, () => {
      expect(shape(parseExpression(sql))).toEqual(lit(value, type));
    });
  }

  it("keeps a minus sign apart from a number when it is an operator", () => {
    expect(shape(parseExpression("a -1"))).toEqual({
      kind: "binary",
      op: "-",
      left: col("a"),
      right: lit(1, "integer"),
    });
    expect(shape(parseExpression("-a"))).toEqual({ kind: "unary", op: "-", operand: col("a") });
    expect(shape(parseExpression("- -1"))).toEqual({
      kind: "unary",
      op: "-",
      operand: lit(-1, "integer"),
    });
  });

  it("rejects invalid typed literals with INVALID_TYPED_LITERAL", () => {
    for (const [sql, kind, value] of [
      ["DATE'2026-13-01'", "DATE", "2026-13-01"],
      ["DATE'2026-02-30'", "DATE", "2026-02-30"],
      ["TIMESTAMP'2026-10-03 25:00'", "TIMESTAMP", "2026-10-03 25:00"],
      ["TIMESTAMP_NTZ'2026-10-03 12:00:00Z'", "TIMESTAMP_NTZ", "2026-10-03 12:00:00Z"],
      ["X'0G'", "X", "0G"],
    ]) {
      const e = errorOf(() => parseExpression(`SELECT ${sql}`.slice(7)));
      expect(e.errorClass).toBe("INVALID_TYPED_LITERAL");
      expect(e.sqlstate).toBe("42604");
      expect(e.status).toBe(400);
      expect(e.message).toBe(
        `The value of the typed literal "${kind}" is invalid: '${value}'. (line 1, pos 0)`,
      );
    }
  });

  it("rejects numbers outside their type's range", () => {
    const e = errorOf(() => parseExpression("128Y"));
    expect(e.errorClass).toBe("INVALID_NUMERIC_LITERAL_RANGE");
    expect(e.message).toBe(
      "Numeric literal 128 is outside the valid range for tinyint with minimum value of -128 " +
        "and maximum value of 127. Please adjust the value accordingly. (line 1, pos 0)",
    );
    expect(errorOf(() => parseExpression("9223372036854775808L")).errorClass).toBe(
      "INVALID_NUMERIC_LITERAL_RANGE",
    );
    expect(errorOf(() => parseExpression("1e400")).errorClass).toBe(
      "INVALID_NUMERIC_LITERAL_RANGE",
    );
    expect(errorOf(() => parseExpression("1e39F")).errorClass).toBe(
      "INVALID_NUMERIC_LITERAL_RANGE",
    );
    expect(errorOf(() => parseExpression("1".repeat(39))).errorClass).toBe(
      "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
    );
    expect(shape(parseExpression("1".repeat(38)))).toEqual(lit("1".repeat(38), decimal(38, 0)));
  });
});

// ---------------------------------------------------------------------------------------------
// Expressions

/** Fully parenthesized rendering of a tree, to state precedence compactly. */
function render(e: Expr): string {
  switch (e.kind) {
    case "literal":
      return e.value === null ? "NULL" : String(e.value);
    case "column":
      return e.name.join(".");
    case "star":
      return e.qualifier ? `${e.qualifier.join(".")}.*` : "*";
    case "unary":
      return `(${e.op} ${render(e.operand)})`;
    case "binary":
      return `(${render(e.left)} ${e.op} ${render(e.right)})`;
    case "isNull":
      return `(${render(e.operand)} IS${e.negated ? " NOT" : ""} NULL)`;
    case "isBool":
      return `(${render(e.operand)} IS${e.negated ? " NOT" : ""} ${String(e.value)})`;
    case "isDistinctFrom":
      return `(${render(e.left)} IS${e.negated ? " NOT" : ""} DISTINCT FROM ${render(e.right)})`;
    case "in":
      return `(${render(e.operand)}${e.negated ? " NOT" : ""} IN [${e.list.map(render).join(", ")}])`;
    case "inSubquery":
      return `(${render(e.operand)}${e.negated ? " NOT" : ""} IN subquery)`;
    case "exists":
      return `(${e.negated ? "NOT " : ""}EXISTS)`;
    case "between":
      return `(${render(e.operand)}${e.negated ? " NOT" : ""} BETWEEN ${render(e.low)} AND ${render(e.high)})`;
    case "like":
      return `(${render(e.operand)}${e.negated ? " NOT" : ""} ${e.op} ${render(e.pattern)}${e.escape ? ` ESCAPE ${e.escape}` : ""})`;
    case "case":
      return `CASE${e.operand ? ` ${render(e.operand)}` : ""}${e.branches
        .map((b) => ` WHEN ${render(b.when)} THEN ${render(b.then)}`)
        .join("")}${e.otherwise ? ` ELSE ${render(e.otherwise)}` : ""} END`;
    case "cast":
      return `${e.tryCast ? "try_cast" : "cast"}(${render(e.operand)} AS ${JSON.stringify(e.target)})`;
    case "call":
      return `${e.name}(${e.distinct ? "DISTINCT " : ""}${e.args.map(render).join(", ")})`;
    case "scalarSubquery":
      return "(subquery)";
  }
}

describe("precedence", () => {
  const cases: [string, string][] = [
    ["a OR b AND c", "(a or (b and c))"],
    ["a AND b OR c AND d", "((a and b) or (c and d))"],
    ["NOT a AND b", "((not a) and b)"],
    ["NOT a = b", "(not (a = b))"],
    ["NOT NOT a", "(not (not a))"],
    ["a = b AND c <> d", "((a = b) and (c != d))"],
    ["a = b = c", "((a = b) = c)"],
    ["a < b | c", "(a < (b | c))"],
    ["a | b ^ c & d", "(a | (b ^ (c & d)))"],
    ["a & b + c", "(a & (b + c))"],
    ["a + b * c", "(a + (b * c))"],
    ["a - b - c", "((a - b) - c)"],
    ["a || b + c", "((a || b) + c)"],
    ["a * b / c % d DIV e", "((((a * b) / c) % d) div e)"],
    ["-a * b", "((- a) * b)"],
    ["~a + b", "((~ a) + b)"],
    ["-a::int", '(- cast(a AS "integer"))'],
    ["a + b::string", '(a + cast(b AS "string"))'],
    ["a = b IS NULL", "((a = b) IS NULL)"],
    ["a IS NOT NULL AND b", "((a IS NOT NULL) and b)"],
    ["a + 1 BETWEEN 1 AND 2 + 3", "((a + 1) BETWEEN 1 AND (2 + 3))"],
    ["a NOT BETWEEN b AND c OR d", "((a NOT BETWEEN b AND c) or d)"],
    ["a IN (1, 2) AND b NOT IN (3)", "((a IN [1, 2]) and (b NOT IN [3]))"],
    ["a LIKE 'x%' ESCAPE '!' OR b NOT ILIKE 'y'", "((a like x% ESCAPE !) or (b NOT ilike y))"],
    ["a RLIKE 'x' AND b REGEXP 'y'", "((a rlike x) and (b rlike y))"],
    [
      "a IS TRUE OR b IS NOT FALSE OR c IS UNKNOWN",
      "(((a IS true) or (b IS NOT false)) or (c IS null))",
    ],
    ["a IS DISTINCT FROM b + 1", "(a IS DISTINCT FROM (b + 1))"],
    ["a <=> b", "(a <=> b)"],
    ["a == b", "(a = b)"],
    ["NOT EXISTS (SELECT 1) AND a", "((NOT EXISTS) and a)"],
    ["(a OR b) AND c", "((a or b) and c)"],
    ["((a))", "a"],
    ["((SELECT 1)) + 1", "((subquery) + 1)"],
    ["((SELECT 1) + 1) * 2", "(((subquery) + 1) * 2)"],
    ["CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END", "CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END"],
    ["CASE x WHEN 1 THEN 'a' END", "CASE x WHEN 1 THEN a END"],
    ["CAST(a AS DECIMAL(10, 2))", 'cast(a AS {"type":"decimal","precision":10,"scale":2})'],
    ["TRY_CAST(a AS INT)", 'try_cast(a AS "integer")'],
    ["count(*)", "count(*)"],
    ["COUNT(DISTINCT a, b)", "count(DISTINCT a, b)"],
    ["coalesce(a, 1) + Upper(b)", "(coalesce(a, 1) + upper(b))"],
    ["t.*", "t.*"],
    ["a.b.c", "a.b.c"],
    ["`weird col`.`x``y`", "weird col.x`y"],
    ["left(s, 2) || right(s, 1)", "(left(s, 2) || right(s, 1))"],
    ["if(a, b, c)", "if(a, b, c)"],
    ["EXTRACT(year FROM d)", "extract(YEAR, d)"],
    ["SUBSTRING(s FROM 2 FOR 3)", "substring(s, 2, 3)"],
    ["substring(s, 2)", "substring(s, 2)"],
    ["POSITION('a' IN s)", "position(a, s)"],
    ["current_date", "current_date()"],
    ["CURRENT_TIMESTAMP()", "current_timestamp()"],
    ["day", "day"],
    ["date", "date"],
    ["date(x)", "date(x)"],
    ["a IN ((SELECT 1) UNION (SELECT 2))", "(a IN subquery)"],
    ["a NOT IN (SELECT b FROM t)", "(a NOT IN subquery)"],
    ["a IN ((SELECT 1), 2)", "(a IN [(subquery), 2])"],
  ];
  for (const [sql, expected] of cases) {
    it(sql, () => {
      expect(render(parseExpression(sql))).toBe(expected);
    });
  }

  it("records 1-based positions", () => {
    const e = parseExpression("a +\n  b * c");
    expect(e.pos).toEqual({ line: 1, column: 1 });
    const right = (e as Expr & { kind: "binary" }).right;
    expect(right.pos).toEqual({ line: 2, column: 3 });
  });

  it("parses types inside CAST and ::", () => {
    expect(parseDataType("ARRAY<STRUCT<a: INT NOT NULL COMMENT 'x', `b c` STRING>>")).toEqual({
      type: "array",
      containsNull: true,
      elementType: {
        type: "struct",
        fields: [
          { name: "a", type: "integer", nullable: false, metadata: { comment: "x" } },
          { name: "b c", type: "string", nullable: true, metadata: {} },
        ],
      },
    });
    expect(parseDataType("map<string,array<bigint>>")).toEqual({
      type: "map",
      keyType: "string",
      valueType: { type: "array", elementType: "long", containsNull: true },
      valueContainsNull: true,
    });
    expect(parseDataType("STRUCT<>")).toEqual({ type: "struct", fields: [] });
    expect(parseDataType("decimal")).toEqual(decimal(10, 0));
    expect(parseDataType("VARCHAR(10)")).toBe("string");
    expect(parseDataType("timestamp_ntz")).toBe("timestamp_ntz");
    expect(errorOf(() => parseDataType("VARCHAR")).errorClass).toBe("DATATYPE_MISSING_SIZE");
    expect(errorOf(() => parseDataType("INTERVAL")).errorClass).toBe("UNSUPPORTED_DATATYPE");
    expect(errorOf(() => parseDataType("DECIMAL(39, 0)")).errorClass).toBe(
      "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
    );
    expect(errorOf(() => parseDataType("STRUCT<a INT, A INT>")).errorClass).toBe(
      "COLUMN_ALREADY_EXISTS",
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Statements

describe("statement kinds", () => {
  it("CREATE CATALOG / SCHEMA / DATABASE", () => {
    expect(shape(parseStatement("CREATE CATALOG IF NOT EXISTS c COMMENT 'cat'"))).toEqual({
      kind: "createCatalog",
      name: "c",
      ifNotExists: true,
      comment: "cat",
    });
    expect(shape(parseStatement("create schema c.s comment 'x'"))).toEqual({
      kind: "createSchema",
      name: ["c", "s"],
      ifNotExists: false,
      comment: "x",
    });
  });

  it("SHOW CATALOGS / SCHEMAS / DATABASES / TABLES", () => {
    expect(shape(parseStatement("SHOW CATALOGS"))).toEqual({ kind: "show", what: "catalogs" });
    expect(shape(parseStatement("SHOW CATALOGS LIKE 'rep*'"))).toEqual({
      kind: "show",
      what: "catalogs",
      like: "rep*",
    });
    expect(shape(parseStatement("SHOW SCHEMAS IN replace_demo"))).toEqual({
      kind: "show",
      what: "schemas",
      in: ["replace_demo"],
    });
    expect(shape(parseStatement("SHOW DATABASES FROM c 's*'"))).toEqual({
      kind: "show",
      what: "schemas",
      in: ["c"],
      like: "s*",
    });
    expect(shape(parseStatement("SHOW TABLES FROM c.s LIKE 'o*'"))).toEqual({
      kind: "show",
      what: "tables",
      in: ["c", "s"],
      like: "o*",
    });
  });

  it("USE forms", () => {
    expect(shape(parseStatement("USE CATALOG replace_demo"))).toEqual({
      kind: "set",
      key: "__use_catalog__",
      value: "replace_demo",
    });
    expect(shape(parseStatement("USE SCHEMA c.`my schema`"))).toEqual({
      kind: "set",
      key: "__use__",
      value: "c.`my schema`",
    });
    expect(shape(parseStatement("USE catalog"))).toEqual({
      kind: "set",
      key: "__use__",
      value: "catalog",
    });
  });

  it("CREATE TABLE clauses in any order, with CLUSTER BY, LOCATION, COMMENT, properties", () => {
    const s = stmt(
      "CREATE TABLE IF NOT EXISTS c.s.t (id BIGINT NOT NULL COMMENT 'key', tags ARRAY<STRING>) " +
        "USING delta COMMENT 'orders' TBLPROPERTIES ('a' = 'b', delta.appendOnly = true, x 1) " +
        "LOCATION 's3://b/p' CLUSTER BY (id)",
      "createTable",
    );
    expect(shape(s.columns)).toEqual([
      { name: "id", type: "long", nullable: false, comment: "key" },
      {
        name: "tags",
        type: { type: "array", elementType: "string", containsNull: true },
        nullable: true,
      },
    ]);
    expect(s.comment).toBe("orders");
    expect(s.location).toBe("s3://b/p");
    expect(s.clusterBy).toEqual(["id"]);
    expect(s.properties).toEqual({ a: "b", "delta.appendOnly": "true", x: "1" });
    expect(stmt("CREATE TABLE t CLUSTER BY NONE", "createTable").clusterBy).toEqual([]);
  });

  it("REPLACE TABLE and CTAS without AS", () => {
    const r = stmt("REPLACE TABLE t (a INT) USING DELTA", "createTable");
    expect(r.mode).toBe("replace");
    const c = stmt("CREATE TABLE t USING DELTA SELECT 1 AS a", "createTable");
    expect(select(c.asQuery).items[0].alias).toBe("a");
    const v = stmt("CREATE TABLE t AS VALUES (1, 2) AS v(a, b)", "createTable");
    expect(shape(v.asQuery)).toEqual({
      kind: "values",
      rows: [[lit(1, "integer"), lit(2, "integer")]],
      alias: "v",
      columns: ["a", "b"],
    });
  });

  it("INSERT forms: TABLE keyword, column list, BY NAME, PARTITION, subquery", () => {
    const a = stmt("INSERT INTO TABLE t (a, b) SELECT x, y FROM s", "insert");
    expect(a.columns).toEqual(["a", "b"]);
    expect(a.query.kind).toBe("select");
    const b = stmt("INSERT OVERWRITE TABLE t BY NAME SELECT * FROM s", "insert");
    expect(b.byName).toBe(true);
    expect(b.overwrite).toBe(true);
    const c = stmt(
      "INSERT OVERWRITE t PARTITION (day = DATE'2026-10-04', hour) VALUES (1)",
      "insert",
    );
    expect(shape(c.partitionSpec)).toEqual([
      { column: "day", value: lit("2026-10-04", "date") },
      { column: "hour" },
    ]);
    const d = stmt("INSERT INTO t (SELECT 1)", "insert");
    expect(d.columns).toBeUndefined();
    expect(select(d.query).items).toHaveLength(1);
  });

  it("SELECT with DISTINCT, joins, GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET", () => {
    const q = queryOf(
      "SELECT DISTINCT a.x, count(*) AS n FROM a JOIN b ON a.id = b.id " +
        "LEFT OUTER JOIN c USING (id) LEFT SEMI JOIN d ON true CROSS JOIN e, f " +
        "WHERE a.x > 1 GROUP BY a.x HAVING count(*) > 2 " +
        "ORDER BY n DESC NULLS FIRST, 1 LIMIT 10 OFFSET 5",
    );
    expect(q.distinct).toBe(true);
    expect(q.items[1].alias).toBe("n");
    const j = q.from as FromItem & { kind: "join" };
    expect(j.joinType).toBe("cross");
    const chain: string[] = [];
    let f: FromItem = j.left;
    while (f.kind === "join") {
      chain.push(f.joinType);
      f = f.left;
    }
    expect(chain).toEqual(["cross", "semi", "left", "inner"]);
    expect(shape(q.orderBy)).toEqual([
      { expr: col("n"), descending: true, nullsFirst: true },
      { expr: lit(1, "integer"), descending: false, nullsFirst: true },
    ]);
    expect(shape(q.limit)).toEqual(lit(10, "integer"));
    expect(shape(q.offset)).toEqual(lit(5, "integer"));
    expect(q.groupBy).toHaveLength(1);
    expect(q.having).toBeDefined();
    const desc = queryOf("SELECT a FROM t ORDER BY a DESC");
    expect(desc.orderBy[0].nullsFirst).toBe(false);
  });

  it("RIGHT / FULL / ANTI joins, subqueries and implicit aliases in FROM", () => {
    const q = queryOf(
      "SELECT * FROM (SELECT 1 AS a) x (a) RIGHT JOIN t y ON x.a = y.a " +
        "FULL JOIN u ON true LEFT ANTI JOIN v ON false",
    );
    let f = q.from as FromItem;
    const types: string[] = [];
    while (f.kind === "join") {
      types.push(f.joinType);
      f = f.left;
    }
    expect(types).toEqual(["anti", "full", "right"]);
    expect(shape(f)).toMatchObject({ kind: "subquery", alias: "x", columns: ["a"] });
  });

  it("set operations: INTERSECT binds tighter; ORDER BY / LIMIT apply to the whole", () => {
    const s = stmt(
      "SELECT a FROM t UNION ALL SELECT a FROM u INTERSECT SELECT a FROM v ORDER BY a LIMIT 3",
      "query",
    );
    const q = s.query as Query & { kind: "setOp" };
    expect(q.kind).toBe("setOp");
    expect(q.op).toBe("union");
    expect(q.all).toBe(true);
    expect((q.right as Query & { kind: "setOp" }).op).toBe("intersect");
    expect(q.orderBy).toHaveLength(1);
    expect(shape(q.limit)).toEqual(lit(3, "integer"));
    const e = parseQuery("SELECT 1 EXCEPT DISTINCT SELECT 2 MINUS SELECT 3");
    expect(e.kind === "setOp" && e.op === "except" && e.left.kind === "setOp").toBe(true);
  });

  it("wraps ORDER BY / LIMIT that a query cannot carry itself", () => {
    const q = parseQuery("(SELECT a FROM t LIMIT 5) LIMIT 2");
    const outer = select(q);
    expect(shape(outer.limit)).toEqual(lit(2, "integer"));
    const inner = outer.from as FromItem & { kind: "subquery" };
    expect(inner.kind).toBe("subquery");
    expect(shape(select(inner.query).limit)).toEqual(lit(5, "integer"));
    const v = select(parseQuery("VALUES (2), (1) ORDER BY 1"));
    expect((v.from as FromItem & { kind: "subquery" }).query.kind).toBe("values");
    const t = select(parseQuery("TABLE c.s.t"));
    expect(shape(t.from)).toEqual({ kind: "table", name: ["c", "s", "t"] });
  });

  it("time travel forms", () => {
    const tt = (sql: string) =>
      (queryOf(`SELECT * FROM ${sql}`).from as FromItem & { kind: "table" }).timeTravel;
    expect(tt("t VERSION AS OF 3")).toEqual({ version: 3 });
    expect(tt("t FOR SYSTEM_VERSION AS OF '4'")).toEqual({ version: 4 });
    expect(shape(tt("t TIMESTAMP AS OF '2026-10-03 12:00:00'"))).toEqual({
      timestamp: lit("2026-10-03 12:00:00", "string"),
    });
    expect(shape(tt("t FOR SYSTEM_TIME AS OF TIMESTAMP'2026-10-03 12:00:00'"))).toEqual({
      timestamp: lit("2026-10-03T12:00:00.000000Z", "timestamp"),
    });
    expect(tt("t@v12")).toEqual({ version: 12 });
    expect(shape(tt("t@20261003120000123"))).toEqual({
      timestamp: lit("2026-10-03 12:00:00.123", "string"),
    });
    const aliased = queryOf("SELECT * FROM t VERSION AS OF 2 AS old").from as FromItem & {
      kind: "table";
    };
    expect(aliased.alias).toBe("old");
    const restore = stmt("RESTORE t TIMESTAMP AS OF '2026-10-03'", "restore");
    expect(shape(restore.timestamp)).toEqual(lit("2026-10-03", "string"));
  });

  it("DESCRIBE forms", () => {
    expect(shape(parseStatement("DESCRIBE HISTORY t LIMIT 2"))).toEqual({
      kind: "describeHistory",
      table: ["t"],
      limit: 2,
    });
    expect(shape(parseStatement("DESC TABLE EXTENDED c.s.t"))).toEqual({
      kind: "describeTable",
      table: ["c", "s", "t"],
      extended: true,
    });
    expect(shape(parseStatement("DESCRIBE t"))).toEqual({
      kind: "describeTable",
      table: ["t"],
      extended: false,
    });
    expect(shape(parseStatement("DESCRIBE history"))).toEqual({
      kind: "describeTable",
      table: ["history"],
      extended: false,
    });
  });

  it("DROP forms", () => {
    expect(shape(parseStatement("DROP TABLE IF EXISTS c.s.t"))).toEqual({
      kind: "dropTable",
      table: ["c", "s", "t"],
      ifExists: true,
    });
    expect(shape(parseStatement("DROP SCHEMA IF EXISTS c.s CASCADE"))).toEqual({
      kind: "dropSchema",
      name: ["c", "s"],
      ifExists: true,
      cascade: true,
    });
    expect(shape(parseStatement("DROP DATABASE s RESTRICT"))).toEqual({
      kind: "dropSchema",
      name: ["s"],
      ifExists: false,
      cascade: false,
    });
    expect(shape(parseStatement("DROP CATALOG c CASCADE"))).toEqual({
      kind: "dropCatalog",
      name: "c",
      ifExists: false,
      cascade: true,
    });
  });

  it("UPDATE and DELETE with aliases and nested targets", () => {
    const u = stmt("UPDATE t AS x SET x.a.b = 1, c = DEFAULT_VALUE WHERE x.id = 2", "update");
    expect(u.alias).toBe("x");
    expect(u.assignments.map((a) => a.column)).toEqual([["x", "a", "b"], ["c"]]);
    const d = stmt("DELETE FROM t x", "delete");
    expect(d.alias).toBe("x");
    expect(d.where).toBeUndefined();
  });

  it("MERGE with every clause kind", () => {
    const m = stmt(
      "MERGE WITH SCHEMA EVOLUTION INTO t USING src s ON t.id = s.id " +
        "WHEN MATCHED AND s.del THEN DELETE " +
        "WHEN MATCHED THEN UPDATE SET * " +
        "WHEN NOT MATCHED BY TARGET AND s.x > 0 THEN INSERT (id, v) VALUES (s.id, s.v) " +
        "WHEN NOT MATCHED THEN INSERT * " +
        "WHEN NOT MATCHED BY SOURCE AND t.v < 0 THEN DELETE " +
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 0",
      "merge",
    );
    expect(m.withSchemaEvolution).toBe(true);
    expect(m.targetAlias).toBeUndefined();
    expect(shape(m.source)).toEqual({ kind: "table", name: ["src"], alias: "s" });
    expect(m.clauses.map((c) => `${c.kind}:${c.action.kind}:${c.condition ? "if" : "-"}`)).toEqual([
      "matched:delete:if",
      "matched:updateStar:-",
      "notMatched:insert:if",
      "notMatched:insertStar:-",
      "notMatchedBySource:delete:if",
      "notMatchedBySource:update:-",
    ]);
    const ins = m.clauses[2].action as { kind: "insert"; columns?: string[][] };
    expect(ins.columns).toEqual([["id"], ["v"]]);
  });

  it("OPTIMIZE and VACUUM options", () => {
    expect(
      shape(parseStatement("OPTIMIZE t WHERE day >= '2026-10-01' ZORDER BY (a, b.c)")),
    ).toEqual({
      kind: "optimize",
      table: ["t"],
      where: { kind: "binary", op: ">=", left: col("day"), right: lit("2026-10-01", "string") },
      zorderBy: ["a", "b.c"],
    });
    expect(stmt("OPTIMIZE t ZORDER BY a, b", "optimize").zorderBy).toEqual(["a", "b"]);
    expect(shape(parseStatement("VACUUM t LITE RETAIN 168 HOURS DRY RUN"))).toEqual({
      kind: "vacuum",
      table: ["t"],
      retainHours: 168,
      dryRun: true,
      mode: "lite",
    });
    expect(shape(parseStatement("VACUUM t RETAIN 0.5 HOURS FULL"))).toEqual({
      kind: "vacuum",
      table: ["t"],
      retainHours: 0.5,
      dryRun: false,
      mode: "full",
    });
  });

  it("SET forms", () => {
    expect(shape(parseStatement("SET"))).toEqual({ kind: "set" });
    expect(shape(parseStatement("SET spark.sql.ansi.enabled;"))).toEqual({
      kind: "set",
      key: "spark.sql.ansi.enabled",
    });
    expect(shape(parseStatement("SET `my key` = `a;b`"))).toEqual({
      kind: "set",
      key: "my key",
      value: "a;b",
    });
    expect(shape(parseStatement("SET TIME ZONE 'UTC'"))).toEqual({
      kind: "set",
      key: "spark.sql.session.timeZone",
      value: "UTC",
    });
    expect(shape(parseStatement("SET `a``b`"))).toEqual({ kind: "set", key: "a`b" });
    expect(shape(parseStatement("SET `k`=v`w"))).toEqual({ kind: "set", key: "k", value: "v`w" });
    expect(errorOf(() => parseStatement("SET a b = c")).errorClass).toBe("INVALID_SET_SYNTAX");
    for (const bad of ["SET ``", "SET `open", "SET `k` v"]) {
      expect(errorOf(() => parseStatement(bad)).errorClass, bad).toBe("INVALID_SET_SYNTAX");
    }
  });

  it("comments, case and quoting", () => {
    const q = queryOf(
      "-- leading\nselect /* inline /* nested */ still */ `Weird``Name` as `x y` " +
        "/*+ BROADCAST(t) */ from T -- trailing",
    );
    expect(shape(q.items)).toEqual([{ expr: col("Weird`Name"), alias: "x y" }]);
    expect(shape(q.from)).toEqual({ kind: "table", name: ["T"] });
  });
});

// ---------------------------------------------------------------------------------------------
// Errors

describe("errors", () => {
  const syntax = (sql: string, message: string) => {
    const e = errorOf(() => parseStatement(sql));
    expect(e.errorClass).toBe("PARSE_SYNTAX_ERROR");
    expect(e.sqlstate).toBe("42601");
    expect(e.status).toBe(400);
    expect(e.message).toBe(message);
  };

  it("name the offending token and its position", () => {
    syntax("SELECT FROM t", "Syntax error at or near 'FROM'. (line 1, pos 7)");
    syntax("SELECT 1 +", "Syntax error at or near end of input. (line 1, pos 10)");
    syntax("SELECT * FROM t\nWHERE a = = 1", "Syntax error at or near '='. (line 2, pos 10)");
    syntax("SELEKT 1", "Syntax error at or near 'SELEKT'. (line 1, pos 0)");
    syntax("SELECT (1 FROM t", "Syntax error at or near 'FROM': missing ')'. (line 1, pos 10)");
    syntax(
      "SELECT 1; SELECT 2",
      "Syntax error at or near 'SELECT': extra input 'SELECT'. (line 1, pos 10)",
    );
    syntax("SELECT $x", "Syntax error at or near '$'. (line 1, pos 7)");
    syntax(
      "SELECT 'abc",
      "Syntax error at or near ''abc': unclosed string literal. (line 1, pos 7)",
    );
    syntax(
      "CREATE OR REPLACE TABLE IF NOT EXISTS t (a INT)",
      "Syntax error at or near 'NOT': extra input 'NOT'. (line 1, pos 27)",
    );
    syntax("INSERT INTO t x VALUES (1)", "Syntax error at or near 'x'. (line 1, pos 14)");
    syntax(
      "INSERT OVERWRITE t REPLACE WHERE a = 1 VALUES (1)",
      "Syntax error at or near 'REPLACE'. (line 1, pos 19)",
    );
    syntax(
      "SELECT a NOT FROM t",
      "Syntax error at or near 'NOT': extra input 'NOT'. (line 1, pos 9)",
    );
    syntax("SELECT CASE END", "Syntax error at or near 'END'. (line 1, pos 12)");
    syntax(
      "WITH x AS (SELECT 1) SELECT * FROM x",
      "Syntax error at or near 'WITH': WITH (common table expressions) is not supported. " +
        "(line 1, pos 0)",
    );
    syntax("SELECT * FROM a NATURAL JOIN b", "Syntax error at or near 'NATURAL'. (line 1, pos 16)");
    // A huge token is cut short in the message.
    const shown = `''${"y".repeat(99)}…'`;
    syntax(
      `SELECT 1 '${"y".repeat(300)}'`,
      `Syntax error at or near ${shown}: extra input ${shown}. (line 1, pos 9)`,
    );
  });

  it("uses Spark's other parse error classes", () => {
    const cls = (sql: string) => errorOf(() => parseStatement(sql));
    expect(cls("   -- nothing\n;").errorClass).toBe("PARSE_EMPTY_STATEMENT");
    const comment = cls("SELECT 1 /* never closed");
    expect(comment.errorClass).toBe("UNCLOSED_BRACKETED_COMMENT");
    expect(comment.message).toBe(
      "Found an unclosed bracketed comment. Please, append */ at the end of the comment. " +
        "(line 1, pos 9)",
    );
    const ident = cls("CREATE TABLE c.my-table (a INT)");
    expect(ident.errorClass).toBe("INVALID_IDENTIFIER");
    expect(ident.sqlstate).toBe("42602");
    expect(ident.message.startsWith("The unquoted identifier my-table is invalid")).toBe(true);
    const dup = cls("CREATE TABLE t (a INT) PARTITIONED BY (a) PARTITIONED BY (a)");
    expect(dup.errorClass).toBe("DUPLICATE_CLAUSES");
    expect(dup.message).toBe(
      "Found duplicate clauses: PARTITIONED BY. Please, remove one of them. (line 1, pos 42)",
    );
    expect(cls("CREATE TABLE t (a INT) PARTITIONED BY (a) CLUSTER BY (a)").errorClass).toBe(
      "SPECIFY_CLUSTER_BY_WITH_PARTITIONED_BY_IS_NOT_ALLOWED",
    );
    expect(cls("CREATE TABLE t TBLPROPERTIES ('a' = '1', 'a' = '2')").errorClass).toBe(
      "DUPLICATE_KEY",
    );
    expect(cls("CREATE TABLE t (a INT NOT NULL NOT NULL)").errorClass).toBe(
      "CREATE_TABLE_COLUMN_DESCRIPTOR_DUPLICATE",
    );
    expect(cls("SELECT a LIKE 'x' ESCAPE 'ab'").errorClass).toBe("INVALID_ESC");
    expect(cls("MERGE INTO t USING s ON t.a = s.a").errorClass).toBe("MERGE_WITHOUT_WHEN");
    expect(
      cls("MERGE INTO t USING s ON a WHEN MATCHED THEN DELETE WHEN MATCHED THEN DELETE").errorClass,
    ).toBe("NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION");
    expect(
      cls(
        "MERGE INTO t USING s ON a WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED BY TARGET THEN INSERT *",
      ).errorClass,
    ).toBe("NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION");
    expect(
      cls(
        "MERGE INTO t USING s ON a WHEN NOT MATCHED BY SOURCE THEN DELETE " +
          "WHEN NOT MATCHED BY SOURCE THEN DELETE",
      ).errorClass,
    ).toBe("NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION");
    expect(cls("SELECT INTERVAL 1 DAY").errorClass).toBe("UNSUPPORTED_DATATYPE");
  });

  it("turns deep nesting into a parse error instead of overflowing the stack", () => {
    const n = 20_000;
    for (const sql of [
      `SELECT ${"(".repeat(n)}1${")".repeat(n)}`,
      `SELECT ${"NOT ".repeat(n)}a`,
      `SELECT ${"- ".repeat(n)}a`,
      `SELECT ${"(SELECT ".repeat(n)}1${")".repeat(n)}`,
      `SELECT CAST(a AS ${"ARRAY<".repeat(n)}INT${">".repeat(n)})`,
      `SELECT * FROM ${"(".repeat(n)}t${")".repeat(n)}`,
    ]) {
      const e = errorOf(() => parseStatement(sql));
      expect(e.errorClass).toBe("PARSE_SYNTAX_ERROR");
      expect(e.message).toContain("nests too deeply");
    }
    // Generated SQL nests deeply too; these stay well inside the budget.
    expect(parseExpression(`${"(1 + ".repeat(150)}1${")".repeat(150)}`).kind).toBe("binary");
    expect(parseExpression(`${"(SELECT ".repeat(100)}1${")".repeat(100)}`).kind).toBe(
      "scalarSubquery",
    );
    expect(
      parseExpression(`${"CASE WHEN a THEN 1 ELSE ".repeat(150)}1${" END".repeat(150)}`).kind,
    ).toBe("case");
    // Long flat chains are not nesting.
    const flat = parseExpression(`1${" + 1".repeat(n)}`);
    expect(flat.kind).toBe("binary");
    expect(parseExpression(`${"(".repeat(MAX_DEPTH - 5)}1${")".repeat(MAX_DEPTH - 5)}`).kind).toBe(
      "literal",
    );
  });

  it("parseExpression refuses anything after the expression", () => {
    const e = errorOf(() => parseExpression("a = 1 b"));
    expect(e.message).toBe("Syntax error at or near 'b': extra input 'b'. (line 1, pos 6)");
  });
});

// ---------------------------------------------------------------------------------------------
// Fuzz: the parser answers or throws a parse error, never anything else

const PARSE_CLASSES = new Set([
  "PARSE_SYNTAX_ERROR",
  "PARSE_EMPTY_STATEMENT",
  "INVALID_TYPED_LITERAL",
  "UNCLOSED_BRACKETED_COMMENT",
  "INVALID_IDENTIFIER",
  "DUPLICATE_CLAUSES",
  "DUPLICATE_KEY",
  "INVALID_NUMERIC_LITERAL_RANGE",
  "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
  "UNSUPPORTED_DATATYPE",
  "DATATYPE_MISSING_SIZE",
  "COLUMN_ALREADY_EXISTS",
  "INVALID_ESC",
  "INVALID_SET_SYNTAX",
  "MERGE_WITHOUT_WHEN",
  "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
  "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION",
  "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
  "SPECIFY_CLUSTER_BY_WITH_PARTITIONED_BY_IS_NOT_ALLOWED",
  "CREATE_TABLE_COLUMN_DESCRIPTOR_DUPLICATE",
]);

function parsesOrRejects(sql: string): void {
  try {
    parseStatement(sql);
  } catch (e) {
    if (!(e instanceof SiltError) || e.status !== 400 || !PARSE_CLASSES.has(e.errorClass)) {
      throw new Error(`unexpected ${e instanceof SiltError ? e.errorClass : String(e)} for ${sql}`);
    }
  }
}

const SEED_STATEMENTS = [
  "CREATE TABLE sales.orders USING DELTA AS SELECT * FROM VALUES (1, 'ada', 9.50, DATE'2026-10-01'), (2, 'grace', 20.00, DATE'2026-10-01') AS t(order_id, customer, amount, day)",
  "CREATE OR REPLACE TABLE sales.orders USING DELTA PARTITIONED BY (day) AS SELECT *, amount * 0.20 AS tax FROM sales.orders",
  "INSERT OVERWRITE sales.orders VALUES (4, 'ada', 12.00, DATE'2026-10-03', 2.40)",
  "INSERT INTO sales.orders REPLACE WHERE day = DATE'2026-10-03' VALUES (7, 'ada', 30.00, DATE'2026-10-03', 6.00)",
  "SELECT order_id, day FROM sales.orders VERSION AS OF 3 ORDER BY order_id",
  "RESTORE TABLE sales.orders TO VERSION AS OF 3",
  "CREATE TABLE inventory.stock.returns (sku STRING, qty INT) USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')",
  "UPDATE inventory.stock.items SET qty = qty + 5 WHERE sku = 'pear'",
  "DELETE FROM inventory.stock.items WHERE qty = 0",
  "MERGE INTO customers AS t USING (SELECT 1 AS customer_id, 'Alice Updated' AS name) AS s ON t.customer_id = s.customer_id WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *",
  "INSERT INTO h AS x REPLACE ON x.d <=> s.d (SELECT * FROM l) AS s",
  "SELECT CASE WHEN a IS NOT NULL THEN CAST(b AS DECIMAL(10,2)) ELSE -1.5e3 END, x::ARRAY<STRUCT<a: INT>> FROM t LEFT JOIN u USING (id) WHERE c NOT BETWEEN 1 AND 2 OR d IN (SELECT 1) GROUP BY 1 HAVING count(DISTINCT e) > 1 ORDER BY 1 DESC NULLS LAST LIMIT 5",
  "VACUUM orders LITE RETAIN 7 HOURS DRY RUN",
  "OPTIMIZE orders WHERE day > '2026-01-01' ZORDER BY (a, b)",
];

const VOCAB = [
  ...(
    "SELECT FROM WHERE INSERT INTO OVERWRITE VALUES CREATE OR REPLACE TABLE IF NOT EXISTS AS USING " +
    "DELTA PARTITIONED CLUSTER BY TBLPROPERTIES LOCATION COMMENT MERGE WHEN MATCHED THEN UPDATE SET " +
    "DELETE INSERT SOURCE TARGET IN IS NULL TRUE FALSE BETWEEN AND LIKE ESCAPE CASE END ELSE CAST " +
    "TRY_CAST JOIN LEFT SEMI ANTI ON UNION ALL DISTINCT ORDER ASC DESC NULLS FIRST LAST LIMIT " +
    "OFFSET VERSION TIMESTAMP DATE X OF EXISTS DESCRIBE HISTORY DETAIL RESTORE TO VACUUM RETAIN " +
    "HOURS DRY RUN OPTIMIZE ZORDER STRUCT ARRAY MAP DECIMAL INT STRING SHOW TABLES USE DROP " +
    "CATALOG SCHEMA GROUP HAVING WITH EXTRACT SUBSTRING POSITION FOR DIV INTERVAL"
  ).split(" "),
  "a",
  "t.b",
  "`q``x`",
  "'s'",
  '"d"',
  "1",
  "2147483648",
  "9.50",
  "1e3",
  "1L",
  "200Y",
  "1BD",
  "X'0A'",
  "DATE'2026-13-01'",
  "TIMESTAMP'2026-10-03 12:00'",
  ...["(", ")", ",", ".", ";", "*", "+", "-", "/", "%", "=", "==", "<=>", "<>", "!=", "<", ">"],
  ...["<=", ">=", "||", "|", "&", "^", "~", "::", ":", "@", "!", "[", "]", "/*", "*/", "--"],
];

describe("fuzz", () => {
  it("random token soups", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...VOCAB), { maxLength: 30 }), (toks) => {
        parsesOrRejects(toks.join(" "));
      }),
      { numRuns: 3000 },
    );
  });

  it("random characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), (s) => parsesOrRejects(s)),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(..."SELECT a,b()'\"`;.-*/+=<>!1e5L\n \\xX@:"), { maxLength: 60 }),
        (cs) => parsesOrRejects(cs.join("")),
      ),
      { numRuns: 2000 },
    );
  });

  it("mutated seed statements: delete, duplicate, swap, insert tokens, truncate", () => {
    const seeds = SEED_STATEMENTS.map((s) => {
      const toks = tokenize(s);
      return { s, parts: toks.slice(0, -1).map((t) => s.slice(t.start, t.end)) };
    });
    for (const { s } of seeds) parseStatement(s);
    const mutation = fc.oneof(
      fc.record({ op: fc.constant("delete"), i: fc.nat() }),
      fc.record({ op: fc.constant("duplicate"), i: fc.nat() }),
      fc.record({ op: fc.constant("swap"), i: fc.nat(), j: fc.nat() }),
      fc.record({ op: fc.constant("insert"), i: fc.nat(), tok: fc.constantFrom(...VOCAB) }),
      fc.record({ op: fc.constant("truncate"), i: fc.nat() }),
      fc.record({ op: fc.constant("cut"), i: fc.nat() }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        ({ s, parts }, muts) => {
          let p = [...parts];
          let raw: string | undefined;
          for (const m of muts) {
            const i = p.length === 0 ? 0 : m.i % p.length;
            if (m.op === "delete") p.splice(i, 1);
            else if (m.op === "duplicate" && p.length > 0) p.splice(i, 0, p[i]);
            else if (m.op === "swap" && p.length > 0 && "j" in m) {
              const j = m.j % p.length;
              [p[i], p[j]] = [p[j], p[i]];
            } else if (m.op === "insert" && "tok" in m) p.splice(i, 0, m.tok);
            else if (m.op === "truncate") p = p.slice(0, i);
            else if (m.op === "cut") raw = s.slice(0, m.i % (s.length + 1));
          }
          parsesOrRejects(raw ?? p.join(" "));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("expressions alone", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...VOCAB), { maxLength: 20 }), (toks) => {
        try {
          parseExpression(toks.join(" "));
        } catch (e) {
          expect(e instanceof SiltError && PARSE_CLASSES.has(e.errorClass)).toBe(true);
        }
      }),
      { numRuns: 1500 },
    );
  });
});
