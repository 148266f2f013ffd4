/**
 * GRANT, REVOKE and SHOW GRANTS through `/api/v1/sql`, over lib/ops/permissions.ts: a GRANT
 * answers with nothing, SHOW GRANTS with Databricks' columns (principal, actionType, objectType,
 * objectKey).
 */

import type { SiltContext } from "../context.ts";
import type { Statement } from "../expr/ast.ts";
import { securableName, showGrants, updatePermissions } from "../ops/permissions.ts";
import { EMPTY, type SqlResult } from "./execute-ddl.ts";
import type { SqlSession } from "./session.ts";

export async function executeGrant(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "grant" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const name = securableName(st.on.type, st.on.name, session.defaults);
  const change = st.revoke
    ? { principal: st.principal, remove: st.privileges }
    : { principal: st.principal, add: st.privileges };
  await updatePermissions(ctx, name, [change]);
  return { ...EMPTY };
}

export async function executeShowGrants(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "showGrants" }>,
  session: SqlSession,
): Promise<SqlResult> {
  return showGrants(ctx, securableName(st.on.type, st.on.name, session.defaults), st.principal);
}
