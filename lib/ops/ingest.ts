/**
 * Exactly-once ingestion of objects dropped under `ingest/<catalog>/<schema>/<table>/` into that
 * table: appended, or merged on key columns when the table's `silt.ingest.mergeKeys` property
 * names them.
 *
 * 1. Open the table at its latest version. Every object already recorded in the snapshot's `txn`
 *    actions (appId `silt-ingest:<sha256 of the key>`, version 1) was ingested before: it is
 *    reported as done and not read again. That is what makes a redelivered or duplicated event a
 *    no-op.
 * 2. Read each remaining object (Parquet, CSV with a header, NDJSON, by extension) and conform it
 *    to the table's schema. An object that cannot be read as its format or does not fit the
 *    schema is rejected with the reason; nothing of it is committed, and it does not stop the
 *    others.
 * 3. Append mode: write the accepted objects' rows as new files and commit one blind-append
 *    `WRITE` holding the files and one `txn` per object. Merge mode: one `MERGE` (update every
 *    matched row, insert the rest) whose commit carries the same `txn` actions.
 * 4. The check of step 1 and the commit are on the same snapshot (merge checks inside its own
 *    open through `beforeWrite`). A concurrent ingester that committed the same object after that
 *    snapshot makes our commit lose with DELTA_CONCURRENT_TRANSACTION (same appId, conflicts.ts);
 *    any concurrency error sends us back to step 1, which now sees the object done.
 * 5. When the batch as a whole is refused (e.g. two objects of a merge batch update the same key,
 *    which MERGE forbids), fall back to one commit per object, in order, so only the object at
 *    fault is rejected and a later object's row wins over an earlier one's.
 */
import { createHash } from "node:crypto";
import type * as arrow from "apache-arrow";
import type { QualifiedName } from "../catalog/names.ts";
import { CONCURRENCY_SQLSTATE } from "../commit/conflicts.ts";
import type { SiltContext } from "../context.ts";
import { concatTables } from "../data/kernels.ts";
import type { Action } from "../delta/actions.ts";
import type { Snapshot } from "../delta/snapshot.ts";
import { SiltError, siltError } from "../errors.ts";
import type { MergeClause } from "../expr/ast.ts";
import { parseExpression } from "../expr/parse.ts";
import { quoteIdent } from "../values/identifiers.ts";
import { commitAppend } from "./append.ts";
import { toTableRows } from "./input-rows.ts";
import { mergeInto } from "./merge.ts";
import { displayName, type OpenTable, openTable } from "./open-table.ts";
import { readSourceObject, type SourceObject } from "./source-objects.ts";

/** Comma-separated key columns; when set, ingestion merges on them instead of appending. */
export const INGEST_MERGE_KEYS_PROPERTY = "silt.ingest.mergeKeys";
const APP_ID_PREFIX = "silt-ingest:";
/** Rounds of step 1-4 before a lost race is reported as a (retryable) failure. */
const MAX_ROUNDS = 5;

export interface RejectedObject {
  key: string;
  errorClass: string;
  message: string;
}

export interface IngestResult {
  table: string;
  /** The last version this call committed, or the table's version when it committed nothing. */
  version: number;
  /** Commits made: 1 for a batch, more only after the step-5 fallback. */
  commits: number;
  operation?: "WRITE" | "MERGE";
  ingested: string[];
  /** Per ingested object: its rows and the version that committed them. */
  committed: Record<string, { rows: number; version: number }>;
  alreadyIngested: string[];
  rejected: RejectedObject[];
  numOutputRows: number;
}

/**
 * The appId recording one object. A hash keeps the log's txn entries short and free of the
 * key's characters; the key itself is the identity, so re-uploading the same key is not ingested
 * again (Auto Loader's default too): new data goes to a new key.
 */
export function ingestAppId(key: string): string {
  return `${APP_ID_PREFIX}${createHash("sha256").update(key).digest("hex")}`;
}

