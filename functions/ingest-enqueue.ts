import { enqueueHandler } from "../lib/runtime/ingest-enqueue.ts";

export const handler = enqueueHandler();
