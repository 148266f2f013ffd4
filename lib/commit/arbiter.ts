/**
 * The commit arbiter: one DynamoDB row per ratified table version decides which staged commit
 * owns that version (DESIGN §3 step 4).
 *
 * 1. Ratify version v of a table: PutItem (tableId, v) with `attribute_not_exists(tableId)`. The
 *    first put wins; every later put fails its condition, so each version has exactly one winner.
 *    Writers only ever propose v = (a version they saw ratified) + 1, so versions are ratified in
 *    order without a multi-item transaction (dynalite has none).
 * 2. The row records where the winning commit's bytes are (the staged object key), its in-commit
 *    timestamp (so the next writer can keep ICTs increasing without reading the commit), txnId,
 *    operation and a `published` flag.
 * 3. Publishing copies the staged file to `_delta_log/<v>.json` in version order and only then
 *    sets `published`. Because every publisher walks versions upwards and stops at its first
 *    failure, published rows always form a prefix of the versions and unpublished rows a suffix:
 *    the unpublished set is found by reading backwards from the latest row until the first
 *    published one, which normally costs one small query.
 * 4. Rows are never deleted or expired here, and the table has no TTL. Delta's own DynamoDB log
 *    store lost data when a TTL removed a row before its commit was visible in the log (delta-io
 *    #1410): a slow writer then saw no row and overwrote the commit. A row is the only durable
 *    record of a ratified-but-unpublished commit, and the latest row is what the next writer
 *    builds on, so any future clean-up may drop only published rows below the latest.
 *
 * The rows live in an item store (lib/kv/item-store.ts): the DynamoDB commit table in a
 * deployment, memory in tests. Its reads are consistent: a writer that just lost a conditional
 * put must see the winner's row.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { siltError } from "../errors.ts";
import { ensureTable } from "../kv/dynamo-item-store.ts";
import {
  attributeExists,
  attributeNotExists,
  COMMIT_TABLE_KEYS,
  type Item,
  type ItemStore,
  type Key,
  queryAll,
} from "../kv/item-store.ts";

/** What a writer proposes for a version. */
export interface RatifyEntry {
  tableId: string;
  version: number;
  /** Object key of the staged commit file (relative to the store root). */
  stagedKey: string;
  inCommitTimestamp: number;
  txnId: string;
  operation: string;
}

/** A ratified version as the arbiter stores it. */
export interface RatifiedRow extends RatifyEntry {
  published: boolean;
  /** Epoch ms when the row was written. */
  ratifiedAt: number;
}

export interface CommitArbiterOptions {
  /** The commit table (COMMIT_TABLE_KEYS): DynamoDB in a deployment, memory in tests. */
  items: ItemStore;
  /** Source of `ratifiedAt`; defaults to Date.now. */
  clock?: () => number;
}

// Rows read backwards per page while looking for the unpublished suffix: a handful normally covers
// it in one round trip.
const TAIL_PAGE = 16;

export class CommitArbiter {
  private readonly items: ItemStore;
  private readonly clock: () => number;

