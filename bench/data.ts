/**
 * The reference data shape of shared/reference/parquet-libraries.md §0, generated straight into
 * Arrow buffers: going through JS row objects would cost more than the operations measured.
 */
import * as arrow from "apache-arrow";

export const COLUMNS = [
  { name: "id", type: "BIGINT" },
  { name: "customer", type: "STRING" },
  { name: "amount", type: "DOUBLE" },
  { name: "day", type: "DATE" },
  { name: "flag", type: "BOOLEAN" },
];

/** Aggregates both sides of every benchmark are checked against. */
export interface Checks {
  count: number;
  sumId: string;
  countCustomer: number;
  sumAmount: number;
  countDay: number;
  sumFlag: number;
  countFlag: number;
}

// mulberry32: tiny, seedable, and identical on every run and platform.
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EPOCH_2024 = 19_723; // 2024-01-01 as days since 1970-01-01

class Bitmap {
  readonly bytes: Uint8Array;
  nulls = 0;
  constructor(n: number) {
    this.bytes = new Uint8Array(Math.ceil(n / 8)).fill(0xff);
  }
  clear(i: number): void {
    this.bytes[i >> 3] &= ~(1 << (i & 7));
  }
}

/** `firstId` shifts the `id` range so separate batches can cover disjoint, increasing ranges. */
export function generate(n: number, seed = 42, firstId = 0): arrow.Table {
  const rnd = prng(seed);
  const ids = new BigInt64Array(n);
  const custOffsets = new Int32Array(n + 1);
  const custBytes = new Uint8Array(n * 14);
  const custValid = new Bitmap(n);
  const amounts = new Float64Array(n);
  const amountValid = new Bitmap(n);
  const days = new Int32Array(n);
  const dayValid = new Bitmap(n);
  const flags = new Uint8Array(Math.ceil(n / 8));
  const flagValid = new Bitmap(n);
  const prefix = Buffer.from("customer_");

  let pos = 0;
  for (let i = 0; i < n; i++) {
    ids[i] = BigInt(firstId + i);
    if (rnd() < 0.02) {
      custValid.clear(i);
      custValid.nulls++;
    } else {
      custBytes.set(prefix, pos);
      const k = Math.floor(rnd() * 50_000);
      const digits = String(k).padStart(5, "0");
      for (let d = 0; d < 5; d++) custBytes[pos + 9 + d] = digits.charCodeAt(d);
      pos += 14;
    }
    custOffsets[i + 1] = pos;
    if (rnd() < 0.05) {
      amountValid.clear(i);
      amountValid.nulls++;
    } else {
      amounts[i] = Math.round(rnd() * 1_000_000) / 100;
    }
    if (rnd() < 0.01) {
      dayValid.clear(i);
      dayValid.nulls++;
    } else {
      days[i] = EPOCH_2024 + Math.floor(rnd() * 366);
    }
    if (rnd() < 0.03) {
      flagValid.clear(i);
      flagValid.nulls++;
    } else if (rnd() < 0.3) {
      flags[i >> 3] |= 1 << (i & 7);
    }
  }

  const make = (type: arrow.DataType, extra: Record<string, unknown>, valid?: Bitmap): arrow.Data =>
    arrow.makeData({
      type,
      length: n,
      nullCount: valid?.nulls ?? 0,
      nullBitmap: valid && valid.nulls > 0 ? valid.bytes : undefined,
      ...extra,
    } as never);

  const fields = [
    new arrow.Field("id", new arrow.Int64(), true),
    new arrow.Field("customer", new arrow.Utf8(), true),
    new arrow.Field("amount", new arrow.Float64(), true),
    new arrow.Field("day", new arrow.DateDay(), true),
    new arrow.Field("flag", new arrow.Bool(), true),
  ];
  const children = [
    make(fields[0].type, { data: ids }),
    make(
      fields[1].type,
      { valueOffsets: custOffsets, data: custBytes.subarray(0, pos) },
      custValid,
    ),
    make(fields[2].type, { data: amounts }, amountValid),
    make(fields[3].type, { data: days }, dayValid),
    make(fields[4].type, { data: flags }, flagValid),
  ];
  const schema = new arrow.Schema(fields);
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children }),
  );
  return new arrow.Table(schema, [batch]);
}

const isValid = (d: arrow.Data, i: number): boolean => {
  if (d.nullCount === 0 || !d.nullBitmap) return true;
  const j = d.offset + i;
  return (d.nullBitmap[j >> 3] & (1 << (j & 7))) !== 0;
};

/**
 * Aggregates over the typed buffers of any table with the five reference columns, whatever its
 * chunking: the same checks DuckDB computes on the files Silt wrote.
 */
