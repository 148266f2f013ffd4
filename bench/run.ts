/**
 * `npm run bench`: runs every case of bench/case.ts in its own child process, prints one table
 * with DuckDB alongside, and writes the raw figures to .bench/results.json. Benchmarks inform;
 * nothing here fails on a slow number (DESIGN §8).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AGGREGATE_SQL } from "./aggregate.ts";
import type { CaseResult } from "./common.ts";
import { DELTARS, DELTARS_NEEDS } from "./deltars.ts";
import type { ChangeExtra } from "./keyed.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CASE_SCRIPT = fileURLToPath(new URL("./case.ts", import.meta.url));

/** The row-level change cases, each run as `silt-<name>` and `duck-<name>`. */
const CHANGE_NAMES = [
  "replace-day",
  "replace-day-unpartitioned",
  "delete",
  "update",
  "merge",
] as const;

/** Which prepare step each case reads the output of. */
/** Node flags of a case's process beyond the defaults. */
const NODE_FLAGS: Record<string, string[]> = {
  "silt-checkpoint-1m-heap256": ["--max-old-space-size=256"],
};

const NEEDS: Record<string, string[]> = {
  "silt-checkpoint-1m": ["prepare-checkpoint-1m"],
  "silt-checkpoint-1m-heap256": ["prepare-checkpoint-1m"],
  "silt-snapshot-1m": ["prepare-checkpoint-1m", "silt-checkpoint-1m"],
  "silt-optimize": ["prepare-optimize"],
  "silt-compact": ["prepare-optimize"],
  "duck-optimize": ["prepare-optimize"],
  "duck-append": ["prepare"],
  "silt-scan": ["prepare"],
  "duck-scan": ["prepare"],
  "silt-lookup": ["prepare-keyed"],
  "duck-lookup": ["prepare-keyed"],
  ...Object.fromEntries(
    Object.keys(AGGREGATE_SQL).flatMap((a) => [
      [`silt-${a}`, ["prepare-keyed"]],
      [`duck-${a}`, ["prepare-keyed"]],
    ]),
  ),
  ...Object.fromEntries(
    CHANGE_NAMES.flatMap((c) => {
      const needs =
        c === "replace-day" ? ["prepare-keyed", "prepare-keyed-day"] : ["prepare-keyed"];
      return [
        [`silt-${c}`, needs],
        [`duck-${c}`, needs],
      ];
    }),
  ),
  ...DELTARS_NEEDS,
};

interface CaseOutcome {
  result?: CaseResult;
  error?: string;
  /** Why a peer's case did not run (its engine is not installed): n/a, not a failure. */
  unavailable?: string;
  wallMs: number;
}

