/**
 * The `checksum` field of `_delta_log/_last_checkpoint`: MD5 (hex) of a canonical form of the JSON
 * (PROTOCOL.md "JSON checksum"). Every leaf becomes `path=value`, where the path joins quoted,
 * URL-encoded object keys and bare array indexes with `+`, and string values are quoted and
 * URL-encoded. The pairs are sorted, joined with `,`, and a top-level "checksum" is left out.
 *
 * The spec says to sort by path; Spark (which writes these files) sorts the whole `path=value`
 * strings. The two orders differ only when one path is a prefix of another (`+1` vs `+10` in an
 * array of 11+ scalars); the checksum has to match what Spark wrote, so Spark's order is used.
 */

import { createHash } from "node:crypto";
import { javaDoubleString } from "../values/float-text.ts";

const UNRESERVED = new Uint8Array(256);
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~") {
  UNRESERVED[c.charCodeAt(0)] = 1;
}
const HEX = "0123456789ABCDEF";

/** Quoted, with every UTF-8 byte outside [A-Za-z0-9-._~] as uppercase %XX. */
function encodeString(s: string): string {
  let out = '"';
  for (const b of Buffer.from(s, "utf8")) {
    out += UNRESERVED[b] ? String.fromCharCode(b) : `%${HEX[b >>> 4]}${HEX[b & 15]}`;
  }
  return `${out}"`;
}

/**
 * Numbers as Jackson prints the parsed node: integers in plain decimal, other doubles the way
 * Java's Double.toString does (decimal in [1e-3, 1e7), otherwise `d.dddE±n`).
 */
function encodeNumber(n: number): string {
  if (Number.isInteger(n)) return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString();
  return javaDoubleString(n);
}

function collect(value: unknown, path: string, out: string[]): void {
  if (value === null) {
    out.push(`${path}=null`);
  } else if (typeof value === "string") {
    out.push(`${path}=${encodeString(value)}`);
  } else if (typeof value === "number") {
    out.push(`${path}=${encodeNumber(value)}`);
  } else if (typeof value === "bigint") {
    out.push(`${path}=${value.toString()}`);
  } else if (typeof value === "boolean") {
    out.push(`${path}=${value}`);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      collect(value[i], path === "" ? String(i) : `${path}+${i}`, out);
    }
  } else if (typeof value === "object") {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      // JSON.stringify drops undefined members, so they are not part of the document.
      if (v === undefined) continue;
      const seg = encodeString(k);
      collect(v, path === "" ? seg : `${path}+${seg}`, out);
    }
  } else {
    throw new TypeError(`Cannot canonicalize a ${typeof value} value at ${path || "<root>"}`);
  }
}

/** Canonical form of a parsed `_last_checkpoint` document (without the MD5 step). */
export function lastCheckpointCanonicalForm(obj: unknown): string {
  const entries: string[] = [];
  collect(obj, "", entries);
  const dropped = '"checksum"=';
  // Every entry is ASCII after encoding, so code-unit order equals byte order.
  return entries
    .filter((e) => !e.startsWith(dropped))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .join(",");
}

/** MD5 hex of the canonical form: the value Delta stores as `_last_checkpoint.checksum`. */
export function lastCheckpointChecksum(obj: unknown): string {
  return createHash("md5").update(lastCheckpointCanonicalForm(obj), "utf8").digest("hex");
}
