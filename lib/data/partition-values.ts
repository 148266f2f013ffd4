/**
 * Partition values as Delta stores them (`add.partitionValues`: text, null for NULL), the Hive
 * `name=value/` directories Spark writes them under, and the URI encoding of `add.path`.
 *
 * Text forms follow what Spark writes, so files from either engine read alike: strings raw,
 * numbers as Java prints them ("1", "1.0", "1.0E10"), decimals with their scale, dates
 * `YYYY-MM-DD`, booleans `true`/`false`, timestamps `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC.
 * Parsed values use the canonical JSON encodings of `lib/data/json-encoding.ts`.
 */

import { type DataType, sparkTypeName } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { formatTimestampSpark, parseTimestamp } from "../values/datetime-text.ts";
import { javaDoubleString, javaFloatString } from "../values/float-text.ts";
import { canonicalValue } from "./json-input.ts";

export const HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__";

const partitionTypeError = (type: DataType) =>
  siltError("INVALID_PARTITION_COLUMN_DATA_TYPE", { type: sparkTypeName(type).toUpperCase() });

/**
 * The text Delta stores for a partition value given in any form the JSON API accepts; null for
 * NULL and for the empty string (which Spark also stores as NULL).
 */
export function serializePartitionValue(
  value: unknown,
  type: DataType,
  column = "value",
): string | null {
  if (value === null || value === undefined) return null;
  if (typeof type === "object" && type.type !== "decimal") throw partitionTypeError(type);
  const v = canonicalValue(value, type, column);
  if (v === null) return null;
  switch (type) {
    case "float":
    case "double": {
      if (typeof v === "string") return v;
      const x = v as number;
      return type === "float" ? javaFloatString(x) : javaDoubleString(x);
    }
    case "timestamp":
    case "timestamp_ntz":
      return formatTimestampSpark(parseTimestamp(v as string, type === "timestamp_ntz")!);
    case "binary":
      return Buffer.from(v as string, "base64").toString("utf8") || null;
    case "string":
      return v === "" ? null : (v as string);
    default:
      return String(v);
  }
}

/**
 * The canonical JSON value of a stored partition value. Accepts Spark's and the protocol's
 * timestamp forms ("2021-09-08 11:11:11", "2021-09-08T11:11:11.000Z"); null and "" are NULL.
 */
export function parsePartitionValue(
  text: string | null | undefined,
  type: DataType,
  column = "value",
): unknown {
  if (text === null || text === undefined || text === "") return null;
  if (typeof type === "object" && type.type !== "decimal") throw partitionTypeError(type);
  if (type === "binary") return Buffer.from(text, "utf8").toString("base64");
  return canonicalValue(text, type, column);
}

// Spark's ExternalCatalogUtils.charToEscape: ASCII controls and "#%'*/:=?\^{[]" plus DEL.
const ESCAPED = new Uint8Array(128);
for (let c = 0; c < 0x20; c++) ESCAPED[c] = 1;
for (const ch of "\"#%'*/:=?\\\x7F{[]^") ESCAPED[ch.charCodeAt(0)] = 1;

const hex2 = (c: number) => c.toString(16).toUpperCase().padStart(2, "0");

/** Hive path escaping of a partition column name or value, as Spark writes directory names. */
export function escapePathName(s: string): string {
  let out = "";
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 128 && ESCAPED[c] === 1) {
      out += `${s.slice(start, i)}%${hex2(c)}`;
      start = i + 1;
    }
  }
  return start === 0 ? s : out + s.slice(start);
}

/** Reverses `escapePathName`: every "%XX" becomes its character; a stray "%" stays. */
export function unescapePathName(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) =>
    String.fromCharCode(Number.parseInt(h, 16)),
  );
}

/**
 * The `name=value/` directory segments for a file's partition values (serialized text, null for
 * NULL), each ending in "/"; "" when unpartitioned.
 */
export function partitionPath(entries: readonly (readonly [string, string | null])[]): string {
  let out = "";
  for (const [name, value] of entries) {
    const v = value === null || value === "" ? HIVE_DEFAULT_PARTITION : escapePathName(value);
    out += `${escapePathName(name)}=${v}/`;
  }
  return out;
}

// java.net.URI keeps these ASCII characters raw in a path; everything else ASCII is %XX.
const URI_PATH_SAFE = new Uint8Array(128);
for (const ch of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'();:@&=+$,/") {
  URI_PATH_SAFE[ch.charCodeAt(0)] = 1;
}
const URI_QUOTED_NON_ASCII = /^[\p{Zs}\p{Zl}\p{Zp}\u0080-\u009F]$/u;
const utf8 = new TextEncoder();

/**
 * URI-encodes a relative file path for `add.path` the way Spark does (Hadoop Path.toUri): "%"
 * becomes "%25", a space "%20", "#" "%23"; letters outside ASCII stay as they are. A ":" before
 * the first "/" is encoded too, so the path can never read as a URI scheme.
 */
export function encodeAddPath(relativePath: string): string {
  let out = "";
  let firstSegment = true;
  for (const ch of relativePath) {
    const c = ch.codePointAt(0) as number;
    if (c === 0x2f) firstSegment = false;
    if (c < 128) {
      out += URI_PATH_SAFE[c] === 1 && !(c === 0x3a && firstSegment) ? ch : `%${hex2(c)}`;
    } else if (URI_QUOTED_NON_ASCII.test(ch) || (c >= 0xd800 && c <= 0xdfff)) {
      for (const b of utf8.encode(ch)) out += `%${hex2(b)}`;
    } else {
      out += ch;
    }
  }
  return out;
}

/**
 * Decodes `add.path` (relative or absolute URI) into the object key suffix: every run of %XX
 * escapes is read as UTF-8; a "%" not followed by two hex digits is kept literally.
 */
export function decodeAddPath(path: string): string {
  if (!path.includes("%")) return path;
  return path.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) =>
    Buffer.from(run.replaceAll("%", ""), "hex").toString("utf8"),
  );
}
