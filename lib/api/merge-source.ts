/**
 * The source of a MERGE given through the JSON route: rows in the request (JSON objects or
 * arrays, or an Arrow IPC stream in base64), a catalog table at a version or timestamp, or
 * objects already in the bucket (Parquet, CSV, newline-delimited JSON) under `ingest/`
 * (lib/ops/source-objects.ts reads those).
 *
 * 1. Typed sources (Arrow, Parquet, tables) keep their own column types.
 * 2. Untyped ones (JSON rows, CSV, NDJSON) take the types the request declares in `columns`, else
 *    the target's or their values' (lib/data/untyped-sources.ts).
 */
import type * as arrow from "apache-arrow";
import type * as z from "zod";
import { splitNameParts } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { decodeArrowStream } from "../data/arrow-stream.ts";
import { untypedRows } from "../data/untyped-sources.ts";
import type { StructType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import type { MergeSource } from "../ops/merge-plan.ts";
import { plainSource, readSourceObject, typedSource } from "../ops/source-objects.ts";
import { runQuery } from "../sql/query.ts";
import type { SqlSession } from "../sql/session.ts";
import type { ROUTES } from "./request-schemas.ts";

export type SourceSpec = z.output<typeof ROUTES.merge.body>["source"];

export async function loadMergeSource(
  ctx: SiltContext,
  spec: SourceSpec,
  opts: { alias: string; target: StructType; session: SqlSession },
): Promise<MergeSource> {
  const qualifier = [opts.alias];
  if ("table" in spec) {
    const { version, timestamp } = spec;
    const relation = await runQuery(
      ctx,
      {
        kind: "select",
        distinct: false,
        items: [{ expr: { kind: "star", pos: POS } }],
        from: {
          kind: "table",
          name: splitNameParts(spec.table),
          timeTravel:
            version !== undefined
              ? { version }
              : timestamp !== undefined
                ? { timestamp: { kind: "literal", value: timestamp, type: "string", pos: POS } }
                : undefined,
          pos: POS,
        },
        groupBy: [],
        orderBy: [],
        pos: POS,
      },
      opts.session,
    );
    return { fields: relation.fields, table: relation.table, qualifier };
  }
  if ("arrow" in spec) {
    let table: arrow.Table;
    try {
      table = decodeArrowStream(Buffer.from(spec.arrow, "base64"));
    } catch (err) {
      throw siltError("MALFORMED_REQUEST:SOURCE_ARROW", { message: (err as Error).message });
    }
    return { ...typedSource(table), qualifier };
  }
  if ("rows" in spec) {
    return { ...plainSource(untypedRows(spec.rows, spec.columns, opts.target)), qualifier };
  }
  return { ...(await readSourceObject(ctx, spec, opts.target)), qualifier };
}

const POS = { line: 0, column: 0 };
