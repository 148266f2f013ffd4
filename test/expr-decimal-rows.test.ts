/**
 * Regression: decimal arithmetic switches a column to bigints when one row outgrows 2^53; the
 * rows after that one must keep their values (they were read back as 0). Found by the property
 * test in expr-eval.test.ts.
 */
import * as arrow from "apache-arrow";
import { expect, it } from "vitest";
import { arrowValues } from "../lib/data/arrow-to-json.ts";
import { valuesToArrow } from "../lib/data/json-to-arrow.ts";
import { decimal, structField } from "../lib/delta/schema.ts";
import { analyze, scopeOf } from "../lib/expr/analyze.ts";
import { evaluate } from "../lib/expr/evaluate.ts";
import { parseExpression } from "../lib/expr/parse.ts";

it("keeps every row of a decimal product after one row needs bigints", () => {
  const fields = [structField("i", "integer"), structField("m", decimal(9, 2))];
  const rows = [
    [-1, "0.01"],
    [2147483647, "-41943.05"],
    [-1, "-0.01"],
    [1, "-0.01"],
    [3, "2.50"],
  ];
  const cols = fields.map((f, c) =>
    valuesToArrow(
      rows.map((r) => r[c]),
      f.type,
    ),
  );
  const schema = new arrow.Schema(
    fields.map((f, c) => new arrow.Field(f.name, cols[c].type, true)),
  );
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({
      type: new arrow.Struct(schema.fields),
      length: rows.length,
      nullCount: 0,
      children: cols,
    }),
  );
  const typed = analyze(parseExpression("cast(m * i as string)"), scopeOf(fields));
  expect(arrowValues(evaluate(typed, batch), "string")).toEqual([
    "-0.01",
    "-90072013980303.35",
    "0.01",
    "-0.01",
    "7.50",
  ]);
});
