/**
 * Reads checkpoints of every kind into actions: classic and multi-part Parquet, and V2 checkpoints
 * whose top-level file is JSON or Parquet, following their sidecars. Also reads the
 * `_last_checkpoint` hint, which is overwritten in place and therefore may be stale, truncated or
 * empty; any problem with it means "no hint", never a failure.
 */
import { parquetMetadata, parquetReadObjects, parquetSchema } from "hyparquet";
import type { ObjectStore } from "../storage/object-store.ts";
import {
  type Action,
  type AddFile,
  type CheckpointMetadata,
  type DeletionVectorDescriptor,
  type DomainMetadata,
  LOG_DIR,
  type Metadata,
  type Protocol,
  parseActions,
  type RemoveFile,
  type Sidecar,
  type Txn,
} from "./actions.ts";
import type { CheckpointFile } from "./log-listing.ts";

export const SIDECAR_DIR = `${LOG_DIR}_sidecars/`;

export interface LastCheckpointV2Info {
  path: string;
  sizeInBytes?: number;
  modificationTime?: number;
  nonFileActions?: Action[];
  sidecarFiles?: Sidecar[];
}

export interface LastCheckpoint {
  version: number;
  size?: number;
  parts?: number;
  sizeInBytes?: number;
  numOfAddFiles?: number;
  v2Checkpoint?: LastCheckpointV2Info;
}

/** The `_last_checkpoint` hint, or undefined when it is absent or unusable. */
export async function readLastCheckpoint(
  store: ObjectStore,
  tableRoot: string,
): Promise<LastCheckpoint | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await store.get(`${tableRoot}${LOG_DIR}_last_checkpoint`);
  } catch {
    return undefined;
  }
  try {
    const raw = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
    const version = raw.version;
    if (typeof version !== "number" || !Number.isInteger(version) || version < 0) return undefined;
    const out: LastCheckpoint = { version };
    if (typeof raw.size === "number") out.size = raw.size;
    if (typeof raw.parts === "number") out.parts = raw.parts;
    if (typeof raw.sizeInBytes === "number") out.sizeInBytes = raw.sizeInBytes;
    if (typeof raw.numOfAddFiles === "number") out.numOfAddFiles = raw.numOfAddFiles;
    const v2 = raw.v2Checkpoint as Record<string, unknown> | undefined | null;
    if (v2 && typeof v2 === "object" && typeof v2.path === "string") {
      const info: LastCheckpointV2Info = { path: v2.path };
      if (typeof v2.sizeInBytes === "number") info.sizeInBytes = v2.sizeInBytes;
      if (typeof v2.modificationTime === "number") info.modificationTime = v2.modificationTime;
      if (Array.isArray(v2.nonFileActions)) {
        info.nonFileActions = v2.nonFileActions.flatMap((a) => {
          const action = toAction(a);
          return action === undefined ? [] : [action];
        });
      }
      if (Array.isArray(v2.sidecarFiles)) {
        info.sidecarFiles = v2.sidecarFiles.flatMap((s) => {
          const sidecar = normalizeSidecar(s);
          return sidecar === undefined ? [] : [sidecar];
        });
      }
      out.v2Checkpoint = info;
    }
    return out;
  } catch {
    return undefined;
  }
}

/**
 * Every action of a checkpoint, sidecar contents included (sidecar and checkpointMetadata actions
 * are kept too, so callers can see what the checkpoint declared). Throws if any part or sidecar is
 * missing or unreadable; the caller then falls back to an older checkpoint.
 */
export async function readCheckpoint(
  store: ObjectStore,
  tableRoot: string,
  checkpoint: CheckpointFile,
  hint?: LastCheckpoint,
): Promise<Action[]> {
  let top: Action[] | undefined;
  // The hint repeats the non-file actions and sidecar list of a V2 checkpoint; when it names this
  // very file (the UUID makes the name unique) it saves reading the top-level file.
  const v2 = hint?.v2Checkpoint;
  if (
    checkpoint.kind === "v2" &&
    hint?.version === checkpoint.version &&
    v2?.nonFileActions !== undefined &&
    v2.sidecarFiles !== undefined &&
    checkpoint.keys[0]!.endsWith(`/${v2.path}`)
  ) {
    top = [...v2.nonFileActions, ...v2.sidecarFiles.map((sidecar) => ({ sidecar }))];
  }
  // Files are fetched together (latency) and decoded one row group after the other (decoding is
  // CPU-bound anyway), so only one group's intermediate rows are alive at a time.
  const out: Action[] = [];
  const decode = async (bytes: Uint8Array, json: boolean) => {
    const groups = json
      ? [parseActions(new TextDecoder().decode(bytes))]
      : parquetActionsByRowGroup(bytes);
    for await (const group of groups) for (const a of group) out.push(a);
  };
  if (top === undefined) {
    const parts = await Promise.all(checkpoint.keys.map((key) => store.get(key)));
    for (const bytes of parts) await decode(bytes, checkpoint.format === "json");
  } else {
    out.push(...top);
  }
  const sidecars: Sidecar[] = [];
  for (const a of out) if ("sidecar" in a) sidecars.push(a.sidecar);
  const files = await Promise.all(sidecars.map((s) => store.get(sidecarKey(tableRoot, s.path))));
  for (const bytes of files) await decode(bytes, false);
  return out;
}

