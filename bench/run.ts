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
import type { CaseResult } from "./common.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CASE_SCRIPT = fileURLToPath(new URL("./case.ts", import.meta.url));

interface CaseOutcome {
  result?: CaseResult;
  error?: string;
  wallMs: number;
}

function runCase(name: string, dir: string): Promise<CaseOutcome> {
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", "--import", "tsx", CASE_SCRIPT, name, dir],
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

interface Row {
  operation: string;
  rows: string;
  medianMs?: number;
  rowsPerSec?: number;
  peakRssMb?: number;
  duckMedianMs?: number;
  target: string;
  status: string;
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
    "target",
  ];
  const cells = rows.map((r) => [
    r.operation,
    r.rows,
    fmtMs(r.medianMs),
    r.rowsPerSec === undefined ? "n/a" : fmtInt(r.rowsPerSec),
    r.peakRssMb === undefined ? "n/a" : r.peakRssMb.toFixed(0),
    fmtMs(r.duckMedianMs),
    r.medianMs !== undefined && r.duckMedianMs !== undefined
      ? `${(r.medianMs / r.duckMedianMs).toFixed(2)}x`
      : "n/a",
    `${r.target} ${r.status}`.trim(),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const numeric = new Set([1, 2, 3, 4, 5, 6]);
  const line = (c: string[]) =>
    `| ${c.map((v, i) => (numeric.has(i) ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join(" | ")} |`;
  console.log(line(header));
  console.log(
    `|${widths.map((w, i) => (numeric.has(i) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`,
  );
  for (const c of cells) console.log(line(c));
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
    ? `table built untimed by 100 appendRows of 100k rows in ${(x.buildMs / 1000).toFixed(1)} s (append ${x.appendMs[0].toFixed(0)} ms first, ${median(x.appendMs).toFixed(0)} median, ${x.appendMs[x.appendMs.length - 1].toFixed(0)} last; ${(x.bytes / 1e6).toFixed(0)} MB of Parquet)`
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

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), "silt-bench-"));
  const order = [
    "prepare",
    "silt-append",
    "duck-append",
    "silt-scan",
    "duck-scan",
    "silt-commits",
    "silt-snapshot",
    "prepare-lookup",
    "silt-lookup",
    "duck-lookup",
  ];
  const outcomes: Record<string, CaseOutcome> = {};
  const load = os.loadavg();
  console.log(
    `Silt bench: node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load avg ${load.map((l) => l.toFixed(2)).join(" ")}`,
  );
  try {
    for (const name of order) {
      process.stdout.write(`  ${name} ... `);
      const o = await runCase(name, dir);
      outcomes[name] = o;
      console.log(o.error === undefined ? `${(o.wallMs / 1000).toFixed(1)} s` : "FAILED");
      if (o.error !== undefined) console.log(o.error.replace(/^/gm, "    "));
      // The cases after a prepare step read the table it makes; without it they can only fail.
      if (name.startsWith("prepare") && o.error !== undefined) break;
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
  const lookupRows = r("prepare-lookup")?.rows ?? 10_000_000;

  const rows: Row[] = [
    {
      operation: "append 1M rows (appendRows)",
      rows: fmtInt(N),
      medianMs: append,
      rowsPerSec: perSec(N, append),
      peakRssMb: r("silt-append")?.peakRssMb,
      duckMedianMs: med("duck-append"),
      target: "[<=500 ms, <=500 MB]",
      status:
        verdict(append, 500, r("silt-append")?.peakRssMb, 500) + flag("silt-append", "duck-append"),
    },
    {
      operation: "full scan 1M rows (scanTable)",
      rows: fmtInt(N),
      medianMs: scan,
      rowsPerSec: perSec(N, scan),
      peakRssMb: r("silt-scan")?.peakRssMb,
      duckMedianMs: med("duck-scan"),
      target: "[<=250 ms, <=500 MB]",
      status: verdict(scan, 250, r("silt-scan")?.peakRssMb, 500) + flag("silt-scan", "duck-scan"),
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
    {
      operation: "loadSnapshot, 1,000-commit log",
      rows: "1,000 commits",
      medianMs: snap,
      peakRssMb: r("silt-snapshot")?.peakRssMb,
      target: "",
      status: flag("silt-snapshot"),
    },
    {
      operation: `point lookup, 100 files (SQL; ${filesOpened ?? "?"} file${filesOpened === 1 ? "" : "s"} opened)`,
      rows: fmtInt(lookupRows),
      medianMs: lookup,
      peakRssMb: r("silt-lookup")?.peakRssMb,
      duckMedianMs: med("duck-lookup"),
      target: "[<=2 files opened]",
      status:
        (filesOpened === undefined ? "?" : filesOpened <= 2 ? "met" : "MISSED") +
        flag("prepare-lookup", "silt-lookup", "duck-lookup"),
    },
  ];

  console.log("");
  printTable(rows);
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
    lookupNotes(r("prepare-lookup"), r("silt-lookup")),
    `  DuckDB: SELECT * FROM read_parquet([<the 100 data files Silt wrote>]) WHERE id = <same id>: ${runsOf("duck-lookup")}; DuckDB process peak RSS ${r("duck-lookup")?.peakRssMb ?? "?"} MB.`,
    `DuckDB ${String(r("duck-scan")?.extra?.version ?? "?")}, threads=${String(r("duck-scan")?.extra?.threads ?? "?")}. Checks: append and scan (both engines) compare count, sum(id), count(customer), sum(amount), count(day), sum(flag), count(flag) with the generated data; the lookup (both engines) compares the one row returned with the generated row; commits and snapshot compare versions and file counts: ${Object.values(outcomes).every((o) => o.result?.ok) ? "all passed" : "SOME FAILED OR MISSING"}.`,
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
          ratio:
            row.medianMs !== undefined && row.duckMedianMs !== undefined
              ? row.medianMs / row.duckMedianMs
              : null,
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
