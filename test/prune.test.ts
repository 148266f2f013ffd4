import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rowsToArrow } from "../lib/data/json-to-arrow.ts";
import { readParquetFooter, writeParquet } from "../lib/data/parquet.ts";
import { serializePartitionValue } from "../lib/data/partition-values.ts";
import { computeFileStats, serializeStats } from "../lib/data/stats.ts";
import type { AddFile } from "../lib/delta/actions.ts";
import { decimal, structField, structType } from "../lib/delta/schema.ts";
import { SiltError } from "../lib/errors.ts";
import { analyzePredicate, type Scope, scopeOf } from "../lib/expr/analyze.ts";
import type { Expr, Pos, SqlType } from "../lib/expr/ast.ts";
import { evaluatePredicate } from "../lib/expr/evaluate.ts";
import { parseExpression } from "../lib/expr/parse.ts";
import { canMatch, canMatchRowGroup, fileMatcher, parseStatsJson } from "../lib/expr/prune.ts";
import type { Typed } from "../lib/expr/typed.ts";

// Data columns first, the partition column last (scan order: data columns, then partitions).
const SCHEMA = structType([
  structField("id", "long"),
  structField("x", "integer"),
  structField("v", "double"),
  structField("s", "string"),
  structField("d", "date"),
  structField("ts", "timestamp"),
  structField("m", decimal(7, 2)),
  structField("p", "integer"),
]);
const DATA = structType(SCHEMA.fields.slice(0, -1));
const SCOPE: Scope = scopeOf(SCHEMA.fields, ["t"]);
const PARTITIONS = ["p"];

const predicate = (sql: string): Typed => analyzePredicate(parseExpression(sql), SCOPE);

function addFile(rows: unknown[][], part: number | null, path = "f.parquet"): AddFile {
  const table = rowsToArrow(
    rows.map((r) => r.slice(0, -1)),
    DATA,
  );
  return {
    path,
    partitionValues: { p: serializePartitionValue(part, "integer") },
    size: 1,
    modificationTime: 0,
    dataChange: true,
    stats: serializeStats(computeFileStats(table)),
  };
}

