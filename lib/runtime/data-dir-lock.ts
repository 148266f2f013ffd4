/**
 * One `silt serve` per data directory: the embedded dynalite's LevelDB files take one process at a
 * time, and a second one would die deep inside LevelDB with a stack trace.
 *
 * 1. Create `<dataDir>/silt.pid` exclusively, holding our pid.
 * 2. If it exists, the pid in it decides: a live process (or one we may not signal) holds the
 *    directory, and we refuse, naming it; a dead one (a server killed with -9, a crash) left a
 *    stale lock, which we remove and go back to step 1. Our own pid counts as stale unless this
 *    process holds the lock, so a container whose server is pid 1 on every start can restart.
 * 3. Release removes the file only while it still holds our pid.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { siltError } from "../errors.ts";

export interface DataDirLock {
  release(): void;
}

const LOCK_FILE = "silt.pid";

/** Lock files this process holds (step 2's own-pid case). */
const held = new Set<string>();

export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  // The second attempt follows removing a stale lock; losing that one too means another server
  // took the directory in between.
  for (let attempt = 0; attempt < 2; attempt++) {
    const fd = createExclusive(file);
    if (fd !== undefined) {
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      held.add(file);
      return { release: () => release(file) };
    }
    const pid = lockHolder(file);
    if (pid !== undefined && isAlive(pid, file)) {
      throw siltError("SILT_DATA_DIR_IN_USE", { dataDir, pid, lockFile: file });
    }
    removeIfPresent(file);
  }
  const pid = lockHolder(file);
  throw siltError("SILT_DATA_DIR_IN_USE", { dataDir, pid: pid ?? "unknown", lockFile: file });
}

function createExclusive(file: string): number | undefined {
  try {
    return openSync(file, "wx");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw err;
  }
}

/** The pid a lock file holds; undefined when it is gone or holds no pid (a torn write). */
function lockHolder(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

function isAlive(pid: number, file: string): boolean {
  if (pid === process.pid) return held.has(file);
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function release(file: string): void {
  if (!held.delete(file)) return;
  if (lockHolder(file) === process.pid) removeIfPresent(file);
}

function removeIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
