/**
 * One benchmark case per process: `node --expose-gc --import tsx bench/case.ts <case> <dir>`.
 * A fresh process per case keeps each peak RSS (a high-water mark that cannot be reset) to the
 * case itself. The result is one `BENCH_RESULT {json}` line on stdout for bench/run.ts.
 */
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as arrow from "apache-arrow";
import { createApp } from "../lib/api/app.ts";
import { autoCheckpoint } from "../lib/commit/post-commit.ts";
import { writeParquet } from "../lib/data/parquet.ts";
import {
  type Action,
  commitFileName,
  LOG_DIR,
  parseActions,
  STAGED_DIR,
  serializeActions,
} from "../lib/delta/actions.ts";
import { toPhysicalSchema } from "../lib/delta/column-mapping.ts";
import { loadSnapshot } from "../lib/delta/snapshot.ts";
import { appendRows } from "../lib/ops/append.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { fileKey } from "../lib/ops/read-files.ts";
import { scanTable } from "../lib/ops/scan.ts";
import { AGGREGATE_CASES } from "./aggregate.ts";
import { coldStart } from "./cold-start.ts";
import {
  type CaseResult,
  CHECKPOINTED_LOGS,
  closeDuck,
  collect,
  type DuckConn,
  measure,
  openDuck,
  type Prepared,
  physicalNames,
  preparedFile,
  ROW_GROUP_SIZE,
  RUNS,
  readPrepared,
  result,
  rssNow,
  SNAPSHOT_COMMITS,
  sqlString,
  WARMUP,
} from "./common.ts";
import { type Checks, COLUMNS, computeChecks, generate, sameChecks } from "./data.ts";
import { DELTARS_CASES } from "./deltars.ts";
import { KEYED_CASES } from "./keyed.ts";
import { MAINTENANCE_CASES } from "./maintenance.ts";
import { type BenchEnv, ensureNamespace, openEnv } from "./setup.ts";

const ROWS = 1_000_000;
const COMMITS = 200;
/**
 * Checkpointing every 10th of the 10,000 versions took 340 s here (999 checkpoints of up to 10k
 * files, ~340 ms each), so only the last 100 versions run the post-commit step. A reader uses
 * `_last_checkpoint`, that one checkpoint and the commits after it, so the snapshot load is the
 * one a fully checkpointed log gives; the log directory just lists ~1,000 fewer files.
 */
const CHECKPOINTED_TAIL = 100;

const sharedDir = (dir: string) => path.join(dir, "shared");

async function prepare(dir: string): Promise<CaseResult> {
  const env = await openEnv(sharedDir(dir), { persistent: true });
  try {
    await ensureNamespace(env.ctx);
    await createTable(env.ctx, { name: "bench.s.t", columns: COLUMNS });
    const data = generate(ROWS);
    const checks = computeChecks(data);
    await appendRows(env.ctx, "bench.s.t", { arrow: data });
    // Same rows under their plain names, for DuckDB to load untimed.
    const sourceParquet = path.join(dir, "source.parquet");
    writeFileSync(sourceParquet, writeParquet(data, { rowGroupSize: ROW_GROUP_SIZE }));
    const t = await openTable(env.ctx, "bench.s.t");
    const physical = physicalNames(t);
    const prepared: Prepared = {
      checks,
      dataFiles: t.snapshot.files.map((f) =>
        path.join(env.storageDir, fileKey(t.snapshot.tableRoot, f.path)),
      ),
      physical,
      sourceParquet,
    };
    writeFileSync(preparedFile(dir), JSON.stringify(prepared));
    return result("prepare", ROWS, [], true, []);
  } finally {
    await env.close();
  }
}

