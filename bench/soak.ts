/**
 * `npm run soak`: a bounded mixed workload against the local server while it is killed with
 * SIGKILL and restarted at random moments, then a check of every acknowledged change.
 *
 * 1. Start `silt serve` on a fresh data dir; create one table.
 * 2. Writers loop over inserts (with an Idempotency-Key), single-row UPDATEs and DELETEs of rows
 *    they inserted, and counts. Each writer only touches its own rows, so the expected state is
 *    known exactly; the writers still collide on files, as real writers do.
 * 3. A killer sends SIGKILL every few seconds and restarts the server on the same data dir.
 *    A request cut off by the kill has an unknown outcome: inserts are retried with their key
 *    afterwards, and the others widen what the check accepts for that row.
 * 4. After the run, one clean restart; once the keys of cut-off requests are past their lease
 *    (RENEWED_LEASE_MS: nothing renews a dead request's key), the cut-off inserts are retried, and
 *    every row is checked: each acknowledged insert is
 *    there exactly once unless a DELETE of it was acknowledged or cut off, no acknowledged DELETE
 *    left its row, nothing appears that was never sent, and each row's counter lies between its
 *    acknowledged and its attempted UPDATEs.
 *
 * SOAK_SECONDS (default 60), SOAK_WRITERS (4) and SOAK_KILL_EVERY_MS (3000, ± half) bound it.
 * Prints a JSON summary; exits 1 if any acknowledged change was lost or any row is wrong.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RENEWED_LEASE_MS } from "../lib/kv/idempotency-store.ts";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const WRITERS = Number(process.env.SOAK_WRITERS ?? 4);
const KILL_EVERY_MS = Number(process.env.SOAK_KILL_EVERY_MS ?? 3000);
const PORT = 18_000 + Math.floor(Math.random() * 2000);
const API = `http://127.0.0.1:${PORT}/api/v1`;
const TABLE = "soak.load.events";
const ROWS_PER_INSERT = 10;

type Outcome = "acked" | "refused" | "unknown";
type Op = "insert" | "update" | "delete" | "count";

interface RowState {
  writer: number;
  insert: Outcome;
  key: string;
  ackedUpdates: number;
  attemptedUpdates: number;
  delete?: Outcome;
}

const rows = new Map<number, RowState>();
const latencies: Record<Op, number[]> = { insert: [], update: [], delete: [], count: [] };
const outcomes: Record<Op, Record<Outcome, number>> = {
  insert: { acked: 0, refused: 0, unknown: 0 },
  update: { acked: 0, refused: 0, unknown: 0 },
  delete: { acked: 0, refused: 0, unknown: 0 },
  count: { acked: 0, refused: 0, unknown: 0 },
};
const refusals = new Map<string, number>();
let nextId = 1;
let restarts = 0;

// ---------------------------------------------------------------------------------------------
// The server under test

const dataDir = mkdtempSync(join(tmpdir(), "silt-soak-"));
let server: ChildProcess | undefined;
let up = false;
let stderrTail = "";

async function startServer(): Promise<void> {
  server = spawn(process.execPath, ["bin/silt.mjs", "serve"], {
    env: { ...process.env, PORT: String(PORT), SILT_DATA_DIR: dataDir },
    stdio: ["ignore", "ignore", "pipe"],
  });
  // The server's last words, for when it does not come up.
  server.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString()).slice(-4000);
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${API}/health`);
      if (res.ok) {
        up = true;
        return;
      }
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`the server did not answer /health within 60 s of starting:\n${stderrTail}`);
}

async function killServer(): Promise<void> {
  up = false;
  const child = server;
  if (child === undefined || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

// ---------------------------------------------------------------------------------------------
// Requests

async function call(
  op: Op,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ outcome: Outcome; body?: unknown }> {
  while (!up) await sleep(20);
  const t0 = performance.now();
  try {
    const res = await fetch(`${API}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const parsed = (await res.json()) as { error_class?: string };
    if (res.ok) {
      latencies[op].push(performance.now() - t0);
      return { outcome: "acked", body: parsed };
    }
    // A 5xx may have committed before failing, and a key still held by a cut-off request says
    // nothing of its outcome; anything else was refused before committing.
    if (res.status >= 500 || parsed.error_class === "IDEMPOTENCY_REQUEST_IN_PROGRESS") {
      return { outcome: "unknown", body: parsed };
    }
    const cls = `${op} ${res.status} ${parsed.error_class}`;
    refusals.set(cls, (refusals.get(cls) ?? 0) + 1);
    return { outcome: "refused", body: parsed };
  } catch {
    return { outcome: "unknown" };
  }
}

async function insert(writer: number): Promise<void> {
  const ids = Array.from({ length: ROWS_PER_INSERT }, () => nextId++);
  const key = `soak-${ids[0]}`;
  for (const id of ids) {
    rows.set(id, { writer, insert: "unknown", key, ackedUpdates: 0, attemptedUpdates: 0 });
  }
  const { outcome } = await call(
    "insert",
    `/tables/${TABLE}/insert`,
    { rows: ids.map((id) => ({ id, writer, v: 0 })) },
    { "idempotency-key": key },
  );
  outcomes.insert[outcome]++;
  for (const id of ids) (rows.get(id) as RowState).insert = outcome;
}

/** A row of this writer that is surely there: inserted and acknowledged, never deleted. */
function ownLiveRow(writer: number): number | undefined {
  const candidates: number[] = [];
  for (const [id, r] of rows) {
    if (r.writer === writer && r.insert === "acked" && r.delete === undefined) candidates.push(id);
  }
  return candidates.length === 0
    ? undefined
    : candidates[Math.floor(Math.random() * candidates.length)];
}

