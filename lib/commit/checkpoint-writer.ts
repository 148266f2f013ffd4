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
 * previous checkpoint's sidecars (or its inline Parquet file actions) one row group at a time so
 * the whole file list is never in memory: a checkpoint then costs O(actionsPerSidecar + file
 * actions since the last checkpoint) live objects, whatever the table's size (bench/README.md
 * measures it at 1M files).
 */
import { randomUUID } from "node:crypto";
import * as arrow from "apache-arrow";
import { writeParquet } from "../data/parquet.ts";
import {
  type Action,
  type CheckpointMetadata,
  commitFileName,
  LOG_DIR,
  type Sidecar,
} from "../delta/actions.ts";
import { readLastCheckpoint, SIDECAR_DIR } from "../delta/checkpoint-reader.ts";
import {
  type CheckpointState,
  type FileAction,
  normalizeRoot,
  snapshotState,
} from "../delta/checkpoint-state.ts";
import { lastCheckpointChecksum } from "../delta/last-checkpoint-checksum.ts";
import { padVersion } from "../delta/log-listing.ts";
import type { Snapshot } from "../delta/snapshot.ts";
import { checkpointInterval, deletedFileRetentionMs } from "../delta/table-config.ts";
import type { ObjectStore } from "../storage/object-store.ts";

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
/**
 * Snappy because hyparquet (the reader) decodes it without extra codecs, and Spark writes
 * checkpoints that way. Small row groups because hyparquet decodes a whole row group of nested
 * columns at once, at several KB per add; readers that go group by group stay bounded.
 */
const PARQUET_OPTIONS = { compression: "snappy", rowGroupSize: 5_000 } as const;

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
    const bytes = writeParquet(buildTable(SIDECAR_LAYOUT, chunk.map(actionRow)), PARQUET_OPTIONS);
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
  const rows = nonFileActions.map(actionRow);
  if (inline) for (const a of buffer) rows.push(actionRow(a));
  else for (const sidecar of sidecars) rows.push({ sidecar });
  const top = writeParquet(buildTable(CHECKPOINT_LAYOUT, rows), PARQUET_OPTIONS);
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

interface Layout {
  columns: StructType;
  schema: arrow.Schema;
}

const layoutOf = (columns: StructType): Layout => ({
  columns,
  schema: new arrow.Schema(
    columns.map(([name, type]) => new arrow.Field(name, arrowType(type), true)),
  ),
});

const CHECKPOINT_LAYOUT = layoutOf(CHECKPOINT_COLUMNS);
const SIDECAR_LAYOUT = layoutOf(SIDECAR_COLUMNS);
const SIDECAR_FILE_SCHEMA = JSON.stringify(deltaType(SIDECAR_COLUMNS));

/**
 * Rows are plain objects in the layout's shape: strings, numbers (int64 columns too), booleans,
 * string-to-string objects for maps, string arrays; null or undefined for null.
 */
type Row = Record<string, unknown>;

/**
 * The rows as one Arrow record batch, column by column into typed arrays: Arrow's generic row
 * builders cost several times the Parquet encoding on a 1M-file checkpoint, mostly garbage.
 */
function buildTable(layout: Layout, rows: readonly Row[]): arrow.Table {
  const { columns, schema } = layout;
  const children = columns.map(([name, t], i) =>
    columnData(
      t,
      schema.fields[i]!.type,
      rows.map((r) => r[name]),
    ),
  );
  const data = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: rows.length,
    children,
    nullCount: 0,
  });
  return new arrow.Table(schema, new arrow.RecordBatch(schema, data));
}

const isNull = (v: unknown): v is null | undefined => v === null || v === undefined;

/** Validity bitmap of `values` (bit set = present), undefined when nothing is null. */
function validity(values: readonly unknown[]): { nullBitmap?: Uint8Array; nullCount: number } {
  let nullCount = 0;
  for (const v of values) if (isNull(v)) nullCount++;
  if (nullCount === 0) return { nullCount };
  const nullBitmap = new Uint8Array((values.length + 7) >> 3);
  for (let i = 0; i < values.length; i++) {
    if (!isNull(values[i])) nullBitmap[i >> 3]! |= 1 << (i & 7);
  }
  return { nullBitmap, nullCount };
}