async function siltAppend(dir: string): Promise<CaseResult> {
  const env = await openEnv(path.join(dir, "append"), { persistent: false });
  try {
    await ensureNamespace(env.ctx);
    await createTable(env.ctx, { name: "bench.s.t", columns: COLUMNS });
    const data = generate(ROWS);
    collect();
    const base = rssNow();
    let bytes = 0;
    // Every run appends to the same table: later runs also pay for one more file in the snapshot,
    // as real appends do.
    const m = await measure(async () => {
      const r = await appendRows(env.ctx, "bench.s.t", { arrow: data });
      bytes = r.numOutputBytes;
    });
    const scanned = await scanTable(env.ctx, "bench.s.t", { version: 1 });
    const ok = sameChecks(computeChecks(scanned.table), computeChecks(data));
    return {
      ...result("silt-append", ROWS, m.runs, ok, [`file ${(bytes / 1e6).toFixed(1)} MB`]),
      warmupMs: m.warmupMs,
      baseRssMb: base,
    };
  } finally {
    await env.close();
  }
}

async function siltScan(dir: string): Promise<CaseResult> {
  const prepared = readPrepared(dir);
  const env = await openEnv(sharedDir(dir), { persistent: true });
  try {
    collect();
    const base = rssNow();
    let last: Checks | undefined;
    const m = await measure(async (i) => {
      const r = await scanTable(env.ctx, "bench.s.t");
      // Checked once, outside the timing of the other runs.
      if (i === WARMUP + RUNS - 1) last = computeChecks(r.table);
    });
    const ok = last !== undefined && sameChecks(last, prepared.checks);
    return { ...result("silt-scan", ROWS, m.runs, ok, []), warmupMs: m.warmupMs, baseRssMb: base };
  } finally {
    await env.close();
  }
}

async function duckChecks(
  conn: DuckConn,
  from: string,
  names: Record<string, string>,
): Promise<Checks> {
  const q = (n: string) => `"${names[n].replaceAll('"', '""')}"`;
  const reader = await conn.runAndReadAll(
    `SELECT count(*)::DOUBLE, sum(${q("id")})::VARCHAR, count(${q("customer")})::DOUBLE,
            round(sum(${q("amount")}), 2)::DOUBLE, count(${q("day")})::DOUBLE,
            sum(${q("flag")}::INTEGER)::DOUBLE, count(${q("flag")})::DOUBLE
       FROM ${from}`,
  );
  const r = reader.getRows()[0] as [number, string, number, number, number, number, number];
  return {
    count: r[0],
    sumId: r[1],
    countCustomer: r[2],
    sumAmount: r[3],
    countDay: r[4],
    sumFlag: r[5],
    countFlag: r[6],
  };
}

const identity: Record<string, string> = Object.fromEntries(COLUMNS.map((c) => [c.name, c.name]));

async function duckAppend(dir: string): Promise<CaseResult> {
  const prepared = readPrepared(dir);
  const duck = await openDuck();
  try {
    await duck.conn.run(
      `CREATE TABLE src AS SELECT * FROM read_parquet(${sqlString(prepared.sourceParquet)})`,
    );
    collect();
    const base = rssNow();
    const out = path.join(dir, "duck-append.parquet");
    const m = await measure(async () => {
      await duck.conn.run(
        `COPY (SELECT * FROM src) TO ${sqlString(out)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`,
      );
    });
    const ok = sameChecks(
      await duckChecks(duck.conn, `read_parquet(${sqlString(out)})`, identity),
      prepared.checks,
    );
    const size = readFileSync(out).byteLength;
    rmSync(out, { force: true });
    return {
      ...result("duck-append", ROWS, m.runs, ok, [`file ${(size / 1e6).toFixed(1)} MB`]),
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: { threads: duck.threads, version: duck.version },
    };
  } finally {
    closeDuck(duck);
  }
}

async function duckScan(dir: string): Promise<CaseResult> {
  const prepared = readPrepared(dir);
  const duck = await openDuck();
  try {
    const files = `read_parquet([${prepared.dataFiles.map(sqlString).join(", ")}])`;
    collect();
    const base = rssNow();
    const m = await measure(
      async () => {
        await duck.conn.run(`CREATE TEMP TABLE scanned AS SELECT * FROM ${files}`);
      },
      async () => {
        await duck.conn.run("DROP TABLE scanned");
      },
    );
    const ok = sameChecks(await duckChecks(duck.conn, files, prepared.physical), prepared.checks);
    return {
      ...result("duck-scan", ROWS, m.runs, ok, []),
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: { threads: duck.threads, version: duck.version },
    };
  } finally {
    closeDuck(duck);
  }
}

