/**
 * MERGE INTO target USING source ON cond WHEN …, the way current Delta writes it: matched rows
 * that change are marked deleted by deletion vectors, their new versions and the inserted rows
 * go to new files.
 *
 * 1. Open the target at its latest version and analyse the statement (merge-plan.ts): scopes,
 *    clauses, `*` expansion, schema evolution. Every analysis error comes before any read.
 * 2. Split ON into its conjuncts: equalities between a target expression and a source expression
 *    (`=`, where NULL never matches, and `<=>`, where NULL matches NULL) become hash-join keys;
 *    conditions on target columns only filter target rows, on source columns only filter source
 *    rows; the rest is checked for each candidate pair.
 * 3. Hash the source rows by their key values. From the keys' range (or their list, when there
 *    are few) and the target-only conditions build a predicate over the target, so only files
 *    whose partition values and statistics can hold a match are read; NOT MATCHED BY SOURCE
 *    clauses need every target row, so then every file is read.
 * 4. Read the target files two at a time (never the whole table). In each, probe the hash with
 *    every live row, keep the pairs the rest of ON accepts, and:
 *    - fail with DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE when a target row has
 *      several matches, unless the merge only inserts or its one MATCHED clause is an
 *      unconditional DELETE (then every match is deleted anyway);
 *    - give each matched pair the first MATCHED clause whose condition holds, each unmatched live
 *      row the first NOT MATCHED BY SOURCE clause whose condition holds; updated and deleted rows
 *      are the file's touched rows, updated rows are computed into the final schema;
 *    - remember which source rows matched.
 * 5. Source rows that matched no target row get the first NOT MATCHED clause whose condition
 *    holds, and are inserted.
 * 6. Touched rows get deletion vectors (a file with no live row left is removed), the new rows
 *    are written as new files (fresh row ids under row tracking), and, when the schema evolved,
 *    the new metadata goes in the same commit. An append-only table accepts only inserts.
 * 7. Commit `MERGE` with Spark's parameters and metrics; nothing to commit when nothing changed.
 */
import * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import { READ_WHOLE_TABLE, type ReadSet } from "../commit/conflicts.ts";
import type { SiltContext } from "../context.ts";
import { arrowValues } from "../data/arrow-to-json.ts";
import { combineChunks, concatTables, takeRows } from "../data/kernels.ts";
import type { Action, AddFile } from "../delta/actions.ts";
import {
  concatIdentities,
  freshIdentities,
  pickIdentities,
  type RowIdentities,
} from "../delta/row-tracking.ts";
import type { DataType, StructType } from "../delta/schema.ts";
import type { Snapshot } from "../delta/snapshot.ts";
import { siltError } from "../errors.ts";
import { andOf, literalOf, referencedColumns } from "../expr/analyze.ts";
import type { Expr, MergeClause } from "../expr/ast.ts";
import { type EvalContext, evaluatePredicate, evaluateTable } from "../expr/evaluate.ts";
import { toScalar } from "../expr/scalar-json.ts";
import { compareScalars } from "../expr/scalar-order.ts";
import type { Typed } from "../expr/typed.ts";
import { isOrderable, type Scalar } from "../expr/types.ts";
import { checkNotNull, evaluatePlan, tableOf } from "./assignments.ts";
import { joinBatches, takeBatch } from "./batches.ts";
import {
  assertNotAppendOnly,
  commitDml,
  dvMetrics,
  elapsed,
  fileFilter,
  openDmlTarget,
  stringMetrics,
} from "./dml-common.ts";
import { type MergePlan, type MergeSource, type PlannedClause, planMerge } from "./merge-plan.ts";
import { deleteActions, type FileMatch, findMatches } from "./row-deletes.ts";
import { writeDataFiles } from "./write-files.ts";

export type { MergeSource } from "./merge-plan.ts";

export interface MergeRequest {
  /**
   * Loads the source (given the target's schema, which types untyped JSON sources); timed as
   * Spark's materializeSourceTimeMs.
   */
  source: (target: { schema: StructType }) => Promise<MergeSource>;
  targetAlias?: string;
  on: Expr;
  clauses: MergeClause[];
  /** MERGE WITH SCHEMA EVOLUTION, or spark.databricks.delta.schema.autoMerge.enabled. */
  schemaEvolution?: boolean;
  defaults?: { catalog?: string; schema?: string };
  /** The statement's instant (epoch ms) for current_date()/current_timestamp(). */
  now?: number;
  /**
   * Actions committed with the merge, e.g. ingestion's `txn` records: they must land in the same
   * commit as the rows so a repeat of the same input is recognised (they commit even when no row
   * changed).
   */
  extraActions?: Action[];
  /**
   * Sees the snapshot the merge reads and commits on, before anything is read or written; throws
   * to stop. Ingestion checks its `txn` records here, on the very version the commit builds on.
   */
  beforeWrite?: (snapshot: Snapshot) => void;
}