export function computeChecks(table: arrow.Table): Checks {
  const c: Checks = {
    count: table.numRows,
    sumId: "0",
    countCustomer: 0,
    sumAmount: 0,
    countDay: 0,
    sumFlag: 0,
    countFlag: 0,
  };
  let sumId = 0n;
  const col = (name: string) => {
    const v = table.getChild(name);
    if (!v) throw new Error(`result has no column ${name}`);
    return v.data;
  };
  for (const d of col("id")) {
    const values = d.values as BigInt64Array;
    for (let i = 0; i < d.length; i++) if (isValid(d, i)) sumId += values[i];
  }
  c.sumId = sumId.toString();
  for (const d of col("customer")) c.countCustomer += d.length - d.nullCount;
  for (const d of col("amount")) {
    const values = d.values as Float64Array;
    for (let i = 0; i < d.length; i++) if (isValid(d, i)) c.sumAmount += values[i];
  }
  for (const d of col("day")) c.countDay += d.length - d.nullCount;
  for (const d of col("flag")) {
    c.countFlag += d.length - d.nullCount;
    for (let i = 0; i < d.length; i++) {
      const j = d.offset + i;
      if (isValid(d, i) && (d.values[j >> 3] & (1 << (j & 7))) !== 0) c.sumFlag++;
    }
  }
  c.sumAmount = Math.round(c.sumAmount * 100) / 100;
  return c;
}

/** Equal, with float sums allowed to differ by summation order. */
export function sameChecks(a: Checks, b: Checks): boolean {
  const close = Math.abs(a.sumAmount - b.sumAmount) <= 1e-6 * Math.max(1, Math.abs(a.sumAmount));
  return (
    close &&
    a.count === b.count &&
    a.sumId === b.sumId &&
    a.countCustomer === b.countCustomer &&
    a.countDay === b.countDay &&
    a.sumFlag === b.sumFlag &&
    a.countFlag === b.countFlag
  );
}

// ---------------------------------------------------------------------------------------------
// Keyed rows for the 10M-row tables: every column is a pure function of (id, version), so the
// same rows can be laid out by id range (unpartitioned) or by day (partitioned), a change can be
// replayed in JS as the oracle both engines are checked against, and no 10M-row table is ever
// held in memory to compute an expectation.

/** Distinct `day` values of the keyed tables: replace-where swaps one of them. */
export const KEYED_DAYS = 100;

/** 32-bit avalanche (the "lowbias32" finalizer): a cheap per-id seed with no visible pattern. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** 0..KEYED_DAYS-1; a function of the id alone, so a replacement keeps each row's day. */
export const keyedDayIndex = (id: number): number => mix32(id ^ 0x5bd1e995) % KEYED_DAYS;
/** Days since 1970-01-01. */
export const keyedDay = (id: number): number => EPOCH_2024 + keyedDayIndex(id);

/** One keyed row; `customer` is the number k of `customer_<k>` (5 digits), or null. */
export interface KeyedRow {
  customer: number | null;
  /** Whole cents (amount = cents / 100), so sums can be checked exactly. */
  cents: number | null;
  flag: boolean | null;
}

