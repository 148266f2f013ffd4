/**
 * Writes V2 checkpoints (PROTOCOL.md "V2 Spec Checkpoints"), never multi-part ones.
 *
 * 1. Refuse a version whose `<v20>.json` is not published: on catalogManaged tables a checkpoint
 *    may only cover published versions, and the existence of `v.json` is the proof.
 * 2. File actions stream in: live adds unchanged (stats string, deletion vector, row tracking),
 *    and remove tombstones newer than now − `delta.deletedFileRetentionDuration`, stripped of stats
 *    and tags as Spark strips them. Up to `sidecarThreshold` of them are buffered; if the stream
 *    ends there they go inline. Past it the checkpoint switches to sidecars: the buffer and every
 *    further `actionsPerSidecar` actions become one Parquet file under `_delta_log/_sidecars/`,
 *    built, written and dropped before the next is started, so only one chunk is ever encoded at
 *    a time. All file actions are inline or all in sidecars, never a mix.
 * 3. Non-file actions go inline in the top-level file: one checkpointMetadata (with the sidecar
 *    tags Spark writes), protocol, metaData, txn per appId, live domainMetadata.
 * 4. Put-if-absent the top-level `<v20>.checkpoint.<uuid>.parquet` after its sidecars, so a
 *    visible checkpoint never names a missing sidecar; a crash before it leaves only orphan
 *    sidecars, which log cleanup removes once they are a day old.
 * 5. On every CLASSIC_EVERY-th interval also put-if-absent the same bytes as
 *    `<v20>.checkpoint.parquet`: clients that only know classic names then find a checkpoint,
 *    read its protocol and fail cleanly instead of replaying a long log.
 * 6. Overwrite `_last_checkpoint` (with its checksum) unless it already names a newer version.
 *
 * The state comes either from a Snapshot (whose files the caller already holds) or streamed from
 * the previous checkpoint plus the commits after it (`checkpointStateFromLog`), which reads the
 * previous checkpoint's sidecars one row group at a time so the whole file list is never in
 * memory: a checkpoint then costs O(actionsPerSidecar + file actions since the last checkpoint)
 * live objects, whatever the table's size.
 */
import { randomUUID } from "node:crypto";
import * as arrow from "apache-arrow";
import { parquetMetadata, parquetReadObjects, parquetSchema } from "hyparquet";
import { writeParquet } from "../data/parquet.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import {
  type Action,
  type AddFile,
  type CheckpointMetadata,
  commitFileName,
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
import {
  type LastCheckpoint,
  readLastCheckpoint,
  readParquetActions,
  SIDECAR_DIR,
  sidecarKey,
  toAction,
} from "./checkpoint-reader.ts";
import { lastCheckpointChecksum } from "./last-checkpoint-checksum.ts";
import { type CheckpointFile, listLog, padVersion } from "./log-listing.ts";
import { checkReadProtocol, logicalFileKey, type Snapshot } from "./snapshot.ts";
import { checkpointInterval, deletedFileRetentionMs } from "./table-config.ts";

/** More file actions than this go to sidecars (a 50k-action checkpoint is a few MB). */
export const DEFAULT_SIDECAR_THRESHOLD = 50_000;
/** File actions per sidecar: bounds the rows encoded at once. */
export const DEFAULT_ACTIONS_PER_SIDECAR = 50_000;
/** Every CLASSIC_EVERY-th checkpoint interval also gets a classic-named copy (step 5). */
export const CLASSIC_EVERY = 10;
/**
 * `_last_checkpoint` repeats the non-file actions and sidecar list only while they are few, as
 * Spark caps them: the file is read on every snapshot load and must stay small.
 */
const LAST_CHECKPOINT_MAX_NON_FILE_ACTIONS = 100;
const LAST_CHECKPOINT_MAX_SIDECARS = 100;
const COMMIT_READ_CONCURRENCY = 32;
/**
 * Snappy because hyparquet (the reader) decodes it without extra codecs, and Spark writes
 * checkpoints that way. Small row groups because hyparquet decodes a whole row group of nested
 * columns at once, at several KB per add; readers that go group by group stay bounded.
 */
