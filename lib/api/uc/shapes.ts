/**
 * Silt's catalog entries and Delta snapshots in the shapes Unity Catalog's clients parse: the
 * legacy API's CatalogInfo / SchemaInfo / TableInfo / ColumnInfo (snake_case, epoch-ms times) and
 * the UC Delta API's table metadata, protocol and struct types (kebab-case).
 */
import type { CatalogEntry, SchemaEntry, TableEntry } from "../../catalog/catalog-store.ts";
import { locationUri, type SiltContext } from "../../context.ts";
import type { Protocol } from "../../delta/actions.ts";
import {
  COLUMN_MAPPING_ID_KEY,
  COLUMN_MAPPING_PHYSICAL_NAME_KEY,
  type DataType,
  dataTypeToJson,
  parseDataTypeJson,
  parseSchema,
  type StructField,
  type StructType,
  sparkTypeName,
} from "../../delta/schema.ts";
import type { Snapshot } from "../../delta/snapshot.ts";
import { siltError } from "../../errors.ts";

export function catalogInfo(ctx: SiltContext, c: CatalogEntry) {
  return {
    name: c.name,
    comment: c.comment ?? null,
    properties: c.properties ?? {},
    owner: c.owner,
    created_at: c.createdAt,
    updated_at: c.updatedAt ?? c.createdAt,
    id: c.id,
    storage_root: locationUri(ctx, "tables"),
  };
}

export function schemaInfo(s: SchemaEntry) {
  return {
    name: s.name,
    catalog_name: s.catalog,
    full_name: `${s.catalog}.${s.name}`,
    comment: s.comment ?? null,
    properties: s.properties ?? {},
    owner: s.owner,
    created_at: s.createdAt,
    updated_at: s.updatedAt ?? s.createdAt,
    schema_id: s.id,
  };
}

/** Unity Catalog's type_name of a Delta type. */
function typeName(t: DataType): string {
  if (typeof t === "string") {
    const names: Record<string, string> = {
      byte: "BYTE",
      short: "SHORT",
      integer: "INT",
      long: "LONG",
    };
    return names[t] ?? t.toUpperCase();
  }
  return t.type === "unsupported" ? t.name.toUpperCase() : t.type.toUpperCase();
}

/** Field metadata a catalog shows: column mapping's physical names and ids are the log's. */
function visibleMetadata(f: StructField): Record<string, unknown> {
  const {
    [COLUMN_MAPPING_ID_KEY]: _id,
    [COLUMN_MAPPING_PHYSICAL_NAME_KEY]: _name,
    ...rest
  } = f.metadata;
  return rest;
}

export function columnInfos(schema: StructType, partitionColumns: readonly string[]) {
  return schema.fields.map((f, position) => {
    const info: Record<string, unknown> = {
      name: f.name,
      type_text: sparkTypeName(f.type),
      type_json: JSON.stringify({
        name: f.name,
        type: dataTypeToJson(f.type),
        nullable: f.nullable,
        metadata: visibleMetadata(f),
      }),
      type_name: typeName(f.type),
      type_precision:
        typeof f.type === "object" && f.type.type === "decimal" ? f.type.precision : 0,
      type_scale: typeof f.type === "object" && f.type.type === "decimal" ? f.type.scale : 0,
      position,
      nullable: f.nullable,
    };
    if (typeof f.metadata.comment === "string") info.comment = f.metadata.comment;
    const partitionIndex = partitionColumns.indexOf(f.name);
    if (partitionIndex >= 0) info.partition_index = partitionIndex;
    return info;
  });
}

/**
 * The table's properties as a catalog reports them: its configuration plus what the protocol
 * says (`delta.minReaderVersion`, `delta.feature.*`) and where the log stands, the keys Unity
 * Catalog derives on its side (clients must not write them back).
 */
