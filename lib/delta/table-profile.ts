/**
 * The protocol and properties every new Silt table gets, as the catalog of seeds/002 prescribes:
 * requirements (catalogManaged, deletionVectors, v2Checkpoint, vacuumProtocolCheck,
 * inCommitTimestamp) that a caller cannot turn off, and suggestions (column mapping in name mode,
 * row tracking, domain metadata) that a caller may override through TBLPROPERTIES.
 *
 * 1. Reject TBLPROPERTIES that contradict a requirement, with the catalog's message.
 * 2. Reject unknown `delta.*` keys, as Delta does, so typos do not pass silently, and values Delta
 *    would not take (table-property-values.ts).
 * 3. Turn on each suggestion the caller did not override.
 * 4. Derive the protocol from the resulting properties and the schema (timestamp_ntz needs its
 *    own feature).
 *
 * A replacement (CREATE OR REPLACE / REPLACE TABLE) goes through the same steps: the catalog's
 * requirements hold for the table's whole life, not only for its first version.
 */
import { randomUUID } from "node:crypto";
import { siltError } from "../errors.ts";
import type { Protocol } from "./actions.ts";
import { checkRetentionOrder, validPropertyValue } from "./table-property-values.ts";

/** Property -> value the catalog insists on. */
const REQUIRED_PROPERTIES: Record<string, string> = {
  "delta.enableDeletionVectors": "true",
  "delta.checkpointPolicy": "v2",
  "delta.enableInCommitTimestamps": "true",
};

/** Features a catalog-managed table must list, in the order Spark lists them. */
const REQUIRED_FEATURES = [
  "catalogManaged",
  "deletionVectors",
  "v2Checkpoint",
  "vacuumProtocolCheck",
  "inCommitTimestamp",
] as const;

/** Features read by readers as well as writers (the rest are writer-only). */
const READER_WRITER_FEATURES = new Set([
  "catalogManaged",
  "deletionVectors",
  "v2Checkpoint",
  "vacuumProtocolCheck",
  "columnMapping",
  "timestampNtz",
]);

/** Every `delta.*` table property Silt understands; anything else under `delta.` is a typo. */
const KNOWN_DELTA_PROPERTIES = new Set([
  ...Object.keys(REQUIRED_PROPERTIES),
  "delta.appendOnly",
  "delta.checkpointInterval",
  "delta.checkpointRetentionDuration",
  "delta.columnMapping.mode",
  "delta.columnMapping.maxColumnId",
  "delta.dataSkippingNumIndexedCols",
  "delta.dataSkippingStatsColumns",
  "delta.deletedFileRetentionDuration",
  "delta.enableChangeDataFeed",
  // Honoured by scheduled maintenance (lib/ops/maintenance-plan.ts), as Delta's log cleanup does.
  "delta.enableExpiredLogCleanup",
  "delta.enableRowTracking",
  "delta.isolationLevel",
  "delta.logRetentionDuration",
  "delta.minReaderVersion",
  "delta.minWriterVersion",
  "delta.randomizeFilePrefixes",
  "delta.targetFileSize",
  "delta.tuneFileSizesForRewrites",
  "delta.rowTracking.materializedRowIdColumnName",
  "delta.rowTracking.materializedRowCommitVersionColumnName",
  // Set by Unity Catalog clients from the staging answer (managedTableContract).
  "delta.checkpoint.writeStatsAsJson",
  "delta.checkpoint.writeStatsAsStruct",
  "delta.parquet.compression.codec",
]);

/** Properties only Silt itself may set. */
const RESERVED_PROPERTIES = new Set([
  "io.unitycatalog.tableId",
  "delta.columnMapping.maxColumnId",
  "delta.rowTracking.materializedRowIdColumnName",
  "delta.rowTracking.materializedRowCommitVersionColumnName",
]);

export interface TableProfile {
  protocol: Protocol;
  /** The table's properties (metaData.configuration), before column-mapping bookkeeping. */
  configuration: Record<string, string>;
  columnMapping: boolean;
  rowTracking: boolean;
}

/**
 * Validates caller-supplied TBLPROPERTIES for a new table named `tableName` and returns the
 * protocol and configuration to commit at version 0.
 */