const PARQUET_OPTIONS = { compression: "snappy", rowGroupSize: 5_000 } as const;

export type FileAction = { add: AddFile } | { remove: RemoveFile };

/** What a checkpoint records, with file actions as a (possibly lazy) stream. */
export interface CheckpointState {
  version: number;
  protocol: Protocol;
  metadata: Metadata;
  txns: Iterable<Txn>;
  domainMetadata: Iterable<DomainMetadata>;
  /** Live adds and remove tombstones, each logical file once, in any order. */
  fileActions: Iterable<FileAction> | AsyncIterable<FileAction>;
}

export interface WriteCheckpointOptions {
  /** Clock for tombstone expiry (epoch ms); default Date.now(). */
  now?: number;
  sidecarThreshold?: number;
  actionsPerSidecar?: number;
  /** Also write the classic-named copy; default every CLASSIC_EVERY-th interval (step 5). */
  classicNamed?: boolean;
}

export interface LastCheckpointDocument {
  version: number;
  size: number;
  sizeInBytes: number;
  numOfAddFiles: number;
  v2Checkpoint: {
    path: string;
    sizeInBytes: number;
    modificationTime: number;
    nonFileActions?: Action[];
    sidecarFiles?: Sidecar[];
  };
  checksum: string;
}

export interface CheckpointResult {
  version: number;
  /** Object key of the UUID-named top-level file. */
  key: string;
  /** Object key of the classic-named copy, when one was written by this call. */
  classicKey: string | undefined;
  sidecars: Sidecar[];
  /** Actions in the checkpoint, sidecar contents included. */
  numActions: number;
  numOfAddFiles: number;
  numTombstones: number;
  /** Top-level file plus sidecars. */
  sizeInBytes: number;
  /** The document written to `_last_checkpoint`, or undefined when a newer one was kept. */
  lastCheckpoint: LastCheckpointDocument | undefined;
}

/** Writes a checkpoint of a loaded snapshot (its files are already in memory). */
export function writeCheckpoint(
  store: ObjectStore,
  tableRoot: string,
  snapshot: Snapshot,
  opts: WriteCheckpointOptions = {},
): Promise<CheckpointResult> {
  return writeCheckpointState(store, tableRoot, snapshotState(snapshot), opts);
}

export function snapshotState(snapshot: Snapshot): CheckpointState {
  return {
    version: snapshot.version,
    protocol: snapshot.protocol,
    metadata: snapshot.metadata,
    txns: snapshot.txns.values(),
    domainMetadata: snapshot.domainMetadata.values(),
    fileActions: (function* () {
      for (const add of snapshot.files) yield { add };
      for (const remove of snapshot.tombstones) yield { remove };
    })(),
  };
}

