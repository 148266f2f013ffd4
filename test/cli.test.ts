/**
 * What a new user does first: `npm start` (silt serve) on a fresh data directory, a table made
 * and filled over HTTP, the server restarted with the data still there, and `silt read` printing
 * the table straight from its files.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const SILT = path.join(ROOT, "bin", "silt.mjs");

async function runSilt(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [SILT, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
  return { code, stdout, stderr };
}

async function startServe(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [SILT, "serve"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", SILT_DATA_DIR: dataDir },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const m = /serving (http:\/\/[^/\s]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`silt serve exited with ${code}: ${out}`)));
  });
  return { url, child };
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  child.kill(signal);
  await exited;
}

/**
 * The line saying what went wrong, last, and no stack trace (Node's own process warnings, such as
 * the AWS SDK's about Node versions, may come before it).
 */
function errorLine(stderr: string): string {
  expect(stderr).not.toMatch(/^\s+at /m);
  const lines = stderr.trim().split("\n");
  expect(
    lines.filter((l) => l.startsWith("silt:")),
    stderr,
  ).toHaveLength(1);
  return lines[lines.length - 1];
}

describe("silt command", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "silt-cli-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("prints help", async () => {
    const res = await runSilt(["--help"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("silt serve");
    expect(res.stdout).toContain("silt read");
    const bad = await runSilt(["frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown command");
  });

  it("exits with one line naming PORT when the port is taken or not a port", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as net.AddressInfo;
    const dir = await mkdtemp(path.join(os.tmpdir(), "silt-cli-port-"));
    try {
      const res = await runSilt(["serve"], { PORT: String(port), SILT_DATA_DIR: dir });
      expect(res.code).toBe(1);
      expect(errorLine(res.stderr)).toBe(
        `silt: [SILT_PORT_IN_USE] Port ${port} on 127.0.0.1 is in use by another program. ` +
          `Stop it, or choose another port with PORT, e.g. PORT=${port + 1} npm start.`,
      );
      // What it took on the way is given back: the directory is free for the next server.
      expect(existsSync(path.join(dir, "silt.pid"))).toBe(false);
      for (const bad of ["http", "70000", "-1", ""]) {
        const res = await runSilt(["serve"], { PORT: bad, SILT_DATA_DIR: dir });
        expect(res.code).toBe(1);
        expect(errorLine(res.stderr)).toBe(
          `silt: [SILT_MISCONFIGURED] PORT for silt serve must be an integer from 0 to 65535 (got ${JSON.stringify(bad)}).`,
        );
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reads SILT_POST_COMMIT as the deployed functions do", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "silt-cli-"));
    try {
      const res = await runSilt(["serve"], {
        PORT: "0",
        SILT_DATA_DIR: dir,
        SILT_POST_COMMIT: "later",
      });
      expect(res.code).toBe(1);
      expect(errorLine(res.stderr)).toBe(
        'silt: [SILT_MISCONFIGURED] Environment variable SILT_POST_COMMIT must be one of await, background, off (got "later").',
      );
      expect(existsSync(path.join(dir, "silt.pid"))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a second server on a data directory in use, and restarts after a kill -9", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "silt-cli-lock-"));
    let first = await startServe(dir);
    try {
      const created = await fetch(`${first.url}/api/v1/catalogs`, {
        method: "POST",
        body: JSON.stringify({ name: "kept" }),
      });
      expect(created.status).toBe(201);
      const second = await runSilt(["serve"], { PORT: "0", SILT_DATA_DIR: dir });
      expect(second.code).toBe(1);
      const lockFile = path.join(dir, "silt.pid");
      expect(errorLine(second.stderr)).toBe(
        `silt: [SILT_DATA_DIR_IN_USE] Data directory ${dir} is in use by process ` +
          `${first.child.pid} (another silt serve). Stop that server, or choose another ` +
          `directory with SILT_DATA_DIR. If no such server runs, delete ${lockFile}.`,
      );
      // The refused server left the first one's lock and data alone.
      expect((await fetch(`${first.url}/api/v1/catalogs`)).status).toBe(200);

      // A server killed without a chance to clean up leaves its lock behind; it is stale.
      await stop(first.child, "SIGKILL");
      expect(existsSync(lockFile)).toBe(true);
      first = await startServe(dir);
      const catalogs = await (await fetch(`${first.url}/api/v1/catalogs`)).json();
      expect(JSON.stringify(catalogs)).toContain('"kept"');
      await stop(first.child);
      expect(existsSync(lockFile)).toBe(false);
    } finally {
      await stop(first.child);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("serves the API, keeps data across restarts, and reads tables from their files", async () => {
    let server = await startServe(dataDir);
    const call = async (method: string, route: string, body?: unknown) => {
      const res = await fetch(`${server.url}${route}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: responses are checked field by field.
      return { status: res.status, body: (await res.json()) as any };
    };
    try {
      expect((await call("GET", "/api/v1/health")).status).toBe(200);
      expect((await call("POST", "/api/v1/catalogs", { name: "demo" })).status).toBe(201);
      expect((await call("POST", "/api/v1/catalogs/demo/schemas", { name: "s" })).status).toBe(201);
      const created = await call("POST", "/api/v1/tables", {
        name: "demo.s.t",
        columns: [
          { name: "id", type: "BIGINT" },
          { name: "name", type: "STRING" },
        ],
      });
      expect(created.status).toBe(201);
      const ins = await call("POST", "/api/v1/tables/demo.s.t/insert", {
        rows: [
          [1, "ada"],
          [2, "grace"],
        ],
      });
      expect(ins.status).toBe(200);
      await stop(server.child);

      server = await startServe(dataDir);
      const rows = await call("GET", "/api/v1/tables/demo.s.t/rows");
      expect(rows.status).toBe(200);
      expect(rows.body.version).toBe(1);
      expect(rows.body.rows).toEqual([
        [1, "ada"],
        [2, "grace"],
      ]);

      const tableDir = path.join(dataDir, "storage", "tables", created.body.tableId);
      const json = await runSilt(["read", tableDir, "--json"]);
      expect(json.code, json.stderr).toBe(0);
      expect(
        json.stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l)),
      ).toEqual([
        { id: 1, name: "ada" },
        { id: 2, name: "grace" },
      ]);
      const old = await runSilt(["read", tableDir, "--version", "0"]);
      expect(old.stdout).toContain("version 0, 0 row(s)");
      const limited = await runSilt(["read", tableDir, "--columns", "name", "--limit", "1"]);
      expect(limited.stdout).toContain("name string");
      expect(limited.stdout).toContain("1 row(s)");
      const missing = await runSilt(["read", path.join(dataDir, "nope")]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/\[DELTA_TABLE_NOT_FOUND\]/);
    } finally {
      await stop(server.child);
    }
  });
});
