/**
 * ALTER TABLE t ADD COLUMNS / RENAME COLUMN / DROP COLUMNS / ALTER COLUMN (COMMENT, DROP NOT
 * NULL): one commit of a new `metaData` action, with Delta on Spark's operation names,
 * parameters and errors. No data file is touched: under column mapping every column keeps its id
 * and physical name, so files written before the change read through the new schema (a renamed
 * column by its physical name, an added one as nulls, a dropped one not at all).
 *
 * 1. Open the table at its latest version (the caller must own it) and check Silt can write its
 *    protocol.
 * 2. Resolve the named columns case-insensitively, as Spark's analyzer does, and build the new
 *    schema. RENAME and DROP need column mapping (name or id mode): without it files store
 *    logical names, so a rename would lose the column and a drop would bring it back on re-add.
 * 3. ADD COLUMNS gives each new field the next column-mapping id and a fresh `col-<uuid>`
 *    physical name (maxColumnId only grows, so a dropped column's id and name are never reused),
 *    and adds the timestampNtz feature when a TIMESTAMP_NTZ column arrives. RENAME keeps
 *    `partitionColumns` in logical names.
 * 4. Commit through `commitMetadataChange` (alter-table.ts), which reads the whole table.
 */
import type { TableRef } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import type { Metadata, Protocol } from "../delta/actions.ts";
import {
  assignColumnMapping,
  COLUMN_MAPPING_MAX_ID_KEY,
  configuredMaxColumnId,
  findField,
} from "../delta/column-mapping.ts";
import {
  assertSupportedTypes,
  type DataType,
  isStruct,
  type StructField,
  type StructType,
  serializeSchema,
  sparkTypeName,
} from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import type { ColumnChange, Name, NewColumn } from "../expr/ast.ts";
import { quotePath } from "../values/identifiers.ts";
import { commitMetadataChange } from "./alter-table.ts";
import { openTable } from "./open-table.ts";
import { protocolUnion, sameProtocol } from "./write-commit.ts";
import { checkWriteProtocol } from "./write-protocol.ts";

export interface AlterColumnsResult {
  /** The version committed, or the table's version when nothing changed. */
  version: number;
  committed: boolean;
}

/** What a change makes of the table: the new metadata and its history row. */
interface Altered {
  schema: StructType;
  partitionColumns?: string[];
  operation: string;
  parameters: Record<string, string>;
}

export async function alterTableColumns(
  ctx: SiltContext,
  name: TableRef,
  change: ColumnChange,
  defaults?: { catalog?: string; schema?: string },
): Promise<AlterColumnsResult> {
  // Step 1.
  const t = await openTable(ctx, name, { defaults, access: "own" });
  const { snapshot } = t;
  checkWriteProtocol(snapshot.protocol, snapshot.metadata);

  // Step 2.
  const mapped = t.mappingMode !== "none";
  let altered: Altered | undefined;
  switch (change.kind) {
    case "addColumns":
      altered = addColumns(t.schema, change.columns);
      break;
    case "renameColumn":
      if (!mapped) throw siltError("DELTA_UNSUPPORTED_RENAME_COLUMN");
      altered = renameColumn(t.schema, snapshot.metadata.partitionColumns, change);
      break;
    case "dropColumns":
      if (!mapped) throw siltError("DELTA_UNSUPPORTED_DROP_COLUMN");
      altered = dropColumns(t.schema, snapshot.metadata.partitionColumns, change);
      break;
    case "alterColumn":
      altered = alterColumn(t.schema, change);
      break;
  }
  // DROP COLUMNS IF EXISTS naming only absent columns changes nothing.
  if (altered === undefined) return { version: snapshot.version, committed: false };

  // Step 3.
  let schema = altered.schema;
  const configuration = { ...snapshot.metadata.configuration };
  if (mapped) {
    const assigned = assignColumnMapping(schema, configuredMaxColumnId(configuration));
    schema = assigned.schema;
    configuration[COLUMN_MAPPING_MAX_ID_KEY] = String(assigned.maxColumnId);
  }
  const metadata: Metadata = {
    ...snapshot.metadata,
    schemaString: serializeSchema(schema),
    partitionColumns: altered.partitionColumns ?? snapshot.metadata.partitionColumns,
    configuration,
  };
  let protocol: Protocol | undefined;
  if (metadata.schemaString.includes(`"timestamp_ntz"`)) {
    const ntz = ["timestampNtz"];
    const grown = protocolUnion(snapshot.protocol, {
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: ntz,
      writerFeatures: ntz,
    });
    if (!sameProtocol(grown, snapshot.protocol)) protocol = grown;
  }

  // Step 4.
  const version = await commitMetadataChange(ctx, t, {
    metadata,
    protocol,
    operation: altered.operation,
    parameters: altered.parameters,
  });
  return { version, committed: true };
}