export async function writeCheckpointState(
  store: ObjectStore,
  tableRoot: string,
  state: CheckpointState,
  opts: WriteCheckpointOptions = {},
): Promise<CheckpointResult> {
  const root = normalizeRoot(tableRoot);
  const { version } = state;
  // Step 1.
  if ((await store.head(`${root}${LOG_DIR}${commitFileName(version)}`)) === undefined) {
    throw new Error(
      `Cannot checkpoint version ${version} of ${root || "/"}: ${commitFileName(version)} is not ` +
        `published`,
    );
  }
  const now = opts.now ?? Date.now();
  const threshold = Math.max(0, opts.sidecarThreshold ?? DEFAULT_SIDECAR_THRESHOLD);
  const perSidecar = Math.max(1, opts.actionsPerSidecar ?? DEFAULT_ACTIONS_PER_SIDECAR);
  const tombstoneCutoff = now - deletedFileRetentionMs(state.metadata.configuration);
  const uuid = randomUUID();

  // Step 2.
  let buffer: FileAction[] = [];
  let sidecarMode = false;
  const sidecars: Sidecar[] = [];
  let sidecarActions = 0;
  let sidecarBytes = 0;
  let numOfAddFiles = 0;
  let numTombstones = 0;
  const flush = async (chunk: FileAction[]) => {
    const bytes = writeParquet(
      buildTable(SIDECAR_SCHEMA, chunk.map(fileActionRow)),
      PARQUET_OPTIONS,
    );
    const name = `${randomUUID()}.parquet`;
    const key = `${root}${SIDECAR_DIR}${name}`;
    if (!(await store.putIfAbsent(key, bytes))) throw new Error(`Sidecar ${key} already exists`);
    sidecars.push({
      path: name,
      sizeInBytes: bytes.byteLength,
      modificationTime: (await store.head(key))?.lastModified ?? now,
    });
    sidecarActions += chunk.length;
    sidecarBytes += bytes.byteLength;
  };
  for await (const action of state.fileActions) {
    if ("add" in action) {
      numOfAddFiles++;
    } else {
      // Spark drops tombstones without a deletionTimestamp as if deleted at the epoch.
      if ((action.remove.deletionTimestamp ?? 0) <= tombstoneCutoff) continue;
      numTombstones++;
    }
    buffer.push(action);
    if (!sidecarMode && buffer.length > threshold) sidecarMode = true;
    if (sidecarMode && buffer.length >= perSidecar) {
      let start = 0;
      for (; buffer.length - start >= perSidecar; start += perSidecar) {
        await flush(buffer.slice(start, start + perSidecar));
      }
      buffer = buffer.slice(start);
    }
  }
  if (sidecarMode && buffer.length > 0) {
    await flush(buffer);
    buffer = [];
  }
  const inline = !sidecarMode;

  // Step 3.
  const tags: Record<string, string> = { numOfAddFiles: String(numOfAddFiles) };
  if (!inline) {
    tags.sidecarNumActions = String(sidecarActions);
    tags.sidecarSizeInBytes = String(sidecarBytes);
    tags.sidecarFileSchema = SIDECAR_FILE_SCHEMA;
  }
  const checkpointMetadata: CheckpointMetadata = { version, tags };
  const nonFileActions: Action[] = [
    { checkpointMetadata },
    { protocol: state.protocol },
    { metaData: state.metadata },
  ];
  for (const txn of state.txns) nonFileActions.push({ txn });
  for (const d of state.domainMetadata) if (!d.removed) nonFileActions.push({ domainMetadata: d });

  // Step 4.
  const rows = nonFileActions.map(nonFileActionRow);
  if (inline) for (const a of buffer) rows.push(fileActionRow(a));
  else for (const sidecar of sidecars) rows.push({ sidecar: sidecarRow(sidecar) });
  const top = writeParquet(buildTable(CHECKPOINT_SCHEMA, rows), PARQUET_OPTIONS);
  rows.length = 0;
  buffer = [];
  const fileName = `${padVersion(version)}.checkpoint.${uuid}.parquet`;
  const key = `${root}${LOG_DIR}${fileName}`;
  if (!(await store.putIfAbsent(key, top))) throw new Error(`Checkpoint ${key} already exists`);
  const modificationTime = (await store.head(key))?.lastModified ?? now;

  // Step 5.
  const interval = checkpointInterval(state.metadata.configuration);
  let classicKey: string | undefined;
  if (opts.classicNamed ?? (version > 0 && version % (interval * CLASSIC_EVERY) === 0)) {
    const k = `${root}${LOG_DIR}${padVersion(version)}.checkpoint.parquet`;
    if (await store.putIfAbsent(k, top)) classicKey = k;
  }

  // Step 6.
  const numActions = nonFileActions.length + numOfAddFiles + numTombstones + sidecars.length;
  const sizeInBytes = top.byteLength + sidecarBytes;
  const v2Checkpoint: LastCheckpointDocument["v2Checkpoint"] = {
    path: fileName,
    sizeInBytes: top.byteLength,
    modificationTime,
  };
  // The reader takes a hint with both lists as the whole top-level file and then reads only the
  // sidecars, so an inline checkpoint must not carry them (its file actions are not in the hint).
  if (
    !inline &&
    nonFileActions.length <= LAST_CHECKPOINT_MAX_NON_FILE_ACTIONS &&
    sidecars.length <= LAST_CHECKPOINT_MAX_SIDECARS
  ) {
    v2Checkpoint.nonFileActions = nonFileActions;
    v2Checkpoint.sidecarFiles = sidecars;
  }
  const body = {
    version,
    size: numActions,
    sizeInBytes,
    numOfAddFiles,
    v2Checkpoint,
  };
  const doc: LastCheckpointDocument = { ...body, checksum: lastCheckpointChecksum(body) };
  const existing = await readLastCheckpoint(store, root);
  let lastCheckpoint: LastCheckpointDocument | undefined;
  if (existing === undefined || existing.version <= version) {
    await store.put(
      `${root}${LOG_DIR}_last_checkpoint`,
      new TextEncoder().encode(`${JSON.stringify(doc)}\n`),
    );
    lastCheckpoint = doc;
  }
  return {
    version,
    key,
    classicKey,
    sidecars,
    numActions,
    numOfAddFiles,
    numTombstones,
    sizeInBytes,
    lastCheckpoint,
  };
}

