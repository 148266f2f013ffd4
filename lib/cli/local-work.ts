/**
 * Where `silt ingest` and `silt maintain` do their work: through the server holding the data
 * directory (its local-only routes, lib/runtime/local-routes.ts), or in this process on the
 * directory opened here, as connection.ts decides for `silt sql`.
 */
import path from "node:path";
import { parseQualifiedName, type QualifiedName } from "../catalog/names.ts";
import { siltError } from "../errors.ts";
import { dataDirHolder } from "../runtime/data-dir-lock.ts";
import { postCommitMode } from "../runtime/env.ts";
import { type LocalDataDir, openLocalDataDir } from "../runtime/local-server.ts";
import { connect, problemsLogger } from "./connection.ts";
import type { CliIo } from "./io.ts";

export type LocalTarget =
  | { kind: "server"; post(route: string): Promise<unknown> }
  | { kind: "here"; local: LocalDataDir; table: QualifiedName | undefined };

/** The optional `catalog.schema.table` argument of `silt ingest` / `silt maintain`. */
export function tableArgument(args: string[], command: string): string | undefined {
  if (args.length > 1 || args[0]?.startsWith("-")) {
    throw siltError("INVALID_ARGUMENT:OPTIONS", {
      problem: `silt ${command} takes at most one table name (got '${args.join(" ")}').`,
      command,
    });
  }
  return args[0];
}

export async function withLocalTarget<T>(
  io: CliIo,
  table: string | undefined,
  work: (target: LocalTarget) => Promise<T>,
): Promise<T> {
  const dataDir = path.resolve(io.env.SILT_DATA_DIR ?? ".silt");
  const name = table === undefined ? undefined : parseQualifiedName(table);
  if (dataDirHolder(dataDir) !== undefined) {
    const conn = await connect({ dataDir, env: io.env, token: io.env.SILT_TOKEN });
    const body = name === undefined ? {} : { table };
    return work({ kind: "server", post: (route) => conn.json("POST", route, body) });
  }
  const local = await openLocalDataDir({
    dataDir,
    logger: problemsLogger(),
    postCommitMode: postCommitMode(io.env),
  });
  try {
    return await work({ kind: "here", local, table: name });
  } finally {
    await local.close();
  }
}
