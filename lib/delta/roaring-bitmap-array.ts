/**
 * Delta's RoaringBitmapArray serialization (the bitmap inside every deletion vector), exposed over
 * plain row indexes. A row index is split into a 32-bit bucket key (high half) and a standard
 * 32-bit Roaring bitmap of the low halves.
 *
 * Portable format, little-endian throughout:
 *   u32 magic 1681511377 | u64 bucket count | per bucket: u32 key, RoaringFormatSpec bitmap
 * Legacy "native" format (read only; Spark never writes it for DVs any more):
 *   u32 magic 1681511376 | u32 bitmap count | per bitmap (key = position): u32 size, bitmap
 */

import { type SiltError, siltError } from "../errors.ts";

export const PORTABLE_MAGIC = 1681511377;
export const NATIVE_MAGIC = 1681511376;

const COOKIE_NO_RUNS = 12346;
const COOKIE_RUNS = 12347;
/** RoaringFormatSpec: with runs, offsets are only written for at least this many containers. */
const NO_OFFSET_THRESHOLD = 4;
/** Containers with more values than this are bitmaps, otherwise sorted arrays. */
const ARRAY_MAX = 4096;
const BITMAP_BYTES = 8192;
const TWO_32 = 4294967296;
/** Keys beyond this give row indexes that a JS number cannot hold exactly (>= 2^53). */
const MAX_BUCKET_KEY = 2 ** 21 - 1;
/**
 * Bounds what a decoder will materialise: run containers let a few bytes claim 65536 rows each, so
 * a corrupt or hostile bitmap could otherwise request tens of gigabytes.
 */
const MAX_DECODED_ROWS = 2 ** 30;

function malformed(message: string): SiltError {
  return siltError("DELTA_DELETION_VECTOR_INVALID_BITMAP", { message });
}

/**
 * Serializes strictly ascending row indexes (integers in [0, 2^53)) in the portable format, with
 * one bucket per key from 0 to the highest, empty ones included, as Spark writes them.
 */
export function serializeRowIndexes(sortedUniqueRows: ArrayLike<number>): Uint8Array {
  const n = sortedUniqueRows.length;
  // One entry per 2^16-row container: bucket key, 16-bit container key, range in the input.
  const cHigh: number[] = [];
  const cKey: number[] = [];
  const cStart: number[] = [];
  let prev = -1;
  let curHigh = -1;
  let curKey = -1;
  for (let i = 0; i < n; i++) {
    const v = sortedUniqueRows[i];
    if (!Number.isSafeInteger(v) || v < 0) {
      throw siltError("DELTA_DELETION_VECTOR_INVALID_ROW_INDEX:NOT_AN_INDEX", {
        value: v,
        position: i,
      });
    }
    if (v <= prev) {
      throw siltError("DELTA_DELETION_VECTOR_INVALID_ROW_INDEX:NOT_ASCENDING", {
        value: v,
        prev,
        position: i,
      });
    }
    prev = v;
    const high = Math.floor(v / TWO_32);
    const key = (v - high * TWO_32) >>> 16;
    if (high !== curHigh || key !== curKey) {
      cHigh.push(high);
      cKey.push(key);
      cStart.push(i);
      curHigh = high;
      curKey = key;
    }
  }
  const numContainers = cHigh.length;
  cStart.push(n);
  const numBuckets = numContainers === 0 ? 0 : cHigh[numContainers - 1] + 1;

  // Every bucket costs key + cookie + container count; each container a header, an offset and data.
  let size = 4 + 8 + numBuckets * 12;
  for (let c = 0; c < numContainers; c++) {
    const card = cStart[c + 1] - cStart[c];
    size += 8 + (card > ARRAY_MAX ? BITMAP_BYTES : card * 2);
  }

  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, PORTABLE_MAGIC, true);
  view.setUint32(4, numBuckets, true);
  view.setUint32(8, 0, true);
  let pos = 12;
  let c = 0;
  for (let bucket = 0; bucket < numBuckets; bucket++) {
    let cEnd = c;
    while (cEnd < numContainers && cHigh[cEnd] === bucket) cEnd++;
    const count = cEnd - c;
    view.setUint32(pos, bucket, true);
    pos += 4;
    const start = pos;
    view.setUint32(pos, COOKIE_NO_RUNS, true);
    view.setUint32(pos + 4, count, true);
    pos += 8;
    const headerPos = pos;
    const offsetPos = headerPos + count * 4;
    let dataPos = offsetPos + count * 4;
    for (let k = 0; k < count; k++) {
      const ci = c + k;
      const from = cStart[ci];
      const to = cStart[ci + 1];
      const card = to - from;
      view.setUint16(headerPos + k * 4, cKey[ci], true);
      view.setUint16(headerPos + k * 4 + 2, card - 1, true);
      view.setUint32(offsetPos + k * 4, dataPos - start, true);
      const base = cHigh[ci] * TWO_32 + cKey[ci] * 65536;
      if (card > ARRAY_MAX) {
        for (let i = from; i < to; i++) {
          const low = sortedUniqueRows[i] - base;
          out[dataPos + (low >>> 3)] |= 1 << (low & 7);
        }
        dataPos += BITMAP_BYTES;
      } else {
        for (let i = from; i < to; i++) {
          view.setUint16(dataPos, sortedUniqueRows[i] - base, true);
          dataPos += 2;
        }
      }
    }
    pos = dataPos;
    c = cEnd;
  }
  return out;
}