// ---------------------------------------------------------------------------------------------
// Streaming state from the previous checkpoint

/**
 * The state at `version` as the newest checkpoint at or below it plus the commits after it,
 * without loading the file list: non-file actions and the later commits' file actions are read
 * up front (the commits since one checkpoint are few), the checkpoint's sidecars are read one row
 * group at a time while the new checkpoint is written, and any file a later commit touched is
 * skipped there and taken from the commits instead. Undefined when no readable checkpoint at or
 * below `version` connects to it through published commits; callers then load a snapshot.
 */
export async function checkpointStateFromLog(
  store: ObjectStore,
  tableRoot: string,
  version: number,
): Promise<CheckpointState | undefined> {
  const root = normalizeRoot(tableRoot);
  const hint = await readLastCheckpoint(store, root);
  const from = hint !== undefined && hint.version <= version ? hint.version : 0;
  const listing = await listLog(store, root, { fromVersion: from });
  const commits = new Map(listing.commits.map((c) => [c.version, c]));
  if (!commits.has(version)) return undefined;
  // Newest usable checkpoint at or below the target, with every commit after it present.
  let gapFloor = version;
  while (gapFloor > from && commits.has(gapFloor - 1)) gapFloor--;
  const candidates = listing.checkpoints
    .filter((c) => c.version <= version && c.version >= gapFloor - 1)
    .reverse();
  for (const previous of candidates) {
    let top: Action[];
    try {
      top = await readTopLevel(store, previous, hint);
    } catch {
      continue;
    }
    const later: Action[][] = [];
    // Bounded parallelism: the gap is one interval normally, but any length after failures.
    for (let v = previous.version + 1; v <= version; v += COMMIT_READ_CONCURRENCY) {
      const batch = Array.from(
        { length: Math.min(COMMIT_READ_CONCURRENCY, version - v + 1) },
        async (_, i) =>
          parseActions(new TextDecoder().decode(await store.get(commits.get(v + i)!.key))),
      );
      later.push(...(await Promise.all(batch)));
    }
    return overlay(store, root, version, top, later);
  }
  return undefined;
}

async function readTopLevel(
  store: ObjectStore,
  checkpoint: CheckpointFile,
  hint: LastCheckpoint | undefined,
): Promise<Action[]> {
  const v2 = hint?.v2Checkpoint;
  if (
    checkpoint.kind === "v2" &&
    hint?.version === checkpoint.version &&
    v2?.nonFileActions !== undefined &&
    v2.sidecarFiles !== undefined &&
    checkpoint.keys[0]!.endsWith(`/${v2.path}`)
  ) {
    return [...v2.nonFileActions, ...v2.sidecarFiles.map((sidecar) => ({ sidecar }))];
  }
  const parts = await Promise.all(
    checkpoint.keys.map(async (key) => {
      const bytes = await store.get(key);
      return checkpoint.format === "json"
        ? parseActions(new TextDecoder().decode(bytes))
        : readParquetActions(bytes);
    }),
  );
  return parts.flat();
}