export function newTableProfile(
  tableName: string,
  tableId: string,
  requested: Record<string, string>,
  opts: {
    usesTimestampNtz: boolean;
    /**
     * "replace" for CREATE OR REPLACE / REPLACE TABLE: the catalog's requirements hold for a
     * replacement exactly as for a create, so a replacement cannot drop what a create must have.
     */
    verb?: "create" | "replace";
  },
): TableProfile {
  const verb = opts.verb ?? "create";
  const props: Record<string, string> = {};
  for (const [rawKey, value] of Object.entries(requested)) {
    // Delta property keys are case-insensitive; store them in their canonical spelling.
    const key = canonicalKey(rawKey);
    if (RESERVED_PROPERTIES.has(key)) {
      throw siltError("INVALID_PARAMETER_VALUE:MANAGED_PROPERTY", { verb, tableName, key });
    }
    const required = REQUIRED_PROPERTIES[key];
    if (required !== undefined && value.toLowerCase() !== required) {
      throw requirementError(verb, tableName, key, required, value);
    }
    if (key.startsWith("delta.feature.")) {
      const feature = key.slice("delta.feature.".length);
      if (isRequiredFeature(feature) && value.toLowerCase() !== "supported") {
        throw requirementError(verb, tableName, key, "supported", value);
      }
      if (value.toLowerCase() !== "supported" && value.toLowerCase() !== "enabled") {
        throw siltError("DELTA_UNSUPPORTED_FEATURE_STATUS", { feature, key, value });
      }
      // `delta.feature.*` is an instruction about the protocol, not a stored property.
      continue;
    }
    props[key] = checkedValue(key, rawKey, value);
  }
  checkRetentionOrder(props, new Set(Object.keys(props)));

  const mappingMode = (props["delta.columnMapping.mode"] ?? "name").toLowerCase();
  if (!["none", "name", "id"].includes(mappingMode)) {
    throw siltError("DELTA_MODE_NOT_SUPPORTED", { props: props["delta.columnMapping.mode"] });
  }
  const rowTracking = (props["delta.enableRowTracking"] ?? "true").toLowerCase() === "true";

  const configuration: Record<string, string> = { ...REQUIRED_PROPERTIES };
  for (const [k, v] of Object.entries(props)) configuration[k] = v;
  configuration["delta.columnMapping.mode"] = mappingMode;
  configuration["delta.enableRowTracking"] = String(rowTracking);
  if (rowTracking) {
    configuration["delta.rowTracking.materializedRowIdColumnName"] = `_row-id-col-${randomUUID()}`;
    configuration["delta.rowTracking.materializedRowCommitVersionColumnName"] =
      `_row-commit-version-col-${randomUUID()}`;
  }
  configuration["io.unitycatalog.tableId"] = tableId;

  const features: string[] = [...REQUIRED_FEATURES];
  if (mappingMode !== "none") features.push("columnMapping");
  if (opts.usesTimestampNtz) features.push("timestampNtz");
  if (rowTracking) features.push("rowTracking");
  // Suggested on its own and required by row tracking.
  features.push("domainMetadata");
  for (const [rawKey, value] of Object.entries(requested)) {
    const key = canonicalKey(rawKey);
    if (key.startsWith("delta.feature.") && value.toLowerCase() !== "disabled") {
      const feature = key.slice("delta.feature.".length);
      if (!features.includes(feature)) features.push(feature);
    }
  }

  return {
    protocol: protocolFor(features),
    configuration,
    columnMapping: mappingMode !== "none",
    rowTracking,
  };
}

/**
 * The value to store for a property: anything under `delta.` must be a property Silt understands,
 * with a value Delta accepts (table-property-values.ts), and change data feed must stay off: Silt
 * writes no change data files, so a table claiming the feed would lie to its readers.
 */
function checkedValue(key: string, rawKey: string, value: string): string {
  if (key.startsWith("delta.") && !KNOWN_DELTA_PROPERTIES.has(key)) {
    throw siltError("DELTA_UNKNOWN_CONFIGURATION", { rawKey });
  }
  const stored = validPropertyValue(key, value);
  if (key === "delta.enableChangeDataFeed" && stored !== "false") {
    throw siltError("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE:CHANGE_DATA_FEED");
  }
  return stored;
}

/**
 * Properties whose value decides the protocol or the layout of files already written: changing
 * one would need a protocol upgrade or a rewrite, which ALTER TABLE in Silt does not do.
 */
