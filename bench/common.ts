/**
 * What every benchmark case shares: the result shape bench/run.ts reads, the warm-up + median
 * protocol, memory figures, and a DuckDB instance configured the same way for every comparison.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { OpenTable } from "../lib/ops/open-table.ts";
import type { Checks } from "./data.ts";

export const WARMUP = 1;
export const RUNS = 3;
export const ROW_GROUP_SIZE = 131_072;

export interface CaseResult {
  case: string;
  rows: number;
  /** Measured runs in ms, warm-up excluded. */
  runs: number[];
  warmupMs?: number;
  /** Peak RSS of the whole process (MB), warm-up and setup included. */
  peakRssMb: number;
  /** RSS after setup and GC, before the first run (MB): what the input itself holds. */
  baseRssMb: number;
  ok: boolean;
  notes: string[];
  extra?: Record<string, unknown>;
}

const mb = (kb: number): number => Math.round((kb / 1024) * 10) / 10;
export const peakRss = (): number => mb(process.resourceUsage().maxRSS);
export const rssNow = (): number => Math.round((process.memoryUsage().rss / 1024 / 1024) * 10) / 10;
export const collect = (): void => {
  globalThis.gc?.();
  // Objects kept alive only by the first pass's finalizers (wasm and native handles) go now.
  globalThis.gc?.();
};

/**
 * How many times a case runs. A case whose one run takes most of a minute runs once, unwarmed
 * (`ONCE`), so the whole bench stays near 10 minutes; its row says so.
 */
export interface Runs {
  warmup: number;
  runs: number;
}
export const ONCE: Runs = { warmup: 0, runs: 1 };
const DEFAULT_RUNS: Runs = { warmup: WARMUP, runs: RUNS };

/** Warm-up plus measured runs, with a full GC before each so one run's garbage is not the next's. */
export async function measure(
  run: (i: number) => Promise<void>,
  between?: () => Promise<void>,
  { warmup, runs }: Runs = DEFAULT_RUNS,
): Promise<{ warmupMs: number | undefined; runs: number[] }> {
  const times: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    collect();
    const t0 = performance.now();
    await run(i);
    times.push(performance.now() - t0);
    if (between) await between();
  }
  return { warmupMs: warmup > 0 ? times[0] : undefined, runs: times.slice(warmup) };
}

export function result(
  name: string,
  rows: number,
  runs: number[],
  ok: boolean,
  notes: string[],
): CaseResult {
  return { case: name, rows, runs, peakRssMb: peakRss(), baseRssMb: rssNow(), ok, notes };
}

export async function openDuck() {
  // Extensions off: everything here is local files, and a silent download attempt would skew
  // the first run.
  const instance = await DuckDBInstance.create(":memory:", {
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  const conn = await instance.connect();
  const settings = await conn.runAndReadAll(
    "SELECT current_setting('threads')::VARCHAR, version()",
  );
  const [threads, version] = settings.getRows()[0] as [string, string];
  return { instance, conn, threads, version };
}

export type Duck = Awaited<ReturnType<typeof openDuck>>;
export type DuckConn = Duck["conn"];

export function closeDuck(duck: Duck): void {
  duck.conn.closeSync();
  duck.instance.closeSync();
}

export const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`;
export const sqlIdent = (s: string): string => `"${s.replaceAll('"', '""')}"`;

/** Logical column name -> the physical (column-mapped) name the data files use. */
export function physicalNames(t: OpenTable): Record<string, string> {
  const physical: Record<string, string> = {};
  for (const f of t.schema.fields) {
    const name = f.metadata["delta.columnMapping.physicalName"];
    physical[f.name] = typeof name === "string" ? name : f.name;
  }
  return physical;
}

/**
 * Warm-up plus measured runs of a destructive change: `setup` (untimed) gives each run the same
 * starting state, `after` (untimed) records or checks what the run left, with its index.
 */
export async function measureFresh(
  setup: (i: number) => Promise<void>,
  run: (i: number) => Promise<void>,
  after: (i: number) => Promise<void>,
  { warmup, runs }: Runs = DEFAULT_RUNS,
): Promise<{ warmupMs: number | undefined; runs: number[] }> {
  const times: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    await setup(i);
    collect();
    const t0 = performance.now();
    await run(i);
    times.push(performance.now() - t0);
    await after(i);
  }
  return { warmupMs: warmup > 0 ? times[0] : undefined, runs: times.slice(warmup) };
}

export const LAST_RUN = WARMUP + RUNS - 1;

export const SNAPSHOT_COMMITS = 1_000;
/**
 * The checkpointed logs whose latest snapshot is loaded, by case: versions 0..n-1. The smallest
 * has 11 versions so that one crosses the default interval (10) and gets a checkpoint.
 */
export const CHECKPOINTED_LOGS: Record<string, number> = {
  "silt-snapshot-10-checkpointed": 11,
  "silt-snapshot-1k-checkpointed": 1_000,
  "silt-snapshot-10k": 10_000,
};

/** What `prepare` leaves for the scan cases, which must not pay for making their table. */
export interface Prepared {
  checks: Checks;
  dataFiles: string[];
  /** Logical column name -> physical (column-mapped) name in the data files. */
  physical: Record<string, string>;
  sourceParquet: string;
}

export const preparedFile = (dir: string) => path.join(dir, "prepared.json");
export const readPrepared = (dir: string): Prepared =>
  JSON.parse(readFileSync(preparedFile(dir), "utf8")) as Prepared;
