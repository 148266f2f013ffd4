/**
 * Deletion vectors: locating, reading, verifying and writing them, and turning them into row masks.
 *
 * On-disk DV file (framing big-endian): byte 0 = format version 1, then per DV
 *   i32 dataSize | dataSize bytes of serialized RoaringBitmapArray | i32 CRC-32 of those bytes
 * A descriptor's `offset` points at its dataSize field.
 */

import { randomUUID } from "node:crypto";
import { crc32 } from "node:zlib";
import { SiltError, siltError } from "../errors.ts";
import { ObjectNotFoundError, type ObjectStore } from "../storage/object-store.ts";
import type { DeletionVectorDescriptor } from "./actions.ts";
import { deserializeRowIndexes, serializeRowIndexes } from "./roaring-bitmap-array.ts";
import { uuidToZ85, z85Decode, z85Encode, z85ToUuid } from "./z85.ts";

const DV_FILE_FORMAT_VERSION = 1;
const UUID_Z85_LENGTH = 20;
const MAX_INT32 = 2147483647;

function describe(d: DeletionVectorDescriptor): string {
  return `deletion vector ${dvUniqueId(d)}`;
}

function checkTableRoot(tableRoot: string): void {
  if (tableRoot !== "" && !tableRoot.endsWith("/")) {
    throw siltError("DELTA_INVALID_TABLE_ROOT", { tableRoot: JSON.stringify(tableRoot) });
  }
}

function invalidDescriptor(d: DeletionVectorDescriptor, why: string): SiltError {
  return siltError("DELTA_INVALID_DELETION_VECTOR_DESCRIPTOR", {
    deletionVector: describe(d),
    why,
  });
}

/** The identity Delta uses to tell two DVs on the same data file apart. */
export function dvUniqueId(d: DeletionVectorDescriptor): string {
  const base = d.storageType + d.pathOrInlineDv;
  return d.offset === undefined || d.offset === null ? base : `${base}@${d.offset}`;
}

/** Store key of a file-backed DV ("u" or "p"), relative to the store's root. */
export function dvFileKey(d: DeletionVectorDescriptor, tableRoot: string): string {
  checkTableRoot(tableRoot);
  if (d.storageType === "u") {
    const p = d.pathOrInlineDv;
    if (p.length < UUID_Z85_LENGTH) {
      throw invalidDescriptor(d, `a relative path needs at least ${UUID_Z85_LENGTH} characters`);
    }
    const prefix = p.slice(0, p.length - UUID_Z85_LENGTH);
    const uuid = z85ToUuid(p.slice(p.length - UUID_Z85_LENGTH));
    return `${tableRoot}${prefix === "" ? "" : `${prefix}/`}deletion_vector_${uuid}.bin`;
  }
  if (d.storageType === "p") return absoluteDvKey(d, tableRoot);
  if (d.storageType === "i") throw invalidDescriptor(d, "an inline DV has no file");
  throw invalidDescriptor(d, `unknown storage type ${JSON.stringify(d.storageType)}`);
}

/**
 * The store only knows keys relative to its own root, not the URI the root lives at, so an absolute
 * path can be read only when it passes through the table's own directory: the key is the table
 * root plus whatever follows it in the (URL-decoded) path.
 */
function absoluteDvKey(d: DeletionVectorDescriptor, tableRoot: string): string {
  const unsupported = (why: string) =>
    siltError("DELTA_UNSUPPORTED_DELETION_VECTOR_PATH", {
      deletionVector: describe(d),
      why,
      tableRoot: tableRoot === "" ? "<store root>" : tableRoot,
    });
  const uri = d.pathOrInlineDv;
  let path: string;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(uri);
  if (scheme) {
    const rest = uri.slice(scheme[0].length);
    if (rest.startsWith("//")) {
      const slash = rest.indexOf("/", 2);
      path = slash < 0 ? "" : rest.slice(slash);
    } else {
      path = rest;
    }
  } else if (uri.startsWith("/")) {
    path = uri;
  } else {
    throw unsupported("the path is not absolute");
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw unsupported("the path is not valid URI encoding");
  }
  if (tableRoot === "") throw unsupported("the table root is the store root");
  const anchored = `/${decoded.replace(/^\/+/, "")}`;
  const at = anchored.indexOf(`/${tableRoot}`);
  if (at < 0) throw unsupported("the path is outside the table directory");
  const rel = anchored.slice(at + 1 + tableRoot.length);
  if (rel === "" || rel.split("/").some((seg) => seg === "" || seg === "." || seg === "..")) {
    throw unsupported("the path does not name a file inside the table directory");
  }
  return tableRoot + rel;
}

