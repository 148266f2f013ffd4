/**
 * The item store in memory: a Map of partitions, each an array of items kept sorted by sort key,
 * for tests and embedders that need no DynamoDB. It answers as DynamoDB does for the operations
 * of ./item-store.ts, so a store's rules are exercised the same way on both:
 *
 * - Each operation takes effect at one instant: after one await (so concurrent callers interleave
 *   between operations, as over the network) it reads, checks its condition and writes without
 *   yielding, so a conditional write is atomic.
 * - Items are copied in and out; a caller's later change to an object it passed or got back never
 *   reaches the store.
 * - Conditions compare as DynamoDB: missing attributes and attributes of another type compare
 *   false; numbers compare by value ("1" = "1.0"), strings and binaries by their bytes (UTF-8 for
 *   strings, so the order is DynamoDB's, not JavaScript's UTF-16 order).
 * - Queries evaluate at most `limit` items before the filter and stop at 1 MB of items read, and
 *   a page so stopped carries `lastKey` even when nothing follows; `startKey` need not exist.
 * - What DynamoDB rejects is rejected with an error named ValidationException: keys that do not
 *   match the schema, empty key strings, empty or duplicated sets, malformed numbers, items over
 *   400 KB, an update touching a key attribute or one attribute twice, BETWEEN with bounds out of
 *   order, a start key from another partition.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import type {
  Condition,
  Item,
  ItemStore,
  Key,
  KeySchema,
  QueryInput,
  QueryPage,
  SortKeyCondition,
  Update,
} from "./item-store.ts";

const MAX_ITEM_BYTES = 400 * 1024;
const MAX_PAGE_BYTES = 1024 * 1024;

export class MemoryItemStore implements ItemStore {
  private readonly partitions = new Map<string, Item[]>();

  constructor(readonly keySchema: KeySchema) {}

  /** How many items the table holds (tests count what a store left behind). */
  get size(): number {
    let n = 0;
    for (const items of this.partitions.values()) n += items.length;
    return n;
  }

  async get(key: Key): Promise<Item | undefined> {
    await turn();
    const { partition, index, found } = this.locate(this.checkKey(key));
    return found ? copy(partition[index] as Item) : undefined;
  }

  async put(item: Item, condition?: Condition): Promise<boolean> {
    await turn();
    const stored = copy(item);
    for (const value of Object.values(stored)) checkValue(value);
    const key = this.checkKey(this.keyOf(stored));
    checkSize(stored);
    if (condition !== undefined) checkCondition(condition);
    const place = this.locate(key);
    const existing = place.found ? place.partition[place.index] : undefined;
    if (condition !== undefined && !holds(condition, existing)) return false;
    this.write(place, stored);
    return true;
  }

  async update(key: Key, update: Update, condition?: Condition): Promise<boolean> {
    await turn();
    const k = this.checkKey(key);
    this.checkUpdate(update);
    if (condition !== undefined) checkCondition(condition);
    const place = this.locate(k);
    const existing = place.found ? place.partition[place.index] : undefined;
    if (condition !== undefined && !holds(condition, existing)) return false;
    const next = copy(existing ?? k);
    for (const [attr, value] of Object.entries(update.set ?? {})) next[attr] = copy(value);
    for (const attr of update.remove ?? []) delete next[attr];
    for (const [attr, value] of Object.entries(update.add ?? {})) {
      const current = next[attr];
      if (current !== undefined && current.SS === undefined) throw operandType("ADD", attr);
      next[attr] = { SS: [...new Set([...(current?.SS ?? []), ...value.SS])] };
    }
    for (const [attr, value] of Object.entries(update.delete ?? {})) {
      const current = next[attr];
      if (current === undefined) continue;
      if (current.SS === undefined) throw operandType("DELETE", attr);
      const drop = new Set(value.SS);
      const kept = current.SS.filter((s) => !drop.has(s));
      if (kept.length === 0) delete next[attr];
      else next[attr] = { SS: kept };
    }
    checkSize(next);
    this.write(place, next);
    return true;
  }

  async delete(key: Key, condition?: Condition): Promise<boolean> {
    await turn();
    const k = this.checkKey(key);
    if (condition !== undefined) checkCondition(condition);
    const place = this.locate(k);
    const existing = place.found ? place.partition[place.index] : undefined;
    if (condition !== undefined && !holds(condition, existing)) return false;
    if (place.found) {
      place.partition.splice(place.index, 1);
      if (place.partition.length === 0) this.partitions.delete(place.name);
    }
    return true;
  }

  async query(input: QueryInput): Promise<QueryPage> {
    await turn();
    const { partitionKey, sortKey } = this.keySchema;
    const partitionName = input.partition.S;
    if (partitionName === undefined || partitionName === "") {
      throw validation(`Query condition on ${partitionKey} must be a non-empty string`);
    }
    if (input.limit !== undefined && !(Number.isInteger(input.limit) && input.limit >= 1)) {
      throw validation("Limit must be an integer of at least 1");
    }
    if (input.sortKey !== undefined) this.checkSortKeyCondition(input.sortKey);
    if (input.filter !== undefined) checkCondition(input.filter);
    let candidates = (this.partitions.get(partitionName) ?? []).filter(
      (item) =>
        input.sortKey === undefined ||
        inRange(input.sortKey, (item as Item)[sortKey?.name ?? ""] as AttributeValue),
    );
    if (input.descending) candidates = candidates.reverse();
    if (input.startKey !== undefined) {
      const start = this.checkKey(input.startKey, "The provided starting key is invalid");
      if (start[partitionKey]?.S !== partitionName) {
        throw validation("The provided starting key is invalid: it names another partition");
      }
      if (sortKey === undefined) {
        candidates = [];
      } else {
        const from = start[sortKey.name] as AttributeValue;
        candidates = candidates.filter((item) => {
          const c = compareValues(item[sortKey.name] as AttributeValue, from);
          return input.descending ? c < 0 : c > 0;
        });
      }
    }
    const items: Item[] = [];
    let evaluated = 0;
    let bytes = 0;
    for (const item of candidates) {
      evaluated++;
      bytes += itemSize(item);
      if (input.filter === undefined || holds(input.filter, item)) items.push(copy(item));
      const full = input.limit !== undefined && evaluated >= input.limit;
      if (full || bytes >= MAX_PAGE_BYTES) return { items, lastKey: this.keyOf(item) };
    }
    return { items };
  }

  // ---- internals ----

  private keyOf(item: Item): Key {
    const { partitionKey, sortKey } = this.keySchema;
    const key: Key = {};
    if (item[partitionKey] !== undefined) key[partitionKey] = copy(item[partitionKey]);
    if (sortKey !== undefined && item[sortKey.name] !== undefined) {
      key[sortKey.name] = copy(item[sortKey.name]);
    }
    return key;
  }

  /** A key with exactly the schema's attributes, of the schema's types, strings non-empty. */
  private checkKey(key: Key, message = "The provided key element does not match the schema"): Key {
    const { partitionKey, sortKey } = this.keySchema;
    const names = Object.keys(key);
    const expected = sortKey === undefined ? 1 : 2;
    const pk = key[partitionKey];
    const sk = sortKey === undefined ? undefined : key[sortKey.name];
    if (names.length !== expected || pk?.S === undefined || typeOf(pk) !== "S") {
      throw validation(message);
    }
    if (sortKey !== undefined && (sk === undefined || typeOf(sk) !== sortKey.type)) {
      throw validation(message);
    }
    if (pk.S === "" || sk?.S === "") {
      throw validation(
        "One or more parameter values are not valid. The AttributeValue for a key attribute " +
          "cannot contain an empty string value.",
      );
    }
    if (sk?.N !== undefined) parseDecimal(sk.N);
    return key;
  }

  private checkUpdate(update: Update): void {
    const { partitionKey, sortKey } = this.keySchema;
    const seen = new Set<string>();
    const touched = [
      ...Object.keys(update.set ?? {}),
      ...(update.remove ?? []),
      ...Object.keys(update.add ?? {}),
      ...Object.keys(update.delete ?? {}),
    ];
    if (touched.length === 0) throw validation("The update expression is empty");
    for (const attr of touched) {
      if (attr === partitionKey || attr === sortKey?.name) {
        throw validation(`Cannot update attribute ${attr}. This attribute is part of the key`);
      }
      if (seen.has(attr)) {
        throw validation(`Invalid UpdateExpression: Two document paths overlap: [${attr}]`);
      }
      seen.add(attr);
    }
    for (const value of [
      ...Object.values(update.set ?? {}),
      ...Object.values(update.add ?? {}),
      ...Object.values(update.delete ?? {}),
    ]) {
      checkValue(value);
    }
  }

  private checkSortKeyCondition(c: SortKeyCondition): void {
    const sortKey = this.keySchema.sortKey;
    if (sortKey === undefined) throw validation("Query key condition names no sort key");
    const bounds = c.op === ">=" ? [c.value] : [c.low, c.high];
    for (const b of bounds) {
      if (typeOf(b) !== sortKey.type) throw validation("Query key condition has the wrong type");
      checkValue(b);
    }
    if (c.op === "between" && compareValues(c.low, c.high) > 0) {
      throw validation(
        "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be " +
          "greater than or equal to lower bound",
      );
    }
  }

  /** Where the key's item is (or would be inserted) in its partition. */
  private locate(key: Key) {
    const { partitionKey, sortKey } = this.keySchema;
    const name = key[partitionKey]?.S as string;
    const partition = this.partitions.get(name) ?? [];
    if (sortKey === undefined) return { name, partition, index: 0, found: partition.length > 0 };
    const target = key[sortKey.name] as AttributeValue;
    let lo = 0;
    let hi = partition.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareValues((partition[mid] as Item)[sortKey.name] as AttributeValue, target) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    const at = partition[lo];
    const found =
      at !== undefined && compareValues(at[sortKey.name] as AttributeValue, target) === 0;
    return { name, partition, index: lo, found };
  }

  private write(place: ReturnType<MemoryItemStore["locate"]>, item: Item): void {
    if (place.found) place.partition[place.index] = item;
    else place.partition.splice(place.index, 0, item);
    this.partitions.set(place.name, place.partition);
  }
}

