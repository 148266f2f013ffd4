/**
 * The real Unity Catalog clients (Spark with the UC connector, DuckDB with its unity_catalog
 * extension, the `unitycatalog-client` Python SDK) for the test/uc-*.test.ts suites, which run
 * the Python programs in test/clients/ against an in-process Silt.
 *
 * The clients live in a cached venv (cached-venv.ts) holding exactly uc-clients-requirements.txt,
 * outside the clone, because the venv (~1 GB with pyspark) and Spark's Ivy cache (~170 MB of
 * jars) take minutes to fetch:
 * `${SILT_CLIENTS_CACHE:-~/.cache/silt-uc-clients}/<hash of the requirements>/{venv,ivy}`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { cachedVenv } from "./cached-venv.ts";

const ROOT = join(import.meta.dirname, "..", "..");
/** The Python client programs. */
export const CLIENTS_DIR = join(ROOT, "test", "clients");
/** The UC Spark connector jars (shared/clients/unitycatalog/README.md). */
export const CONNECTOR_JARS_DIR = join(ROOT, "..", "shared", "clients", "unitycatalog");

const VENV = cachedVenv({
  requirements: join(import.meta.dirname, "uc-clients-requirements.txt"),
  cacheDir: process.env.SILT_CLIENTS_CACHE || join(homedir(), ".cache", "silt-uc-clients"),
  importCheck:
    "import pyspark, duckdb, unitycatalog.client, duckdb_extension_httpfs, " +
    "duckdb_extension_delta, duckdb_extension_unity_catalog",
  what: "the Unity Catalog clients",
  venvHint:
    "The UC client tests need python3 (3.10 or newer) with its venv module (on Debian/Ubuntu: " +
    "apt-get install python3 python3-venv) and Java 17 for Spark",
});
/** `<cache>/<hash>/`: the venv, the Ivy cache and the install lock. */
export const CLIENTS_HOME = VENV.home;
/** Spark's `spark.jars.ivy`: the resolved delta-spark jars live here between runs. */
export const IVY_DIR = join(CLIENTS_HOME, "ivy");

/**
 * Makes sure the venv holds the pinned clients, installing them under the lock when it does
 * not; returns how long this process spent (waiting included; 0 when the venv was ready).
 */
export async function ensureUcClients(): Promise<number> {
  const ms = await VENV.ensure();
  mkdirSync(IVY_DIR, { recursive: true });
  return ms;
}

/** The venv's python, after ensureUcClients. */
export async function ucPython(): Promise<string> {
  await ensureUcClients();
  return VENV.python;
}

/** The jars for `spark.jars`: the UC connector, its client, its Hadoop glue and one dependency. */
export function sparkJars(): string[] {
  const jars = readdirSync(CONNECTOR_JARS_DIR)
    .filter((f) => f.endsWith(".jar"))
    .sort()
    .map((f) => join(CONNECTOR_JARS_DIR, f));
  if (!jars.some((j) => j.includes("unitycatalog-spark"))) {
    throw new Error(`no unitycatalog-spark jar in ${CONNECTOR_JARS_DIR}`);
  }
  return jars;
}

/** DuckDB's extension files in LOAD order: httpfs first (else DuckDB tries to auto-install it). */
export function duckdbExtensions(): string[] {
  const lib = join(VENV.venv, "lib");
  const pythonDir = readdirSync(lib).find((d) => d.startsWith("python"));
  if (pythonDir === undefined) throw new Error(`no python*/ in ${lib}`);
  return ["httpfs", "delta", "unity_catalog"].map((name) => {
    const dir = join(lib, pythonDir, "site-packages", `duckdb_extension_${name}`, "extensions");
    const version = readdirSync(dir).find((v) => v.startsWith("v"));
    if (version === undefined) throw new Error(`no extension version under ${dir}`);
    const file = readdirSync(join(dir, version)).find((f) => f.endsWith(".duckdb_extension"));
    if (file === undefined) throw new Error(`no .duckdb_extension in ${join(dir, version)}`);
    return join(dir, version, file);
  });
}

