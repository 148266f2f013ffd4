/** `silt maintain`: the scheduled maintenance pass, run now on the data directory. */
import type { Progress } from "../ops/progress.ts";
import { type LocalMaintenanceResult, maintainLocally } from "../runtime/local-maintenance.ts";
import { LOCAL_MAINTAIN_ROUTE } from "../runtime/local-routes.ts";
import type { CliIo } from "./io.ts";
import { tableArgument, withLocalTarget } from "./local-work.ts";

export const MAINTAIN_HELP = `Usage:
  silt maintain [catalog.schema.table]   Run the scheduled maintenance pass now: OPTIMIZE,
                                         VACUUM, checkpoints and log cleanup of every table (or
                                         that one) as its silt.maintenance.* properties ask

One line per table with what each step did. On a terminal, OPTIMIZE and VACUUM show their
progress (files and bytes done of the total). A running silt serve does the work when it holds
the data directory (it runs the pass itself every SILT_MAINTENANCE_INTERVAL).

Environment:
  SILT_DATA_DIR          The data directory (default ./.silt)
`;

export async function maintainCommand(args: string[], io: CliIo): Promise<number> {
  const table = tableArgument(args, "maintain");
  const onProgress = io.stdout.isTTY
    ? (name: string, step: string, p: Progress) =>
        io.stdout.write(`\r${name} ${step}: ${progressText(p)}\x1b[K`)
    : undefined;
  const result = await withLocalTarget(io, table, async (target) =>
    target.kind === "server"
      ? ((await target.post(LOCAL_MAINTAIN_ROUTE)) as LocalMaintenanceResult)
      : maintainLocally(target.local.ctx, { table: target.table, onProgress }),
  );
  if (onProgress !== undefined) io.stdout.write("\r\x1b[K");
  for (const t of result.tables) {
    const steps = t.steps.map((s) =>
      s.ok
        ? `${s.step} ${JSON.stringify(s.detail)}`
        : `${s.step} failed: [${s.errorClass}] ${s.error}`,
    );
    io.stdout.write(`${t.table}: ${steps.length === 0 ? "nothing to do" : steps.join("; ")}\n`);
  }
  return result.tables.some((t) => t.steps.some((s) => !s.ok)) ? 1 : 0;
}

function progressText(p: Progress): string {
  return `${p.filesDone}/${p.filesTotal} files, ${p.bytesDone}/${p.bytesTotal} bytes`;
}
