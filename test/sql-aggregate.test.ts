/**
 * The batch-at-a-time aggregation against the row-at-a-time reference it replaced (group keys by
 * JSON.stringify of canonical values, per-group row lists, scalar reduce), over random tables
 * with NULLs, negatives, big longs, decimals, strings, dates, timestamps, NaN and -0, few and
 * many groups, split into random batches.
 */
import * as arrow from "apache-arrow";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arrowValues } from "../lib/data/arrow-to-json.ts";
import { valuesToArrow } from "../lib/data/json-to-arrow.ts";
import { combineChunks } from "../lib/data/kernels.ts";
import type { DataType } from "../lib/delta/schema.ts";
import { analyze, type Scope } from "../lib/expr/analyze.ts";
import type { Query, SqlType } from "../lib/expr/ast.ts";
import { evaluateTable } from "../lib/expr/evaluate.ts";
import { fromScalar, toScalar } from "../lib/expr/scalar-json.ts";
import { compareScalars } from "../lib/expr/scalar-order.ts";
import type { Typed } from "../lib/expr/typed.ts";
import type { Scalar } from "../lib/expr/types.ts";
import { GroupedAggregation } from "../lib/sql/aggregate.ts";
import type { AggregateNode } from "../lib/sql/aggregate-accumulators.ts";
import { parseStatement } from "../lib/sql/statement-parser.ts";

const COLUMNS: [string, SqlType][] = [
  ["k_int", "integer"],
  ["k_str", "string"],
  ["k_date", "date"],
  ["k_bool", "boolean"],
  ["v_long", "long"],
  ["v_short", "short"],
  ["v_double", "double"],
  ["v_float", "float"],
  ["v_dec", { type: "decimal", precision: 10, scale: 2 }],
  ["v_bigdec", { type: "decimal", precision: 30, scale: 3 }],
  ["v_ts", "timestamp"],
  ["v_str", "string"],
];

const AGGREGATES = [
  "count(*)",
  "count(v_long)",
  "count(v_str, v_double)",
  "count(DISTINCT v_str)",
  "count(DISTINCT v_double)",
  "count(DISTINCT k_int, v_str)",
  "sum(v_long)",
  "sum(v_short)",
  "sum(v_double)",
  "sum(v_float)",
  "sum(v_dec)",
  "sum(v_bigdec)",
  "sum(DISTINCT v_long)",
  "avg(v_long)",
  "avg(v_short)",
  "avg(v_double)",
  "mean(v_dec)",
  "avg(v_bigdec)",
  "avg(DISTINCT v_dec)",
  "min(v_long)",
  "max(v_long)",
  "min(v_double)",
  "max(v_double)",
  "min(v_float)",
  "max(v_dec)",
  "min(v_bigdec)",
  "min(v_str)",
  "max(v_str)",
  "min(k_date)",
  "max(v_ts)",
  "min(k_bool)",
  "max(v_short + 1)",
];

const KEYS = [
  "",
  "k_int",
  "k_str",
  "k_date",
  "k_bool",
  "v_double",
  "v_long",
  "k_int, k_str",
  "k_str, k_date, k_bool",
  "k_int % 3",
];

const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { freq: 5, nil: null });

const rowArb = (groups: number) =>
  fc.record({
    k_int: nullable(fc.integer({ min: -groups, max: groups })),
    k_str: nullable(fc.constantFrom("a", "b", "é", "\u{1F600}", "\uE000", "", "B")),
    k_date: nullable(fc.integer({ min: -3, max: groups }).map((d) => fromScalar(d * 37, "date"))),
    k_bool: nullable(fc.boolean()),
    v_long: nullable(
      fc.oneof(
        fc.integer({ min: -1000, max: 1000 }),
        fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }).map(String),
      ),
    ),
    v_short: nullable(fc.integer({ min: -32768, max: 32767 })),
    v_double: nullable(
      fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
        fc.constantFrom(0, -0, 1.5, "NaN", "Infinity", "-Infinity"),
      ),
    ),
    v_float: nullable(fc.float({ noNaN: true, noDefaultInfinity: true }).map(Math.fround)),
    v_dec: nullable(
      fc.integer({ min: -99_999_999, max: 99_999_999 }).map((u) => (u / 100).toFixed(2)),
    ),
    v_bigdec: nullable(
      fc.bigInt({ min: -(10n ** 29n) + 1n, max: 10n ** 29n - 1n }).map((u) => {
        const s = (u < 0n ? -u : u).toString().padStart(4, "0");
        return `${u < 0n ? "-" : ""}${s.slice(0, -3)}.${s.slice(-3)}`;
      }),
    ),
    v_ts: nullable(fc.integer({ min: -1e9, max: 1e9 }).map((s) => BigInt(s) * 1_000_123n)),
    v_str: nullable(fc.string({ maxLength: 3 })),
  });

function tableOf(rows: Record<string, unknown>[]): arrow.Table {
  const children = COLUMNS.map(([name, type]) => {
    const values = rows.map((r) => {
      const v = r[name];
      return typeof v === "bigint" ? fromScalar(v, type) : v;
    });
    return valuesToArrow(values, type as DataType);
  });
  const schema = new arrow.Schema(
    COLUMNS.map(([n], i) => new arrow.Field(n, children[i].type, true)),
  );
  const data = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: rows.length,
    nullCount: 0,
    children,
  });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
}

const SCOPE: Scope = {
  relations: [
    { columns: COLUMNS.map(([name, type]) => ({ name, type: type as DataType, nullable: true })) },
  ],
};

