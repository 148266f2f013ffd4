/**
 * Arrow IPC streams a caller sends. apache-arrow reads bytes that are not a stream at all (text,
 * an empty body) as an empty table with no schema, which a write would commit as nothing; every
 * real stream opens with its schema message, so a table without one was never a stream.
 */
import * as arrow from "apache-arrow";

/** The table an Arrow IPC stream holds; throws when the bytes are not a stream. */
export function decodeArrowStream(bytes: Uint8Array): arrow.Table {
  const table = arrow.tableFromIPC(bytes);
  if (table.schema.fields.length === 0) {
    throw new Error(`${bytes.length} byte(s) that do not start with an Arrow schema message`);
  }
  return table;
}