function runCase(name: string, dir: string): Promise<CaseOutcome> {
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", ...(NODE_FLAGS[name] ?? []), "--import", "tsx", CASE_SCRIPT, name, dir],
      {
        cwd: REPO,
        // The SDK's Node 20 deprecation notice would land in the middle of the table.
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.on("close", (code) => {
      const wallMs = performance.now() - start;
      const line = stdout.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
      if (code === 0 && line !== undefined) {
        resolve({ result: JSON.parse(line.slice("BENCH_RESULT ".length)) as CaseResult, wallMs });
      } else {
        resolve({
          error: `exit ${code}: ${stderr.trim().split("\n").slice(-15).join("\n")}`,
          wallMs,
        });
      }
    });
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Nearest-rank percentile: a value that actually occurred. */
const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

const fmtMs = (ms: number | undefined): string => (ms === undefined ? "n/a" : ms.toFixed(1));
const fmtInt = (n: number): string => Math.round(n).toLocaleString("en-US");
const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || b <= 0 ? undefined : a / b;
const fmtRatio = (x: number | undefined): string => (x === undefined ? "n/a" : `${x.toFixed(2)}x`);

interface Row {
  operation: string;
  rows: string;
  medianMs?: number;
  rowsPerSec?: number;
  peakRssMb?: number;
  duckMedianMs?: number;
  /** delta-rs on the same rows (`rs-*` cases), where it has the operation. */
  rsMedianMs?: number;
  target: string;
  status: string;
}

/** Columns in `numeric` are right-aligned. */
function printGrid(header: string[], cells: string[][], numeric: Set<number>): void {
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    `| ${c.map((v, i) => (numeric.has(i) ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join(" | ")} |`;
  console.log(line(header));
  console.log(
    `|${widths.map((w, i) => (numeric.has(i) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`,
  );
  for (const c of cells) console.log(line(c));
}

function printTable(rows: Row[]): void {
  const header = [
    "operation",
    "rows",
    "median ms",
    "rows/s",
    "peak RSS MB",
    "DuckDB median ms",
    "ratio (silt/duckdb)",
    "delta-rs median ms",
    "ratio silt/delta-rs",
    "target",
  ];
  const cells = rows.map((r) => [
    r.operation,
    r.rows,
    fmtMs(r.medianMs),
    r.rowsPerSec === undefined ? "n/a" : fmtInt(r.rowsPerSec),
    r.peakRssMb === undefined ? "n/a" : r.peakRssMb.toFixed(0),
    fmtMs(r.duckMedianMs),
    fmtRatio(ratio(r.medianMs, r.duckMedianMs)),
    fmtMs(r.rsMedianMs),
    fmtRatio(ratio(r.medianMs, r.rsMedianMs)),
    `${r.target} ${r.status}`.trim(),
  ]);
  printGrid(header, cells, new Set([1, 2, 3, 4, 5, 6, 7, 8]));
}

interface IoRow {
  operation: string;
  silt?: ChangeExtra;
  duck?: ChangeExtra;
  duckPeakRssMb?: number;
  rs?: ChangeExtra;
  rsPeakRssMb?: number;
}

const fmtMB = (bytes: number | undefined, digits = 1): string =>
  bytes === undefined ? "n/a" : (bytes / 1e6).toFixed(digits);

function printIoTable(rows: IoRow[]): void {
  const header = [
    "change (10M-row table)",
    "Silt read MB",
    "Silt written MB",
    "of which log r/w MB",
    "DuckDB read MB",
    "DuckDB written MB",
    "written silt/duckdb",
    "DuckDB peak RSS MB",
    "delta-rs read MB",
    "delta-rs written MB",
    "delta-rs peak RSS MB",
  ];
  const cells = rows.map((r) => [
    r.operation,
    fmtMB(r.silt?.bytesRead),
    fmtMB(r.silt?.bytesWritten, 2),
    r.silt ? `${fmtMB(r.silt.logBytesRead, 2)} / ${fmtMB(r.silt.logBytesWritten, 2)}` : "n/a",
    fmtMB(r.duck?.bytesRead),
    fmtMB(r.duck?.bytesWritten, 2),
    r.silt && r.duck && r.duck.bytesWritten > 0
      ? `${((100 * r.silt.bytesWritten) / r.duck.bytesWritten).toFixed(2)}%`
      : "n/a",
    r.duckPeakRssMb === undefined ? "n/a" : r.duckPeakRssMb.toFixed(0),
    fmtMB(r.rs?.bytesRead),
    fmtMB(r.rs?.bytesWritten, 2),
    r.rsPeakRssMb === undefined ? "n/a" : r.rsPeakRssMb.toFixed(0),
  ]);
  printGrid(header, cells, new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
}

/** "met" / "MISSED" against time and memory targets; "?" when a figure is missing. */
function verdict(ms: number | undefined, msTarget: number, rss?: number, rssTarget?: number) {
  if (ms === undefined) return "?";
  const timeOk = ms <= msTarget;
  const rssOk = rssTarget === undefined || (rss !== undefined && rss <= rssTarget);
  return timeOk && rssOk ? "met" : "MISSED";
}

function lookupNotes(build: CaseResult | undefined, run: CaseResult | undefined): string {
  const x = build?.extra as { buildMs: number; appendMs: number[]; bytes: number } | undefined;
  const built = x
    ? `table (the keyed 10M-row table the changes copy) built untimed by 100 appendRows of 100k rows in ${(x.buildMs / 1000).toFixed(1)} s (append ${x.appendMs[0].toFixed(0)} ms first, ${median(x.appendMs).toFixed(0)} median, ${x.appendMs[x.appendMs.length - 1].toFixed(0)} last; ${(x.bytes / 1e6).toFixed(0)} MB of Parquet)`
    : "table build n/a";
  if (!run) return `lookup: n/a; ${built}.`;
  const e = run.extra ?? {};
  return [
    `lookup: SELECT * ... WHERE id = <id in file 42> through parseStatement + runQuery, each run a fresh`,
    `  parse, table open (101-commit log replay) and read, in one process: ${run.runs.map((v) => v.toFixed(0)).join(" / ")} ms (warm-up ${fmtMs(run.warmupMs)});`,
    `  files opened per run ${String(e.filesReadPerRun)}, row groups read ${String(e.rowGroupsRead)}, skipped ${String(e.rowGroupsSkipped)}; base RSS ${run.baseRssMb} MB;`,
    `  ${built}.`,
  ].join("\n");
}

interface ColdStartExtra {
  runtimeMs: number[];
  loadMs: number[];
  firstMs: number[];
  warmMs: number[];
  bundleBytes: number;
  wasmBytes: number;
}

/** The insert function's first request in a fresh process, and the same request warm. */
/** Issue 11: an engine's commit through the UC Delta API and its load-table, p50 and p95. */
function ucCommitRows(run: CaseResult | undefined, status: string): Row[] {
  const loads = (run?.extra?.loadMs as number[] | undefined) ?? [];
  const row = (operation: string, ms: number | undefined): Row => ({
    operation,
    rows: "1",
    medianMs: ms,
    rowsPerSec: ms === undefined || ms <= 0 ? undefined : 1000 / ms,
    peakRssMb: run?.peakRssMb,
    target: "",
    status,
  });
  return [
    row("UC Delta API commit p50 (add-commit x200)", run ? percentile(run.runs, 50) : undefined),
    row("UC Delta API commit p95 (add-commit x200)", run ? percentile(run.runs, 95) : undefined),
    row("UC Delta API load table p50 (x200)", loads.length ? percentile(loads, 50) : undefined),
    row("UC Delta API load table p95 (x200)", loads.length ? percentile(loads, 95) : undefined),
  ];
}

function coldStartRows(run: CaseResult | undefined): Row[] {
  const x = run?.extra as ColdStartExtra | undefined;
  const status = run === undefined ? "?" : run.ok ? "" : " CHECKS FAILED";
  return [
    {
      operation: "cold start: insert function bundle, new process to first answer (1,000 rows)",
      rows: "1,000",
      medianMs: run && run.runs.length > 0 ? median(run.runs) : undefined,
      peakRssMb: undefined,
      target: "",
      status,
    },
    {
      operation: "warm request: the same insert, same process",
      rows: "1,000",
      medianMs: x ? median(x.warmMs) : undefined,
      peakRssMb: undefined,
      target: "",
      status,
    },
  ];
}

function coldStartNotes(run: CaseResult | undefined): string {
  const x = run?.extra as ColdStartExtra | undefined;
  if (!run || !x) return "cold start: n/a";
  const ms = (a: number[]) => a.map((v) => v.toFixed(0)).join(" / ");
  return [
    `cold start: functions/insert.ts bundled as the stack bundles it (esbuild ESM, minified, ${(x.bundleBytes / 1e6).toFixed(1)} MB + ${(x.wasmBytes / 1e6).toFixed(1)} MB of parquet-wasm),`,
    `  a fresh node process per run loads it and serves POST …/insert of ${run.rows} rows against s3rver + dynalite (the functions' test stand-ins), then serves it again warm.`,
    `  new process to first answer ${ms(run.runs)} ms; of which loading the bundle ${ms(x.loadMs)} ms and the first request ${ms(x.firstMs)} ms`,
    `  (wasm compile, SDK clients, catalog lookup, log replay, Parquet write, commit); a bare node start takes ${ms(x.runtimeMs)} ms; warm request ${ms(x.warmMs)} ms.`,
  ].join("\n");
}

const CHANGE_LABELS: Record<(typeof CHANGE_NAMES)[number], string> = {
  "replace-day": "REPLACE WHERE 1 of 100 days, partitioned by day",
  "replace-day-unpartitioned": "REPLACE WHERE 1 of 100 days, unpartitioned",
  delete: "DELETE 0.1% (10,000 rows, every file)",
  update: "UPDATE 1% (100,000 rows, every file)",
  merge: "MERGE 100k-row source (50k match, 50k new)",
};

/** What DuckDB does for each change, for the notes. */
const DUCK_CHANGES: Record<(typeof CHANGE_NAMES)[number], string> = {
  "replace-day":
    "writes the day's partition anew, COPY (SELECT id, customer, amount, flag FROM read_parquet(<new rows>)) TO <day file>; the old day file is dropped from the table",
  "replace-day-unpartitioned":
    "COPY (SELECT * FROM read_parquet([<100 files>]) WHERE (day = DATE'2024-02-12') IS NOT TRUE UNION ALL SELECT * FROM read_parquet(<new rows>)) TO <file>",
  delete:
    "COPY (SELECT * FROM read_parquet([<100 files>]) WHERE (id % 1000 = 7) IS NOT TRUE) TO <file>",
  update:
    "COPY (SELECT id, CASE WHEN id % 100 = 42 THEN 'updated' ELSE customer END, CASE ... amount * 2 ..., day, flag FROM read_parquet([<100 files>])) TO <file>",
  merge:
    "COPY (SELECT coalesce(s.id, t.id), <s.col when s.id is not null else t.col> ... FROM read_parquet([<100 files>]) t FULL OUTER JOIN read_parquet(<source>) s ON t.id = s.id) TO <file>",
};

const prepareOf = (c: (typeof CHANGE_NAMES)[number]) =>
  c === "replace-day" ? "prepare-keyed-day" : "prepare-keyed";

/** Silt's history metrics worth reading in the notes, in this order when present. */
const METRIC_KEYS = [
  "numDeletedRows",
  "numUpdatedRows",
  "numTargetRowsUpdated",
  "numTargetRowsInserted",
  "numOutputRows",
  "numRemovedFiles",
  "numTargetFilesRemoved",
  "numDeletionVectorsAdded",
  "numTargetDeletionVectorsAdded",
  "numFiles",
  "numAddedFiles",
  "numTargetFilesAdded",
  "scanTimeMs",
  "rewriteTimeMs",
];

function changeNotes(
  r: (name: string) => CaseResult | undefined,
  runsOf: (name: string) => string,
): string[] {
  const out = [
    "changes: 10M-row tables built untimed once per bench run (prepare-keyed: 100 files by id range,",
    "  days mixed; prepare-keyed-day: the same rows, one file per day); every Silt run, warm-up",
    "  included, starts from a fresh copy of the prepared directory (object store + dynalite),",
    "  reopened, and runs the statement through executeSql; bytes are what went through the object",
    "  store (get/getRange/getSuffix in, put/putIfAbsent out). DuckDB reads Silt's data files in",
    "  place and writes one zstd Parquet file (row groups of 131,072); its bytes read are the sizes",
    "  of the files the statement reads, its bytes written the output's size.",
  ];
  for (const c of CHANGE_NAMES) {
    const silt = r(`silt-${c}`);
    const x = silt?.extra as ChangeExtra | undefined;
    const metrics = x?.metrics ?? {};
    const shown = METRIC_KEYS.filter((k) => metrics[k] !== undefined && metrics[k] !== null)
      .map((k) => `${k} ${metrics[k]}`)
      .join(", ");
    out.push(
      `${c}: ${x?.sql ?? "n/a"}`,
      `  Silt ${runsOf(`silt-${c}`)}; base RSS ${silt?.baseRssMb ?? "?"} MB; ${shown || "metrics n/a"}${silt?.notes.length ? `; ${silt.notes.join(", ")}` : ""}.`,
      `  DuckDB ${DUCK_CHANGES[c]}: ${runsOf(`duck-${c}`)}.`,
    );
  }
  return out;
}

function checkpointedSnapshotNotes(run: CaseResult | undefined, runs: string): string {
  const e = run?.extra as
    | {
        checkpointVersion?: number;
        buildMs: number;
        checkpoints: { version: number; ms: number }[];
        io?: { bytesRead: number; gets: number };
      }
    | undefined;
  if (!run || !e) return "checkpointed snapshot: n/a";
  const last = run.rows - 1;
  const cps = e.checkpoints;
  const cpMs = cps.map((c) => c.ms);
  return [
    `snapshot, ${fmtInt(run.rows)} versions, checkpointed: loadSnapshot(store, tableRoot) on versions 0..${fmtInt(last)} (${fmtInt(last)} live files): ${runs};`,
    `  read from checkpoint ${e.checkpointVersion ?? "none"} + the commits after it, ${e.io?.gets ?? "?"} gets, ${fmtMB(e.io?.bytesRead, 2)} MB; base RSS ${run.baseRssMb} MB (the build's peak: ${run.peakRssMb} MB).`,
    `  Log written directly in ${(e.buildMs / 1000).toFixed(1)} s; autoCheckpoint ran after each of versions ${fmtInt(Math.max(2, run.rows - 100))}..${fmtInt(last)}${run.rows > 100 ? " only (every crossing of all 10,000 took 340 s when tried)" : ""},`,
    `  writing ${cps.length} checkpoint${cps.length === 1 ? "" : "s"} (${cps.map((c) => c.version).join(", ")}): ${cps.length > 0 ? `first ${cpMs[0].toFixed(0)} ms (from the JSON log)${cps.length > 1 ? `, then median ${median(cpMs.slice(1)).toFixed(0)} ms each` : ""}` : "none"}.`,
  ].join("\n");
}

function checkpoint1mNotes(
  build: CaseResult | undefined,
  write: CaseResult | undefined,
  capped: CaseResult | undefined,
  load: CaseResult | undefined,
): string {
  const p = build?.extra as
    | { buildMs: number; baseMs: number; baseSidecars: number; baseBytes: number }
    | undefined;
  const w = write?.extra as
    | { sidecars: number; sizeInBytes: number; io: { bytesRead: number; bytesWritten: number } }
    | undefined;
  const l = load?.extra as { io: { bytesRead: number; gets: number } } | undefined;
  return [
    "checkpoint 1M: a partitioned (day) table whose version 20 has 1,000,000 live adds (stats, partition values,",
    "  row ids) and 1,000 tombstones: a V2 checkpoint at 10 with 990,000 adds (written by the checkpoint writer",
    `  from a generator${p ? ` in ${(p.baseMs / 1000).toFixed(1)} s, ${p.baseSidecars} sidecars, ${fmtMB(p.baseBytes)} MB` : ""}; versions 0..9 deleted, as log cleanup would),`,
    "  then versions 11..20 written as JSON, each adding 1,100 files and removing 100 of the base's.",
    `  Write: autoCheckpoint of version 20 (streams the base's sidecars and the 10 commits), one unwarmed run: ${write ? `${write.runs[0]?.toFixed(0)} ms` : "n/a"};`,
    `  ${w ? `${w.sidecars} sidecars, ${fmtMB(w.sizeInBytes)} MB written, ${fmtMB(w.io.bytesRead)} MB read` : "n/a"}; peak RSS ${write?.peakRssMb ?? "?"} MB (base ${write?.baseRssMb ?? "?"} MB) with V8's default heap limit;`,
    `  the same write with V8's heap capped at 256 MB (--max-old-space-size=256): ${capped ? `${capped.runs[0]?.toFixed(0)} ms, peak RSS ${capped.peakRssMb} MB` : "n/a"};`,
    "  it can only finish because what stays alive is one sidecar's worth (50,000 actions), not the table.",
    `  Load: loadSnapshot from that checkpoint, one unwarmed run: ${load ? `${load.runs[0]?.toFixed(0)} ms` : "n/a"}, ${l?.io.gets ?? "?"} gets, ${fmtMB(l?.io.bytesRead)} MB;`,
    `  peak RSS ${load?.peakRssMb ?? "?"} MB (a Snapshot holds every add as a JS object: ~0.9 GB live at 1M files).`,
  ].join("\n");
}

interface OptimizeExtra {
  sql: string;
  filesBefore: number;
  filesAfter: number;
  bytesAfter: number;
  metrics?: Record<string, string | null>;
  before: Record<"id" | "customer", { filesRead: number; rowGroupsRead: number }>;
  after: Record<"id" | "customer", { filesRead: number; rowGroupsRead: number }>;
  expectedCustomerRows: number;
}

function optimizeNotes(
  build: CaseResult | undefined,
  silt: CaseResult | undefined,
  duck: CaseResult | undefined,
  runsOf: (name: string) => string,
): string {
  const b = build?.extra as { buildMs: number; bytes: number } | undefined;
  const e = silt?.extra as OptimizeExtra | undefined;
  const q = (x: { filesRead: number; rowGroupsRead: number } | undefined) =>
    x ? `${x.filesRead} files / ${x.rowGroupsRead} row groups` : "n/a";
  return [
    `optimize: ${e?.sql ?? "n/a"} on 1,000 files of 10,000 keyed rows (file f = ids f, f+1000, …;`,
    `  ${b ? `${fmtMB(b.bytes)} MB of Parquet, written untimed by writeDataFiles + 10 commits of 100 files in ${(b.buildMs / 1000).toFixed(1)} s` : "build n/a"}), delta.targetFileSize 16 MiB;`,
    `  Silt, one unwarmed run on a fresh copy: ${silt ? `${silt.runs[0]?.toFixed(0)} ms` : "n/a"}, peak RSS ${silt?.peakRssMb ?? "?"} MB (base ${silt?.baseRssMb ?? "?"} MB);`,
    `  files ${e?.filesBefore ?? "?"} -> ${e?.filesAfter ?? "?"} (${fmtMB(e?.bytesAfter)} MB); zOrderStats etc. in the commit: numAddedFiles ${e?.metrics?.numAddedFiles ?? "?"}, p50FileSize ${e?.metrics?.p50FileSize ?? "?"}.`,
    `  Point queries (SELECT * ... WHERE col = literal through runQuery), before -> after OPTIMIZE:`,
    `  id = 4242424: ${q(e?.before.id)} -> ${q(e?.after.id)}; customer = 'customer_12345' (${e?.expectedCustomerRows ?? "?"} rows): ${q(e?.before.customer)} -> ${q(e?.after.customer)}.`,
    `  DuckDB: COPY (SELECT * FROM read_parquet([<the 1,000 files>]) ORDER BY id, customer) TO <one zstd file>: ${runsOf("duck-optimize")};`,
    `  peak RSS ${duck?.peakRssMb ?? "?"} MB. A sort by (id, customer) is a weaker layout than Z-order: ids are unique, so the file`,
    "  is clustered on id alone and a customer lookup prunes nothing; Z-order keeps both columns' ranges narrow per file.",
  ].join("\n");
}

const isPeerCase = (name: string): boolean => name.startsWith("rs-");

/** What delta-rs ran, each case's runs and peak RSS, and whether it reads Silt's own tables. */
function deltaRsNotes(
  outcomes: Record<string, CaseOutcome>,
  runsOf: (name: string) => string,
): string {
  const names = Object.keys(outcomes).filter(isPeerCase);
  if (names.length === 0) return "delta-rs: not run.";
  const unavailable = names.map((n) => outcomes[n].unavailable).find((u) => u !== undefined);
  if (unavailable !== undefined) {
    return `delta-rs: unavailable, its cases show n/a: ${unavailable.split("\n")[0]}`;
  }
  const any = names.map((n) => outcomes[n].result).find((x) => x !== undefined);
  const versions = any?.extra?.versions as Record<string, string> | undefined;
  const silt = outcomes["rs-prepare-keyed"]?.result?.extra?.readsSiltTable as
    | { ok: boolean; error: string | null }
    | undefined;
  const built = (name: string) => {
    const x = outcomes[name]?.result?.extra as { buildMs?: number } | undefined;
    return x?.buildMs === undefined ? "n/a" : `${(x.buildMs / 1000).toFixed(1)} s`;
  };
  return [
    `delta-rs: deltalake ${versions?.deltalake ?? "?"}, pyarrow ${versions?.pyarrow ?? "?"}, one python process per case`,
    "  (bench/deltars.py: 1 warm-up + 3 runs, gc.collect() before each, peak RSS = ru_maxrss); zstd, 131,072-row groups;",
    "  SQL through deltalake.QueryBuilder (delta-rs's DataFusion), the table reopened every run.",
    `  Reads Silt's table: ${silt === undefined ? "not tried" : silt.ok ? "yes" : `no (${silt.error?.split("\n")[0]})`};`,
    `  so its tables are its own, copied file by file from Silt's prepared data files: keyed ${built("rs-prepare-keyed")},`,
    `  by day ${built("rs-prepare-keyed-day")}, 1,000 small files ${built("rs-prepare-optimize")}; snapshot logs written as Silt's are.`,
    ...names
      .filter((n) => !n.startsWith("rs-prepare"))
      .map(
        (n) =>
          `  ${n}: ${runsOf(n)}; peak RSS ${outcomes[n].result?.peakRssMb ?? "?"} MB${outcomes[n].error ? " FAILED" : ""}.`,
      ),
  ].join("\n");
}
/** The delta-rs case measuring what a Silt case does. */
const peerOf = (silt: string): string => silt.replace(/^silt-/, "rs-");

/** Undefined when delta-rs's venv is ready (installing it if need be), else why it is not. */
async function deltaRsMissing(): Promise<string | undefined> {
  process.stdout.write("  delta-rs peer (venv) ... ");
  try {
    const ms = await DELTARS.ensure();
    console.log(ms > 0 ? `installed in ${(ms / 1000).toFixed(1)} s` : "ready");
    return undefined;
  } catch (e) {
    const why = (e as Error).message;
    console.log(`unavailable; its cases show n/a:\n${why.replace(/^/gm, "    ")}`);
    return why;
  }
}

/**
 * `SILT_BENCH_ONLY=a,b` runs cases a and b and the prepare steps they need (NEEDS), in the usual
 * order; unset, every case runs.
 */
function selected(all: string[], only: string | undefined): string[] {
  if (only === undefined || only.trim() === "") return all;
  const wanted = new Set<string>();
  const add = (name: string) => {
    if (!all.includes(name)) {
      throw new Error(`SILT_BENCH_ONLY: no case ${name}; the cases are ${all.join(", ")}`);
    }
    if (wanted.has(name)) return;
    wanted.add(name);
    for (const need of NEEDS[name] ?? []) add(need);
  };
  for (const name of only.split(",")) add(name.trim());
  return all.filter((name) => wanted.has(name));
}

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), "silt-bench-"));
  const all = [
    "prepare",
    "silt-append",
    "duck-append",
    "rs-append",
    "rs-prepare",
    "silt-scan",
    "duck-scan",
    "rs-scan",
    "silt-commits",
    "silt-uc-commits",
    "silt-cold-start",
    "silt-snapshot",
    "rs-snapshot",
    "silt-snapshot-10-checkpointed",
    "rs-snapshot-10-checkpointed",
    "silt-snapshot-1k-checkpointed",
    "rs-snapshot-1k-checkpointed",
    "silt-snapshot-10k",
    "rs-snapshot-10k",
    "prepare-checkpoint-1m",
    "silt-checkpoint-1m-heap256",
    "silt-checkpoint-1m",
    "silt-snapshot-1m",
    "prepare-keyed",
    "rs-prepare-keyed",
    "silt-lookup",
    "duck-lookup",
    "rs-lookup",
    ...Object.keys(AGGREGATE_SQL).flatMap((a) => [`silt-${a}`, `duck-${a}`, `rs-${a}`]),
    "prepare-keyed-day",
    "rs-prepare-keyed-day",
    ...CHANGE_NAMES.flatMap((c) => [`silt-${c}`, `duck-${c}`, `rs-${c}`]),
    "prepare-optimize",
    "rs-prepare-optimize",
    "silt-optimize",
    "duck-optimize",
    "rs-optimize",
    "silt-compact",
    "rs-compact",
  ];
  const order = selected(all, process.env.SILT_BENCH_ONLY);
  const outcomes: Record<string, CaseOutcome> = {};
  const load = os.loadavg();
  console.log(
    `Silt bench: node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load avg ${load.map((l) => l.toFixed(2)).join(" ")}`,
  );
  // Installed once, before any case: a first install takes a minute and must time nothing.
  const rsMissing = order.some(isPeerCase) ? await deltaRsMissing() : undefined;
  try {
    for (const name of order) {
      process.stdout.write(`  ${name} ... `);
      if (rsMissing !== undefined && isPeerCase(name)) {
        outcomes[name] = { unavailable: rsMissing, wallMs: 0 };
        console.log("n/a (delta-rs unavailable)");
        continue;
      }
      // A case whose prepare step failed can only fail too; the others still run.
      const missing = (NEEDS[name] ?? []).find((p) => outcomes[p]?.error !== undefined);
      const o: CaseOutcome =
        missing === undefined
          ? await runCase(name, dir)
          : { error: `skipped: ${missing} failed`, wallMs: 0 };
      outcomes[name] = o;
      console.log(o.error === undefined ? `${(o.wallMs / 1000).toFixed(1)} s` : "FAILED");
      if (o.error !== undefined) console.log(o.error.replace(/^/gm, "    "));
    }
  } finally {
    if (process.env.SILT_BENCH_KEEP !== "1") rmSync(dir, { recursive: true, force: true });
  }

  const r = (name: string) => outcomes[name]?.result;
  const med = (name: string) => {
    const x = r(name);
    return x && x.runs.length > 0 ? median(x.runs) : undefined;
  };
  const perSec = (n: number, ms: number | undefined) =>
    ms === undefined || ms <= 0 ? undefined : (n * 1000) / ms;
  const flag = (...names: string[]) =>
    names.some((n) => r(n) !== undefined && !r(n)!.ok) ? " CHECKS FAILED" : "";

  const append = med("silt-append");
  const scan = med("silt-scan");
  const commits = r("silt-commits");
  const p50 = commits ? percentile(commits.runs, 50) : undefined;
  const p95 = commits ? percentile(commits.runs, 95) : undefined;
  const snap = med("silt-snapshot");
  const N = r("silt-append")?.rows ?? 1_000_000;
  const lookup = med("silt-lookup");
  const filesOpened = r("silt-lookup")?.extra?.filesRead as number | undefined;
  const lookupRows = r("prepare-keyed")?.rows ?? 10_000_000;
  const snap10k = med("silt-snapshot-10k");
  const checkpointRss = r("silt-checkpoint-1m")?.peakRssMb;
  const optimized = r("silt-optimize")?.extra as OptimizeExtra | undefined;
  const compacted = r("silt-compact")?.extra as OptimizeExtra | undefined;
  const changeExtra = (name: string) => r(name)?.extra as ChangeExtra | undefined;

  const rows: Row[] = [
    {
      operation: "append 1M rows (appendRows)",
      rows: fmtInt(N),
      medianMs: append,
      rowsPerSec: perSec(N, append),
      peakRssMb: r("silt-append")?.peakRssMb,
      duckMedianMs: med("duck-append"),
      rsMedianMs: med("rs-append"),
      target: "[<=500 ms, <=500 MB]",
      status:
        verdict(append, 500, r("silt-append")?.peakRssMb, 500) +
        flag("silt-append", "duck-append", "rs-append"),
    },
    {
      operation: "full scan 1M rows (scanTable)",
      rows: fmtInt(N),
      medianMs: scan,
      rowsPerSec: perSec(N, scan),
      peakRssMb: r("silt-scan")?.peakRssMb,
      duckMedianMs: med("duck-scan"),
      rsMedianMs: med("rs-scan"),
      target: "[<=250 ms, <=500 MB]",
      status:
        verdict(scan, 250, r("silt-scan")?.peakRssMb, 500) +
        flag("silt-scan", "duck-scan", "rs-scan"),
    },
    {
      operation: "commit latency p50 (1-row append x200)",
      rows: "1",
      medianMs: p50,
      rowsPerSec: perSec(1, p50),
      peakRssMb: commits?.peakRssMb,
      target: "",
      status: flag("silt-commits"),
    },
    {
      operation: "commit latency p95 (1-row append x200)",
      rows: "1",
      medianMs: p95,
      rowsPerSec: perSec(1, p95),
      peakRssMb: commits?.peakRssMb,
      target: "",
      status: flag("silt-commits"),
    },
    ...ucCommitRows(r("silt-uc-commits"), flag("silt-uc-commits")),
    {
      operation: "loadSnapshot, 1,000-commit log",
      rows: "1,000 commits",
      medianMs: snap,
      peakRssMb: r("silt-snapshot")?.peakRssMb,
      rsMedianMs: med("rs-snapshot"),
      target: "",
      status: flag("silt-snapshot", "rs-snapshot"),
    },
    {
      operation: `point lookup, 100 files (SQL; ${filesOpened ?? "?"} file${filesOpened === 1 ? "" : "s"} opened)`,
      rows: fmtInt(lookupRows),
      medianMs: lookup,
      peakRssMb: r("silt-lookup")?.peakRssMb,
      duckMedianMs: med("duck-lookup"),
      rsMedianMs: med("rs-lookup"),
      target: "[<=2 files opened]",
      status:
        (filesOpened === undefined ? "?" : filesOpened <= 2 ? "met" : "MISSED") +
        flag("prepare-keyed", "silt-lookup", "duck-lookup", "rs-prepare-keyed", "rs-lookup"),
    },
    ...(["silt-snapshot-10-checkpointed", "silt-snapshot-1k-checkpointed"] as const).map(
      (name): Row => ({
        operation:
          name === "silt-snapshot-10-checkpointed"
            ? "loadSnapshot, 10-commit log (v0..10), checkpointed"
            : "loadSnapshot, 1,000-commit log, checkpointed",
        rows: `${fmtInt(r(name)?.rows ?? 0)} versions`,
        medianMs: med(name),
        peakRssMb: r(name)?.peakRssMb,
        rsMedianMs: med(peerOf(name)),
        target: "",
        status: flag(name, peerOf(name)),
      }),
    ),
    {
      operation: "loadSnapshot, 10,000-commit log, checkpointed",
      rows: "10,000 commits",
      medianMs: snap10k,
      peakRssMb: r("silt-snapshot-10k")?.peakRssMb,
      rsMedianMs: med("rs-snapshot-10k"),
      target: "[<1000 ms]",
      status:
        (snap10k === undefined ? "?" : snap10k < 1000 ? "met" : "MISSED") +
        flag("silt-snapshot-10k", "rs-snapshot-10k"),
    },
    {
      operation: "checkpoint write, 1M live files (autoCheckpoint, 1 run)",
      rows: "1,000,000 files",
      medianMs: med("silt-checkpoint-1m"),
      peakRssMb: checkpointRss,
      target: "[<3008 MB peak RSS]",
      status:
        (checkpointRss === undefined ? "?" : checkpointRss < 3008 ? "met" : "MISSED") +
        flag("prepare-checkpoint-1m", "silt-checkpoint-1m"),
    },
    ...coldStartRows(r("silt-cold-start")),
    {
      operation: "checkpoint write, 1M live files, V8 heap capped at 256 MB (1 run)",
      rows: "1,000,000 files",
      medianMs: med("silt-checkpoint-1m-heap256"),
      peakRssMb: r("silt-checkpoint-1m-heap256")?.peakRssMb,
      target: "[finishes]",
      // An out-of-memory crash under the cap is the failure this row is for.
      status:
        (outcomes["silt-checkpoint-1m-heap256"]?.error !== undefined
          ? "MISSED"
          : r("silt-checkpoint-1m-heap256") === undefined
            ? "?"
            : "met") + flag("silt-checkpoint-1m-heap256"),
    },
    {
      operation: "loadSnapshot, 1M live files, from that checkpoint (1 run)",
      rows: "1,000,000 files",
      medianMs: med("silt-snapshot-1m"),
      peakRssMb: r("silt-snapshot-1m")?.peakRssMb,
      target: "",
      status: flag("silt-snapshot-1m"),
    },
    ...Object.keys(AGGREGATE_SQL).map((a): Row => {
      const silt = r(`silt-${a}`);
      const duck = r(`duck-${a}`);
      const rs = r(`rs-${a}`);
      // delta-rs is compared too when it ran; a missing peer leaves the Silt/DuckDB verdict.
      const same =
        silt === undefined || duck === undefined
          ? "?"
          : [duck, rs].every(
                (peer) =>
                  peer === undefined ||
                  JSON.stringify(silt.extra?.rows) === JSON.stringify(peer.extra?.rows),
              )
            ? "met"
            : "MISSED";
      return {
        operation: `SQL ${a === "agg-group" ? "GROUP BY day, 6 aggregates (100 groups)" : "global count/sum/min/max"}`,
        rows: fmtInt(silt?.rows ?? 10_000_000),
        medianMs: med(`silt-${a}`),
        peakRssMb: silt?.peakRssMb,
        duckMedianMs: med(`duck-${a}`),
        rsMedianMs: med(`rs-${a}`),
        target: "[same rows as DuckDB and delta-rs]",
        status: same + flag("prepare-keyed", `silt-${a}`, `duck-${a}`, `rs-${a}`),
      };
    }),
    ...CHANGE_NAMES.map((c): Row => {
      const silt = `silt-${c}`;
      const duck = `duck-${c}`;
      const ms = med(silt);
      const duckMs = med(duck);
      const rss = r(silt)?.peakRssMb;
      let target = "";
      let status = "";
      if (c === "delete") {
        const sw = changeExtra(silt)?.bytesWritten;
        const dw = changeExtra(duck)?.bytesWritten;
        target = "[<1% of DuckDB's bytes written, faster]";
        status =
          sw === undefined || dw === undefined || ms === undefined || duckMs === undefined
            ? "?"
            : sw < 0.01 * dw && ms < duckMs
              ? "met"
              : "MISSED";
      } else if (c === "merge") {
        // "1.5 GB" read strictly, as 1.5e9 bytes; RSS figures are in 2^20-byte MB.
        target = "[<=1.5 GB (1,430 MB) peak RSS]";
        status = rss === undefined ? "?" : rss * 2 ** 20 <= 1.5e9 ? "met" : "MISSED";
      }
      return {
        operation: CHANGE_LABELS[c],
        rows: fmtInt(r(silt)?.rows ?? 10_000_000),
        medianMs: ms,
        peakRssMb: rss,
        duckMedianMs: duckMs,
        rsMedianMs: med(`rs-${c}`),
        target,
        status: status + flag(prepareOf(c), silt, duck, `rs-${c}`),
      };
    }),
    {
      operation: `OPTIMIZE ZORDER BY (id, customer), 1,000 -> ${optimized?.filesAfter ?? "?"} files (1 run; point query files read: id ${optimized?.after.id.filesRead ?? "?"}, customer ${optimized?.after.customer.filesRead ?? "?"})`,
      rows: fmtInt(r("silt-optimize")?.rows ?? 10_000_000),
      medianMs: med("silt-optimize"),
      peakRssMb: r("silt-optimize")?.peakRssMb,
      duckMedianMs: med("duck-optimize"),
      rsMedianMs: med("rs-optimize"),
      target: "[<3008 MB peak RSS]",
      status:
        (r("silt-optimize")?.peakRssMb === undefined
          ? "?"
          : r("silt-optimize")!.peakRssMb < 3008
            ? "met"
            : "MISSED") + flag("prepare-optimize", "silt-optimize", "duck-optimize", "rs-optimize"),
    },
    {
      operation: `OPTIMIZE (compaction), 1,000 -> ${compacted?.filesAfter ?? "?"} files (1 run)`,
      rows: fmtInt(r("silt-compact")?.rows ?? 10_000_000),
      medianMs: med("silt-compact"),
      peakRssMb: r("silt-compact")?.peakRssMb,
      rsMedianMs: med("rs-compact"),
      target: "",
      status: flag("prepare-optimize", "silt-compact", "rs-compact"),
    },
  ];

  console.log("");
  printTable(rows);
  console.log("");
  printIoTable(
    CHANGE_NAMES.map((c) => ({
      operation: CHANGE_LABELS[c],
      silt: changeExtra(`silt-${c}`),
      duck: changeExtra(`duck-${c}`),
      duckPeakRssMb: r(`duck-${c}`)?.peakRssMb,
      rs: changeExtra(`rs-${c}`),
      rsPeakRssMb: r(`rs-${c}`)?.peakRssMb,
    })),
  );
  console.log("");
  const runsOf = (name: string) =>
    r(name)
      ? `${r(name)!
          .runs.map((x) => x.toFixed(0))
          .join(" / ")} ms (warm-up ${fmtMs(r(name)!.warmupMs)})`
      : "n/a";
  const notes = [
    "Each case ran in a fresh `node --expose-gc` process: 1 warm-up, then 3 measured runs with a",
    "full GC before each; median of the 3. Peak RSS = process.resourceUsage().maxRSS of that",
    "process, input data and setup included.",
    `append: ${runsOf("silt-append")}; base RSS with the 1M-row input ${r("silt-append")?.baseRssMb ?? "?"} MB; ${r("silt-append")?.notes.join(", ") ?? ""}.`,
    "  DuckDB: COPY (SELECT * FROM src) TO 'x.parquet' (FORMAT parquet, COMPRESSION zstd,",
    `  ROW_GROUP_SIZE 131072), src a DuckDB table loaded untimed with the same rows: ${runsOf("duck-append")};`,
    `  ${r("duck-append")?.notes.join(", ") ?? ""}; DuckDB process peak RSS ${r("duck-append")?.peakRssMb ?? "?"} MB.`,
    `scan: ${runsOf("silt-scan")}; base RSS ${r("silt-scan")?.baseRssMb ?? "?"} MB (table made by another process).`,
    "  DuckDB: CREATE TEMP TABLE AS SELECT * FROM read_parquet(<the data file Silt wrote>),",
    `  dropped between runs: ${runsOf("duck-scan")}; DuckDB process peak RSS ${r("duck-scan")?.peakRssMb ?? "?"} MB.`,
    commits
      ? `commits: appendRows of 1 row, 200 in sequence (versions 2..201) on in-memory dynalite + local store; median of first 20 ${median(commits.runs.slice(0, 20)).toFixed(1)} ms, of last 20 ${median(commits.runs.slice(-20)).toFixed(1)} ms, max ${Math.max(...commits.runs).toFixed(1)} ms.`
      : "commits: n/a",
    `snapshot: loadSnapshot(store, tableRoot) on versions 0..999 (999 live files), no checkpoint: ${runsOf("silt-snapshot")}.`,
    `  ${r("silt-snapshot")?.notes.join(", ") ?? ""}; versions 0-1 by createTable + appendRows, 2..999 written as _delta_log/<v>.json into the LocalObjectStore.`,
    coldStartNotes(r("silt-cold-start")),
    lookupNotes(r("prepare-keyed"), r("silt-lookup")),
    `  DuckDB: SELECT * FROM read_parquet([<the 100 data files Silt wrote>]) WHERE id = <same id>: ${runsOf("duck-lookup")}; DuckDB process peak RSS ${r("duck-lookup")?.peakRssMb ?? "?"} MB.`,
    ...Object.entries(AGGREGATE_SQL).flatMap(([a, sql]) => [
      `${a}: ${sql} on the keyed 10M-row table, through parseStatement + runQuery (files streamed 4 at a time):`,
      `  Silt ${runsOf(`silt-${a}`)}; base RSS ${r(`silt-${a}`)?.baseRssMb ?? "?"} MB; DuckDB over the same Parquet files: ${runsOf(`duck-${a}`)}, peak RSS ${r(`duck-${a}`)?.peakRssMb ?? "?"} MB;`,
      "  rows compared as sorted text, doubles to 6 significant digits (the engines add in other orders).",
    ]),
    ...["silt-snapshot-10-checkpointed", "silt-snapshot-1k-checkpointed", "silt-snapshot-10k"].map(
      (name) => checkpointedSnapshotNotes(r(name), runsOf(name)),
    ),
    checkpoint1mNotes(
      r("prepare-checkpoint-1m"),
      r("silt-checkpoint-1m"),
      r("silt-checkpoint-1m-heap256"),
      r("silt-snapshot-1m"),
    ),
    ...changeNotes(r, runsOf),
    optimizeNotes(r("prepare-optimize"), r("silt-optimize"), r("duck-optimize"), runsOf),
    deltaRsNotes(outcomes, runsOf),
    `DuckDB ${String(r("duck-scan")?.extra?.version ?? "?")}, threads=${String(r("duck-scan")?.extra?.threads ?? "?")}. Checks: append and scan (both engines) compare count, sum(id), count(customer), sum(amount), count(day), sum(flag), count(flag) with the generated data; delta-rs's cases make the same checks where it has the operation; the lookup (both engines) compares the one row returned with the generated row; commits and snapshots compare versions and file counts (and the checkpoint used); every change (both engines) compares count, sum(id), count(customer), count of 'updated', sum(round(amount*100)), count(day), count on the replaced day, sum(flag), count(flag) of the table afterwards, exactly, with the same change replayed on the generator in JS, and Silt's statement row counts on every run: ${Object.values(outcomes).every((o) => o.unavailable !== undefined || o.result?.ok) ? "all passed" : "SOME FAILED OR MISSING"}.`,
    `Total ${((performance.now() - started) / 1000).toFixed(1)} s.`,
  ];
  for (const n of notes) console.log(n);

  const outDir = path.join(REPO, ".bench");
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    path.join(outDir, "results.json"),
    `${JSON.stringify(
      {
        when: new Date().toISOString(),
        machine: {
          node: process.version,
          cpus: os.cpus().length,
          cpuModel: os.cpus()[0]?.model,
          totalMemGiB: os.totalmem() / 2 ** 30,
          loadAvgAtStart: load,
        },
        table: rows.map((row) => ({
          ...row,
          ratio: ratio(row.medianMs, row.duckMedianMs) ?? null,
          ratioDeltaRs: ratio(row.medianMs, row.rsMedianMs) ?? null,
        })),
        cases: outcomes,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`Raw results: ${path.relative(process.cwd(), path.join(outDir, "results.json"))}`);
  if (Object.values(outcomes).some((o) => o.error !== undefined)) process.exitCode = 1;
}

await main();