/** Sidecar paths are relative to `_delta_log/_sidecars/`; absolute URIs cannot be mapped to keys. */
export function sidecarKey(tableRoot: string, path: string): string {
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(path) || path.startsWith("/")) {
    throw new Error(`Sidecar path ${path} is absolute; only paths under ${SIDECAR_DIR} are read`);
  }
  return `${tableRoot}${SIDECAR_DIR}${decodeURIComponentSafe(path)}`;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const ACTION_COLUMNS = [
  "protocol",
  "metaData",
  "add",
  "remove",
  "txn",
  "domainMetadata",
  "checkpointMetadata",
  "sidecar",
] as const;

type ActionColumn = (typeof ACTION_COLUMNS)[number];

/** Decodes a checkpoint or sidecar Parquet file into actions (`only`: these columns alone). */
export async function readParquetActions(
  bytes: Uint8Array,
  only: readonly ActionColumn[] = ACTION_COLUMNS,
): Promise<Action[]> {
  const out: Action[] = [];
  // Not push(...group): a row group of another engine's checkpoint may hold millions of rows.
  for await (const group of parquetActionsByRowGroup(bytes, only))
    for (const a of group) out.push(a);
  return out;
}

/**
 * The actions of a checkpoint or sidecar Parquet file, one row group at a time: hyparquet
 * decodes a whole row group of nested columns at once, so a caller that goes group by group
 * holds one group's rows, not the file's.
 */
export async function* parquetActionsByRowGroup(
  bytes: Uint8Array,
  only: readonly ActionColumn[] = ACTION_COLUMNS,
): AsyncGenerator<Action[]> {
  const file =
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? (bytes.buffer as ArrayBuffer)
      : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  const metadata = parquetMetadata(file);
  const present = new Set(parquetSchema(metadata).children.map((c) => c.element.name));
  const columns = only.filter((c) => present.has(c));
  if (columns.length === 0) return;
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, columns, rowStart, rowEnd });
    rowStart = rowEnd;
    const out: Action[] = [];
    for (const row of rows) {
      const action = toAction(row);
      if (action !== undefined) out.push(action);
    }
    yield out;
  }
}

/**
 * One action from a checkpoint row or a `{"<name>": {...}}` object: the first non-null known
 * column, normalized to the JSON shape (int64 as number, maps as plain objects, absent optional
 * fields dropped).
 */
export function toAction(row: unknown): Action | undefined {
  if (row === null || typeof row !== "object") return undefined;
  const r = row as Record<string, unknown>;
  for (const name of ACTION_COLUMNS) {
    const v = r[name];
    if (v === null || v === undefined || typeof v !== "object") continue;
    const s = v as Record<string, unknown>;
    switch (name) {
      case "add":
        return { add: normalizeAdd(s) };
      case "remove":
        return { remove: normalizeRemove(s) };
      case "metaData":
        return { metaData: normalizeMetadata(s) };
      case "protocol":
        return { protocol: normalizeProtocol(s) };
      case "txn":
        return { txn: normalizeTxn(s) };
      case "domainMetadata":
        return { domainMetadata: normalizeDomainMetadata(s) };
      case "checkpointMetadata":
        return { checkpointMetadata: normalizeCheckpointMetadata(s) };
      case "sidecar": {
        const sidecar = normalizeSidecar(s);
        if (sidecar !== undefined) return { sidecar };
        continue;
      }
    }
  }
  return undefined;
}

function num(v: unknown): number | undefined {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number") return v;
  if (typeof v === "string" && v !== "" && !Number.isNaN(Number(v))) return Number(v);
  return undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function bool(v: unknown): boolean | undefined {
  return typeof v === "boolean" ? v : undefined;
}

/**
 * Parquet MAP columns decode as plain objects in hyparquet, but a Map or a list of key/value
 * entries (the raw repeated group) is accepted too so a reader change cannot corrupt state.
 */
function stringMap(v: unknown): Record<string, string | null> | undefined {
  if (v === null || v === undefined) return undefined;
  const out: Record<string, string | null> = {};
  const put = (k: unknown, val: unknown) => {
    if (k === null || k === undefined) return;
    out[String(k)] = val === null || val === undefined ? null : String(val);
  };
  if (v instanceof Map) {
    for (const [k, val] of v) put(k, val);
  } else if (Array.isArray(v)) {
    for (const e of v) {
      if (e && typeof e === "object") {
        const entry = e as Record<string, unknown>;
        put(entry.key, entry.value);
      }
    }
  } else if (typeof v === "object") {
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) put(k, val);
  } else {
    return undefined;
  }
  return out;
}

function nonNullMap(v: unknown): Record<string, string> | undefined {
  const m = stringMap(v);
  if (m === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(m)) if (val !== null) out[k] = val;
  return out;
}

function stringArray(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((x): x is string => typeof x === "string");
}

