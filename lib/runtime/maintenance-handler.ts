/**
 * The maintenance function, invoked by an EventBridge schedule: one pass over the catalog's
 * tables, each maintained as its properties ask (lib/ops/maintenance-plan.ts), inside the
 * Lambda's time limit.
 *
 * 1. List every ACTIVE table (catalogs, then schemas, then tables: Query on the catalog table).
 * 2. Order them round-robin from the cursor the previous run left in the bucket
 *    (`_maintenance/cursor.json` under the storage root: the first table it did not finish).
 * 3. Per table, while time is left: open it (which also publishes ratified commits), plan, run
 *    the steps. OPTIMIZE gets the time left minus a reserve as its budget (it commits the bins
 *    done and leaves the rest, still small, to the next run). VACUUM first runs dry and commits
 *    its START/END pair only when there is something to delete, so an hourly schedule does not
 *    add two empty commits an hour. A failing step is logged and counted; the table's other
 *    steps and the other tables go on.
 * 4. No new table starts with less than `minTableMs` left, and no new step with less than
 *    `minStepMs`: the table cut short and the ones not reached are the next run's first.
 *    The cursor is written after every table, so even a run killed by the timeout resumes.
 * 5. With every table reached and `minStepMs` left, the storage sweep (ops/sweep-orphans.ts):
 *    staging entries never finalized and files no table owns, past the catalog's stale window.
 * 6. A summary line, which is also the TablesMaintained / MaintenanceFailures metric record.
 *
 * The function acts as the service principal (SILT_PRINCIPAL), not as a caller.
 */
import type { Context, ScheduledEvent } from "aws-lambda";
import { writeCheckpoint } from "../commit/checkpoint-writer.ts";
import type { SiltContext } from "../context.ts";
import { cleanupLog } from "../delta/log-cleanup.ts";
import { SiltError } from "../errors.ts";
import { emitMetrics } from "../metrics.ts";
import { type MaintenanceStep, planMaintenance, roundRobin } from "../ops/maintenance-plan.ts";
import { type OpenTable, openTable } from "../ops/open-table.ts";
import { optimizeTable } from "../ops/optimize.ts";
import type { OnProgress, Progress } from "../ops/progress.ts";
import { type SweepResult, sweepOrphans } from "../ops/sweep-orphans.ts";
import { vacuumTable } from "../ops/vacuum.ts";
import { ObjectNotFoundError } from "../storage/object-store.ts";
import { withInvocation } from "./invocation.ts";
import { contextFromEnv } from "./lambda.ts";

/** Storage-root key of the round-robin cursor (outside `tables/` and `ingest/`). */
export const CURSOR_KEY = "_maintenance/cursor.json";

export interface MaintenanceRunOptions {
  /** Milliseconds left before Lambda stops the invocation. */
  remainingMs: () => number;
  /** Do not start a table with less than this left. Default 4 minutes. */
  minTableMs?: number;
  /** Do not start a step with less than this left. Default 2 minutes. */
  minStepMs?: number;
  /** OPTIMIZE stops starting bins this long before the end. Default 3 minutes. */
  optimizeReserveMs?: number;
  /** How far each table's OPTIMIZE and VACUUM have got (lib/ops/progress.ts). */
  onProgress?: (table: string, step: "optimize" | "vacuum", progress: Progress) => void;
}

type StepName = MaintenanceStep["kind"] | "open";

export type StepOutcome =
  | { step: StepName; ok: true; detail: Record<string, unknown> }
  | { step: StepName; ok: false; errorClass: string; error: string };

export interface TableOutcome {
  table: string;
  steps: StepOutcome[];
  /** False when time ran out before every planned step ran (the next run starts with it). */
  finished: boolean;
}

export interface MaintenanceRunResult {
  tables: TableOutcome[];
  /** Tables in the catalog this run did not reach. */
  notReached: number;
  /** Where the next run starts. */
  cursor: string | undefined;
  /** The storage sweep, when the run had time for it. */
  sweep?: SweepResult;
}

