/**
 * SQL aggregation over the keyed 10M-row table (`prepare-keyed`): a GROUP BY of 100 days and a
 * global aggregate, on Silt (`runQuery`, streaming the files) and on DuckDB over the same Parquet
 * files (physical names aliased to the logical ones). Each side returns its rows as text so the
 * two can be checked against each other.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { arrowToRows } from "../lib/data/arrow-to-json.ts";
import { runQuery } from "../lib/sql/query.ts";
import { parseStatement } from "../lib/sql/statement-parser.ts";
import {
  type CaseResult,
  closeDuck,
  collect,
  measure,
  openDuck,
  result,
  rssNow,
} from "./common.ts";
import { files, KEYED_ROWS, logical, TABLE } from "./keyed.ts";
import { openEnv } from "./setup.ts";

export const AGGREGATE_SQL: Record<string, string> = {
  "agg-group": `SELECT day, count(*), count(customer), sum(amount), avg(amount), min(id), max(id) FROM ${TABLE} GROUP BY day`,
  "agg-global": `SELECT count(*), sum(amount), min(day), max(day) FROM ${TABLE}`,
};

interface Prepared {
  dataFiles: string[];
  physical: Record<string, string>;
}

const prepared = (dir: string): Prepared =>
  JSON.parse(readFileSync(path.join(dir, "keyed.json"), "utf8")) as Prepared;

/** Rows as sorted text, doubles rounded to 6 significant digits (the engines sum in other orders). */
export function canonicalRows(rows: unknown[][]): string[] {
  const cell = (v: unknown) =>
    typeof v === "number" && !Number.isInteger(v) ? v.toPrecision(6) : String(v);
  return rows.map((r) => r.map(cell).join("|")).sort();
}

async function siltAggregate(dir: string, name: string): Promise<CaseResult> {
  const env = await openEnv(path.join(dir, "keyed"), { persistent: true });
  try {
    collect();
    const base = rssNow();
    let rows: string[] = [];
    const m = await measure(async () => {
      const st = parseStatement(AGGREGATE_SQL[name]);
      if (st.kind !== "query") throw new Error("not a query");
      const r = await runQuery(env.ctx, st.query, { defaults: {}, conf: {}, now: Date.now() });
      rows = canonicalRows(arrowToRows(r.table));
    });
    return {
      ...result(`silt-${name}`, KEYED_ROWS, m.runs, rows.length > 0, []),
      warmupMs: m.warmupMs,
      baseRssMb: base,
      extra: { rows },
    };
  } finally {
    await env.close();
  }
}

async function duckAggregate(dir: string, name: string): Promise<CaseResult> {
  const p = prepared(dir);
  const duck = await openDuck();
  try {
    const sql = AGGREGATE_SQL[name].replace(
      TABLE,
      `(SELECT ${logical(p.physical)} FROM ${files(p.dataFiles)})`,
    );
    let rows: string[] = [];
    const m = await measure(async () => {
      const reader = await duck.conn.runAndReadAll(sql);
      rows = canonicalRows(
        reader
          .getRows()
          .map((r) =>
            r.map((v) =>
              typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : v?.toString(),
            ),
          ),
      );
    });
    return {
      ...result(`duck-${name}`, KEYED_ROWS, m.runs, rows.length > 0, []),
      warmupMs: m.warmupMs,
      extra: { rows },
    };
  } finally {
    closeDuck(duck);
  }
}

export const AGGREGATE_CASES: Record<string, (dir: string) => Promise<CaseResult>> =
  Object.fromEntries(
    Object.keys(AGGREGATE_SQL).flatMap((name) => [
      [`silt-${name}`, (dir: string) => siltAggregate(dir, name)],
      [`duck-${name}`, (dir: string) => duckAggregate(dir, name)],
    ]),
  );
