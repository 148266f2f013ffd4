/**
 * `silt read`: any Delta table printed straight from its files (a directory or an s3:// URI),
 * which doubles as the reader-conformance entry point. It reads files, not the catalog: given
 * what looks like a table name, it says so and points to `silt sql`.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { createS3Client } from "../aws-clients.ts";
import { arrowToRows } from "../data/arrow-to-json.ts";
import { sparkTypeName } from "../delta/schema.ts";
import { loadSnapshot } from "../delta/snapshot.ts";
import { SiltError, siltError } from "../errors.ts";
import { readSnapshotRows } from "../ops/read-files.ts";
import { LocalObjectStore } from "../storage/local-store.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { S3ObjectStore } from "../storage/s3-store.ts";
import type { CliIo } from "./io.ts";
import { formatTable } from "./result-format.ts";

export const READ_HELP = `Usage:
  silt read <table> [options]   Print the rows of a Delta table read straight from its files

<table> is the table's directory or an s3://bucket/prefix URI (a table Silt manages lives in
<data dir>/storage/tables/<table-id>; DESCRIBE DETAIL shows its location). To read a table by
its catalog name, use silt sql "SELECT * FROM catalog.schema.table".

Options:
  --version N      Read version N (time travel)
  --timestamp T    Read the version current at T ('2026-10-03 12:00:00' or ISO-8601)
  --columns a,b    Only these columns
  --limit N        At most N rows
  --json           One JSON object per row (values as the HTTP API answers them: decimals and
                   64-bit integers past 2^53 as strings, timestamps as ISO-8601 UTC) instead of
                   a table
  -h, --help       This text
`;

/** One to three dotted identifiers, as a table name is written: `t`, `s.t`, `main.default.t`. */
const TABLE_NAME = /^(?:`[^`]+`|[\p{L}_][\p{L}0-9_]*)(?:\.(?:`[^`]+`|[\p{L}_][\p{L}0-9_]*)){1,2}$/u;

export async function readCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      version: { type: "string" },
      timestamp: { type: "string" },
      columns: { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  if (positionals.length !== 1) {
    throw siltError("INVALID_ARGUMENT:READ_ONE_PATH");
  }
  const location = positionals[0];
  const isS3 = location.startsWith("s3://");
  if (!isS3 && !existsSync(location.replace(/^file:\/\//, "")) && TABLE_NAME.test(location)) {
    throw siltError("INVALID_ARGUMENT:READ_TABLE_NAME", { name: location });
  }
  const { store, root } = openLocation(location);
  const version =
    values.version === undefined ? undefined : integerArg("--version", values.version);
  const limit = values.limit === undefined ? undefined : integerArg("--limit", values.limit);
  const { snapshot, schema, table } = await naming(location, async () => {
    const snapshot = await loadSnapshot(store, root, { version, timestamp: values.timestamp });
    const read = await readSnapshotRows(store, snapshot, {
      columns: values.columns
        ?.split(",")
        .map((c) => c.trim())
        .filter((c) => c !== ""),
      limit,
    });
    return { snapshot, ...read };
  });
  const rows = arrowToRows(table, schema);
  const names = schema.fields.map((f) => f.name);
  const write = (s: string) => io.stdout.write(s);
  if (values.json) {
    for (const row of rows) {
      write(`${JSON.stringify(Object.fromEntries(names.map((n, i) => [n, row[i]])))}\n`);
    }
    return 0;
  }
  write(`version ${snapshot.version}, ${table.numRows} row(s)\n`);
  write(
    formatTable(
      schema.fields.map((f) => `${f.name} ${sparkTypeName(f.type)}`),
      rows,
    ),
  );
  return 0;
}

/**
 * Errors of the read, naming the table as the user wrote it: the store is opened at the table's
 * root, so the errors speak of keys under it ("Delta table / doesn't exist").
 */
async function naming<T>(location: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof SiltError)) throw err;
    if (err.errorClass === "DELTA_TABLE_NOT_FOUND") {
      const logDir = `${location.replace(/\/+$/, "")}/_delta_log/`;
      throw siltError("DELTA_TABLE_NOT_FOUND", { tableRoot: location, logDir });
    }
    throw err.withMessage(`${err.message} (reading ${location})`);
  }
}

function integerArg(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) {
    throw siltError("INVALID_ARGUMENT:NOT_NON_NEGATIVE_INTEGER", { flag, text });
  }
  return n;
}

function openLocation(location: string): { store: ObjectStore; root: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(location);
  if (m) {
    const prefix = m[2].replace(/\/*$/, "");
    return {
      store: new S3ObjectStore({ client: createS3Client(), bucket: m[1] }),
      root: prefix === "" ? "" : `${prefix}/`,
    };
  }
  return { store: new LocalObjectStore(location.replace(/^file:\/\//, "")), root: "" };
}
