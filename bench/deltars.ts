/**
 * delta-rs (the Python `deltalake` package) as a peer in the bench: the `rs-*` cases. Each runs
 * bench/deltars.py in the cached venv of deltars-requirements.txt, on the same rows as the Silt
 * and DuckDB cases, and checks what it produced against the same oracle.
 *
 * delta-rs 1.6.6 cannot read Silt's tables (they are catalog-managed, and its reader lacks
 * column mapping, deletion vectors, v2 checkpoints and vacuumProtocolCheck), so every `rs-prepare*`
 * step copies the rows of Silt's prepared data files, file by file, into a delta-rs table of its
 * own; `rs-prepare-keyed` records the error delta-rs gives on Silt's table for the notes.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cachedVenv } from "../test/helpers/cached-venv.ts";
import { AGGREGATE_SQL, canonicalRows } from "./aggregate.ts";
import {
  type CaseResult,
  CHECKPOINTED_LOGS,
  type Prepared,
  readPrepared,
  SNAPSHOT_COMMITS,
} from "./common.ts";
import {
  expectKeyed,
  type KeyedChecks,
  keyedChecksOf,
  keyedChecksSql,
  sameChecks,
  sameKeyed,
} from "./data.ts";
import {
  CHANGES,
  type ChangeExtra,
  KEYED_ROWS,
  LOOKUP_SQL,
  type LookupRow,
  mergeSourceParquet,
  newDayParquet,
  readDay,
  readKeyed,
  sameRow,
  TABLE,
} from "./keyed.ts";
import {
  OPTIMIZE_ROWS,
  OPTIMIZE_TARGET_FILE_SIZE,
  POINT_CUSTOMER_SQL,
  POINT_ID_SQL,
  readOptimizePrepared,
} from "./maintenance.ts";

const SCRIPT = fileURLToPath(new URL("./deltars.py", import.meta.url));

export const DELTARS = cachedVenv({
  requirements: fileURLToPath(new URL("./deltars-requirements.txt", import.meta.url)),
  cacheDir: process.env.SILT_DELTARS_CACHE || path.join(homedir(), ".cache", "silt-deltars"),
  importCheck: "import deltalake, pyarrow",
  what: "delta-rs (deltalake) and pyarrow",
  venvHint:
    "The bench's delta-rs peer needs python3 (3.10 or newer) with its venv module (on " +
    "Debian/Ubuntu: apt-get install python3 python3-venv)",
});

/** What deltars.py prints: the measured runs, its own memory, and what the case produced. */
interface PeerOutput {
  runs: number[];
  warmupMs: number | null;
  peakRssMb: number;
  baseRssMb: number;
  versions: Record<string, string>;
  extra?: Record<string, unknown>;
}

async function runPeer(name: string, args: Record<string, unknown>): Promise<PeerOutput> {
  await DELTARS.ensure();
  return new Promise((resolve, reject) => {
    // The arguments go on stdin: 1,000 file paths are more than one argv string may hold.
    const child = spawn(DELTARS.python, [SCRIPT, name], {
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin.end(JSON.stringify(args));
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const line = stdout.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
      if (code === 0 && line !== undefined) {
        resolve(JSON.parse(line.slice("BENCH_RESULT ".length)) as PeerOutput);
      } else {
        reject(new Error(`deltars.py ${name} exited ${code}:\n${stderr.trim().slice(-3000)}`));
      }
    });
  });
}

function caseResult(
  name: string,
  rows: number,
  out: PeerOutput,
  ok: boolean,
  extra: Record<string, unknown> = {},
): CaseResult {
  return {
    case: name,
    rows,
    runs: out.runs,
    warmupMs: out.warmupMs ?? undefined,
    peakRssMb: out.peakRssMb,
    baseRssMb: out.baseRssMb,
    ok,
    notes: [],
    extra: { ...out.extra, ...extra, versions: out.versions },
  };
}

/** Where each delta-rs table of a bench run lives. */
const rsDir = (dir: string, name: string) => path.join(dir, "deltars", name);

