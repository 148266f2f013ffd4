/**
 * What a writer must check before touching a table: every writer feature is one Silt honours,
 * and whether new files need row ids.
 */
import type { Metadata, Protocol } from "../delta/actions.ts";
import type { Snapshot } from "../delta/snapshot.ts";
import { siltError } from "../errors.ts";

/** Writer features whose rules Silt's writers follow. */
export const SUPPORTED_WRITER_FEATURES: ReadonlySet<string> = new Set([
  "appendOnly",
  "invariants",
  "catalogManaged",
  "catalogOwned-preview",
  "deletionVectors",
  "v2Checkpoint",
  "vacuumProtocolCheck",
  "inCommitTimestamp",
  "columnMapping",
  "rowTracking",
  "domainMetadata",
  "timestampNtz",
]);

/** Fails unless Silt can write the table; returns whether new files get row ids. */
export function checkWriteProtocol(protocol: Protocol, metadata: Metadata): boolean {
  if (protocol.minWriterVersion > 7) {
    throw siltError("DELTA_INVALID_PROTOCOL_VERSION:WRITE", {
      minWriterVersion: protocol.minWriterVersion,
    });
  }
  const missing = (protocol.writerFeatures ?? []).filter((f) => !SUPPORTED_WRITER_FEATURES.has(f));
  if (missing.length > 0)
    throw siltError("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE:FEATURES", {
      features: missing.join(", "),
    });
  return rowTrackingEnabled(protocol, metadata);
}

/** Whether new files get row ids: the table has `rowTracking` and has not suspended it. */
export function rowTrackingEnabled(protocol: Protocol, metadata: Metadata): boolean {
  return (
    (protocol.writerFeatures ?? []).includes("rowTracking") &&
    metadata.configuration["delta.rowTrackingSuspended"] !== "true"
  );
}

/** The `delta.rowTracking` high-water mark of a snapshot, -1 when no row id was handed out. */
export function rowTrackingHighWaterMark(snapshot: Snapshot): number {
  const domain = snapshot.domainMetadata.get("delta.rowTracking");
  if (domain === undefined) return -1;
  const parsed = JSON.parse(domain.configuration) as { rowIdHighWaterMark?: number };
  return typeof parsed.rowIdHighWaterMark === "number" ? parsed.rowIdHighWaterMark : -1;
}