  constructor(options: CommitArbiterOptions) {
    this.items = options.items;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Claims `entry.version` for the entry's commit; false when another commit already holds it.
   * `published` records a commit whose bytes already are `_delta_log/<v>.json`: the version 0 a
   * Unity Catalog client writes straight into the log before the catalog knows the table.
   */
  async ratify(entry: RatifyEntry, opts: { published?: boolean } = {}): Promise<boolean> {
    return this.items.put(
      toItem({ ...entry, published: opts.published ?? false, ratifiedAt: this.clock() }),
      attributeNotExists("tableId"),
    );
  }

  /** The highest ratified version of the table, or undefined when none is. */
  async latest(tableId: string): Promise<RatifiedRow | undefined> {
    const page = await this.items.query({ partition: { S: tableId }, descending: true, limit: 1 });
    const item = page.items[0];
    return item === undefined ? undefined : fromItem(item);
  }

  /** Ratified rows with fromVersion <= version <= toVersion (open-ended without toVersion), ascending. */
  async range(tableId: string, fromVersion: number, toVersion?: number): Promise<RatifiedRow[]> {
    if (toVersion !== undefined && toVersion < fromVersion) return [];
    const items = await queryAll(this.items, {
      partition: { S: tableId },
      sortKey:
        toVersion === undefined
          ? { op: ">=", value: { N: String(fromVersion) } }
          : { op: "between", low: { N: String(fromVersion) }, high: { N: String(toVersion) } },
    });
    return items.map(fromItem);
  }

  /**
   * The latest row plus every ratified-but-unpublished row (ascending), read backwards from the
   * latest until the first published row (module comment, step 3).
   */
  async tail(tableId: string): Promise<{ latest?: RatifiedRow; unpublished: RatifiedRow[] }> {
    let latest: RatifiedRow | undefined;
    const unpublished: RatifiedRow[] = [];
    let startKey: Key | undefined;
    do {
      const page = await this.items.query({
        partition: { S: tableId },
        descending: true,
        limit: TAIL_PAGE,
        startKey,
      });
      for (const item of page.items) {
        const row = fromItem(item);
        latest ??= row;
        if (row.published) return { latest, unpublished: unpublished.reverse() };
        unpublished.push(row);
      }
      startKey = page.lastKey;
    } while (startKey !== undefined);
    return latest === undefined
      ? { unpublished: unpublished.reverse() }
      : { latest, unpublished: unpublished.reverse() };
  }

  /** Ratified rows not yet published, ascending by version. */
  async unpublished(tableId: string): Promise<RatifiedRow[]> {
    return (await this.tail(tableId)).unpublished;
  }

  /**
   * Records that `_delta_log/<version>.json` exists. Idempotent. The condition stops UpdateItem
   * from creating a row, which would ratify a version nobody staged.
   */
  async markPublished(tableId: string, version: number): Promise<void> {
    const updated = await this.items.update(
      { tableId: { S: tableId }, version: { N: String(version) } },
      { set: { published: { BOOL: true } } },
      attributeExists("tableId"),
    );
    if (!updated) {
      throw siltError("SILT_COMMIT_NOT_RATIFIED", { version, tableId });
    }
  }
}

/**
 * Creates the commit table (PK tableId S, SK version N, on-demand) unless it exists, then waits
 * until it is ACTIVE. Safe to race.
 */
export const ensureCommitTable = (
  client: DynamoDBClient,
  tableName: string,
  options: { timeoutMs?: number } = {},
): Promise<void> => ensureTable(client, tableName, COMMIT_TABLE_KEYS, options);

function toItem(row: RatifiedRow): Item {
  return {
    tableId: { S: row.tableId },
    version: { N: String(row.version) },
    stagedKey: { S: row.stagedKey },
    inCommitTimestamp: { N: String(row.inCommitTimestamp) },
    txnId: { S: row.txnId },
    operation: { S: row.operation },
    published: { BOOL: row.published },
    ratifiedAt: { N: String(row.ratifiedAt) },
  };
}

function fromItem(item: Item): RatifiedRow {
  const s = (name: string): string => {
    const v = item[name]?.S;
    if (v === undefined) throw malformed(item, name);
    return v;
  };
  const n = (name: string): number => {
    const v = item[name]?.N;
    if (v === undefined) throw malformed(item, name);
    return Number(v);
  };
  return {
    tableId: s("tableId"),
    version: n("version"),
    stagedKey: s("stagedKey"),
    inCommitTimestamp: n("inCommitTimestamp"),
    txnId: s("txnId"),
    operation: s("operation"),
    published: item.published?.BOOL === true,
    ratifiedAt: n("ratifiedAt"),
  };
}

const malformed = (item: Item, name: string) =>
  siltError("SILT_COMMIT_ROW_MALFORMED", {
    tableId: item.tableId?.S,
    version: item.version?.N,
    attribute: name,
  });
