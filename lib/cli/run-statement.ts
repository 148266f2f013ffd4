/**
 * One statement through POST /api/v1/sql, answered whole.
 *
 * 1. Ask for the whole answer: the local server streams any size.
 * 2. A deployed function answers at most 6 MB, and refuses a bigger answer with
 *    RESULT_TOO_LARGE naming a page size that fits: then ask again a page at a time (max_rows,
 *    each page's next_page_token passed back), every page reading the table versions the
 *    first one read. Only queries are refused that way, so nothing that writes runs twice.
 */
import { SiltError } from "../errors.ts";
import type { Connection } from "./connection.ts";
import type { SqlAnswer } from "./result-format.ts";

export interface SessionDefaults {
  catalog?: string;
  schema?: string;
}

export async function runStatement(
  conn: Connection,
  statement: string,
  defaults: SessionDefaults,
  signal?: AbortSignal,
): Promise<SqlAnswer> {
  const request = { statement, catalog: defaults.catalog, schema: defaults.schema };
  const ask = (paging: object) =>
    conn.json("POST", "/api/v1/sql", { ...request, ...paging }, signal) as Promise<SqlAnswer>;
  try {
    return await ask({});
  } catch (err) {
    const rows = Number(err instanceof SiltError && err.parameters.suggestedRows);
    if (!(err instanceof SiltError && err.errorClass === "RESULT_TOO_LARGE" && rows > 0)) {
      throw err;
    }
    const first = await ask({ max_rows: rows });
    const all = first.rows;
    for (let token = first.next_page_token; token !== undefined; ) {
      const page = await ask({ max_rows: rows, page_token: token });
      all.push(...page.rows);
      token = page.next_page_token;
    }
    const { next_page_token: _, ...answer } = first;
    return { ...answer, rows: all };
  }
}