// ---- the changes ---------------------------------------------------------------------------

function addColumns(schema: StructType, columns: NewColumn[]): Altered {
  if (columns.some((c) => !c.nullable || hasNotNullField(c.type))) {
    throw siltError("DELTA_OPERATION_NOT_ALLOWED");
  }
  const seen = new Set<string>();
  for (const c of columns) {
    const key = JSON.stringify([...c.parent, c.name].map((p) => p.toLowerCase()));
    if (seen.has(key)) {
      throw siltError("COLUMN_ALREADY_EXISTS:EXISTS", {
        path: quotePath([...c.parent, c.name]),
      });
    }
    seen.add(key);
  }
  let out = schema;
  for (const c of columns) {
    const parent = resolveParentStruct(out, c);
    out = mapStruct(out, parent, (s) => {
      if (findField(s, c.name) !== undefined) {
        throw fieldsAlreadyExist("add", [...parent, c.name], s);
      }
      let at = s.fields.length;
      if (c.position !== undefined) {
        if ("first" in c.position) {
          at = 0;
        } else {
          const after = findField(s, c.position.after);
          if (after === undefined) throw fieldNotFound(c.position.after, s);
          at = s.fields.indexOf(after) + 1;
        }
      }
      const metadata: Record<string, unknown> = {};
      if (c.comment !== undefined) metadata.comment = c.comment;
      const field: StructField = { name: c.name, type: c.type, nullable: true, metadata };
      return { type: "struct", fields: [...s.fields.slice(0, at), field, ...s.fields.slice(at)] };
    });
  }
  assertSupportedTypes(out);
  const logged = columns.map((c) => {
    const field: StructField = {
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      metadata: c.comment === undefined ? {} : { comment: c.comment },
    };
    const entry: Record<string, unknown> = { column: fieldForLog(c.parent, field) };
    if (c.position !== undefined) {
      entry.position = "first" in c.position ? "FIRST" : `AFTER ${c.position.after}`;
    }
    return entry;
  });
  return {
    schema: out,
    operation: "ADD COLUMNS",
    parameters: { columns: JSON.stringify(logged) },
  };
}

function renameColumn(
  schema: StructType,
  partitionColumns: string[],
  change: Extract<ColumnChange, { kind: "renameColumn" }>,
): Altered {
  const { names, field } = resolveColumn(schema, change.column);
  const parent = names.slice(0, -1);
  const schemaOut = mapStruct(schema, parent, (s) => {
    if (findField(s, change.newName) !== undefined) {
      throw fieldsAlreadyExist("rename", [...parent, change.newName], s);
    }
    return replaceField(s, field, { ...field, name: change.newName });
  });
  return {
    schema: schemaOut,
    partitionColumns:
      parent.length === 0
        ? partitionColumns.map((p) => (p === field.name ? change.newName : p))
        : partitionColumns,
    operation: "RENAME COLUMN",
    parameters: {
      oldColumnPath: attributeName(names),
      newColumnPath: attributeName([...parent, change.newName]),
    },
  };
}

function dropColumns(
  schema: StructType,
  partitionColumns: string[],
  change: Extract<ColumnChange, { kind: "dropColumns" }>,
): Altered | undefined {
  const dropped: string[][] = [];
  for (const path of change.columns) {
    if (change.ifExists && findColumn(schema, path) === undefined) continue;
    dropped.push(resolveColumn(schema, path).names);
  }
  if (dropped.length === 0) return undefined;
  let out = schema;
  for (const names of dropped) {
    out = mapStruct(out, names.slice(0, -1), (s) => {
      const field = s.fields.find((f) => f.name === names[names.length - 1]);
      if (field === undefined) return s;
      if (s.fields.length === 1) {
        throw siltError("DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA", { schema: treeString(s) });
      }
      return { type: "struct", fields: s.fields.filter((f) => f !== field) };
    });
  }
  const partitions = partitionColumns.filter((p) =>
    dropped.some((names) => names.length === 1 && names[0] === p),
  );
  if (partitions.length > 0) {
    throw siltError("DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN", {
      partitions: partitions.join(","),
    });
  }
  return {
    schema: out,
    operation: "DROP COLUMNS",
    parameters: { columns: JSON.stringify(dropped.map(attributeName)) },
  };
}

