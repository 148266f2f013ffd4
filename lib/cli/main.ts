/**
 * The `silt` command: `serve` runs the API locally; `read` prints any Delta table straight from
 * its files (a directory or an s3:// URI), which doubles as the reader-conformance entry point.
 */

import { parseArgs } from "node:util";
import { parseTokens } from "../auth/principal.ts";
import { createS3Client } from "../aws-clients.ts";
import { arrowToRows } from "../data/arrow-to-json.ts";
import { sparkTypeName } from "../delta/schema.ts";
import { loadSnapshot } from "../delta/snapshot.ts";
import { SiltError, siltError } from "../errors.ts";
import { jsonLogger } from "../logger.ts";
import { readSnapshotRows } from "../ops/read-files.ts";
import { postCommitMode } from "../runtime/env.ts";
import { startLocalServer } from "../runtime/local-server.ts";
import { LocalObjectStore } from "../storage/local-store.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { S3ObjectStore } from "../storage/s3-store.ts";

const HELP = `silt — catalog-managed Delta tables on S3 + DynamoDB

Usage:
  silt serve                 Serve the HTTP API on http://127.0.0.1:8080
                             (PORT to change the port, SILT_DATA_DIR for the data directory,
                             default ./.silt; SILT_AUTH=token with SILT_TOKENS='tok=alice,…'
                             to run each request as its bearer token's principal)
                             Unity Catalog clients use http://127.0.0.1:8080 as their uri
  silt read <table> [options]
                             Print the rows of a Delta table read straight from storage.
                             <table> is a directory or an s3://bucket/prefix URI.
      --version N            Read version N (time travel)
      --timestamp T          Read the version current at T ('2026-10-03 12:00:00' or ISO-8601)
      --columns a,b          Only these columns
      --limit N              At most N rows
      --json                 One JSON object per row (DESIGN §6 encodings) instead of a table
  silt --help                This text
`;

export async function main(argv: string[], out = process.stdout, err = process.stderr) {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "serve":
        return await serveCommand();
      case "read":
        return await readCommand(rest, (s) => out.write(s));
      case undefined:
      case "--help":
      case "-h":
      case "help":
        out.write(HELP);
        return 0;
      default:
        err.write(`silt: unknown command '${command}'.\n\n${HELP}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof SiltError) {
      err.write(`silt: [${e.errorClass}] ${e.message}\n`);
      return 1;
    }
    err.write(`silt: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

/** SILT_AUTH=token with SILT_TOKENS, or nothing (every caller owns everything). */
function localTokens(env: NodeJS.ProcessEnv): ReadonlyMap<string, string> | undefined {
  const mode = env.SILT_AUTH ?? "none";
  if (mode === "none") return undefined;
  if (mode === "token") return parseTokens(env.SILT_TOKENS);
  throw siltError("SILT_MISCONFIGURED:SERVE_AUTH_MODE", { mode: JSON.stringify(mode) });
}

/** PORT: the port `silt serve` listens on (8080 unless set; 0 picks a free one). */
function servePort(env: NodeJS.ProcessEnv): number {
  const text = env.PORT ?? "8080";
  const port = Number(text);
  if (!/^\d+$/.test(text.trim()) || port > 65535) {
    throw siltError("SILT_MISCONFIGURED:SERVE_PORT", { value: JSON.stringify(text) });
  }
  return port;
}

async function serveCommand(): Promise<number> {
  const port = servePort(process.env);
  const server = await startLocalServer({
    dataDir: process.env.SILT_DATA_DIR ?? ".silt",
    port,
    logger: jsonLogger({ service: "silt" }),
    tokens: localTokens(process.env),
    postCommitMode: postCommitMode(process.env),
  });
  process.stdout.write(
    `Silt is serving ${server.url}/api/v1 and the Unity Catalog API at ${server.url} ` +
      `(data in ${process.env.SILT_DATA_DIR ?? ".silt"})\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  return 0;
}

async function readCommand(args: string[], write: (s: string) => void): Promise<number> {
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
  const { store, root } = openLocation(positionals[0]);
  const version =
    values.version === undefined ? undefined : integerArg("--version", values.version);
  const limit = values.limit === undefined ? undefined : integerArg("--limit", values.limit);
  const snapshot = await loadSnapshot(store, root, { version, timestamp: values.timestamp });
  const { schema, table } = await readSnapshotRows(store, snapshot, {
    columns: values.columns
      ?.split(",")
      .map((c) => c.trim())
      .filter((c) => c !== ""),
    limit,
  });
  const rows = arrowToRows(table, schema);
  const names = schema.fields.map((f) => f.name);
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

/** A plain-text grid, like Spark's `show()`. */
export function formatTable(header: string[], rows: unknown[][]): string {
  const cells = rows.map((r) => r.map(cellText));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = `+${widths.map((w) => "-".repeat(w + 2)).join("+")}+\n`;
  const fmt = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |\n`;
  return line + fmt(header) + line + cells.map(fmt).join("") + line;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}
