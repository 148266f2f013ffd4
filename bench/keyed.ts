/**
 * The 10M-row cases: the point lookup, and the row-level changes of issues 4 and 5 (REPLACE
 * WHERE on a partitioned and an unpartitioned table, DELETE, UPDATE, MERGE), each beside DuckDB
 * making the same change the only way plain Parquet allows: rewriting the files.
 *
 * The tables are built once per bench run (`prepare-keyed`, `prepare-keyed-day`) through the real
 * op path. A change case copies the prepared directory (object store + dynalite) before every run,
 * untimed, so the warm-up and the three measured runs all make the same change to the same table.
 */
import { cpSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DuckDBDateValue } from "@duckdb/node-api";
import type * as arrow from "apache-arrow";
import { writeParquet } from "../lib/data/parquet.ts";
import { appendRows } from "../lib/ops/append.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { describeHistory } from "../lib/ops/history.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { fileKey, readSnapshotRows } from "../lib/ops/read-files.ts";
import { executeSql } from "../lib/sql/execute.ts";
import type { SqlResult } from "../lib/sql/execute-ddl.ts";
import { runQuery } from "../lib/sql/query.ts";
import { parseStatement } from "../lib/sql/statement-parser.ts";
import {
  type CaseResult,
  closeDuck,
  collect,
  type Duck,
  LAST_RUN,
  measure,
  measureFresh,
  openDuck,
  peakRss,
  physicalNames,
  ROW_GROUP_SIZE,
  result,
  rssNow,
  sqlIdent,
  sqlString,
} from "./common.ts";
import {
  COLUMNS,
  DAY_X,
  DAY_X_INDEX,
  DAY_X_SQL,
  expectKeyed,
  generateKeyed,
  KEYED_DAYS,
  KeyedAccumulator,
  type KeyedChecks,
  keyedChecksOf,
  keyedChecksSql,
  keyedDay,
  keyedDayIndex,
  sameKeyed,
} from "./data.ts";
import { type BenchEnv, ensureNamespace, type IoCounts, openEnv } from "./setup.ts";

const FILES = 100;
const ROWS_PER_FILE = 100_000;
export const KEYED_ROWS = FILES * ROWS_PER_FILE;
/** Well inside file 42, away from its edges, so only that file's statistics can match. */
const LOOKUP_ID = 4_242_424;
export const TABLE = "bench.s.t";
export const LOOKUP_SQL = `SELECT * FROM ${TABLE} WHERE id = ${LOOKUP_ID}`;

// The changes. Each predicate is spread over the whole id range, so every file of the
// unpartitioned table holds some of the rows: statistics cannot narrow the files, which is the
// case deletion vectors are for and the one where DuckDB must rewrite everything.
const isDeleted = (id: number) => id % 1000 === 7;
const DELETE_SQL = `DELETE FROM ${TABLE} WHERE id % 1000 = 7`;
const isUpdated = (id: number) => id % 100 === 42;
const UPDATE_SQL = `UPDATE ${TABLE} SET customer = 'updated', amount = amount * 2 WHERE id % 100 = 42`;
/** MERGE source: every 200th id of the table (50,000 matches) plus 50,000 new ids after it. */
const MERGE_STRIDE = 200;
const MERGE_NEW = 50_000;
const isMergeMatch = (id: number) => id < KEYED_ROWS && id % MERGE_STRIDE === 13;
const MERGE_SQL = `MERGE INTO ${TABLE} AS t USING bench.s.src AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`;
const REPLACE_SQL = `INSERT INTO ${TABLE} REPLACE WHERE day = ${DAY_X_SQL} SELECT * FROM bench.s.newday`;

const keyedDir = (dir: string) => path.join(dir, "keyed");
const keyedFile = (dir: string) => path.join(dir, "keyed.json");
const dayDir = (dir: string) => path.join(dir, "keyed-day");
const dayFile = (dir: string) => path.join(dir, "keyed-day.json");
export const mergeSourceParquet = (dir: string) => path.join(dir, "merge-source.parquet");
export const newDayParquet = (dir: string) => path.join(dir, "newday.parquet");

/** One row of the five reference columns, comparable across Arrow and DuckDB values. */
export interface LookupRow {
  id: string;
  customer: string | null;
  amount: number | null;
  /** Days since 1970-01-01. */
  day: number | null;
  flag: boolean | null;
}