const MINUTE = 60_000;
const minStepMsOf = (opts: MaintenanceRunOptions): number => opts.minStepMs ?? 2 * MINUTE;

export async function runMaintenance(
  ctx: SiltContext,
  opts: MaintenanceRunOptions,
): Promise<MaintenanceRunResult> {
  const minTableMs = opts.minTableMs ?? 4 * MINUTE;
  // Steps 1-2.
  const order = roundRobin(await listAllTables(ctx), await readCursor(ctx));
  const outcomes: TableOutcome[] = [];
  let cursor: string | undefined = order[0];
  for (const [i, table] of order.entries()) {
    // Step 4.
    if (opts.remainingMs() < minTableMs) break;
    // Step 3.
    const outcome = await maintainTable(ctx, table, opts);
    outcomes.push(outcome);
    cursor = outcome.finished ? order[(i + 1) % order.length] : table;
    await writeCursor(ctx, cursor);
    if (!outcome.finished) break;
  }
  const notReached = order.length - outcomes.length;
  const allFinished = notReached === 0 && outcomes.every((o) => o.finished);
  // Step 5.
  const minStepMs = minStepMsOf(opts);
  const sweep =
    allFinished && opts.remainingMs() >= minStepMs
      ? await sweepOrphans(ctx, { remainingMs: opts.remainingMs, minMs: minStepMs })
      : undefined;
  // Step 6.
  const failures = outcomes.flatMap((o) => o.steps.filter((s) => !s.ok));
  const result: MaintenanceRunResult = {
    tables: outcomes,
    notReached,
    cursor,
    ...(sweep === undefined ? {} : { sweep }),
  };
  emitMetrics(
    "maintenance run done",
    "MAINTENANCE",
    {
      TablesMaintained: outcomes.filter((o) => o.finished).length,
      MaintenanceFailures: failures.length,
    },
    {
      tablesInCatalog: order.length,
      notReached,
      cursor,
      ...(sweep === undefined
        ? {}
        : {
            sweptPrefixes: sweep.prefixesDeleted,
            sweptObjects: sweep.objectsDeleted,
            releasedEntries: sweep.entriesReleased,
          }),
    },
  );
  return result;
}

/** Step 3 for one table, which `silt maintain <table>` also runs on its own. */
export async function maintainTable(
  ctx: SiltContext,
  table: string,
  opts: MaintenanceRunOptions,
): Promise<TableOutcome> {
  const minStepMs = minStepMsOf(opts);
  const optimizeReserveMs = opts.optimizeReserveMs ?? 3 * MINUTE;
  const steps: StepOutcome[] = [];
  const log = ctx.logger.child({ table, operation: "MAINTENANCE" });
  let t: OpenTable;
  try {
    t = await openTable(ctx, table);
  } catch (err) {
    // Dropped since the listing: nothing to maintain. Unreadable: a failure, but retrying it
    // first next run would not help, so the run moves on.
    if (err instanceof SiltError && err.status === 404) return { table, steps: [], finished: true };
    const failed = failure("open", err);
    log.error("maintenance could not open the table", { ...failed });
    return { table, steps: [failed], finished: true };
  }
  const plan = planMaintenance({
    version: t.snapshot.version,
    checkpointVersion: t.snapshot.checkpointVersion,
    configuration: t.snapshot.metadata.configuration,
  });
  for (const { property, value } of plan.ignored) {
    log.warn("ignoring a maintenance property with an unknown value", { property, value });
  }
  let finished = true;
  for (const step of plan.steps) {
    if (opts.remainingMs() < minStepMs) {
      finished = false;
      break;
    }
    try {
      const onProgress = opts.onProgress;
      const detail = await runStep(
        ctx,
        t,
        step,
        opts.remainingMs() - optimizeReserveMs,
        onProgress &&
          ((p) => onProgress(table, step.kind === "optimize" ? "optimize" : "vacuum", p)),
      );
      steps.push({ step: step.kind, ok: true, detail });
    } catch (err) {
      const failed = failure(step.kind, err);
      steps.push(failed);
      log.error("maintenance step failed", { ...failed });
    }
  }
  log.info("table maintained", { version: t.snapshot.version, finished, steps });
  return { table, steps, finished };
}