const FIXED_AFTER_CREATE = new Set([
  "delta.columnMapping.mode",
  "delta.enableRowTracking",
  "delta.minReaderVersion",
  "delta.minWriterVersion",
]);

/**
 * The configuration after ALTER TABLE … SET / UNSET TBLPROPERTIES, validated as a create validates
 * TBLPROPERTIES (reserved keys, the catalog's requirements, unknown `delta.*` keys), plus: keys fixed
 * at create time keep their value, and unsetting an absent key fails unless `ifExists`.
 */
export function alteredConfiguration(
  tableName: string,
  current: Record<string, string>,
  change: { set?: Record<string, string>; unset?: string[]; ifExists?: boolean },
): Record<string, string> {
  const next = { ...current };
  const changed = new Set<string>();
  const verb = "alter";
  for (const [rawKey, value] of Object.entries(change.set ?? {})) {
    const key = canonicalKey(rawKey);
    if (RESERVED_PROPERTIES.has(key) && current[key] !== value) {
      throw siltError("INVALID_PARAMETER_VALUE:ALTER_MANAGED_PROPERTY", { tableName, key });
    }
    const required = REQUIRED_PROPERTIES[key];
    if (required !== undefined && value.toLowerCase() !== required) {
      throw requirementError(verb, tableName, key, required, value);
    }
    if (key.startsWith("delta.feature.")) {
      throw siltError("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE:ALTER_TABLE", {
        tableName,
        key,
      });
    }
    const stored = checkedValue(key, rawKey, value);
    if (
      FIXED_AFTER_CREATE.has(key) &&
      (current[key] ?? "").toLowerCase() !== stored.toLowerCase()
    ) {
      throw siltError("DELTA_UNSUPPORTED_TABLE_PROPERTY_CHANGE:WITH_VALUE", {
        tableName,
        key,
        currentValue: current[key] ?? "unset",
      });
    }
    next[key] = stored;
    changed.add(key);
  }
  checkRetentionOrder(next, changed);
  const missing: string[] = [];
  for (const rawKey of change.unset ?? []) {
    const key = canonicalKey(rawKey);
    if (REQUIRED_PROPERTIES[key] !== undefined || RESERVED_PROPERTIES.has(key)) {
      throw siltError("INVALID_PARAMETER_VALUE:UNSET_REQUIRED_PROPERTY", { tableName, key });
    }
    if (FIXED_AFTER_CREATE.has(key) && key in current) {
      throw siltError("DELTA_UNSUPPORTED_TABLE_PROPERTY_CHANGE:AT_CREATE_ONLY", {
        tableName,
        key,
      });
    }
    if (!(key in next)) missing.push(rawKey);
    delete next[key];
  }
  if (missing.length > 0 && !change.ifExists) {
    throw siltError("UNSET_NONEXISTENT_PROPERTIES", {
      missing: missing.map((k) => `\`${k}\``).join(", "),
      tableName,
    });
  }
  return next;
}

/** Reader 3 / writer 7 with each feature in the list(s) it belongs to. */
export function protocolFor(features: string[]): Protocol {
  return {
    minReaderVersion: 3,
    minWriterVersion: 7,
    readerFeatures: features.filter((f) => READER_WRITER_FEATURES.has(f)),
    writerFeatures: [...features],
  };
}

function isRequiredFeature(feature: string): boolean {
  return (REQUIRED_FEATURES as readonly string[]).includes(feature);
}

function requirementError(
  verb: string,
  tableName: string,
  key: string,
  required: string,
  supplied: string,
) {
  return siltError("INVALID_PARAMETER_VALUE:REQUIRED_PROPERTY_VALUE", {
    verb,
    tableName,
    key,
    required,
    supplied,
  });
}

const CANONICAL = new Map(
  [...KNOWN_DELTA_PROPERTIES, ...RESERVED_PROPERTIES].map((k) => [k.toLowerCase(), k]),
);

function canonicalKey(key: string): string {
  const lower = key.toLowerCase();
  if (lower.startsWith("delta.feature.")) return `delta.feature.${key.slice(14)}`;
  return CANONICAL.get(lower) ?? key;
}

