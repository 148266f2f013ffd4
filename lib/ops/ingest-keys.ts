/**
 * Which table an object under the bucket's `ingest/` prefix feeds. Kept apart from the ingestion
 * itself so the enqueue function, which only routes events, bundles none of the engine.
 */
import type { QualifiedName } from "../catalog/names.ts";

export const INGEST_ROOT = "ingest/";

/** The table an ingest key feeds, or undefined for keys that are not `ingest/c/s/t/<file>`. */
export function ingestTarget(key: string): QualifiedName | undefined {
  if (!key.startsWith(INGEST_ROOT)) return undefined;
  const parts = key.slice(INGEST_ROOT.length).split("/");
  if (parts.length < 4 || parts.slice(0, 3).some((p) => p === "" || p === "." || p === "..")) {
    return undefined;
  }
  const file = parts[parts.length - 1]!;
  // Folder markers ("…/") and hidden or temporary files are never data to ingest.
  if (file === "" || file.startsWith(".") || file.startsWith("_")) return undefined;
  return { catalog: parts[0]!, schema: parts[1]!, table: parts[2]! };
}
