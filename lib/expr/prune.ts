/**
 * Data skipping: could a file (or a Parquet row group) hold a row for which the predicate is
 * TRUE? Answers from partition values (exact) and min/max/null-count statistics (bounds), and
 * answers `false` only when no row can match. The predicate is the analysed tree evaluation
 * uses; NOT is pushed down to the leaves (exact under three-valued logic: NOT(a < b) is a >= b,
 * De Morgan holds), and sub-expressions over constants and partition columns are evaluated.
 *
 * Bounds are trusted with care: timestamp statistics are floored to milliseconds, so a max is
 * widened by 999µs; a string max that may have been truncated to a prefix (32+ code points and
 * not ending in U+FFFD, the tie-breaker truncation appends) is no upper bound at all. Columns
 * seen through a CAST keep their bounds only when the cast preserves order (numbers, dates and
 * timestamps among themselves; never through strings).
 */

import type { ParquetFooter, ParquetRowGroup } from "../data/parquet.ts";
import { parsePartitionValue } from "../data/partition-values.ts";
import type { AddFile } from "../delta/actions.ts";
import type { StructType } from "../delta/schema.ts";
import { referencedColumns } from "./analyze.ts";
import type { SqlType } from "./ast.ts";
import { type EvalContext, evaluateRows } from "./evaluate.ts";
import { castScalar } from "./scalar-cast.ts";
import { toScalar } from "./scalar-json.ts";
import { compareScalars } from "./scalar-order.ts";
import type { Typed, TypedColumn } from "./typed.ts";
import { isNumeric, isTimestamp, type Scalar } from "./types.ts";

/** What is known about one file, by logical column name. */
export interface FileStatsView {
  /** Partition values as canonical JSON values (parsePartitionValue output); null for NULL. */
  partitionValues?: Record<string, unknown>;
  /** Delta statistics (`add.stats`), trees keyed by column and nested field names. */
  stats?: {
    numRecords?: number;
    minValues?: Record<string, unknown>;
    maxValues?: Record<string, unknown>;
    nullCount?: Record<string, unknown>;
  } | null;
}

export interface PruneOptions {
  /** Which scope relation is the table being pruned (columns of others are unknown). Default 0. */
  relation?: number;
  /** The statement's instant, for predicates that use current_date/current_timestamp. */
  now?: EvalContext["now"];
}

/** Where bounds for a column come from. */
interface StatsSource {
  numRecords?: number;
  /** The exact partition value, or undefined when `path` is not a partition column. */
  partition(path: readonly string[]): { value: unknown } | undefined;
  column(path: readonly string[]): { min?: unknown; max?: unknown; nullCount?: number } | undefined;
  /**
   * Delta statistics (string maxima possibly truncated prefixes; NaN counted as the largest
   * double) rather than Parquet footer statistics (NaN left out of float bounds).
   */
  deltaStrings: boolean;
}

/** Values the non-null rows of an expression lie between, and whether NULLs may occur. */
interface Range {
  lo?: Scalar;
  hi?: Scalar;
  mayBeNull: boolean;
  mayBeNonNull: boolean;
}

const UNKNOWN: Range = { mayBeNull: true, mayBeNonNull: true };

/** Whether some row of the file may satisfy the predicate. */
export function canMatch(predicate: Typed, file: FileStatsView, opts: PruneOptions = {}): boolean {
  return matchFile(predicate, file, opts, new Map());
}

type Constants = Map<Typed, Scalar | null | undefined>;

function matchFile(
  predicate: Typed,
  file: FileStatsView,
  opts: PruneOptions,
  constants: Constants,
): boolean {
  const stats = file.stats ?? undefined;
  const parts = file.partitionValues ?? {};
  const source: StatsSource = {
    numRecords: stats?.numRecords,
    partition(path) {
      if (path.length !== 1) return undefined;
      const key = findKey(parts, path[0]);
      return key === undefined ? undefined : { value: parts[key] };
    },
    column(path) {
      if (!stats) return undefined;
      const min = lookup(stats.minValues, path);
      const max = lookup(stats.maxValues, path);
      const nc = lookup(stats.nullCount, path);
      const nullCount = nc === undefined || nc === null ? undefined : Number(nc);
      return { min: min ?? undefined, max: max ?? undefined, nullCount };
    },
    deltaStrings: true,
  };
  return new Pruner(source, opts, constants).canMatch(predicate);
}

