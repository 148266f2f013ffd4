/**
 * One step of installing a test's Python tools (venv, pip): run it from the repository root, and
 * on failure say what the test needs and what the command printed.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");

export async function installStep(file: string, args: string[], hint: string): Promise<void> {
  try {
    await run(file, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    const detail = err.code === "ENOENT" ? `${file} not found` : (err.stderr ?? err.message);
    throw new Error(`${hint}.\n${file} ${args.join(" ")} failed: ${detail.trim()}`);
  }
}
