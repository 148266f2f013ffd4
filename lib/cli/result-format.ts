/**
 * A statement's answer as `silt sql` prints it. The answer is /api/v1/sql's: typed columns, rows
 * of JSON values (Silt's encodings: decimals and 64-bit integers past 2^53 as strings, dates and
 * timestamps as ISO text, binary as base64), and for statements that return no rows what they
 * did (`version`, `tableId`, …).
 *
 * - box: a grid, then a line with the row count or what the statement did;
 * - csv: a header and the rows (RFC 4180 quoting, NULL as an empty field, nested values as JSON);
 * - jsonl: one JSON object per row, keyed by column name;
 * - arrow: one Arrow IPC stream, with the columns' types.
 * csv, jsonl and arrow print rows only: a statement that answers no columns prints nothing.
 */
import * as arrow from "apache-arrow";
import { rowsToArrow } from "../data/json-to-arrow.ts";
import { structField, structType } from "../delta/schema.ts";
import { parseSparkTypeName } from "../delta/type-name-parser.ts";

export const FORMATS = ["box", "csv", "jsonl", "arrow"] as const;
export type Format = (typeof FORMATS)[number];

export interface SqlAnswer {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  next_page_token?: string;
  [detail: string]: unknown;
}

export function formatAnswer(answer: SqlAnswer, format: Format): string | Uint8Array {
  switch (format) {
    case "box":
      return boxed(answer);
    case "csv":
      return answer.columns.length === 0 ? "" : csv(answer);
    case "jsonl":
      return answer.rows.map((row) => `${JSON.stringify(rowObject(answer, row))}\n`).join("");
    case "arrow":
      return answer.columns.length === 0 ? "" : arrowStream(answer);
  }
}

function boxed(answer: SqlAnswer): string {
  const grid =
    answer.columns.length === 0
      ? ""
      : formatTable(
          answer.columns.map((c) => c.name),
          answer.rows,
        );
  return `${grid}${summary(answer)}\n`;
}

/** "2 rows", or what a statement without rows did: "OK (version 3, created true)". */
function summary(answer: SqlAnswer): string {
  const { columns, rows, next_page_token: _, ...details } = answer;
  const done = Object.entries(details).map(([k, v]) => `${k} ${cellText(v)}`);
  if (columns.length > 0) {
    const count = `${rows.length} ${rows.length === 1 ? "row" : "rows"}`;
    return done.length === 0 ? count : `${count} (${done.join(", ")})`;
  }
  return done.length === 0 ? "OK" : `OK (${done.join(", ")})`;
}

/**
 * A plain-text grid, like Spark's `show()`. Line breaks and tabs in a value are shown escaped
 * (`\n`), which keeps each row on one line.
 */
export function formatTable(header: string[], rows: unknown[][]): string {
  const cells = rows.map((r) => r.map((v) => escapeBreaks(cellText(v))));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = `+${widths.map((w) => "-".repeat(w + 2)).join("+")}+\n`;
  const fmt = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |\n`;
  return line + fmt(header) + line + cells.map(fmt).join("") + line;
}

const BREAKS: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const escapeBreaks = (text: string) => text.replace(/[\n\r\t]/g, (c) => BREAKS[c]);

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function csv(answer: SqlAnswer): string {
  const field = (v: unknown) => {
    if (v === null || v === undefined) return "";
    const text = typeof v === "object" ? JSON.stringify(v) : String(v);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const line = (values: unknown[]) => `${values.map(field).join(",")}\r\n`;
  return line(answer.columns.map((c) => c.name)) + answer.rows.map(line).join("");
}

function rowObject(answer: SqlAnswer, row: unknown[]): Record<string, unknown> {
  return Object.fromEntries(answer.columns.map((c, i) => [c.name, row[i]]));
}

function arrowStream(answer: SqlAnswer): Uint8Array {
  const schema = structType(
    answer.columns.map((c) => structField(c.name, parseSparkTypeName(c.type), true)),
  );
  return arrow.tableToIPC(rowsToArrow(answer.rows, schema), "stream");
}
