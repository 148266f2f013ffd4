/**
 * What scheduled maintenance does to one table, decided from its properties and its log alone
 * (no I/O here; lib/runtime/maintenance-handler.ts runs the plan):
 *
 * - checkpoint: the latest version is `delta.checkpointInterval` or more commits past the newest
 *   checkpoint, i.e. a commit-time checkpoint (lib/commit/post-commit.ts) was skipped or failed.
 *   Every table gets this; it only makes reads faster.
 * - optimize: `silt.maintenance.optimize` = `true`: OPTIMIZE (bin-packing) within the time the run
 *   has left. Never Z-order: it re-sorts whole partitions, so a scheduled run would rewrite the
 *   table every time.
 * - vacuum: `silt.maintenance.vacuum` = `true` or `full` (VACUUM, FULL as in Delta) or `lite`
 *   (VACUUM LITE: the log only, no listing), with the table's retention.
 * - logCleanup: every table with a checkpoint, unless `delta.enableExpiredLogCleanup` = `false`
 *   (Delta's own switch). Delta cleans the log after writing a checkpoint; commit-time checkpoints
 *   here leave that to maintenance. Cleanup only removes what `delta.logRetentionDuration`
 *   (30 days) no longer protects.
 *
 * Steps run in this order: the checkpoint first (every later step opens the table), OPTIMIZE
 * before VACUUM (VACUUM keeps what OPTIMIZE just replaced: it is within the retention), log
 * cleanup last. Property values are case-insensitive; an unrecognised one turns its step off and
 * is reported in `ignored`, so one mistyped property never fails the run.
 */
import { checkpointInterval } from "../delta/table-config.ts";
import type { VacuumMode } from "./vacuum.ts";

export const MAINTENANCE_OPTIMIZE_PROPERTY = "silt.maintenance.optimize";
export const MAINTENANCE_VACUUM_PROPERTY = "silt.maintenance.vacuum";
export const EXPIRED_LOG_CLEANUP_PROPERTY = "delta.enableExpiredLogCleanup";

export type MaintenanceStep =
  | { kind: "checkpoint" }
  | { kind: "optimize" }
  | { kind: "vacuum"; mode: VacuumMode }
  | { kind: "logCleanup" };

export interface TableLogState {
  version: number;
  /** Version of the newest checkpoint, if the table has one. */
  checkpointVersion: number | undefined;
  configuration: Record<string, string>;
}

export interface MaintenancePlan {
  steps: MaintenanceStep[];
  ignored: { property: string; value: string }[];
}

export function planMaintenance(state: TableLogState): MaintenancePlan {
  const steps: MaintenanceStep[] = [];
  const ignored: MaintenancePlan["ignored"] = [];
  const setting = (property: string, allowed: readonly string[]): string | undefined => {
    const raw = state.configuration[property];
    if (raw === undefined) return undefined;
    const value = raw.trim().toLowerCase();
    if (allowed.includes(value)) return value;
    ignored.push({ property, value: raw });
    return undefined;
  };

  // Without a checkpoint, replay starts at version 0: commit-time checkpoints would have written
  // the first one at version `interval`.
  const behind = state.version - (state.checkpointVersion ?? 0);
  const checkpoint = state.version > 0 && behind >= checkpointInterval(state.configuration);
  if (checkpoint) steps.push({ kind: "checkpoint" });
  if (setting(MAINTENANCE_OPTIMIZE_PROPERTY, ["true", "false"]) === "true") {
    steps.push({ kind: "optimize" });
  }
  const vacuum = setting(MAINTENANCE_VACUUM_PROPERTY, ["true", "full", "lite", "false"]);
  if (vacuum !== undefined && vacuum !== "false") {
    steps.push({ kind: "vacuum", mode: vacuum === "lite" ? "lite" : "full" });
  }
  const cleanup = setting(EXPIRED_LOG_CLEANUP_PROPERTY, ["true", "false"]) !== "false";
  if (cleanup && (checkpoint || state.checkpointVersion !== undefined)) {
    steps.push({ kind: "logCleanup" });
  }
  return { steps, ignored };
}

/**
 * The order of one run over `tables` (names in any order): name order, starting at `cursor` (the
 * first table the previous run did not finish) and wrapping around, so a run that runs out of
 * time is continued by the next one and every table gets its turn.
 */
export function roundRobin(tables: readonly string[], cursor: string | undefined): string[] {
  const sorted = [...tables].sort();
  if (cursor === undefined) return sorted;
  const start = sorted.findIndex((t) => t >= cursor);
  return start <= 0 ? sorted : [...sorted.slice(start), ...sorted.slice(0, start)];
}
