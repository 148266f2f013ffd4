/** ALTER TABLE … ADD COLUMNS / RENAME COLUMN / DROP COLUMNS / ALTER COLUMN (lib/ops/alter-columns.ts). */
import type { SiltContext } from "../context.ts";
import type { Statement } from "../expr/ast.ts";
import { alterTableColumns } from "../ops/alter-columns.ts";
import { EMPTY, type SqlResult } from "./execute-ddl.ts";
import type { SqlSession } from "./session.ts";

export async function executeAlterColumns(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "alterColumns" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await alterTableColumns(ctx, st.table, st.change, session.defaults);
  return { ...EMPTY, version: result.version };
}
