/**
 * Rows a caller hands to a write, brought to the table's logical schema: JSON rows through the
 * validating converter, Arrow tables by matching columns by name and conforming their types. Bad
 * input fails here, before any file is written.
 */
import * as arrow from "apache-arrow";
import { arrowValues } from "../data/arrow-to-json.ts";
import { conformData } from "../data/cast.ts";
import { rowsToArrow, valuesToArrow } from "../data/json-to-arrow.ts";
import { combineChunks } from "../data/kernels.ts";
import { type StructType, toArrowType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";

export type InputRows = { rows: unknown[] } | { arrow: arrow.Table };

export function toTableRows(input: InputRows, schema: StructType, tableName: string): arrow.Table {
  if ("rows" in input) {
    if (!Array.isArray(input.rows)) {
      throw siltError("INVALID_REQUEST:FIELD_ROWS_ARRAY");
    }
    return rowsToArrow(input.rows, schema, { tableName });
  }
  return conformArrow(input.arrow, schema);
}

function conformArrow(source: arrow.Table, schema: StructType): arrow.Table {
  const table = combineChunks(source);
  const byName = new Map(table.schema.fields.map((f, i) => [f.name.toLowerCase(), i]));
  for (const f of table.schema.fields) {
    if (!schema.fields.some((s) => s.name.toLowerCase() === f.name.toLowerCase())) {
      throw siltError("UNRESOLVED_COLUMN.WITH_SUGGESTION:QUOTED_NAME", {
        name: f.name,
        fields: schema.fields.map((s) => `\`${s.name}\``).join(", "),
      });
    }
  }
  const n = table.numRows;
  const fields = schema.fields.map((f) => new arrow.Field(f.name, toArrowType(f.type), f.nullable));
  const children = schema.fields.map((f, i) => {
    const index = byName.get(f.name.toLowerCase());
    if (index === undefined) {
      if (!f.nullable) throw notNull(f.name);
      return arrow.makeData({ type: fields[i].type, length: n, nullCount: n } as never);
    }
    const data = table.batches[0]?.data.children[index];
    if (data === undefined) return arrow.makeData({ type: fields[i].type, length: 0 } as never);
    if (!f.nullable && data.nullCount > 0) throw notNull(f.name);
    if (data.type.typeId !== arrow.Type.Dictionary) {
      try {
        return conformData(data, fields[i].type, f.name);
      } catch {
        // Not a representation difference: convert value by value with Spark's cast rules below.
      }
    }
    return valuesToArrow(arrowValues(data), f.type, { nullable: f.nullable, column: f.name });
  });
  const arrowSchema = new arrow.Schema(fields);
  const batch = new arrow.RecordBatch(
    arrowSchema,
    arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children }),
  );
  return new arrow.Table(arrowSchema, [batch]);
}

const notNull = (column: string) =>
  siltError("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", { path: column });
