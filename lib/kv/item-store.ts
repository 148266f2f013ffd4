/**
 * The seam under the commit arbiter, the catalog, the grant store and the idempotency store: one
 * key-value table with exactly the DynamoDB operations they use, implemented once for DynamoDB
 * (./dynamo-item-store.ts) and once in memory (./memory-item-store.ts). The stores keep their
 * rules (the arbiter's first-put-wins, the catalog's state machine) and talk only to this.
 *
 * - Items are DynamoDB items (attribute name -> AttributeValue), so both implementations see
 *   exactly the same data and the stores' encodings do not change.
 * - Every read is strongly consistent (the stores rely on reading a rival's winning write).
 * - Conditional writes answer false when their condition does not hold; every other failure
 *   (a malformed request, a network error) is thrown.
 * - Conditions and filters are a small expression tree: attribute exists / does not exist,
 *   comparison (=, <, <=) of an attribute with a value, AND, OR. They are evaluated as DynamoDB
 *   does: a missing attribute or one of another type compares false.
 * - A query reads one partition in sort-key order (ascending or descending), optionally bounded
 *   on the sort key, a page at a time: `limit` caps the items *evaluated*, before `filter`, and a
 *   page stopped by the limit (or by DynamoDB's 1 MB page size) returns `lastKey` even when
 *   nothing follows. Callers follow `lastKey` until it is absent.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";

export type Item = Record<string, AttributeValue>;
/** The key attributes of an item: the partition key and, in tables that have one, the sort key. */
export type Key = Item;

export interface KeySchema {
  partitionKey: string;
  sortKey?: { name: string; type: "S" | "N" };
}

export type Condition =
  | { kind: "exists" | "notExists"; attr: string }
  | { kind: "compare"; attr: string; op: "=" | "<" | "<="; value: AttributeValue }
  | { kind: "and" | "or"; of: Condition[] };

export const attributeExists = (attr: string): Condition => ({ kind: "exists", attr });
export const attributeNotExists = (attr: string): Condition => ({ kind: "notExists", attr });
export const eq = (attr: string, value: AttributeValue): Condition => ({
  kind: "compare",
  attr,
  op: "=",
  value,
});
export const lt = (attr: string, value: AttributeValue): Condition => ({
  kind: "compare",
  attr,
  op: "<",
  value,
});
export const le = (attr: string, value: AttributeValue): Condition => ({
  kind: "compare",
  attr,
  op: "<=",
  value,
});
export const and = (...of: Condition[]): Condition => ({ kind: "and", of });
export const or = (...of: Condition[]): Condition => ({ kind: "or", of });

/**
 * One UpdateItem's actions. An attribute may appear in one action only, and key attributes in
 * none (DynamoDB rejects both). As in DynamoDB an update creates a missing item unless its
 * condition forbids it; `add` unions string sets and `delete` removes elements from them (a set
 * left empty disappears).
 */
export interface Update {
  set?: Item;
  remove?: string[];
  add?: Record<string, { SS: string[] }>;
  delete?: Record<string, { SS: string[] }>;
}

export type SortKeyCondition =
  | { op: ">="; value: AttributeValue }
  | { op: "between"; low: AttributeValue; high: AttributeValue };

export interface QueryInput {
  partition: AttributeValue;
  sortKey?: SortKeyCondition;
  /** Descending sort-key order (DynamoDB's ScanIndexForward = false). */
  descending?: boolean;
  /** At most this many items are evaluated (before `filter`); unset: DynamoDB's 1 MB pages. */
  limit?: number;
  /** Applied to each evaluated item; items it rejects still count against `limit`. */
  filter?: Condition;
  /** The previous page's `lastKey`. */
  startKey?: Key;
}

export interface QueryPage {
  items: Item[];
  /** Where the next page starts; absent when the query is complete. */
  lastKey?: Key;
}

export interface ItemStore {
  readonly keySchema: KeySchema;
  get(key: Key): Promise<Item | undefined>;
  /** Writes the whole item (replacing any item of its key); false when `condition` fails. */
  put(item: Item, condition?: Condition): Promise<boolean>;
  update(key: Key, update: Update, condition?: Condition): Promise<boolean>;
  delete(key: Key, condition?: Condition): Promise<boolean>;
  query(input: QueryInput): Promise<QueryPage>;
}

/** Every item of a query, following `lastKey` from page to page. */
export async function queryAll(
  store: ItemStore,
  input: Omit<QueryInput, "startKey">,
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Key | undefined;
  do {
    const page = await store.query({ ...input, startKey });
    items.push(...page.items);
    startKey = page.lastKey;
  } while (startKey !== undefined);
  return items;
}

/** The key schemas of Silt's three DynamoDB tables (the CDK stack declares the same). */
export const COMMIT_TABLE_KEYS: KeySchema = {
  partitionKey: "tableId",
  sortKey: { name: "version", type: "N" },
};
export const CATALOG_TABLE_KEYS: KeySchema = {
  partitionKey: "pk",
  sortKey: { name: "sk", type: "S" },
};
export const IDEMPOTENCY_TABLE_KEYS: KeySchema = { partitionKey: "key" };
