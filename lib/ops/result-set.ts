import { formatTimestamp } from "../values/datetime-text.ts";

/** The shape every read-like operation answers with (DESIGN §6): typed columns, JSON rows. */
export interface ResultColumn {
  name: string;
  /** Spark type name: "bigint", "string", "map<string,string>", … */
  type: string;
}

// A type alias rather than an interface, so results also fit types with extra detail fields.
export type ResultSet = {
  columns: ResultColumn[];
  rows: unknown[][];
};

/** Epoch milliseconds as DESIGN §6 encodes timestamps: ISO-8601 UTC with microseconds. */
export const isoMicros = (ms: number): string =>
  formatTimestamp(BigInt(Math.floor(ms)) * 1000n, true);