function parse(keys: string, aggregates: string[]): { keys: Typed[]; aggregates: AggregateNode[] } {
  const sql = `SELECT ${aggregates.join(", ")} FROM t${keys ? ` GROUP BY ${keys}` : ""}`;
  const q = (parseStatement(sql) as { query: Extract<Query, { kind: "select" }> }).query;
  return {
    keys: q.groupBy.map((g) => analyze(g, SCOPE)),
    aggregates: q.items.map((i) => analyze(i.expr, SCOPE) as AggregateNode),
  };
}

describe("batch aggregation", () => {
  it("gives the row-at-a-time results over random tables split into random batches", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 3, 50, 1000).chain((groups) =>
          fc.record({
            rows: fc.array(rowArb(groups), { maxLength: 120 }),
            cuts: fc.array(fc.nat(120), { maxLength: 5 }),
            keys: fc.constantFrom(...KEYS),
            aggregates: fc.subarray(AGGREGATES, { minLength: 1 }),
          }),
        ),
        ({ rows, cuts, keys, aggregates }) => {
          const table = tableOf(rows);
          const plan = parse(keys, aggregates);
          const folding = new GroupedAggregation(plan.keys, plan.aggregates, { now: 0n });
          const bounds = [
            ...new Set([0, ...cuts.filter((c) => c < rows.length), rows.length]),
          ].sort((a, b) => a - b);
          for (let i = 0; i + 1 < bounds.length; i++) {
            for (const b of table.slice(bounds[i], bounds[i + 1]).batches) folding.add(b);
          }
          expect(folding.finish()).toEqual(reference(table, plan.keys, plan.aggregates));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps long sums exact past 2^53 and across the word carry", () => {
    const big = "4611686018427387903";
    const rows = Array.from({ length: 5 }, () => ({ v_long: big }));
    const table = tableOf(rows);
    const plan = parse("", ["sum(v_long)", "avg(v_long)", "min(v_long)"]);
    const folding = new GroupedAggregation(plan.keys, plan.aggregates, { now: 0n });
    for (const b of table.batches) folding.add(b);
    const result = folding.finish();
    expect(result.aggregates[0]).toEqual([String(5n * BigInt(big))]);
    expect(result).toEqual(reference(table, plan.keys, plan.aggregates));
  });
});

/** The aggregation SELECT ran before it streamed: the whole table, one row at a time. */
function reference(table: arrow.Table, keys: Typed[], aggregates: AggregateNode[]) {
  const t = combineChunks(table);
  const n = t.numRows;
  const keyValues = keys.map((k) => arrowValues(evaluateTable(k, t), k.type as DataType));
  const groupOf = new Int32Array(n);
  const firstRow: number[] = [];
  const ids = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const key = keyValues.length === 0 ? "" : JSON.stringify(keyValues.map((k) => k[i]));
    let g = ids.get(key);
    if (g === undefined) {
      g = firstRow.length;
      ids.set(key, g);
      firstRow.push(i);
    }
    groupOf[i] = g;
  }
  const numGroups = keys.length === 0 ? 1 : firstRow.length;
  return {
    numGroups,
    keys: keyValues.map((k) => firstRow.map((r) => k[r])),
    aggregates: aggregates.map((node) => computeAggregate(node, t, groupOf, numGroups)),
  };
}

function computeAggregate(
  node: AggregateNode,
  table: arrow.Table,
  groupOf: Int32Array,
  numGroups: number,
): unknown[] {
  const n = table.numRows;
  if (node.name === "count" && node.star) {
    const counts = new Array<number>(numGroups).fill(0);
    for (let i = 0; i < n; i++) counts[groupOf[i]]++;
    return counts;
  }
  const args = node.args.map((a) => ({
    type: a.type,
    values: arrowValues(evaluateTable(a, table), a.type as DataType),
  }));
  const scalars = args.map((a) => a.values.map((v) => toScalar(v, a.type)));
  const rowsOf: number[][] = Array.from({ length: numGroups }, () => []);
  for (let i = 0; i < n; i++) rowsOf[groupOf[i]].push(i);
  return rowsOf.map((rows) => {
    let live = rows.filter((i) => scalars.every((s) => s[i] !== null));
    if (node.distinct) {
      const seen = new Set<string>();
      live = live.filter((i) => {
        const key = JSON.stringify(args.map((a) => a.values[i]));
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    return reduce(
      node,
      args[0]?.type ?? "null",
      live.map((i) => scalars[0]?.[i] as Scalar),
    );
  });
}

function reduce(node: AggregateNode, argType: SqlType, xs: Scalar[]): unknown {
  switch (node.name) {
    case "count":
      return xs.length;
    case "min":
    case "max": {
      if (xs.length === 0) return null;
      let best = xs[0];
      for (const x of xs) {
        const c = compareScalars(argType, x, best);
        if (node.name === "min" ? c < 0 : c > 0) best = x;
      }
      return fromScalar(best, node.type);
    }
    case "sum": {
      if (xs.length === 0) return null;
      if (node.type === "double")
        return fromScalar(
          xs.reduce((s: number, x) => s + Number(x), 0),
          "double",
        );
      const total = xs.reduce((s: bigint, x) => s + BigInt(x as number | bigint), 0n);
      return fromScalar(total, node.type);
    }
    default: {
      if (xs.length === 0) return null;
      if (node.type === "double") {
        return fromScalar(xs.reduce((s: number, x) => s + Number(x), 0) / xs.length, "double");
      }
      const total = xs.reduce((s: bigint, x) => s + BigInt(x as bigint), 0n) * 10_000n;
      const count = BigInt(xs.length);
      const q = total / count;
      const r = total % count;
      const rounded = 2n * (r < 0n ? -r : r) >= count ? q + (total < 0n ? -1n : 1n) : q;
      return fromScalar(rounded, node.type);
    }
  }
}
