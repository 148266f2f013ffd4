/**
 * The maintenance cases of issue 7: the checkpoint of a table with 1,000,000 live files (written,
 * then loaded back, each in its own process), and OPTIMIZE ZORDER BY of 1,000 small files
 * (10M rows) beside DuckDB rewriting the same files with ORDER BY.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { getHeapStatistics } from "node:v8";
import {
  type CheckpointResult,
  type LastCheckpointDocument,
  writeCheckpointState,
} from "../lib/commit/checkpoint-writer.ts";
import { autoCheckpoint } from "../lib/commit/post-commit.ts";
import { commitTransaction } from "../lib/commit/transaction.ts";
import {
  type Action,
  type AddFile,
  commitFileName,
  type DomainMetadata,
  LOG_DIR,
  parseActions,
  type RemoveFile,
  serializeActions,
} from "../lib/delta/actions.ts";
import type { FileAction } from "../lib/delta/checkpoint-state.ts";
import { padVersion } from "../lib/delta/log-listing.ts";
import { loadSnapshot } from "../lib/delta/snapshot.ts";
import { appendRows } from "../lib/ops/append.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { describeHistory } from "../lib/ops/history.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { fileKey } from "../lib/ops/read-files.ts";
import { writeDataFiles } from "../lib/ops/write-files.ts";
import { checkWriteProtocol, rowTrackingHighWaterMark } from "../lib/ops/write-protocol.ts";
import { executeSql } from "../lib/sql/execute.ts";
import type { SqlResult } from "../lib/sql/execute-ddl.ts";
import { listAll, type ObjectStore } from "../lib/storage/object-store.ts";
import {
  type CaseResult,
  closeDuck,
  collect,
  LAST_RUN,
  measure,
  measureFresh,
  ONCE,
  openDuck,
  peakRss,
  physicalNames,
  result,
  rssNow,
  sqlString,
} from "./common.ts";
import {
  COLUMNS,
  expectKeyed,
  generateKeyed,
  KEYED_DAYS,
  type KeyedChecks,
  type KeyedRow,
  keyedRow,
  sameKeyed,
} from "./data.ts";
import {
  arrowRow,
  copy,
  duckKeyedChecks,
  files,
  freshCopy,
  logical,
  type PointQueryAnswer,
  pointQuery,
  sameRow,
  siltKeyedChecks,
  sizeOf,
  TABLE,
} from "./keyed.ts";
import { type BenchEnv, ensureNamespace, openEnv, openStore } from "./setup.ts";

// ---------------------------------------------------------------------------------------------
// Checkpoint of 1,000,000 live files

const CHECKPOINT_FILES = 1_000_000;
/** The checkpoint the log starts from, and the commits after it up to the measured version. */
const BASE_VERSION = 10;
const TARGET_VERSION = 20;
const ADDS_PER_COMMIT = 1_100;
const REMOVES_PER_COMMIT = 100;
const COMMITS_AFTER = TARGET_VERSION - BASE_VERSION;
const BASE_FILES = CHECKPOINT_FILES - COMMITS_AFTER * (ADDS_PER_COMMIT - REMOVES_PER_COMMIT);
const ROWS_PER_FILE = 10_000;
const DAY_MS = 86_400_000;
const EPOCH_2024_MS = Date.UTC(2024, 0, 1);

const checkpointDir = (dir: string) => path.join(dir, "checkpoint-1m");
const checkpointFile = (dir: string) => path.join(dir, "checkpoint-1m.json");

interface CheckpointPrepared {
  storageDir: string;
  root: string;
  buildMs: number;
  baseMs: number;
  baseSidecars: number;
  baseBytes: number;
  logBytesAfterBase: number;
  /** `_last_checkpoint` naming the base, which each checkpoint case puts back first. */
  baseHint: string;
}

/**
 * Add actions as Silt writes them for a 10k-row file of the keyed table partitioned by day:
 * the template's shape (physical column names, stats keys, row tracking) with this file's path,
 * day, size, id range and row ids. Deterministic, so the oracle is `i` itself.
 */
