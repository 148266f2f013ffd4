/**
 * The parts of `silt sql` below the process: statements cut at `;` by the SQL lexer, answers
 * printed in each format, USE read as session defaults, big answers paged when a deployment
 * refuses them whole, and a statement cancelled through its request's signal.
 */
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import { inProcess } from "../lib/cli/connection.ts";
import { formatAnswer, type SqlAnswer } from "../lib/cli/result-format.ts";
import { runStatement } from "../lib/cli/run-statement.ts";
import { parseUse } from "../lib/cli/session-defaults.ts";
import { splitStatements } from "../lib/cli/statement-split.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { sqlClient } from "./helpers/sql-client.ts";

describe("splitStatements", () => {
  it("cuts at ; tokens only, and numbers the lines statements start on", () => {
    const script = [
      "SELECT 'a;b' AS s, `x;y` FROM t; -- a comment; with a ;",
      "/* block ; comment */ INSERT INTO t",
      '  VALUES ("c;d");;',
      "  ;",
      "SELECT 1",
    ].join("\n");
    const { statements, tail } = splitStatements(script);
    expect(statements).toEqual([
      { text: "SELECT 'a;b' AS s, `x;y` FROM t", line: 1 },
      { text: 'INSERT INTO t\n  VALUES ("c;d")', line: 2 },
    ]);
    expect(tail).toEqual({ text: "SELECT 1", line: 5, kind: "unfinished" });
    expect(splitStatements("SELECT 1; -- only a comment after").tail).toBeUndefined();
  });

  it("tells text more input can close from text nothing mends", () => {
    expect(splitStatements("SELECT 1; SELECT 'open;").tail).toMatchObject({
      text: "SELECT 'open;",
      kind: "open",
    });
    expect(splitStatements("SELECT /* open ;").tail?.kind).toBe("open");
    expect(splitStatements("SELECT `open ;").tail?.kind).toBe("open");
    const stray = splitStatements("SELECT 1; SELECT $ ; SELECT 2;");
    expect(stray.statements).toEqual([{ text: "SELECT 1", line: 1 }]);
    expect(stray.tail).toMatchObject({ text: "SELECT $ ; SELECT 2;", kind: "unreadable" });
  });
});

describe("parseUse", () => {
  it("reads USE as Spark does, and leaves anything else to the server", () => {
    const current = { catalog: "main", schema: "default" };
    expect(parseUse("USE sales", current)?.defaults).toEqual({ catalog: "main", schema: "sales" });
    expect(parseUse("use SCHEMA `odd name`", current)).toEqual({
      defaults: { catalog: "main", schema: "odd name" },
      probe: "SHOW TABLES IN `main`.`odd name`",
    });
    expect(parseUse("USE DATABASE c.s", current)?.defaults).toEqual({ catalog: "c", schema: "s" });
    expect(parseUse("USE c.s", {})?.defaults).toEqual({ catalog: "c", schema: "s" });
    expect(parseUse("USE CATALOG c", current)).toEqual({
      defaults: { catalog: "c", schema: "default" },
      probe: "SHOW SCHEMAS IN `c`",
    });
    expect(parseUse("USE s", {})?.probe).toBe("SHOW TABLES IN `s`");
    for (const other of ["USE", "USE a.b.c", "USE CATALOG a.b", "USE a b", "SELECT 1", "USE 'x"]) {
      expect(parseUse(other, current), other).toBeUndefined();
    }
  });
});

