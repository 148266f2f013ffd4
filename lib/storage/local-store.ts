import { randomUUID } from "node:crypto";
import type { Dirent } from "node:fs";
import {
  copyFile,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  stat,
  unlink,
  writeFile,
} from "node:fs/promises";
import path from "node:path";
import { siltError } from "../errors.ts";
import { type ObjectInfo, ObjectNotFoundError, type ObjectStore } from "./object-store.ts";

// Temp files live in one directory at the root so that a rename or link into place never
// crosses a filesystem, and so that listing can skip them by name alone. No Delta key starts
// with a dot directory, and #path refuses this one outright.
const TMP_DIR = ".silt-tmp";

const MISSING = new Set(["ENOENT", "ENOTDIR", "EISDIR"]);

const errnoCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException)?.code;

const isMissing = (err: unknown): boolean => MISSING.has(errnoCode(err) ?? "");

const compareBytes = (a: string, b: string): number =>
  Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * An ObjectStore on a local directory, for `npm start` and tests. Every write becomes visible
 * atomically (rename or hard link of a complete temp file), so concurrent readers, writers and
 * processes sharing the directory see whole objects only. Writes are not fsynced: visibility is
 * atomic, durability across a machine crash is not promised.
 */
export class LocalObjectStore implements ObjectStore {
  readonly rootDir: string;

  constructor(rootDir: string) {
    this.rootDir = path.resolve(rootDir);
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(await readFile(this.#path(key)));
    } catch (err) {
      throw isMissing(err) ? new ObjectNotFoundError(key) : err;
    }
  }

  async getRange(key: string, start: number, end: number): Promise<Uint8Array> {
    return this.#read(key, (size) => [Math.min(Math.max(0, start), size), Math.min(end, size)]);
  }

  async getSuffix(key: string, length: number): Promise<Uint8Array> {
    return this.#read(key, (size) => [Math.max(0, size - Math.max(0, length)), size]);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const st = await stat(this.#path(key));
      return st.isFile() ? { key, size: st.size, lastModified: Math.floor(st.mtimeMs) } : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    const target = this.#path(key);
    const tmp = await this.#writeTemp(body);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
    const target = this.#path(key);
    return this.#linkIntoPlace(await this.#writeTemp(body), target);
  }

  async *list(prefix: string, options?: { startAfter?: string }): AsyncIterable<ObjectInfo> {
    const slash = prefix.lastIndexOf("/");
    const dirKey = slash < 0 ? "" : prefix.slice(0, slash + 1);
    yield* this.#walk(dirKey, prefix, options?.startAfter);
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.#path(key));
    } catch (err) {
      // EPERM is what some platforms answer for unlink() on a directory, i.e. not an object.
      if (!isMissing(err) && errnoCode(err) !== "EPERM") throw err;
    }
  }