/**
 * What the catalog tells a Unity Catalog client staging a new table (the staging answer): the
 * protocol and properties its version 0 must have, and those it should have unless the user
 * chose otherwise. The same requirements as `newTableProfile`, plus the checkpoint-statistics
 * properties Unity Catalog asks of its clients' checkpoints; a null suggestion means "the engine
 * fills it in".
 */
export interface ManagedTableContract {
  requiredProtocol: Protocol;
  suggestedReaderFeatures: string[];
  suggestedWriterFeatures: string[];
  requiredProperties: Record<string, string>;
  suggestedProperties: Record<string, string | null>;
}

export function managedTableContract(tableId: string): ManagedTableContract {
  return {
    requiredProtocol: protocolFor([...REQUIRED_FEATURES]),
    suggestedReaderFeatures: ["columnMapping"],
    suggestedWriterFeatures: ["columnMapping", "domainMetadata", "rowTracking"],
    requiredProperties: {
      ...REQUIRED_PROPERTIES,
      "delta.checkpoint.writeStatsAsStruct": "true",
      "delta.checkpoint.writeStatsAsJson": "true",
      "io.unitycatalog.tableId": tableId,
    },
    suggestedProperties: {
      "delta.columnMapping.mode": "name",
      "delta.columnMapping.maxColumnId": null,
      "delta.enableRowTracking": "true",
      "delta.randomizeFilePrefixes": "true",
      "delta.parquet.compression.codec": "zstd",
      "delta.rowTracking.materializedRowIdColumnName": null,
      "delta.rowTracking.materializedRowCommitVersionColumnName": null,
    },
  };
}

/**
 * Checks a protocol and configuration that a Unity Catalog client wrote (its version 0, or a
 * later commit that changes them) against the catalog's requirements, with the messages Silt's
 * own CREATE gives. The checkpoint-statistics properties are asked for but not enforced: Silt's
 * own tables predate them, and neither changes what a reader sees.
 */
export function checkManagedTable(
  tableName: string,
  tableId: string,
  protocol: Protocol,
  configuration: Record<string, string>,
  verb: "create" | "commit to",
): void {
  const readerFeatures = protocol.readerFeatures ?? [];
  const writerFeatures = protocol.writerFeatures ?? [];
  // Properties first: turning one off also drops its feature, and the property is what the user
  // wrote (seed 002's refusal names it).
  const lower = new Map(Object.entries(configuration).map(([k, v]) => [canonicalKey(k), v]));
  for (const [key, required] of Object.entries(REQUIRED_PROPERTIES)) {
    const supplied = lower.get(key);
    if (supplied === undefined) {
      throw siltError("INVALID_PARAMETER_VALUE:REQUIRED_PROPERTY_MISSING", {
        verb,
        tableName,
        key,
        required,
      });
    }
    if (supplied.toLowerCase() !== required) {
      throw requirementError(verb, tableName, key, required, supplied);
    }
  }
  if (protocol.minReaderVersion < 3 || protocol.minWriterVersion < 7) {
    throw siltError("INVALID_PARAMETER_VALUE:REQUIRED_PROTOCOL", {
      verb,
      tableName,
      minReaderVersion: protocol.minReaderVersion,
      minWriterVersion: protocol.minWriterVersion,
    });
  }
  for (const feature of REQUIRED_FEATURES) {
    const lists = READER_WRITER_FEATURES.has(feature)
      ? [readerFeatures, writerFeatures]
      : [writerFeatures];
    if (lists.some((list) => !list.includes(feature))) {
      throw siltError("INVALID_PARAMETER_VALUE:REQUIRED_FEATURE", {
        verb,
        tableName,
        feature,
        featureLists: READER_WRITER_FEATURES.has(feature)
          ? " among both its reader and writer features"
          : "",
      });
    }
  }
  const notWritten = readerFeatures.filter((f) => !writerFeatures.includes(f));
  if (notWritten.length > 0) {
    throw siltError("INVALID_PARAMETER_VALUE:READER_FEATURES_NOT_WRITER", {
      verb,
      tableName,
      notWritten: notWritten.join(", "),
    });
  }
  const id = lower.get("io.unitycatalog.tableId");
  if (id !== tableId) {
    throw siltError("INVALID_PARAMETER_VALUE:TABLE_ID_PROPERTY", {
      verb,
      tableName,
      tableId,
      found: id === undefined ? "none" : `'${id}'`,
    });
  }
}
