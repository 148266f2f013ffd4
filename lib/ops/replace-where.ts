/**
 * INSERT INTO t REPLACE WHERE <predicate> (and INSERT OVERWRITE with a static PARTITION spec):
 * one atomic commit that deletes the rows matching the predicate and inserts the new rows, which
 * must all satisfy it.
 *
 * 1. Refuse a write that also asks for dynamic partition overwrite (Spark refuses the two as
 *    write options together; a session-wide dynamic mode is ignored by REPLACE WHERE).
 * 2. Open the table, resolve the predicate against its columns, and convert the new rows.
 * 3. Check every new row: a row for which the predicate is not TRUE fails the whole statement
 *    with DELTA_REPLACE_WHERE_MISMATCH before anything is written.
 * 4. Find the matching rows (row-deletes.ts): files pruned by partition values and statistics; a
 *    predicate over partition columns only decides whole files without opening them.
 * 5. Write the new files, then mark the matches deleted: whole files removed, others given
 *    deletion vectors.
 * 6. Commit one `WRITE` (mode Overwrite, `predicate`). The read set is the files examined plus
 *    the predicate, so a concurrent write of matching rows fails the commit.
 */
import type * as arrow from "apache-arrow";
import type { TableRef } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { arrowValues } from "../data/arrow-to-json.ts";
import { parsePartitionValue } from "../data/partition-values.ts";
import type { Action } from "../delta/actions.ts";
import { physicalName } from "../delta/column-mapping.ts";
import type { DataType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { analyzePredicate, expressionSql, referencedColumns, type Scope } from "../expr/analyze.ts";
import type { Expr } from "../expr/ast.ts";
import { evaluatePredicate, evaluateRows } from "../expr/evaluate.ts";
import { fileMatcher } from "../expr/prune.ts";
import type { Typed } from "../expr/typed.ts";
import type { InputRows } from "./input-rows.ts";
import type { OpenTable } from "./open-table.ts";
import { deleteActions, findMatches } from "./row-deletes.ts";
import {
  commitOverwrite,
  newRows,
  openWriteTarget,
  physicalPathOf,
  type TargetOptions,
  WRITE_ACCESS,
  type WriteResult,
} from "./write-commit.ts";
import { writeDataFiles } from "./write-files.ts";

export interface ReplaceWhereOptions extends TargetOptions {
  /** The predicate as history records it; default its SQL text (`(day = DATE '2026-10-03')`). */
  predicateText?: string;
  /** The write also asked for dynamic partition overwrite (a per-write option, not the session's). */
  dynamicPartitionOverwrite?: boolean;
  /** The statement's instant in microseconds, for current_date()/current_timestamp(). */
  now?: bigint;
}

export async function replaceWhere(
  ctx: SiltContext,
  name: TableRef,
  predicate: Expr,
  input: InputRows,
  opts: ReplaceWhereOptions = {},
): Promise<WriteResult> {
  if (opts.dynamicPartitionOverwrite) {
    throw siltError("DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE");
  }
  const target = await openWriteTarget(ctx, name, WRITE_ACCESS.replaceWhere, opts);
  const { t } = target;
  const text = opts.predicateText ?? expressionSql(predicate);
  const typed = analyzePredicate(predicate, tableScope(t));
  const evalCtx = { now: opts.now ?? BigInt(ctx.clock()) * 1000n };
  const data = newRows(target, input);
  checkRowsMatch(typed, data, text, evalCtx);

  const { snapshot, schema } = t;
  const toPhysical = physicalPathOf(schema.fields, t.mappingMode);
  const canHold = fileMatcher(typed, schema, snapshot.metadata.partitionColumns, {
    now: evalCtx.now,
    toPhysical,
  });
  const candidates = snapshot.files.filter(canHold);
  const matches = await findMatches(ctx, snapshot, {
    candidates,
    byPartition: partitionDecider(t, typed, evalCtx.now),
    match: (table) => evaluatePredicate(typed, table, evalCtx),
  });

  const written = await writeDataFiles(ctx, {
    tableRoot: t.entry.location,
    metadata: snapshot.metadata,
    data,
    version: snapshot.version + 1,
    rowIdHighWaterMark: target.hwm,
  });
  const deleted = await deleteActions(ctx, t.entry.location, matches);
  const actions: Action[] = [...deleted.actions, ...written.actions];
  return commitOverwrite(ctx, target, {
    actions,
    parameters: { predicate: text },
    metrics: selectiveOverwriteMetrics(written.metrics, deleted.metrics),
    readSet: {
      readWholeTable: false,
      readFilePaths: new Set(candidates.map((f) => f.path)),
      readPredicate: canHold,
    },
    kind: "where",
  });
}

/** The table's columns, qualifiable by its name as in a query over it. */
export function tableScope(t: OpenTable, alias?: string): Scope {
  return {
    relations: [
      {
        qualifier: alias ? [alias] : [t.name.catalog, t.name.schema, t.name.table],
        columns: t.schema.fields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable })),
      },
    ],
  };
}

/**
 * For a predicate over partition columns only: each file's answer from its partition values,
 * evaluated exactly (TRUE deletes the whole file, FALSE or NULL keeps it).
 */
function partitionDecider(t: OpenTable, typed: Typed, now: bigint) {
  const partitionColumns = new Set(t.snapshot.metadata.partitionColumns);
  const refs = referencedColumns(typed);
  if (refs.some((c) => !partitionColumns.has(c.name))) return undefined;
  const fields = t.schema.fields;
  const types = fields.map((f) => f.type);
  return (file: { partitionValues: Record<string, string | null> }): boolean => {
    const row = fields.map((f) => {
      if (!partitionColumns.has(f.name)) return null;
      const physical = physicalName(f, t.mappingMode);
      const values = file.partitionValues ?? {};
      const raw = Object.hasOwn(values, physical) ? values[physical] : values[f.name];
      return parsePartitionValue(raw ?? null, f.type, f.name);
    });
    return evaluateRows(typed, [row], types, { now })[0] === true;
  };
}

function checkRowsMatch(
  typed: Typed,
  data: arrow.Table,
  text: string,
  evalCtx: { now: bigint },
): void {
  if (data.numRows === 0) return;
  const ok = evaluatePredicate(typed, data, evalCtx);
  const bad = ok.indexOf(0);
  if (bad < 0) return;
  const values = referencedColumns(typed).map((c) => {
    const v = arrowValues(data.getChildAt(c.ordinal)!, c.type as DataType)[bad];
    return ` - ${c.name} : ${v === null ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v)}`;
  });
  throw siltError("DELTA_REPLACE_WHERE_MISMATCH", { text, values: values.join("\n") });
}

/** operationMetrics of a WRITE that deletes by condition and inserts (Spark's names). */
export function selectiveOverwriteMetrics(
  written: { numFiles: string; numOutputRows: string; numOutputBytes: string },
  deleted: { numRemovedFiles: number; numDeletedRows: number; numRemovedBytes: number },
): Record<string, string> {
  return {
    numFiles: written.numFiles,
    numOutputBytes: written.numOutputBytes,
    numOutputRows: written.numOutputRows,
    numRemovedFiles: String(deleted.numRemovedFiles),
    numAddedChangeFiles: "0",
    numDeletedRows: String(deleted.numDeletedRows),
    // Deletion vectors leave the surviving rows where they are: nothing is copied.
    numCopiedRows: "0",
    numRemovedBytes: String(deleted.numRemovedBytes),
  };
}