export interface MergeResult {
  /** The version committed, or the table's version when nothing changed. */
  version: number;
  committed: boolean;
  numTargetRowsUpdated: number;
  numTargetRowsDeleted: number;
  numTargetRowsInserted: number;
  operationMetrics: Record<string, string>;
}

/**
 * Target files read at once: each is in memory only while its rows are joined. Decoding is
 * synchronous, so reading more at once overlaps little and costs a file's worth of memory.
 */
const FILES_AT_ONCE = 1;
/** Candidate pairs checked against the rest of ON at once. */
const PAIR_BLOCK = 1 << 16;
/** Up to this many distinct source keys prune target files by the list, beyond by the range. */
const IN_LIST_MAX = 64;

export async function mergeInto(
  ctx: SiltContext,
  name: TableRef,
  req: MergeRequest,
): Promise<MergeResult> {
  const started = performance.now();
  // Step 1.
  const target = await openDmlTarget(ctx, name, {
    defaults: req.defaults,
    alias: req.targetAlias,
  });
  const { t } = target;
  req.beforeWrite?.(t.snapshot);
  const now = BigInt(req.now ?? ctx.clock()) * 1000n;
  const sourceStart = performance.now();
  const source = await req.source({ schema: t.schema });
  const sourceTable = combineChunks(source.table);
  const materializeSourceTimeMs = elapsed(sourceStart);
  const plan = planMerge({
    targetFields: t.schema.fields,
    targetQualifier: target.qualifier,
    metadata: t.snapshot.metadata,
    source,
    on: req.on,
    clauses: req.clauses,
    schemaEvolution: req.schemaEvolution ?? false,
  });

  // Steps 2-3.
  const join = new Join(plan, sourceTable, { now });
  const prune = join.targetPredicate();
  const readsAll = plan.notMatchedBySource.length > 0 || prune === undefined;
  const canMatch = readsAll ? () => true : fileFilter(target, prune, now);
  const candidates =
    plan.notMatchedBySource.length === 0 && join.sourceCanMatchNothing()
      ? []
      : t.snapshot.files.filter(canMatch);

  // Step 4.
  const scanStart = performance.now();
  const matches: FileMatch[] = [];
  for (let i = 0; i < candidates.length; i += FILES_AT_ONCE) {
    const found = await findMatches(ctx, t.snapshot, {
      candidates: candidates.slice(i, i + FILES_AT_ONCE),
      match: (table, _file, deleted, identities) => join.targetFile(table, deleted, identities),
      identities: target.rowTracking,
      concurrency: FILES_AT_ONCE,
    });
    for (const m of found) matches.push({ ...m, table: undefined, identities: undefined });
  }
  // Step 5.
  join.insertUnmatched();
  const scanTimeMs = elapsed(scanStart);

  // Step 6.
  const rewriteStart = performance.now();
  if (matches.length > 0) assertNotAppendOnly(target);
  const actions: Action[] = [];
  if (plan.newMetadata) actions.push({ metaData: plan.newMetadata });
  const deletes = await deleteActions(ctx, t.entry.location, matches);
  actions.push(...deletes.actions);
  let adds: AddFile[] = [];
  let bytesAdded = 0;
  if (join.outputs.length > 0) {
    const written = await writeDataFiles(ctx, {
      tableRoot: t.entry.location,
      metadata: plan.newMetadata ?? t.snapshot.metadata,
      data: concatTables(join.outputs),
      identities: concatIdentities(join.outputIdentities),
      version: t.snapshot.version + 1,
      rowIdHighWaterMark: target.hwm,
    });
    actions.push(...written.actions);
    adds = written.adds;
    bytesAdded = Number(written.metrics.numOutputBytes);
  }
  const rewriteTimeMs = elapsed(rewriteStart);

  // Step 7.
  const c = join.counts;
  const dv = dvMetrics(deletes.metrics);
  const updated = c.matchedUpdated + c.notMatchedBySourceUpdated;
  const deleted = c.matchedDeleted + c.notMatchedBySourceDeleted;
  const metrics = stringMetrics({
    numSourceRows: sourceTable.numRows,
    numTargetRowsInserted: c.inserted,
    numTargetRowsUpdated: updated,
    numTargetRowsMatchedUpdated: c.matchedUpdated,
    numTargetRowsNotMatchedBySourceUpdated: c.notMatchedBySourceUpdated,
    numTargetRowsDeleted: deleted,
    numTargetRowsMatchedDeleted: c.matchedDeleted,
    numTargetRowsNotMatchedBySourceDeleted: c.notMatchedBySourceDeleted,
    numTargetRowsCopied: 0,
    numTargetBytesAdded: bytesAdded,
    numTargetBytesRemoved: deletes.metrics.numRemovedBytes,
    numOutputRows: c.inserted + updated,
    numTargetFilesAdded: adds.length,
    numTargetFilesRemoved: deletes.metrics.numRemovedFiles,
    numTargetChangeFilesAdded: 0,
    executionTimeMs: elapsed(started),
    materializeSourceTimeMs,
    scanTimeMs,
    rewriteTimeMs,
    numTargetDeletionVectorsAdded: dv.added,
    numTargetDeletionVectorsRemoved: dv.removed,
    numTargetDeletionVectorsUpdated: dv.updated,
  });
  const readSet: ReadSet = readsAll
    ? READ_WHOLE_TABLE
    : {
        readWholeTable: false,
        readFilePaths: new Set(candidates.map((f) => f.path)),
        readPredicate: canMatch,
      };
  const commit = await commitDml(ctx, target, {
    actions: [...actions, ...(req.extraActions ?? [])],
    operation: "MERGE",
    parameters: plan.parameters,
    metrics,
    readSet,
  });
  return {
    ...commit,
    numTargetRowsUpdated: updated,
    numTargetRowsDeleted: deleted,
    numTargetRowsInserted: c.inserted,
    operationMetrics: metrics,
  };
}

