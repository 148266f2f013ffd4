/**
 * What a new user does first: `npm start` (silt serve) on a fresh data directory, a table made
 * and filled over HTTP, the server restarted with the data still there, and `silt read` printing
 * the table straight from its files.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runSilt, startServe, stop } from "./helpers/silt-process.ts";

/** Tests that start the CLI several times: each start compiles the TypeScript, slow on a loaded machine. */
const SPAWNING_TEST_MS = 300_000;

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

  it(
    "prints help for every command, and the version",
    async () => {
      const res = await runSilt(["--help"]);
      expect(res.code).toBe(0);
      for (const command of ["serve", "sql", "read", "ingest", "maintain", "help"]) {
        expect(res.stdout).toContain(`silt ${command} `);
      }
      const version = await runSilt(["--version"]);
      const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
      expect(version.stdout).toBe(`silt ${pkg.version}\n`);
      for (const command of ["serve", "sql", "read"]) {
        const help = await runSilt(["help", command]);
        expect(help.code).toBe(0);
        expect(help.stdout).toMatch(new RegExp(`^Usage:\n  silt ${command}`));
        // Help speaks of what the user has, not of the design documents.
        expect(help.stdout).not.toMatch(/DESIGN|§/);
        if (command === "read")
          expect((await runSilt([command, "--help"])).stdout).toBe(help.stdout);
      }
      const bad = await runSilt(["frobnicate"]);
      expect(bad.code).toBe(2);
      expect(errorLine(bad.stderr)).toBe(
        "silt: [INVALID_ARGUMENT] Unknown command 'frobnicate'. Commands: serve, sql, read, ingest, maintain. See silt --help.",
      );
      expect((await runSilt(["help", "frobnicate"])).code).toBe(2);
    },
    SPAWNING_TEST_MS,
  );

  it(
    "runs SQL on a data directory no server holds, in each format, with exit codes to rely on",
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "silt-cli-sql-"));
      const env = { SILT_DATA_DIR: dir };
      try {
        const setup = await runSilt(
          [
            "sql",
            "--format",
            "box",
            "CREATE CATALOG c; CREATE SCHEMA c.s; CREATE TABLE c.s.t (id INT, note STRING) USING DELTA; " +
              "INSERT INTO c.s.t VALUES (1, 'a;b'), (2, NULL)",
          ],
          env,
        );
        expect(setup.code, setup.stderr).toBe(0);
        expect(setup.stdout).toMatch(
          /^OK\nOK\nOK \(version 0, tableId [-0-9a-f]+, created true\)\n/,
        );
        expect(setup.stdout).toContain("OK (version 1, numAffectedRows 2)");
        // The command held the directory only while it ran.
        expect(existsSync(path.join(dir, "silt.pid"))).toBe(false);

        // Not a terminal: CSV unless asked.
        const csv = await runSilt(
          ["sql", "--catalog", "c", "--schema", "s", "SELECT * FROM t ORDER BY id"],
          env,
        );
        expect(csv.stdout).toBe("id,note\r\n1,a;b\r\n2,\r\n");
        const jsonl = await runSilt(
          ["sql", "--format", "jsonl", "SELECT id FROM c.s.t WHERE note IS NULL"],
          env,
        );
        expect(jsonl.stdout).toBe('{"id":2}\n');

        // A script stops at its first failing statement, which it names; nothing after it runs.
        const script = path.join(dir, "script.sql");
        await writeFile(
          script,
          "INSERT INTO c.s.t VALUES (3, 'x');\n-- the next one fails\nSELECT nope FROM c.s.t;\nINSERT INTO c.s.t VALUES (4, 'y');\n",
        );
        const stopped = await runSilt(["sql", "-f", script], env);
        expect(stopped.code).toBe(1);
        // INSERT answers no rows (what it did goes to the box format's summary only).
        expect(stopped.stdout).toBe("");
        const lines = stopped.stderr.trim().split("\n").slice(-3);
        expect(lines[0]).toMatch(
          /^\[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] A column, variable, or function parameter with name `nope` cannot be resolved/,
        );
        expect(lines.slice(1)).toEqual([
          `silt sql: statement 2 of 3 (${script} line 3) failed.`,
          "silt sql: stopped; the 1 statement(s) after it did not run (--continue runs them).",
        ]);
        const count = async () =>
          (await runSilt(["sql", "SELECT count(*) AS n FROM c.s.t"], env)).stdout;
        expect(await count()).toBe("n\r\n3\r\n");
        const kept = await runSilt(["sql", "-f", script, "--continue"], env);
        expect(kept.code).toBe(1);
        expect(await count()).toBe("n\r\n5\r\n");
        // Standard input that is not a terminal is a script too.
        const piped = await runSilt(["sql"], env, "SELECT max(id) AS m FROM c.s.t;");
        expect(piped.stdout).toBe("m\r\n4\r\n");

        // Usage errors exit 2 and run nothing.
        for (const args of [
          ["sql", "--frobnicate", "SELECT 1"],
          ["sql", "SELECT", "1"],
          ["sql", "--format", "xml", "SELECT 1"],
          ["sql", "-f", path.join(dir, "missing.sql")],
        ]) {
          const res = await runSilt(args, env);
          expect(res.code, args.join(" ")).toBe(2);
          expect(errorLine(res.stderr)).toMatch(/^silt: \[INVALID_ARGUMENT\] /);
        }
        expect(
          errorLine((await runSilt(["sql", "-f", path.join(dir, "missing.sql")], env)).stderr),
        ).toBe(
          `silt: [INVALID_ARGUMENT] Cannot read SQL file ${path.join(dir, "missing.sql")}: no such file.`,
        );
        expect(await count()).toBe("n\r\n5\r\n");

        // A server out of reach exits 3.
        const closed = net.createServer();
        await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
        const { port } = closed.address() as net.AddressInfo;
        await new Promise((resolve) => closed.close(resolve));
        const away = await runSilt(["sql", "--url", `http://127.0.0.1:${port}`, "SELECT 1"], env);
        expect(away.code).toBe(3);
        expect(errorLine(away.stderr)).toBe(
          `silt: [SILT_SERVER_UNREACHABLE] Could not reach a Silt server at http://127.0.0.1:${port} (ECONNREFUSED). ` +
            "Start one with npm start, or pass the server's address with --url.",
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    SPAWNING_TEST_MS,
  );

  it(
    "sends SQL to the server running on the data directory, with its bearer token",
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "silt-cli-sql-serve-"));
      const { url, child } = await startServe(dir, {
        SILT_AUTH: "token",
        SILT_TOKENS: "tok=alice",
      });
      try {
        const env = { SILT_DATA_DIR: dir };
        const anonymous = await runSilt(["sql", "CREATE CATALOG shared"], env);
        expect(anonymous.code).toBe(1);
        expect(anonymous.stderr).toMatch(/^\[UNAUTHENTICATED\] /m);
        // No --url: the server's URL comes from the data directory's lock file.
        const created = await runSilt(["sql", "--token", "tok", "CREATE CATALOG shared"], env);
        expect(created.code, created.stderr).toBe(0);
        const listed = await fetch(`${url}/api/v1/catalogs`, {
          headers: { authorization: "Bearer tok" },
        });
        expect(JSON.stringify(await listed.json())).toContain('"shared"');
        const owner = await runSilt(["sql", "SHOW CATALOGS"], { ...env, SILT_TOKEN: "tok" });
        expect(owner.stdout).toContain("shared");
      } finally {
        await stop(child);
        await rm(dir, { recursive: true, force: true });
      }
    },
    SPAWNING_TEST_MS,
  );

  it(
    "runs the README's command-line examples as written",
    async () => {
      const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
      const section = readme.slice(readme.indexOf("## Command line"));
      const block = /```sh\n([\s\S]*?)```/.exec(section)![1];
      const dir = await mkdtemp(path.join(os.tmpdir(), "silt-cli-readme-"));
      try {
        const child = spawn("bash", ["-e"], {
          cwd: ROOT,
          env: {
            ...process.env,
            SILT_DATA_DIR: dir,
            PATH: `${path.join(ROOT, "node_modules", ".bin")}:${process.env.PATH}`,
          },
        });
        child.stdin.end(block);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => {
          stdout += d;
        });
        child.stderr.on("data", (d) => {
          stderr += d;
        });
        const code = await new Promise<number>((resolve) =>
          child.on("close", (c) => resolve(c ?? -1)),
        );
        expect(code, stderr).toBe(0);
        expect(stdout).toContain("| 2  | pear; ripe | 1   |");
        expect(stdout).toContain('{"item":"apple","qty":3}\n');
        expect(stdout).toContain("id,qty\r\n1,3\r\n2,2\r\n");
        expect(stdout).toContain("exit code 1");
        expect(stderr).toContain(
          "[TABLE_OR_VIEW_NOT_FOUND] The table or view `cli_demo`.`sales`.`nope` cannot be found.",
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    SPAWNING_TEST_MS,
  );

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
          `${first.child.pid} (another silt serve, or a silt command using it directly). Stop that process, or choose another ` +
          `directory with SILT_DATA_DIR. If no such process runs, delete ${lockFile}.`,
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

  it(
    "serves the API, keeps data across restarts, and reads tables from their files",
    async () => {
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
        expect((await call("POST", "/api/v1/catalogs/demo/schemas", { name: "s" })).status).toBe(
          201,
        );
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
        const nope = path.join(dataDir, "nope");
        const missing = await runSilt(["read", nope]);
        expect(missing.code).toBe(1);
        expect(errorLine(missing.stderr)).toBe(
          `silt: [DELTA_TABLE_NOT_FOUND] Delta table ${nope} doesn't exist: ${nope}/_delta_log/ holds no commits or checkpoints.`,
        );
        // A table's name is not a path: silt read says so, and how to read the table by name.
        const named = await runSilt(["read", "demo.s.t"]);
        expect(named.code).toBe(2);
        expect(errorLine(named.stderr)).toBe(
          "silt: [INVALID_ARGUMENT] 'demo.s.t' is not a path: silt read reads a table's files " +
            "(its directory or an s3:// URI). To read the table demo.s.t by its name, run: " +
            'silt sql "SELECT * FROM demo.s.t"',
        );
      } finally {
        await stop(server.child);
      }
    },
    SPAWNING_TEST_MS,
  );
});
