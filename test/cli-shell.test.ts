/**
 * The `silt sql` shell as a terminal program: `node bin/silt.mjs sql` in a pseudo-terminal, driven
 * by keystrokes, against a data directory it opens itself and against a running `silt serve`.
 */
import { type ChildProcess, spawn as spawnChild } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type IPty, spawn } from "@lydell/node-pty";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const SILT = path.join(ROOT, "bin", "silt.mjs");
/** Generous: the first output waits for the TypeScript to compile on a loaded machine. */
const WAIT_MS = 60_000;

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences.
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r/g, "");

interface Terminal {
  /** Waits for `pattern` in the output since the last match, and returns that output. */
  until(pattern: RegExp | string): Promise<string>;
  write(keys: string): void;
  exited: Promise<number>;
  pty: IPty;
}

function openShell(dataDir: string, args: string[] = []): Terminal {
  const pty = spawn(process.execPath, [SILT, "sql", ...args], {
    cwd: ROOT,
    cols: 200,
    rows: 50,
    env: { ...process.env, SILT_DATA_DIR: dataDir, NODE_NO_WARNINGS: "1" } as Record<
      string,
      string
    >,
  });
  let seen = "";
  let waiter: (() => void) | undefined;
  pty.onData((d) => {
    seen += d;
    waiter?.();
  });
  const exited = new Promise<number>((resolve) => pty.onExit((e) => resolve(e.exitCode)));
  return {
    pty,
    exited,
    write: (keys) => pty.write(keys),
    until: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = undefined;
          reject(new Error(`no ${pattern} in:\n${stripAnsi(seen)}`));
        }, WAIT_MS);
        const check = () => {
          const text = stripAnsi(seen);
          const m = typeof pattern === "string" ? text.indexOf(pattern) : text.search(pattern);
          if (m < 0) return;
          const matched =
            typeof pattern === "string" ? pattern.length : pattern.exec(text)![0].length;
          seen = stripAnsi(seen).slice(m + matched);
          clearTimeout(timer);
          waiter = undefined;
          resolve(text.slice(0, m + matched));
        };
        waiter = check;
        check();
      }),
  };
}

async function startServe(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnChild(process.execPath, [SILT, "serve"], {
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

describe("silt sql shell", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "silt-shell-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("runs multi-line statements, keeps USE defaults, completes names, and keeps history", async () => {
    const t = openShell(dataDir);
    await t.until("silt> ");
    t.write("CREATE CATALOG shop;\r");
    await t.until("silt> ");
    t.write("CREATE SCHEMA shop.s;\r");
    await t.until("silt> ");
    t.write("CREATE TABLE shop.s.items (sku STRING, qty INT) USING DELTA;\r");
    await t.until("created true");
    // One statement over three lines; the ';' inside the string does not end it.
    t.write("INSERT INTO shop.s.items\r");
    await t.until("...> ");
    t.write("VALUES ('apple', 10),\r");
    await t.until("...> ");
    t.write("('b;c', 4);\r");
    expect(await t.until("silt> ")).toContain("version 1, numAffectedRows 2");

    // A USE naming a schema that does not exist changes nothing.
    t.write("USE shop.nope;\r");
    expect(await t.until("silt> ")).toContain("[SCHEMA_NOT_FOUND]");
    t.write("USE shop.s;\r");
    expect(await t.until("silt shop.s> ")).toContain("Using shop.s");
    t.write("SELECT qty FROM items WHERE sku = 'b;c';\r");
    const answer = await t.until("silt shop.s> ");
    expect(answer).toMatch(/\| qty \|[\s\S]*\| 4 {3}\|[\s\S]*1 row/);

    // Tab completes the table name of the current schema, then a column of the table named.
    t.write("SELECT * FROM it\t");
    await t.until("FROM items");
    t.write(" WHERE q\t");
    await t.until("WHERE qty");
    t.write(" > 5;\r");
    expect(await t.until("silt shop.s> ")).toMatch(/\| apple \| 10 +\|[\s\S]*1 row/);
    t.write("\\dt\r");
    expect(await t.until("silt shop.s> ")).toMatch(/\| s +\| items +\| false +\|/);
    t.write("\\q\r");
    expect(await t.exited).toBe(0);

    const history = readFileSync(path.join(dataDir, "sql_history"), "utf8");
    expect(history).toContain("USE shop.s;");
    expect(history.trim().split("\n").slice(-2)).toEqual(["\\dt", "\\q"]);

    // A second session starts from the first one's history (up arrow), with its own defaults.
    const again = openShell(dataDir, ["--catalog", "shop", "--schema", "s"]);
    await again.until("silt shop.s> ");
    again.write("\x1b[A");
    await again.until("\\q");
    again.write("\x1b[A");
    await again.until("\\dt");
    again.write("\x1b[A");
    await again.until("qty > 5;");
    again.write("\r");
    expect(await again.until("silt shop.s> ")).toMatch(/\| apple \| 10 +\|/);
    again.write("\x04"); // Ctrl-D leaves
    expect(await again.exited).toBe(0);
  }, 240_000);

  it("cancels a running statement with Ctrl-C and gives the prompt back", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "silt-shell-cancel-"));
    const server = await startServe(dir);
    try {
      const t = openShell(dir);
      // No --url: the server holding the data directory is found through its lock file.
      expect(await t.until("silt> ")).toContain(server.url);
      t.write("CREATE CATALOG c;\r");
      await t.until("silt> ");
      // A server that cannot answer (stopped) keeps the statement running until Ctrl-C.
      server.child.kill("SIGSTOP");
      t.write("SHOW CATALOGS;\r");
      await t.until("running…");
      t.write("\x03");
      expect(await t.until("silt> ")).toContain("Cancelled.");
      server.child.kill("SIGCONT");
      t.write("SHOW CATALOGS;\r");
      expect(await t.until("silt> ")).toMatch(/\| c +\|/);
      // Ctrl-C in an unfinished statement drops it, and the prompt starts afresh.
      t.write("SELECT\r");
      await t.until("...> ");
      t.write("1 AS dropped");
      t.write("\x03");
      await t.until("silt> ");
      t.write("SELECT 2 AS kept;\r");
      const fresh = await t.until("silt> ");
      expect(fresh).toContain("| kept |");
      expect(fresh).not.toContain("dropped |");
      // Ctrl-C on an empty prompt leaves.
      t.write("\x03");
      expect(await t.exited).toBe(0);
    } finally {
      server.child.kill("SIGCONT");
      server.child.kill("SIGTERM");
      await new Promise((resolve) => server.child.once("exit", resolve));
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