async function runStep(
  ctx: SiltContext,
  t: OpenTable,
  step: MaintenanceStep,
  optimizeBudgetMs: number,
  onProgress: OnProgress | undefined,
): Promise<Record<string, unknown>> {
  const name = [t.name.catalog, t.name.schema, t.name.table];
  switch (step.kind) {
    case "checkpoint": {
      const written = await writeCheckpoint(ctx.store, t.entry.location, t.snapshot);
      return { version: written.version, actions: written.numActions, bytes: written.sizeInBytes };
    }
    case "optimize": {
      const result = await optimizeTable(ctx, name, {
        timeBudgetMs: Math.max(0, optimizeBudgetMs),
        onProgress,
      });
      return {
        version: result.version,
        committed: result.committed,
        complete: result.complete,
        numFilesRemoved: result.metrics.numFilesRemoved,
        numFilesAdded: result.metrics.numFilesAdded,
      };
    }
    case "vacuum": {
      const dry = await vacuumTable(ctx, name, { mode: step.mode, dryRun: true });
      if (dry.files.length === 0) return { mode: step.mode, numDeletedFiles: 0 };
      const result = await vacuumTable(ctx, name, { mode: step.mode, onProgress });
      return { mode: step.mode, version: result.version, numDeletedFiles: result.numDeletedFiles };
    }
    case "logCleanup": {
      const result = await cleanupLog(ctx.store, t.entry.location, { now: ctx.clock() });
      return { checkpointVersion: result.checkpointVersion, deleted: result.deleted.length };
    }
  }
}

function failure(step: StepName, err: unknown): StepOutcome & { ok: false } {
  return {
    step,
    ok: false,
    errorClass: err instanceof SiltError ? err.errorClass : "INTERNAL_ERROR",
    error: err instanceof Error ? err.message : String(err),
  };
}

async function listAllTables(ctx: SiltContext): Promise<string[]> {
  const names: string[] = [];
  for (const catalog of await ctx.catalog.listCatalogs()) {
    for (const schema of await ctx.catalog.listSchemas(catalog.name).catch(droppedMeanwhile)) {
      const tables = await ctx.catalog
        .listTables(catalog.name, schema.name)
        .catch(droppedMeanwhile);
      for (const t of tables) names.push(`${t.catalog}.${t.schema}.${t.name}`);
    }
  }
  return names;
}

/** A catalog or schema dropped between two listing calls has no tables left to maintain. */
function droppedMeanwhile(err: unknown): never[] {
  if (err instanceof SiltError && err.status === 404) return [];
  throw err;
}

async function readCursor(ctx: SiltContext): Promise<string | undefined> {
  try {
    const doc = JSON.parse(new TextDecoder().decode(await ctx.store.get(CURSOR_KEY))) as {
      next?: unknown;
    };
    return typeof doc.next === "string" ? doc.next : undefined;
  } catch (err) {
    if (err instanceof ObjectNotFoundError || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

async function writeCursor(ctx: SiltContext, next: string | undefined): Promise<void> {
  const doc = { next, updatedAt: new Date(ctx.clock()).toISOString() };
  await ctx.store.put(CURSOR_KEY, new TextEncoder().encode(`${JSON.stringify(doc)}\n`));
}

/** The Lambda handler (EventBridge schedule target), context from the environment. */
export function maintenanceHandler(env: NodeJS.ProcessEnv = process.env) {
  return async (event: ScheduledEvent, lambdaContext?: Context): Promise<MaintenanceRunResult> => {
    const ctx = await contextFromEnv(env);
    // Invoked by hand without a Lambda context: assume the function's own 15 minutes.
    const deadline = Date.now() + 15 * MINUTE;
    const remainingMs = () => lambdaContext?.getRemainingTimeInMillis() ?? deadline - Date.now();
    return withInvocation(
      ctx.logger,
      lambdaContext,
      { operation: "MAINTENANCE", scheduledTime: event.time },
      () => runMaintenance(ctx, { remainingMs }),
    );
  };
}
