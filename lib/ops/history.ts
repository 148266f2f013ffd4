/**
 * DESCRIBE HISTORY: one row per commit, newest first, with Spark's columns. Each row comes from
 * the commit's own commitInfo (checkpoints drop commitInfo, so it is always read from the commit
 * file) and its timestamp is the in-commit timestamp.
 */

import { authorizeTable } from "../auth/authorize.ts";
import { resolveName, type TableRef } from "../catalog/names.ts";
import { catalogView } from "../commit/publisher.ts";
import type { SiltContext } from "../context.ts";
import { readCommitInfos } from "../delta/snapshot.ts";
import { siltError } from "../errors.ts";
import { isoMicros, type ResultSet } from "./result-set.ts";

export const HISTORY_COLUMNS = [
  { name: "version", type: "bigint" },
  { name: "timestamp", type: "timestamp" },
  { name: "userId", type: "string" },
  { name: "userName", type: "string" },
  { name: "operation", type: "string" },
  { name: "operationParameters", type: "map<string,string>" },
  { name: "readVersion", type: "bigint" },
  { name: "isolationLevel", type: "string" },
  { name: "isBlindAppend", type: "boolean" },
  { name: "operationMetrics", type: "map<string,string>" },
  { name: "userMetadata", type: "string" },
  { name: "engineInfo", type: "string" },
];

export async function describeHistory(
  ctx: SiltContext,
  name: TableRef,
  opts: { limit?: number; defaults?: { catalog?: string; schema?: string } } = {},
): Promise<ResultSet> {
  if (opts.limit !== undefined && (!Number.isInteger(opts.limit) || opts.limit < 1)) {
    throw siltError("INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE:HISTORY_LIMIT");
  }
  const qn = resolveName(name, opts.defaults);
  const entry = await authorizeTable(ctx, qn, "read");
  const view = await catalogView(ctx.arbiter, entry.tableId);
  const entries = await readCommitInfos(ctx.store, entry.location, {
    ratified: view.ratified,
    latestRatified: view.latestRatified,
    limit: opts.limit,
  });
  return {
    columns: HISTORY_COLUMNS,
    rows: entries.map(({ version, timestamp, commitInfo: ci }) => [
      version,
      isoMicros(timestamp),
      ci.userId ?? null,
      ci.userName ?? null,
      ci.operation ?? null,
      stringMap(ci.operationParameters),
      ci.readVersion ?? null,
      ci.isolationLevel ?? null,
      ci.isBlindAppend ?? null,
      stringMap(ci.operationMetrics),
      ci.userMetadata ?? null,
      ci.engineInfo ?? null,
    ]),
  };
}

/** Spark shows both maps as map<string,string>: non-string values appear as their JSON text. */
function stringMap(m: Record<string, unknown> | undefined): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(m ?? {})) {
    out[k] = v === null || v === undefined ? null : typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}