function checkCardinality(d: DeletionVectorDescriptor, rows: Float64Array): Float64Array {
  if (rows.length !== d.cardinality) {
    throw siltError("DELTA_DELETION_VECTOR_CARDINALITY_MISMATCH", {
      deletionVector: describe(d),
      rows: rows.length,
      cardinality: d.cardinality,
    });
  }
  return rows;
}

function sizeMismatch(d: DeletionVectorDescriptor, detail: string): SiltError {
  return siltError("DELTA_DELETION_VECTOR_SIZE_MISMATCH", {
    deletionVector: describe(d),
    sizeInBytes: d.sizeInBytes,
    detail,
  });
}

/** Reads, verifies and decodes a DV into its ascending deleted row indexes. */
export async function loadDeletionVector(
  store: ObjectStore,
  tableRoot: string,
  d: DeletionVectorDescriptor,
): Promise<Float64Array> {
  if (!Number.isSafeInteger(d.sizeInBytes) || d.sizeInBytes < 0 || d.sizeInBytes > MAX_INT32) {
    throw invalidDescriptor(d, `sizeInBytes ${d.sizeInBytes} is not a valid size`);
  }
  if (!Number.isSafeInteger(d.cardinality) || d.cardinality < 0) {
    throw invalidDescriptor(d, `cardinality ${d.cardinality} is not a valid count`);
  }
  if (d.storageType === "i") {
    const encoded = d.pathOrInlineDv;
    const padded = (encoded.length / 5) * 4;
    if (encoded.length % 5 !== 0 || d.sizeInBytes > padded || padded - d.sizeInBytes > 3) {
      throw sizeMismatch(d, `the inline data decodes to ${Math.floor(padded)} padded bytes`);
    }
    return checkCardinality(d, decodeBitmap(d, z85Decode(encoded, d.sizeInBytes)));
  }

  const key = dvFileKey(d, tableRoot);
  const offset = d.offset ?? 1;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw invalidDescriptor(d, `offset ${offset} is not a valid file position`);
  }
  const frameLength = 4 + d.sizeInBytes + 4;
  let frame: Uint8Array;
  try {
    frame = await store.getRange(key, offset, offset + frameLength);
  } catch (e) {
    if (e instanceof ObjectNotFoundError) {
      throw siltError("DELTA_FILE_NOT_FOUND_DETAILED:DELETION_VECTOR", {
        key,
        deletionVector: describe(d),
      });
    }
    throw e;
  }
  if (frame.length < frameLength) {
    throw sizeMismatch(d, `${key} ends ${frameLength - frame.length} bytes early`);
  }
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const dataSize = view.getInt32(0, false);
  if (dataSize !== d.sizeInBytes) {
    throw sizeMismatch(d, `${key} declares ${dataSize} bytes at offset ${offset}`);
  }
  const bitmap = frame.subarray(4, 4 + dataSize);
  const stored = view.getUint32(4 + dataSize, false);
  const actual = crc32(bitmap);
  if (stored !== actual) {
    throw siltError("DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH", {
      deletionVector: describe(d),
      key,
      stored: hex32(stored),
      actual: hex32(actual),
    });
  }
  return checkCardinality(d, decodeBitmap(d, bitmap));
}

function hex32(n: number): string {
  return `0x${n.toString(16).padStart(8, "0")}`;
}

function decodeBitmap(d: DeletionVectorDescriptor, bytes: Uint8Array): Float64Array {
  try {
    return deserializeRowIndexes(bytes);
  } catch (e) {
    if (e instanceof SiltError) {
      throw e.withMessage(`${e.message} (${describe(d)})`);
    }
    throw e;
  }
}