interface Build {
  buildMs: number;
  appendMs: number[];
  /** Parquet bytes of the 100 data files. */
  bytes: number;
}

export interface KeyedPrepared extends Build {
  lookupExpected: LookupRow;
  /** Absolute paths of the unpartitioned table's data files (physical column names). */
  dataFiles: string[];
  physical: Record<string, string>;
  newDayRows: number;
}

export interface DayPrepared extends Build {
  /** The partitioned table's data files with their `day` partition value (not in the file). */
  files: { path: string; day: string }[];
  physical: Record<string, string>;
}

const DAY_MS = 86_400_000;

export function arrowRow(table: arrow.Table, index: number): LookupRow {
  const get = (name: string): unknown => {
    const v = table.getChild(name);
    if (!v) throw new Error(`result has no column ${name}`);
    return v.get(index);
  };
  const day = get("day") as number | null;
  return {
    id: String(get("id")),
    customer: get("customer") as string | null,
    amount: get("amount") as number | null,
    day: day === null ? null : day / DAY_MS,
    flag: get("flag") as boolean | null,
  };
}

export const sameRow = (a: LookupRow, b: LookupRow): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

export const range = (from: number, n: number): Float64Array => {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = from + i;
  return out;
};

/** The ids of each day, ascending: the partitioned table's files. */
function idsByDay(): Float64Array[] {
  const counts = new Int32Array(KEYED_DAYS);
  for (let id = 0; id < KEYED_ROWS; id++) counts[keyedDayIndex(id)]++;
  const out = Array.from(counts, (c) => new Float64Array(c));
  const fill = new Int32Array(KEYED_DAYS);
  for (let id = 0; id < KEYED_ROWS; id++) {
    const d = keyedDayIndex(id);
    out[d][fill[d]++] = id;
  }
  return out;
}

/** The replacement rows of DAY_X: the same ids, new values. */
const newDayIds = (): Float64Array => idsByDay()[DAY_X_INDEX];

function mergeSourceIds(): Float64Array {
  const ids: number[] = [];
  for (let id = 0; id < KEYED_ROWS; id++) if (isMergeMatch(id)) ids.push(id);
  for (let i = 0; i < MERGE_NEW; i++) ids.push(KEYED_ROWS + i);
  return Float64Array.from(ids);
}

/** 100 appends through the real op path: a 101-commit log with checkpoints, files with stats. */
async function appendAll(
  env: BenchEnv,
  batches: number,
  idsOf: (i: number) => ArrayLike<number>,
): Promise<Build> {
  const appendMs: number[] = [];
  let bytes = 0;
  const start = performance.now();
  for (let i = 0; i < batches; i++) {
    const data = generateKeyed(idsOf(i));
    const t0 = performance.now();
    const r = await appendRows(env.ctx, TABLE, { arrow: data });
    appendMs.push(performance.now() - t0);
    bytes += r.numOutputBytes;
  }
  return { buildMs: performance.now() - start, appendMs, bytes };
}

/** A small Silt table holding `data`, the source a statement reads the new rows from. */
async function sourceTable(env: BenchEnv, name: string, data: arrow.Table): Promise<void> {
  await createTable(env.ctx, { name, columns: COLUMNS });
  await appendRows(env.ctx, name, { arrow: data });
}

/**
 * Untimed: the unpartitioned 10M-row table (file f = ids f*100k .. f*100k+99,999, days mixed),
 * shared by the lookup (in place) and the change cases (copied), plus the statements' sources,
 * as Silt tables and as Parquet files for DuckDB.
 */
