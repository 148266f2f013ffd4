/**
 * An object store that runs a hook before each write (and, optionally, each whole-object read)
 * and then passes through: tests use it to let a rival statement commit at an exact point of
 * another one (after it read, before it commits), or to advance an injected clock as files move.
 */
import type { ObjectStore } from "../../lib/storage/object-store.ts";

export function hookedStore(
  store: ObjectStore,
  beforeWrite: (key: string) => Promise<void>,
  beforeRead: (key: string) => void = () => {},
): ObjectStore {
  return {
    get: (k) => {
      beforeRead(k);
      return store.get(k);
    },
    getRange: (k, a, b) => store.getRange(k, a, b),
    getSuffix: (k, n) => store.getSuffix(k, n),
    head: (k) => store.head(k),
    list: (p, o) => store.list(p, o),
    delete: (k) => store.delete(k),
    deleteMany: (ks) => store.deleteMany(ks),
    copyIfAbsent: (a, b) => store.copyIfAbsent(a, b),
    put: async (key, body) => {
      await beforeWrite(key);
      return store.put(key, body);
    },
    putIfAbsent: async (key, body) => {
      await beforeWrite(key);
      return store.putIfAbsent(key, body);
    },
  };
}

/** A hook that runs `action` once, before the first write whose key `matches`. */
export function once(
  matches: (key: string) => boolean,
  action: () => Promise<unknown>,
): (key: string) => Promise<void> {
  let fired = false;
  return async (key) => {
    if (fired || !matches(key)) return;
    fired = true;
    await action();
  };
}
