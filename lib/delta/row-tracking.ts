/**
 * Stable row ids and row commit versions (Delta row tracking). A row's id is the value of the
 * table's materialized row-id column in its file when that is not null, else the file's
 * `baseRowId` plus the row's physical index; its commit version likewise comes from the
 * materialized commit-version column, else the file's `defaultRowCommitVersion`.
 *
 * Writers that move rows into new files (UPDATE, MERGE, OPTIMIZE, REORG) keep those identities
 * by writing them into the materialized columns, hidden columns that are not part of the table's
 * schema; readers of the table's data never see them.
 */
import * as arrow from "apache-arrow";
import type { AddFile, Metadata } from "./actions.ts";

export const MATERIALIZED_ROW_ID_KEY = "delta.rowTracking.materializedRowIdColumnName";
export const MATERIALIZED_ROW_COMMIT_VERSION_KEY =
  "delta.rowTracking.materializedRowCommitVersionColumnName";

export interface MaterializedColumns {
  rowId: string;
  commitVersion: string;
}

/** The hidden column names a row-tracked table declares, or undefined when it declares none. */
export function materializedColumns(metadata: Metadata): MaterializedColumns | undefined {
  const rowId = metadata.configuration[MATERIALIZED_ROW_ID_KEY];
  const commitVersion = metadata.configuration[MATERIALIZED_ROW_COMMIT_VERSION_KEY];
  if (!rowId || !commitVersion) return undefined;
  return { rowId, commitVersion };
}

/**
 * Row ids and commit versions of rows, as typed arrays (tables reach millions of rows): both are
 * never negative in Delta, so -1 stands for "unknown", i.e. null in the materialized column.
 */
export interface RowIdentities {
  ids: BigInt64Array;
  versions: BigInt64Array;
}

export const UNKNOWN = -1n;

/**
 * The identities of a file's physical rows, from its materialized columns (absent ones count as
 * all null) and its defaults.
 */
export function rowIdentities(
  file: AddFile,
  numRows: number,
  materialized: { ids?: arrow.Vector; versions?: arrow.Vector },
): RowIdentities {
  const base = file.baseRowId;
  const defaultVersion = file.defaultRowCommitVersion;
  const ids = new BigInt64Array(numRows);
  const versions = new BigInt64Array(numRows);
  for (let i = 0; i < numRows; i++) {
    const id = materialized.ids?.get(i) as bigint | null | undefined;
    ids[i] = id ?? (base == null ? UNKNOWN : BigInt(base + i));
    const version = materialized.versions?.get(i) as bigint | null | undefined;
    versions[i] = version ?? (defaultVersion == null ? UNKNOWN : BigInt(defaultVersion));
  }
  return { ids, versions };
}

/** `identities` at the given rows; `keepVersions` false marks the rows as changed now. */
export function pickIdentities(
  identities: RowIdentities,
  rows: ArrayLike<number>,
  keepVersions: boolean,
): RowIdentities {
  const ids = new BigInt64Array(rows.length);
  // An unknown (null) commit version reads as the new file's defaultRowCommitVersion, i.e. the
  // version of the commit that writes it.
  const versions = new BigInt64Array(rows.length).fill(UNKNOWN);
  for (let i = 0; i < rows.length; i++) {
    ids[i] = identities.ids[rows[i]];
    if (keepVersions) versions[i] = identities.versions[rows[i]];
  }
  return { ids, versions };
}

/** Identities of rows that are new: every one gets a fresh id from its file's baseRowId. */
export function freshIdentities(numRows: number): RowIdentities {
  return {
    ids: new BigInt64Array(numRows).fill(UNKNOWN),
    versions: new BigInt64Array(numRows).fill(UNKNOWN),
  };
}

/** Concatenation in order, for outputs gathered from several files. */
export function concatIdentities(parts: readonly RowIdentities[]): RowIdentities {
  const join = (arrays: BigInt64Array[]) => {
    const out = new BigInt64Array(arrays.reduce((n, a) => n + a.length, 0));
    let at = 0;
    for (const a of arrays) {
      out.set(a, at);
      at += a.length;
    }
    return out;
  };
  return { ids: join(parts.map((p) => p.ids)), versions: join(parts.map((p) => p.versions)) };
}

/** The two hidden Int64 columns, named as the table declares them, for writing. */
export function materializedVectors(
  names: MaterializedColumns,
  identities: RowIdentities,
): { fields: arrow.Field[]; data: arrow.Data[] } {
  const column = (values: BigInt64Array) => {
    const valid = new Uint8Array((values.length + 7) >> 3);
    let nullCount = 0;
    values.forEach((v, i) => {
      if (v === UNKNOWN) nullCount++;
      else valid[i >> 3] |= 1 << (i & 7);
    });
    return arrow.makeData({
      type: new arrow.Int64(),
      length: values.length,
      nullCount,
      data: values,
      nullBitmap: nullCount === 0 ? undefined : valid,
    });
  };
  return {
    fields: [
      new arrow.Field(names.rowId, new arrow.Int64(), true),
      new arrow.Field(names.commitVersion, new arrow.Int64(), true),
    ],
    data: [column(identities.ids), column(identities.versions)],
  };
}