function overlay(
  store: ObjectStore,
  root: string,
  version: number,
  top: Action[],
  later: Action[][],
): CheckpointState {
  let protocol: Protocol | undefined;
  let metadata: Metadata | undefined;
  const txns = new Map<string, Txn>();
  const domains = new Map<string, DomainMetadata>();
  const inlineFiles: FileAction[] = [];
  const sidecars: Sidecar[] = [];
  const changed = new Map<string, FileAction>();
  const applyNonFile = (a: Action) => {
    if ("protocol" in a) protocol = a.protocol;
    else if ("metaData" in a) metadata = a.metaData;
    else if ("txn" in a) txns.set(a.txn.appId, a.txn);
    else if ("domainMetadata" in a) domains.set(a.domainMetadata.domain, a.domainMetadata);
  };
  for (const a of top) {
    if ("add" in a || "remove" in a) inlineFiles.push(a);
    else if ("sidecar" in a) sidecars.push(a.sidecar);
    else applyNonFile(a);
  }
  for (const actions of later) {
    for (const a of actions) {
      if ("add" in a) changed.set(logicalFileKey(a.add), { add: a.add });
      else if ("remove" in a) changed.set(logicalFileKey(a.remove), { remove: a.remove });
      else applyNonFile(a);
    }
  }
  if (protocol === undefined || metadata === undefined) {
    throw new Error(`Cannot rebuild the protocol and metadata of version ${version}`);
  }
  checkReadProtocol(protocol);
  const unchanged = (a: FileAction) => !changed.has(logicalFileKey("add" in a ? a.add : a.remove));
  return {
    version,
    protocol,
    metadata,
    txns: txns.values(),
    domainMetadata: [...domains.values()].filter((d) => !d.removed),
    fileActions: (async function* () {
      for (const a of inlineFiles) if (unchanged(a)) yield a;
      inlineFiles.length = 0;
      for (const sidecar of sidecars) {
        const bytes = await store.get(sidecarKey(root, sidecar.path));
        for await (const actions of fileActionsByRowGroup(bytes)) {
          for (const a of actions) if (unchanged(a)) yield a;
        }
      }
      yield* changed.values();
    })(),
  };
}

/**
 * The add and remove actions of a sidecar, one row group at a time: hyparquet decodes a whole
 * row group of nested columns at once, so this keeps the transient memory to one group's worth.
 */
async function* fileActionsByRowGroup(bytes: Uint8Array): AsyncGenerator<FileAction[]> {
  const file = bytes.buffer.slice(
    bytes.byteOffset,
    bytes.byteOffset + bytes.byteLength,
  ) as ArrayBuffer;
  const metadata = parquetMetadata(file);
  const present = new Set(parquetSchema(metadata).children.map((c) => c.element.name));
  const columns = ["add", "remove"].filter((c) => present.has(c));
  if (columns.length === 0) return;
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, columns, rowStart, rowEnd });
    rowStart = rowEnd;
    const out: FileAction[] = [];
    for (const row of rows) {
      const a = toAction(row);
      if (a !== undefined && ("add" in a || "remove" in a)) out.push(a);
    }
    yield out;
  }
}

// ---------------------------------------------------------------------------------------------
// Parquet layout (PROTOCOL.md "Checkpoint Schema")

type ColumnType = "string" | "long" | "integer" | "boolean" | "map" | "array" | StructType;
type StructType = readonly (readonly [string, ColumnType])[];

const DV: StructType = [
  ["storageType", "string"],
  ["pathOrInlineDv", "string"],
  ["offset", "integer"],
  ["sizeInBytes", "integer"],
  ["cardinality", "long"],
];

const ADD: StructType = [
  ["path", "string"],
  ["partitionValues", "map"],
  ["size", "long"],
  ["modificationTime", "long"],
  ["dataChange", "boolean"],
  ["stats", "string"],
  ["tags", "map"],
  ["deletionVector", DV],
  ["baseRowId", "long"],
  ["defaultRowCommitVersion", "long"],
  ["clusteringProvider", "string"],
];