// One mulberry32 stream per row, inlined on module state: 10M closures would cost more than the
// values they produce.
let state = 0;
function next(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/**
 * Same null rates and ranges as `generate`: customer ~2% null of 50k, amount ~5% null in
 * 0..10,000.00, flag ~3% null and ~30% true. `version` 1 is "the new data" of a change.
 */
export function keyedRow(id: number, version: number, out: KeyedRow): KeyedRow {
  state = mix32(id ^ mix32(version + 0x9e3779b9));
  out.customer = next() < 0.02 ? null : Math.floor(next() * 50_000);
  out.cents = next() < 0.05 ? null : Math.round(next() * 1_000_000);
  out.flag = next() < 0.03 ? null : next() < 0.3;
  return out;
}

/** Arrow rows for the given ids, each at the version `versionOf` gives it. */
export function generateKeyed(
  ids: ArrayLike<number>,
  versionOf: (id: number) => number = () => 0,
): arrow.Table {
  const n = ids.length;
  const idValues = new BigInt64Array(n);
  const custOffsets = new Int32Array(n + 1);
  const custBytes = new Uint8Array(n * 14);
  const custValid = new Bitmap(n);
  const amounts = new Float64Array(n);
  const amountValid = new Bitmap(n);
  const days = new Int32Array(n);
  const flags = new Uint8Array(Math.ceil(n / 8));
  const flagValid = new Bitmap(n);
  const prefix = Buffer.from("customer_");
  const row: KeyedRow = { customer: null, cents: null, flag: null };
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    keyedRow(id, versionOf(id), row);
    idValues[i] = BigInt(id);
    if (row.customer === null) {
      custValid.clear(i);
      custValid.nulls++;
    } else {
      custBytes.set(prefix, pos);
      const digits = String(row.customer).padStart(5, "0");
      for (let d = 0; d < 5; d++) custBytes[pos + 9 + d] = digits.charCodeAt(d);
      pos += 14;
    }
    custOffsets[i + 1] = pos;
    if (row.cents === null) {
      amountValid.clear(i);
      amountValid.nulls++;
    } else {
      amounts[i] = row.cents / 100;
    }
    days[i] = keyedDay(id);
    if (row.flag === null) {
      flagValid.clear(i);
      flagValid.nulls++;
    } else if (row.flag) {
      flags[i >> 3] |= 1 << (i & 7);
    }
  }
  const fields = [
    new arrow.Field("id", new arrow.Int64(), true),
    new arrow.Field("customer", new arrow.Utf8(), true),
    new arrow.Field("amount", new arrow.Float64(), true),
    new arrow.Field("day", new arrow.DateDay(), true),
    new arrow.Field("flag", new arrow.Bool(), true),
  ];
  const make = (type: arrow.DataType, extra: Record<string, unknown>, valid?: Bitmap): arrow.Data =>
    arrow.makeData({
      type,
      length: n,
      nullCount: valid?.nulls ?? 0,
      nullBitmap: valid && valid.nulls > 0 ? valid.bytes : undefined,
      ...extra,
    } as never);
  const children = [
    make(fields[0].type, { data: idValues }),
    make(
      fields[1].type,
      { valueOffsets: custOffsets, data: custBytes.subarray(0, pos) },
      custValid,
    ),
    make(fields[2].type, { data: amounts }, amountValid),
    make(fields[3].type, { data: days }),
    make(fields[4].type, { data: flags }, flagValid),
  ];
  const schema = new arrow.Schema(fields);
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children }),
  );
  return new arrow.Table(schema, [batch]);
}

/**
 * Exact aggregates of a keyed table, the same select list on both engines (`KEYED_CHECKS_SQL`):
 * integer sums only, so a single wrong row shows.
 */
export interface KeyedChecks {
  count: number;
  sumId: string;
  countCustomer: number;
  /** Rows whose customer is 'updated' (what the UPDATE case sets). */
  countUpdated: number;
  /** sum(round(amount * 100)) as an integer. */
  sumCents: string;
  countDay: number;
  /** Rows on the replaced day. */
  countDayX: number;
  sumFlag: number;
  countFlag: number;
}

/** The day replace-where swaps: 2024-02-12, one of the 100. */
export const DAY_X_INDEX = 42;
export const DAY_X = EPOCH_2024 + DAY_X_INDEX;
export const DAY_X_SQL = "DATE'2024-02-12'";

/**
 * Select list of `KeyedChecks`, in its field order, valid in Spark SQL (Silt) and DuckDB alike.
 * `q` quotes a logical column name into the relation's (possibly physical) name.
 */
export function keyedChecksSql(q: (name: string) => string = (n) => n): string {
  return [
    "count(*)",
    `sum(${q("id")})`,
    `count(${q("customer")})`,
    `count(CASE WHEN ${q("customer")} = 'updated' THEN 1 END)`,
    `sum(CAST(round(${q("amount")} * 100) AS BIGINT))`,
    `count(${q("day")})`,
    `count(CASE WHEN ${q("day")} = ${DAY_X_SQL} THEN 1 END)`,
    `sum(CAST(${q("flag")} AS INT))`,
    `count(${q("flag")})`,
  ].join(", ");
}

/** A row of the `keyedChecksSql` answer, whichever engine and value types gave it. */
export function keyedChecksOf(values: readonly unknown[]): KeyedChecks {
  const int = (v: unknown) => (v === null || v === undefined ? "0" : String(v));
  const num = (v: unknown) => Number(int(v));
  return {
    count: num(values[0]),
    sumId: int(values[1]),
    countCustomer: num(values[2]),
    countUpdated: num(values[3]),
    sumCents: int(values[4]),
    countDay: num(values[5]),
    countDayX: num(values[6]),
    sumFlag: num(values[7]),
    countFlag: num(values[8]),
  };
}

/**
 * The oracle: aggregates of a keyed table holding, for each id in 0..idEnd-1, the row at
 * `versionOf(id)` (undefined = no such row), with the UPDATE case's change (customer 'updated',
 * amount doubled) applied where `updated(id)`; computed in JS from the generator, never from
 * what an engine wrote.
 */
