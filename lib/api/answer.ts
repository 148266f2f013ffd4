/**
 * Row answers that may be big, written as chunks as the rows come (JSON, JSON lines, Arrow IPC)
 * and sent one of two ways:
 *
 * - streamed (the local server): each chunk is written as it is made, so memory holds a few
 *   files' rows whatever the answer's size; a client that goes away stops the read;
 * - buffered within a byte limit (Lambda, whose response is one payload of at most 6 MB): an
 *   answer past the limit is refused with RESULT_TOO_LARGE, which tells the caller to page,
 *   before anything is sent.
 *
 * The chunks up to the first rows are made before the response starts, so the errors a
 * statement meets first (a bad column, a missing file, the first files past the budget) answer
 * with their status. A failure later, with the status sent, is told in the body where the format
 * has room for it (`failure`: JSON closes its rows with an `error` member, JSON lines end with an
 * error line; an Arrow stream has no place for one) and then the body is broken off, so no reader
 * takes the rows before it for a whole answer.
 */
import * as arrow from "apache-arrow";
import type { Context } from "hono";
import { arrowToRows } from "../data/arrow-to-json.ts";
import { setKey } from "../data/json-encoding.ts";
import type { Deadline } from "../deadline.ts";
import type { StructType } from "../delta/schema.ts";
import { type SiltError, siltError } from "../errors.ts";
import type { Env } from "./http.ts";
import { knownError } from "./known-error.ts";

/**
 * What a Lambda function's answer body may take: the 6 MB invocation payload less room for the
 * status and headers around it.
 */
export const LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024 - 64 * 1024;

/** Rows encoded per chunk: big enough to amortize, small enough to keep a chunk to megabytes. */
const ROWS_PER_CHUNK = 8192;

/** An answer's rows, a part at a time: as they are read, or already in memory. */
export type Parts = AsyncIterable<arrow.Table> | Iterable<arrow.Table>;

/** Part of an answer, and how many rows it carries (for the message that suggests a page size). */
export interface Chunk {
  bytes: string | Uint8Array;
  rows: number;
}

export interface AnswerOptions {
  contentType: string;
  headers?: Record<string, string>;
  /** Set where the answer must fit one buffered response (Lambda): its byte limit. */
  maxBytes?: number;
  /** The bytes that tell a failure after the first rows, in the answer's format. */
  failure?: (err: SiltError) => string;
}

export async function sendAnswer(
  c: Context<Env>,
  chunks: AsyncIterable<Chunk>,
  opts: AnswerOptions,
): Promise<Response> {
  const headers = { "content-type": opts.contentType, ...opts.headers };
  if (opts.maxBytes !== undefined) {
    const body = await buffered(chunks, opts.maxBytes, isText(opts.contentType));
    return c.body(body as Uint8Array<ArrayBuffer>, 200, headers);
  }
  const it = chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const bytesOf = (chunk: Chunk) =>
    typeof chunk.bytes === "string" ? encoder.encode(chunk.bytes) : chunk.bytes;
  // Up to the first rows before the response starts (see the module comment).
  const ahead: Chunk[] = [];
  let done = false;
  for (;;) {
    const next = await it.next();
    if (next.done) done = true;
    else ahead.push(next.value);
    if (next.done || next.value.rows > 0) break;
  }
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of ahead) controller.enqueue(bytesOf(chunk));
      if (done) controller.close();
    },
    async pull(controller) {
      let next: IteratorResult<Chunk>;
      try {
        next = await it.next();
      } catch (caught) {
        const err = knownError(caught, c, c.get("ctx").logger);
        if (opts.failure) controller.enqueue(encoder.encode(opts.failure(err)));
        controller.error(err);
        return;
      }
      if (next.done) controller.close();
      else controller.enqueue(bytesOf(next.value));
    },
    async cancel() {
      await it.return?.();
    },
  });
  return c.body(stream, 200, headers);
}

