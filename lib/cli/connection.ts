/**
 * Where `silt sql` sends its requests: Silt's own HTTP API, on a server or in this process.
 *
 * 1. `--url` given (or SILT_URL): that server.
 * 2. Otherwise the data directory (SILT_DATA_DIR, default ./.silt) decides. A live `silt serve`
 *    holding it records its URL in the directory's lock file (lib/runtime/data-dir-lock.ts):
 *    requests go there. A live process holding it without a URL (another command using it
 *    directly, a server still starting) cannot be shared: SILT_SERVER_UNREACHABLE.
 * 3. No one holds it: this process opens the directory itself (the same app, called through
 *    its fetch function), holding the lock until it closes, so no server starts on it meanwhile.
 *
 * Either way a request is the same Request to the same Hono app, with SILT_TOKEN as its bearer
 * token (for SILT_AUTH=token).
 */
import path from "node:path";
import { parseTokens } from "../auth/principal.ts";
import { SiltError, siltError } from "../errors.ts";
import { jsonLogger, type Logger } from "../logger.ts";
import { dataDirHolder } from "../runtime/data-dir-lock.ts";
import { postCommitMode } from "../runtime/env.ts";
import { openLocalDataDir } from "../runtime/local-server.ts";

export interface ConnectOptions {
  url?: string;
  token?: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
}

export interface Connection {
  /** Where requests go, for the shell's banner: a URL, or the data directory opened here. */
  where: string;
  /** A JSON request; an error answer (any API's shape) is thrown as a SiltError. */
  json(method: string, route: string, body?: unknown, signal?: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
}

export async function connect(opts: ConnectOptions): Promise<Connection> {
  const headers: Record<string, string> =
    opts.token === undefined ? {} : { authorization: `Bearer ${opts.token}` };
  if (opts.url !== undefined) return remote(opts.url.replace(/\/+$/, ""), headers);
  const dataDir = path.resolve(opts.dataDir);
  const holder = dataDirHolder(dataDir);
  if (holder?.url !== undefined) return remote(holder.url, headers);
  if (holder !== undefined) {
    throw siltError("SILT_SERVER_UNREACHABLE:NOT_LISTENING", { dataDir, pid: holder.pid });
  }
  const local = await openLocalDataDir({
    dataDir,
    logger: problemsLogger(),
    tokens: localTokens(opts.env),
    postCommitMode: postCommitMode(opts.env),
  });
  return inProcess(`${dataDir} (opened by this command; no server runs on it)`, local, headers);
}

/**
 * Requests answered by an app in this process (`app.fetch`). The app sees each request's signal
 * and stops the statement at its next check once it is aborted; the caller does not wait for
 * that check, and gets its prompt back at once.
 */
export function inProcess(
  where: string,
  app: { fetch(request: Request): Response | Promise<Response>; close(): Promise<void> },
  headers: Record<string, string> = {},
): Connection {
  return {
    where,
    json: async (method, route, body, signal) => {
      const request = new Request(`http://silt.local${route}`, init(method, headers, body, signal));
      const cancelled = new Promise<never>((_, reject) => {
        if (signal?.aborted) reject(siltError("OPERATION_CANCELED"));
        signal?.addEventListener("abort", () => reject(siltError("OPERATION_CANCELED")), {
          once: true,
        });
      });
      cancelled.catch(() => {}); // an abort after the answer came is nobody's concern
      return answer(where, await Promise.race([app.fetch(request), cancelled]), signal);
    },
    close: () => app.close(),
  };
}

/** SILT_AUTH=token with SILT_TOKENS, as `silt serve` reads them; otherwise no authentication. */
export function localTokens(env: NodeJS.ProcessEnv): ReadonlyMap<string, string> | undefined {
  const mode = env.SILT_AUTH ?? "none";
  if (mode === "none") return undefined;
  if (mode === "token") return parseTokens(env.SILT_TOKENS);
  throw siltError("SILT_MISCONFIGURED:SERVE_AUTH_MODE", { mode: JSON.stringify(mode) });
}

function remote(url: string, headers: Record<string, string>): Connection {
  return {
    where: url,
    json: async (method, route, body, signal) => {
      let response: Response;
      try {
        response = await fetch(`${url}${route}`, init(method, headers, body, signal));
      } catch (err) {
        if (signal?.aborted) throw siltError("OPERATION_CANCELED");
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        throw siltError("SILT_SERVER_UNREACHABLE:URL", {
          url,
          reason: cause?.code ?? cause?.message ?? (err as Error).message,
        });
      }
      return answer(url, response, signal);
    },
    close: async () => {},
  };
}

function init(
  method: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal | undefined,
): RequestInit {
  return body === undefined
    ? { method, headers, signal }
    : {
        method,
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal,
      };
}

/**
 * The answer's JSON; an error answer thrown as it was raised. JSON.parse loses nothing here:
 * Silt answers 64-bit integers past 2^53 and decimals as strings.
 */
async function answer(
  where: string,
  response: Response,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    if (signal?.aborted) throw siltError("OPERATION_CANCELED");
    throw err;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw siltError("SILT_SERVER_UNREACHABLE:NOT_SILT", { url: where, status: response.status });
  }
  if (response.ok) return body;
  const e = (body ?? {}) as Record<string, unknown>;
  // Silt's own routes answer error_class; the Unity Catalog routes error_code.
  const errorClass = e.error_class ?? e.error_code;
  if (typeof errorClass !== "string" || typeof e.message !== "string") {
    throw siltError("SILT_SERVER_UNREACHABLE:NOT_SILT", { url: where, status: response.status });
  }
  const sqlstate = typeof e.sqlstate === "string" ? e.sqlstate : undefined;
  const params = (e.message_parameters ?? {}) as Record<string, string>;
  throw new SiltError(errorClass, e.message, response.status, sqlstate, params);
}

/**
 * What the app logs while it runs in this process: warnings and errors, on stderr (stdout is the
 * answer's); the info lines a server logs for each request would drown the results.
 */
export function problemsLogger(fields = {}): Logger {
  const all = jsonLogger({ service: "silt", ...fields }, (l) => process.stderr.write(`${l}\n`));
  return { ...all, info: () => {}, child: (more) => problemsLogger({ ...fields, ...more }) };
}
