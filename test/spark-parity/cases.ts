/**
 * Spark-parity case files: test/spark-parity/cases/<topic>.sql, each a sequence of statements run
 * in order, in real Spark by generate.ts (answers kept in expected/<topic>.json) and in Silt by
 * test/spark-parity.test.ts, which compares the two.
 *
 * Each statement starts with a directive line saying what must agree:
 *   -- statement        both succeed (setup, DML whose answer is not compared)
 *   -- query            both succeed with the same column names and types and the same rows, in
 *                       any order
 *   -- query ordered    the same, rows in the same order
 *   -- error            both refuse it with the same error class
 * The lines up to the next directive are the statement (a trailing `;` is dropped). Lines before the
 * first directive are the file's description. Statements name tables by one or two parts: the
 * topic is the default schema in both engines, and a schema a topic creates is its own.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";

export const CASES_DIR = join(import.meta.dirname, "cases");
export const EXPECTED_DIR = join(import.meta.dirname, "expected");

export type Directive = "statement" | "query" | "query ordered" | "error";

export interface Case {
  directive: Directive;
  sql: string;
  /** 1-based line of the directive in the case file. */
  line: number;
}

export interface Column {
  name: string;
  type: string;
}

export type SparkAnswer =
  | { columns: Column[]; rows: unknown[][] }
  | { error: string | null; message?: string };

export interface Expected {
  topic: string;
  spark: string;
  delta: string;
  cases: (Case & { spark: SparkAnswer })[];
}

const DIRECTIVE = /^-- (statement|query ordered|query|error)\s*$/;

export function topics(): string[] {
  return readdirSync(CASES_DIR)
    .filter((f) => f.endsWith(".sql"))
    .map((f) => basename(f, ".sql"))
    .sort();
}

export function readCases(topic: string): Case[] {
  const lines = readFileSync(join(CASES_DIR, `${topic}.sql`), "utf8").split("\n");
  const cases: Case[] = [];
  let current: { directive: Directive; line: number; body: string[] } | undefined;
  const close = () => {
    if (!current) return;
    const sql = current.body.join("\n").trim().replace(/;$/, "").trim();
    if (sql === "")
      throw new Error(`${topic}.sql:${current.line}: a directive without a statement`);
    cases.push({ directive: current.directive, sql, line: current.line });
  };
  lines.forEach((text, i) => {
    const m = DIRECTIVE.exec(text);
    if (m) {
      close();
      current = { directive: m[1] as Directive, line: i + 1, body: [] };
    } else if (current) {
      current.body.push(text);
    }
  });
  close();
  return cases;
}

export function readExpected(topic: string): Expected | undefined {
  try {
    return JSON.parse(readFileSync(join(EXPECTED_DIR, `${topic}.json`), "utf8")) as Expected;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Why Spark's answer does not fit the directive its case declares, or undefined when it does. */
export function directiveMismatch(c: Case, answer: SparkAnswer): string | undefined {
  if (c.directive === "error") {
    if (!("error" in answer)) return "the case expects an error but Spark succeeded";
    if (answer.error === null) return `Spark failed without an error class: ${answer.message}`;
    return undefined;
  }
  if ("error" in answer) return `Spark refused it: ${answer.error ?? answer.message}`;
  return undefined;
}