// ---- values ---------------------------------------------------------------------------------

/** Lets other callers run first, as a network round trip would. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const copy = <T>(value: T): T => structuredClone(value);

function validation(message: string): Error {
  const err = new Error(message);
  err.name = "ValidationException";
  return err;
}

const operandType = (verb: string, attr: string) =>
  validation(
    `An operand in the update expression has an incorrect data type (${verb} on ${attr}, ` +
      "which is not a string set)",
  );

type TypeTag = keyof AttributeValue;

function typeOf(value: AttributeValue): TypeTag {
  const tags = Object.keys(value).filter(
    (k) => (value as unknown as Record<string, unknown>)[k] !== undefined && k !== "$unknown",
  );
  if (tags.length !== 1) throw validation("An AttributeValue must have exactly one type");
  return tags[0] as TypeTag;
}

/** Rejects what DynamoDB rejects in an attribute value. */
function checkValue(value: AttributeValue): void {
  const tag = typeOf(value);
  if (tag === "N") parseDecimal(value.N as string);
  if (tag === "SS" || tag === "NS" || tag === "BS") {
    const list = (value as unknown as Record<string, unknown[]>)[tag] as unknown[];
    if (list.length === 0)
      throw validation("One or more parameter values were invalid: An set may not be empty");
    const canonical = list.map((v) =>
      tag === "NS"
        ? canonicalNumber(v as string)
        : tag === "BS"
          ? Buffer.from(v as Uint8Array).toString("hex")
          : v,
    );
    if (new Set(canonical).size !== list.length) {
      throw validation(
        "One or more parameter values were invalid: Input collection contains duplicates",
      );
    }
  }
  if (tag === "L") for (const v of value.L as AttributeValue[]) checkValue(v);
  if (tag === "M") for (const v of Object.values(value.M as Item)) checkValue(v);
}

