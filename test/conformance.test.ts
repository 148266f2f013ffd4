/**
 * Reader conformance: every table under /work/shared/fixtures/delta (MANIFEST.md), read through
 * the same path as `silt read` (loadSnapshot + readSnapshotRows).
 *
 * - Tables whose generator states their rows are compared row for row, at every version it
 *   states (GoldenTables.scala, the Delta kernel and Spark suites that read these fixtures, the
 *   delta-rs tests, catalog-owned-preview/info.txt).
 * - Every other readable table, at every version its log can rebuild, must hold as many rows as
 *   the log says (numRecords minus DV cardinalities), with every column of its declared type and
 *   every value a canonical value of that type; at the latest version its columns must also match
 *   what DuckDB reads from the same files (primitive values exactly, nested ones by null-ness).
 * - Everything else must fail with the SiltError listed for it below: unsupported features name
 *   the feature, broken logs and log-only tables fail clearly. An entry that starts failing (or
 *   stops) without being listed fails the test.
 * - WRONG_ROWS lists what Silt still reads wrongly, with the cause; only its correct part is
 *   asserted.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { arrowToRows } from "../lib/data/arrow-to-json.ts";
import { conformData } from "../lib/data/cast.ts";
import { canonicalValue } from "../lib/data/json-input.ts";
import { columnMappingMode, physicalName } from "../lib/delta/column-mapping.ts";
import { type DataType, parseSchema, type StructType, toArrowType } from "../lib/delta/schema.ts";
import { loadSnapshot, type Snapshot, type SnapshotOptions } from "../lib/delta/snapshot.ts";
import { SiltError } from "../lib/errors.ts";
import { fileKey, type ReadResult, readSnapshotRows } from "../lib/ops/read-files.ts";
import { LocalObjectStore } from "../lib/storage/local-store.ts";
import type { ObjectStore } from "../lib/storage/object-store.ts";
import {
  base64,
  base64Text,
  dateText,
  decimalText,
  deletedRows,
  expectedRowCount,
  FIXTURES,
  fixtureEntries,
  float32Value,
  logVersions,
  RenamingStore,
  rowBag,
  sparkDvPrefix,
  timestampMicros,
  timestampText,
} from "./helpers/fixtures.ts";

const fixtures = new LocalObjectStore(FIXTURES);
const dvPrefixed = new RenamingStore(fixtures, sparkDvPrefix);

const storeFor = (table: string): ObjectStore =>
  table.startsWith("spark/table-with-dv-") ? dvPrefixed : fixtures;

const ENTRIES = fixtureEntries();

// ---------------------------------------------------------------------------------------------
// Expected failures

interface Failure {
  errorClass: string;
  /** What the message must say, e.g. the unsupported feature's name. */
  message?: RegExp;
  /**
   * The log replays fine and only reading data fails; the replay must find this many live files
   * (undefined: any number).
   */
  replays?: { liveFiles?: number };
  why: string;
}

const unsupported = (feature: string, why: string): Failure => ({
  errorClass: "DELTA_UNSUPPORTED_FEATURES_FOR_READ",
  // The exact name: "variantType" must not be satisfied by "variantType-preview".
  message: new RegExp(`(?<![\\w-])${feature}(?![\\w-])`),
  why,
});

const logOnly = (why: string, liveFiles?: number): Failure => ({
  errorClass: "DELTA_FILE_NOT_FOUND_DETAILED",
  replays: { liveFiles },
  why,
});

/** A version before the latest whose files are gone: what Spark answers time travel to it with. */
const goneSince = (why: string): Failure => ({
  errorClass: "FAILED_READ_FILE.FILE_NOT_EXIST",
  message: /File does not exist\./,
  why,
});

const noSchema = (why: string, liveFiles?: number): Failure => ({
  errorClass: "DELTA_SCHEMA_NOT_SET",
  replays: { liveFiles },
  why,
});

const notATable = (why: string): Failure => ({ errorClass: "DELTA_TABLE_NOT_FOUND", why });

const stateRecover = (what: "Protocol" | "Metadata"): Failure => ({
  errorClass: "DELTA_STATE_RECOVER_ERROR",
  message: new RegExp(`The ${what} of your Delta table could not be recovered`),
  why: `the generator deliberately leaves the ${what.toLowerCase()} out`,
});