function utf8Data(type: arrow.DataType, values: readonly unknown[]): arrow.Data {
  const valueOffsets = new Int32Array(values.length + 1);
  const parts: string[] = [];
  let bytes = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === "string") {
      parts.push(v);
      bytes += Buffer.byteLength(v);
    }
    valueOffsets[i + 1] = bytes;
  }
  // One encode of the joined strings instead of one per value.
  const data = new TextEncoder().encode(parts.join(""));
  return arrow.makeData({
    type: type as arrow.Utf8,
    length: values.length,
    ...validity(values),
    valueOffsets,
    data,
  });
}

function columnData(t: ColumnType, type: arrow.DataType, values: readonly unknown[]): arrow.Data {
  const length = values.length;
  switch (t) {
    case "string":
      return utf8Data(type, values);
    case "long": {
      // Written as 32-bit halves: a BigInt per value would be most of the cost.
      const data = new BigInt64Array(length);
      const words = new Int32Array(data.buffer);
      for (let i = 0; i < length; i++) {
        const v = values[i];
        if (typeof v !== "number") continue;
        const n = Math.trunc(v);
        const hi = Math.floor(n / 2 ** 32);
        words[2 * i] = n - hi * 2 ** 32;
        words[2 * i + 1] = hi;
      }
      return arrow.makeData({ type: type as arrow.Int64, length, ...validity(values), data });
    }
    case "integer": {
      const data = new Int32Array(length);
      for (let i = 0; i < length; i++) data[i] = (values[i] as number | null) ?? 0;
      return arrow.makeData({ type: type as arrow.Int32, length, ...validity(values), data });
    }
    case "boolean": {
      const data = new Uint8Array((length + 7) >> 3);
      for (let i = 0; i < length; i++) if (values[i] === true) data[i >> 3]! |= 1 << (i & 7);
      return arrow.makeData({ type: type as arrow.Bool, length, ...validity(values), data });
    }
    case "map":
    case "array": {
      const valueOffsets = new Int32Array(length + 1);
      const keys: string[] = [];
      const items: unknown[] = [];
      for (let i = 0; i < length; i++) {
        const v = values[i];
        if (t === "array" && Array.isArray(v)) items.push(...v);
        else if (t === "map" && !isNull(v)) {
          for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
            keys.push(k);
            items.push(x);
          }
        }
        valueOffsets[i + 1] = items.length;
      }
      const childType = (type as arrow.Map_ | arrow.List).children[0]!.type;
      const child =
        t === "array"
          ? utf8Data(childType, items)
          : arrow.makeData({
              type: childType as arrow.Struct,
              length: items.length,
              nullCount: 0,
              children: [
                utf8Data(childType.children[0]!.type, keys),
                utf8Data(childType.children[1]!.type, items),
              ],
            });
      return arrow.makeData({
        type: type as arrow.Map_,
        length,
        ...validity(values),
        valueOffsets,
        child,
      } as never);
    }
    default: {
      const children = t.map(([name, ct], k) =>
        columnData(
          ct,
          type.children[k]!.type,
          values.map((v) => (isNull(v) ? null : (v as Row)[name])),
        ),
      );
      return arrow.makeData({ type: type as arrow.Struct, length, ...validity(values), children });
    }
  }
}

/**
 * An action as a checkpoint row. Actions already have the layout's shape (columns pick their
 * fields by name, so a remove's stats and tags are left out as Spark leaves them out); only the
 * maps the protocol requires get a value when a JSON commit left them out.
 */
function actionRow(a: Action): Row {
  if ("add" in a && isNull(a.add.partitionValues)) {
    return { add: { ...a.add, partitionValues: {} } };
  }
  if ("metaData" in a) {
    const m = a.metaData;
    return {
      metaData: {
        ...m,
        format: { ...m.format, options: m.format.options ?? {} },
        configuration: m.configuration ?? {},
      },
    };
  }
  return a as Row;
}