/** The table directory a data file belongs to: the nearest parent holding `_delta_log/`. */
function tableRootOf(file: string): string {
  for (let d = path.dirname(file); d !== path.dirname(d); d = path.dirname(d)) {
    if (existsSync(path.join(d, "_delta_log"))) return d;
  }
  throw new Error(`no _delta_log above ${file}`);
}

/** The `KeyedChecks` select list over delta-rs's table, which DataFusion names `t`. */
const CHECKS_SQL = `SELECT ${keyedChecksSql()} FROM t`;
const onT = (sql: string) => sql.replace(TABLE, "t");
const keyedChecksFrom = (out: PeerOutput) => keyedChecksOf(out.extra?.checks as unknown[]);

const DAY_MS = 86_400_000;

/** A row of `SELECT *` (the five columns, dates as ISO text) as the other engines give it. */
function lookupRow(r: unknown[]): LookupRow {
  const [id, customer, amount, day, flag] = r;
  return {
    id: String(id),
    customer: customer as string | null,
    amount: amount as number | null,
    day: typeof day === "string" ? Date.parse(day) / DAY_MS : null,
    flag: flag as boolean | null,
  };
}

async function rsPrepare(dir: string): Promise<CaseResult> {
  const p = readPrepared(dir);
  const out = await runPeer("prepare-flat", {
    source: p.sourceParquet,
    table: rsDir(dir, "flat"),
  });
  return caseResult("rs-prepare", p.checks.count, out, true);
}

async function rsAppend(dir: string): Promise<CaseResult> {
  const p = readPrepared(dir);
  const out = await runPeer("append", { source: p.sourceParquet, table: rsDir(dir, "append") });
  const ok = sameChecks(out.extra?.checks as Prepared["checks"], p.checks);
  return caseResult("rs-append", p.checks.count, out, ok);
}

async function rsScan(dir: string): Promise<CaseResult> {
  const p = readPrepared(dir);
  const out = await runPeer("scan", { table: rsDir(dir, "flat") });
  const ok = sameChecks(out.extra?.checks as Prepared["checks"], p.checks);
  return caseResult("rs-scan", p.checks.count, out, ok);
}

/** Silt's prepared files, one delta-rs append each, checked against the oracle. */
async function prepareFrom(
  name: string,
  dir: string,
  table: string,
  files: { path: string; day?: string }[],
  physical: Record<string, string>,
  rows: number,
  opts: { partitioned?: boolean; siltTable?: string } = {},
): Promise<CaseResult> {
  const out = await runPeer("prepare-keyed", {
    table: rsDir(dir, table),
    files,
    physical,
    partitioned: opts.partitioned ?? false,
    siltTable: opts.siltTable,
    checksSql: CHECKS_SQL,
  });
  const ok =
    sameKeyed(
      keyedChecksFrom(out),
      expectKeyed(rows, () => 0),
    ) && out.extra?.files === files.length;
  return caseResult(name, rows, out, ok);
}

const rsPrepareKeyed = (dir: string) => {
  const p = readKeyed(dir);
  return prepareFrom(
    "rs-prepare-keyed",
    dir,
    "keyed",
    p.dataFiles.map((f) => ({ path: f })),
    p.physical,
    KEYED_ROWS,
    { siltTable: tableRootOf(p.dataFiles[0]) },
  );
};

const rsPrepareKeyedDay = (dir: string) => {
  const p = readDay(dir);
  return prepareFrom("rs-prepare-keyed-day", dir, "keyed-day", p.files, p.physical, KEYED_ROWS, {
    partitioned: true,
  });
};

const rsPrepareOptimize = (dir: string) => {
  const p = readOptimizePrepared(dir);
  return prepareFrom(
    "rs-prepare-optimize",
    dir,
    "optimize",
    p.dataFiles.map((f) => ({ path: f })),
    p.physical,
    OPTIMIZE_ROWS,
  );
};

async function rsLookup(dir: string): Promise<CaseResult> {
  const p = readKeyed(dir);
  const out = await runPeer("sql", { table: rsDir(dir, "keyed"), sql: onT(LOOKUP_SQL) });
  const answers = out.extra?.answers as unknown[][][];
  const ok = answers.every((a) => a.length === 1 && sameRow(lookupRow(a[0]), p.lookupExpected));
  return caseResult("rs-lookup", KEYED_ROWS, out, ok, { answers: undefined });
}

