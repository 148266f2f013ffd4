/**
 * Delta log actions, shaped exactly as PROTOCOL.md writes them. Field order in these interfaces is
 * the order Spark writes, and writers build objects in that order so commits read like Spark's.
 * Readers ignore unknown fields and unknown actions.
 */

export interface Protocol {
  minReaderVersion: number;
  minWriterVersion: number;
  readerFeatures?: string[];
  writerFeatures?: string[];
}

export interface Format {
  provider: string;
  options: Record<string, string>;
}

export interface Metadata {
  id: string;
  name?: string | null;
  description?: string | null;
  format: Format;
  /** JSON-encoded Delta StructType. */
  schemaString: string;
  /** Logical column names. */
  partitionColumns: string[];
  configuration: Record<string, string>;
  createdTime?: number | null;
}

export interface DeletionVectorDescriptor {
  /** "u" relative UUID path, "i" inline, "p" absolute path. */
  storageType: "u" | "i" | "p";
  pathOrInlineDv: string;
  offset?: number;
  sizeInBytes: number;
  cardinality: number;
}

export interface AddFile {
  /** URI-encoded path, relative to the table root (or absolute). */
  path: string;
  /** Physical column name -> serialized value; null means a NULL partition value. */
  partitionValues: Record<string, string | null>;
  size: number;
  modificationTime: number;
  dataChange: boolean;
  /** JSON string: {numRecords, minValues, maxValues, nullCount, tightBounds}. */
  stats?: string | null;
  tags?: Record<string, string> | null;
  deletionVector?: DeletionVectorDescriptor | null;
  baseRowId?: number | null;
  defaultRowCommitVersion?: number | null;
  clusteringProvider?: string | null;
}

export interface RemoveFile {
  path: string;
  deletionTimestamp?: number | null;
  dataChange: boolean;
  extendedFileMetadata?: boolean | null;
  partitionValues?: Record<string, string | null> | null;
  size?: number | null;
  stats?: string | null;
  tags?: Record<string, string> | null;
  deletionVector?: DeletionVectorDescriptor | null;
  baseRowId?: number | null;
  defaultRowCommitVersion?: number | null;
}

export interface AddCdcFile {
  path: string;
  partitionValues: Record<string, string | null>;
  size: number;
  dataChange: boolean;
  tags?: Record<string, string> | null;
}

export interface Txn {
  appId: string;
  version: number;
  lastUpdated?: number | null;
}

export interface DomainMetadata {
  domain: string;
  configuration: string;
  removed: boolean;
}

export interface CheckpointMetadata {
  version: number;
  tags?: Record<string, string> | null;
}

export interface Sidecar {
  path: string;
  sizeInBytes: number;
  modificationTime: number;
  tags?: Record<string, string> | null;
}

/** Free-form in the protocol; these are the fields Spark writes, in Spark's order. */
export interface CommitInfo {
  inCommitTimestamp?: number;
  timestamp?: number;
  userId?: string;
  userName?: string;
  operation?: string;
  operationParameters?: Record<string, unknown>;
  readVersion?: number;
  isolationLevel?: string;
  isBlindAppend?: boolean;
  operationMetrics?: Record<string, string>;
  userMetadata?: string;
  tags?: Record<string, string>;
  engineInfo?: string;
  txnId?: string;
  [key: string]: unknown;
}

export type Action =
  | { protocol: Protocol }
  | { metaData: Metadata }
  | { add: AddFile }
  | { remove: RemoveFile }
  | { cdc: AddCdcFile }
  | { txn: Txn }
  | { domainMetadata: DomainMetadata }
  | { commitInfo: CommitInfo }
  | { checkpointMetadata: CheckpointMetadata }
  | { sidecar: Sidecar };

const KNOWN = new Set([
  "protocol",
  "metaData",
  "add",
  "remove",
  "cdc",
  "txn",
  "domainMetadata",
  "commitInfo",
  "checkpointMetadata",
  "sidecar",
]);

/** Parses newline-delimited JSON actions, skipping blank lines and unknown actions. */
/** A file's `numRecords` statistic, when it has statistics. */
export function numRecordsOf(file: AddFile): number | undefined {
  if (!file.stats) return undefined;
  const n = (JSON.parse(file.stats) as { numRecords?: unknown }).numRecords;
  return typeof n === "number" ? n : undefined;
}

export function parseActions(text: string): Action[] {
  const out: Action[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "") continue;
    const obj = JSON.parse(trimmed) as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (KNOWN.has(key) && obj[key] !== null && obj[key] !== undefined) {
        out.push({ [key]: obj[key] } as Action);
        break;
      }
    }
  }
  return out;
}

/** Serializes actions as newline-delimited JSON (one action per line, trailing newline). */
export function serializeActions(actions: Action[]): string {
  return `${actions.map((a) => JSON.stringify(a)).join("\n")}\n`;
}

/** Commit file name for a version: 20-digit zero-padded. */
export const commitFileName = (version: number): string =>
  `${String(version).padStart(20, "0")}.json`;

export const LOG_DIR = "_delta_log/";
export const STAGED_DIR = "_delta_log/_staged_commits/";