export async function ingestObjects(
  ctx: SiltContext,
  name: QualifiedName,
  keys: readonly string[],
): Promise<IngestResult> {
  const unique = [...new Set(keys)];
  const tableName = displayName(name);
  const result: IngestResult = {
    table: tableName,
    version: -1,
    commits: 0,
    ingested: [],
    committed: {},
    alreadyIngested: [],
    rejected: [],
    numOutputRows: 0,
  };
  let pending = unique;
  for (let round = 1; pending.length > 0; round++) {
    try {
      const outcome = await ingestRound(ctx, name, pending, result);
      pending = outcome.fallback;
      if (pending.length > 0) {
        // Step 5: one object at a time.
        for (const key of pending) await ingestRound(ctx, name, [key], result);
        pending = [];
      }
    } catch (err) {
      if (!isConcurrencyError(err) || round >= MAX_ROUNDS) throw err;
      ctx.logger.info("ingest lost a race, rechecking", { table: tableName, round });
    }
  }
  ctx.logger.info("objects ingested", {
    table: tableName,
    operation: result.operation,
    version: result.version,
    rows: result.numOutputRows,
    ingested: result.ingested.length,
    alreadyIngested: result.alreadyIngested.length,
    rejected: result.rejected.length,
  });
  return result;
}

/**
 * Steps 1-4 for `keys`; returns the keys to retry one by one when the batch as a whole was
 * refused. Keys it finishes are moved into `result`, so a retried round skips them.
 */
async function ingestRound(
  ctx: SiltContext,
  name: QualifiedName,
  keys: string[],
  result: IngestResult,
): Promise<{ fallback: string[] }> {
  const t = await openTable(ctx, [name.catalog, name.schema, name.table], { access: "write" });
  const tableName = displayName(t.name);
  result.version = Math.max(result.version, t.snapshot.version);
  const known = new Set([...result.ingested, ...result.alreadyIngested]);
  const todo: string[] = [];
  for (const key of keys) {
    if (known.has(key) || result.rejected.some((r) => r.key === key)) continue;
    if (t.snapshot.txns.has(ingestAppId(key))) result.alreadyIngested.push(key);
    else todo.push(key);
  }
  if (todo.length === 0) return { fallback: [] };

  // Step 2.
  const accepted: { key: string; rows: arrow.Table }[] = [];
  for (const key of todo) {
    try {
      accepted.push({ key, rows: await readObject(ctx, t, key) });
    } catch (err) {
      if (!isCallerError(err)) throw err;
      result.rejected.push({ key, errorClass: err.errorClass, message: err.message });
    }
  }
  if (accepted.length === 0) return { fallback: [] };

  const txns: Action[] = accepted.map(({ key }) => ({
    txn: { appId: ingestAppId(key), version: 1, lastUpdated: ctx.clock() },
  }));
  const data = concatTables(accepted.map((a) => a.rows));
  const mergeKeys = mergeKeysOf(t);
  if (mergeKeys !== undefined && accepted.length > 1 && keysCollide(accepted, mergeKeys)) {
    // MERGE would insert both rows of an unmatched key, or refuse a matched one; one object at a
    // time keeps the later object's row, as arrival order says.
    return { fallback: accepted.map((a) => a.key) };
  }
  try {
    const version =
      mergeKeys === undefined
        ? await appendCommit(ctx, t, data, txns)
        : await mergeCommit(
            ctx,
            t,
            data,
            txns,
            mergeKeys,
            accepted.map((a) => a.key),
          );
    result.version = version;
    result.commits++;
    result.operation = mergeKeys === undefined ? "WRITE" : "MERGE";
    result.ingested.push(...accepted.map((a) => a.key));
    for (const a of accepted) result.committed[a.key] = { rows: a.rows.numRows, version };
    result.numOutputRows += data.numRows;
    return { fallback: [] };
  } catch (err) {
    if (!isCallerError(err)) throw err;
    if (accepted.length > 1) return { fallback: accepted.map((a) => a.key) };
    result.rejected.push({
      key: accepted[0]!.key,
      errorClass: err.errorClass,
      message: `${tableName}: ${err.message}`,
    });
    return { fallback: [] };
  }
}

