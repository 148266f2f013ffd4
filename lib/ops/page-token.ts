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
  /** The path of the data file the page starts in, in path order; absent past the last one. */
  file: string;
  /** Live rows of that file already answered. */
  row: number;
  /** Rows answered by the pages before, for a request's overall `limit`. */
  served: number;
}

interface TokenBody extends PagePosition {
  request: string;
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

/** A fingerprint of the request parameters that shape an answer (JSON of them, hashed). */
export function requestFingerprint(params: unknown): string {
  return digest(JSON.stringify(params)).slice(0, 16);
}

export function encodePageToken(position: PagePosition, request: string): string {
  const body: TokenBody = { ...position, request };
  const text = Buffer.from(JSON.stringify(body)).toString("base64url");
  return `${text}.${digest(text).slice(0, 16)}`;
}

/** The position a token names, refused unless it is intact and continues `request`. */
export function decodePageToken(token: string, request: string): PagePosition {
  const [text, sum, ...rest] = token.split(".");
  const malformed = () => siltError("INVALID_PAGE_TOKEN:MALFORMED");
  if (text === undefined || rest.length > 0 || sum !== digest(text).slice(0, 16)) {
    throw malformed();
  }
  let body: Partial<TokenBody>;
  try {
    body = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw malformed();
  }
  const count = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  if (
    typeof body.tableId !== "string" ||
    typeof body.file !== "string" ||
    !count(body.version) ||
    !count(body.row) ||
    !count(body.served)
  ) {
    throw malformed();
  }
  if (body.request !== request) throw siltError("INVALID_PAGE_TOKEN:OTHER_REQUEST");
  const { tableId, version, file, row, served } = body as TokenBody;
  return { tableId, version, file, row, served };
}