/** Every part, read to the end (what Array.fromAsync does from Node 22). */
export async function readAll<T>(parts: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

/** JSON text goes into Lambda's payload as a JSON string; anything else as base64 (hono's adapter). */
const isText = (contentType: string) => /[/+]json\s*(;|$)/i.test(contentType);

async function buffered(chunks: AsyncIterable<Chunk>, maxBytes: number, text: boolean) {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  let size = 0;
  let payload = 0;
  let rows = 0;
  for await (const chunk of chunks) {
    const bytes = typeof chunk.bytes === "string" ? encoder.encode(chunk.bytes) : chunk.bytes;
    parts.push(bytes);
    size += bytes.byteLength;
    rows += chunk.rows;
    // In the payload a JSON body is escaped (each quote and backslash doubles); base64 is 4/3.
    payload = text ? payload + bytes.byteLength + escapes(chunk.bytes) : Math.ceil(size / 3) * 4;
    if (payload > maxBytes) {
      const perRow = payload / Math.max(1, rows);
      throw siltError("RESULT_TOO_LARGE", {
        maxBytes,
        suggestedRows: Math.max(1, Math.floor((maxBytes * 0.8) / perRow)),
      });
    }
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    body.set(p, at);
    at += p.byteLength;
  }
  return body;
}

function escapes(bytes: string | Uint8Array): number {
  let n = 0;
  if (typeof bytes === "string") {
    for (let i = 0; i < bytes.length; i++) {
      const ch = bytes.charCodeAt(i);
      if (ch === 0x22 || ch === 0x5c) n++;
    }
  } else {
    for (const b of bytes) if (b === 0x22 || b === 0x5c) n++;
  }
  return n;
}

/** A part's rows in slices of ROWS_PER_CHUNK, the deadline checked before each. */
function* slices(part: arrow.Table, deadline: Deadline | undefined): Generator<arrow.Table> {
  for (let i = 0; i < part.numRows; i += ROWS_PER_CHUNK) {
    deadline?.check();
    yield part.slice(i, i + ROWS_PER_CHUNK);
  }
}

/**
 * `{...head, "rows": [...], ...tail()}` (`head` not empty), the rows given a slice at a time;
 * `tail` is asked for once the rows are written (a next page token is known only then).
 */
export async function* jsonAnswer(
  head: Record<string, unknown>,
  slices: AsyncIterable<unknown[][]> | Iterable<unknown[][]>,
  tail: () => Record<string, unknown> = () => ({}),
): AsyncGenerator<Chunk> {
  const open = JSON.stringify(head);
  yield { bytes: `${open.slice(0, -1)},"rows":[`, rows: 0 };
  let first = true;
  for await (const rows of slices) {
    if (rows.length === 0) continue;
    const text = rows.map((r) => JSON.stringify(r)).join(",");
    yield { bytes: first ? text : `,${text}`, rows: rows.length };
    first = false;
  }
  const close = JSON.stringify(tail());
  yield { bytes: close.length > 2 ? `],${close.slice(1)}` : "]}", rows: 0 };
}

/** How a jsonAnswer that fails within its rows ends: the rows closed, then `"error": {...}`. */
export const jsonAnswerFailure = (err: SiltError) => `],"error":${JSON.stringify(err)}}`;

/** A table's parts as slices of rows of canonical JSON values. */
export async function* rowSlices(
  parts: Parts,
  schema: StructType,
  deadline?: Deadline,
): AsyncGenerator<unknown[][]> {
  for await (const part of parts) {
    for (const slice of slices(part, deadline)) yield arrowToRows(slice, schema);
  }
}

/** Rows already in memory, a slice at a time. */
export function* inSlices(rows: unknown[][]): Generator<unknown[][]> {
  for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) yield rows.slice(i, i + ROWS_PER_CHUNK);
}

/** JSON lines: one object per row, keyed by column name (what JSON-lines readers expect). */
export async function* jsonLines(
  parts: Parts,
  schema: StructType,
  deadline?: Deadline,
): AsyncGenerator<Chunk> {
  const names = schema.fields.map((f) => f.name);
  for await (const rows of rowSlices(parts, schema, deadline)) {
    let text = "";
    for (const row of rows) {
      const obj: Record<string, unknown> = {};
      for (const [i, name] of names.entries()) setKey(obj, name, row[i]);
      text += `${JSON.stringify(obj)}\n`;
    }
    yield { bytes: text, rows: rows.length };
  }
}

/** How JSON lines that fail end: a line holding the error body. */
export const jsonLinesFailure = (err: SiltError) => `${JSON.stringify(err)}\n`;

/**
 * An Arrow IPC stream written part by part: the schema message once, each part's record
 * batches, then the end-of-stream marker. Every part is encoded alone, so its bytes open with
 * the same schema message, which is cut off.
 */
export async function* arrowStream(
  schema: arrow.Schema,
  parts: Parts,
  deadline?: Deadline,
): AsyncGenerator<Chunk> {
  const empty = arrow.tableToIPC(new arrow.Table(schema), "stream");
  const schemaBytes = empty.subarray(0, empty.byteLength - END_OF_STREAM);
  yield { bytes: schemaBytes, rows: 0 };
  for await (const part of parts) {
    if (part.numRows === 0) continue;
    deadline?.check();
    const bytes = arrow.tableToIPC(part, "stream");
    if (!startsWith(bytes, schemaBytes)) {
      throw siltError("INTERNAL_ERROR:ARROW_STREAM_SCHEMA");
    }
    yield {
      bytes: bytes.subarray(schemaBytes.byteLength, bytes.byteLength - END_OF_STREAM),
      rows: part.numRows,
    };
  }
  yield { bytes: empty.subarray(empty.byteLength - END_OF_STREAM), rows: 0 };
}

/** The IPC end-of-stream marker: continuation 0xFFFFFFFF, then a zero length. */
const END_OF_STREAM = 8;

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.byteLength < prefix.byteLength) return false;
  for (let i = 0; i < prefix.byteLength; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}