async function prepareKeyed(dir: string): Promise<CaseResult> {
  const env = await openEnv(keyedDir(dir), { persistent: true });
  try {
    await ensureNamespace(env.ctx);
    await createTable(env.ctx, { name: TABLE, columns: COLUMNS });
    const build = await appendAll(env, FILES, (f) => range(f * ROWS_PER_FILE, ROWS_PER_FILE));
    const mergeSource = generateKeyed(mergeSourceIds(), () => 1);
    await sourceTable(env, "bench.s.src", mergeSource);
    writeFileSync(
      mergeSourceParquet(dir),
      writeParquet(mergeSource, { rowGroupSize: ROW_GROUP_SIZE }),
    );
    const newDay = generateKeyed(newDayIds(), () => 1);
    await sourceTable(env, "bench.s.newday", newDay);
    writeFileSync(newDayParquet(dir), writeParquet(newDay, { rowGroupSize: ROW_GROUP_SIZE }));

    const t = await openTable(env.ctx, TABLE);
    const prepared: KeyedPrepared = {
      ...build,
      lookupExpected: arrowRow(generateKeyed([LOOKUP_ID]), 0),
      dataFiles: t.snapshot.files.map((f) =>
        path.join(env.storageDir, fileKey(t.snapshot.tableRoot, f.path)),
      ),
      physical: physicalNames(t),
      newDayRows: newDay.numRows,
    };
    writeFileSync(keyedFile(dir), JSON.stringify(prepared));
    const before = await checkBefore(
      env,
      `(SELECT ${logical(prepared.physical)} FROM ${files(prepared.dataFiles)})`,
    );
    const ok = before.ok && t.snapshot.version === FILES && t.snapshot.files.length === FILES;
    return {
      ...result("prepare-keyed", KEYED_ROWS, [], ok, []),
      extra: { buildMs: build.buildMs, appendMs: build.appendMs, bytes: build.bytes, before },
    };
  } finally {
    await env.close();
  }
}

