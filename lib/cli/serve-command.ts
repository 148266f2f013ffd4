/** `silt serve` (`npm start`): the HTTP API and the Unity Catalog API on this machine. */
import { siltError } from "../errors.ts";
import { jsonLogger } from "../logger.ts";
import { postCommitMode } from "../runtime/env.ts";
import { maintenanceIntervalOf } from "../runtime/local-maintenance.ts";
import { startLocalServer } from "../runtime/local-server.ts";
import { localTokens } from "./connection.ts";
import type { CliIo } from "./io.ts";

export const SERVE_HELP = `Usage:
  silt serve             Serve the HTTP API on http://127.0.0.1:8080 (npm start runs this)

Environment:
  PORT                   The port (default 8080; 0 picks a free one)
  SILT_DATA_DIR          The data directory (default ./.silt); one server per directory
  SILT_AUTH=token        With SILT_TOKENS='tok=alice,…': run each request as its bearer
                         token's principal, with privileges checked (default: no authentication)
  SILT_POST_COMMIT       await (default), background or off: how commits write checkpoints
  SILT_MAINTENANCE_INTERVAL
                         Run the maintenance pass (silt maintain) every N seconds, or with a
                         unit: 90s, 10m, 1h (default: never)

Files dropped under <data dir>/storage/ingest/<catalog>/<schema>/<table>/ are ingested into
that table within seconds, once each (as silt ingest does).

Unity Catalog clients (Spark, DuckDB, the UC SDK) use the server's URL as their uri.
`;

/** PORT: the port `silt serve` listens on (8080 unless set; 0 picks a free one). */
function servePort(env: NodeJS.ProcessEnv): number {
  const text = env.PORT ?? "8080";
  const port = Number(text);
  if (!/^\d+$/.test(text.trim()) || port > 65535) {
    throw siltError("SILT_MISCONFIGURED:SERVE_PORT", { value: JSON.stringify(text) });
  }
  return port;
}

export async function serveCommand(args: string[], io: CliIo): Promise<number> {
  if (args.length > 0) {
    throw siltError("INVALID_ARGUMENT:OPTIONS", {
      problem: `silt serve takes no arguments (got '${args[0]}'); it is configured by environment variables.`,
      command: "serve",
    });
  }
  const port = servePort(io.env);
  const dataDir = io.env.SILT_DATA_DIR ?? ".silt";
  const maintenanceIntervalMs = maintenanceIntervalOf(io.env);
  const server = await startLocalServer({
    dataDir,
    port,
    logger: jsonLogger({ service: "silt" }),
    tokens: localTokens(io.env),
    postCommitMode: postCommitMode(io.env),
    maintenanceIntervalMs,
  });
  io.stdout.write(
    `Silt is serving ${server.url}/api/v1 and the Unity Catalog API at ${server.url} ` +
      `(data in ${dataDir})\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  return 0;
}
