/** `silt ingest`: ingest what was dropped under the data directory's storage/ingest/ now. */
import type { IngestOutcome } from "../runtime/local-ingest.ts";
import { describeOutcome } from "../runtime/local-ingest.ts";
import { LOCAL_INGEST_ROUTE } from "../runtime/local-routes.ts";
import type { CliIo } from "./io.ts";
import { tableArgument, withLocalTarget } from "./local-work.ts";

export const INGEST_HELP = `Usage:
  silt ingest [catalog.schema.table]   Ingest the files dropped under the data directory's
                                       storage/ingest/<catalog>/<schema>/<table>/ (or only
                                       that table's folder), as the deployed ingest function does

Each file is ingested once (CSV with a header, JSON lines or Parquet, by extension): running it
again ingests nothing new. A file that cannot be ingested is rejected, its reason recorded under
storage/_ingest_rejected/. One line per file. A running silt serve (which ingests dropped files
on its own) does the work when it holds the data directory.

Environment:
  SILT_DATA_DIR          The data directory (default ./.silt)
`;

export async function ingestCommand(args: string[], io: CliIo): Promise<number> {
  const table = tableArgument(args, "ingest");
  const outcomes = await withLocalTarget(io, table, async (target) =>
    target.kind === "server"
      ? ((await target.post(LOCAL_INGEST_ROUTE)) as { outcomes: IngestOutcome[] }).outcomes
      : target.local.work.ingest(target.table),
  );
  for (const o of outcomes) io.stdout.write(`${describeOutcome(o)}\n`);
  return outcomes.some((o) => o.status === "rejected" || o.status === "failed") ? 1 : 0;
}
