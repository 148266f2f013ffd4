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