const REMOVE: StructType = [
  ["path", "string"],
  ["deletionTimestamp", "long"],
  ["dataChange", "boolean"],
  ["extendedFileMetadata", "boolean"],
  ["partitionValues", "map"],
  ["size", "long"],
  ["deletionVector", DV],
  ["baseRowId", "long"],
  ["defaultRowCommitVersion", "long"],
];

const METADATA: StructType = [
  ["id", "string"],
  ["name", "string"],
  ["description", "string"],
  [
    "format",
    [
      ["provider", "string"],
      ["options", "map"],
    ],
  ],
  ["schemaString", "string"],
  ["partitionColumns", "array"],
  ["configuration", "map"],
  ["createdTime", "long"],
];

const PROTOCOL: StructType = [
  ["minReaderVersion", "integer"],
  ["minWriterVersion", "integer"],
  ["readerFeatures", "array"],
  ["writerFeatures", "array"],
];

const TXN: StructType = [
  ["appId", "string"],
  ["version", "long"],
  ["lastUpdated", "long"],
];

const DOMAIN_METADATA: StructType = [
  ["domain", "string"],
  ["configuration", "string"],
  ["removed", "boolean"],
];

const CHECKPOINT_METADATA: StructType = [
  ["version", "long"],
  ["tags", "map"],
];

const SIDECAR: StructType = [
  ["path", "string"],
  ["sizeInBytes", "long"],
  ["modificationTime", "long"],
  ["tags", "map"],
];

/** Spark's column order; every row sets exactly one of them. */
const CHECKPOINT_COLUMNS: StructType = [
  ["txn", TXN],
  ["add", ADD],
  ["remove", REMOVE],
  ["metaData", METADATA],
  ["protocol", PROTOCOL],
  ["domainMetadata", DOMAIN_METADATA],
  ["checkpointMetadata", CHECKPOINT_METADATA],
  ["sidecar", SIDECAR],
];

const SIDECAR_COLUMNS: StructType = [
  ["add", ADD],
  ["remove", REMOVE],
];

function arrowType(t: ColumnType): arrow.DataType {
  switch (t) {
    case "string":
      return new arrow.Utf8();
    case "long":
      return new arrow.Int64();
    case "integer":
      return new arrow.Int32();
    case "boolean":
      return new arrow.Bool();
    case "map":
      return new arrow.Map_(
        new arrow.Field(
          "key_value",
          new arrow.Struct([
            new arrow.Field("key", new arrow.Utf8(), false),
            new arrow.Field("value", new arrow.Utf8(), true),
          ]),
          false,
        ) as arrow.Field<arrow.Struct>,
      );
    case "array":
      return new arrow.List(new arrow.Field("element", new arrow.Utf8(), true));
    default:
      return new arrow.Struct(
        t.map(([name, type]) => new arrow.Field(name, arrowType(type), true)),
      );
  }
}

/** The Delta (Spark) JSON form of a type, for the `sidecarFileSchema` tag. */
function deltaType(t: ColumnType): unknown {
  switch (t) {
    case "string":
    case "long":
    case "integer":
    case "boolean":
      return t;
    case "map":
      return { type: "map", keyType: "string", valueType: "string", valueContainsNull: true };
    case "array":
      return { type: "array", elementType: "string", containsNull: true };
    default:
      return {
        type: "struct",
        fields: t.map(([name, type]) => ({
          name,
          type: deltaType(type),
          nullable: true,
          metadata: {},
        })),
      };
  }
}

const schemaOf = (columns: StructType): arrow.Schema =>
  new arrow.Schema(columns.map(([name, type]) => new arrow.Field(name, arrowType(type), true)));

const CHECKPOINT_SCHEMA = schemaOf(CHECKPOINT_COLUMNS);
const SIDECAR_SCHEMA = schemaOf(SIDECAR_COLUMNS);
const SIDECAR_FILE_SCHEMA = JSON.stringify(deltaType(SIDECAR_COLUMNS));

type Row = Record<string, unknown>;

