/**
 * Routes only a local data directory answers, for the `silt ingest` and `silt maintain` commands
 * when a server holds the directory (one process per directory: the command cannot open it
 * itself). They sit in front of the app, outside its API and its OpenAPI document, because
 * deployed the same work is done by the ingest and maintenance functions, not by a request.
 *
 * POST /_silt/local/ingest   {"table"?: "c.s.t"}  -> {"outcomes": IngestOutcome[]}
 * POST /_silt/local/maintain {"table"?: "c.s.t"}  -> LocalMaintenanceResult
 *
 * They take no bearer token even under SILT_AUTH=token: each runs a pass the server runs on its
 * own anyway, as the service principal, over files whoever can write the directory put there.
 */
import { parseQualifiedName, type QualifiedName } from "../catalog/names.ts";
import { SiltError, siltError } from "../errors.ts";
import type { IngestOutcome } from "./local-ingest.ts";
import type { LocalMaintenanceResult } from "./local-maintenance.ts";

export const LOCAL_INGEST_ROUTE = "/_silt/local/ingest";
export const LOCAL_MAINTAIN_ROUTE = "/_silt/local/maintain";

export interface LocalWork {
  ingest(table?: QualifiedName): Promise<IngestOutcome[]>;
  maintain(table?: QualifiedName): Promise<LocalMaintenanceResult>;
}

type Fetch = (request: Request, ...rest: never[]) => Response | Promise<Response>;

export function withLocalRoutes<F extends Fetch>(fetch: F, work: LocalWork): F {
  return (async (request: Request, ...rest: never[]) => {
    const { pathname } = new URL(request.url);
    if (request.method !== "POST") return fetch(request, ...rest);
    if (pathname !== LOCAL_INGEST_ROUTE && pathname !== LOCAL_MAINTAIN_ROUTE) {
      return fetch(request, ...rest);
    }
    try {
      const table = await tableOf(request);
      const body =
        pathname === LOCAL_INGEST_ROUTE
          ? { outcomes: await work.ingest(table) }
          : await work.maintain(table);
      return Response.json(body);
    } catch (err) {
      if (!(err instanceof SiltError) || err.status < 400) throw err;
      return Response.json(err.toJSON(), { status: err.status });
    }
  }) as F;
}

async function tableOf(request: Request): Promise<QualifiedName | undefined> {
  const text = await request.text();
  let body: { table?: unknown };
  try {
    body = (text.trim() === "" ? {} : JSON.parse(text)) ?? {};
  } catch {
    throw siltError("INVALID_REQUEST:LOCAL_TABLE");
  }
  if (body.table === undefined) return undefined;
  if (typeof body.table !== "string") throw siltError("INVALID_REQUEST:LOCAL_TABLE");
  return parseQualifiedName(body.table);
}