/** Whether some row of a Parquet row group may satisfy the predicate (footer statistics). */
export function canMatchRowGroup(
  predicate: Typed,
  footer: ParquetFooter,
  rowGroup: number | ParquetRowGroup,
  opts: PruneOptions & {
    partitionValues?: Record<string, unknown>;
    /** Logical column path to the path the file uses (column mapping). Default: the same. */
    toPhysical?: (path: readonly string[]) => string[];
  } = {},
): boolean {
  const rg = typeof rowGroup === "number" ? footer.rowGroups[rowGroup] : rowGroup;
  const parts = opts.partitionValues ?? {};
  const toPhysical = opts.toPhysical ?? ((p: readonly string[]) => [...p]);
  const source: StatsSource = {
    numRecords: rg.numRows,
    partition(path) {
      if (path.length !== 1) return undefined;
      const key = findKey(parts, path[0]);
      return key === undefined ? undefined : { value: parts[key] };
    },
    column(path) {
      const physical = toPhysical(path);
      const i = footer.leaves.findIndex(
        (l) =>
          !l.repeated &&
          l.path.length === physical.length &&
          l.path.every((p, k) => p === physical[k]),
      );
      const s = i < 0 ? undefined : rg.columns[i]?.stats;
      if (!s) return undefined;
      return { min: s.min, max: s.max, nullCount: s.nullCount };
    },
    deltaStrings: false,
  };
  return new Pruner(source, opts, new Map()).canMatch(predicate);
}

/**
 * A per-file test for a scan: parses `add.partitionValues` (by physical name, serialized) and
 * `add.stats` itself. Files without statistics always match unless their partition values
 * decide.
 */
export function fileMatcher(
  predicate: Typed,
  schema: StructType,
  partitionColumns: readonly string[],
  opts: PruneOptions & { toPhysical?: (path: readonly string[]) => string[] } = {},
): (add: AddFile) => boolean {
  const toPhysical = opts.toPhysical ?? ((p: readonly string[]) => [...p]);
  const partFields = partitionColumns.map((name) => {
    const f = schema.fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
    return { name: f?.name ?? name, type: f?.type, physical: toPhysical([f?.name ?? name])[0] };
  });
  // Constant sub-expressions evaluate once for all files.
  const constants: Constants = new Map();
  const needsStats = columnsOf(predicate).some(
    (c) => !partFields.some((p) => p.name.toLowerCase() === c.name.toLowerCase()),
  );
  return (add) => {
    const partitionValues: Record<string, unknown> = {};
    for (const p of partFields) {
      if (!p.type) continue;
      const raw = add.partitionValues?.[p.physical];
      try {
        partitionValues[p.name] = parsePartitionValue(raw, p.type, p.name);
      } catch {
        return true;
      }
    }
    let stats: FileStatsView["stats"];
    if (needsStats && add.stats) {
      try {
        const parsed = parseStatsJson(add.stats) as Record<string, unknown>;
        stats = {
          numRecords: parsed.numRecords === undefined ? undefined : Number(parsed.numRecords),
          minValues: logicalTree(parsed.minValues, schema, toPhysical),
          maxValues: logicalTree(parsed.maxValues, schema, toPhysical),
          nullCount: logicalTree(parsed.nullCount, schema, toPhysical),
        };
      } catch {
        stats = undefined;
      }
    }
    return matchFile(predicate, { partitionValues, stats }, opts, constants);
  };
}

/** Re-keys a physical statistics tree by logical names (identity without column mapping). */
function logicalTree(
  tree: unknown,
  schema: StructType,
  toPhysical: (path: readonly string[]) => string[],
  prefix: string[] = [],
): Record<string, unknown> | undefined {
  if (tree === null || typeof tree !== "object") return undefined;
  const src = tree as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of schema.fields) {
    const path = [...prefix, f.name];
    const physical = toPhysical(path);
    const key = physical[physical.length - 1];
    if (!(key in src)) continue;
    const v = src[key];
    if (typeof f.type === "object" && f.type.type === "struct") {
      const sub = logicalTree(v, f.type, (p) => toPhysical(p), path);
      if (sub) out[f.name] = sub;
    } else out[f.name] = v;
  }
  return out;
}

const columnCache = new WeakMap<Typed, TypedColumn[]>();

const columnsOf = (t: Typed): TypedColumn[] => {
  let cols = columnCache.get(t);
  if (!cols) {
    cols = referencedColumns(t);
    columnCache.set(t, cols);
  }
  return cols;
};

