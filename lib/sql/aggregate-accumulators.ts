/**
 * Per-group accumulators over typed arrays, one per aggregate kind, folding a batch at a time.
 * Results are canonical values, as the row-at-a-time engine produced them (Spark semantics):
 * count → number of live rows; sum of integral → exact BIGINT, of DECIMAL(p, s) → exact
 * DECIMAL(p+10, s), else DOUBLE summed in row order; avg of DECIMAL → DECIMAL(p+4, s+4) rounded
 * half up, else DOUBLE; min/max by the type's order, keeping the first of equal values; NULLs
 * skipped; no live row → NULL.
 */

import { siltError } from "../errors.ts";
import type { SqlType } from "../expr/ast.ts";
import { fromScalar } from "../expr/scalar-json.ts";
import { compareDoubles, compareScalars } from "../expr/scalar-order.ts";
import type { Typed } from "../expr/typed.ts";
import { isFloating, type Scalar } from "../expr/types.ts";
import { type ColumnView, scalarAt, wordsStride, wordsValue } from "./aggregate-columns.ts";

export type AggregateNode = Extract<Typed, { kind: "aggregate" }>;

export interface Accumulator {
  /** Folds row i into group groups[i] where live[i] is 1 (every row when live is absent). */
  add(groups: Int32Array, numGroups: number, args: ColumnView[], live?: Uint8Array): void;
  results(numGroups: number): unknown[];
}

export function accumulatorFor(node: AggregateNode): Accumulator {
  switch (node.name) {
    case "count":
      return new Count();
    case "sum":
    case "avg":
    case "mean":
      return node.type === "double" ? new DoubleSum(node.name === "sum") : new ExactSum(node);
    case "min":
    case "max":
      return new MinMax(node.name === "min", node.type);
    default:
      throw siltError("UNSUPPORTED_FEATURE.AGGREGATE", { name: node.name });
  }
}

/** `a` with room for at least `n` entries (doubling), zero-filled beyond the old ones. */
function grown<T extends Float64Array | Uint32Array | Uint8Array | Int32Array>(a: T, n: number): T {
  if (a.length >= n) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(n, a.length * 2));
  b.set(a);
  return b;
}

class Count implements Accumulator {
  private counts = new Float64Array(16);

  add(groups: Int32Array, numGroups: number, _args: ColumnView[], live?: Uint8Array): void {
    const c = grown(this.counts, numGroups);
    this.counts = c;
    const n = groups.length;
    if (live === undefined) for (let i = 0; i < n; i++) c[groups[i]]++;
    else for (let i = 0; i < n; i++) if (live[i] === 1) c[groups[i]]++;
  }

  results(numGroups: number): unknown[] {
    return Array.from(this.counts.subarray(0, numGroups));
  }
}

/** sum/avg with a DOUBLE result: each value as a double, added in row order from 0. */
class DoubleSum implements Accumulator {
  private sums = new Float64Array(16);
  private counts = new Float64Array(16);

  constructor(private readonly isSum: boolean) {}

  add(groups: Int32Array, numGroups: number, [x]: ColumnView[], live?: Uint8Array): void {
    const s = grown(this.sums, numGroups);
    const c = grown(this.counts, numGroups);
    this.sums = s;
    this.counts = c;
    const n = groups.length;
    if (x.kind === "number") {
      const v = x.values;
      for (let i = 0; i < n; i++) {
        if (live !== undefined && live[i] === 0) continue;
        s[groups[i]] += v[i];
        c[groups[i]]++;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      if (live !== undefined && live[i] === 0) continue;
      // hi·2³² is exact, so one rounded addition gives Number(bigint) exactly.
      const v =
        x.kind === "words" && x.stride === 2
          ? (x.words[2 * i + 1] | 0) * 4294967296 + x.words[2 * i]
          : Number(scalarAt(x, i));
      s[groups[i]] += v;
      c[groups[i]]++;
    }
  }

  results(numGroups: number): unknown[] {
    return Array.from({ length: numGroups }, (_, g) =>
      this.counts[g] === 0
        ? null
        : fromScalar(this.isSum ? this.sums[g] : this.sums[g] / this.counts[g], "double"),
    );
  }
}

/** Rows folded into a group's word sums before they move to its bigint: keeps them exact. */
const FLUSH_EVERY = 1 << 20;

/**
 * Exact sums of integral and DECIMAL values: each 32-bit word summed in a double (exact for
 * 2²⁰ rows), carried into a bigint per group every 2²⁰ rows and at the end.
 */
class ExactSum implements Accumulator {
  private words = new Float64Array(64);
  private pending = new Int32Array(16);
  private counts = new Float64Array(16);
  private totals: bigint[] = [];

  constructor(private readonly node: AggregateNode) {}

