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
 *
 * A server that is listening adds its URL as the file's second line (`recordUrl`), so that
 * `silt sql` can find the server that holds a data directory (`dataDirHolder`). The line is
 * written to a sibling file renamed over the lock, so a reader never sees the lock half written
 * (step 2 would take an empty file for a stale lock).
 */
import {
  closeSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { siltError } from "../errors.ts";

export interface DataDirLock {
  /** Says where the server holding the directory listens. */
  recordUrl(url: string): void;
  release(): void;
}

/** The live process holding a data directory, and its URL once it serves one. */
export interface DataDirHolder {
  pid: number;
  url?: string;
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
      return { recordUrl: (url) => recordUrl(file, url), release: () => release(file) };
    }
    const pid = lockHolder(file)?.pid;
    if (pid !== undefined && isAlive(pid, file)) {
      throw siltError("SILT_DATA_DIR_IN_USE", { dataDir, pid, lockFile: file });
    }
    removeIfPresent(file);
  }
  const pid = lockHolder(file)?.pid;
  throw siltError("SILT_DATA_DIR_IN_USE", { dataDir, pid: pid ?? "unknown", lockFile: file });
}

/** Who holds `dataDir` now: undefined when no lock, or a stale one, is there. */
export function dataDirHolder(dataDir: string): DataDirHolder | undefined {
  const file = path.join(dataDir, LOCK_FILE);
  const holder = lockHolder(file);
  return holder !== undefined && isAlive(holder.pid, file) ? holder : undefined;
}

function createExclusive(file: string): number | undefined {
  try {
    return openSync(file, "wx");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw err;
  }
}

/** What a lock file holds; undefined when it is gone or holds no pid (a torn write). */
function lockHolder(file: string): DataDirHolder | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const [first, url] = text.split("\n");
  const pid = Number(first.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return url?.trim() ? { pid, url: url.trim() } : { pid };
}

function recordUrl(file: string, url: string): void {
  if (!held.has(file)) return;
  const next = `${file}.${process.pid}.tmp`;
  writeFileSync(next, `${process.pid}\n${url}\n`);
  renameSync(next, file);
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
  if (lockHolder(file)?.pid === process.pid) removeIfPresent(file);
}

function removeIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