/** Whether some row of the file satisfies the predicate (rows include the partition value). */
function actuallyMatches(pred: Typed, rows: unknown[][]): boolean {
  if (rows.length === 0) return false;
  const batch = rowsToArrow(rows, SCHEMA).batches[0];
  try {
    return evaluatePredicate(pred, batch).some((x) => x === 1);
  } catch (e) {
    // A scan of these rows would fail; pruning promises nothing about such files.
    if (e instanceof SiltError) return false;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Property: pruning never drops a file (or row group) that holds a matching row

const POS: Pos = { line: 1, column: 1 };
const col = (name: string): Expr => ({ kind: "column", name: [name], pos: POS });
const lit = (value: unknown, type: SqlType): Expr => ({
  kind: "literal",
  value: value as null,
  type,
  pos: POS,
});

const LONG_PREFIX = "abcdefghijklmnopqrstuvwxyz0123456789";
const strings = fc.oneof(
  fc.constantFrom("", "a", "b", "ab", "z", "é", "😀", "\uFFFD", "\uFFFF"),
  fc.string({ maxLength: 3 }),
  fc.string({ maxLength: 4 }).map((t) => LONG_PREFIX + t),
  fc.constantFrom(`${LONG_PREFIX.slice(0, 31)}\uFFFF\uFFFFz`, `${LONG_PREFIX.slice(0, 32)}😀`),
);
const doubles = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(0.5, -0, Number.NaN, Number.POSITIVE_INFINITY, -1e300),
);
const dates = fc
  .integer({ min: -3, max: 3 })
  .map((k) => new Date((20000 + k) * 86_400_000).toISOString().slice(0, 10));
const timestamps = fc.integer({ min: 0, max: 3000 }).map(
  (us) =>
    `2026-10-03T12:00:00.${String(us * 333)
      .padStart(6, "0")
      .slice(0, 6)}Z`,
);

const VALUES: Record<string, { arb: fc.Arbitrary<unknown>; type: SqlType }> = {
  id: {
    arb: fc.oneof(
      fc.integer({ min: -20, max: 20 }),
      fc.constantFrom("9007199254740993", "-9223372036854775808"),
    ),
    type: "long",
  },
  x: { arb: fc.integer({ min: -20, max: 20 }), type: "integer" },
  v: { arb: doubles, type: "double" },
  s: { arb: strings, type: "string" },
  d: { arb: dates, type: "date" },
  ts: { arb: timestamps, type: "timestamp" },
  m: {
    arb: fc.integer({ min: -999, max: 999 }).map((u) => (u / 100).toFixed(2)),
    type: decimal(7, 2),
  },
  p: { arb: fc.integer({ min: 0, max: 3 }), type: "integer" },
};
const NAMES = Object.keys(VALUES);

const row = fc.tuple(...NAMES.map((n) => fc.option(VALUES[n].arb, { freq: 4 })));

const literalFor = (name: string): fc.Arbitrary<Expr> => {
  const { arb, type } = VALUES[name];
  return fc.oneof(
    {
      weight: 6,
      arbitrary: arb.map((v) =>
        lit(
          typeof v === "number" && Number.isNaN(v)
            ? "NaN"
            : v === Number.POSITIVE_INFINITY
              ? "Infinity"
              : v,
          type,
        ),
      ),
    },
    { weight: 1, arbitrary: fc.constant(lit(null, "null")) },
  );
};

const leaf: fc.Arbitrary<Expr> = fc.constantFrom(...NAMES).chain((name) =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .tuple(
          fc.constantFrom("=", "!=", "<", "<=", ">", ">=", "<=>") as fc.Arbitrary<"=">,
          literalFor(name),
          fc.boolean(),
        )
        .map(
          ([op, l, flip]): Expr => ({
            kind: "binary",
            op,
            left: flip ? l : col(name),
            right: flip ? col(name) : l,
            pos: POS,
          }),
        ),
    },
    fc
      .tuple(fc.array(literalFor(name), { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(
        ([list, negated]): Expr => ({ kind: "in", operand: col(name), list, negated, pos: POS }),
      ),
    fc.tuple(literalFor(name), literalFor(name), fc.boolean()).map(
      ([lo, hi, negated]): Expr => ({
        kind: "between",
        operand: col(name),
        low: lo,
        high: hi,
        negated,
        pos: POS,
      }),
    ),
    fc
      .boolean()
      .map((negated): Expr => ({ kind: "isNull", operand: col(name), negated, pos: POS })),
  ),
);

const special: fc.Arbitrary<Expr> = fc
  .constantFrom(
    "x = 3L",
    "x < 2.5",
    "m > 1",
    "id = x",
    "x + 1 > 3",
    "year(d) = 2024",
    "d = '2024-10-04'",
    "ts > TIMESTAMP'2026-10-03 12:00:00.5'",
    "ts <= '2026-10-03 12:00:00.000333'",
    "p + x > 4",
    "s LIKE 'ab%'",
    "CAST(v AS INT) = 1",
    "coalesce(x, p) = 2",
    "v = CAST('NaN' AS DOUBLE)",
  )
  .map(parseExpression);

const predicateArb: fc.Arbitrary<Expr> = fc.letrec<{ e: Expr }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: leaf },
    { weight: 1, arbitrary: special },
    fc
      .tuple(fc.constantFrom("and", "or") as fc.Arbitrary<"and">, tie("e"), tie("e"))
      .map(([op, a, b]): Expr => ({ kind: "binary", op, left: a, right: b, pos: POS })),
    tie("e").map((a): Expr => ({ kind: "unary", op: "not", operand: a, pos: POS })),
  ),
})).e;