/** Whether two different objects hold a row with the same merge key. */
function keysCollide(objects: { rows: arrow.Table }[], keys: string[]): boolean {
  const owner = new Map<string, number>();
  for (const [i, { rows }] of objects.entries()) {
    const columns = keys.map((k) =>
      rows.getChild(rows.schema.fields.find((f) => f.name.toLowerCase() === k.toLowerCase())!.name),
    );
    for (let r = 0; r < rows.numRows; r++) {
      const id = JSON.stringify(columns.map((c) => String(c?.get(r))));
      const seen = owner.get(id);
      if (seen !== undefined && seen !== i) return true;
      owner.set(id, i);
    }
  }
  return false;
}

async function readObject(ctx: SiltContext, t: OpenTable, key: string): Promise<arrow.Table> {
  try {
    return await conformObject(ctx, t, key);
  } catch (err) {
    if (!(err instanceof SiltError) || err.message.includes(key)) throw err;
    throw err.withMessage(`Object ${key} does not fit ${displayName(t.name)}: ${err.message}`);
  }
}

async function conformObject(ctx: SiltContext, t: OpenTable, key: string): Promise<arrow.Table> {
  const source = await readSourceObject(ctx, sourceObject(key), t.schema);
  for (const f of source.fields) {
    if (!t.schema.fields.some((s) => s.name.toLowerCase() === f.name.toLowerCase())) {
      throw siltError("DELTA_SCHEMA_MISMATCH", {
        key,
        name: displayName(t.name),
        column: f.name,
        fields: t.schema.fields.map((s) => `\`${s.name}\``).join(", "),
      });
    }
  }
  return toTableRows({ arrow: source.table }, t.schema, displayName(t.name));
}

function sourceObject(key: string): SourceObject {
  const lower = key.toLowerCase();
  if (lower.endsWith(".parquet")) return { parquet: key };
  if (lower.endsWith(".csv")) return { csv: key, header: true };
  if (lower.endsWith(".json") || lower.endsWith(".ndjson") || lower.endsWith(".jsonl")) {
    return { json: key };
  }
  throw siltError("UNSUPPORTED_INGEST_FORMAT", { key });
}

function mergeKeysOf(t: OpenTable): string[] | undefined {
  const raw = t.snapshot.metadata.configuration[INGEST_MERGE_KEYS_PROPERTY];
  if (raw === undefined || raw.trim() === "") return undefined;
  return raw
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
}

async function appendCommit(
  ctx: SiltContext,
  t: OpenTable,
  data: arrow.Table,
  txns: Action[],
): Promise<number> {
  return (await commitAppend(ctx, t, data, txns)).version;
}

async function mergeCommit(
  ctx: SiltContext,
  t: OpenTable,
  data: arrow.Table,
  txns: Action[],
  keys: string[],
  objectKeys: string[],
): Promise<number> {
  for (const k of keys) {
    if (!t.schema.fields.some((f) => f.name.toLowerCase() === k.toLowerCase())) {
      throw siltError("DELTA_INVALID_INGEST_MERGE_KEYS", { key: k });
    }
  }
  const on = parseExpression(
    keys.map((k) => `t.${quoteIdent(k)} = s.${quoteIdent(k)}`).join(" AND "),
  );
  const clauses: MergeClause[] = [
    { kind: "matched", action: { kind: "updateStar" } },
    { kind: "notMatched", action: { kind: "insertStar" } },
  ];
  const result = await mergeInto(ctx, [t.name.catalog, t.name.schema, t.name.table], {
    source: async () => ({
      fields: t.schema.fields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable })),
      table: data,
      qualifier: ["s"],
    }),
    targetAlias: "t",
    on,
    clauses,
    extraActions: txns,
    beforeWrite: (snapshot: Snapshot) => {
      // Step 4: merge reopened the table; an object committed since our check is done already.
      const done = objectKeys.filter((k) => snapshot.txns.has(ingestAppId(k)));
      if (done.length > 0) {
        throw siltError("DELTA_CONCURRENT_TRANSACTION:INGESTED", {
          done: done.join(", "),
        });
      }
    },
  });
  return result.version;
}

function isCallerError(err: unknown): err is SiltError {
  return (
    err instanceof SiltError && err.status >= 400 && err.status < 500 && !isConcurrencyError(err)
  );
}

function isConcurrencyError(err: unknown): boolean {
  return err instanceof SiltError && err.sqlstate === CONCURRENCY_SQLSTATE;
}
