/**
 * ALTER TABLE … SET / UNSET TBLPROPERTIES and SHOW TBLPROPERTIES.
 *
 * SHOW TBLPROPERTIES answers as Delta on Spark does: the table's properties plus the protocol as
 * properties (`delta.minReaderVersion`, `delta.minWriterVersion`, `delta.feature.<name>` =
 * supported), sorted by key; asking for one key that is not there answers a row saying so rather
 * than failing, as Spark does.
 */
import type { SiltContext } from "../context.ts";
import type { Statement } from "../expr/ast.ts";
import { alterTableProperties } from "../ops/alter-table.ts";
import { displayName, openTable } from "../ops/open-table.ts";
import { EMPTY, type SqlResult } from "./execute-ddl.ts";
import type { SqlSession } from "./session.ts";

export async function executeAlterProperties(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "alterProperties" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const result = await alterTableProperties(ctx, st.table, {
    set: st.set,
    unset: st.unset,
    ifExists: st.ifExists,
    defaults: session.defaults,
  });
  return { ...EMPTY, version: result.version };
}

export async function executeShowProperties(
  ctx: SiltContext,
  st: Extract<Statement, { kind: "showProperties" }>,
  session: SqlSession,
): Promise<SqlResult> {
  const t = await openTable(ctx, st.table, { defaults: session.defaults, access: "read" });
  const { protocol, metadata } = t.snapshot;
  const properties: Record<string, string> = {
    ...metadata.configuration,
    "delta.minReaderVersion": String(protocol.minReaderVersion),
    "delta.minWriterVersion": String(protocol.minWriterVersion),
  };
  const features = new Set([
    ...(protocol.readerFeatures ?? []),
    ...(protocol.writerFeatures ?? []),
  ]);
  for (const f of features) properties[`delta.feature.${f}`] = "supported";
  const columns = [
    { name: "key", type: "string" },
    { name: "value", type: "string" },
  ];
  if (st.key !== undefined) {
    const value =
      properties[st.key] ?? `Table ${displayName(t.name)} does not have property: ${st.key}`;
    return { columns, rows: [[st.key, value]], version: t.snapshot.version };
  }
  const keys = Object.keys(properties).sort();
  return { columns, rows: keys.map((k) => [k, properties[k]]), version: t.snapshot.version };
}
