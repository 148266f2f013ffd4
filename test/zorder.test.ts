/**
 * Z-order: the known Morton order of a grid, and, on random tables (ints, doubles with NaN, -0
 * and nulls, 64-bit integers past 2^53, strings, booleans), the same order as a plain
 * reference that ranks boxed values with a comparator and interleaves BigInt z-values.
 */
import * as arrow from "apache-arrow";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareValues, zOrderIndexes } from "../lib/ops/zorder.ts";

/** The definition, written for clarity rather than speed. */
function referenceOrder(table: arrow.Table, columns: string[]): number[] {
  const n = table.numRows;
  const ranks: number[][] = [];
  const bits: number[] = [];
  for (const name of columns) {
    const col = table.getChild(name)!;
    const values = Array.from({ length: n }, (_, i) => col.get(i));
    const sorted = [...values].sort(compareValues);
    const distinct: unknown[] = [];
    for (const v of sorted) {
      if (distinct.length === 0 || compareValues(distinct[distinct.length - 1], v) !== 0) {
        distinct.push(v);
      }
    }
    ranks.push(values.map((v) => distinct.findIndex((d) => compareValues(d, v) === 0)));
    bits.push(Math.max(1, Math.ceil(Math.log2(Math.max(2, distinct.length)))));
  }
  const width = Math.max(...bits);
  const z = Array.from({ length: n }, (_, i) => {
    let v = 0n;
    for (let b = width - 1; b >= 0; b--) {
      ranks.forEach((r, c) => {
        v = (v << 1n) | (((BigInt(r[i]!) << BigInt(width - bits[c]!)) >> BigInt(b)) & 1n);
      });
    }
    return v;
  });
  return Array.from({ length: n }, (_, i) => i).sort((a, b) =>
    z[a]! < z[b]! ? -1 : z[a]! > z[b]! ? 1 : a - b,
  );
}

const column = fc.oneof(
  fc.record({
    type: fc.constant("int" as const),
    gen: fc.constant(fc.option(fc.integer({ min: -50, max: 50 }), { nil: null })),
  }),
  fc.record({
    type: fc.constant("double" as const),
    gen: fc.constant(
      fc.option(fc.constantFrom(Number.NaN, -0, 0, 1.5, -2.25, 1e300, -1e-300, 7), { nil: null }),
    ),
  }),
  fc.record({
    type: fc.constant("long" as const),
    gen: fc.constant(
      fc.option(fc.constantFrom(0n, -1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 62n), 12345n), {
        nil: null,
      }),
    ),
  }),
  fc.record({
    type: fc.constant("string" as const),
    gen: fc.constant(fc.option(fc.constantFrom("", "a", "ab", "b", "é", "Z"), { nil: null })),
  }),
  fc.record({
    type: fc.constant("bool" as const),
    gen: fc.constant(fc.option(fc.boolean(), { nil: null })),
  }),
);

const arrowType = {
  int: () => new arrow.Int32(),
  double: () => new arrow.Float64(),
  long: () => new arrow.Int64(),
  string: () => new arrow.Utf8(),
  bool: () => new arrow.Bool(),
};

describe("zOrderIndexes", () => {
  it("orders a 4x4 grid in Morton order", () => {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let y = 3; y >= 0; y--) {
      for (let x = 3; x >= 0; x--) {
        xs.push(x);
        ys.push(y);
      }
    }
    const table = new arrow.Table({
      x: arrow.vectorFromArray(xs, new arrow.Int32()),
      y: arrow.vectorFromArray(ys, new arrow.Int32()),
    });
    const order = Array.from(zOrderIndexes(table, ["x", "y"]));
    const cells = order.map((i) => `${xs[i]},${ys[i]}`);
    expect(cells.slice(0, 8)).toEqual(["0,0", "0,1", "1,0", "1,1", "0,2", "0,3", "1,2", "1,3"]);
    expect(cells.slice(8)).toEqual(["2,0", "2,1", "3,0", "3,1", "2,2", "2,3", "3,2", "3,3"]);
  });

  it("matches the reference on random tables, split into several batches", () => {
    fc.assert(
      fc.property(
        fc
          .array(column, { minLength: 1, maxLength: 3 })
          .chain((cols) =>
            fc.tuple(
              fc.constant(cols),
              fc.array(fc.tuple(...cols.map((c) => c.gen)), { minLength: 0, maxLength: 60 }),
              fc.integer({ min: 1, max: 4 }),
            ),
          ),
        ([cols, rows, parts]) => {
          const names = cols.map((_, i) => `c${i}`);
          const per = Math.max(1, Math.ceil(rows.length / parts));
          const batches: arrow.RecordBatch[] = [];
          for (let start = 0; start < rows.length; start += per) {
            const slice = rows.slice(start, start + per);
            const vectors = Object.fromEntries(
              cols.map((c, i) => [
                names[i]!,
                arrow.vectorFromArray(
                  slice.map((r) => r[i]),
                  arrowType[c.type]() as arrow.DataType,
                ),
              ]),
            );
            batches.push(...new arrow.Table(vectors).batches);
          }
          const table =
            batches.length === 0
              ? new arrow.Table(
                  new arrow.Schema(
                    cols.map((c, i) => new arrow.Field(names[i]!, arrowType[c.type](), true)),
                  ),
                )
              : new arrow.Table(batches);
          expect(Array.from(zOrderIndexes(table, names))).toEqual(referenceOrder(table, names));
        },
      ),
      { numRuns: 300 },
    );
  });
});
