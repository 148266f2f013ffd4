/**
 * Ingestion on one machine: objects dropped under the data directory's `storage/ingest/` go
 * through the ingest function's own code (ingestOrReject), so they land exactly as deployed.
 *
 * 1. List `ingest/` (or one table's folder), keeping the keys the deployed routing accepts
 *    (ingestTarget), in key order, which is the order they are committed in.
 * 2. Skip the keys the ledger (`_ingest_local/ledger.json` in the store) names: finished by an
 *    earlier pass, maybe in an earlier process. The ledger only saves work: exactly-once comes
 *    from the txn appId ingestObjects checks, so a lost ledger re-reports keys as already
 *    ingested and ingests nothing twice.
 * 3. Per table, ingestOrReject. Rejected objects are recorded under `_ingest_rejected/` by the
 *    deployed sink, with "local" as their message id, so recording one twice rewrites the same
 *    record.
 * 4. Ingested, already ingested and rejected keys join the ledger; a table that failed for a
 *    retryable reason stays out of it and is tried again next pass.
 *
 * Passes run one at a time per ingester (the server's watcher and `silt ingest` share one), so
 * the ledger is read and written by one pass only.
 */
import type { QualifiedName } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { INGEST_ROOT, ingestTarget } from "../ops/ingest-keys.ts";
import { displayName } from "../ops/open-table.ts";
import { ObjectNotFoundError } from "../storage/object-store.ts";
import { ingestOrReject, storeDeadLetterSink } from "./ingest-handler.ts";

export const LEDGER_KEY = "_ingest_local/ledger.json";
const LOCAL_MESSAGE_ID = "local";

export type IngestOutcome = { key: string; table: string } & (
  | { status: "ingested"; rows: number; version: number }
  | { status: "alreadyIngested" }
  | { status: "rejected"; errorClass: string; message: string }
  | { status: "failed"; error: string }
);

export interface LocalIngester {
  /** One pass over every table's folder, or `table`'s only. */
  run(table?: QualifiedName): Promise<IngestOutcome[]>;
}

export function localIngester(ctx: SiltContext): LocalIngester {
  let last: Promise<unknown> = Promise.resolve();
  return {
    run(table) {
      const pass = last.then(() => ingestPass(ctx, table));
      last = pass.catch(() => undefined);
      return pass;
    },
  };
}

/** One outcome as `silt ingest` prints it and the server logs it. */
export function describeOutcome(o: IngestOutcome): string {
  switch (o.status) {
    case "ingested":
      return `${o.key}: ingested ${o.rows} rows into version ${o.version}`;
    case "alreadyIngested":
      return `${o.key}: already ingested`;
    case "rejected":
      return `${o.key}: rejected: [${o.errorClass}] ${o.message}`;
    case "failed":
      return `${o.key}: failed, will be retried: ${o.error}`;
  }
}

async function ingestPass(
  ctx: SiltContext,
  only: QualifiedName | undefined,
): Promise<IngestOutcome[]> {
  // Steps 1-2.
  const ledger = await readLedger(ctx);
  const prefix =
    only === undefined
      ? INGEST_ROOT
      : `${INGEST_ROOT}${only.catalog}/${only.schema}/${only.table}/`;
  const byTable = new Map<string, { name: QualifiedName; keys: string[] }>();
  for await (const info of ctx.store.list(prefix)) {
    const name = ingestTarget(info.key);
    if (name === undefined || ledger.has(info.key)) continue;
    const id = JSON.stringify([name.catalog, name.schema, name.table]);
    const group = byTable.get(id) ?? { name, keys: [] };
    group.keys.push(info.key);
    byTable.set(id, group);
  }
  // Step 3.
  const sink = storeDeadLetterSink(ctx.store);
  const outcomes: IngestOutcome[] = [];
  for (const { name, keys } of byTable.values()) {
    const table = displayName(name);
    try {
      const result = await ingestOrReject(ctx, name, keys);
      for (const key of keys) {
        const committed = result.committed[key];
        const rejected = result.rejected.find((r) => r.key === key);
        if (committed !== undefined)
          outcomes.push({ key, table, status: "ingested", ...committed });
        else if (rejected !== undefined) {
          await sink.reject({
            ...rejected,
            table,
            messageId: LOCAL_MESSAGE_ID,
            rejectedAt: new Date(ctx.clock()).toISOString(),
          });
          outcomes.push({ key, table, status: "rejected", ...withoutKey(rejected) });
        } else outcomes.push({ key, table, status: "alreadyIngested" });
        ledger.add(key);
      }
    } catch (err) {
      for (const key of keys) {
        outcomes.push({ key, table, status: "failed", error: (err as Error).message });
      }
    }
  }
  // Step 4.
  if (outcomes.some((o) => o.status !== "failed")) await writeLedger(ctx, ledger);
  return outcomes;
}

function withoutKey<T extends { key: string }>({ key: _, ...rest }: T): Omit<T, "key"> {
  return rest;
}

async function readLedger(ctx: SiltContext): Promise<Set<string>> {
  try {
    const doc = JSON.parse(new TextDecoder().decode(await ctx.store.get(LEDGER_KEY))) as {
      keys?: unknown;
    };
    return new Set(Array.isArray(doc.keys) ? doc.keys.filter((k) => typeof k === "string") : []);
  } catch (err) {
    // A torn ledger costs a re-check of every key, nothing more (module comment, step 2).
    if (err instanceof ObjectNotFoundError || err instanceof SyntaxError) return new Set();
    throw err;
  }
}

async function writeLedger(ctx: SiltContext, keys: Set<string>): Promise<void> {
  const doc = { keys: [...keys].sort() };
  await ctx.store.put(LEDGER_KEY, new TextEncoder().encode(`${JSON.stringify(doc)}\n`));
}
