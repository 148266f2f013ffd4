/**
 * The scheduled maintenance pass on one machine: the maintenance function's own code
 * (runMaintenance, or maintainTable for one table), with no Lambda time limit, and the interval
 * `silt serve` repeats it at (SILT_MAINTENANCE_INTERVAL).
 */
import { formatQualifiedName, type QualifiedName } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { siltError } from "../errors.ts";
import { openTable } from "../ops/open-table.ts";
import {
  type MaintenanceRunOptions,
  maintainTable,
  runMaintenance,
  type TableOutcome,
} from "./maintenance-handler.ts";

export interface LocalMaintenanceResult {
  tables: TableOutcome[];
}

/** Every table (with the storage sweep after them, as deployed), or just `table`. */
export async function maintainLocally(
  ctx: SiltContext,
  opts: { table?: QualifiedName; onProgress?: MaintenanceRunOptions["onProgress"] } = {},
): Promise<LocalMaintenanceResult> {
  // No time limit: every step of every table runs, whatever it costs.
  const run: MaintenanceRunOptions = {
    remainingMs: () => Number.POSITIVE_INFINITY,
    onProgress: opts.onProgress,
  };
  if (opts.table === undefined) return { tables: (await runMaintenance(ctx, run)).tables };
  const { catalog, schema, table } = opts.table;
  // A table that is not there is the caller's mistake, not a table with nothing to do.
  await openTable(ctx, [catalog, schema, table]);
  return { tables: [await maintainTable(ctx, formatQualifiedName(catalog, schema, table), run)] };
}

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * SILT_MAINTENANCE_INTERVAL in milliseconds: a whole number of seconds, or one with a unit
 * (`90s`, `10m`, `1h`); unset or empty means never.
 */
export function maintenanceIntervalOf(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.SILT_MAINTENANCE_INTERVAL?.trim();
  if (text === undefined || text === "") return undefined;
  const match = /^(\d+)([smh]?)$/.exec(text);
  const ms = match === null ? 0 : Number(match[1]) * UNIT_MS[match[2] || "s"]!;
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw siltError("SILT_MISCONFIGURED:MAINTENANCE_INTERVAL", {
      value: JSON.stringify(env.SILT_MAINTENANCE_INTERVAL),
    });
  }
  return ms;
}