/** Entries whose latest version cannot be read, and the error that says why. */
const FAILING: Record<string, Failure> = {
  "golden/canonicalized-paths-normal-a": noSchema("log-only: Metadata() has no schema", 0),
  "golden/canonicalized-paths-normal-b": noSchema("log-only: Metadata() has no schema", 0),
  "golden/canonicalized-paths-special-a": noSchema("log-only: Metadata() has no schema", 0),
  "golden/canonicalized-paths-special-b": noSchema("log-only: Metadata() has no schema", 0),
  // 15 commits each add file "i" and remove "i-1": only "15" is live, and it was never written.
  "golden/checkpoint": logOnly("log-only: AddFile paths 1..15 are placeholders", 1),
  "golden/corrupted-last-checkpoint": noSchema("log-only: AddFile paths 0..10, no schema", 11),
  "golden/data-reader-absolute-paths-escaped-chars": stateRecover("Metadata"),
  "golden/deltalog-commit-info": noSchema("log-only: commitInfo test, no schema", 1),
  "golden/deltalog-invalid-protocol-version": {
    errorClass: "DELTA_INVALID_PROTOCOL_VERSION",
    message: /reader version 99/,
    why: "Protocol(99)",
  },
  "golden/deltalog-state-reconstruction-from-checkpoint-missing-metadata": stateRecover("Metadata"),
  "golden/deltalog-state-reconstruction-from-checkpoint-missing-protocol": stateRecover("Protocol"),
  "golden/deltalog-state-reconstruction-without-metadata": stateRecover("Metadata"),
  "golden/deltalog-state-reconstruction-without-protocol": stateRecover("Protocol"),
  "golden/log-replay-special-characters-b": logOnly("log-only: the file was never written", 1),
  "golden/log-store-listFrom": notATable("LogStore test files, no _delta_log"),
  "golden/log-store-read": notATable("LogStore test files, no _delta_log"),
  "golden/no-delta-log-folder": notATable("plain Parquet, no _delta_log"),
  "golden/spark-variant-checkpoint": unsupported("variantType-preview", "variant columns"),
  "golden/update-deleted-directory": noSchema("log-only: AddFile paths 1..10, no schema", 10),
  "golden/versions-not-contiguous": {
    errorClass: "DELTA_VERSIONS_NOT_CONTIGUOUS",
    message: /Versions \(0, 2\) are not contiguous/,
    why: "00000000000000000001.json was deleted",
  },
  // A template: the Spark suite substitutes {{FOLDER_WITH_SPECIAL_CHAR}} in its DV path before
  // reading it; the substituted table is read in its own test below.
  "spark/table-with-dv-special-char": {
    errorClass: "DELTA_UNSUPPORTED_DELETION_VECTOR_PATH",
    message: /\{\{FOLDER_WITH_SPECIAL_CHAR\}\}/,
    why: "the DV path is a placeholder",
  },
  "spark/variant-stats-nested-no-checkpoint": unsupported("variantType", "variant columns"),
  "spark/variant-stats-no-checkpoint": unsupported("variantType", "variant columns"),
  "spark/variant-stats-state-reconstruction": unsupported("variantType", "variant columns"),
  "spark/variant-stats-with-struct-no-checkpoint": unsupported("variantType", "variant columns"),
  // delta-rs keeps only the logs of these tables in its repository.
  "delta-rs/checkpoint_with_partitions": logOnly("log-only upstream"),
  "delta-rs/checkpoints": logOnly("log-only upstream"),
  "delta-rs/checkpoints_vacuumed": logOnly("log-only upstream"),
  "delta-rs/latest_not_checkpointed": logOnly("log-only upstream"),
  "delta-rs/table-with-domain-metadata": logOnly("log-only upstream"),
  "delta-rs/with_checkpoint_no_last_checkpoint": logOnly("log-only upstream"),
  "delta-rs/checkpoints_tombstones": notATable("an empty directory upstream"),
  "delta-rs/simple_table_features": {
    errorClass: "DELTA_INVALID_PROTOCOL_VERSION",
    message: /reader version 5/,
    why: "minReaderVersion 5 and an unknown reader feature",
  },
  "delta-rs/spark-shredded-variant-preview-delta": unsupported("variantType", "variant columns"),
  "delta-rs/spark-variant-checkpoint": unsupported("variantType-preview", "variant columns"),
  "delta-rs/spark-variant-stable-feature-checkpoint": unsupported("variantType", "variant columns"),
};

/** Versions of otherwise readable tables that cannot be read (the latest one included). */
const FAILING_VERSIONS: Record<string, Failure & { versions: number[] }> = {
  "delta-rs/delta-live-table": {
    ...noSchema("DLT creates the table before it knows the schema"),
    versions: [0],
  },
  "golden/deltalog-getChanges": { ...goneSince("placeholder file fake/path/1"), versions: [0] },
  "golden/log-replay-special-characters": { ...goneSince("placeholder file"), versions: [0] },
  "golden/log-replay-special-characters-a": { ...goneSince("placeholder file"), versions: [0] },
  "golden/snapshot-vacuumed": {
    ...goneSince("VACUUM deleted the files of versions before the repartition"),
    versions: [0, 1, 2, 3, 4],
  },
  // Version 0 predates the widening; from version 1 the protocol needs the feature.
  "golden/type-widening": {
    ...unsupported("typeWidening-preview", "widened columns"),
    versions: [1, 2],
  },
  "golden/type-widening-nested": {
    ...unsupported("typeWidening-preview", "widened nested columns"),
    versions: [1, 2],
  },
};

/**
 * Entries Silt reads with wrong values, left out of the checks above until the cause is fixed;
 * what it does read correctly is asserted in a test of its own below.
 */
const WRONG_ROWS: Record<string, string> = {};

// ---------------------------------------------------------------------------------------------
// Stated rows