async function rsAggregate(dir: string, name: string): Promise<CaseResult> {
  const out = await runPeer("sql", { table: rsDir(dir, "keyed"), sql: onT(AGGREGATE_SQL[name]) });
  const answers = out.extra?.answers as unknown[][][];
  const rows = canonicalRows(answers[answers.length - 1]);
  // Whether these are the rows Silt and DuckDB gave is for bench/run.ts, which has all three.
  return caseResult(`rs-${name}`, KEYED_ROWS, out, rows.length > 0, { answers: undefined, rows });
}

/** Each change as delta-rs's API states it: the same predicate and assignments as the SQL. */
const RS_CHANGES: Record<string, Record<string, unknown>> = {
  "replace-day": { kind: "replace", predicate: "day = '2024-02-12'" },
  "replace-day-unpartitioned": { kind: "replace", predicate: "day = '2024-02-12'" },
  delete: { kind: "delete", predicate: "id % 1000 = 7" },
  update: {
    kind: "update",
    predicate: "id % 100 = 42",
    updates: { customer: "'updated'", amount: "amount * 2" },
  },
  merge: { kind: "merge", predicate: "t.id = s.id" },
};

/** The statement's own counts, where delta-rs reports them (a predicate overwrite reports none). */
function rsCounts(name: string, metrics: Record<string, number>): boolean {
  switch (name) {
    case "delete":
      return metrics.num_deleted_rows === KEYED_ROWS / 1000;
    case "update":
      return metrics.num_updated_rows === KEYED_ROWS / 100;
    case "merge":
      return (
        metrics.num_target_rows_updated === 50_000 && metrics.num_target_rows_inserted === 50_000
      );
    default:
      return true;
  }
}

async function rsChange(dir: string, name: string): Promise<CaseResult> {
  const change = CHANGES.find((c) => c.name === name);
  if (change === undefined) throw new Error(`no change ${name}`);
  const out = await runPeer("change", {
    ...RS_CHANGES[name],
    table: rsDir(dir, name === "replace-day" ? "keyed-day" : "keyed"),
    work: rsDir(dir, `run-${name}`),
    source: name === "merge" ? mergeSourceParquet(dir) : newDayParquet(dir),
    checksSql: CHECKS_SQL,
  });
  const x = out.extra as {
    metrics: Record<string, number>[];
    bytesRead: number;
    bytesWritten: number;
    logBytesWritten: number;
  };
  const expected = change.expected();
  const actual: KeyedChecks = keyedChecksFrom(out);
  const countsOk = x.metrics.every((m) => rsCounts(name, m));
  const extra: ChangeExtra = {
    bytesRead: x.bytesRead,
    bytesWritten: x.bytesWritten,
    logBytesWritten: x.logBytesWritten,
    metrics: Object.fromEntries(
      Object.entries(x.metrics[x.metrics.length - 1] ?? {}).map(([k, v]) => [k, String(v)]),
    ),
    peakRssAfterRunsMb: out.peakRssMb,
    expected,
    actual,
    countsOk,
    checkMs: 0,
    sql: JSON.stringify(RS_CHANGES[name]),
  };
  const ok = countsOk && sameKeyed(actual, expected);
  return caseResult(`rs-${name}`, KEYED_ROWS, out, ok, { ...extra });
}

async function rsOptimize(dir: string, zorder: boolean): Promise<CaseResult> {
  const p = readOptimizePrepared(dir);
  const name = zorder ? "rs-optimize" : "rs-compact";
  const out = await runPeer("optimize", {
    table: rsDir(dir, "optimize"),
    work: rsDir(dir, `run-${name}`),
    zorder: zorder ? ["id", "customer"] : null,
    targetSize: OPTIMIZE_TARGET_FILE_SIZE,
    checksSql: CHECKS_SQL,
    pointSql: { id: onT(POINT_ID_SQL), customer: onT(POINT_CUSTOMER_SQL) },
  });
  const x = out.extra as { pointRows: { id: number; customer: number } };
  const ok =
    sameKeyed(
      keyedChecksFrom(out),
      expectKeyed(OPTIMIZE_ROWS, () => 0),
    ) &&
    x.pointRows.id === 1 &&
    x.pointRows.customer === p.expectedCustomerRows;
  return caseResult(name, OPTIMIZE_ROWS, out, ok);
}