/**
 * What the client programs read (each also finds these by itself when run by hand):
 * SILT_UC_JARS (comma-separated), SILT_UC_IVY, SILT_DUCKDB_EXTENSIONS (':'-separated, in order).
 */
export function clientEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    SILT_UC_JARS: sparkJars().join(","),
    SILT_UC_IVY: IVY_DIR,
    SILT_DUCKDB_EXTENSIONS: duckdbExtensions().join(":"),
    PYTHONUNBUFFERED: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    ...extra,
  };
}

export interface ClientResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  ms: number;
}

export interface RunOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
  input?: string;
}

/**
 * Runs test/clients/<script> with the venv's python; never throws for a non-zero exit (the
 * caller asserts on code, stdout and stderr).
 */
export async function runClient(
  script: string,
  args: string[] = [],
  opts: RunOptions = {},
): Promise<ClientResult> {
  const python = await ucPython();
  const started = performance.now();
  const child = spawn(python, [join(CLIENTS_DIR, script), ...args], {
    cwd: CLIENTS_DIR,
    env: clientEnv(opts.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdin.end(opts.input ?? "");
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 10 * 60_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once("close", (c, s) => resolve([c, s])),
  );
  clearTimeout(timer);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, signal, stdout, stderr, json, ms: performance.now() - started };
}

/**
 * A long-lived client program speaking one JSON object per line: a request on stdin, its answer
 * on stdout (spark_session.py's `serve`, so one Spark JVM serves a whole test file).
 */
export interface ClientSession {
  call<T = Record<string, unknown>>(
    request: Record<string, unknown>,
    timeoutMs?: number,
  ): Promise<T>;
  /** Everything the program wrote to stderr so far (Spark's log, tracebacks). */
  stderr(): string;
  close(): Promise<void>;
}

export async function startClient(script: string, args: string[] = []): Promise<ClientSession> {
  const python = await ucPython();
  const child: ChildProcessWithoutNullStreams = spawn(
    python,
    [join(CLIENTS_DIR, script), ...args],
    { cwd: CLIENTS_DIR, env: clientEnv(), stdio: ["pipe", "pipe", "pipe"] },
  );
  let err = "";
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
    if (err.length > 4_000_000) err = err.slice(-2_000_000);
  });
  let buffered = "";
  const waiting: Array<(line: string | undefined) => void> = [];
  const lines: string[] = [];
  child.stdout.on("data", (c: Buffer) => {
    buffered += c.toString();
    for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      const w = waiting.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<void>((resolve) =>
    child.once("close", () => {
      for (const w of waiting.splice(0)) w(undefined);
      resolve();
    }),
  );
  const nextLine = (timeoutMs: number) =>
    new Promise<string | undefined>((resolve, reject) => {
      const queued = lines.shift();
      if (queued !== undefined) return resolve(queued);
      if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
      const timer = setTimeout(() => {
        const k = waiting.indexOf(done);
        if (k >= 0) waiting.splice(k, 1);
        reject(new Error(`${script}: no answer within ${timeoutMs} ms\n${tail(err)}`));
      }, timeoutMs);
      const done = (line: string | undefined) => {
        clearTimeout(timer);
        resolve(line);
      };
      waiting.push(done);
    });
  let queue: Promise<unknown> = Promise.resolve();
  return {
    call<T>(request: Record<string, unknown>, timeoutMs = 10 * 60_000): Promise<T> {
      const answer = queue.then(async () => {
        child.stdin.write(`${JSON.stringify(request)}\n`);
        const line = await nextLine(timeoutMs);
        if (line === undefined) {
          throw new Error(`${script} exited (${child.exitCode ?? child.signalCode})\n${tail(err)}`);
        }
        return JSON.parse(line) as T;
      });
      queue = answer.catch(() => {});
      return answer;
    },
    stderr: () => err,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The last lines of a log, for failure messages. */
export function tail(log: string, lines = 60): string {
  return log.split("\n").slice(-lines).join("\n");
}
