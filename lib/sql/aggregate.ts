/**
 * GROUP BY and aggregates folded a batch at a time, so a scan never holds more than one batch
 * plus the groups.
 *
 * Group ids: each key column maps its values to dense ids (a Map keyed by the number, the
 * string or the exact 64-bit value, equal exactly when the canonical values are), and several
 * keys combine pairwise the same way. Groups are numbered in order of first appearance and keep
 * that first row's key values, as the row-at-a-time engine did.
 */
import type * as arrow from "apache-arrow";
import { type EvalContext, evaluate } from "../expr/evaluate.ts";
import type { Typed } from "../expr/typed.ts";
import { type Accumulator, type AggregateNode, accumulatorFor } from "./aggregate-accumulators.ts";
import { type ColumnView, canonicalAt, keyAt, validityView, viewOf } from "./aggregate-columns.ts";

export interface AggregateResult {
  numGroups: number;
  /** Per GROUP BY expression, the canonical key value of each group. */
  keys: unknown[][];
  /** Per aggregate, the canonical result of each group. */
  aggregates: unknown[][];
}

const NULL_KEY = Symbol("null");

export class GroupedAggregation {
  private readonly dictionaries: Map<unknown, number>[];
  /** Level k numbers the distinct (ids of keys 0..k-1, id of key k) pairs. */
  private readonly pairs: Map<unknown, number>[];
  private readonly keyValues: unknown[][];
  private readonly accumulators: Accumulator[];
  private readonly distinctSeen: Set<unknown>[][];
  private numGroups: number;

  constructor(
    private readonly keys: Typed[],
    private readonly aggregates: AggregateNode[],
    private readonly ctx: EvalContext,
  ) {
    this.dictionaries = keys.map(() => new Map());
    this.pairs = keys.map(() => new Map());
    this.keyValues = keys.map(() => []);
    this.accumulators = aggregates.map(accumulatorFor);
    this.distinctSeen = aggregates.map(() => []);
    // Without GROUP BY there is exactly one group, even over no rows.
    this.numGroups = keys.length === 0 ? 1 : 0;
  }

  add(batch: arrow.RecordBatch): void {
    const n = batch.numRows;
    if (n === 0) return;
    const groups = this.groupIds(batch);
    this.aggregates.forEach((node, a) => {
      const countsOnly = node.name === "count" && !node.distinct;
      const args = node.star
        ? []
        : node.args.map((t) =>
            (countsOnly ? validityView : viewOf)(evaluate(t, batch, this.ctx), t.type),
          );
      let live = liveRows(args, n);
      if (node.distinct) live = this.firstOccurrences(a, args, groups, live);
      this.accumulators[a].add(groups, this.numGroups, args, live);
    });
  }

  finish(): AggregateResult {
    return {
      numGroups: this.numGroups,
      keys: this.keyValues,
      aggregates: this.accumulators.map((acc) => acc.results(this.numGroups)),
    };
  }

  private groupIds(batch: arrow.RecordBatch): Int32Array {
    const n = batch.numRows;
    const groups = new Int32Array(n);
    if (this.keys.length === 0) return groups;
    const views = this.keys.map((t) => viewOf(evaluate(t, batch, this.ctx), t.type));
    const last = this.keys.length - 1;
    views.forEach((view, k) => {
      const ids = k === 0 ? groups : new Int32Array(n);
      const dict = this.dictionaries[k];
      for (let i = 0; i < n; i++) {
        const key = view.valid !== undefined && view.valid[i] === 0 ? NULL_KEY : keyAt(view, i);
        let id = dict.get(key);
        if (id === undefined) {
          id = dict.size;
          dict.set(key, id);
        }
        ids[i] = id;
      }
      if (k > 0) {
        const level = this.pairs[k];
        for (let i = 0; i < n; i++) {
          const a = groups[i];
          const b = ids[i];
          const key = a < 0x4000000 && b < 0x4000000 ? a * 0x4000000 + b : `${a},${b}`;
          let id = level.get(key);
          if (id === undefined) {
            id = level.size;
            level.set(key, id);
          }
          groups[i] = id;
        }
      }
      if (k === last) this.recordNewGroups(groups, views);
    });
    return groups;
  }

  /** Keeps each new group's key values from its first row. */
  private recordNewGroups(groups: Int32Array, views: ColumnView[]): void {
    for (let i = 0; i < groups.length; i++) {
      if (groups[i] < this.numGroups) continue;
      this.numGroups++;
      views.forEach((view, k) => {
        this.keyValues[k].push(canonicalAt(view, i));
      });
    }
  }

  /** DISTINCT: only the first live row of each distinct argument value per group stays live. */
  private firstOccurrences(
    a: number,
    args: ColumnView[],
    groups: Int32Array,
    live: Uint8Array | undefined,
  ): Uint8Array {
    const seen = this.distinctSeen[a];
    while (seen.length < this.numGroups) seen.push(new Set());
    const out = new Uint8Array(groups.length);
    for (let i = 0; i < groups.length; i++) {
      if (live !== undefined && live[i] === 0) continue;
      const key =
        args.length === 1 ? keyAt(args[0], i) : JSON.stringify(args.map((v) => canonicalAt(v, i)));
      const set = seen[groups[i]];
      if (!set.has(key)) {
        set.add(key);
        out[i] = 1;
      }
    }
    return out;
  }
}

/** Rows where every argument is not NULL; undefined when that is every row. */
function liveRows(args: ColumnView[], n: number): Uint8Array | undefined {
  const masks = args.flatMap((v) => (v.valid === undefined ? [] : [v.valid]));
  if (masks.length <= 1) return masks[0];
  const out = Uint8Array.from(masks[0]);
  for (const m of masks.slice(1)) for (let i = 0; i < n; i++) out[i] &= m[i];
  return out;
}
