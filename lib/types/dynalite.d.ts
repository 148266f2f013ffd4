/**
 * dynalite ships no types. It returns a plain Node HTTP(S) server whose `close` also closes the
 * LevelDB (or in-memory) store behind it. Declared under lib/ because the embedded `npm start`
 * mode runs it in-process too, not only the tests.
 */
declare module "dynalite" {
  import type { Server } from "node:http";

  export interface DynaliteOptions {
    /** Milliseconds a new table stays CREATING (default 500; 0 makes it ACTIVE at once). */
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
    /** LevelDB directory; in-memory when absent. */
    path?: string;
    ssl?: boolean;
    key?: string;
    cert?: string;
    ca?: string;
    verbose?: boolean;
    debug?: boolean;
  }

  export default function dynalite(options?: DynaliteOptions): Server;
}