async function update(writer: number): Promise<void> {
  const id = ownLiveRow(writer);
  if (id === undefined) return;
  const r = rows.get(id) as RowState;
  r.attemptedUpdates++;
  const { outcome } = await call("update", `/tables/${TABLE}/update`, {
    condition: `id = ${id}`,
    set: { v: "v + 1" },
  });
  outcomes.update[outcome]++;
  if (outcome === "acked") r.ackedUpdates++;
  if (outcome === "refused") r.attemptedUpdates--;
}

async function remove(writer: number): Promise<void> {
  const id = ownLiveRow(writer);
  if (id === undefined) return;
  const r = rows.get(id) as RowState;
  r.delete = "unknown";
  const { outcome } = await call("delete", `/tables/${TABLE}/delete`, { condition: `id = ${id}` });
  outcomes.delete[outcome]++;
  r.delete = outcome === "refused" ? undefined : outcome;
}

async function count(): Promise<void> {
  const { outcome } = await call("count", "/sql", { statement: `SELECT count(*) FROM ${TABLE}` });
  outcomes.count[outcome]++;
}

async function writerLoop(writer: number, until: number): Promise<void> {
  while (Date.now() < until) {
    const dice = Math.random();
    if (dice < 0.6) await insert(writer);
    else if (dice < 0.8) await update(writer);
    else if (dice < 0.92) await remove(writer);
    else await count();
  }
}

async function killerLoop(until: number): Promise<void> {
  for (;;) {
    await sleep(KILL_EVERY_MS * (0.5 + Math.random()));
    if (Date.now() >= until) return;
    await killServer();
    restarts++;
    await startServer();
  }
}

/** Retries cut-off inserts with their keys: an exactly-once server answers each one. */
async function settleInserts(): Promise<{ resolved: number; unresolved: number }> {
  const byKey = new Map<string, number[]>();
  for (const [id, r] of rows) {
    if (r.insert === "unknown") byKey.set(r.key, [...(byKey.get(r.key) ?? []), id]);
  }
  let resolved = 0;
  for (const [key, ids] of byKey) {
    const writer = (rows.get(ids[0]) as RowState).writer;
    const { outcome } = await call(
      "insert",
      `/tables/${TABLE}/insert`,
      { rows: ids.map((id) => ({ id, writer, v: 0 })) },
      { "idempotency-key": key },
    );
    if (outcome !== "unknown") resolved++;
    for (const id of ids) (rows.get(id) as RowState).insert = outcome;
  }
  return { resolved, unresolved: byKey.size - resolved };
}

// ---------------------------------------------------------------------------------------------
// The check

async function check(): Promise<string[]> {
  const { outcome, body } = await call("count", "/sql", {
    statement: `SELECT id, v FROM ${TABLE}`,
  });
  if (outcome !== "acked") return [`the final read failed: ${JSON.stringify(body)}`];
  const found = new Map<number, number[]>();
  for (const [id, v] of (body as { rows: [number, number][] }).rows) {
    found.set(id, [...(found.get(id) ?? []), v]);
  }
  const problems: string[] = [];
  for (const [id, values] of found) {
    const r = rows.get(id);
    if (r === undefined || r.insert === "refused") problems.push(`row ${id} was never inserted`);
    else if (values.length > 1) problems.push(`row ${id} is there ${values.length} times`);
    else if (r.delete === "acked") problems.push(`row ${id} survived an acknowledged DELETE`);
    else if (values[0] < r.ackedUpdates || values[0] > r.attemptedUpdates) {
      problems.push(
        `row ${id} has v=${values[0]}, outside [${r.ackedUpdates}, ${r.attemptedUpdates}]`,
      );
    }
  }
  for (const [id, r] of rows) {
    if (r.insert === "acked" && r.delete === undefined && !found.has(id)) {
      problems.push(`acknowledged row ${id} is missing`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);
}

async function main(): Promise<number> {
  await startServer();
  for (const statement of [
    "CREATE CATALOG soak",
    "CREATE SCHEMA soak.load",
    `CREATE TABLE ${TABLE} (id BIGINT, writer INT, v BIGINT) USING DELTA`,
  ]) {
    const { outcome, body } = await call("count", "/sql", { statement });
    if (outcome !== "acked") throw new Error(`${statement}: ${JSON.stringify(body)}`);
  }
  const t0 = Date.now();
  const until = t0 + SECONDS * 1000;
  await Promise.all([
    killerLoop(until),
    ...Array.from({ length: WRITERS }, (_, w) => writerLoop(w, until)),
  ]);
  const elapsed = (Date.now() - t0) / 1000;
  await killServer();
  await startServer();
  await sleep(RENEWED_LEASE_MS + 1000);
  const settled = await settleInserts();
  const problems = await check();
  await killServer();
  const acked = outcomes.insert.acked + outcomes.update.acked + outcomes.delete.acked;
  const summary = {
    seconds: Math.round(elapsed),
    writers: WRITERS,
    restartsSurvived: restarts,
    acknowledgedCommits: acked,
    commitsPerSecond: Math.round((acked / elapsed) * 10) / 10,
    latencyMs: Object.fromEntries(
      Object.entries(latencies).map(([op, v]) => [
        op,
        { p50: percentile(v, 0.5), p95: percentile(v, 0.95) },
      ]),
    ),
    outcomes,
    refusals: Object.fromEntries(refusals),
    cutOffInsertsRetried: settled,
    rowsChecked: rows.size,
    problems: problems.slice(0, 20),
    problemCount: problems.length,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  rmSync(dataDir, { recursive: true, force: true });
  return problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    process.stderr.write(`soak: ${err instanceof Error ? err.message : String(err)}\n`);
    await killServer();
    process.exit(2);
  },
);