function syntheticAdds(template: AddFile, physical: Record<string, string>) {
  const stats = JSON.parse(template.stats ?? "{}") as {
    numRecords: number;
    minValues: Record<string, unknown>;
    maxValues: Record<string, unknown>;
  };
  const idCol = physical.id;
  const dayCol = physical.day;
  return (i: number, version: number): AddFile => {
    stats.numRecords = ROWS_PER_FILE;
    stats.minValues[idCol] = i * ROWS_PER_FILE;
    stats.maxValues[idCol] = i * ROWS_PER_FILE + ROWS_PER_FILE - 1;
    const hex = i.toString(16).padStart(12, "0");
    return {
      path: `${hex.slice(-2)}/part-00000-00000000-0000-4000-8000-${hex}.c000.zstd.parquet`,
      partitionValues: {
        [dayCol]: new Date(EPOCH_2024_MS + (i % KEYED_DAYS) * DAY_MS).toISOString().slice(0, 10),
      },
      size: 180_000 + (i % 4_096),
      modificationTime: EPOCH_2024_MS + i,
      dataChange: true,
      stats: JSON.stringify(stats),
      baseRowId: i * ROWS_PER_FILE,
      defaultRowCommitVersion: version,
    };
  };
}

/**
 * Untimed: a log holding 1,000,000 live adds, built without writing a million log lines or data
 * files (a checkpoint never reads data files). A real `createTable` + `appendRows` supply the
 * protocol, metadata and an add to copy; then:
 * - version 10's checkpoint holds 990,000 adds, written by the V2 writer itself from a generator
 *   (20 sidecars of 50,000), and `10.json` commits the last 1,100 of them; versions 0..9 are
 *   deleted, as log cleanup deletes what a checkpoint covers once past the retention;
 * - versions 11..20 are written as `_delta_log/<v>.json`, each adding 1,100 files and removing
 *   100 of the base's (tombstones within retention), so version 20 has exactly 1,000,000 files
 *   and 1,000 tombstones, and streaming it must reconcile the base against the commits.
 */
async function prepareCheckpoint1m(dir: string): Promise<CaseResult> {
  const env = await openEnv(checkpointDir(dir), { persistent: false });
  try {
    const start = performance.now();
    await ensureNamespace(env.ctx);
    await createTable(env.ctx, { name: "bench.s.wide", columns: COLUMNS, partitionedBy: ["day"] });
    await appendRows(env.ctx, "bench.s.wide", { arrow: generateKeyed([0, 1, 2]) });
    const t = await openTable(env.ctx, "bench.s.wide");
    const root = t.snapshot.tableRoot;
    const store = env.ctx.store;
    const add = syntheticAdds(t.snapshot.files[0], physicalNames(t));
    const hwm = (files: number): DomainMetadata => ({
      domain: "delta.rowTracking",
      configuration: JSON.stringify({ rowIdHighWaterMark: files * ROWS_PER_FILE - 1 }),
      removed: false,
    });
    const now = Date.now();
    const commitInfo = (v: number): Action => ({
      commitInfo: {
        inCommitTimestamp: now - (TARGET_VERSION - v) * 1000,
        timestamp: now - (TARGET_VERSION - v) * 1000,
        operation: "WRITE",
        operationParameters: { mode: "Append", partitionBy: '["day"]' },
        readVersion: v - 1,
        isolationLevel: "Serializable",
        isBlindAppend: false,
        engineInfo: "silt-bench",
      },
    });
    const put = async (v: number, actions: Action[]) => {
      const key = `${root}${LOG_DIR}${commitFileName(v)}`;
      await store.put(key, new TextEncoder().encode(serializeActions(actions)));
    };

    await put(BASE_VERSION, [
      commitInfo(BASE_VERSION),
      ...Array.from({ length: ADDS_PER_COMMIT }, (_, k) => ({
        add: add(BASE_FILES - ADDS_PER_COMMIT + k, BASE_VERSION),
      })),
      { domainMetadata: hwm(BASE_FILES) },
    ]);
    const b0 = performance.now();
    const base = await writeCheckpointState(store, root, {
      version: BASE_VERSION,
      protocol: t.snapshot.protocol,
      metadata: t.snapshot.metadata,
      txns: [],
      domainMetadata: [
        ...[...t.snapshot.domainMetadata.values()].filter((d) => d.domain !== "delta.rowTracking"),
        hwm(BASE_FILES),
      ],
      fileActions: (function* (): Generator<FileAction> {
        for (let i = 0; i < BASE_FILES; i++) {
          yield { add: add(i, i >= BASE_FILES - ADDS_PER_COMMIT ? BASE_VERSION : 1) };
        }
      })(),
    });
    const baseMs = performance.now() - b0;
    const covered = (await listAll(store, `${root}${LOG_DIR}`)).filter((o) => {
      const m = /\/(\d{20})\.json$/.exec(o.key);
      return m !== null && Number(m[1]) < BASE_VERSION;
    });
    await store.deleteMany(covered.map((o) => o.key));

    env.io.reset();
    let files = BASE_FILES;
    for (let v = BASE_VERSION + 1; v <= TARGET_VERSION; v++) {
      const k = v - BASE_VERSION - 1;
      const removes: Action[] = [];
      for (let j = 0; j < REMOVES_PER_COMMIT; j++) {
        const gone = add(k * REMOVES_PER_COMMIT + j, 1);
        const remove: RemoveFile = {
          path: gone.path,
          deletionTimestamp: now - (TARGET_VERSION - v) * 1000,
          dataChange: true,
          extendedFileMetadata: true,
          partitionValues: gone.partitionValues,
          size: gone.size,
        };
        removes.push({ remove });
      }
      const adds: Action[] = [];
      for (let j = 0; j < ADDS_PER_COMMIT; j++) adds.push({ add: add(files + j, v) });
      files += ADDS_PER_COMMIT;
      await put(v, [commitInfo(v), ...adds, ...removes, { domainMetadata: hwm(files) }]);
    }
    const prepared: CheckpointPrepared = {
      storageDir: env.storageDir,
      root,
      buildMs: performance.now() - start,
      baseMs,
      baseSidecars: base.sidecars.length,
      baseBytes: base.sizeInBytes,
      logBytesAfterBase: env.io.counts.bytesWritten,
      baseHint: new TextDecoder().decode(await store.get(`${root}${LOG_DIR}_last_checkpoint`)),
    };
    writeFileSync(checkpointFile(dir), JSON.stringify(prepared));
    const ok = base.numOfAddFiles === BASE_FILES && covered.length === 2;
    return {
      ...result("prepare-checkpoint-1m", CHECKPOINT_FILES, [], ok, []),
      extra: { ...prepared, baseHint: undefined },
    };
  } finally {
    await env.close();
  }
}

