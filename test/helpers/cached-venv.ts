/**
 * A Python virtualenv holding exactly one requirements file, kept outside the clone because CI
 * starts from a fresh clone every time and a venv takes minutes to fetch:
 * `<cache>/<hash of the requirements>/venv`, so a new pin set gets a new directory. An install is
 * guarded by a lock directory, since several processes (vitest's workers, bench cases) may need
 * the same venv at once. Used by the UC client tests (uc-clients.ts) and the bench's delta-rs peer.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installStep } from "./install-step.ts";

export interface VenvSpec {
  /** The pins; their hash names the directory. */
  requirements: string;
  /** The directory that holds one `<hash>/` per pin set. */
  cacheDir: string;
  /** Python statements run after pip, to prove the packages import (e.g. "import deltalake"). */
  importCheck: string;
  /** What is being installed and what it needs, for error messages. */
  what: string;
  venvHint: string;
}

export interface CachedVenv {
  /** `<cacheDir>/<hash>/`: the venv, the install lock and whatever else the user keeps there. */
  home: string;
  /** `<home>/venv`. */
  venv: string;
  python: string;
  /**
   * Makes sure the venv holds the pins, installing them under the lock when it does not;
   * resolves to how long this process spent (waiting included; 0 when the venv was ready).
   */
  ensure(): Promise<number>;
}

const INSTALL_WAIT_MS = 30 * 60_000;

export function cachedVenv(spec: VenvSpec): CachedVenv {
  const hash = createHash("sha256")
    .update(readFileSync(spec.requirements))
    .digest("hex")
    .slice(0, 16);
  const home = join(spec.cacheDir, hash);
  const venv = join(home, "venv");
  const python = join(venv, "bin", "python");
  /** Written last by a successful install. */
  const stamp = join(venv, "silt-installed");
  let installed: Promise<number> | undefined;

  async function install(): Promise<number> {
    if (existsSync(stamp)) return 0;
    const started = performance.now();
    mkdirSync(home, { recursive: true });
    await withLock(join(home, "install.lock"), INSTALL_WAIT_MS, async () => {
      if (existsSync(stamp)) return; // another process installed it while we waited
      rmSync(venv, { recursive: true, force: true });
      try {
        await installStep("python3", ["-m", "venv", venv], spec.venvHint);
        await installStep(
          python,
          ["-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", spec.requirements],
          `pip could not install ${spec.what} from PyPI (is the network up?)`,
        );
        await installStep(
          python,
          ["-c", spec.importCheck],
          `${spec.what} installed but do not import`,
        );
      } catch (e) {
        rmSync(venv, { recursive: true, force: true });
        throw e;
      }
      writeFileSync(stamp, `${new Date().toISOString()}\n`);
    });
    return performance.now() - started;
  }

  return {
    home,
    venv,
    python,
    ensure() {
      installed ??= install().catch((e) => {
        installed = undefined;
        throw e;
      });
      return installed;
    },
  };
}

/**
 * An exclusive lock across processes: mkdir is atomic. The holder's pid is in the directory, so
 * a lock left by a killed process is taken over once that process is gone.
 */
export async function withLock(
  lock: string,
  waitMs: number,
  fn: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "pid"), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    if (lockHolderGone(lock)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${lock} (another install)`);
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  try {
    await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function lockHolderGone(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, "pid"), "utf8"));
  } catch {
    return false; // just created, pid not written yet
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}