// ---------------------------------------------------------------------------------------------
// The join (steps 2-5)

interface Key {
  target: Typed;
  source: Typed;
  nullSafe: boolean;
}

/** A hashable stand-in for a row's key; NO_KEY when it cannot match. */
type Token = string | number | bigint | boolean;
const NO_KEY = Symbol("no key");

class Join {
  readonly keys: Key[] = [];
  /** ON conjuncts over target columns only / source columns only / both. */
  private readonly targetOnly: Typed[] = [];
  private readonly sourceOnly: Typed[] = [];
  private readonly residual: Typed[] = [];
  /** Source rows that may match: they pass the source-only conjuncts and have usable keys. */
  private readonly sourceRows: number[] = [];
  private readonly head = new Map<Token, number>();
  private readonly next: Int32Array;
  private readonly sourceMatched: Uint8Array;
  readonly outputs: arrow.Table[] = [];
  /** Row identities of `outputs`: kept for updated target rows, fresh for inserted ones. */
  readonly outputIdentities: RowIdentities[] = [];
  /** Identities of the target file being joined, when the table tracks rows. */
  private fileIdentities: RowIdentities | undefined;
  readonly counts = {
    matchedUpdated: 0,
    matchedDeleted: 0,
    notMatchedBySourceUpdated: 0,
    notMatchedBySourceDeleted: 0,
    inserted: 0,
  };
  private readonly sourceCtx: EvalContext;

  constructor(
    private readonly plan: MergePlan,
    private readonly source: arrow.Table,
    private readonly evalCtx: EvalContext,
  ) {
    // Source expressions were analysed with the target's columns first; over the source table
    // alone a column is found by its index within the source.
    this.sourceCtx = { ...evalCtx, column: (col, batch) => batch.data.children[col.index] };
    for (const c of conjuncts(plan.on)) {
      const rel = relations(c);
      const key = asKey(c);
      if (key) this.keys.push(key);
      else if (!rel.has(1)) this.targetOnly.push(c);
      else if (!rel.has(0)) this.sourceOnly.push(c);
      else this.residual.push(c);
    }
    const n = source.numRows;
    this.next = new Int32Array(n).fill(-1);
    this.sourceMatched = new Uint8Array(n);
    let eligible: Uint8Array = new Uint8Array(n).fill(1);
    if (this.sourceOnly.length > 0) {
      eligible = evaluatePredicate(all(this.sourceOnly), source, this.sourceCtx);
    }
    const tokens = keyTokens(
      this.keys.map((k) => ({ expr: k.source, nullSafe: k.nullSafe })),
      source,
      this.sourceCtx,
    );
    for (let r = n - 1; r >= 0; r--) {
      if (!eligible[r]) continue;
      const tok = tokens ? tokens[r] : 0;
      if (tok === NO_KEY) continue;
      const first = this.head.get(tok);
      if (first !== undefined) this.next[r] = first;
      this.head.set(tok, r);
    }
    for (let r = 0; r < n; r++) {
      if (eligible[r] && (tokens === undefined || tokens[r] !== NO_KEY)) {
        this.sourceRows.push(r);
      }
    }
  }