/**
 * The snapshot logs of bench/case.ts, rebuilt by delta-rs (it cannot read Silt's): the same
 * versions, one one-row file per commit, and for the checkpointed ones a checkpoint at the last
 * multiple of 10 (where Silt's latest checkpoint is), written by delta-rs.
 */
const RS_SNAPSHOTS: Record<string, { commits: number; checkpointAt?: number }> = {
  "rs-snapshot": { commits: SNAPSHOT_COMMITS },
  ...Object.fromEntries(
    Object.entries(CHECKPOINTED_LOGS).map(([silt, commits]) => [
      silt.replace(/^silt-/, "rs-"),
      { commits, checkpointAt: Math.floor((commits - 1) / 10) * 10 },
    ]),
  ),
};

async function rsSnapshot(dir: string, name: string): Promise<CaseResult> {
  const p = readPrepared(dir);
  const { commits, checkpointAt } = RS_SNAPSHOTS[name];
  const out = await runPeer("snapshot", {
    source: p.sourceParquet,
    table: rsDir(dir, name),
    commits,
    checkpointAt: checkpointAt ?? null,
  });
  const x = out.extra as { version: number; files: number; checkpoints: string[] };
  const checkpointed = checkpointAt === undefined ? [] : [checkpointAt];
  const ok =
    x.version === commits - 1 &&
    x.files === commits - 1 &&
    JSON.stringify(x.checkpoints.map((f) => Number(f.split(".")[0]))) ===
      JSON.stringify(checkpointed);
  return caseResult(name, commits, out, ok);
}

export const DELTARS_CASES: Record<string, (dir: string) => Promise<CaseResult>> = {
  "rs-prepare": rsPrepare,
  "rs-append": rsAppend,
  "rs-scan": rsScan,
  "rs-prepare-keyed": rsPrepareKeyed,
  "rs-prepare-keyed-day": rsPrepareKeyedDay,
  "rs-prepare-optimize": rsPrepareOptimize,
  "rs-lookup": rsLookup,
  ...Object.fromEntries(
    Object.keys(AGGREGATE_SQL).map((a) => [`rs-${a}`, (dir: string) => rsAggregate(dir, a)]),
  ),
  ...Object.fromEntries(
    CHANGES.map((c) => [`rs-${c.name}`, (dir: string) => rsChange(dir, c.name)]),
  ),
  "rs-optimize": (dir) => rsOptimize(dir, true),
  "rs-compact": (dir) => rsOptimize(dir, false),
  ...Object.fromEntries(
    Object.keys(RS_SNAPSHOTS).map((name) => [name, (dir: string) => rsSnapshot(dir, name)]),
  ),
};

/** Which of the other cases' outputs each `rs-*` case reads (bench/run.ts's NEEDS). */
export const DELTARS_NEEDS: Record<string, string[]> = {
  "rs-prepare": ["prepare"],
  "rs-append": ["prepare"],
  "rs-scan": ["prepare", "rs-prepare"],
  "rs-prepare-keyed": ["prepare-keyed"],
  "rs-prepare-keyed-day": ["prepare-keyed-day"],
  "rs-prepare-optimize": ["prepare-optimize"],
  "rs-lookup": ["prepare-keyed", "rs-prepare-keyed"],
  ...Object.fromEntries(
    Object.keys(AGGREGATE_SQL).map((a) => [`rs-${a}`, ["prepare-keyed", "rs-prepare-keyed"]]),
  ),
  ...Object.fromEntries(
    CHANGES.map((c) => [
      `rs-${c.name}`,
      c.name === "replace-day"
        ? ["prepare-keyed", "prepare-keyed-day", "rs-prepare-keyed-day"]
        : ["prepare-keyed", "rs-prepare-keyed"],
    ]),
  ),
  "rs-optimize": ["prepare-optimize", "rs-prepare-optimize"],
  "rs-compact": ["prepare-optimize", "rs-prepare-optimize"],
  ...Object.fromEntries(Object.keys(RS_SNAPSHOTS).map((name) => [name, ["prepare"]])),
};
