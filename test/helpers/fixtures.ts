/**
 * The Delta tables under /work/shared/fixtures/delta (see its MANIFEST.md), and what a reader test
 * needs around them: which directories to point a reader at, the versions each log can rebuild,
 * a store view for fixtures whose files were renamed upstream, and the canonical JSON encodings
 * (DESIGN §6) to write expected rows in.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { readParquetFooter } from "../../lib/data/parquet.ts";
import { loadDeletionVector } from "../../lib/delta/deletion-vectors.ts";
import type { Snapshot } from "../../lib/delta/snapshot.ts";
import { fileKey } from "../../lib/ops/read-files.ts";
import type { ObjectInfo, ObjectStore } from "../../lib/storage/object-store.ts";

export const FIXTURES = path.resolve(import.meta.dirname, "../../../shared/fixtures/delta");

export const FIXTURE_FOLDERS = ["golden", "spark", "delta-rs", "catalog-managed"] as const;

const isDir = (p: string) => statSync(p).isDirectory();

const subdirs = (p: string) =>
  readdirSync(p)
    .filter((n) => isDir(path.join(p, n)))
    .sort();

function holdsTableBelow(dir: string): boolean {
  return subdirs(dir).some((n) => {
    const child = path.join(dir, n);
    return existsSync(path.join(child, "_delta_log")) || holdsTableBelow(child);
  });
}

/**
 * Every directory a reader could be pointed at, relative to FIXTURES: each directory with a
 * `_delta_log`, and each directory that has none and no table below it either (those must fail
 * as "not a table"). Folders that only group tables (golden/hive, spark/history, the per-zone
 * date tables) are walked into instead.
 */
export function fixtureEntries(): string[] {
  const out: string[] = [];
  const visit = (rel: string) => {
    const abs = path.join(FIXTURES, rel);
    if (existsSync(path.join(abs, "_delta_log")) || !holdsTableBelow(abs)) {
      out.push(rel);
      return;
    }
    for (const n of subdirs(abs)) visit(`${rel}/${n}`);
  };
  for (const folder of FIXTURE_FOLDERS) {
    for (const n of subdirs(path.join(FIXTURES, folder))) visit(`${folder}/${n}`);
  }
  return out;
}

/**
 * Versions a table's log can rebuild, read straight from the directory listing: from version 0
 * when its commit is there, else from the oldest checkpoint, up to the newest commit or
 * checkpoint.
 */
export function logVersions(table: string): number[] {
  const names = readdirSync(path.join(FIXTURES, table, "_delta_log"));
  const commits = names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20)));
  const checkpoints = names
    .filter((n) => /^\d{20}\.checkpoint\b.*\.(parquet|json)$/.test(n))
    .map((n) => Number(n.slice(0, 20)));
  const latest = Math.max(...commits, ...checkpoints);
  const earliest = commits.includes(0) ? 0 : Math.min(...checkpoints);
  return Array.from({ length: latest - earliest + 1 }, (_, i) => earliest + i);
}

/** A read-only view of a store that looks objects up under other keys. */
export class RenamingStore implements ObjectStore {
  constructor(
    private readonly inner: ObjectStore,
    private readonly rename: (key: string) => string,
  ) {}
  get(key: string) {
    return this.inner.get(this.rename(key));
  }
  getRange(key: string, start: number, end: number) {
    return this.inner.getRange(this.rename(key), start, end);
  }
  getSuffix(key: string, length: number) {
    return this.inner.getSuffix(this.rename(key), length);
  }
  head(key: string) {
    return this.inner.head(this.rename(key));
  }
  list(prefix: string, options?: { startAfter?: string }): AsyncIterable<ObjectInfo> {
    return this.inner.list(prefix, options);
  }
  put(): Promise<void> {
    return Promise.reject(new Error("RenamingStore is read-only"));
  }
  putIfAbsent(): Promise<boolean> {
    return Promise.reject(new Error("RenamingStore is read-only"));
  }
  delete(): Promise<void> {
    return Promise.reject(new Error("RenamingStore is read-only"));
  }
  deleteMany(): Promise<void> {
    return Promise.reject(new Error("RenamingStore is read-only"));
  }
  copyIfAbsent(): Promise<boolean> {
    return Promise.reject(new Error("RenamingStore is read-only"));
  }
}

