/**
 * DESCRIBE DETAIL: one row describing the table at its latest version, with Spark's columns.
 */
import type { TableRef } from "../catalog/names.ts";
import { locationUri, type SiltContext } from "../context.ts";
import { openTable } from "./open-table.ts";
import { isoMicros, type ResultSet } from "./result-set.ts";

export const DETAIL_COLUMNS = [
  { name: "format", type: "string" },
  { name: "id", type: "string" },
  { name: "name", type: "string" },
  { name: "description", type: "string" },
  { name: "location", type: "string" },
  { name: "createdAt", type: "timestamp" },
  { name: "lastModified", type: "timestamp" },
  { name: "partitionColumns", type: "array<string>" },
  { name: "clusteringColumns", type: "array<string>" },
  { name: "numFiles", type: "bigint" },
  { name: "sizeInBytes", type: "bigint" },
  { name: "properties", type: "map<string,string>" },
  { name: "minReaderVersion", type: "int" },
  { name: "minWriterVersion", type: "int" },
  { name: "tableFeatures", type: "array<string>" },
  { name: "statistics", type: "map<string,bigint>" },
];

export async function describeDetail(
  ctx: SiltContext,
  name: TableRef,
  opts: { defaults?: { catalog?: string; schema?: string } } = {},
): Promise<ResultSet> {
  const t = await openTable(ctx, name, { defaults: opts.defaults, access: "read" });
  const { snapshot, entry } = t;
  let sizeInBytes = 0;
  let numDeletionVectors = 0;
  let numRowsDeletedByDeletionVectors = 0;
  for (const f of snapshot.files) {
    sizeInBytes += f.size;
    if (f.deletionVector) {
      numDeletionVectors++;
      numRowsDeletedByDeletionVectors += f.deletionVector.cardinality;
    }
  }
  const features = [
    ...new Set([
      ...(snapshot.protocol.readerFeatures ?? []),
      ...(snapshot.protocol.writerFeatures ?? []),
    ]),
  ].sort();
  return {
    columns: DETAIL_COLUMNS,
    rows: [
      [
        "delta",
        snapshot.metadata.id,
        `${t.name.catalog}.${t.name.schema}.${t.name.table}`,
        snapshot.metadata.description ?? null,
        locationUri(ctx, entry.location),
        isoMicros(snapshot.metadata.createdTime ?? entry.createdAt),
        isoMicros(snapshot.timestamp),
        snapshot.metadata.partitionColumns,
        [],
        snapshot.files.length,
        sizeInBytes,
        snapshot.metadata.configuration,
        snapshot.protocol.minReaderVersion,
        snapshot.protocol.minWriterVersion,
        features,
        { numRowsDeletedByDeletionVectors, numDeletionVectors },
      ],
    ],
  };
}