function checkCondition(c: Condition): void {
  if (c.kind === "and" || c.kind === "or") {
    if (c.of.length === 0) throw validation("Invalid ConditionExpression: empty AND/OR");
    for (const o of c.of) checkCondition(o);
  } else if (c.kind === "compare") {
    checkValue(c.value);
    const tag = typeOf(c.value);
    if (c.op !== "=" && tag !== "S" && tag !== "N" && tag !== "B") {
      throw validation(
        `Invalid ConditionExpression: Incorrect operand type for operator or function; ` +
          `operator: ${c.op}, operand type: ${tag}`,
      );
    }
  }
}

/** Evaluates a condition on an item (undefined: no item), as DynamoDB does. */
function holds(c: Condition, item: Item | undefined): boolean {
  switch (c.kind) {
    case "exists":
      return item?.[c.attr] !== undefined;
    case "notExists":
      return item?.[c.attr] === undefined;
    case "and":
      return c.of.every((o) => holds(o, item));
    case "or":
      return c.of.some((o) => holds(o, item));
    case "compare": {
      const actual = item?.[c.attr];
      if (actual === undefined || typeOf(actual) !== typeOf(c.value)) return false;
      if (c.op === "=") return equalValues(actual, c.value);
      const order = compareValues(actual, c.value);
      return c.op === "<" ? order < 0 : order <= 0;
    }
  }
}

