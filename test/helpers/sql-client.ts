/**
 * SQL through the harness's HTTP app, with the checks SQL-level tests share: a statement must
 * succeed, a table's history as objects, and a failing statement leaves version and rows as
 * they were.
 */
import { expect } from "vitest";
import type { ApiResponse, SiltHarness } from "./silt-harness.ts";

export type SqlResult = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  version?: number;
};

/** `silt` is read on each call, so the client can be made before beforeAll starts it. */
export function sqlClient(silt: () => SiltHarness, defaults: { catalog: string; schema: string }) {
  const sql = (statement: string, conf?: Record<string, string>) =>
    silt().call("POST", "/api/v1/sql", { statement, ...defaults, conf });
  const ok = async (statement: string, conf?: Record<string, string>): Promise<SqlResult> => {
    const res = await sql(statement, conf);
    expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
    return res.body as SqlResult;
  };
  const history = async (table: string) => {
    const h = await ok(`DESCRIBE HISTORY ${table}`);
    const at = (n: string) => h.columns.findIndex((c) => c.name === n);
    return h.rows.map((r) => ({
      version: r[at("version")] as number,
      operation: r[at("operation")] as string,
      parameters: r[at("operationParameters")] as Record<string, string>,
      metrics: r[at("operationMetrics")] as Record<string, string>,
    }));
  };
  const rows = async (table: string) => (await ok(`SELECT * FROM ${table} ORDER BY 1`)).rows;
  const failsUnchanged = async (
    table: string,
    errorClass: string,
    run: () => Promise<ApiResponse>,
  ) => {
    const before = { v: (await history(table))[0]!.version, rows: await rows(table) };
    const res = await run();
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    expect(res.body.error_class, JSON.stringify(res.body)).toBe(errorClass);
    expect((await history(table))[0]!.version).toBe(before.v);
    expect(await rows(table)).toEqual(before.rows);
    return res.body as { error_class: string; message: string; sqlstate?: string };
  };
  return { sql, ok, history, rows, failsUnchanged };
}
