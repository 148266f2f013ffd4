/**
 * Page tokens: where the next page of an answer starts, handed to the caller as opaque text and
 * read back on its next request.
 *
 * A token pins the table version the first page read, so every page reads the same snapshot
 * however the table moves meanwhile; it names the request it continues (a fingerprint of the
 * parameters that shape the answer), so it cannot continue some other one. It carries a
 * checksum against truncation and editing. It needs no secret because it grants nothing: each
 * page is authorized like any request, and a forged position could only pick rows of a version
 * the caller may read anyway. Every field is validated against the table when used.
 */
import { createHash } from "node:crypto";
import { siltError } from "../errors.ts";

export interface PagePosition {
  tableId: string;
  version: number;
  /** The path of the data file the page starts in, in path order. */
  file: string;
  /** Live rows of that file already answered. */
  row: number;
  /** Rows answered by the pages before, for a request's overall `limit`. */
  served: number;
}

/** Where a query's next page starts: the versions of the tables it read, and rows answered. */
export interface QueryPosition {
  /** Per table the query names (as written): its id and the version the first page read. */
  pins: [name: string, tableId: string, version: number][];
  /** The first page's instant, so current_timestamp() answers one value on every page. */
  now: number;
  offset: number;
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

/** A fingerprint of the request parameters that shape an answer (JSON of them, hashed). */
export function requestFingerprint(params: unknown): string {
  return digest(JSON.stringify(params)).slice(0, 16);
}

export function encodePageToken(position: PagePosition | QueryPosition, request: string): string {
  const text = Buffer.from(JSON.stringify({ ...position, request })).toString("base64url");
  return `${text}.${digest(text).slice(0, 16)}`;
}

const count = (v: unknown): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The position a /rows token names, refused unless it is intact and continues `request`. */
export function decodeScanToken(token: string, request: string): PagePosition {
  const body = decode(token, request);
  const { tableId, version, file, row, served } = body;
  if (typeof tableId !== "string" || typeof file !== "string") throw malformed();
  if (!count(version) || !count(row) || !count(served)) throw malformed();
  return { tableId, version, file, row, served };
}

/** The position a query's token names, refused unless it is intact and continues `request`. */
export function decodeQueryToken(token: string, request: string): QueryPosition {
  const { pins, now, offset } = decode(token, request);
  const pin = (p: unknown) =>
    Array.isArray(p) &&
    p.length === 3 &&
    typeof p[0] === "string" &&
    typeof p[1] === "string" &&
    count(p[2]);
  if (!Array.isArray(pins) || !pins.every(pin) || !count(now) || !count(offset)) throw malformed();
  return { pins: pins as QueryPosition["pins"], now, offset };
}

const malformed = () => siltError("INVALID_PAGE_TOKEN:MALFORMED");

function decode(token: string, request: string): Record<string, unknown> {
  const [text, sum, ...rest] = token.split(".");
  if (text === undefined || rest.length > 0 || sum !== digest(text).slice(0, 16)) {
    throw malformed();
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw malformed();
  }
  if (body === null || typeof body !== "object") throw malformed();
  const fields = body as Record<string, unknown>;
  if (fields.request !== request) throw siltError("INVALID_PAGE_TOKEN:OTHER_REQUEST");
  return fields;
}