function equalValues(a: AttributeValue, b: AttributeValue): boolean {
  const tag = typeOf(a);
  if (tag !== typeOf(b)) return false;
  switch (tag) {
    case "S":
    case "N":
    case "B":
      return compareValues(a, b) === 0;
    case "BOOL":
      return a.BOOL === b.BOOL;
    case "NULL":
      return true;
    case "SS":
    case "NS":
    case "BS": {
      const canon = (v: AttributeValue) =>
        new Set(
          ((v as unknown as Record<string, unknown[]>)[tag] as unknown[]).map((x) =>
            tag === "NS"
              ? canonicalNumber(x as string)
              : tag === "BS"
                ? Buffer.from(x as Uint8Array).toString("hex")
                : x,
          ),
        );
      const x = canon(a);
      const y = canon(b);
      return x.size === y.size && [...x].every((e) => y.has(e));
    }
    case "L": {
      const x = a.L as AttributeValue[];
      const y = b.L as AttributeValue[];
      return x.length === y.length && x.every((v, i) => equalValues(v, y[i] as AttributeValue));
    }
    case "M": {
      const x = a.M as Item;
      const y = b.M as Item;
      const keys = Object.keys(x);
      return (
        keys.length === Object.keys(y).length &&
        keys.every((k) => y[k] !== undefined && equalValues(x[k] as AttributeValue, y[k]))
      );
    }
    default:
      return false;
  }
}

/** Order of two scalars of one type: numbers by value, strings by UTF-8 bytes, binaries bytewise. */
function compareValues(a: AttributeValue, b: AttributeValue): number {
  if (a.N !== undefined && b.N !== undefined) return compareDecimal(a.N, b.N);
  if (a.S !== undefined && b.S !== undefined) {
    return Buffer.compare(Buffer.from(a.S, "utf8"), Buffer.from(b.S, "utf8"));
  }
  if (a.B !== undefined && b.B !== undefined)
    return Buffer.compare(Buffer.from(a.B), Buffer.from(b.B));
  throw validation("Cannot order values of different or non-scalar types");
}

function inRange(c: SortKeyCondition, value: AttributeValue): boolean {
  if (c.op === ">=") return compareValues(value, c.value) >= 0;
  return compareValues(value, c.low) >= 0 && compareValues(value, c.high) <= 0;
}

/** A DynamoDB number as mantissa × 10^exponent; malformed or out-of-range numbers are rejected. */
function parseDecimal(text: string): { mantissa: bigint; exponent: number } {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (m === null || ((m[2] ?? "") === "" && (m[3] ?? "") === "")) {
    throw validation(`The parameter cannot be converted to a numeric value: ${text}`);
  }
  const fraction = m[3] ?? "";
  const digits = `${m[2] ?? ""}${fraction}`.replace(/^0+/, "");
  const exponent = Number(m[4] ?? "0") - fraction.length;
  if (digits === "") return { mantissa: 0n, exponent: 0 };
  const significant = digits.replace(/0+$/, "");
  if (significant.length > 38) {
    throw validation(`Attempting to store more than 38 significant digits in a Number: ${text}`);
  }
  const magnitude = exponent + digits.length - 1;
  if (magnitude > 125 || magnitude < -130) {
    throw validation(`Number overflow or underflow: ${text}`);
  }
  const mantissa = BigInt(digits);
  return { mantissa: m[1] === "-" ? -mantissa : mantissa, exponent };
}

function compareDecimal(a: string, b: string): number {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const e = Math.min(x.exponent, y.exponent);
  const l = x.mantissa * 10n ** BigInt(x.exponent - e);
  const r = y.mantissa * 10n ** BigInt(y.exponent - e);
  return l < r ? -1 : l > r ? 1 : 0;
}

function canonicalNumber(text: string): string {
  const { mantissa, exponent } = parseDecimal(text);
  if (mantissa === 0n) return "0";
  let m = mantissa;
  let e = exponent;
  while (m % 10n === 0n) {
    m /= 10n;
    e++;
  }
  return `${m}e${e}`;
}

/** DynamoDB's item size: attribute names plus values (UTF-8 lengths, numbers ~1 byte per 2 digits). */
function itemSize(item: Item): number {
  let n = 0;
  for (const [name, value] of Object.entries(item)) n += Buffer.byteLength(name) + valueSize(value);
  return n;
}

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/[^0-9]/g, "").length / 2) + 1;
  if (value.B !== undefined) return value.B.length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((n, s) => n + Buffer.byteLength(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((n, s) => n + valueSize({ N: s }), 0);
  if (value.BS !== undefined) return value.BS.reduce((n, b) => n + b.length, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((n, v) => n + 1 + valueSize(v), 0);
  if (value.M !== undefined) return 3 + itemSize(value.M) + Object.keys(value.M).length;
  return 0;
}

function checkSize(item: Item): void {
  if (itemSize(item) > MAX_ITEM_BYTES) {
    throw validation("Item size has exceeded the maximum allowed size");
  }
}