async function siltCommits(dir: string): Promise<CaseResult> {
  const env = await openEnv(path.join(dir, "commits"), { persistent: false });
  try {
    await ensureNamespace(env.ctx);
    await createTable(env.ctx, { name: "bench.s.small", columns: COLUMNS });
    const row = generate(1);
    collect();
    const base = rssNow();
    const t0 = performance.now();
    await appendRows(env.ctx, "bench.s.small", { arrow: row });
    const warmupMs = performance.now() - t0;
    const latencies: number[] = [];
    for (let i = 0; i < COMMITS; i++) {
      const start = performance.now();
      await appendRows(env.ctx, "bench.s.small", { arrow: row });
      latencies.push(performance.now() - start);
    }
    const t = await openTable(env.ctx, "bench.s.small");
    const ok = t.snapshot.version === COMMITS + 1 && t.snapshot.files.length === COMMITS + 1;
    return {
      ...result("silt-commits", 1, latencies, ok, []),
      warmupMs,
      baseRssMb: base,
    };
  } finally {
    await env.close();
  }
}

/**
 * Issue 11: a commit another engine sends through the UC Delta API (`POST …/tables/{t}` with an
 * add-commit), measured from request to answer in-process, the way silt-commits measures Silt's
 * own append; the client's side (a one-row Parquet file with the physical column names and its
 * staged commit) is written before the clock starts. Then the load-table request Spark and DuckDB
 * send before every statement.
 */
async function siltUcCommits(dir: string): Promise<CaseResult> {
  const env = await openEnv(path.join(dir, "uc-commits"), { persistent: false });
  try {
    await ensureNamespace(env.ctx);
    const created = await createTable(env.ctx, { name: "bench.s.uc", columns: COLUMNS });
    const app = createApp(env.ctx);
    const url =
      "http://silt.bench/api/2.1/unity-catalog/delta/v1/catalogs/bench/schemas/s/tables/uc";
    const t = await openTable(env.ctx, "bench.s.uc");
    const physical = toPhysicalSchema(t.schema, t.mappingMode).fields.map((f) => f.name);
    const row = generate(1);
    const renamed = new arrow.Table(
      Object.fromEntries(
        row.schema.fields.map((_, i) => [physical[i], row.getChildAt(i) as arrow.Vector]),
      ),
    );
    const parquet = writeParquet(renamed);
    const root = t.entry.location;
    const commitOnce = async (version: number) => {
      const path = `part-${randomUUID()}.parquet`;
      await env.ctx.store.put(`${root}${path}`, parquet);
      const fileName = `${String(version).padStart(20, "0")}.${randomUUID()}.json`;
      const ict = Date.now() + version;
      const staged = new TextEncoder().encode(
        serializeActions([
          { commitInfo: { inCommitTimestamp: ict, timestamp: ict, operation: "WRITE" } },
          {
            add: {
              path,
              partitionValues: {},
              size: parquet.length,
              modificationTime: ict,
              dataChange: true,
              stats: JSON.stringify({ numRecords: 1 }),
            },
          },
        ]),
      );
      await env.ctx.store.put(`${root}${STAGED_DIR}${fileName}`, staged);
      const body = JSON.stringify({
        requirements: [{ type: "assert-table-uuid", uuid: created.tableId }],
        updates: [
          {
            action: "add-commit",
            commit: { version, timestamp: ict, "file-name": fileName, "file-size": staged.length },
          },
        ],
      });
      const start = performance.now();
      const res = await app.request(url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`commit ${version} answered ${res.status}`);
      return performance.now() - start;
    };
    collect();
    const base = rssNow();
    const warmupMs = await commitOnce(1);
    const latencies: number[] = [];
    for (let v = 2; v <= COMMITS + 1; v++) latencies.push(await commitOnce(v));
    const loads: number[] = [];
    let loaded: { "latest-table-version"?: number } = {};
    for (let i = 0; i < COMMITS; i++) {
      const start = performance.now();
      const res = await app.request(url);
      loaded = (await res.json()) as typeof loaded;
      loads.push(performance.now() - start);
    }
    const after = await openTable(env.ctx, "bench.s.uc");
    const ok =
      after.snapshot.version === COMMITS + 1 &&
      after.snapshot.files.length === COMMITS + 1 &&
      loaded["latest-table-version"] === COMMITS + 1;
    return {
      ...result("silt-uc-commits", 1, latencies, ok, []),
      warmupMs,
      baseRssMb: base,
      extra: { loadMs: loads },
    };
  } finally {
    await env.close();
  }
}