const readCheckpointPrepared = (dir: string) =>
  JSON.parse(readFileSync(checkpointFile(dir), "utf8")) as CheckpointPrepared;

/**
 * The log as prepared: any checkpoint of version 20 a previous case wrote (and its sidecars)
 * deleted, `_last_checkpoint` naming the base again. Untimed.
 */
async function restoreBase(store: ObjectStore, p: CheckpointPrepared): Promise<void> {
  const log = `${p.root}${LOG_DIR}`;
  const base = readLastCheckpointDocument(p.baseHint);
  const keep = new Set(base.v2Checkpoint.sidecarFiles?.map((s) => `${log}_sidecars/${s.path}`));
  const stale = (await listAll(store, log))
    .map((o) => o.key)
    .filter((k) =>
      k.startsWith(`${log}_sidecars/`)
        ? !keep.has(k)
        : k.slice(log.length).startsWith(`${padVersion(TARGET_VERSION)}.checkpoint.`),
    );
  await store.deleteMany(stale);
  await store.put(`${log}_last_checkpoint`, new TextEncoder().encode(p.baseHint));
}

const readLastCheckpointDocument = (text: string) => JSON.parse(text) as LastCheckpointDocument;

/**
 * The post-commit step of version 20 (`autoCheckpoint`, as the commit loop runs it): streams the
 * base's sidecars and the 10 commits after it into a new V2 checkpoint. One unwarmed run (it
 * takes tens of seconds). `silt-checkpoint-1m-heap256` is the same run in a process whose V8 heap
 * is capped at 256 MB (bench/run.ts): it can only finish if what stays alive is bounded. The
 * checkpoint stays for `silt-snapshot-1m`.
 */
async function siltCheckpoint1m(dir: string, name: string): Promise<CaseResult> {
  const p = readCheckpointPrepared(dir);
  const store = openStore(p.storageDir);
  await restoreBase(store, p);
  const commit = parseActions(
    new TextDecoder().decode(
      await store.get(`${p.root}${LOG_DIR}${commitFileName(TARGET_VERSION)}`),
    ),
  ).filter((a) => !("commitInfo" in a));
  collect();
  const base = rssNow();
  store.reset();
  let written: CheckpointResult | undefined;
  const m = await measure(
    async () => {
      written = await autoCheckpoint({
        store,
        tableRoot: p.root,
        version: TARGET_VERSION,
        actions: commit,
      });
    },
    undefined,
    ONCE,
  );
  const ok =
    written !== undefined &&
    written.numOfAddFiles === CHECKPOINT_FILES &&
    written.numTombstones === COMMITS_AFTER * REMOVES_PER_COMMIT &&
    written.lastCheckpoint !== undefined;
  return {
    ...result(name, CHECKPOINT_FILES, m.runs, ok, []),
    baseRssMb: base,
    extra: {
      prepared: { ...p, baseHint: undefined },
      sidecars: written?.sidecars.length,
      numActions: written?.numActions,
      sizeInBytes: written?.sizeInBytes,
      io: { ...store.counts },
      heapLimitMb: getHeapStatistics().heap_size_limit / 2 ** 20,
    },
  };
}