export function expectKeyed(
  idEnd: number,
  versionOf: (id: number) => number | undefined,
  updated: (id: number) => boolean = () => false,
): KeyedChecks {
  const r: KeyedRow = { customer: null, cents: null, flag: null };
  let count = 0;
  let sumId = 0;
  let countCustomer = 0;
  let countUpdated = 0;
  let sumCents = 0;
  let countDayX = 0;
  let sumFlag = 0;
  let countFlag = 0;
  for (let id = 0; id < idEnd; id++) {
    const version = versionOf(id);
    if (version === undefined) continue;
    keyedRow(id, version, r);
    count++;
    sumId += id;
    if (updated(id)) {
      countCustomer++;
      countUpdated++;
      if (r.cents !== null) sumCents += 2 * r.cents;
    } else {
      if (r.customer !== null) countCustomer++;
      if (r.cents !== null) sumCents += r.cents;
    }
    if (keyedDay(id) === DAY_X) countDayX++;
    if (r.flag !== null) {
      countFlag++;
      if (r.flag) sumFlag++;
    }
  }
  // Both sums stay far below 2^53 (ids < 2^24 x 10^7 rows; cents < 10^6 x 10^7), so exact.
  return {
    count,
    sumId: String(sumId),
    countCustomer,
    countUpdated,
    sumCents: String(sumCents),
    countDay: count,
    countDayX,
    sumFlag,
    countFlag,
  };
}

export const sameKeyed = (a: KeyedChecks, b: KeyedChecks): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/** Running `KeyedChecks` over Arrow tables of the five columns, chunk by chunk. */
export class KeyedAccumulator {
  count = 0;
  #sumId = 0;
  #countCustomer = 0;
  #countUpdated = 0;
  #sumCents = 0;
  #countDay = 0;
  #countDayX = 0;
  #sumFlag = 0;
  #countFlag = 0;

  add(table: arrow.Table): void {
    const col = (name: string) => {
      const v = table.getChild(name);
      if (!v) throw new Error(`result has no column ${name}`);
      return v;
    };
    this.count += table.numRows;
    for (const d of col("id").data) {
      const values = d.values as BigInt64Array;
      // Read as 32-bit halves (little-endian): 10M BigInt conversions would cost a second.
      const w = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
      for (let i = 0; i < d.length; i++) {
        if (isValid(d, i)) this.#sumId += (w[2 * i] >>> 0) + w[2 * i + 1] * 4294967296;
      }
    }
    const updated = Buffer.from("updated");
    for (const d of col("customer").data) {
      this.#countCustomer += d.length - d.nullCount;
      const offsets = d.valueOffsets as Int32Array;
      const bytes = d.values as Uint8Array;
      for (let i = 0; i < d.length; i++) {
        const a = offsets[i];
        const b = offsets[i + 1];
        if (b - a === updated.length && isValid(d, i) && bytes[a] === 0x75) {
          // Generated customers are all `customer_NNNNN` (14 bytes): a 7-byte value starting
          // with "u" can only be the UPDATE's, but compare it whole all the same.
          if (updated.equals(bytes.subarray(a, b))) this.#countUpdated++;
        }
      }
    }
    for (const d of col("amount").data) {
      const values = d.values as Float64Array;
      for (let i = 0; i < d.length; i++) {
        if (isValid(d, i)) this.#sumCents += Math.round(values[i] * 100);
      }
    }
    for (const d of col("day").data) {
      // Readers build Date_ with unit DAY rather than the DateDay subclass: test the unit.
      if ((d.type as arrow.Date_).unit !== arrow.DateUnit.DAY) throw new Error(`day is ${d.type}`);
      const values = d.values as Int32Array;
      this.#countDay += d.length - d.nullCount;
      for (let i = 0; i < d.length; i++)
        if (values[i] === DAY_X && isValid(d, i)) this.#countDayX++;
    }
    for (const d of col("flag").data) {
      this.#countFlag += d.length - d.nullCount;
      for (let i = 0; i < d.length; i++) {
        const j = d.offset + i;
        if (isValid(d, i) && (d.values[j >> 3] & (1 << (j & 7))) !== 0) this.#sumFlag++;
      }
    }
  }

  result(): KeyedChecks {
    return {
      count: this.count,
      sumId: String(this.#sumId),
      countCustomer: this.#countCustomer,
      countUpdated: this.#countUpdated,
      sumCents: String(this.#sumCents),
      countDay: this.#countDay,
      countDayX: this.#countDayX,
      sumFlag: this.#sumFlag,
      countFlag: this.#countFlag,
    };
  }
}