interface Stated {
  rows: unknown[][];
  /** Compare only these columns (the generator is silent about the others). */
  columns?: string[];
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

// GoldenTables.scala, DeltaLogSuite > snapshot: each table copies the previous one and adds a
// commit; snapshot-data2-deleted (v4) deletes data-2-*, snapshot-repartitioned (v5) rewrites it.
function snapshotTables(v: number): Stated {
  const data = (batch: number, n: number) => range(0, n).map((x) => [x, `data-${batch}-${x}`]);
  const byVersion = [
    data(0, 10),
    [...data(0, 10), ...data(1, 10)],
    data(2, 10),
    [...data(2, 10), ...data(3, 20)],
    data(3, 20),
    data(3, 20),
  ];
  return { rows: byVersion[v] };
}

// GoldenTables.scala: ids 0..49 in five appends, five DELETEs of x5..x9, three appends, id >= 66.
function insertsDeletesCheckpoint(v: number): Stated {
  let ids: number[] = [];
  for (let step = 0; step <= v; step++) {
    if (step <= 4) ids.push(...range(step * 10, step * 10 + 10));
    else if (step <= 9) {
      const base = (step - 5) * 10;
      ids = ids.filter((x) => x < base + 5 || x > base + 9);
    } else if (step <= 12) ids.push(...range(50 + (step - 10) * 10, 60 + (step - 10) * 10));
    else ids = ids.filter((x) => x < 66);
  }
  return { rows: ids.map((x) => [x]) };
}

const kernelTimestampRows = (timeShiftHours: number): Stated => {
  const t = (text: string) => {
    const micros = timestampMicros(text) + BigInt(timeShiftHours) * 3_600_000_000n;
    return timestampText(micros);
  };
  return {
    rows: [
      [0, "2020-01-01T08:09:10.001000Z", t("2020-02-01T08:09:10.000000")],
      [1, "2021-10-01T08:09:20.000000Z", t("1999-01-01T09:00:00.000000")],
      [2, "2021-10-01T08:09:20.000000Z", t("2000-01-01T09:00:00.000000")],
      [3, "1969-01-01T00:00:00.000000Z", t("1969-01-01T00:00:00.000000")],
      [4, null, null],
    ],
  };
};

const timestampNtzRows: Stated = {
  rows: [
    [0, "2021-11-18T02:30:00.123456", "2021-11-18T02:30:00.123456"],
    [1, "2013-07-05T17:01:00.123456", "2021-11-18T02:30:00.123456"],
    [2, null, "2021-11-18T02:30:00.123456"],
    [3, "2021-11-18T02:30:00.123456", "2013-07-05T17:01:00.123456"],
    [4, "2013-07-05T17:01:00.123456", "2013-07-05T17:01:00.123456"],
    [5, null, "2013-07-05T17:01:00.123456"],
    [6, "2021-11-18T02:30:00.123456", null],
    [7, "2013-07-05T17:01:00.123456", null],
    [8, null, null],
  ],
};

const basicDecimalRows: Stated = {
  rows: [
    ["234.00000", "1.00", "2.00000", "3.0000000000"],
    ["2342222.23454", "111.11", "22222.22222", "3333333333.3333333333"],
    ["0.00004", "0.00", "0.00000", "0.0000000000"],
    ["-2342342.23423", "-999.99", "-99999.99999", "-9999999999.9999999999"],
  ],
};

// GoldenTables.scala > parquet-all-types: createRow(i) for i in 0 until 200, JVM zone UTC. The
// fixture was regenerated by a later version of the generator: it adds a TimestampNTZType column,
// and its list and map columns are null in every row (DuckDB reads the same). The columns below
// are the ones both versions agree on; the DuckDB cross-check covers the rest.
function allTypesRow(i: number): unknown[] {
  const when = <T>(keep: boolean, v: T) => (keep ? v : null);
  return [
    when(i % 72 !== 0, i < 128 ? i : i - 256),
    when(i % 56 !== 0, i),
    when(i % 23 !== 0, i),
    when(i % 25 !== 0, i + 1),
    when(i % 28 !== 0, float32Value(i * 0.234)),
    when(i % 54 !== 0, i * 234234.23),
    // new BigDecimal(i * 123.52) (the exact double) rounded HALF_UP to scale 2; toFixed rounds the
    // exact binary value too, and no such product lies exactly halfway.
    when(i % 67 !== 0, (i * 123.52).toFixed(2)),
    when(i % 87 !== 0, i % 2 === 0),
    when(i % 57 !== 0, String(i)),
    when(i % 59 !== 0, base64Text(String(i))),
    when(i % 61 !== 0, dateText(Math.floor((i * 20_000_000) / 86_400_000))),
    when(i % 62 !== 0, timestampText(BigInt(i * 23_423_523) * 1000n)),
    when(
      i % 63 !== 0,
      i % 19 === 0
        ? { aa: null, ac: null }
        : { aa: String(i), ac: i % 23 !== 0 ? { aca: i } : null },
    ),
  ];
}

const ALL_TYPES_COLUMNS = [
  "ByteType",
  "ShortType",
  "IntegerType",
  "LongType",
  "FloatType",
  "DoubleType",
  "decimal",
  "BooleanType",
  "StringType",
  "BinaryType",
  "DateType",
  "TimestampType",
  "nested_struct",
];

// Delta kernel DeltaTableReadsSuite > "table with `name`/`id` column mapping mode".
const columnMappingRows: Stated = {
  rows: [
    ...range(0, 5).map((i) => [
      i,
      i,
      i,
      i,
      i,
      i,
      `${i}.00`,
      i % 2 === 0,
      String(i),
      base64Text(String(i)),
      "2021-11-18",
      timestampText(i * 1000),
      { aa: String(i), ac: { aca: i } },
      [i, i + 1],
      [
        [i, i + 1],
        [i + 2, i + 3],
      ],
      [{ [i]: [2, 3], [i + 1]: [4, 5] }],
      [{ ab: i }, { ab: i }],
      { aa: [i, i + 1], ab: { [`[${i},${i + 1}]`]: { aca: i + 2 } } },
      { [i]: i + 1, [i + 2]: i + 3 },
      { [i + 1]: { ab: i * 20 } },
      { [i]: [i, null, i + 1], [i + 1]: [] },
      { [i]: { [i]: i }, [i + 1]: { [i + 2]: i } },
    ]),
    Array(22).fill(null),
  ],
};

const hiveFoo = (n: number) => range(0, n).map((x) => [x, `foo${x % 2}`]);

// Timestamp.valueOf("2020-01-01 08:09:10") in each JVM default zone, as a UTC instant.
const dateTypesRow = (utc: string): Stated => ({ rows: [[utc, "2020-01-01"]] });

/** Rows the generators state, by table and version (undefined: the generator is silent). */
const STATED: Record<string, (v: number) => Stated | undefined> = {
  "golden/124-decimal-decode-bug": () => ({ rows: [["1000000"]] }),
  "golden/basic-decimal-table": () => basicDecimalRows,
  "golden/basic-decimal-table-legacy": () => basicDecimalRows,
  "golden/basic-with-inserts-deletes-checkpoint": insertsDeletesCheckpoint,
  "golden/basic-with-vacuum-protocol-check-feature": (v) =>
    v === 1 ? { rows: range(0, 100).map((x) => [x, `val=${x}`]) } : undefined,
  "golden/corrupted-last-checkpoint-kernel": (v) => ({
    rows: v <= 10 ? range(0, 10 * (v + 1)).map((x) => [x % 10]) : range(0, 100).map((x) => [x]),
  }),
  "golden/data-reader-array-complex-objects": () => ({
    rows: range(0, 10).map((i) => {
      const cube = [
        [
          [i, i, i],
          [i, i, i],
        ],
        [
          [i, i, i],
          [i, i, i],
        ],
      ];
      return [
        i,
        cube,
        [cube, cube],
        [{ [i]: i }, { [i]: i }],
        [{ val: i }, { val: i }, { val: i }],
      ];
    }),
  }),
  "golden/data-reader-array-primitives": () => ({
    rows: range(0, 10).map((i) => [
      [i],
      [i],
      [i],
      [i],
      [i % 2 === 0],
      [i],
      [i],
      [String(i)],
      [base64([i, i])],
      [String(i)],
    ]),
  }),
  "golden/data-reader-date-types-America/Los_Angeles": () =>
    dateTypesRow("2020-01-01T16:09:10.000000Z"),
  "golden/data-reader-date-types-Asia/Beirut": () => dateTypesRow("2020-01-01T06:09:10.000000Z"),
  "golden/data-reader-date-types-Etc/GMT+9": () => dateTypesRow("2020-01-01T17:09:10.000000Z"),
  "golden/data-reader-date-types-Iceland": () => dateTypesRow("2020-01-01T08:09:10.000000Z"),
  "golden/data-reader-date-types-JST": () => dateTypesRow("2019-12-31T23:09:10.000000Z"),
  "golden/data-reader-date-types-PST": () => dateTypesRow("2020-01-01T16:09:10.000000Z"),
  "golden/data-reader-date-types-UTC": () => dateTypesRow("2020-01-01T08:09:10.000000Z"),
  "golden/data-reader-map": () => ({
    rows: range(0, 10).map((i) => [
      i,
      { [i]: i },
      { [i]: i },
      { [i]: i % 2 === 0 },
      { [i]: i },
      { [i]: String(i) },
      { [i]: [{ val: i }, { val: i }, { val: i }] },
    ]),
  }),
  "golden/data-reader-nested-struct": () => ({
    rows: range(0, 10).map((i) => [{ aa: String(i), ab: String(i), ac: { aca: i, acb: i } }, i]),
  }),
  "golden/data-reader-nullable-field-invalid-schema-key": () => ({ rows: [[[null, null, null]]] }),
  // Partition values are read as UTC: Spark wrote "2021-09-08 11:11:11" in its session zone,
  // which the log does not record (the Delta kernel reads them as UTC too).
  "golden/data-reader-partition-values": () => ({
    rows: [
      ...[0, 1].map((i) => [
        i,
        i,
        i,
        i,
        i % 2 === 0,
        i,
        i,
        String(i),
        "null",
        "2021-09-08",
        "2021-09-08T11:11:11.000000Z",
        String(i),
        [{ val: i }, { val: i }, { val: i }],
        { aa: String(i), ab: String(i), ac: { aca: i, acb: i } },
        String(i),
      ]),
      [
        ...Array(12).fill(null),
        [{ val: 2 }, { val: 2 }, { val: 2 }],
        { aa: "2", ab: "2", ac: { aca: 2, acb: 2 } },
        "2",
      ],
    ],
  }),
  "golden/data-reader-primitives": () => ({
    rows: [
      Array(10).fill(null),
      ...range(0, 10).map((i) => [
        i,
        i,
        i,
        i,
        i % 2 === 0,
        i,
        i,
        String(i),
        base64([i, i]),
        String(i),
      ]),
    ],
  }),
  "golden/data-reader-timestamp_ntz": (v) => (v === 1 ? timestampNtzRows : undefined),
  "golden/data-reader-timestamp_ntz-id-mode": (v) => (v === 1 ? timestampNtzRows : undefined),
  "golden/data-reader-timestamp_ntz-name-mode": (v) => (v === 1 ? timestampNtzRows : undefined),
  "golden/dv-partitioned-with-checkpoint": (v) => ({
    rows: range(0, 50)
      .filter((x) => !(x % 2 === 0 && x < 2 * v))
      .map((x) => [x % 10, x, `foo${x % 5}`]),
  }),
  "golden/hive/deltatbl-column-names-case-insensitive": () => ({ rows: hiveFoo(10) }),
  "golden/hive/deltatbl-deleted-path": () => ({ rows: hiveFoo(10) }),
  "golden/hive/deltatbl-incorrect-format-config": () => ({ rows: hiveFoo(10) }),
  "golden/hive/deltatbl-map-types-correctly": () => ({
    rows: [
      [
        97,
        base64([98, 99]),
        true,
        4,
        5,
        "foo",
        6,
        7,
        8,
        // java.sql.Date(60000000L) is 1970-01-01 08:40 in America/Los_Angeles.
        "1970-01-01",
        "1970-01-01T16:40:00.000000Z",
        // new java.math.BigDecimal(12345.6789) is the exact double, rounded HALF_UP to 18 digits.
        "12345.678900000000794535",
        ["foo", "bar"],
        { foo: 123 },
        { f1: "foo", f2: 456 },
      ],
    ],
  }),
  "golden/hive/deltatbl-non-partitioned": () => ({ rows: hiveFoo(10) }),
  "golden/hive/deltatbl-not-allow-write": () => ({ rows: hiveFoo(10) }),
  "golden/hive/deltatbl-partition-prune": () => ({
    rows: [
      ["hz", "20180520", "Jim", 3],
      ["hz", "20180718", "Jone", 7],
      ["bj", "20180520", "Trump", 1],
      ["sh", "20180512", "Jay", 4],
      ["sz", "20181212", "Linda", 8],
    ],
  }),
  "golden/hive/deltatbl-partitioned": () => ({ rows: hiveFoo(10) }),
  "golden/hive/deltatbl-schema-match": () => ({
    rows: range(0, 10).map((x) => [x, `foo${x % 2}`, `test${x % 3}`]),
  }),
  "golden/hive/deltatbl-special-chars-in-partition-column": () => ({
    rows: range(0, 10).map((x) => [x, `+ =%${x % 2}`]),
  }),
  "golden/hive/deltatbl-touch-files-needed-for-partitioned": () => ({ rows: hiveFoo(10) }),
  "golden/kernel-timestamp-INT96": () => kernelTimestampRows(0),
  "golden/kernel-timestamp-PST": () => kernelTimestampRows(8),
  "golden/kernel-timestamp-TIMESTAMP_MICROS": () => kernelTimestampRows(0),
  "golden/kernel-timestamp-TIMESTAMP_MILLIS": () => kernelTimestampRows(0),
  "golden/multi-part-checkpoint": (v) => ({
    rows: [[0], ...(v === 1 ? range(0, 30).map((x) => [x]) : [])],
  }),
  "golden/parquet-all-types": () => ({
    rows: range(0, 200).map(allTypesRow),
    columns: ALL_TYPES_COLUMNS,
  }),
  "golden/parquet-all-types-legacy-format": () => ({
    rows: range(0, 200).map(allTypesRow),
    columns: ALL_TYPES_COLUMNS,
  }),
  "golden/parquet-decimal-dictionaries-v2": () => ({
    rows: range(0, 1_000_000).map((i) => [i, String(i % 5), String(i % 6), String(i % 2)]),
  }),
  "golden/parquet-decimal-type": () => ({
    rows: range(0, 99_998).map((i) => {
      if (i % 85 === 0) {
        const n = BigInt(i);
        return [i, decimalText(n, 1), decimalText(n * 100_000n, 5), decimalText(n * 100_000n, 5)];
      }
      const n = BigInt(i % 33 === 0 ? -i : i);
      const expand = 100_001n;
      return [
        i,
        decimalText(n, 1),
        decimalText(n * expand, 5),
        decimalText(n * expand * expand * expand, 5),
      ];
    }),
  }),
  "golden/snapshot-data0": snapshotTables,
  "golden/snapshot-data1": snapshotTables,
  "golden/snapshot-data2": snapshotTables,
  "golden/snapshot-data3": snapshotTables,
  "golden/snapshot-repartitioned": snapshotTables,
  "golden/snapshot-vacuumed": snapshotTables,
  "golden/table-with-columnmapping-mode-id": () => columnMappingRows,
  "golden/table-with-columnmapping-mode-name": () => columnMappingRows,
  "golden/time-travel-partition-changes-a": () => ({
    rows: range(0, 10).map((x) => [x, x % 5]),
  }),
  "golden/time-travel-schema-changes-a": () => ({ rows: range(0, 10).map((x) => [x]) }),
  "golden/time-travel-schema-changes-b": (v) => ({
    rows:
      v === 0
        ? range(0, 10).map((x) => [x])
        : [...range(0, 10).map((x) => [x, null]), ...range(10, 20).map((x) => [x, x])],
  }),
  "golden/time-travel-start": (v) => ({ rows: range(0, 10 * (v + 1)).map((x) => [x]) }),
  "golden/time-travel-start-start20": (v) => ({ rows: range(0, 10 * (v + 1)).map((x) => [x]) }),
  "golden/time-travel-start-start20-start40": (v) => ({
    rows: range(0, 10 * (v + 1)).map((x) => [x]),
  }),
  // Delta kernel DeletionVectorsSuite: table1 (large) and table2 (small), version by version.
  "spark/table-with-dv-large": (v) => {
    const edits: [Set<number>, number[]][] = [
      [new Set([0, 180, 300, 700, 1800]), []],
      [new Set(), [300, 700]],
      [new Set([300, 250, 350, 900, 1353, 1567, 1800]), []],
      [new Set(), [900, 1567]],
    ];
    let ids = range(0, 2000);
    for (const [removed, added] of edits.slice(0, v)) {
      ids = [...ids.filter((x) => !removed.has(x)), ...added];
    }
    return { rows: ids.map((x) => [x]) };
  },
  "spark/table-with-dv-small": (v) => ({
    rows: (v === 0 ? range(0, 10) : range(1, 9)).map((x) => [x]),
  }),
  // delta-rs tests: simple_table ends with ids 5, 7, 9; the DV of table-with-dv-small removes
  // the rows holding 0 and 9.
  "delta-rs/simple_table": (v) => (v === 4 ? { rows: [[5], [7], [9]] } : undefined),
  "delta-rs/table-with-dv-small": (v) =>
    v === 1 ? { rows: range(1, 9).map((x) => [x]) } : undefined,
};

// ---------------------------------------------------------------------------------------------
// Checks

async function expectSiltError(p: Promise<unknown>, f: Failure, context: string) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `${context}: expected ${f.errorClass} (${f.why})`).toBeInstanceOf(SiltError);
  expect((err as SiltError).errorClass, `${context}: ${(err as Error).message}`).toBe(f.errorClass);
  if (f.message) expect((err as SiltError).message, context).toMatch(f.message);
}