/** `loadSnapshot` of version 20 from the checkpoint `silt-checkpoint-1m` left. */
async function siltSnapshot1m(dir: string): Promise<CaseResult> {
  const p = readCheckpointPrepared(dir);
  const store = openStore(p.storageDir);
  collect();
  const base = rssNow();
  const seen: { version: number; files: number; tombstones: number; from?: number }[] = [];
  const m = await measure(
    async () => {
      store.reset();
      const s = await loadSnapshot(store, p.root);
      seen.push({
        version: s.version,
        files: s.files.length,
        tombstones: s.tombstones.length,
        from: s.checkpointVersion,
      });
    },
    undefined,
    ONCE,
  );
  const ok = seen.every(
    (s) =>
      s.version === TARGET_VERSION &&
      s.from === TARGET_VERSION &&
      s.files === CHECKPOINT_FILES &&
      s.tombstones === COMMITS_AFTER * REMOVES_PER_COMMIT,
  );
  return {
    ...result("silt-snapshot-1m", CHECKPOINT_FILES, m.runs, ok, []),
    baseRssMb: base,
    extra: { io: { ...store.counts } },
  };
}

// ---------------------------------------------------------------------------------------------
// OPTIMIZE ZORDER BY of 1,000 small files

const SMALL_FILES = 1_000;
const SMALL_FILE_ROWS = 10_000;
export const OPTIMIZE_ROWS = SMALL_FILES * SMALL_FILE_ROWS;
const FILES_PER_COMMIT = 100;
/**
 * The table's `delta.targetFileSize`. 16 MiB rather than the 128 MiB default: OPTIMIZE cuts the
 * 10M rows (about 380 MB as Arrow) into ~33 files instead of 3, so the files a point query still
 * opens show what the Z-order's statistics prune.
 */
export const OPTIMIZE_TARGET_FILE_SIZE = 16 * 2 ** 20;
const ZORDER_SQL = `OPTIMIZE ${TABLE} ZORDER BY (id, customer)`;
const COMPACT_SQL = `OPTIMIZE ${TABLE}`;
const POINT_ID = 4_242_424;
const POINT_CUSTOMER = 12_345;
export const POINT_ID_SQL = `SELECT * FROM ${TABLE} WHERE id = ${POINT_ID}`;
export const POINT_CUSTOMER_SQL = `SELECT * FROM ${TABLE} WHERE customer = 'customer_${POINT_CUSTOMER}'`;

const optimizeDir = (dir: string) => path.join(dir, "optimize");
const optimizeFile = (dir: string) => path.join(dir, "optimize.json");

interface OptimizePrepared {
  /** Absolute paths of the 1,000 data files (physical column names). */
  dataFiles: string[];
  physical: Record<string, string>;
  buildMs: number;
  bytes: number;
  expectedCustomerRows: number;
  /** The point queries on the small files, run here so OPTIMIZE's process holds none of it. */
  before: PointQueries;
}

/** File f of the small-file table: ids f, f + 1000, f + 2000, … (every file spans every id). */
const smallFileIds = (f: number): Float64Array => {
  const ids = new Float64Array(SMALL_FILE_ROWS);
  for (let k = 0; k < SMALL_FILE_ROWS; k++) ids[k] = f + k * SMALL_FILES;
  return ids;
};

/**
 * Untimed: the keyed 10M rows as 1,000 files of 10,000 rows, in an order unrelated to the
 * Z-order columns (file f holds ids ≡ f mod 1,000, and customers are random), as a stream of
 * small appends leaves a table. The files are written by `writeDataFiles` (the append path's
 * writer: Parquet, statistics, row ids) and committed 100 at a time through `commitTransaction`
 * as blind appends: 1,000 `appendRows` calls would each reopen the table and replay its log.
 */