/**
 * spark/table-with-dv-* were written by a Spark test suite that prefixes every DV file name
 * with "test%dv%prefix-", a session setting the descriptors do not record.
 */
export const sparkDvPrefix = (key: string): string =>
  key.replace(/(^|\/)(deletion_vector_[0-9a-f-]+\.bin)$/, "$1test%dv%prefix-$2");

/**
 * Rows a snapshot must yield by the log's own account: each live file's `numRecords` (its
 * Parquet footer's row count where the writer left no stats) minus its DV's cardinality.
 */
export async function expectedRowCount(store: ObjectStore, snapshot: Snapshot): Promise<number> {
  let total = 0;
  for (const f of snapshot.files) {
    const stats =
      typeof f.stats === "string" ? (JSON.parse(f.stats) as Record<string, unknown>) : {};
    const n =
      typeof stats.numRecords === "number"
        ? stats.numRecords
        : (await readParquetFooter(await store.get(fileKey(snapshot.tableRoot, f.path)))).numRows;
    total += n - (f.deletionVector?.cardinality ?? 0);
  }
  return total;
}

/** Deleted row indexes of each live file with a DV, keyed by add.path. */
export async function deletedRows(
  store: ObjectStore,
  snapshot: Snapshot,
): Promise<Map<string, Set<number>>> {
  const out = new Map<string, Set<number>>();
  for (const f of snapshot.files) {
    if (!f.deletionVector) continue;
    const rows = await loadDeletionVector(store, snapshot.tableRoot, f.deletionVector);
    out.set(f.path, new Set(rows));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Canonical JSON values, written independently of lib/data/json-input.ts and arrow-to-json.ts

/** JSON text with object keys sorted, so equal rows compare equal whatever the map order. */
export function stableKey(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableKey).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableKey(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

/** Rows as a sorted list of stable keys: equal lists mean equal multisets of rows. */
export const rowBag = (rows: unknown[][]): string[] => rows.map(stableKey).sort();

export const base64 = (bytes: number[]): string => Buffer.from(bytes).toString("base64");

export const base64Text = (s: string): string => Buffer.from(s, "utf8").toString("base64");

const floorDiv = (a: bigint, b: bigint) => (a % b !== 0n && a < 0n ? a / b - 1n : a / b);

/** Canonical timestamp (UTC, with "Z") or timestamp_ntz (without) for epoch microseconds. */
export function timestampText(micros: bigint | number, ntz = false): string {
  const us = BigInt(micros);
  const seconds = floorDiv(us, 1_000_000n);
  const frac = String(us - seconds * 1_000_000n).padStart(6, "0");
  const iso = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return `${iso}.${frac}${ntz ? "" : "Z"}`;
}

/** Canonical date for days since the epoch. */
export const dateText = (days: number): string =>
  new Date(days * 86_400_000).toISOString().slice(0, 10);

/** Epoch microseconds of a canonical timestamp or timestamp_ntz. */
export function timestampMicros(text: string): bigint {
  const seconds = Date.parse(`${text.slice(0, 19)}Z`) / 1000;
  return BigInt(seconds) * 1_000_000n + BigInt(text.slice(20, 26));
}

/** Canonical decimal: the unscaled value with exactly `scale` fraction digits. */
export function decimalText(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = String(neg ? -unscaled : unscaled).padStart(scale + 1, "0");
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale);
  return `${neg ? "-" : ""}${int}${scale > 0 ? `.${frac}` : ""}`;
}

/** Canonical float: the shortest decimal that reads back as the same float32. */
export function float32Value(x: number): number {
  const f = Math.fround(x);
  for (let p = 1; p <= 9; p++) {
    const y = Number(f.toPrecision(p));
    if (Math.fround(y) === f) return y;
  }
  return f;
}