export function tableProperties(snapshot: Snapshot): Record<string, string> {
  const props: Record<string, string> = { ...snapshot.metadata.configuration };
  props["delta.minReaderVersion"] = String(snapshot.protocol.minReaderVersion);
  props["delta.minWriterVersion"] = String(snapshot.protocol.minWriterVersion);
  for (const f of snapshot.protocol.writerFeatures ?? []) props[`delta.feature.${f}`] = "supported";
  props["delta.lastUpdateVersion"] = String(snapshot.version);
  props["delta.lastCommitTimestamp"] = String(snapshot.timestamp);
  return props;
}

export function tableInfo(ctx: SiltContext, entry: TableEntry, snapshot: Snapshot) {
  const schema = parseSchema(snapshot.metadata.schemaString);
  return {
    name: entry.name,
    catalog_name: entry.catalog,
    schema_name: entry.schema,
    full_name: `${entry.catalog}.${entry.schema}.${entry.name}`,
    table_type: entry.tableType,
    data_source_format: entry.dataSourceFormat,
    columns: columnInfos(schema, snapshot.metadata.partitionColumns),
    storage_location: locationUri(ctx, entry.location),
    table_id: entry.tableId,
    properties: tableProperties(snapshot),
    comment: snapshot.metadata.description ?? null,
    owner: entry.owner,
    created_at: entry.createdAt,
    updated_at: snapshot.timestamp,
  };
}

// ---- the UC Delta API ----

export function deltaProtocol(p: Protocol) {
  const out: Record<string, unknown> = {
    "min-reader-version": p.minReaderVersion,
    "min-writer-version": p.minWriterVersion,
  };
  if (p.readerFeatures !== undefined) out["reader-features"] = p.readerFeatures;
  if (p.writerFeatures !== undefined) out["writer-features"] = p.writerFeatures;
  return out;
}

/** A Delta type as the UC Delta API spells it: the log's JSON with kebab-case keys. */
export function deltaApiType(t: DataType): unknown {
  if (typeof t === "string") return t;
  switch (t.type) {
    case "struct":
      return {
        type: "struct",
        fields: t.fields.map((f) => ({
          name: f.name,
          type: deltaApiType(f.type),
          nullable: f.nullable,
          metadata: f.metadata,
        })),
      };
    case "array":
      return {
        type: "array",
        "element-type": deltaApiType(t.elementType),
        "contains-null": t.containsNull,
      };
    case "map":
      return {
        type: "map",
        "key-type": deltaApiType(t.keyType),
        "value-type": deltaApiType(t.valueType),
        "value-contains-null": t.valueContainsNull,
      };
    default:
      return dataTypeToJson(t);
  }
}

/** The inverse of deltaApiType, accepting the log's camelCase spelling as well. */
export function fromDeltaApiType(json: unknown): DataType {
  const rename = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rename);
    if (v === null || typeof v !== "object") return v;
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      const key = k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      out[key] = k === "metadata" ? val : rename(val);
    }
    return out;
  };
  try {
    return parseDataTypeJson(rename(json));
  } catch (err) {
    throw siltError("INVALID_PARAMETER_VALUE:INVALID_COLUMN_TYPE", {
      message: (err as Error).message,
    });
  }
}

export function etagOf(tableId: string, version: number): string {
  return `${tableId}@${version}`;
}

export interface DeltaCommitInfo {
  version: number;
  timestamp: number;
  "file-name": string;
  "file-size": number;
  "file-modification-timestamp": number;
}

export function deltaLoadTableResponse(
  ctx: SiltContext,
  entry: TableEntry,
  snapshot: Snapshot,
  latestVersion: number,
  commits: DeltaCommitInfo[],
) {
  return {
    metadata: {
      etag: etagOf(entry.tableId, latestVersion),
      "table-type": entry.tableType,
      "table-uuid": entry.tableId,
      location: locationUri(ctx, entry.location),
      "created-time": entry.createdAt,
      "updated-time": snapshot.timestamp,
      columns: deltaApiType(parseSchema(snapshot.metadata.schemaString)),
      "partition-columns": snapshot.metadata.partitionColumns,
      properties: tableProperties(snapshot),
      "last-commit-version": snapshot.version,
      "last-commit-timestamp-ms": snapshot.timestamp,
    },
    commits,
    "latest-table-version": latestVersion,
  };
}