async function prepareOptimize(dir: string): Promise<CaseResult> {
  const env = await openEnv(optimizeDir(dir), { persistent: true });
  try {
    await ensureNamespace(env.ctx);
    await createTable(env.ctx, {
      name: TABLE,
      columns: COLUMNS,
      properties: { "delta.targetFileSize": String(OPTIMIZE_TARGET_FILE_SIZE) },
    });
    const start = performance.now();
    let bytes = 0;
    for (let c = 0; c < SMALL_FILES / FILES_PER_COMMIT; c++) {
      const t = await openTable(env.ctx, TABLE);
      const rowTracking = checkWriteProtocol(t.snapshot.protocol, t.snapshot.metadata);
      const readHwm = rowTracking ? rowTrackingHighWaterMark(t.snapshot) : undefined;
      let hwm = readHwm;
      const actions: Action[] = [];
      let highWaterMark: Action | undefined;
      for (let f = c * FILES_PER_COMMIT; f < (c + 1) * FILES_PER_COMMIT; f++) {
        const written = await writeDataFiles(env.ctx, {
          tableRoot: t.entry.location,
          metadata: t.snapshot.metadata,
          data: generateKeyed(smallFileIds(f)),
          version: t.snapshot.version + 1,
          rowIdHighWaterMark: hwm,
        });
        for (const a of written.actions) {
          if ("domainMetadata" in a) highWaterMark = a;
          else actions.push(a);
        }
        if (hwm !== undefined) hwm += SMALL_FILE_ROWS;
        bytes += Number(written.metrics.numOutputBytes);
      }
      if (highWaterMark !== undefined) actions.push(highWaterMark);
      await commitTransaction({
        store: env.ctx.store,
        arbiter: env.ctx.arbiter,
        tableId: t.entry.tableId,
        tableRoot: t.entry.location,
        tableName: TABLE,
        readVersion: t.snapshot.version,
        previousTimestamp: t.snapshot.timestamp,
        actions,
        commitInfo: {
          operation: "WRITE",
          operationParameters: { mode: "Append", partitionBy: "[]" },
          isBlindAppend: true,
        },
        isolationLevel: "Serializable",
        clock: env.ctx.clock,
        rowTracking,
        readRowIdHighWaterMark: readHwm,
      });
    }
    const buildMs = performance.now() - start;
    const t = await openTable(env.ctx, TABLE);
    const expectedCustomerRows = customerRows();
    const prepared: OptimizePrepared = {
      dataFiles: t.snapshot.files.map((f) =>
        path.join(env.storageDir, fileKey(t.snapshot.tableRoot, f.path)),
      ),
      physical: physicalNames(t),
      buildMs,
      bytes,
      expectedCustomerRows,
      before: await pointQueries(env, expectedCustomerRows),
    };
    writeFileSync(optimizeFile(dir), JSON.stringify(prepared));
    const ok =
      t.snapshot.files.length === SMALL_FILES &&
      prepared.before.id.ok &&
      prepared.before.customer.ok;
    return {
      ...result("prepare-optimize", OPTIMIZE_ROWS, [], ok, []),
      extra: { buildMs, bytes },
    };
  } finally {
    await env.close();
  }
}

export const readOptimizePrepared = (dir: string) =>
  JSON.parse(readFileSync(optimizeFile(dir), "utf8")) as OptimizePrepared;

/** The oracle of the customer point query: how many of the 10M rows have that customer. */
function customerRows(): number {
  const row: KeyedRow = { customer: null, cents: null, flag: null };
  let n = 0;
  for (let id = 0; id < OPTIMIZE_ROWS; id++)
    if (keyedRow(id, 0, row).customer === POINT_CUSTOMER) n++;
  return n;
}

interface PointQueries {
  id: Omit<PointQueryAnswer, "rows"> & { ok: boolean };
  customer: Omit<PointQueryAnswer, "rows"> & { ok: boolean };
}

async function pointQueries(env: BenchEnv, expectedCustomerRows: number): Promise<PointQueries> {
  const expected = arrowRow(generateKeyed([POINT_ID]), 0);
  const { rows: idRows, ...id } = await pointQuery(env, POINT_ID_SQL);
  const { rows: customerHits, ...customer } = await pointQuery(env, POINT_CUSTOMER_SQL);
  return {
    id: { ...id, ok: idRows.length === 1 && sameRow(idRows[0], expected) },
    customer: {
      ...customer,
      ok:
        customerHits.length === expectedCustomerRows &&
        customerHits.every((r) => r.customer === `customer_${POINT_CUSTOMER}`),
    },
  };
}