/** Growable output of decoded row indexes. */
class RowSink {
  values = new Float64Array(64);
  length = 0;

  reserve(extra: number): void {
    const need = this.length + extra;
    if (need > MAX_DECODED_ROWS) {
      throw malformed(`it claims more than ${MAX_DECODED_ROWS} rows`);
    }
    if (need <= this.values.length) return;
    let cap = this.values.length * 2;
    while (cap < need) cap *= 2;
    const next = new Float64Array(Math.min(cap, MAX_DECODED_ROWS));
    next.set(this.values.subarray(0, this.length));
    this.values = next;
  }

  result(): Float64Array {
    return this.length === this.values.length ? this.values : this.values.slice(0, this.length);
  }
}

/**
 * Decodes one RoaringFormatSpec bitmap starting at `pos`, adding `base` to every value, and returns
 * the position just past it. Array, bitmap and run containers are all accepted.
 */
function readRoaring32(
  bytes: Uint8Array,
  view: DataView,
  pos: number,
  end: number,
  base: number,
  sink: RowSink,
): number {
  const need = (p: number, n: number, what: string) => {
    if (p + n > end) throw malformed(`truncated ${what} at byte ${p}`);
  };
  need(pos, 4, "Roaring cookie");
  const cookie = view.getUint32(pos, true);
  let numContainers: number;
  let runFlagsPos = -1;
  if ((cookie & 0xffff) === COOKIE_RUNS) {
    numContainers = (cookie >>> 16) + 1;
    pos += 4;
    runFlagsPos = pos;
    const flagBytes = (numContainers + 7) >>> 3;
    need(pos, flagBytes, "run-container flags");
    pos += flagBytes;
  } else if (cookie === COOKIE_NO_RUNS) {
    need(pos, 8, "Roaring container count");
    numContainers = view.getUint32(pos + 4, true);
    if (numContainers > 65536) {
      throw malformed(`${numContainers} containers in one 32-bit bitmap (at most 65536)`);
    }
    pos += 8;
  } else {
    throw malformed(`unknown Roaring cookie ${cookie} at byte ${pos}`);
  }

  const headerPos = pos;
  need(pos, numContainers * 4, "container headers");
  pos += numContainers * 4;
  if (runFlagsPos < 0 || numContainers >= NO_OFFSET_THRESHOLD) {
    // Offsets only help random access; containers are read in order, so skip them.
    need(pos, numContainers * 4, "container offsets");
    pos += numContainers * 4;
  }

  let total = 0;
  for (let k = 0; k < numContainers; k++) total += view.getUint16(headerPos + k * 4 + 2, true) + 1;
  sink.reserve(total);
  const out = sink.values;
  let o = sink.length;

  let prevKey = -1;
  for (let k = 0; k < numContainers; k++) {
    const key = view.getUint16(headerPos + k * 4, true);
    const card = view.getUint16(headerPos + k * 4 + 2, true) + 1;
    if (key <= prevKey) throw malformed(`container keys not ascending (${key} after ${prevKey})`);
    prevKey = key;
    const cBase = base + key * 65536;
    const isRun = runFlagsPos >= 0 && (bytes[runFlagsPos + (k >>> 3)] & (1 << (k & 7))) !== 0;
    if (isRun) {
      need(pos, 2, "run count");
      const numRuns = view.getUint16(pos, true);
      pos += 2;
      need(pos, numRuns * 4, "runs");
      let next = 0;
      let count = 0;
      for (let r = 0; r < numRuns; r++) {
        const start = view.getUint16(pos, true);
        const last = start + view.getUint16(pos + 2, true);
        pos += 4;
        if (start < next || last > 65535) {
          throw malformed(`run [${start}, ${last}] overlaps or leaves the container`);
        }
        count += last - start + 1;
        if (count > card) throw malformed(`runs hold more values than the declared ${card}`);
        for (let v = start; v <= last; v++) out[o++] = cBase + v;
        next = last + 1;
      }
      if (count !== card) throw malformed(`runs hold ${count} values, header says ${card}`);
    } else if (card <= ARRAY_MAX) {
      need(pos, card * 2, "array container");
      let prev = -1;
      for (let i = 0; i < card; i++) {
        const v = view.getUint16(pos, true);
        pos += 2;
        if (v <= prev) throw malformed(`array container values not ascending (${v} after ${prev})`);
        prev = v;
        out[o++] = cBase + v;
      }
    } else {
      need(pos, BITMAP_BYTES, "bitmap container");
      const start = o;
      for (let w = 0; w < 2048; w++) {
        let word = view.getUint32(pos + w * 4, true) | 0;
        const wordBase = cBase + w * 32;
        while (word !== 0) {
          const lowest = word & -word;
          out[o++] = wordBase + 31 - Math.clz32(lowest);
          word ^= lowest;
        }
        // The header bounds the reservation, so stop before overrunning it on a lying header.
        if (o - start > card) throw malformed(`bitmap container holds more than ${card} values`);
      }
      if (o - start !== card) {
        throw malformed(`bitmap container holds ${o - start} values, header says ${card}`);
      }
      pos += BITMAP_BYTES;
    }
  }
  sink.length = o;
  return pos;
}