function buildTable(schema: arrow.Schema, rows: Row[]): arrow.Table {
  const builders = schema.fields.map((f) =>
    arrow.makeBuilder({ type: f.type, nullValues: [null, undefined] }),
  );
  for (const row of rows) {
    for (let i = 0; i < builders.length; i++) builders[i]!.append(row[schema.fields[i]!.name]);
  }
  const children = builders.map((b) => b.finish().flush());
  const data = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: rows.length,
    children,
    nullCount: 0,
  });
  return new arrow.Table(schema, new arrow.RecordBatch(schema, data));
}

const long = (n: number | null | undefined): bigint | null =>
  n === null || n === undefined ? null : BigInt(Math.trunc(n));

const strMap = (m: Record<string, string | null> | null | undefined) =>
  m === null || m === undefined ? null : new Map(Object.entries(m));

function dvRow(d: DeletionVectorDescriptor | null | undefined): Row | null {
  if (d === null || d === undefined) return null;
  return {
    storageType: d.storageType,
    pathOrInlineDv: d.pathOrInlineDv,
    offset: d.offset ?? null,
    sizeInBytes: d.sizeInBytes,
    cardinality: long(d.cardinality),
  };
}

function fileActionRow(a: FileAction): Row {
  if ("add" in a) {
    const f = a.add;
    return {
      add: {
        path: f.path,
        partitionValues: strMap(f.partitionValues) ?? new Map(),
        size: long(f.size),
        modificationTime: long(f.modificationTime),
        dataChange: f.dataChange,
        stats: f.stats ?? null,
        tags: strMap(f.tags),
        deletionVector: dvRow(f.deletionVector),
        baseRowId: long(f.baseRowId),
        defaultRowCommitVersion: long(f.defaultRowCommitVersion),
        clusteringProvider: f.clusteringProvider ?? null,
      },
    };
  }
  const r = a.remove;
  return {
    remove: {
      path: r.path,
      deletionTimestamp: long(r.deletionTimestamp),
      dataChange: r.dataChange,
      extendedFileMetadata: r.extendedFileMetadata ?? null,
      partitionValues: strMap(r.partitionValues),
      size: long(r.size),
      deletionVector: dvRow(r.deletionVector),
      baseRowId: long(r.baseRowId),
      defaultRowCommitVersion: long(r.defaultRowCommitVersion),
    },
  };
}

function sidecarRow(s: Sidecar): Row {
  return {
    path: s.path,
    sizeInBytes: long(s.sizeInBytes),
    modificationTime: long(s.modificationTime),
    tags: strMap(s.tags),
  };
}

function nonFileActionRow(a: Action): Row {
  if ("checkpointMetadata" in a) {
    return {
      checkpointMetadata: {
        version: long(a.checkpointMetadata.version),
        tags: strMap(a.checkpointMetadata.tags),
      },
    };
  }
  if ("protocol" in a) {
    const p = a.protocol;
    return {
      protocol: {
        minReaderVersion: p.minReaderVersion,
        minWriterVersion: p.minWriterVersion,
        readerFeatures: p.readerFeatures ?? null,
        writerFeatures: p.writerFeatures ?? null,
      },
    };
  }
  if ("metaData" in a) {
    const m = a.metaData;
    return {
      metaData: {
        id: m.id,
        name: m.name ?? null,
        description: m.description ?? null,
        format: { provider: m.format.provider, options: strMap(m.format.options) ?? new Map() },
        schemaString: m.schemaString,
        partitionColumns: m.partitionColumns,
        configuration: strMap(m.configuration) ?? new Map(),
        createdTime: long(m.createdTime),
      },
    };
  }
  if ("txn" in a) {
    return {
      txn: {
        appId: a.txn.appId,
        version: long(a.txn.version),
        lastUpdated: long(a.txn.lastUpdated),
      },
    };
  }
  if ("domainMetadata" in a) {
    const d = a.domainMetadata;
    return {
      domainMetadata: { domain: d.domain, configuration: d.configuration, removed: d.removed },
    };
  }
  throw new Error(`Not a non-file checkpoint action: ${Object.keys(a)[0]}`);
}

const normalizeRoot = (root: string): string =>
  root === "" || root.endsWith("/") ? root : `${root}/`;
