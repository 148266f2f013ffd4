/**
 * Vectorized evaluation of analysed expressions over Arrow record batches and tables: the entry
 * points (a column, a predicate's row selection, a constant, rows of canonical JSON values) that
 * set up the evaluator of evaluator.ts for a batch and hand its result back as Arrow data.
 */
import * as arrow from "apache-arrow";
import { valuesToArrow } from "../data/json-to-arrow.ts";
import type { Deadline } from "../deadline.ts";
import type { DataType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { toArrowData } from "./arrow-vectors.ts";
import type { SqlType } from "./ast.ts";
import { Evaluator } from "./evaluator.ts";
import { fromScalar } from "./scalar-json.ts";
import type { EvalEnv, Typed, TypedColumn } from "./typed.ts";
import type { Scalar } from "./types.ts";
import { at, type VBool } from "./vectors.ts";

export interface EvalContext {
  /** The statement's instant: one statement sees one current_date/current_timestamp. */
  now?: Date | bigint;
  /** Supplies a column's data; by default batch column `col.ordinal`. */
  column?: (col: TypedColumn, batch: arrow.RecordBatch) => arrow.Data | arrow.Vector;
  /** The statement's time budget, checked before each batch is evaluated. */
  deadline?: Deadline;
}

function envOf(ctx?: EvalContext): EvalEnv {
  const now = ctx?.now;
  if (typeof now === "bigint") return { now };
  const ms = now instanceof Date ? now.getTime() : Date.now();
  return { now: BigInt(ms) * 1000n };
}

function dataOf(x: arrow.Data | arrow.Vector): arrow.Data {
  if (x instanceof arrow.Data) return x;
  if (x.data.length === 1) return x.data[0];
  return arrow.makeVector(x.data).data[0] ?? x.data[0];
}

function batchEvaluator(t: Typed, batch: arrow.RecordBatch, ctx?: EvalContext): Evaluator {
  ctx?.deadline?.check();
  const provider = (col: TypedColumn): arrow.Data => {
    if (ctx?.column) return dataOf(ctx.column(col, batch));
    const child = batch.data.children[col.ordinal];
    if (!child) {
      throw siltError("INTERNAL_ERROR:EVALUATE_NO_COLUMN", {
        ordinal: col.ordinal,
        name: col.name,
        kind: String(t.kind),
      });
    }
    return child;
  };
  return new Evaluator(batch.numRows, provider, envOf(ctx));
}

/** Evaluates over one record batch: a column of the node's type, one value per row. */
export function evaluate(t: Typed, batch: arrow.RecordBatch, ctx?: EvalContext): arrow.Data {
  return toArrowData(batchEvaluator(t, batch, ctx).run(t), t.type);
}

/** Evaluates over every batch of a table. */
export function evaluateTable(t: Typed, table: arrow.Table, ctx?: EvalContext): arrow.Vector {
  const env = envOf(ctx);
  const fixed: EvalContext = { ...ctx, now: env.now };
  const parts = table.batches.map((b) => evaluate(t, b, fixed));
  if (parts.length === 0)
    return arrow.makeVector(toArrowData({ tag: "const", n: 0, value: null }, t.type));
  return new arrow.Vector(parts);
}

/** WHERE semantics: 1 where the predicate is TRUE, 0 where FALSE or NULL. */
export function evaluatePredicate(
  t: Typed,
  input: arrow.RecordBatch | arrow.Table,
  ctx?: EvalContext,
): Uint8Array {
  if (input instanceof arrow.Table) {
    const env = envOf(ctx);
    const fixed: EvalContext = { ...ctx, now: env.now };
    const out = new Uint8Array(input.numRows);
    let pos = 0;
    for (const b of input.batches) {
      out.set(evaluatePredicate(t, b, fixed), pos);
      pos += b.numRows;
    }
    return out;
  }
  const v = batchEvaluator(t, input, ctx).run(t);
  const n = input.numRows;
  if (v.tag === "const") return new Uint8Array(n).fill(v.value === true ? 1 : 0);
  const b = v as VBool;
  if (!b.valid) return b.data;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = b.data[i] & b.valid[i];
  return out;
}

/** Evaluates an expression without columns (a constant): its scalar value. */
export function evaluateScalar(t: Typed, ctx?: EvalContext): Scalar | null {
  const ev = new Evaluator(
    1,
    (col) => {
      throw siltError("INTERNAL_ERROR:EVALUATE_SCALAR_NO_VALUE", { name: col.name });
    },
    envOf(ctx),
  );
  return at(ev.run(t), 0);
}

/**
 * Evaluates over rows given as canonical JSON values (one array per row, columns by ordinal):
 * for constant folding over a few values, e.g. partition values. Returns canonical JSON values.
 */
export function evaluateRows(
  t: Typed,
  rows: readonly (readonly unknown[])[],
  types: readonly SqlType[],
  ctx?: EvalContext,
): unknown[] {
  const n = rows.length;
  const cols = new Map<number, arrow.Data>();
  const ev = new Evaluator(
    n,
    (col) => {
      let d = cols.get(col.ordinal);
      if (!d) {
        const ty = types[col.ordinal];
        d =
          ty === "null"
            ? arrow.makeData({ type: new arrow.Null(), length: n })
            : valuesToArrow(
                rows.map((r) => r[col.ordinal] ?? null),
                ty as DataType,
              );
        cols.set(col.ordinal, d);
      }
      return d;
    },
    envOf(ctx),
  );
  const v = ev.run(t);
  return Array.from({ length: n }, (_, i) => fromScalar(at(v, i), t.type));
}

/** The micros-since-epoch instant evaluation uses for `now` (exported for callers' records). */
export const statementInstant = (now?: Date | bigint): bigint => envOf({ now }).now;
