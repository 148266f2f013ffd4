/**
 * Silt against real Spark's answers: every case file in test/spark-parity/cases/ runs in order
 * through Silt's /sql endpoint, and each statement's answer is compared with the one Spark 4.1 +
 * Delta 4.3.1 gave (test/spark-parity/expected/, written by `npm run spark-parity`; see
 * test/spark-parity/cases.ts for the directives). Spark is not needed to run this test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import {
  type Case,
  type Column,
  readCases,
  readExpected,
  type SparkAnswer,
  topics,
} from "./spark-parity/cases.ts";

const CATALOG = "parity";

for (const topic of topics()) {
  describe(`Spark parity: ${topic}`, () => {
    const cases = readCases(topic);
    const expected = readExpected(topic);
    let silt: SiltHarness;
    beforeAll(async () => {
      silt = await startSilt("local", { memory: true });
      await silt.call("POST", "/api/v1/sql", { statement: `CREATE CATALOG ${CATALOG}` });
      await silt.call("POST", "/api/v1/sql", { statement: `CREATE SCHEMA ${CATALOG}.${topic}` });
    });
    afterAll(() => silt?.close());

    it("has Spark's answers for exactly these statements", () => {
      const regenerate = `regenerate them: npm run spark-parity -- ${topic}`;
      expect(expected, `no expected/${topic}.json; ${regenerate}`).toBeDefined();
      const recorded = expected!.cases.map((c) => [c.directive, c.sql]);
      expect(recorded, `the case file changed; ${regenerate}`).toEqual(
        cases.map((c) => [c.directive, c.sql]),
      );
    });

    cases.forEach((c, i) => {
      it(`${topic}.sql:${c.line} ${c.directive}: ${c.sql.split("\n")[0]}`, async () => {
        const spark = expected?.cases[i]?.spark;
        expect(spark, "no Spark answer recorded").toBeDefined();
        const res = await silt.call("POST", "/api/v1/sql", {
          statement: c.sql,
          catalog: CATALOG,
          schema: topic,
        });
        compare(c, res, spark!);
      });
    });
  });
}

function compare(c: Case, res: ApiResponse, spark: SparkAnswer) {
  const body = JSON.stringify(res.body).slice(0, 2000);
  if ("error" in spark) {
    expect(
      res.status,
      `Spark refused it with ${spark.error}; Silt answered ${body}`,
    ).toBeGreaterThanOrEqual(400);
    expect(res.body.error_class, body).toBe(spark.error);
    return;
  }
  expect(res.status, body).toBe(200);
  if (c.directive === "statement") return;
  const columns = (res.body.columns as Column[]).map(({ name, type }) => ({ name, type }));
  expect(columns, "column names and types").toEqual(spark.columns);
  const ordered = c.directive === "query ordered";
  const got = ordered ? res.body.rows : sortRows(res.body.rows);
  const want = ordered ? spark.rows : sortRows(spark.rows);
  expect(got.length, `row count; Silt answered ${body}`).toBe(want.length);
  got.forEach((row: unknown[], r: number) => {
    expect(
      sameValue(row, want[r]),
      `row ${r}: Silt ${JSON.stringify(row)}, Spark ${JSON.stringify(want[r])}`,
    ).toBe(true);
  });
}

/** Rows in a canonical order; numbers keyed to 12 digits so a last-bit difference sorts alike. */
function sortRows(rows: unknown[][]): unknown[][] {
  const key = (row: unknown[]) =>
    JSON.stringify(row, (_k, v) => (typeof v === "number" ? Number(v.toPrecision(12)) : v));
  return [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Equal as JSON, with doubles equal to 1e-9 relative (Spark may sum in another order). */
function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") {
    return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return (
      sameValue(ka, kb) &&
      ka.every((k) =>
        sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return a === b;
}