/**
 * `sql`, `OPTIMIZE bench.s.t ZORDER BY (id, customer)` or a plain `OPTIMIZE bench.s.t`, through
 * executeSql, once and unwarmed (it takes over a minute here), on a fresh copy of the prepared
 * table. Afterwards the two point queries, one per Z-ordered column, report the files and row
 * groups they read, as the prepare step did before, and the whole table is checked against the
 * oracle, unchanged.
 */
async function siltOptimize(dir: string, name: string, sql: string): Promise<CaseResult> {
  const { before, expectedCustomerRows } = readOptimizePrepared(dir);
  const work = path.join(dir, `run-${name}`);
  freshCopy(optimizeDir(dir), work);
  const env = await openEnv(work, { persistent: true });
  try {
    collect();
    const base = rssNow();
    let answer: SqlResult | undefined;
    const m = await measure(
      async () => {
        answer = await executeSql(env.ctx, { statement: sql });
      },
      undefined,
      ONCE,
    );
    const peakAfterRun = peakRss();
    const t = await openTable(env.ctx, TABLE);
    const after = await pointQueries(env, expectedCustomerRows);
    const actual = await siltKeyedChecks(env);
    const ok =
      after.id.ok &&
      after.customer.ok &&
      sameKeyed(
        actual,
        expectKeyed(OPTIMIZE_ROWS, () => 0),
      );
    const history = await describeHistory(env.ctx, TABLE, { limit: 1 });
    return {
      ...result(name, OPTIMIZE_ROWS, m.runs, ok, []),
      peakRssMb: peakAfterRun,
      baseRssMb: base,
      extra: {
        sql,
        filesBefore: SMALL_FILES,
        filesAfter: t.snapshot.files.length,
        bytesAfter: t.snapshot.files.reduce((n, f) => n + f.size, 0),
        answer: answer?.rows[0],
        metrics: history.rows[0]?.[9],
        before,
        after,
        expectedCustomerRows,
      },
    };
  } finally {
    await env.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * DuckDB's nearest equivalent: rewrite the 1,000 files sorted, `COPY (SELECT … ORDER BY id,
 * customer) TO …`. A sort by (id, customer) clusters on id alone (ids are unique), so only id
 * lookups prune afterwards; Z-order trades some of that for pruning on customer too.
 */
async function duckOptimize(dir: string): Promise<CaseResult> {
  const p = readOptimizePrepared(dir);
  const out = path.join(dir, "duck-optimize.parquet");
  const sql = copy(
    `SELECT ${logical(p.physical)} FROM ${files(p.dataFiles)} ORDER BY id, customer`,
    out,
  );
  const duck = await openDuck();
  try {
    collect();
    const base = rssNow();
    let peakAfterRuns = 0;
    let actual: KeyedChecks | undefined;
    const m = await measureFresh(
      async () => rmSync(out, { force: true }),
      async () => {
        await duck.conn.run(sql);
      },
      async (i) => {
        if (i === LAST_RUN) {
          peakAfterRuns = peakRss();
          actual = await duckKeyedChecks(duck, `read_parquet(${sqlString(out)})`);
        }
      },
    );
    const ok =
      actual !== undefined &&
      sameKeyed(
        actual,
        expectKeyed(OPTIMIZE_ROWS, () => 0),
      );
    return {
      ...result("duck-optimize", OPTIMIZE_ROWS, m.runs, ok, []),
      peakRssMb: peakAfterRuns,
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: { sql, bytesWritten: sizeOf(out), bytesRead: p.bytes },
    };
  } finally {
    closeDuck(duck);
    rmSync(out, { force: true });
  }
}

export const MAINTENANCE_CASES: Record<string, (dir: string) => Promise<CaseResult>> = {
  "prepare-checkpoint-1m": prepareCheckpoint1m,
  "silt-checkpoint-1m": (dir) => siltCheckpoint1m(dir, "silt-checkpoint-1m"),
  "silt-checkpoint-1m-heap256": (dir) => siltCheckpoint1m(dir, "silt-checkpoint-1m-heap256"),
  "silt-snapshot-1m": siltSnapshot1m,
  "prepare-optimize": prepareOptimize,
  "silt-optimize": (dir) => siltOptimize(dir, "silt-optimize", ZORDER_SQL),
  "silt-compact": (dir) => siltOptimize(dir, "silt-compact", COMPACT_SQL),
  "duck-optimize": duckOptimize,
};