const findKey = (o: Record<string, unknown>, name: string): string | undefined => {
  if (Object.hasOwn(o, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(o).find((k) => k.toLowerCase() === lower);
};

function lookup(tree: Record<string, unknown> | undefined, path: readonly string[]): unknown {
  let node: unknown = tree;
  for (const p of path) {
    if (node === null || typeof node !== "object") return undefined;
    const o = node as Record<string, unknown>;
    const k = findKey(o, p);
    if (k === undefined) return undefined;
    node = o[k];
  }
  return node;
}

// ---------------------------------------------------------------------------------------------

const NEGATED: Record<string, string> = {
  "=": "!=",
  "!=": "=",
  "<": ">=",
  "<=": ">",
  ">": "<=",
  ">=": "<",
  "<=>": "distinct",
  distinct: "<=>",
};

class Pruner {
  private readonly relation: number;

  constructor(
    private readonly source: StatsSource,
    private readonly opts: PruneOptions,
    private readonly constants: Constants,
  ) {
    this.relation = opts.relation ?? 0;
  }

  canMatch(t: Typed): boolean {
    if (this.source.numRecords === 0) return false;
    return this.may(t, false);
  }

  /** May the node (or, with `negate`, NOT node) be TRUE for some row? */
  private may(t: Typed, negate: boolean): boolean {
    const exact = this.exact(t);
    if (exact !== undefined) return negate ? exact === false : exact === true;
    switch (t.kind) {
      case "and":
        return negate
          ? this.may(t.left, true) || this.may(t.right, true)
          : this.may(t.left, false) && this.may(t.right, false);
      case "or":
        return negate
          ? this.may(t.left, true) && this.may(t.right, true)
          : this.may(t.left, false) || this.may(t.right, false);
      case "not":
        return this.may(t.operand, !negate);
      case "isNull": {
        const r = this.range(t.operand);
        return t.negated !== negate ? r.mayBeNonNull : r.mayBeNull;
      }
      case "compare": {
        const op = negate ? NEGATED[t.op] : t.op;
        return this.compare(op, t.left.type, this.range(t.left), this.range(t.right));
      }
      case "in":
        return negate ? this.notIn(t) : this.inList(t);
      default:
        return true;
    }
  }

  /** The node's value when it depends only on constants and partition columns. */
  private exact(t: Typed): Scalar | null | undefined {
    if (t.kind === "literal") return t.value;
    const cols = columnsOf(t);
    if (cols.length === 0) {
      if (!this.constants.has(t)) this.constants.set(t, this.evaluateOn(t, cols));
      return this.constants.get(t);
    }
    if (!cols.every((c) => this.partitionValue(c) !== undefined)) return undefined;
    return this.evaluateOn(t, cols);
  }

  private evaluateOn(t: Typed, cols: TypedColumn[]): Scalar | null | undefined {
    const types: SqlType[] = [];
    const row: unknown[] = [];
    for (const c of cols) {
      types[c.ordinal] = c.type;
      row[c.ordinal] = this.partitionValue(c)!.value;
    }
    try {
      const [v] = evaluateRows(t, [row], types, { now: this.opts.now });
      return v === null ? null : toScalar(v, t.type);
    } catch {
      return undefined;
    }
  }

  private partitionValue(c: TypedColumn): { value: unknown } | undefined {
    if (c.relation !== this.relation) return undefined;
    return this.source.partition([c.name]);
  }

  /** Bounds of an expression over the file's rows. */
  private range(t: Typed): Range {
    const exact = this.exact(t);
    if (exact !== undefined) {
      return exact === null
        ? { mayBeNull: true, mayBeNonNull: false }
        : { lo: exact, hi: exact, mayBeNull: false, mayBeNonNull: true };
    }
    if (t.kind === "cast" && orderPreserving(t.operand.type, t.type)) {
      const r = this.range(t.operand);
      const conv = (v: Scalar | undefined): Scalar | undefined => {
        if (v === undefined) return undefined;
        try {
          const x = castScalar(v, t.operand.type, t.type, false);
          return x === null ? undefined : x;
        } catch {
          return undefined;
        }
      };
      return {
        lo: conv(r.lo),
        hi: conv(r.hi),
        mayBeNull: r.mayBeNull || (t.nullable && !t.operand.nullable),
        mayBeNonNull: r.mayBeNonNull,
      };
    }
    const path = this.columnPath(t);
    if (!path) return UNKNOWN;
    return this.statsRange(path, t.type);
  }

  private columnPath(t: Typed): string[] | undefined {
    if (t.kind === "column") return t.relation === this.relation ? [t.name] : undefined;
    if (t.kind === "field") {
      const p = this.columnPath(t.operand);
      return p ? [...p, t.name] : undefined;
    }
    return undefined;
  }

  private statsRange(path: string[], type: SqlType): Range {
    const s = this.source.column(path);
    const n = this.source.numRecords;
    if (!s) return UNKNOWN;
    const nc = s.nullCount;
    const mayBeNull = nc === undefined || Number.isNaN(nc) || nc > 0;
    const mayBeNonNull = nc === undefined || n === undefined || nc < n;
    const conv = (v: unknown): Scalar | undefined => {
      if (v === undefined || v === null) return undefined;
      try {
        const x = toScalar(
          v instanceof Uint8Array && type === "string" ? new TextDecoder().decode(v) : v,
          type,
        );
        return x === null ? undefined : x;
      } catch {
        return undefined;
      }
    };
    const lo = conv(s.min);
    let hi = conv(s.max);
    if (isTimestamp(type) && typeof hi === "bigint") hi += 999n;
    if (
      type === "string" &&
      typeof hi === "string" &&
      this.source.deltaStrings &&
      maybeTruncated(hi)
    ) {
      hi = undefined;
    }
    // Parquet writers leave NaN out of float statistics, yet NaN sorts above every number.
    if ((type === "double" || type === "float") && !this.source.deltaStrings) hi = undefined;
    return { lo, hi, mayBeNull, mayBeNonNull };
  }

  private compare(op: string, type: SqlType, l: Range, r: Range): boolean {
    const both = l.mayBeNonNull && r.mayBeNonNull;
    const cmp = (a: Scalar | undefined, b: Scalar | undefined): number | undefined =>
      a === undefined || b === undefined ? undefined : compareScalars(type, a, b);
    const single = (x: Range) => x.lo !== undefined && x.hi !== undefined && cmp(x.lo, x.hi) === 0;
    const overlap = () => !((cmp(l.hi, r.lo) ?? 0) < 0 || (cmp(r.hi, l.lo) ?? 0) < 0);
    switch (op) {
      case "<=>":
        return (l.mayBeNull && r.mayBeNull) || (both && overlap());
      case "distinct":
        return (
          (l.mayBeNull && r.mayBeNonNull) ||
          (l.mayBeNonNull && r.mayBeNull) ||
          (both && !(single(l) && single(r) && cmp(l.lo, r.lo) === 0))
        );
      case "=":
        return both && overlap();
      case "!=":
        return both && !(single(l) && single(r) && cmp(l.lo, r.lo) === 0);
      case "<":
        return both && !((cmp(l.lo, r.hi) ?? -1) >= 0);
      case "<=":
        return both && !((cmp(l.lo, r.hi) ?? -1) > 0);
      case ">":
        return both && !((cmp(l.hi, r.lo) ?? 1) <= 0);
      case ">=":
        return both && !((cmp(l.hi, r.lo) ?? 1) < 0);
      default:
        return true;
    }
  }

  private inList(t: Extract<Typed, { kind: "in" }>): boolean {
    const v = this.range(t.operand);
    if (!v.mayBeNonNull) return false;
    return t.list.some((item) => this.compare("=", t.operand.type, v, this.range(item)));
  }

  private notIn(t: Extract<Typed, { kind: "in" }>): boolean {
    const v = this.range(t.operand);
    if (!v.mayBeNonNull) return false;
    const items = t.list.map((item) => this.range(item));
    // x NOT IN (…, NULL, …) is never TRUE.
    if (items.some((r) => !r.mayBeNonNull)) return false;
    return items.every((r) => this.compare("!=", t.operand.type, v, r));
  }
}

/** A string max that may be a truncated prefix rather than an upper bound. */
function maybeTruncated(s: string): boolean {
  if (s.endsWith("\ufffd")) return false;
  let cps = 0;
  for (const _ of s) if (++cps >= 32) return true;
  return false;
}

const ORDERED = (t: SqlType) => isNumeric(t) || t === "date" || isTimestamp(t) || t === "boolean";

/** Casts that map a <= b to cast(a) <= cast(b) (monotone, non-decreasing). */
function orderPreserving(from: SqlType, to: SqlType): boolean {
  if (!ORDERED(from) || !ORDERED(to)) return false;
  if (from === "boolean" && !isNumeric(to)) return false;
  if (to === "boolean") return false;
  // Numbers to datetimes and back are monotone too, but rare; keep to what coercion inserts.
  if (isNumeric(from) !== isNumeric(to)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Statistics JSON with exact numbers

/**
 * JSON.parse for `add.stats` that keeps every number as its source text, so long and decimal
 * bounds beyond 2^53 convert exactly (toScalar reads the text for the column's type).
 */
export function parseStatsJson(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      if (text[i] === "}") {
        i++;
        return o;
      }
      for (;;) {
        ws();
        const k = str();
        ws();
        if (text[i++] !== ":") throw new SyntaxError("stats: expected ':'");
        const v = value();
        Object.defineProperty(o, k, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        ws();
        const d = text[i++];
        if (d === "}") return o;
        if (d !== ",") throw new SyntaxError("stats: expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const a: unknown[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        const d = text[i++];
        if (d === "]") return a;
        if (d !== ",") throw new SyntaxError("stats: expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    const m = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) throw new SyntaxError(`stats: unexpected '${c}'`);
    i += m[0].length;
    return m[0];
  };
  const str = (): string => {
    if (text[i] !== '"') throw new SyntaxError("stats: expected a string");
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const v = value();
  ws();
  if (i !== text.length) throw new SyntaxError("stats: trailing characters");
  return v;
}