/** Untimed: the same 10M rows partitioned by day, one append (one file) per day. */
async function prepareKeyedDay(dir: string): Promise<CaseResult> {
  const env = await openEnv(dayDir(dir), { persistent: true });
  try {
    await ensureNamespace(env.ctx);
    await createTable(env.ctx, { name: TABLE, columns: COLUMNS, partitionedBy: ["day"] });
    const days = idsByDay();
    const build = await appendAll(env, KEYED_DAYS, (d) => days[d]);
    await sourceTable(
      env,
      "bench.s.newday",
      generateKeyed(days[DAY_X_INDEX], () => 1),
    );
    const t = await openTable(env.ctx, TABLE);
    const physical = physicalNames(t);
    const prepared: DayPrepared = {
      ...build,
      files: t.snapshot.files.map((f) => ({
        path: path.join(env.storageDir, fileKey(t.snapshot.tableRoot, f.path)),
        day: String(f.partitionValues[physical.day] ?? f.partitionValues.day),
      })),
      physical,
    };
    writeFileSync(dayFile(dir), JSON.stringify(prepared));
    const before = await checkBefore(env, `(${dayFilesRelation(physical, prepared.files)})`);
    const ok =
      before.ok && t.snapshot.version === KEYED_DAYS && t.snapshot.files.length === KEYED_DAYS;
    return {
      ...result("prepare-keyed-day", KEYED_ROWS, [], ok, []),
      extra: { buildMs: build.buildMs, appendMs: build.appendMs, bytes: build.bytes, before },
    };
  } finally {
    await env.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Point lookup: the unpartitioned table's files have disjoint id ranges, so statistics prune.

export interface PointQueryAnswer {
  rows: LookupRow[];
  filesRead: number;
  rowGroupsRead: number;
  skipped: number;
}

/** A SELECT of the five columns through parseStatement + runQuery, with its scan metrics. */
export async function pointQuery(env: BenchEnv, sql: string): Promise<PointQueryAnswer> {
  const st = parseStatement(sql);
  if (st.kind !== "query") throw new Error("not a query");
  const r = await runQuery(env.ctx, st.query, { defaults: {}, conf: {}, now: Date.now() });
  const rows: LookupRow[] = [];
  for (let i = 0; i < r.table.numRows; i++) rows.push(arrowRow(r.table, i));
  return {
    rows,
    filesRead: r.scan?.filesRead ?? -1,
    rowGroupsRead: r.scan?.rowGroupsRead ?? -1,
    skipped: r.scan?.rowGroupsSkipped ?? -1,
  };
}

async function siltLookup(dir: string): Promise<CaseResult> {
  const prepared = JSON.parse(readFileSync(keyedFile(dir), "utf8")) as KeyedPrepared;
  const env = await openEnv(keyedDir(dir), { persistent: true });
  try {
    collect();
    const base = rssNow();
    const answers: PointQueryAnswer[] = [];
    // Every run parses and plans anew and reopens the table (catalog, arbiter, log replay), as a
    // request would; only the process, and so the JIT and the wasm instance, is shared.
    const m = await measure(async () => {
      answers.push(await pointQuery(env, LOOKUP_SQL));
    });
    const ok = answers.every(
      (a) => a.rows.length === 1 && sameRow(a.rows[0], prepared.lookupExpected),
    );
    const filesRead = Math.max(...answers.map((a) => a.filesRead));
    const last = answers[answers.length - 1];
    return {
      ...result("silt-lookup", KEYED_ROWS, m.runs, ok, []),
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: {
        filesRead,
        filesReadPerRun: answers.map((a) => a.filesRead),
        rowGroupsRead: last.rowGroupsRead,
        rowGroupsSkipped: last.skipped,
        row: last.rows[0],
      },
    };
  } finally {
    await env.close();
  }
}

async function duckLookup(dir: string): Promise<CaseResult> {
  const prepared = JSON.parse(readFileSync(keyedFile(dir), "utf8")) as KeyedPrepared;
  const duck = await openDuck();
  try {
    const q = (n: string) => sqlIdent(prepared.physical[n]);
    const sql = `SELECT * FROM read_parquet([${prepared.dataFiles.map(sqlString).join(", ")}]) WHERE ${q("id")} = ${LOOKUP_ID}`;
    collect();
    const base = rssNow();
    const answers: LookupRow[][] = [];
    const m = await measure(async () => {
      const reader = await duck.conn.runAndReadAll(sql);
      const names = reader.columnNames();
      const col = (n: string) => names.indexOf(prepared.physical[n]);
      answers.push(
        reader.getRows().map((r) => {
          const day = r[col("day")];
          return {
            id: String(r[col("id")]),
            customer: r[col("customer")] as string | null,
            amount: r[col("amount")] as number | null,
            day: day instanceof DuckDBDateValue ? day.days : null,
            flag: r[col("flag")] as boolean | null,
          };
        }),
      );
    });
    const ok = answers.every((a) => a.length === 1 && sameRow(a[0], prepared.lookupExpected));
    return {
      ...result("duck-lookup", KEYED_ROWS, m.runs, ok, []),
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: { threads: duck.threads, version: duck.version },
    };
  } finally {
    closeDuck(duck);
  }
}

// ---------------------------------------------------------------------------------------------
// Row-level changes.

/** What a change run moved and what the change reported; stored as `extra` of the case. */
export interface ChangeExtra {
  /** Bytes read / written by the last measured run (identical across runs, checked). */
  bytesRead: number;
  bytesWritten: number;
  /** Silt: `_delta_log/` part of the bytes, and the operation's history metrics. */
  logBytesRead?: number;
  logBytesWritten?: number;
  metrics?: Record<string, string | null>;
  /** The process's peak RSS (MB) right after the runs, before the check read the table back. */
  peakRssAfterRunsMb: number;
  expected: KeyedChecks;
  actual?: KeyedChecks;
  /** The statement's own row counts matched the change, on every run. */
  countsOk: boolean;
  /** Time the result check took (untimed), for budgeting the bench. */
  checkMs: number;
  sql: string;
}

export interface Change {
  /** Case name suffix; also the work directory. */
  name: string;
  /** The prepared environment each Silt run starts from. */
  source: (dir: string) => string;
  sql: string;
  /** The statement's answer names the right number of rows. */
  counts: (r: SqlResult, prepared: KeyedPrepared) => boolean;
  expected: () => KeyedChecks;
  /** DuckDB's statement writing `out`, and the table files (with their sizes) it reads. */
  duck: (dir: string, out: string) => { sql: string; reads: string[] };
  /** The relation (logical column names) DuckDB's table is after the change. */
  duckAfter: (dir: string, out: string) => string;
}

const firstRow = (r: SqlResult): unknown[] => r.rows[0] ?? [];

export const CHANGES: Change[] = [
  {
    name: "replace-day",
    source: dayDir,
    sql: REPLACE_SQL,
    counts: (r, p) => r.numAffectedRows === p.newDayRows,
    expected: () => expectKeyed(KEYED_ROWS, (id) => (keyedDay(id) === DAY_X ? 1 : 0)),
    // A partitioned Parquet table replaces a day by writing that day's file anew: the new rows
    // are all it reads, and the old file is simply dropped from the table.
    duck: (dir, out) => ({
      sql: copy(
        `SELECT id, customer, amount, flag FROM read_parquet(${sqlString(newDayParquet(dir))})`,
        out,
      ),
      reads: [newDayParquet(dir)],
    }),
    duckAfter: (dir, out) => {
      const p = readDay(dir);
      const kept = p.files.filter((f) => f.day !== isoDay(DAY_X));
      return `(${dayFilesRelation(p.physical, kept)}
               UNION ALL
               SELECT id, customer, amount, ${DAY_X_SQL} AS day, flag FROM read_parquet(${sqlString(out)}))`;
    },
  },
  {
    name: "replace-day-unpartitioned",
    source: keyedDir,
    sql: REPLACE_SQL,
    counts: (r, p) => r.numAffectedRows === p.newDayRows,
    expected: () => expectKeyed(KEYED_ROWS, (id) => (keyedDay(id) === DAY_X ? 1 : 0)),
    // Rows where the predicate is NULL stay, as in Delta; hence IS NOT TRUE rather than NOT.
    duck: (dir, out) => {
      const p = readKeyed(dir);
      return {
        sql: copy(
          `SELECT ${logical(p.physical)} FROM ${files(p.dataFiles)} WHERE (${sqlIdent(p.physical.day)} = ${DAY_X_SQL}) IS NOT TRUE
           UNION ALL SELECT id, customer, amount, day, flag FROM read_parquet(${sqlString(newDayParquet(dir))})`,
          out,
        ),
        reads: [...p.dataFiles, newDayParquet(dir)],
      };
    },
    duckAfter: (_dir, out) => `read_parquet(${sqlString(out)})`,
  },
  {
    name: "delete",
    source: keyedDir,
    sql: DELETE_SQL,
    counts: (r) => Number(firstRow(r)[0]) === KEYED_ROWS / 1000,
    expected: () => expectKeyed(KEYED_ROWS, (id) => (isDeleted(id) ? undefined : 0)),
    duck: (dir, out) => {
      const p = readKeyed(dir);
      return {
        sql: copy(
          `SELECT ${logical(p.physical)} FROM ${files(p.dataFiles)} WHERE (${sqlIdent(p.physical.id)} % 1000 = 7) IS NOT TRUE`,
          out,
        ),
        reads: p.dataFiles,
      };
    },
    duckAfter: (_dir, out) => `read_parquet(${sqlString(out)})`,
  },
  {
    name: "update",
    source: keyedDir,
    sql: UPDATE_SQL,
    counts: (r) => Number(firstRow(r)[0]) === KEYED_ROWS / 100,
    expected: () => expectKeyed(KEYED_ROWS, () => 0, isUpdated),
    duck: (dir, out) => {
      const p = readKeyed(dir);
      const q = (n: string) => sqlIdent(p.physical[n]);
      const hit = `${q("id")} % 100 = 42`;
      return {
        sql: copy(
          `SELECT ${q("id")} AS id,
                  CASE WHEN ${hit} THEN 'updated' ELSE ${q("customer")} END AS customer,
                  CASE WHEN ${hit} THEN ${q("amount")} * 2 ELSE ${q("amount")} END AS amount,
                  ${q("day")} AS day, ${q("flag")} AS flag
             FROM ${files(p.dataFiles)}`,
          out,
        ),
        reads: p.dataFiles,
      };
    },
    duckAfter: (_dir, out) => `read_parquet(${sqlString(out)})`,
  },
  {
    name: "merge",
    source: keyedDir,
    sql: MERGE_SQL,
    counts: (r) => {
      const [affected, updated, deleted, inserted] = firstRow(r).map(Number);
      const matched = KEYED_ROWS / MERGE_STRIDE;
      return (
        affected === matched + MERGE_NEW &&
        updated === matched &&
        deleted === 0 &&
        inserted === MERGE_NEW
      );
    },
    expected: () =>
      expectKeyed(KEYED_ROWS + MERGE_NEW, (id) => (id >= KEYED_ROWS || isMergeMatch(id) ? 1 : 0)),
    // UPDATE SET * / INSERT *: wherever the source has the id, its row wins.
    duck: (dir, out) => {
      const p = readKeyed(dir);
      const pick = (n: string) => `CASE WHEN s.id IS NULL THEN t.${n} ELSE s.${n} END AS ${n}`;
      return {
        sql: copy(
          `SELECT coalesce(s.id, t.id) AS id, ${["customer", "amount", "day", "flag"].map(pick).join(", ")}
             FROM (SELECT ${logical(p.physical)} FROM ${files(p.dataFiles)}) t
             FULL OUTER JOIN read_parquet(${sqlString(mergeSourceParquet(dir))}) s ON t.id = s.id`,
          out,
        ),
        reads: [...p.dataFiles, mergeSourceParquet(dir)],
      };
    },
    duckAfter: (_dir, out) => `read_parquet(${sqlString(out)})`,
  },
];

export const readKeyed = (dir: string) =>
  JSON.parse(readFileSync(keyedFile(dir), "utf8")) as KeyedPrepared;
export const readDay = (dir: string) =>
  JSON.parse(readFileSync(dayFile(dir), "utf8")) as DayPrepared;

const isoDay = (days: number): string => new Date(days * DAY_MS).toISOString().slice(0, 10);

/** The partitioned table's files with `day` taken from the log's partition values, by path. */
function dayFilesRelation(physical: Record<string, string>, files: DayPrepared["files"]): string {
  const mapping = files.map((f) => `(${sqlString(f.path)}, DATE ${sqlString(f.day)})`);
  return `SELECT ${logical(physical, ["id", "customer", "amount"])}, m.day, ${sqlIdent(physical.flag)} AS flag
            FROM read_parquet([${files.map((f) => sqlString(f.path)).join(", ")}], filename = true) f
            JOIN (VALUES ${mapping.join(", ")}) m(fname, day) ON f.filename = m.fname`;
}

/**
 * The prepared table before any change, as each engine reads it, against the oracle: the "before"
 * of every change case.
 */
async function checkBefore(
  env: BenchEnv,
  duckRelation: string,
): Promise<{
  ok: boolean;
  silt: KeyedChecks;
  duck: KeyedChecks;
}> {
  const expected = expectKeyed(KEYED_ROWS, () => 0);
  const silt = await siltKeyedChecks(env);
  const duck = await openDuck();
  try {
    const d = await duckKeyedChecks(duck, duckRelation);
    return { ok: sameKeyed(silt, expected) && sameKeyed(d, expected), silt, duck: d };
  } finally {
    closeDuck(duck);
  }
}

export const files = (paths: string[]) => `read_parquet([${paths.map(sqlString).join(", ")}])`;

/** Physical columns selected under their logical names. */
export function logical(
  physical: Record<string, string>,
  names = COLUMNS.map((c) => c.name),
): string {
  return names.map((n) => `${sqlIdent(physical[n])} AS ${n}`).join(", ");
}

/** The one COPY form of every DuckDB change: the settings of the append case. */
export const copy = (select: string, out: string): string =>
  `COPY (${select}) TO ${sqlString(out)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`;

export const sizeOf = (p: string): number => statSync(p).size;

/** A fresh copy of a prepared environment (object store and dynalite's LevelDB). */
export function freshCopy(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}

/**
 * The table as Silt reads it (deletion vectors applied, partition values filled in), a few files
 * at a time. Not through SQL: Silt's aggregate path holds every row at once (SELECT of these nine
 * aggregates over 10M rows took 37 s and 3.2 GB here), which would dwarf the change measured.
 */
export async function siltKeyedChecks(env: BenchEnv): Promise<KeyedChecks> {
  const t = await openTable(env.ctx, TABLE);
  const acc = new KeyedAccumulator();
  const step = 4;
  for (let i = 0; i < t.snapshot.files.length; i += step) {
    const part = { ...t.snapshot, files: t.snapshot.files.slice(i, i + step) };
    acc.add((await readSnapshotRows(env.ctx.store, part)).table);
  }
  return acc.result();
}

async function siltChange(dir: string, c: Change): Promise<CaseResult> {
  const prepared = readKeyed(dir);
  const expected = c.expected();
  const work = path.join(dir, `run-${c.name}`);
  let env: BenchEnv | undefined;
  let answer: SqlResult | undefined;
  const io: IoCounts[] = [];
  let countsOk = true;
  let peakAfterRuns = 0;
  let actual: KeyedChecks | undefined;
  let metrics: Record<string, string | null> | undefined;
  let checkMs = 0;
  collect();
  const base = rssNow();
  try {
    const m = await measureFresh(
      async () => {
        freshCopy(c.source(dir), work);
        env = await openEnv(work, { persistent: true });
        env.io.reset();
      },
      async () => {
        answer = await executeSql(env!.ctx, { statement: c.sql });
      },
      async (i) => {
        const e = env!;
        io.push({ ...e.io.counts });
        countsOk &&= c.counts(answer!, prepared);
        if (i === LAST_RUN) {
          // Taken before the table is read back: the check's scan is not the change's memory.
          peakAfterRuns = peakRss();
          const c0 = performance.now();
          const history = await describeHistory(e.ctx, TABLE, { limit: 1 });
          metrics = history.rows[0]?.[9] as Record<string, string | null> | undefined;
          actual = await siltKeyedChecks(e);
          checkMs = performance.now() - c0;
        }
        await e.close();
        env = undefined;
      },
    );
    const last = io[io.length - 1];
    // Commit JSON carries timings (executionTimeMs, …), so log bytes may differ by a few digits;
    // data bytes must not.
    const dataBytes = (x: IoCounts) =>
      `${x.bytesRead - x.logBytesRead}/${x.bytesWritten - x.logBytesWritten}`;
    const steady = io.every((x) => dataBytes(x) === dataBytes(last));
    const ok = countsOk && actual !== undefined && sameKeyed(actual, expected);
    const extra: ChangeExtra = {
      bytesRead: last.bytesRead,
      bytesWritten: last.bytesWritten,
      logBytesRead: last.logBytesRead,
      logBytesWritten: last.logBytesWritten,
      metrics,
      peakRssAfterRunsMb: peakAfterRuns,
      expected,
      actual,
      countsOk,
      checkMs,
      sql: c.sql,
    };
    const notes = steady
      ? []
      : [`data bytes read/written differ between runs: ${io.map(dataBytes).join(", ")}`];
    return {
      ...result(`silt-${c.name}`, KEYED_ROWS, m.runs, ok, notes),
      peakRssMb: peakAfterRuns,
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: extra as unknown as Record<string, unknown>,
    };
  } finally {
    await env?.close();
    rmSync(work, { recursive: true, force: true });
  }
}

export async function duckKeyedChecks(duck: Duck, relation: string): Promise<KeyedChecks> {
  const reader = await duck.conn.runAndReadAll(`SELECT ${keyedChecksSql()} FROM ${relation}`);
  return keyedChecksOf(reader.getRows()[0] ?? []);
}

async function duckChange(dir: string, c: Change): Promise<CaseResult> {
  const expected = c.expected();
  const out = path.join(dir, `duck-${c.name}.parquet`);
  const { sql, reads } = c.duck(dir, out);
  const bytesRead = reads.reduce((n, p) => n + sizeOf(p), 0);
  const written: number[] = [];
  let peakAfterRuns = 0;
  let actual: KeyedChecks | undefined;
  let checkMs = 0;
  const duck = await openDuck();
  try {
    collect();
    const base = rssNow();
    // Inputs are only read, so each run starts from the same table; only the output goes.
    const m = await measureFresh(
      async () => rmSync(out, { force: true }),
      async () => {
        await duck.conn.run(sql);
      },
      async (i) => {
        written.push(sizeOf(out));
        if (i === LAST_RUN) {
          peakAfterRuns = peakRss();
          const c0 = performance.now();
          actual = await duckKeyedChecks(duck, c.duckAfter(dir, out));
          checkMs = performance.now() - c0;
        }
      },
    );
    const ok = actual !== undefined && sameKeyed(actual, expected);
    const extra: ChangeExtra = {
      bytesRead,
      bytesWritten: written[written.length - 1],
      peakRssAfterRunsMb: peakAfterRuns,
      expected,
      actual,
      countsOk: true,
      checkMs,
      sql,
    };
    return {
      ...result(`duck-${c.name}`, KEYED_ROWS, m.runs, ok, []),
      peakRssMb: peakAfterRuns,
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: extra as unknown as Record<string, unknown>,
    };
  } finally {
    closeDuck(duck);
    rmSync(out, { force: true });
  }
}

export const KEYED_CASES: Record<string, (dir: string) => Promise<CaseResult>> = {
  "prepare-keyed": prepareKeyed,
  "prepare-keyed-day": prepareKeyedDay,
  "silt-lookup": siltLookup,
  "duck-lookup": duckLookup,
  ...Object.fromEntries(
    CHANGES.flatMap((c) => [
      [`silt-${c.name}`, (dir: string) => siltChange(dir, c)],
      [`duck-${c.name}`, (dir: string) => duckChange(dir, c)],
    ]),
  ),
};
