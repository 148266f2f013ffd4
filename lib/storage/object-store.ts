/**
 * The only way the engine touches bytes at rest. Keys are relative to the store's root (a bucket
 * plus optional prefix, or a directory), use "/" separators and never start with "/".
 */
export interface ObjectInfo {
  key: string;
  size: number;
  /** Last-modified time in epoch milliseconds. */
  lastModified: number;
}

export interface ObjectStore {
  /** Whole object. Throws ObjectNotFoundError when absent. */
  get(key: string): Promise<Uint8Array>;
  /** Bytes [start, end) of the object; `end` is clamped to the object size. */
  getRange(key: string, start: number, end: number): Promise<Uint8Array>;
  /** The last `length` bytes (or the whole object when it is shorter). */
  getSuffix(key: string, length: number): Promise<Uint8Array>;
  /** Metadata, or undefined when absent. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Writes the object, replacing any existing one. */
  put(key: string, body: Uint8Array): Promise<void>;
  /** Writes the object only if no object has that key; false when one already existed. Atomic. */
  putIfAbsent(key: string, body: Uint8Array): Promise<boolean>;
  /**
   * Every object whose key starts with `prefix`, in ascending key (byte) order, across all pages.
   * `startAfter` skips keys <= it.
   */
  list(prefix: string, options?: { startAfter?: string }): AsyncIterable<ObjectInfo>;
  /** Removes the object; absent objects are not an error. */
  delete(key: string): Promise<void>;
  /** Removes many objects; absent objects are not an error. */
  deleteMany(keys: string[]): Promise<void>;
  /** Copies src to dst only if dst does not exist; false when dst already existed. */
  copyIfAbsent(srcKey: string, dstKey: string): Promise<boolean>;
}

export class ObjectNotFoundError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`Object not found: ${key}`);
    this.name = "ObjectNotFoundError";
    this.key = key;
  }
}

/** Drains an async listing into an array (use only where the listing is known to be small). */
export async function listAll(
  store: ObjectStore,
  prefix: string,
  options?: { startAfter?: string },
): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const info of store.list(prefix, options)) out.push(info);
  return out;
}
