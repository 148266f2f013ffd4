/**
 * SET assignments, shared by UPDATE and MERGE: from `col = expr` pairs (possibly nested,
 * `a.b = expr`) to one value per column of the table's schema, evaluated over a batch.
 *
 * 1. Plan: for every column of the (possibly evolved) schema, the assignment that sets it, the
 *    nested assignments that set some of its fields (the struct is rebuilt around them, keeping
 *    the other fields), or nothing (the row's current value, NULL for a row being inserted or a
 *    column the merge adds). Two assignments to one column, or to a column and one of its
 *    fields, conflict.
 * 2. Each assigned value is brought to the column's type with Spark's store-assignment rules:
 *    the implicit casts first, else an ANSI cast (which fails at run time on a value it cannot
 *    convert), else the analysis error Spark gives for that cast. Structs are matched by field
 *    name, as Delta does in UPDATE and MERGE.
 * 3. Evaluate the plan over a record batch into the columns of the new rows.
 */
import * as arrow from "apache-arrow";
import {
  type DataType,
  nullData,
  type StructField,
  type StructType,
  toArrowType,
} from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { implicitCast, prettySql } from "../expr/analyze.ts";
import { type EvalContext, evaluate } from "../expr/evaluate.ts";
import type { Typed } from "../expr/typed.ts";
import { canAnsiCast, canStoreAssign, castMismatch, sameType, sqlTypeName } from "../expr/types.ts";

/** `path = value`: path is the column and nested field names, as the schema spells them. */
export interface Assignment {
  path: string[];
  value: Typed;
}

export type ColumnPlan =
  /** A value already of the column's type (or one Arrow can relabel to it). */
  | { kind: "expr"; typed: Typed; target: DataType }
  | { kind: "null"; target: DataType }
  /** A struct rebuilt field by field; NULL where `nullWhen` evaluates to NULL, if given. */
  | { kind: "struct"; target: StructType; fields: ColumnPlan[]; nullWhen?: Typed };

export interface PlanOptions {
  /** The value a column keeps when nothing assigns it: its current value, or none (NULL). */
  base: (field: StructField, index: number) => Typed | undefined;
  /** MERGE with schema evolution: a source struct may lack some of the target's fields. */
  allowStructEvolution?: boolean;
}

/** The plan of every column of `fields` (step 1). */
export function planColumns(
  fields: readonly StructField[],
  assignments: readonly Assignment[],
  opts: PlanOptions,
): ColumnPlan[] {
  return planLevel(fields, assignments, opts.base, [], opts.allowStructEvolution ?? false);
}

function planLevel(
  fields: readonly StructField[],
  assignments: readonly Assignment[],
  base: (field: StructField, index: number) => Typed | undefined,
  prefix: string[],
  evolve: boolean,
): ColumnPlan[] {
  for (const a of assignments) {
    if (!fields.some((f) => sameName(f.name, a.path[0]))) {
      throw siltError("DELTA_MISSING_SET_COLUMN", {
        column: [...prefix, a.path[0]].join("."),
        fields: fields.map((f) => [...prefix, f.name].join(".")).join(", "),
      });
    }
  }
  return fields.map((field, index) => {
    const mine = assignments.filter((a) => sameName(a.path[0], field.name));
    const current = base(field, index);
    if (mine.length === 0) {
      return current === undefined
        ? { kind: "null", target: field.type }
        : convert(current, field.type, [...prefix, field.name], evolve);
    }
    const whole = mine.find((a) => a.path.length === 1);
    if (whole !== undefined) {
      if (mine.length > 1) {
        throw siltError("DELTA_CONFLICT_SET_COLUMN", {
          mine: mine.map((a) => [...prefix, ...a.path].join(".")).join(", "),
        });
      }
      return convert(whole.value, field.type, [...prefix, field.name], evolve);
    }
    const st = field.type;
    if (typeof st !== "object" || st.type !== "struct") {
      throw siltError("DELTA_UPDATE_NON_STRUCT_TYPE_FIELD", {
        field: [...prefix, field.name].join("."),
        type: sqlTypeName(st),
      });
    }
    const inner = mine.map((a) => ({ path: a.path.slice(1), value: a.value }));
    const innerBase = (f: StructField): Typed | undefined =>
      current === undefined ? undefined : fieldOf(current, f.name);
    return {
      kind: "struct",
      target: st,
      fields: planLevel(st.fields, inner, innerBase, [...prefix, field.name], evolve),
    };
  });
}