async function read(table: string, opts: SnapshotOptions = {}) {
  const store = storeFor(table);
  const snapshot = await loadSnapshot(store, `${table}/`, opts);
  const result = await readSnapshotRows(store, snapshot);
  return { store, snapshot, result };
}

/** Canonical JSON rows, checking on the way that each column has its declared Arrow type. */
function rowsOf(result: ReadResult, context: string): unknown[][] {
  const { schema, table } = result;
  expect(
    table.schema.fields.map((f) => f.name),
    context,
  ).toEqual(schema.fields.map((f) => f.name));
  for (const batch of table.batches) {
    schema.fields.forEach((field, i) => {
      const declared = toArrowType(field.type);
      const got = batch.data.children[i].type;
      expect(
        arrow.util.compareTypes(got, declared),
        `${context}: column ${field.name} decodes as ${got}, declared ${declared}`,
      ).toBe(true);
    });
  }
  return arrowToRows(table, schema);
}

/** Every value of a sample of rows must be its own canonical form for the column's type. */
function expectCanonical(rows: unknown[][], schema: StructType, context: string) {
  const step = Math.max(1, Math.floor(rows.length / 500));
  for (let r = 0; r < rows.length; r += step) {
    schema.fields.forEach((field, c) => {
      const v = rows[r][c];
      expect(
        canonicalValue(v, field.type, field.name),
        `${context} row ${r} ${field.name}`,
      ).toEqual(v);
    });
  }
}