  sourceCanMatchNothing(): boolean {
    return this.sourceRows.length === 0;
  }

  /**
   * A predicate over the target that every matching target row satisfies: the target-only
   * conjuncts and, per key, the source keys' list or range. Undefined when nothing narrows.
   */
  targetPredicate(): Typed | undefined {
    const parts: Typed[] = [...this.targetOnly];
    for (const k of this.keys) {
      const type = k.target.type;
      const values = new Map<Token, Scalar>();
      let sawNull = false;
      const canonical = arrowValues(
        evaluateTable(k.source, this.source, this.sourceCtx),
        type as DataType,
      );
      for (const r of this.sourceRows) {
        const v = canonical[r];
        if (v === null) {
          sawNull = true;
          continue;
        }
        const tok = token(v);
        if (!values.has(tok)) values.set(tok, toScalar(v, type) as Scalar);
      }
      // A null-safe key matches NULL target rows too, which statistics cannot single out.
      if (k.nullSafe && sawNull) continue;
      const list = [...values.values()];
      if (list.length === 0) continue;
      if (list.length <= IN_LIST_MAX) {
        parts.push({
          kind: "in",
          type: "boolean",
          nullable: true,
          operand: k.target,
          list: list.map((v) => literalOf(v, type)),
        });
      } else if (isOrderable(type)) {
        let lo = list[0];
        let hi = list[0];
        for (const v of list) {
          if (compareScalars(type, v, lo) < 0) lo = v;
          if (compareScalars(type, v, hi) > 0) hi = v;
        }
        parts.push(
          andOf(
            compare(">=", k.target, literalOf(lo, type)),
            compare("<=", k.target, literalOf(hi, type)),
          ),
        );
      }
    }
    return parts.length === 0 ? undefined : all(parts);
  }

  /** Step 4 for one target file: its rows (deleted ones flagged) -> the rows this merge touches. */
  targetFile(
    table: arrow.Table,
    deleted: Uint8Array | undefined,
    identities?: RowIdentities,
  ): Uint8Array {
    this.fileIdentities = identities;
    table = combineChunks(table);
    const n = table.numRows;
    const touched = new Uint8Array(n);
    const live = new Uint8Array(n);
    for (let r = 0; r < n; r++) live[r] = deleted?.[r] ? 0 : 1;
    const eligible =
      this.targetOnly.length > 0
        ? evaluatePredicate(all(this.targetOnly), table, this.evalCtx)
        : undefined;
    const tokens = keyTokens(
      this.keys.map((k) => ({ expr: k.target, nullSafe: k.nullSafe })),
      table,
      this.evalCtx,
    );

    // Probe, then the rest of ON over the candidate pairs, a block at a time.
    const pt: number[] = [];
    const ps: number[] = [];
    let bt: number[] = [];
    let bs: number[] = [];
    const flush = () => {
      if (bt.length === 0) return;
      if (this.residual.length === 0) {
        for (let i = 0; i < bt.length; i++) {
          pt.push(bt[i]);
          ps.push(bs[i]);
        }
      } else {
        const batch = joinBatches([
          { table, rows: Uint32Array.from(bt) },
          { table: this.source, rows: Uint32Array.from(bs) },
        ]);
        const ok = evaluatePredicate(all(this.residual), batch, this.evalCtx);
        for (let i = 0; i < bt.length; i++) {
          if (ok[i]) {
            pt.push(bt[i]);
            ps.push(bs[i]);
          }
        }
      }
      bt = [];
      bs = [];
    };
    for (let r = 0; r < n; r++) {
      if (!live[r] || (eligible && !eligible[r])) continue;
      if (tokens) {
        const tok = tokens[r];
        if (tok === NO_KEY) continue;
        for (let s = this.head.get(tok) ?? -1; s >= 0; s = this.next[s]) {
          bt.push(r);
          bs.push(s);
        }
      } else {
        for (const s of this.sourceRows) {
          bt.push(r);
          bs.push(s);
        }
      }
      if (bt.length >= PAIR_BLOCK) flush();
    }
    flush();
    for (const s of ps) this.sourceMatched[s] = 1;
    if (this.plan.insertOnly) return touched;

    // One match per target row, unless every match is deleted anyway.
    const matchedTarget = new Uint8Array(n);
    let pairsT = pt;
    let pairsS = ps;
    let duplicate = false;
    for (const r of pt) {
      if (matchedTarget[r]) duplicate = true;
      matchedTarget[r] = 1;
    }
    if (duplicate) {
      if (!this.plan.multipleMatchesAllowed) throw multipleMatches();
      const seen = new Uint8Array(n);
      pairsT = [];
      pairsS = [];
      pt.forEach((r, i) => {
        if (seen[r]) return;
        seen[r] = 1;
        pairsT.push(r);
        pairsS.push(ps[i]);
      });
    }

    if (this.plan.matched.length > 0 && pairsT.length > 0) {
      const joined = joinBatches([
        { table, rows: Uint32Array.from(pairsT) },
        { table: this.source, rows: Uint32Array.from(pairsS) },
      ]);
      this.apply(this.plan.matched, tableOfBatch(joined), (i) => pairsT[i], touched, "matched");
    }
    if (this.plan.notMatchedBySource.length > 0) {
      const rows: number[] = [];
      for (let r = 0; r < n; r++) if (live[r] && !matchedTarget[r]) rows.push(r);
      if (rows.length > 0) {
        const unmatched = tableOfBatch(takeBatch(table, Uint32Array.from(rows)));
        this.apply(
          this.plan.notMatchedBySource,
          unmatched,
          (i) => rows[i],
          touched,
          "notMatchedBySource",
        );
      }
    }
    return touched;
  }