  add(groups: Int32Array, numGroups: number, [x]: ColumnView[], live?: Uint8Array): void {
    this.words = grown(this.words, numGroups * 4);
    this.pending = grown(this.pending, numGroups);
    this.counts = grown(this.counts, numGroups);
    while (this.totals.length < numGroups) this.totals.push(0n);
    const { words: acc, pending, counts } = this;
    const n = groups.length;
    for (let i = 0; i < n; i++) {
      if (live !== undefined && live[i] === 0) continue;
      const g = groups[i];
      const at = 4 * g;
      if (x.kind === "number") acc[at] += x.values[i];
      else if (x.kind === "words") {
        const base = i * x.stride;
        const top = x.stride - 1;
        for (let w = 0; w < top; w++) acc[at + w] += x.words[base + w];
        acc[at + top] += x.words[base + top] | 0;
      } else this.totals[g] += BigInt(scalarAt(x, i) as number | bigint);
      counts[g]++;
      if (++pending[g] === FLUSH_EVERY) this.flush(g);
    }
  }

  private flush(g: number): void {
    const acc = this.words;
    const at = 4 * g;
    this.totals[g] +=
      BigInt(acc[at]) +
      (BigInt(acc[at + 1]) << 32n) +
      (BigInt(acc[at + 2]) << 64n) +
      (BigInt(acc[at + 3]) << 96n);
    acc.fill(0, at, at + 4);
    this.pending[g] = 0;
  }

  results(numGroups: number): unknown[] {
    const out: unknown[] = [];
    for (let g = 0; g < numGroups; g++) {
      if (g >= this.totals.length || this.counts[g] === 0) {
        out.push(null);
        continue;
      }
      this.flush(g);
      out.push(fromScalar(this.finish(this.totals[g], BigInt(this.counts[g])), this.node.type));
    }
    return out;
  }

  private finish(total: bigint, count: bigint): bigint {
    if (this.node.name === "sum") return total;
    // DECIMAL(p+4, s+4): scale the exact sum up by 4 digits, divide, round half up.
    const scaled = total * 10_000n;
    const q = scaled / count;
    const r = scaled % count;
    return 2n * (r < 0n ? -r : r) >= count ? q + (scaled < 0n ? -1n : 1n) : q;
  }
}

/** min/max: the first value no other value of the group orders before (min) or after (max). */
class MinMax implements Accumulator {
  private seen = new Uint8Array(16);
  private numbers = new Float64Array(16);
  private words = new Uint32Array(64);
  private scalars: Scalar[] = [];
  private readonly stride: number;

  constructor(
    private readonly isMin: boolean,
    private readonly type: SqlType,
  ) {
    this.stride = wordsStride(type) ?? 0;
  }

  add(groups: Int32Array, numGroups: number, [x]: ColumnView[], live?: Uint8Array): void {
    const seen = grown(this.seen, numGroups);
    this.seen = seen;
    const n = groups.length;
    const sign = this.isMin ? 1 : -1;
    if (x.kind === "number") {
      const best = grown(this.numbers, numGroups);
      this.numbers = best;
      const v = x.values;
      const floating = isFloating(this.type);
      for (let i = 0; i < n; i++) {
        if (live !== undefined && live[i] === 0) continue;
        const g = groups[i];
        const c = floating ? compareDoubles(v[i], best[g]) : v[i] - best[g];
        if (seen[g] === 0 || sign * c < 0) {
          best[g] = v[i];
          seen[g] = 1;
        }
      }
      return;
    }
    if (x.kind === "words") {
      const s = x.stride;
      const best = grown(this.words, numGroups * s);
      this.words = best;
      for (let i = 0; i < n; i++) {
        if (live !== undefined && live[i] === 0) continue;
        const g = groups[i];
        if (seen[g] === 0 || sign * compareWords(x.words, i * s, best, g * s, s) < 0) {
          best.set(x.words.subarray(i * s, i * s + s), g * s);
          seen[g] = 1;
        }
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      if (live !== undefined && live[i] === 0) continue;
      const g = groups[i];
      const v = scalarAt(x, i);
      if (seen[g] === 0 || sign * compareScalars(this.type, v, this.scalars[g]) < 0) {
        this.scalars[g] = v;
        seen[g] = 1;
      }
    }
  }

  results(numGroups: number): unknown[] {
    return Array.from({ length: numGroups }, (_, g) => {
      if (g >= this.seen.length || this.seen[g] === 0) return null;
      const v =
        this.stride > 0
          ? wordsValue(this.words, this.stride, g)
          : typeof this.scalars[g] !== "undefined"
            ? this.scalars[g]
            : this.numbers[g];
      return fromScalar(v, this.type);
    });
  }
}

/** Two's complement order of two values stored as `stride` words, least significant first. */
function compareWords(a: Uint32Array, ai: number, b: Uint32Array, bi: number, stride: number) {
  const top = stride - 1;
  const x = a[ai + top] | 0;
  const y = b[bi + top] | 0;
  if (x !== y) return x < y ? -1 : 1;
  for (let w = top - 1; w >= 0; w--) {
    if (a[ai + w] !== b[bi + w]) return a[ai + w] < b[bi + w] ? -1 : 1;
  }
  return 0;
}