async function expectInvariants(
  store: ObjectStore,
  snapshot: Snapshot,
  result: ReadResult,
  context: string,
): Promise<unknown[][]> {
  const tableSchema = parseSchema(snapshot.metadata.schemaString);
  expect(
    result.schema.fields.map((f) => f.name),
    context,
  ).toEqual(tableSchema.fields.map((f) => f.name));
  expect(result.table.numRows, `${context}: rows vs numRecords - DV cardinalities`).toBe(
    await expectedRowCount(store, snapshot),
  );
  const rows = rowsOf(result, context);
  expectCanonical(rows, result.schema, context);
  return rows;
}

function expectStated(rows: unknown[][], schema: StructType, stated: Stated, context: string) {
  let got = rows;
  if (stated.columns) {
    const idx = stated.columns.map((c) => schema.fields.findIndex((f) => f.name === c));
    expect(idx, context).not.toContain(-1);
    got = rows.map((r) => idx.map((i) => r[i]));
  }
  expect(got.length, `${context}: row count`).toBe(stated.rows.length);
  const want = rowBag(stated.rows);
  const have = rowBag(got);
  // Only the differing rows, so a mismatch in a million-row table stays readable.
  const missing = want.filter((k, i) => have[i] !== k).slice(0, 5);
  const extra = have.filter((k, i) => want[i] !== k).slice(0, 5);
  expect({ missing, extra }, context).toEqual({ missing: [], extra: [] });
}

