/**
 * What one SQL request runs with: default catalog and schema for short names, and the Spark
 * configuration the request carries (`conf`), e.g. spark.sql.sources.partitionOverwriteMode.
 *
 * `conf` holds only settings Silt honours, with values it understands (`checkConf`): a setting
 * that would be silently ignored (a typo, or one such as spark.sql.ansi.enabled that Silt does
 * not implement) is refused, since the caller expects it to change what the statement does.
 */
import type { NameDefaults } from "../catalog/names.ts";
import { siltError } from "../errors.ts";
import { nearestNames } from "../values/did-you-mean.ts";

export const PARTITION_OVERWRITE_MODE = "spark.sql.sources.partitionOverwriteMode";
export const AUTO_MERGE_CONF = "spark.databricks.delta.schema.autoMerge.enabled";
export const RETENTION_CHECK_CONF = "spark.databricks.delta.retentionDurationCheck.enabled";
/** Databricks SQL's statement time budget, in seconds (lib/deadline.ts). */
export const STATEMENT_TIMEOUT_CONF = "STATEMENT_TIMEOUT";

/**
 * Each honoured setting and the values it takes (compared case-insensitively, as Spark does);
 * null for one whose value the deployment's limits decide, checked where it takes effect.
 */
const HONOURED: Record<string, readonly string[] | null> = {
  [PARTITION_OVERWRITE_MODE]: ["static", "dynamic"],
  [AUTO_MERGE_CONF]: ["true", "false"],
  [RETENTION_CHECK_CONF]: ["true", "false"],
  [STATEMENT_TIMEOUT_CONF]: null,
};

/**
 * `conf` checked against the settings `honoured` here (default: all of them): an unknown or
 * unhonoured key, or a value the setting does not take, is refused naming what would work.
 */
export function checkConf(
  conf: Record<string, string>,
  honoured: readonly string[] = Object.keys(HONOURED),
): Record<string, string> {
  for (const [key, value] of Object.entries(conf)) {
    const allowed = honoured.includes(key) ? HONOURED[key] : undefined;
    if (allowed === null) continue;
    if (allowed === undefined) {
      const near = nearestNames(key, honoured, 1);
      throw siltError("UNSUPPORTED_FEATURE.CONF", {
        key,
        hint: near.length > 0 ? ` Did you mean ${near[0]}?` : "",
        honoured: honoured.join(", "),
      });
    }
    if (!allowed.includes(value.toLowerCase())) {
      throw siltError("INVALID_CONF_VALUE", {
        confValue: value,
        confName: key,
        allowed: allowed.join(", "),
      });
    }
  }
  return conf;
}

export interface SqlSession {
  defaults: NameDefaults;
  conf: Record<string, string>;
  /** The statement's instant: current_date()/current_timestamp() see one value per statement. */
  now: number;
  /** Set when a query's answer is paged (execute.ts). */
  paging?: QueryPaging;
}

/** A table as a paged query read it: its id and version. */
export interface TableRead {
  tableId: string;
  version: number;
}

/**
 * How a paged query reads its tables so every page sees the same rows in the same order: at the
 * versions its page token pins (by the name the query gives each table), files in path order;
 * the versions the page read are recorded in `read` for the next page's token.
 */
export interface QueryPaging {
  pinned: ReadonlyMap<string, TableRead>;
  read: Map<string, TableRead>;
}

export function confFlag(session: SqlSession, key: string, fallback: boolean): boolean {
  const v = session.conf[key];
  return v === undefined ? fallback : v.toLowerCase() === "true";
}