/**
 * Writes one new DV file holding every bitmap (each a strictly ascending set of row indexes) and
 * returns a descriptor per bitmap, in order. `prefix` places the file in a subdirectory of the
 * table root, which spreads request load across S3 key prefixes.
 */
export async function writeDeletionVectorFile(
  store: ObjectStore,
  tableRoot: string,
  bitmaps: readonly ArrayLike<number>[],
  opts?: { prefix?: string },
): Promise<DeletionVectorDescriptor[]> {
  checkTableRoot(tableRoot);
  const prefix = opts?.prefix ?? "";
  if (!/^[A-Za-z0-9_-]*$/.test(prefix)) {
    throw siltError("DELTA_INVALID_DELETION_VECTOR_PREFIX", { prefix: JSON.stringify(prefix) });
  }
  if (bitmaps.length === 0) return [];

  const serialized = bitmaps.map((rows) => serializeRowIndexes(rows));
  let total = 1;
  for (const s of serialized) total += 4 + s.length + 4;
  if (total > MAX_INT32) {
    throw siltError("DELTA_DELETION_VECTOR_TOO_LARGE", { total });
  }
  const file = new Uint8Array(total);
  const view = new DataView(file.buffer);
  file[0] = DV_FILE_FORMAT_VERSION;
  const offsets: number[] = [];
  let pos = 1;
  for (const s of serialized) {
    offsets.push(pos);
    view.setInt32(pos, s.length, false);
    file.set(s, pos + 4);
    view.setUint32(pos + 4 + s.length, crc32(s), false);
    pos += 4 + s.length + 4;
  }

  // A fresh random UUID never collides in practice; retrying keeps put-if-absent honest anyway.
  for (let attempt = 0; attempt < 3; attempt++) {
    const uuid = randomUUID();
    const pathOrInlineDv = prefix + uuidToZ85(uuid);
    const key = `${tableRoot}${prefix === "" ? "" : `${prefix}/`}deletion_vector_${uuid}.bin`;
    if (await store.putIfAbsent(key, file)) {
      return serialized.map((s, i) => ({
        storageType: "u",
        pathOrInlineDv,
        offset: offsets[i],
        sizeInBytes: s.length,
        cardinality: bitmaps[i].length,
      }));
    }
  }
  throw siltError("DELTA_DELETION_VECTOR_WRITE_FAILED");
}

/** A descriptor carrying the bitmap itself (Z85-encoded), for DVs small enough to inline. */
export function inlineDeletionVector(rows: ArrayLike<number>): DeletionVectorDescriptor {
  const bytes = serializeRowIndexes(rows);
  return {
    storageType: "i",
    pathOrInlineDv: z85Encode(bytes),
    sizeInBytes: bytes.length,
    cardinality: rows.length,
  };
}

/** Byte per row of a file with `numRows` rows: 1 where the row is deleted. */
export function deletedRowMask(rows: ArrayLike<number>, numRows: number): Uint8Array {
  const mask = new Uint8Array(numRows);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    // A deleted row past the end means the DV belongs to a different file: fail loudly.
    if (!(r >= 0 && r < numRows) || !Number.isInteger(r)) {
      throw siltError("DELTA_DELETION_VECTOR_INVALID_ROW_INDEX:OUTSIDE_FILE", {
        rowIndex: r,
        numRows,
      });
    }
    mask[r] = 1;
  }
  return mask;
}

/** Sorted union of two ascending row-index sets, without duplicates. */
export function unionRowIndexes(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < a.length && j < b.length) {
    const x = a[i];
    const y = b[j];
    if (x < y) {
      out[o++] = x;
      i++;
    } else if (y < x) {
      out[o++] = y;
      j++;
    } else {
      out[o++] = x;
      i++;
      j++;
    }
  }
  while (i < a.length) out[o++] = a[i++];
  while (j < b.length) out[o++] = b[j++];
  return o === out.length ? out : out.slice(0, o);
}