/**
 * Decodes a serialized RoaringBitmapArray (portable, or the legacy native format) into ascending
 * row indexes. Throws a SiltError on any structural problem; never loops past the input.
 */
export function deserializeRowIndexes(bytes: Uint8Array): Float64Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length;
  if (end < 4) throw malformed(`${end} bytes is too short for the magic number`);
  const magic = view.getUint32(0, true);
  const sink = new RowSink();
  let pos: number;
  if (magic === PORTABLE_MAGIC) {
    if (end < 12) throw malformed("truncated bucket count");
    const numBuckets = view.getUint32(4, true);
    const highWord = view.getUint32(8, true);
    pos = 12;
    // Each bucket needs at least a key, a cookie and a container count.
    if (highWord !== 0 || numBuckets * 12 > end - pos) {
      throw malformed(`bucket count ${highWord * TWO_32 + numBuckets} exceeds the data`);
    }
    let prevKey = -1;
    for (let b = 0; b < numBuckets; b++) {
      if (pos + 4 > end) throw malformed(`truncated bucket key at byte ${pos}`);
      const key = view.getUint32(pos, true);
      pos += 4;
      if (key <= prevKey) throw malformed(`bucket keys not ascending (${key} after ${prevKey})`);
      if (key > MAX_BUCKET_KEY) {
        throw malformed(`bucket key ${key} gives row indexes of 2^53 or more`);
      }
      prevKey = key;
      pos = readRoaring32(bytes, view, pos, end, key * TWO_32, sink);
    }
  } else if (magic === NATIVE_MAGIC || view.getUint32(0, false) === NATIVE_MAGIC) {
    // Spark writes the native framing little-endian; PROTOCOL.md's inline example has it
    // big-endian. The Roaring payloads inside are little-endian either way.
    const le = magic === NATIVE_MAGIC;
    if (end < 8) throw malformed("truncated bitmap count");
    const numBitmaps = view.getUint32(4, le);
    pos = 8;
    if (numBitmaps * 12 > end - pos) throw malformed(`bitmap count ${numBitmaps} exceeds the data`);
    if (numBitmaps > MAX_BUCKET_KEY + 1) {
      throw malformed(`${numBitmaps} bitmaps give row indexes of 2^53 or more`);
    }
    for (let key = 0; key < numBitmaps; key++) {
      if (pos + 4 > end) throw malformed(`truncated bitmap size at byte ${pos}`);
      const size = view.getUint32(pos, le);
      pos += 4;
      if (size > end - pos)
        throw malformed(`bitmap size ${size} at byte ${pos - 4} exceeds the data`);
      const after = readRoaring32(bytes, view, pos, pos + size, key * TWO_32, sink);
      if (after !== pos + size) {
        throw malformed(`bitmap ${key} is ${after - pos} bytes but declared ${size}`);
      }
      pos = after;
    }
  } else {
    throw malformed(
      `unexpected magic number ${magic} (expected ${PORTABLE_MAGIC}, the portable format)`,
    );
  }
  if (pos !== end) throw malformed(`${end - pos} unexpected bytes after the last bitmap`);
  return sink.result();
}
