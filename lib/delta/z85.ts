/**
 * Z85 (ZeroMQ base85) as Delta uses it for deletion-vector descriptors: inline bitmaps and the
 * UUID part of relative DV paths. Every 4 bytes (big-endian) become 5 characters, most significant
 * base-85 digit first.
 */

import { siltError } from "../errors.ts";

const ALPHABET =
  "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

const ENCODE = new Uint8Array(85);
/** Char code -> digit, 0xff for characters outside the alphabet. */
const DECODE = new Uint8Array(128).fill(0xff);
for (let i = 0; i < 85; i++) {
  ENCODE[i] = ALPHABET.charCodeAt(i);
  DECODE[ALPHABET.charCodeAt(i)] = i;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Encodes bytes, zero-padding the input to a multiple of 4 as Delta does for inline DVs. */
export function z85Encode(bytes: Uint8Array): string {
  const groups = Math.ceil(bytes.length / 4);
  const out = new Uint8Array(groups * 5);
  const full = Math.floor(bytes.length / 4);
  let o = 0;
  for (let g = 0; g < groups; g++) {
    const i = g * 4;
    let value: number;
    if (g < full) {
      value = ((bytes[i] << 24) | (bytes[i + 1] << 16) | (bytes[i + 2] << 8) | bytes[i + 3]) >>> 0;
    } else {
      value = 0;
      for (let k = 0; k < 4; k++) value = value * 256 + (i + k < bytes.length ? bytes[i + k] : 0);
    }
    // Digits are produced least significant first, so fill the 5-char group from the right.
    for (let k = 4; k >= 0; k--) {
      out[o + k] = ENCODE[value % 85];
      value = Math.floor(value / 85);
    }
    o += 5;
  }
  return Buffer.from(out.buffer, out.byteOffset, out.length).toString("latin1");
}

/**
 * Decodes Z85 text (length a multiple of 5). With `byteLength`, the result is truncated to that
 * many bytes, which drops the zero padding an encoder added.
 */
export function z85Decode(text: string, byteLength?: number): Uint8Array {
  if (text.length % 5 !== 0) {
    throw siltError("DELTA_INVALID_Z85_ENCODING:TEXT_LENGTH", { length: text.length });
  }
  const decodedLength = (text.length / 5) * 4;
  if (byteLength !== undefined) {
    if (!Number.isInteger(byteLength) || byteLength < 0 || byteLength > decodedLength) {
      throw siltError("DELTA_INVALID_Z85_ENCODING:BYTE_LENGTH", { byteLength, decodedLength });
    }
  }
  const out = new Uint8Array(decodedLength);
  let o = 0;
  for (let i = 0; i < text.length; i += 5) {
    let value = 0;
    for (let k = 0; k < 5; k++) {
      const code = text.charCodeAt(i + k);
      const digit = code < 128 ? DECODE[code] : 0xff;
      if (digit === 0xff) {
        throw siltError("DELTA_INVALID_Z85_ENCODING:CHARACTER", {
          text: JSON.stringify(text[i + k]),
          position: i + k,
        });
      }
      value = value * 85 + digit;
    }
    if (value > 0xffffffff) {
      throw siltError("DELTA_INVALID_Z85_ENCODING:GROUP_OVERFLOW", {
        text: JSON.stringify(text.slice(i, i + 5)),
      });
    }
    out[o++] = value >>> 24;
    out[o++] = (value >>> 16) & 0xff;
    out[o++] = (value >>> 8) & 0xff;
    out[o++] = value & 0xff;
  }
  return byteLength === undefined || byteLength === decodedLength
    ? out
    : out.subarray(0, byteLength);
}

/** Canonical UUID -> the 20 Z85 characters of its 16 big-endian bytes. */
export function uuidToZ85(uuid: string): string {
  if (!UUID_RE.test(uuid))
    throw siltError("DELTA_INVALID_Z85_ENCODING:UUID", { uuid: JSON.stringify(uuid) });
  return z85Encode(Buffer.from(uuid.replace(/-/g, ""), "hex"));
}

/** 20 Z85 characters -> canonical lowercase UUID. */
export function z85ToUuid(text: string): string {
  if (text.length !== 20) {
    throw siltError("DELTA_INVALID_Z85_ENCODING:UUID_LENGTH", { text: JSON.stringify(text) });
  }
  const hex = Buffer.from(z85Decode(text)).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