// ---------------------------------------------------------------------------------------------
// DuckDB cross-check of primitive data columns, for tables whose generators are silent

let db: DuckDBInstance;
let duck: DuckDBConnection;

beforeAll(async () => {
  db = await DuckDBInstance.create(":memory:", {
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
    threads: "1",
  });
  duck = await db.connect();
});

afterAll(() => {
  duck?.closeSync();
  db?.closeSync();
});

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
const sqlIdent = (s: string) => `"${s.replaceAll('"', '""')}"`;

/**
 * DuckDB expression giving a column's value as text comparable with `ourText`; for nested types
 * only whether the value is null.
 */
function duckText(column: string, type: DataType): string {
  const c = sqlIdent(column);
  if (typeof type === "object") {
    return type.type === "decimal" ? `${c}::VARCHAR` : `(${c} IS NULL)::VARCHAR`;
  }
  switch (type) {
    case "binary":
      return `to_base64(${c})`;
    case "timestamp":
    case "timestamp_ntz":
      return `epoch_us(${c})::VARCHAR`;
    default:
      return `${c}::VARCHAR`;
  }
}

function floatText(text: string, single: boolean): string {
  const special: Record<string, number> = { nan: Number.NaN, inf: Infinity, "-inf": -Infinity };
  const x = text.toLowerCase() in special ? special[text.toLowerCase()] : Number(text);
  return String(single ? Math.fround(x) : x);
}

/** Our canonical value as the text duckText yields. */
function ourText(v: unknown, type: DataType): string | null {
  if (typeof type === "object" && type.type !== "decimal") return String(v === null);
  if (v === null) return null;
  switch (type) {
    case "float":
    case "double":
      return floatText(typeof v === "number" ? String(v) : (v as string), type === "float");
    case "timestamp":
    case "timestamp_ntz":
      return String(timestampMicros(v as string));
    default:
      return String(v);
  }
}