  async deleteMany(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 64) {
      await Promise.all(keys.slice(i, i + 64).map((key) => this.delete(key)));
    }
  }

  async copyIfAbsent(srcKey: string, dstKey: string): Promise<boolean> {
    const src = this.#path(srcKey);
    const target = this.#path(dstKey);
    const tmp = await this.#tempPath();
    try {
      // A real copy rather than a hard link to src: dst gets its own mtime (vacuum reads it) and
      // stays independent of whatever later happens to src.
      await copyFile(src, tmp);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw isMissing(err) ? new ObjectNotFoundError(srcKey) : err;
    }
    return this.#linkIntoPlace(tmp, target);
  }

  /** Publishes a complete temp file under target unless target exists; always removes the temp. */
  async #linkIntoPlace(tmp: string, target: string): Promise<boolean> {
    try {
      await mkdir(path.dirname(target), { recursive: true });
      // link(2) fails with EEXIST instead of replacing, atomically, even across processes.
      await link(tmp, target);
      return true;
    } catch (err) {
      if (errnoCode(err) === "EEXIST") return false;
      throw err;
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }

  async #read(key: string, span: (size: number) => [number, number]): Promise<Uint8Array> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(this.#path(key), "r");
    } catch (err) {
      throw isMissing(err) ? new ObjectNotFoundError(key) : err;
    }
    try {
      // Size and bytes come from one open file, so a concurrent replace cannot mix two versions.
      const st = await handle.stat();
      if (!st.isFile()) throw new ObjectNotFoundError(key);
      const [from, to] = span(st.size);
      const out = new Uint8Array(Math.max(0, to - from));
      let done = 0;
      while (done < out.length) {
        const { bytesRead } = await handle.read(out, done, out.length - done, from + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === out.length ? out : out.subarray(0, done);
    } catch (err) {
      throw isMissing(err) ? new ObjectNotFoundError(key) : err;
    } finally {
      await handle.close();
    }
  }

  /**
   * Yields the objects under the directory for dirKey ("" or ending in "/") in byte order of
   * their full keys. Sorting each directory's entries by name, with "/" appended to
   * subdirectories, gives that order without collecting the whole tree: every key below a
   * subdirectory `d` starts with "d/", and no file in the same directory can be named `d`.
   */
  async *#walk(
    dirKey: string,
    prefix: string,
    startAfter: string | undefined,
  ): AsyncGenerator<ObjectInfo> {
    let entries: Dirent[];
    try {
      entries = await readdir(path.join(this.rootDir, dirKey), { withFileTypes: true });
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    const candidates: { name: string; dir: boolean; sortKey: Buffer }[] = [];
    for (const e of entries) {
      const dir = e.isDirectory();
      if (!dir && !e.isFile()) continue;
      if (dirKey === "" && e.name === TMP_DIR) continue;
      candidates.push({ name: e.name, dir, sortKey: Buffer.from(dir ? `${e.name}/` : e.name) });
    }
    candidates.sort((a, b) => Buffer.compare(a.sortKey, b.sortKey));

    for (const { name, dir } of candidates) {
      if (dir) {
        const group = `${dirKey}${name}/`;
        if (!group.startsWith(prefix) && !prefix.startsWith(group)) continue;
        // Every key in the group sorts before startAfter unless startAfter itself lies inside it.
        if (
          startAfter !== undefined &&
          compareBytes(group, startAfter) < 0 &&
          !startAfter.startsWith(group)
        )
          continue;
        yield* this.#walk(group, prefix, startAfter);
        continue;
      }
      const key = dirKey + name;
      if (!key.startsWith(prefix)) continue;
      if (startAfter !== undefined && compareBytes(key, startAfter) <= 0) continue;
      let size: number;
      let mtime: number;
      try {
        const st = await stat(path.join(this.rootDir, key));
        if (!st.isFile()) continue;
        size = st.size;
        mtime = st.mtimeMs;
      } catch (err) {
        if (isMissing(err)) continue; // deleted since readdir
        throw err;
      }
      yield { key, size, lastModified: Math.floor(mtime) };
    }
  }

  async #writeTemp(body: Uint8Array): Promise<string> {
    const tmp = await this.#tempPath();
    try {
      await writeFile(tmp, body);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
    return tmp;
  }

  async #tempPath(): Promise<string> {
    // Made on every write, not once, so that removing the directory under a live store is harmless.
    const dir = path.join(this.rootDir, TMP_DIR);
    await mkdir(dir, { recursive: true });
    return path.join(dir, randomUUID());
  }

  #path(key: string): string {
    const segments = key.split("/");
    const bad =
      key === "" ||
      key.includes("\0") ||
      segments.some((s) => s === "" || s === "." || s === "..") ||
      segments[0] === TMP_DIR;
    if (bad) throw siltError("INTERNAL_ERROR:LOCAL_OBJECT_KEY", { key: JSON.stringify(key) });
    return path.join(this.rootDir, ...segments);
  }
}
