/**
 * The canonical JSON encodings of DESIGN §6, shared by both directions of JSON rows <-> Arrow:
 *
 * | Delta type          | canonical JSON value                                          |
 * |---------------------|---------------------------------------------------------------|
 * | byte/short/integer  | number                                                        |
 * | long                | number; string when beyond ±(2^53-1)                          |
 * | float/double        | number (float: shortest decimal that round-trips float32);    |
 * |                     | "NaN", "Infinity", "-Infinity" as strings                     |
 * | decimal(p,s)        | string with exactly s fraction digits ("9.50")                |
 * | boolean             | true / false                                                  |
 * | string              | string                                                        |
 * | binary              | base64 string                                                 |
 * | date                | "YYYY-MM-DD"                                                  |
 * | timestamp           | "YYYY-MM-DDTHH:MM:SS.ffffffZ" (UTC, always 6 fraction digits) |
 * | timestamp_ntz       | "YYYY-MM-DDTHH:MM:SS.ffffff"                                  |
 * | struct              | object keyed by field name                                    |
 * | array               | array                                                         |
 * | map                 | object; keys are the canonical keys as strings (non-string    |
 * |                     | keys of complex type as their JSON text)                      |
 * | NULL                | null                                                          |
 */

export const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

export const longJson = (v: number | bigint): number | string =>
  typeof v === "number" ? v : Number.isSafeInteger(Number(v)) ? Number(v) : String(v);

/** Sets a key on a plain object even when the key is "__proto__". */
export function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    obj[key] = value;
  }
}

export const floatJson = (x: number): number | string =>
  Number.isFinite(x) ? x : Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";

export const mapKeyText = (canonicalKey: unknown): string =>
  typeof canonicalKey === "string"
    ? canonicalKey
    : typeof canonicalKey === "object"
      ? JSON.stringify(canonicalKey)
      : String(canonicalKey);