interface LogTable {
  env: BenchEnv;
  root: string;
  buildMs: number;
  /** Versions checkpointed, and how long each post-commit step that wrote one took. */
  checkpoints: { version: number; ms: number }[];
  /** All post-commit steps, crossings or not. */
  checkpointMs: number;
}

/**
 * A real Silt table supplies versions 0 and 1; versions 2..commits-1 are written directly as
 * copies of version 1 with their own data file, row ids and timestamps, because every appendRows
 * replays the log (1,000 of them took ~80 s when tried). From `checkpointsFrom` on, each commit
 * then runs the post-commit step the commit loop runs (autoCheckpoint, as test/checkpoint.test.ts
 * does), so a checkpoint lands every delta.checkpointInterval (10) versions as in production.
 */
async function buildLog(
  dir: string,
  commits: number,
  opts: { checkpointsFrom?: number },
): Promise<LogTable> {
  const env = await openEnv(dir, { persistent: false });
  await ensureNamespace(env.ctx);
  await createTable(env.ctx, { name: "bench.s.log", columns: COLUMNS });
  await appendRows(env.ctx, "bench.s.log", { arrow: generate(1) });
  const t = await openTable(env.ctx, "bench.s.log");
  const root = t.snapshot.tableRoot;
  const store = env.ctx.store;
  const buildStart = performance.now();
  const template = parseActions(
    new TextDecoder().decode(await store.get(`${root}${LOG_DIR}${commitFileName(1)}`)),
  );
  const templateAdd = t.snapshot.files[0];
  const dataKey = fileKey(root, templateAdd.path);
  const ict = t.snapshot.timestamp;
  const checkpoints: LogTable["checkpoints"] = [];
  let checkpointMs = 0;
  for (let v = 2; v < commits; v++) {
    const dirPart = templateAdd.path.slice(0, templateAdd.path.lastIndexOf("/") + 1);
    const relative = `${dirPart}part-00000-${randomUUID()}.c000.zstd.parquet`;
    await store.copyIfAbsent(dataKey, `${root}${relative}`);
    const actions: Action[] = template.map((a) => {
      if ("commitInfo" in a) {
        const ts = ict + v;
        return {
          commitInfo: {
            ...a.commitInfo,
            inCommitTimestamp: ts,
            timestamp: ts,
            readVersion: v - 1,
            txnId: randomUUID(),
          },
        };
      }
      if ("add" in a) {
        return {
          add: {
            ...a.add,
            path: relative,
            modificationTime: ict + v,
            baseRowId: v - 1,
            defaultRowCommitVersion: v,
          },
        };
      }
      if ("domainMetadata" in a) {
        return {
          domainMetadata: {
            ...a.domainMetadata,
            configuration: JSON.stringify({ rowIdHighWaterMark: v - 1 }),
          },
        };
      }
      return a;
    });
    const ok = await store.putIfAbsent(
      `${root}${LOG_DIR}${commitFileName(v)}`,
      new TextEncoder().encode(serializeActions(actions)),
    );
    if (!ok) throw new Error(`commit ${v} already exists`);
    if (opts.checkpointsFrom !== undefined && v >= opts.checkpointsFrom) {
      const c0 = performance.now();
      const written = await autoCheckpoint({
        store,
        tableRoot: root,
        version: v,
        actions: actions.filter((a) => !("commitInfo" in a)),
      });
      const ms = performance.now() - c0;
      checkpointMs += ms;
      if (written !== undefined) checkpoints.push({ version: v, ms });
    }
  }
  return { env, root, buildMs: performance.now() - buildStart, checkpoints, checkpointMs };
}