function alterColumn(
  schema: StructType,
  change: Extract<ColumnChange, { kind: "alterColumn" }>,
): Altered {
  const { names, field } = resolveColumn(schema, change.column);
  const parent = names.slice(0, -1);
  const changed: StructField = change.dropNotNull
    ? { ...field, nullable: true }
    : { ...field, metadata: { ...field.metadata, comment: change.comment } };
  return {
    schema: mapStruct(schema, parent, (s) => replaceField(s, field, changed)),
    operation: "CHANGE COLUMN",
    parameters: { column: JSON.stringify(fieldForLog(parent, changed)) },
  };
}

// ---- schema paths --------------------------------------------------------------------------

/** A column by path through structs, case-insensitively; its names as the schema spells them. */
function findColumn(
  schema: StructType,
  path: Name,
): { names: string[]; field: StructField } | undefined {
  let struct: DataType = schema;
  const names: string[] = [];
  let field: StructField | undefined;
  for (const part of path) {
    if (!isStruct(struct)) return undefined;
    field = findField(struct, part);
    if (field === undefined) return undefined;
    names.push(field.name);
    struct = field.type;
  }
  return field && { names, field };
}

function resolveColumn(schema: StructType, path: Name): { names: string[]; field: StructField } {
  const found = findColumn(schema, path);
  if (found !== undefined) return found;
  throw siltError("UNRESOLVED_COLUMN.WITH_SUGGESTION:NAME", {
    key: quotePath(path),
    suggestions: schema.fields.map((f) => quotePath([f.name])).join(", "),
  });
}

/** The struct a new column goes into, as resolved names (empty for the top level). */
function resolveParentStruct(schema: StructType, c: NewColumn): string[] {
  if (c.parent.length === 0) return [];
  const { names, field } = resolveColumn(schema, c.parent);
  if (!isStruct(field.type)) {
    throw siltError("DELTA_ADD_COLUMN_PARENT_NOT_STRUCT", {
      column: quotePath([...names, c.name]),
      type: sparkTypeName(field.type),
    });
  }
  return names;
}

/** The schema with the struct at `parent` (resolved names) replaced by `fn` of it. */
function mapStruct(
  s: StructType,
  parent: readonly string[],
  fn: (s: StructType) => StructType,
): StructType {
  if (parent.length === 0) return fn(s);
  return {
    type: "struct",
    fields: s.fields.map((f) =>
      f.name === parent[0] && isStruct(f.type)
        ? { ...f, type: mapStruct(f.type, parent.slice(1), fn) }
        : f,
    ),
  };
}

const replaceField = (s: StructType, old: StructField, next: StructField): StructType => ({
  type: "struct",
  fields: s.fields.map((f) => (f === old ? next : f)),
});

function hasNotNullField(t: DataType): boolean {
  if (typeof t === "string") return false;
  switch (t.type) {
    case "struct":
      return t.fields.some((f) => !f.nullable || hasNotNullField(f.type));
    case "array":
      return hasNotNullField(t.elementType);
    case "map":
      return hasNotNullField(t.keyType) || hasNotNullField(t.valueType);
    default:
      return false;
  }
}

// ---- history and errors, as Spark writes them ---------------------------------------------

/** Spark's UnresolvedAttribute name: parts joined by dots, a part holding a dot back-quoted. */
const attributeName = (parts: readonly string[]): string =>
  parts.map((p) => (p.includes(".") ? `\`${p}\`` : p)).join(".");

/** Spark's DataType.typeName: the Delta name for primitives, the kind for nested types. */
function typeName(t: DataType): string {
  if (typeof t === "string") return t;
  switch (t.type) {
    case "decimal":
      return `decimal(${t.precision},${t.scale})`;
    case "unsupported":
      return t.name;
    default:
      return t.type;
  }
}

/** A field as Delta's history parameters describe it (DeltaOperations.structFieldToMap). */
const fieldForLog = (parent: readonly string[], f: StructField) => ({
  name: attributeName([...parent, f.name]),
  type: typeName(f.type),
  nullable: f.nullable,
  metadata: f.metadata,
});

function treeString(s: StructType): string {
  const lines = s.fields.map(
    (f) => ` |-- ${f.name}: ${typeName(f.type)} (nullable = ${f.nullable})`,
  );
  return ["root", ...lines, ""].join("\n");
}

function fieldsAlreadyExist(op: string, path: string[], s: StructType) {
  return siltError("FIELDS_ALREADY_EXISTS", {
    op,
    path: quotePath(path),
    struct: sparkTypeName(s),
  });
}

function fieldNotFound(name: string, s: StructType) {
  return siltError("FIELD_NOT_FOUND", {
    name: quotePath([name]),
    fields: s.fields.map((f) => quotePath([f.name])).join(", "),
  });
}