async function expectDuckDbAgrees(
  store: ObjectStore,
  snapshot: Snapshot,
  result: ReadResult,
  rows: unknown[][],
  context: string,
) {
  const schema = result.schema;
  const mode = columnMappingMode(snapshot.metadata.configuration);
  const partitions = new Set(snapshot.metadata.partitionColumns);
  const compared = schema.fields
    .map((field, index) => ({
      field,
      index,
      expr: duckText(physicalName(field, mode), field.type),
    }))
    .filter((c) => c.expr !== undefined && !partitions.has(c.field.name));
  if (compared.length === 0) return;
  const deleted = await deletedRows(store, snapshot);
  const theirs: string[] = [];
  for (const file of snapshot.files) {
    const abs = path.join(FIXTURES, fileKey(snapshot.tableRoot, file.path));
    const source = `read_parquet(${sqlString(abs)}, file_row_number = true, hive_partitioning = false)`;
    const present = new Set(
      (await duck.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`))
        .getRowObjectsJson()
        .map((r) => String(r.column_name).toLowerCase()),
    );
    const exprs = compared.map((c) => {
      if (present.has(physicalName(c.field, mode).toLowerCase())) return c.expr;
      const nested = typeof c.field.type === "object" && c.field.type.type !== "decimal";
      return nested ? "'true'" : "NULL";
    });
    const reader = await duck.runAndReadAll(
      `SELECT file_row_number, ${exprs.join(", ")} FROM ${source}`,
    );
    const gone = deleted.get(file.path);
    for (const row of reader.getRowsJson()) {
      if (gone?.has(Number(row[0]))) continue;
      const values = row.slice(1).map((v, i) => {
        if (v === null) return null;
        const t = compared[i].field.type;
        return t === "float" || t === "double" ? floatText(String(v), t === "float") : String(v);
      });
      theirs.push(JSON.stringify(values));
    }
  }
  const ours = rows.map((r) =>
    JSON.stringify(compared.map((c) => ourText(r[c.index], c.field.type))),
  );
  theirs.sort();
  ours.sort();
  expect(ours.length, `${context}: rows vs DuckDB`).toBe(theirs.length);
  const diff = ours.filter((k, i) => theirs[i] !== k).slice(0, 5);
  expect(diff, `${context}: rows DuckDB reads differently`).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// Tests

describe("fixture inventory", () => {
  it("finds every table MANIFEST.md describes, and every listed name exists", () => {
    expect(ENTRIES.length).toBeGreaterThan(150);
    const listed = [FAILING, FAILING_VERSIONS, WRONG_ROWS].flatMap((m) => Object.keys(m));
    for (const name of listed) {
      expect(ENTRIES, name).toContain(name);
    }
    for (const name of Object.keys(STATED)) expect(ENTRIES, name).toContain(name);
    // Nested grouping folders are walked into, not treated as tables.
    expect(ENTRIES).toContain("golden/hive/deltatbl-partitioned");
    expect(ENTRIES).toContain("spark/history/delta-0.2.0");
    expect(ENTRIES).toContain("golden/data-reader-date-types-Asia/Beirut");
    expect(ENTRIES).not.toContain("golden/hive");
  });
});

describe("expected failures", () => {
  const failing = ENTRIES.filter((t) => t in FAILING);
  it.each(failing)("%s", async (table) => {
    const f = FAILING[table];
    const store = storeFor(table);
    if (f.replays) {
      const snapshot = await loadSnapshot(store, `${table}/`);
      if (f.replays.liveFiles !== undefined) {
        expect(snapshot.files, table).toHaveLength(f.replays.liveFiles);
      }
      await expectSiltError(readSnapshotRows(store, snapshot), f, table);
    } else {
      await expectSiltError(
        loadSnapshot(store, `${table}/`).then((s) => readSnapshotRows(store, s)),
        f,
        table,
      );
    }
  });
});

describe("readable tables: invariants at every version, stated rows, DuckDB", () => {
  const readable = ENTRIES.filter(
    (t) => !(t in FAILING) && !(t in WRONG_ROWS) && !t.startsWith("catalog-managed/"),
  );
  it.each(readable)("%s", async (table) => {
    const versions = logVersions(table);
    const latest = versions.at(-1)!;
    const failing = FAILING_VERSIONS[table];
    for (const v of versions) {
      const context = `${table}@v${v}`;
      // The latest version through the plain load, which starts from _last_checkpoint.
      const opts = v === latest ? {} : { version: v };
      if (failing?.versions.includes(v)) {
        await expectSiltError(read(table, opts), failing, context);
        continue;
      }
      const { store, snapshot, result } = await read(table, opts);
      expect(snapshot.version, context).toBe(v);
      const rows = await expectInvariants(store, snapshot, result, context);
      const stated = STATED[table]?.(v);
      if (stated) expectStated(rows, result.schema, stated, context);
      if (v === latest && (!stated || stated.columns)) {
        await expectDuckDbAgrees(store, snapshot, result, rows, context);
      }
    }
  });
});

describe("projections and limits", () => {
  it("reads a subset of columns of a column-mapped table by id and by name", async () => {
    const columns = ["ByteType", "decimal", "nested_struct", "array_of_prims", "map_of_prims"];
    for (const table of [
      "golden/table-with-columnmapping-mode-id",
      "golden/table-with-columnmapping-mode-name",
    ]) {
      const snapshot = await loadSnapshot(fixtures, `${table}/`);
      const { schema, table: t } = await readSnapshotRows(fixtures, snapshot, { columns });
      expect(schema.fields.map((f) => f.name)).toEqual(columns);
      const pick = [0, 6, 12, 13, 18];
      const want = columnMappingRows.rows.map((r) => pick.map((i) => r[i]));
      expect(rowBag(arrowToRows(t, schema)), table).toEqual(rowBag(want));
    }
  });

  it("reads partition columns alone, and data columns in any order", async () => {
    const table = "golden/data-reader-partition-values";
    const snapshot = await loadSnapshot(fixtures, `${table}/`);
    const parts = await readSnapshotRows(fixtures, snapshot, { columns: ["as_int", "as_date"] });
    expect(rowBag(arrowToRows(parts.table, parts.schema))).toEqual(
      rowBag([
        [0, "2021-09-08"],
        [1, "2021-09-08"],
        [null, null],
      ]),
    );
    const mixed = await readSnapshotRows(fixtures, snapshot, {
      columns: ["value", "as_string", "as_nested_struct"],
    });
    expect(rowBag(arrowToRows(mixed.table, mixed.schema))).toEqual(
      rowBag([0, 1, 2].map((i) => [String(i), i === 2 ? null : String(i), nested(i)])),
    );
    function nested(i: number) {
      return { aa: String(i), ab: String(i), ac: { aca: i, acb: i } };
    }
  });

  it("stops at the limit, across files and deletion vectors", async () => {
    const table = "golden/dv-partitioned-with-checkpoint";
    const snapshot = await loadSnapshot(fixtures, `${table}/`);
    const all = await readSnapshotRows(fixtures, snapshot);
    for (const limit of [1, 4, 7, 35, 100]) {
      const { table: t } = await readSnapshotRows(fixtures, snapshot, { limit, concurrency: 2 });
      expect(t.numRows).toBe(Math.min(limit, 35));
      const firstRows = arrowToRows(all.table, all.schema).slice(0, t.numRows);
      expect(arrowToRows(t, all.schema)).toEqual(firstRows);
    }
  });
});

describe("file representations the fixtures do not cover", () => {
  it("64-bit list offsets (large_list, as polars writes) narrow to the schema's list", () => {
    const element = new arrow.Field("element", new arrow.Int32(), true);
    const values = arrow.makeData({
      type: new arrow.Int32(),
      length: 6,
      data: Int32Array.from([1, 2, 3, 4, 5, 6]),
    });
    const large = arrow.makeData({
      type: new arrow.LargeList(element),
      length: 4,
      nullCount: 1,
      nullBitmap: Uint8Array.from([0b1011]),
      valueOffsets: BigInt64Array.from([0n, 2n, 3n, 3n, 6n]),
      child: values,
    } as never) as arrow.Data;
    const target = toArrowType({ type: "array", elementType: "integer", containsNull: true });
    const schema: StructType = {
      type: "struct",
      fields: [
        {
          name: "c",
          type: { type: "array", elementType: "integer", containsNull: true },
          nullable: true,
          metadata: {},
        },
      ],
    };
    const rowsOfData = (d: arrow.Data) => {
      const arrowSchema = new arrow.Schema([new arrow.Field("c", target, true)]);
      const struct = arrow.makeData({
        type: new arrow.Struct(arrowSchema.fields),
        length: d.length,
        nullCount: 0,
        children: [d],
      });
      return arrowToRows(new arrow.RecordBatch(arrowSchema, struct), schema);
    };
    const whole = conformData(large, target, "c");
    expect(arrow.util.compareTypes(whole.type, target)).toBe(true);
    expect(rowsOfData(whole)).toEqual([[[1, 2]], [[3]], [null], [[4, 5, 6]]]);
    expect(rowsOfData(conformData(large.slice(1, 3), target, "c"))).toEqual([
      [[3]],
      [null],
      [[4, 5, 6]],
    ]);
  });
});

describe("DV with an absolute path under special characters (spark/table-with-dv-special-char)", () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), "silt-conformance-"));
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it("reads range(0, 10) minus the even ids once the placeholder is substituted", async () => {
    // As the Spark suite does: copy the template and put the folder's URI into the DV path.
    const name = "table-with-dv-special-char";
    const dir = path.join(tmp, name);
    await cp(path.join(FIXTURES, "spark", name), dir, { recursive: true });
    const log = path.join(dir, "_delta_log", "00000000000000000000.json");
    const folder = path
      .join(dir, "folder&with%special char")
      .replaceAll("%", "%25")
      .replaceAll(" ", "%20");
    const text = await readFile(log, "utf8");
    await writeFile(log, text.replaceAll("{{FOLDER_WITH_SPECIAL_CHAR}}", folder));
    const store = new LocalObjectStore(tmp);
    const snapshot = await loadSnapshot(store, `${name}/`);
    const result = await readSnapshotRows(store, snapshot);
    const rows = await expectInvariants(store, snapshot, result, name);
    expect(rowBag(rows)).toEqual(rowBag([[1], [3], [5], [7], [9]]));
  });
});

describe("catalog-managed (catalog-managed/catalog-owned-preview, info.txt)", () => {
  const table = "catalog-managed/catalog-owned-preview";
  const staged = [
    {
      version: 1,
      key: `${table}/_delta_log/_staged_commits/00000000000000000001.4cb9708e-b478-44de-b203-53f9ba9b2876.json`,
    },
    {
      version: 2,
      key: `${table}/_delta_log/_staged_commits/00000000000000000002.5b9bba4a-0085-430d-a65e-b0d38c1afbe9.json`,
    },
  ];
  const rowsUpTo = (n: number) => range(0, n).map((c) => [Math.floor(c / 100), c]);

  it("without the catalog, only the published version 0 (no rows) is visible", async () => {
    const snapshot = await loadSnapshot(fixtures, `${table}/`);
    expect(snapshot.version).toBe(0);
    const result = await readSnapshotRows(fixtures, snapshot);
    expect(result.schema.fields.map((f) => f.name)).toEqual(["part1", "col1"]);
    expect(await expectInvariants(fixtures, snapshot, result, table)).toEqual([]);
  });

  it("with the ratified staged commits, version 2 holds col1 0..199", async () => {
    for (const [v, n] of [
      [1, 100],
      [2, 200],
    ]) {
      const snapshot = await loadSnapshot(fixtures, `${table}/`, {
        ratified: staged.slice(0, v),
        latestRatified: v,
      });
      expect(snapshot.version).toBe(v);
      const result = await readSnapshotRows(fixtures, snapshot);
      const rows = await expectInvariants(fixtures, snapshot, result, `${table}@v${v}`);
      expect(rowBag(rows)).toEqual(rowBag(rowsUpTo(n)));
    }
    const back = await loadSnapshot(fixtures, `${table}/`, {
      ratified: staged,
      latestRatified: 2,
      version: 1,
    });
    const result = await readSnapshotRows(fixtures, back);
    expect(rowBag(arrowToRows(result.table, result.schema))).toEqual(rowBag(rowsUpTo(100)));
  });
});