const sameName = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** `t.name` when t is a struct that has the field, else undefined. */
export function fieldOf(t: Typed, name: string): Typed | undefined {
  const st = t.type;
  if (typeof st !== "object" || st.type !== "struct") return undefined;
  const index = st.fields.findIndex((f) => sameName(f.name, name));
  if (index < 0) return undefined;
  const f = st.fields[index];
  return {
    kind: "field",
    type: f.type,
    nullable: t.nullable || f.nullable,
    operand: t,
    index,
    name: f.name,
  };
}

/** A value brought to `target` with the store-assignment rules (step 2). */
export function convert(
  value: Typed,
  target: DataType,
  path: readonly string[],
  allowStructEvolution = false,
): ColumnPlan {
  const from = value.type;
  if (from === "null") return { kind: "null", target };
  if (sameType(from, target)) return { kind: "expr", typed: value, target };
  if (
    typeof from === "object" &&
    from.type === "struct" &&
    typeof target === "object" &&
    target.type === "struct"
  ) {
    const missing = from.fields.some((f) => !target.fields.some((t) => sameName(t.name, f.name)));
    if (missing || (from.fields.length !== target.fields.length && !allowStructEvolution)) {
      throw siltError("DELTA_UPDATE_SCHEMA_MISMATCH_EXPRESSION", {
        from: sqlTypeName(from),
        target: sqlTypeName(target),
      });
    }
    return {
      kind: "struct",
      target,
      nullWhen: value,
      fields: target.fields.map((tf) => {
        const sub = fieldOf(value, tf.name);
        return sub === undefined
          ? { kind: "null", target: tf.type }
          : convert(sub, tf.type, [...path, tf.name], allowStructEvolution);
      }),
    };
  }
  if (canStoreAssign(from, target)) {
    return { kind: "expr", typed: implicitCast(value, target), target };
  }
  const sql = `CAST(${prettySql(value)} AS ${sqlTypeName(target)})`;
  if (canAnsiCast(from, target)) {
    const cast: Typed = {
      kind: "cast",
      type: target,
      nullable: true,
      operand: value,
      tryCast: false,
      implicit: false,
    };
    return { kind: "expr", typed: cast, target };
  }
  throw castMismatch(from, target, false, sql);
}

/** The plan's column over a batch (step 3), in the Arrow type of the target column. */
export function evaluatePlan(
  plan: ColumnPlan,
  batch: arrow.RecordBatch,
  ctx: EvalContext,
): arrow.Data {
  const n = batch.numRows;
  switch (plan.kind) {
    case "null":
      return nullData(toArrowType(plan.target), n);
    case "expr":
      return relabel(evaluate(plan.typed, batch, ctx), toArrowType(plan.target));
    case "struct": {
      const type = toArrowType(plan.target) as arrow.Struct;
      const children = plan.fields.map((f) => evaluatePlan(f, batch, ctx));
      let nullCount = 0;
      let nullBitmap: Uint8Array | undefined;
      if (plan.nullWhen?.nullable) {
        const parent = evaluate(plan.nullWhen, batch, ctx);
        if (parent.nullCount > 0) {
          nullBitmap = new Uint8Array((n + 7) >> 3);
          for (let i = 0; i < n; i++) {
            if (parent.getValid(i)) nullBitmap[i >> 3] |= 1 << (i & 7);
            else nullCount++;
          }
        }
      }
      return arrow.makeData({ type, length: n, nullCount, nullBitmap, children });
    }
  }
}

/**
 * The same values under `type` (field names and nullability flags may differ from what the
 * evaluator produced, the layout does not).
 */
function relabel(data: arrow.Data, type: arrow.DataType): arrow.Data {
  const same: boolean = arrow.util.compareTypes(data.type, type);
  if (same) return data;
  const children = data.children.map((child, i) =>
    relabel(child, (type.children?.[i]?.type ?? child.type) as arrow.DataType),
  );
  return data.clone(type, data.offset, data.length, data.nullCount, data as never, children);
}

/** A table of `fields` from one column per field (named and typed as the schema says). */
export function tableOf(fields: readonly StructField[], columns: arrow.Data[], n: number) {
  const schema = new arrow.Schema(
    fields.map((f) => new arrow.Field(f.name, toArrowType(f.type), f.nullable)),
  );
  const data = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: n,
    nullCount: 0,
    children: columns,
  });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, data)]);
}

/** NOT NULL columns must not receive NULL (Delta's constraint check on every write). */
export function checkNotNull(fields: readonly StructField[], columns: arrow.Data[]): void {
  fields.forEach((f, i) => {
    if (!f.nullable && columns[i].nullCount > 0) {
      throw siltError("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", { path: f.name });
    }
  });
}
