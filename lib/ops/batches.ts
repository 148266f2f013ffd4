/**
 * Record batches the row-level operations evaluate expressions over: chosen rows of a table, or
 * of two tables side by side (a MERGE's matched pairs: target columns, then source columns, as
 * the analysed expressions number them).
 */
import * as arrow from "apache-arrow";
import { combineChunks, takeRows } from "../data/kernels.ts";
import { nullData } from "../delta/schema.ts";

/** The rows of `table` at `rows`, as one batch (an empty batch for no rows). */
export function takeBatch(table: arrow.Table, rows: Uint32Array): arrow.RecordBatch {
  return joinBatches([{ table, rows }]);
}

/** Row i of the result = row `rows[i]` of every part, the parts' columns one after another. */
export function joinBatches(parts: { table: arrow.Table; rows: Uint32Array }[]): arrow.RecordBatch {
  const n = parts[0]?.rows.length ?? 0;
  const fields: arrow.Field[] = [];
  const children: arrow.Data[] = [];
  for (const { table, rows } of parts) {
    if (rows.length !== n) throw new RangeError("joinBatches: parts differ in length");
    const data = n === 0 ? undefined : combineChunks(takeRows(table, rows)).batches[0].data;
    table.schema.fields.forEach((f, i) => {
      fields.push(f);
      children.push((data?.children[i] as arrow.Data | undefined) ?? nullData(f.type, 0));
    });
  }
  const schema = new arrow.Schema(fields);
  return new arrow.RecordBatch(
    schema,
    arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children }),
  );
}