  /** Step 5. */
  insertUnmatched(): void {
    if (this.plan.notMatched.length === 0) return;
    const rows: number[] = [];
    for (let r = 0; r < this.source.numRows; r++) if (!this.sourceMatched[r]) rows.push(r);
    if (rows.length === 0) return;
    const unmatched = tableOfBatch(takeBatch(this.source, Uint32Array.from(rows)));
    this.apply(this.plan.notMatched, unmatched, () => -1, undefined, "notMatched");
  }

  /** The first clause whose condition holds, per row of `rows`, and its action. */
  private apply(
    clauses: PlannedClause[],
    rows: arrow.Table,
    targetRow: (i: number) => number,
    touched: Uint8Array | undefined,
    kind: MergeClause["kind"],
  ): void {
    const chosen = new Int32Array(rows.numRows).fill(-1);
    let remaining = Array.from({ length: rows.numRows }, (_, i) => i);
    clauses.forEach((clause, ci) => {
      if (remaining.length === 0) return;
      if (clause.condition === undefined) {
        for (const i of remaining) chosen[i] = ci;
        remaining = [];
        return;
      }
      const sub = remaining.length === rows.numRows ? rows : takeRows(rows, remaining);
      const ok = evaluatePredicate(clause.condition, sub, this.evalCtx);
      const rest: number[] = [];
      remaining.forEach((i, j) => {
        if (ok[j]) chosen[i] = ci;
        else rest.push(i);
      });
      remaining = rest;
    });
    clauses.forEach((clause, ci) => {
      const picked: number[] = [];
      for (let i = 0; i < chosen.length; i++) if (chosen[i] === ci) picked.push(i);
      if (picked.length === 0) return;
      if (touched) for (const i of picked) touched[targetRow(i)] = 1;
      if (clause.action === "delete") {
        if (kind === "matched") this.counts.matchedDeleted += picked.length;
        else this.counts.notMatchedBySourceDeleted += picked.length;
        return;
      }
      const batch = takeBatch(rows, Uint32Array.from(picked));
      const fields = this.plan.finalFields;
      const columns = (clause.plans ?? []).map((p) => evaluatePlan(p, batch, this.evalCtx));
      checkNotNull(fields, columns);
      this.outputs.push(tableOf(fields, columns, picked.length));
      this.outputIdentities.push(
        kind === "notMatched" || this.fileIdentities === undefined
          ? freshIdentities(picked.length)
          : pickIdentities(
              this.fileIdentities,
              picked.map((i) => targetRow(i)),
              false,
            ),
      );
      if (kind === "matched") this.counts.matchedUpdated += picked.length;
      else if (kind === "notMatchedBySource")
        this.counts.notMatchedBySourceUpdated += picked.length;
      else this.counts.inserted += picked.length;
    });
  }
}