/** loadSnapshot of the latest version, timed; the I/O of the last run is kept for the notes. */
async function timeSnapshot(log: LogTable, commits: number) {
  const store = log.env.ctx.store;
  collect();
  const base = rssNow();
  let version = -1;
  let files = 0;
  let checkpointVersion: number | undefined;
  const m = await measure(async () => {
    log.env.io.reset();
    const s = await loadSnapshot(store, log.root);
    version = s.version;
    files = s.files.length;
    checkpointVersion = s.checkpointVersion;
  });
  const io = { ...log.env.io.counts };
  const ok = version === commits - 1 && files === commits - 1;
  return { m, base, ok, version, files, checkpointVersion, io };
}

async function siltSnapshot(dir: string): Promise<CaseResult> {
  const log = await buildLog(path.join(dir, "snapshot"), SNAPSHOT_COMMITS, {});
  try {
    const { m, base, ok, version, files } = await timeSnapshot(log, SNAPSHOT_COMMITS);
    return {
      ...result("silt-snapshot", SNAPSHOT_COMMITS, m.runs, ok, [
        `log written directly in ${(log.buildMs / 1000).toFixed(1)} s (1,000 appendRows took ~80 s when tried)`,
      ]),
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: { version, files, buildMs: log.buildMs },
    };
  } finally {
    await log.env.close();
  }
}

/** Issue 7: the latest snapshot of a checkpointed table of `commits` versions. */
async function siltSnapshotCheckpointed(dir: string, name: string): Promise<CaseResult> {
  const commits = CHECKPOINTED_LOGS[name];
  const log = await buildLog(path.join(dir, name), commits, {
    checkpointsFrom: Math.max(2, commits - CHECKPOINTED_TAIL),
  });
  try {
    const r = await timeSnapshot(log, commits);
    // Loading must start from the last crossing (9,990 of 10,000), not replay JSON.
    const expectedCheckpoint = Math.floor((commits - 1) / 10) * 10;
    const ok = r.ok && r.checkpointVersion === expectedCheckpoint;
    return {
      ...result(name, commits, r.m.runs, ok, []),
      warmupMs: r.m.warmupMs,
      baseRssMb: r.base,
      extra: {
        version: r.version,
        files: r.files,
        checkpointVersion: r.checkpointVersion,
        buildMs: log.buildMs,
        checkpoints: log.checkpoints,
        checkpointMs: log.checkpointMs,
        io: r.io,
      },
    };
  } finally {
    await log.env.close();
  }
}

const CASES: Record<string, (dir: string) => Promise<CaseResult>> = {
  prepare,
  "silt-append": siltAppend,
  "silt-scan": siltScan,
  "duck-append": duckAppend,
  "duck-scan": duckScan,
  "silt-commits": siltCommits,
  "silt-uc-commits": siltUcCommits,
  "silt-snapshot": siltSnapshot,
  ...Object.fromEntries(
    Object.keys(CHECKPOINTED_LOGS).map((name) => [
      name,
      (dir: string) => siltSnapshotCheckpointed(dir, name),
    ]),
  ),
  ...KEYED_CASES,
  ...AGGREGATE_CASES,
  "silt-cold-start": coldStart,
  ...MAINTENANCE_CASES,
  ...DELTARS_CASES,
};

async function main(): Promise<void> {
  const [name, dir] = process.argv.slice(2);
  const fn = CASES[name];
  if (fn === undefined || dir === undefined) {
    throw new Error(`usage: case.ts <${Object.keys(CASES).join("|")}> <dir>`);
  }
  const r = await fn(dir);
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(r)}\n`);
}

await main();
