/**
 * What parquet-wasm reads a Parquet file through: in-memory bytes or a RangeSource of ranged
 * reads, handed to ParquetFile.fromFile as the duck-typed Blob it accepts; the Arrow schema
 * parquet-rs gives an opened file; and the error for bytes that are not a valid Parquet file.
 */
import * as arrow from "apache-arrow";
import type * as pw from "parquet-wasm/esm";
import { siltError } from "../errors.ts";

/** Random access to a file's bytes, e.g. S3 ranged GETs. `end` is exclusive. */
export interface RangeSource {
  size: number;
  read(start: number, end: number): Promise<Uint8Array>;
}

export function arrowSchemaOf(file: pw.ParquetFile): arrow.Schema {
  return arrow.tableFromIPC(file.schema().intoIPCStream()).schema;
}

export function corrupt(why: string): Error {
  return siltError("DELTA_PARQUET_CORRUPT", { why });
}

/** The duck-typed Blob that parquet-wasm's ParquetFile.fromFile accepts. */
interface BlobLike {
  size: number;
  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

export function blobOf(source: Uint8Array | RangeSource): BlobLike {
  if (source instanceof Uint8Array) {
    return {
      size: source.byteLength,
      slice: (start, end) => ({
        arrayBuffer: async () => exactBuffer(source.subarray(start, end)),
      }),
    };
  }
  return {
    size: source.size,
    slice: (start, end) => ({
      arrayBuffer: async () => exactBuffer(await source.read(start, Math.min(end, source.size))),
    }),
  };
}

function exactBuffer(u8: Uint8Array): ArrayBuffer {
  if (
    u8.byteOffset === 0 &&
    u8.byteLength === u8.buffer.byteLength &&
    u8.buffer instanceof ArrayBuffer
  )
    return u8.buffer;
  return u8.slice().buffer as ArrayBuffer;
}
