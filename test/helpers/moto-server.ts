/**
 * moto (github.com/getmoto/moto) in server mode: an AWS emulator whose CloudFormation can run
 * `cdk bootstrap` and `cdk deploy` with no Docker (shared/reference/aws-emulators.md). moto is a
 * Python package, so the helper keeps a virtualenv at .moto/venv holding exactly the versions in
 * moto-requirements.txt, and builds it (python3 -m venv, pip install) when it is missing or the
 * pins changed. That needs python3 with its venv module and, the first time, PyPI.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { installStep } from "./install-step.ts";

const run = promisify(execFile);

const ROOT = join(import.meta.dirname, "..", "..");
const VENV = join(ROOT, ".moto", "venv");
const REQUIREMENTS = join(import.meta.dirname, "moto-requirements.txt");
/** Written last by a successful install: the hash of the requirements it installed. */
const STAMP = join(VENV, "silt-requirements.sha256");
const PYTHON = join(VENV, "bin", "python");

/** moto's fixed account; every ARN the emulator hands out carries it. */
export const MOTO_ACCOUNT = "123456789012";

export interface MotoServer {
  /**
   * `http://localhost:<port>`: moto's CloudFormation fetches a TemplateURL from its own S3 by
   * path only when the URL names "localhost" (otherwise it takes the host's first label as the
   * bucket), and the CDK CLI builds that URL from this endpoint.
   */
  endpoint: string;
  /** The last lines moto logged, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/** Makes sure .moto/venv holds the pinned moto; returns how long that took (0 when it did). */
export async function ensureMotoInstalled(): Promise<number> {
  const wanted = createHash("sha256").update(readFileSync(REQUIREMENTS)).digest("hex");
  if (existsSync(STAMP) && readFileSync(STAMP, "utf8") === wanted) return 0;
  const started = performance.now();
  rmSync(VENV, { recursive: true, force: true });
  await installStep("python3", ["-m", "venv", VENV], venvHint);
  await installStep(
    PYTHON,
    ["-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", REQUIREMENTS],
    "pip could not install moto from PyPI (is the network up?)",
  );
  writeFileSync(STAMP, wanted);
  return performance.now() - started;
}

const venvHint =
  "The deploy test needs python3 (3.9 or newer) with its venv module to install the moto AWS " +
  "emulator (on Debian/Ubuntu: apt-get install python3 python3-venv)";

/** The resource types moto's CloudFormation can create; it skips every other type. */
export async function motoCloudFormationTypes(): Promise<Set<string>> {
  const { stdout } = await run(PYTHON, [
    "-W",
    "ignore",
    "-c",
    "import json\nfrom moto.cloudformation.parsing import get_model_map\n" +
      "print(json.dumps(sorted(get_model_map())))",
  ]);
  return new Set(JSON.parse(stdout) as string[]);
}

// Runs moto's server and exits when stdin closes: the pipe closes when the test process dies,
// however it dies, so no emulator outlives a killed test run.
const SERVER_SCRIPT = `
import os, sys, threading
from moto.server import main
def exit_when_parent_is_gone():
    sys.stdin.buffer.read()
    os._exit(0)
threading.Thread(target=exit_when_parent_is_gone, daemon=True).start()
main(sys.argv[1:])
`;

/** Starts moto on a free loopback port (chosen by the OS) and waits until it serves. */
export async function startMotoServer(): Promise<MotoServer> {
  const child = spawn(PYTHON, ["-c", SERVER_SCRIPT, "-H", "127.0.0.1", "-p", "0"], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const remember = (chunk: Buffer) => {
    lines.push(...chunk.toString().split("\n").filter(Boolean));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout.on("data", remember);
  child.stderr.on("data", remember);
  const log = () => lines.join("\n");
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  let port: number;
  try {
    port = await listeningPort(child, lines);
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`moto server did not start: ${(e as Error).message}\n${log()}`);
  }
  return {
    endpoint: `http://localhost:${port}`,
    log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Werkzeug announces the bound port on stderr: " * Running on http://127.0.0.1:<port>". */
function listeningPort(child: ChildProcess, lines: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no listening line within 60 s")), 60_000);
    const check = () => {
      for (const line of lines) {
        const m = /Running on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
        if (m !== null) {
          clearTimeout(timer);
          child.stderr?.off("data", check);
          resolve(Number(m[1]));
          return;
        }
      }
    };
    child.stderr?.on("data", check);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited (${signal ?? code}) before listening`));
    });
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