const files = fc.array(
  fc.tuple(fc.option(fc.integer({ min: 0, max: 3 }), { freq: 4 }), fc.array(row, { maxLength: 6 })),
  { minLength: 1, maxLength: 5 },
);

describe("pruning is conservative", () => {
  it("never excludes a file that holds a matching row", () => {
    fc.assert(
      fc.property(predicateArb, files, (expr, fileSpecs) => {
        const pred = analyzePredicate(expr, SCOPE);
        const matcher = fileMatcher(pred, SCHEMA, PARTITIONS);
        for (const [part, rows0] of fileSpecs) {
          const rows = rows0.map((r) => [...r.slice(0, -1), part]);
          if (actuallyMatches(pred, rows)) {
            expect(matcher(addFile(rows, part)), JSON.stringify(rows)).toBe(true);
          }
        }
      }),
      { numRuns: 250 },
    );
  });

  it("never excludes a Parquet row group that holds a matching row", async () => {
    await fc.assert(
      fc.asyncProperty(
        predicateArb,
        fc.array(row, { minLength: 1, maxLength: 12 }),
        async (expr, rows0) => {
          const pred = analyzePredicate(expr, SCOPE);
          const rows = rows0.map((r) => [...r.slice(0, -1), 1]);
          const table = rowsToArrow(
            rows.map((r) => r.slice(0, -1)),
            DATA,
          );
          const footer = await readParquetFooter(writeParquet(table, { rowGroupSize: 3 }));
          footer.rowGroups.forEach((_, g) => {
            const groupRows = rows.slice(g * 3, g * 3 + 3);
            if (actuallyMatches(pred, groupRows)) {
              expect(canMatchRowGroup(pred, footer, g, { partitionValues: { p: 1 } })).toBe(true);
            }
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Selectivity

/** 100 files, file k holding ids [1000k, 1000k + 999] in steps of 10, partition p = k % 4. */
const HUNDRED: AddFile[] = Array.from({ length: 100 }, (_, k) =>
  addFile(
    Array.from({ length: 100 }, (_, j) => {
      const id = 1000 * k + 10 * j;
      return [id, j, j / 2, `name${String(k).padStart(3, "0")}`, "2026-10-03", null, "1.00", k % 4];
    }),
    k % 4,
    `part-${k}.parquet`,
  ),
);

function opened(sql: string): number {
  const matcher = fileMatcher(predicate(sql), SCHEMA, PARTITIONS);
  return HUNDRED.filter(matcher).length;
}

describe("pruning is selective", () => {
  it("opens only the files whose ranges can match", () => {
    expect(opened("id = 4242")).toBe(1);
    expect(opened("id = 4240")).toBe(1);
    expect(opened("4240 = id")).toBe(1);
    expect(opened("id BETWEEN 4000 AND 5999")).toBe(2);
    expect(opened("id > 98989")).toBe(2);
    expect(opened("id > 98999")).toBe(1);
    expect(opened("id >= 99000")).toBe(1);
    expect(opened("NOT (id < 99000)")).toBe(1);
    expect(opened("id IN (5, 50500)")).toBe(2);
    expect(opened("id NOT IN (5)")).toBe(100);
    expect(opened("id < 0")).toBe(0);
    expect(opened("id = 4242 OR id = 77777")).toBe(2);
    expect(opened("id = 4242 AND x = 1000")).toBe(0);
    expect(opened("id IS NULL")).toBe(0);
    expect(opened("id IS NOT NULL AND id <= 999")).toBe(1);
    expect(opened("s = 'name042'")).toBe(1);
    expect(opened("s >= 'name098'")).toBe(2);
    expect(opened("ts IS NOT NULL")).toBe(0);
    expect(opened("id = 4242L")).toBe(1);
    expect(opened("CAST(id AS DOUBLE) = 4242.0")).toBe(1);
    expect(opened("id = '4242'")).toBe(1);
    expect(opened("m > 1")).toBe(0);
    expect(opened("id * 2 = 8484")).toBe(100);
  });

  it("uses partition values exactly", () => {
    expect(opened("p = 1")).toBe(25);
    expect(opened("p = 1 AND id < 10000")).toBe(3);
    expect(opened("p IN (0, 3) AND NOT p = 3")).toBe(25);
    expect(opened("p + 1 = 2")).toBe(25);
    expect(opened("p IS NULL")).toBe(0);
    expect(opened("p = 1 OR id = 4242")).toBe(26);
    expect(opened("NOT (p <> 2)")).toBe(25);
    expect(opened("p = 9")).toBe(0);
  });

  it("keeps files it cannot judge", () => {
    const noStats = { ...HUNDRED[4], stats: undefined };
    expect(fileMatcher(predicate("id = 4242"), SCHEMA, PARTITIONS)(noStats)).toBe(true);
    expect(
      fileMatcher(predicate("id = 1"), SCHEMA, PARTITIONS)({ ...noStats, stats: "{not json" }),
    ).toBe(true);
    expect(fileMatcher(predicate("p = 0"), SCHEMA, PARTITIONS)(noStats)).toBe(true);
    expect(fileMatcher(predicate("p = 1"), SCHEMA, PARTITIONS)(noStats)).toBe(false);
    expect(canMatch(predicate("upper(s) = 'X'"), {})).toBe(true);
    expect(canMatch(predicate("false"), {})).toBe(false);
    expect(canMatch(predicate("NULL"), {})).toBe(false);
    expect(canMatch(predicate("1 = 1"), {})).toBe(true);
    expect(canMatch(predicate("x = 1"), { stats: { numRecords: 0 } })).toBe(false);
  });
});

describe("statistics edge cases", () => {
  const stats = (min: unknown, max: unknown, nullCount = 0, numRecords = 5) => ({
    stats: {
      numRecords,
      minValues: { s: min, ts: min, v: min, id: min },
      maxValues: { s: max, ts: max, v: max, id: max },
      nullCount: { s: nullCount, ts: nullCount, v: nullCount, id: nullCount },
    },
  });

  it("treats a string max that may be truncated as no upper bound", () => {
    const long = `${"a".repeat(32)}`;
    expect(canMatch(predicate("s = 'b'"), stats("a", "az"))).toBe(false);
    expect(canMatch(predicate(`s = '${"a".repeat(40)}'`), stats("a", long))).toBe(true);
    expect(canMatch(predicate("s > 'b'"), stats("a", `${"a".repeat(32)}\uFFFD`))).toBe(false);
    expect(canMatch(predicate("s < 'a'"), stats("a", long))).toBe(false);
  });

  it("widens millisecond timestamp maxima by 999 microseconds", () => {
    const file = stats("2026-10-03T12:00:00.000Z", "2026-10-03T12:00:00.999Z");
    expect(canMatch(predicate("ts > TIMESTAMP'2026-10-03 12:00:00.9995'"), file)).toBe(true);
    expect(canMatch(predicate("ts > TIMESTAMP'2026-10-03 12:00:01'"), file)).toBe(false);
  });

  it("orders NaN above every double", () => {
    expect(canMatch(predicate("v > 1e308"), stats(1, "NaN"))).toBe(true);
    expect(canMatch(predicate("v > 5"), stats(1, 5))).toBe(false);
    expect(canMatch(predicate("v = 0.0"), stats(-0, 0))).toBe(true);
  });

  it("reads long bounds beyond 2^53 exactly", () => {
    expect(
      canMatch(predicate("id = 9007199254740992"), stats("9007199254740993", "9007199254740993")),
    ).toBe(false);
    const parsed = parseStatsJson(
      '{"numRecords":1,"minValues":{"id":9007199254740993},"maxValues":{"id":9007199254740993},"nullCount":{"id":0}}',
    ) as { minValues: Record<string, unknown>; maxValues: Record<string, unknown> };
    expect(parsed.minValues.id).toBe("9007199254740993");
    const exact = {
      stats: {
        numRecords: 1,
        minValues: parsed.minValues,
        maxValues: parsed.maxValues,
        nullCount: { id: 0 },
      },
    };
    expect(canMatch(predicate("id = 9007199254740992"), exact)).toBe(false);
    expect(canMatch(predicate("id = 9007199254740993"), exact)).toBe(true);
  });

  it("handles NULL-only columns and NOT IN with NULL", () => {
    const allNull = stats(undefined, undefined, 5, 5);
    expect(canMatch(predicate("id = 1"), allNull)).toBe(false);
    expect(canMatch(predicate("id IS NULL"), allNull)).toBe(true);
    expect(canMatch(predicate("NOT (id IS NULL)"), allNull)).toBe(false);
    expect(canMatch(predicate("id <=> NULL"), allNull)).toBe(true);
    expect(canMatch(predicate("id NOT IN (1, NULL)"), stats(0, 9))).toBe(false);
    expect(canMatch(predicate("id NOT IN (1)"), stats(1, 1))).toBe(false);
    expect(canMatch(predicate("id != 1"), stats(1, 1))).toBe(false);
    expect(canMatch(predicate("NOT (id <=> 1)"), stats(1, 1))).toBe(false);
    expect(canMatch(predicate("NOT (id <=> 1)"), stats(1, 1, 1))).toBe(true);
  });

  it("ignores columns of other relations", () => {
    const scope: Scope = {
      relations: [
        { qualifier: ["t"], columns: [{ name: "id", type: "long", nullable: true }] },
        { qualifier: ["s"], columns: [{ name: "id", type: "long", nullable: true }] },
      ],
    };
    const pred = analyzePredicate(parseExpression("t.id = 1 AND s.id = 5"), scope);
    const file = {
      stats: { numRecords: 3, minValues: { id: 0 }, maxValues: { id: 2 }, nullCount: { id: 0 } },
    };
    expect(canMatch(pred, file)).toBe(true);
    expect(canMatch(pred, file, { relation: 1 })).toBe(false);
  });

  it("reads statistics through column mapping's physical names", () => {
    const add: AddFile = {
      path: "f",
      partitionValues: { "col-p": "2" },
      size: 1,
      modificationTime: 0,
      dataChange: true,
      stats:
        '{"numRecords":2,"minValues":{"col-id":10},"maxValues":{"col-id":20},"nullCount":{"col-id":0}}',
    };
    const toPhysical = (path: readonly string[]) => path.map((p) => `col-${p}`);
    const m = (sql: string) => fileMatcher(predicate(sql), SCHEMA, PARTITIONS, { toPhysical })(add);
    expect(m("id = 15")).toBe(true);
    expect(m("id = 25")).toBe(false);
    expect(m("p = 2")).toBe(true);
    expect(m("p = 3")).toBe(false);
  });
});

describe("row groups", () => {
  it("skips row groups whose footer statistics exclude the predicate", async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => [
      i,
      i % 7,
      i / 3,
      `k${String(i).padStart(4, "0")}`,
      "2026-10-03",
      null,
      "0.50",
    ]);
    const footer = await readParquetFooter(
      writeParquet(rowsToArrow(rows, DATA), { rowGroupSize: 100 }),
    );
    expect(footer.rowGroups.length).toBe(10);
    const groups = (sql: string) =>
      footer.rowGroups.map((_, g) => canMatchRowGroup(predicate(sql), footer, g)).filter(Boolean)
        .length;
    expect(groups("id = 424")).toBe(1);
    expect(groups("id >= 900 OR id < 100")).toBe(2);
    expect(groups("s = 'k0555'")).toBe(1);
    expect(groups("x = 3")).toBe(10);
    expect(groups("ts IS NULL")).toBe(10);
    expect(groups("ts IS NOT NULL")).toBe(0);
    expect(groups("m = 0.5")).toBe(10);
    expect(groups("m > 0.5")).toBe(0);
  });
});
