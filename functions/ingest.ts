import { ingestHandler } from "../lib/runtime/ingest-handler.ts";

export const handler = ingestHandler();