/** Assigns only defined values, so absent optional fields stay absent. */
function setIf<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined) {
  if (value !== undefined) target[key] = value;
}

function normalizeDv(v: unknown): DeletionVectorDescriptor | undefined {
  if (v === null || v === undefined || typeof v !== "object") return undefined;
  const d = v as Record<string, unknown>;
  const storageType = str(d.storageType);
  const pathOrInlineDv = str(d.pathOrInlineDv);
  if (storageType === undefined || pathOrInlineDv === undefined) return undefined;
  const out: Partial<DeletionVectorDescriptor> = {
    storageType: storageType as DeletionVectorDescriptor["storageType"],
    pathOrInlineDv,
  };
  // Spark's field order (offset before sizeInBytes) for anyone re-serializing.
  setIf(out, "offset", num(d.offset));
  out.sizeInBytes = num(d.sizeInBytes) ?? 0;
  out.cardinality = num(d.cardinality) ?? 0;
  return out as DeletionVectorDescriptor;
}

function normalizeAdd(s: Record<string, unknown>): AddFile {
  const out: AddFile = {
    path: str(s.path) ?? "",
    partitionValues: stringMap(s.partitionValues) ?? {},
    size: num(s.size) ?? 0,
    modificationTime: num(s.modificationTime) ?? 0,
    dataChange: bool(s.dataChange) ?? false,
  };
  setIf(out, "stats", str(s.stats));
  setIf(out, "tags", nonNullMap(s.tags));
  setIf(out, "deletionVector", normalizeDv(s.deletionVector));
  setIf(out, "baseRowId", num(s.baseRowId));
  setIf(out, "defaultRowCommitVersion", num(s.defaultRowCommitVersion));
  setIf(out, "clusteringProvider", str(s.clusteringProvider));
  return out;
}

function normalizeRemove(s: Record<string, unknown>): RemoveFile {
  // Built key by key so the order matches Spark's remove (dataChange after deletionTimestamp).
  const out = { path: str(s.path) ?? "" } as RemoveFile;
  setIf(out, "deletionTimestamp", num(s.deletionTimestamp));
  out.dataChange = bool(s.dataChange) ?? false;
  setIf(out, "extendedFileMetadata", bool(s.extendedFileMetadata));
  setIf(out, "partitionValues", stringMap(s.partitionValues));
  setIf(out, "size", num(s.size));
  setIf(out, "stats", str(s.stats));
  setIf(out, "tags", nonNullMap(s.tags));
  setIf(out, "deletionVector", normalizeDv(s.deletionVector));
  setIf(out, "baseRowId", num(s.baseRowId));
  setIf(out, "defaultRowCommitVersion", num(s.defaultRowCommitVersion));
  return out;
}

function normalizeMetadata(s: Record<string, unknown>): Metadata {
  const format = (s.format ?? {}) as Record<string, unknown>;
  const out: Partial<Metadata> = { id: str(s.id) ?? "" };
  setIf(out, "name", str(s.name));
  setIf(out, "description", str(s.description));
  out.format = {
    provider: str(format.provider) ?? "parquet",
    options: nonNullMap(format.options) ?? {},
  };
  out.schemaString = str(s.schemaString) ?? "";
  out.partitionColumns = stringArray(s.partitionColumns) ?? [];
  out.configuration = nonNullMap(s.configuration) ?? {};
  setIf(out, "createdTime", num(s.createdTime));
  return out as Metadata;
}

function normalizeProtocol(s: Record<string, unknown>): Protocol {
  const out: Protocol = {
    minReaderVersion: num(s.minReaderVersion) ?? 1,
    minWriterVersion: num(s.minWriterVersion) ?? 2,
  };
  setIf(out, "readerFeatures", stringArray(s.readerFeatures));
  setIf(out, "writerFeatures", stringArray(s.writerFeatures));
  return out;
}

function normalizeTxn(s: Record<string, unknown>): Txn {
  const out: Txn = { appId: str(s.appId) ?? "", version: num(s.version) ?? 0 };
  setIf(out, "lastUpdated", num(s.lastUpdated));
  return out;
}

function normalizeDomainMetadata(s: Record<string, unknown>): DomainMetadata {
  return {
    domain: str(s.domain) ?? "",
    configuration: str(s.configuration) ?? "",
    removed: bool(s.removed) ?? false,
  };
}

function normalizeCheckpointMetadata(s: Record<string, unknown>): CheckpointMetadata {
  const out: CheckpointMetadata = { version: num(s.version) ?? 0 };
  setIf(out, "tags", nonNullMap(s.tags));
  return out;
}

function normalizeSidecar(v: unknown): Sidecar | undefined {
  if (v === null || v === undefined || typeof v !== "object") return undefined;
  const s = v as Record<string, unknown>;
  const path = str(s.path);
  if (path === undefined) return undefined;
  const out: Sidecar = {
    path,
    sizeInBytes: num(s.sizeInBytes) ?? 0,
    modificationTime: num(s.modificationTime) ?? 0,
  };
  setIf(out, "tags", nonNullMap(s.tags));
  return out;
}