function conjuncts(t: Typed): Typed[] {
  return t.kind === "and" ? [...conjuncts(t.left), ...conjuncts(t.right)] : [t];
}

function relations(t: Typed): Set<number> {
  return new Set(referencedColumns(t).map((c) => c.relation));
}

const only = (t: Typed, rel: number): boolean => {
  const r = relations(t);
  return r.size === 1 && r.has(rel);
};

/** `target expr = source expr` (either way round), or `<=>`. */
function asKey(c: Typed): Key | undefined {
  if (c.kind !== "compare" || (c.op !== "=" && c.op !== "<=>")) return undefined;
  const nullSafe = c.op === "<=>";
  if (only(c.left, 0) && only(c.right, 1)) return { target: c.left, source: c.right, nullSafe };
  if (only(c.left, 1) && only(c.right, 0)) return { target: c.right, source: c.left, nullSafe };
  return undefined;
}

const all = (ts: Typed[]): Typed => ts.reduce((a, b) => andOf(a, b));

const compare = (op: "<=" | ">=", left: Typed, right: Typed): Typed => ({
  kind: "compare",
  op,
  type: "boolean",
  nullable: left.nullable || right.nullable,
  left,
  right,
});

/**
 * Each row's key as one hashable value (undefined when there are no keys). With `=` a NULL key
 * part never matches; with `<=>` NULL is a value like any other.
 */
function keyTokens(
  keys: { expr: Typed; nullSafe: boolean }[],
  table: arrow.Table,
  ctx: EvalContext,
): (Token | typeof NO_KEY)[] | undefined {
  if (keys.length === 0) return undefined;
  if (keys.length === 1 && INTEGRAL_KEYS.has(keys[0].expr.type as string)) {
    return integralTokens(evaluateTable(keys[0].expr, table, ctx), keys[0].nullSafe);
  }
  const columns = keys.map((k) =>
    arrowValues(evaluateTable(k.expr, table, ctx), k.expr.type as DataType),
  );
  const n = table.numRows;
  const out: (Token | typeof NO_KEY)[] = new Array(n);
  for (let r = 0; r < n; r++) {
    if (keys.length === 1) {
      const v = columns[0][r];
      out[r] = v === null ? (keys[0].nullSafe ? "\u0000null" : NO_KEY) : token(v);
      continue;
    }
    let text = "";
    let usable = true;
    for (let k = 0; k < keys.length; k++) {
      const v = columns[k][r];
      if (v === null && !keys[k].nullSafe) {
        usable = false;
        break;
      }
      const tok = v === null ? "\u0000null" : token(v);
      text += `${typeof tok}:${String(tok)}\u0001`;
    }
    out[r] = usable ? text : NO_KEY;
  }
  return out;
}

const INTEGRAL_KEYS = new Set(["byte", "short", "integer", "long", "date"]);

/**
 * One integral key read straight from its Arrow buffers: a merge keyed on an id probes every row
 * of every target file it reads, and boxing each value first would double the memory it needs.
 */
function integralTokens(vector: arrow.Vector, nullSafe: boolean): (Token | typeof NO_KEY)[] {
  const out: (Token | typeof NO_KEY)[] = new Array(vector.length);
  let at = 0;
  for (const data of vector.data) {
    const values = data.values as ArrayLike<number | bigint>;
    const bitmap = data.nullCount > 0 ? data.nullBitmap : undefined;
    for (let i = 0; i < data.length; i++, at++) {
      const bit = data.offset + i;
      if (bitmap && !(bitmap[bit >> 3] & (1 << (bit & 7)))) {
        out[at] = nullSafe ? "\u0000null" : NO_KEY;
        continue;
      }
      const v = values[i];
      out[at] = typeof v === "bigint" ? (v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v) : v;
    }
  }
  return out;
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Equal keys give equal tokens: -0 is 0 and NaN is NaN, as Spark normalizes join keys. */
function token(v: unknown): Token {
  if (typeof v === "number") return Object.is(v, -0) ? 0 : v;
  if (typeof v === "string" || typeof v === "bigint" || typeof v === "boolean") return v;
  return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x));
}

const tableOfBatch = (batch: arrow.RecordBatch): arrow.Table => new arrow.Table(batch);

function multipleMatches() {
  return siltError("DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE");
}
