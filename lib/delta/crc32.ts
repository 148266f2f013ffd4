/**
 * CRC-32 (IEEE 802.3 / ISO-HDLC, reflected polynomial 0xEDB88320), the checksum java.util.zip.CRC32
 * computes and Delta stores after every bitmap in a deletion-vector file. Slicing-by-8 tables keep
 * it at several bytes per step, which matters for multi-megabyte DV files.
 */

const TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n];
    for (let s = 1; s < 8; s++) {
      c = t[c & 0xff] ^ (c >>> 8);
      t[s * 256 + n] = c >>> 0;
    }
  }
  return t;
})();

/**
 * CRC-32 of `bytes` as an unsigned 32-bit number. Pass the previous result as `crc` to continue a
 * checksum over several chunks.
 */
export function crc32(bytes: Uint8Array, crc = 0): number {
  const t = TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const lo =
      (c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24))) >>> 0;
    const hi = bytes[i + 4] | (bytes[i + 5] << 8) | (bytes[i + 6] << 16) | (bytes[i + 7] << 24);
    c =
      t[1792 + (lo & 0xff)] ^
      t[1536 + ((lo >>> 8) & 0xff)] ^
      t[1280 + ((lo >>> 16) & 0xff)] ^
      t[1024 + (lo >>> 24)] ^
      t[768 + (hi & 0xff)] ^
      t[512 + ((hi >>> 8) & 0xff)] ^
      t[256 + ((hi >>> 16) & 0xff)] ^
      t[(hi >>> 24) & 0xff];
    i += 8;
  }
  while (i < n) {
    c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
    i++;
  }
  return ~c >>> 0;
}
