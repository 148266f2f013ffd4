/**
 * What one SQL request runs with: default catalog and schema for short names, and the Spark
 * configuration the request carries (`conf`), e.g. spark.sql.sources.partitionOverwriteMode.
 */
import type { NameDefaults } from "../catalog/names.ts";

export interface SqlSession {
  defaults: NameDefaults;
  conf: Record<string, string>;
  /** The statement's instant: current_date()/current_timestamp() see one value per statement. */
  now: number;
}

export function confFlag(session: SqlSession, key: string, fallback: boolean): boolean {
  const v = session.conf[key];
  return v === undefined ? fallback : v.toLowerCase() === "true";
}
