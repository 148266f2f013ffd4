/**
 * The `silt` command as a user runs it: a child process of bin/silt.mjs from the repository root,
 * for the suites that test the CLI and the local server as programs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const SILT = path.join(ROOT, "bin", "silt.mjs");

export interface SiltRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runSilt(
  args: string[],
  env: Record<string, string> = {},
  stdin = "",
): Promise<SiltRun> {
  const child = spawn(process.execPath, [SILT, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  child.stdin.end(stdin);
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

/** `silt serve` on a free port; resolves with the URL it prints once it is ready. */
export async function startServe(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [SILT, "serve"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", SILT_DATA_DIR: dataDir, ...env },
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

export async function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  child.kill(signal);
  await exited;
}
