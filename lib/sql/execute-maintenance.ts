/**
 * OPTIMIZE and VACUUM through `/api/v1/sql`, answering with Spark's result columns.
 *
 * 1. OPTIMIZE returns one row: `path` (the table's location) and `metrics` (Spark's
 *    OptimizeMetrics struct, the fields Silt computes).
 *    REORG TABLE … APPLY (PURGE) answers the same way. Both stop starting bins once half of what
 *    is left of the statement's time budget is spent (or the deployment's OPTIMIZE budget,
 *    SiltContext.optimizeTimeBudgetMs, if sooner), the other half going to the bin in flight
 *    and the commit, and commit the bins they finished: `complete: false` says to run again.
 * 2. VACUUM returns `path`: the table's location, or, for DRY RUN, one row per file it would
 *    delete. The retention check follows the request's conf
 *    `spark.databricks.delta.retentionDurationCheck.enabled` (default true).
 */
import type { SiltContext } from "../context.ts";
import type { Statement } from "../expr/ast.ts";
import { optimizeTable } from "../ops/optimize.ts";
import { vacuumTable } from "../ops/vacuum.ts";
import type { SqlResult } from "./execute-ddl.ts";
import { confFlag, RETENTION_CHECK_CONF, type SqlSession } from "./session.ts";

const SIZE_STATS = "struct<min:bigint,max:bigint,avg:double,totalFiles:bigint,totalSize:bigint>";
const OPTIMIZE_METRICS_TYPE =
  `struct<numFilesAdded:bigint,numFilesRemoved:bigint,filesAdded:${SIZE_STATS},` +
  `filesRemoved:${SIZE_STATS},partitionsOptimized:bigint,numBatches:bigint,` +
  "totalConsideredFiles:bigint,totalFilesSkipped:bigint,numDeletionVectorsRemoved:bigint>";

export async function executeOptimize(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "optimize" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await optimizeTable(ctx, st.table, {
    where: st.where,
    zorderBy: st.zorderBy,
    defaults: session.defaults,
    now: session.now,
    timeBudgetMs: rewriteBudgetMs(ctx),
  });
  return optimizeResult(result);
}

/** REORG TABLE … APPLY (PURGE) answers like OPTIMIZE, as in Delta. */
export async function executeReorg(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "reorg" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await optimizeTable(ctx, st.table, {
    where: st.where,
    purge: true,
    defaults: session.defaults,
    now: session.now,
    timeBudgetMs: rewriteBudgetMs(ctx),
  });
  return optimizeResult(result);
}

/** Step 1: how long OPTIMIZE and REORG may start bins. */
function rewriteBudgetMs(ctx: SiltContext): number | undefined {
  const deployed = ctx.optimizeTimeBudgetMs;
  if (ctx.deadline === undefined) return deployed;
  const half = Math.floor(ctx.deadline.remainingMs() / 2);
  return deployed === undefined ? half : Math.min(half, deployed);
}

/** OPTIMIZE and REORG answer as Delta does: the table's path and a struct of metrics. */
function optimizeResult(result: Awaited<ReturnType<typeof optimizeTable>>): SqlResult {
  return {
    columns: [
      { name: "path", type: "string" },
      { name: "metrics", type: OPTIMIZE_METRICS_TYPE },
    ],
    rows: [[result.tableLocation, result.metrics]],
    version: result.version,
    committed: result.committed,
    complete: result.complete,
  };
}

export async function executeVacuum(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "vacuum" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await vacuumTable(ctx, st.table, {
    retainHours: st.retainHours,
    dryRun: st.dryRun,
    mode: st.mode,
    retentionCheckEnabled: confFlag(session, RETENTION_CHECK_CONF, true),
    defaults: session.defaults,
  });
  return {
    columns: [{ name: "path", type: "string" }],
    rows: result.dryRun ? result.files.map((f) => [f]) : [[result.tableLocation]],
    version: result.version,
    numDeletedFiles: result.numDeletedFiles,
  };
}