describe("formatAnswer", () => {
  const answer: SqlAnswer = {
    columns: [
      { name: "id", type: "bigint" },
      { name: "note", type: "string" },
      { name: "price", type: "decimal(10,2)" },
      { name: "tags", type: "array<string>" },
      { name: "day", type: "date" },
    ],
    rows: [
      ["9007199254740993", 'say "hi", then\nleave', "9.50", ["a", "b"], "2026-10-03"],
      [2, null, null, null, null],
    ],
  };

  it("prints a grid with the row count, CSV, JSON lines and Arrow", () => {
    expect(formatAnswer(answer, "box")).toBe(
      [
        "+------------------+-----------------------+-------+-----------+------------+",
        "| id               | note                  | price | tags      | day        |",
        "+------------------+-----------------------+-------+-----------+------------+",
        '| 9007199254740993 | say "hi", then\\nleave | 9.50  | ["a","b"] | 2026-10-03 |',
        "| 2                | NULL                  | NULL  | NULL      | NULL       |",
        "+------------------+-----------------------+-------+-----------+------------+",
        "2 rows\n",
      ].join("\n"),
    );
    expect(formatAnswer(answer, "csv")).toBe(
      'id,note,price,tags,day\r\n9007199254740993,"say ""hi"", then\nleave",9.50,"[""a"",""b""]",2026-10-03\r\n2,,,,\r\n',
    );
    expect(formatAnswer(answer, "jsonl")).toBe(
      '{"id":"9007199254740993","note":"say \\"hi\\", then\\nleave","price":"9.50","tags":["a","b"],"day":"2026-10-03"}\n' +
        '{"id":2,"note":null,"price":null,"tags":null,"day":null}\n',
    );
    const table = arrow.tableFromIPC(formatAnswer(answer, "arrow") as Uint8Array);
    expect(table.schema.fields.map((f) => String(f.type))).toEqual([
      "Int64",
      "Utf8",
      "Decimal[10e+2]", // apache-arrow's text for precision 10, scale 2
      "List<Utf8>",
      "Date32<DAY>",
    ]);
    expect(table.getChild("id")?.toArray()).toEqual(BigInt64Array.from([9007199254740993n, 2n]));
    expect(table.getChild("note")?.get(1)).toBeNull();
    const price = table.schema.fields[2].type as arrow.Decimal;
    expect([price.precision, price.scale]).toEqual([10, 2]);
  });

  it("says what a statement without rows did, and prints nothing else for it off the grid", () => {
    const done: SqlAnswer = { columns: [], rows: [], version: 3, created: true };
    expect(formatAnswer(done, "box")).toBe("OK (version 3, created true)\n");
    expect(formatAnswer({ columns: [], rows: [] }, "box")).toBe("OK\n");
    for (const format of ["csv", "jsonl", "arrow"] as const) {
      expect(formatAnswer(done, format), format).toBe("");
    }
    const counted: SqlAnswer = {
      columns: [{ name: "num_affected_rows", type: "bigint" }],
      rows: [[1]],
      version: 4,
    };
    expect(formatAnswer(counted, "box")).toMatch(/\| 1 {17}\|\n\+-+\+\n1 row \(version 4\)\n$/);
  });
});

describe("statements in process", () => {
  let silt: SiltHarness;
  const { ok, failsUnchanged } = sqlClient(() => silt, { catalog: "cli", schema: "s" });
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await ok("CREATE CATALOG cli");
    await ok("CREATE SCHEMA cli.s");
    await ok("CREATE TABLE t (id INT, note STRING) USING DELTA");
    const rows = Array.from({ length: 300 }, (_, i) => `(${i}, '${"x".repeat(40)}')`);
    await ok(`INSERT INTO t VALUES ${rows.join(", ")}`);
  });
  afterAll(() => silt.close());

  it("pages an answer a deployment refuses whole, reading every row once", async () => {
    // A Lambda-sized limit, made small: the whole answer is refused, pages of it are not.
    const app = createApp(silt.ctx, { maxResponseBytes: 4096 });
    const asked: unknown[] = [];
    const conn = inProcess("test", {
      fetch: async (request) => {
        asked.push(await request.clone().json());
        return app.fetch(request);
      },
      close: async () => {},
    });
    const answer = await runStatement(conn, "SELECT * FROM t ORDER BY id", {
      catalog: "cli",
      schema: "s",
    });
    expect(answer.rows).toEqual(Array.from({ length: 300 }, (_, i) => [i, "x".repeat(40)]));
    expect(answer.next_page_token).toBeUndefined();
    const pages = asked.slice(1) as { max_rows: number; page_token?: string }[];
    expect((asked[0] as { max_rows?: number }).max_rows).toBeUndefined();
    expect(pages.length).toBeGreaterThan(1);
    expect(pages[0].page_token).toBeUndefined();
    expect(pages.slice(1).every((p) => p.page_token !== undefined)).toBe(true);
  });

  it("stops a statement whose request was aborted, committing nothing", async () => {
    const app = createApp(silt.ctx);
    const abort = new AbortController();
    abort.abort();
    const res = await failsUnchanged("t", "OPERATION_CANCELED", async () => {
      const response = await app.fetch(
        new Request("http://silt.test/api/v1/sql", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ statement: "INSERT INTO cli.s.t VALUES (-1, 'late')" }),
          signal: abort.signal,
        }),
      );
      return {
        status: response.status,
        body: await response.json(),
        headers: response.headers,
        raw: new Uint8Array(),
      };
    });
    expect(res).toMatchObject({ sqlstate: "HY008", message: "Operation has been canceled." });

    // Through the connection the caller does not wait for the statement's next check.
    const conn = inProcess("test", { fetch: (r) => app.fetch(r), close: async () => {} });
    await expect(
      runStatement(conn, "SELECT count(*) FROM cli.s.t", {}, abort.signal),
    ).rejects.toMatchObject({
      errorClass: "OPERATION_CANCELED",
    });
  });
});
