/**
 * Arrow columns from JSON values in the accepted input forms of DESIGN §6: one builder per
 * type writes typed arrays directly, validating each value as it goes.
 */
import * as arrow from "apache-arrow";
import { type DataType, type DecimalType, type StructType, toArrowType } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { quotePath } from "../values/identifiers.ts";
import { mapKeyText } from "./json-encoding.ts";
import {
  type Ctx,
  canonical,
  castInvalid,
  columnAlreadyExists,
  duplicateMapKey,
  FieldIndex,
  isPlainObject,
  type Loc,
  mapEntries,
  notNullViolation,
  nullMapKey,
  showValue,
  structInput,
  suggestions,
  toBinary,
  toBool,
  toDate,
  toDecimal,
  toFloating,
  toInt,
  toLong,
  toStr,
  toTimestamp,
} from "./json-input.ts";

const TWO32 = 4294967296;

type Growable =
  | Int8Array
  | Int16Array
  | Int32Array
  | Uint8Array
  | Uint32Array
  | Float32Array
  | Float64Array;

function grow<A extends Growable>(a: A, min: number): A {
  if (a.length >= min) return a;
  const b = new (a.constructor as new (n: number) => A)(Math.max(min, a.length * 2));
  b.set(a);
  return b;
}

abstract class ColumnBuilder implements Loc {
  length = 0;
  nullCount = 0;
  private bitmap: Uint8Array | null = null;

  constructor(
    readonly type: DataType,
    readonly nullable: boolean,
    readonly path: readonly string[],
    readonly ctx: Ctx,
  ) {}

  append(v: unknown): void {
    if (v === null || v === undefined) {
      if (!this.nullable) throw notNullViolation(this.path);
      this.appendNull();
    } else {
      this.pushValue(v);
      if (this.bitmap) this.setValid(this.length);
      this.length++;
    }
  }

  /** A null slot, without the NOT NULL check: used under a null parent. */
  appendNull(): void {
    this.pushEmpty();
    this.setNull(this.length);
    this.length++;
    this.nullCount++;
  }

  protected abstract pushValue(v: unknown): void;
  protected abstract pushEmpty(): void;
  abstract finish(): arrow.Data;

  private setNull(i: number): void {
    if (!this.bitmap) {
      this.bitmap = new Uint8Array(Math.max(64, (i >> 3) * 2 + 8));
      this.bitmap.fill(0xff, 0, i >> 3);
      this.bitmap[i >> 3] = (1 << (i & 7)) - 1;
      return;
    }
    this.ensureBitmap(i);
    this.bitmap[i >> 3] &= ~(1 << (i & 7));
  }

  private setValid(i: number): void {
    this.ensureBitmap(i);
    const bm = this.bitmap as Uint8Array;
    bm[i >> 3] |= 1 << (i & 7);
  }

  private ensureBitmap(i: number): void {
    const bm = this.bitmap as Uint8Array;
    if (bm.length <= i >> 3) this.bitmap = grow(bm, (i >> 3) + 1);
  }

  protected nullBitmap(): Uint8Array | undefined {
    return this.nullCount === 0 ? undefined : this.bitmap?.subarray(0, (this.length + 7) >> 3);
  }

  protected dataProps() {
    return { length: this.length, nullCount: this.nullCount, nullBitmap: this.nullBitmap() };
  }
}

class IntBuilder extends ColumnBuilder {
  private values: Int8Array | Int16Array | Int32Array;
  constructor(
    private readonly kind: "byte" | "short" | "integer",
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
  ) {
    super(kind, nullable, path, ctx);
    this.values =
      kind === "byte"
        ? new Int8Array(capacity)
        : kind === "short"
          ? new Int16Array(capacity)
          : new Int32Array(capacity);
  }
  protected pushValue(v: unknown): void {
    const n = toInt(v, this.kind, this);
    this.values = grow(this.values, this.length + 1);
    this.values[this.length] = n;
  }
  protected pushEmpty(): void {
    this.values = grow(this.values, this.length + 1);
  }
  finish(): arrow.Data {
    const type = toArrowType(this.kind) as arrow.Int8;
    return arrow.makeData({
      type,
      ...this.dataProps(),
      data: this.values.subarray(0, this.length) as Int8Array,
    });
  }
}

/** 64-bit values, written through an Int32 view so safe integers never become bigints. */
class Int64Builder extends ColumnBuilder {
  private words: Int32Array;
  constructor(
    type: DataType,
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
    private readonly convert: (v: unknown, loc: Loc) => number | bigint,
  ) {
    super(type, nullable, path, ctx);
    this.words = new Int32Array(capacity * 2);
  }
  protected pushValue(v: unknown): void {
    const n = this.convert(v, this);
    this.words = grow(this.words, (this.length + 1) * 2);
    const i = this.length * 2;
    if (typeof n === "number") {
      const hi = Math.floor(n / TWO32);
      this.words[i] = n - hi * TWO32;
      this.words[i + 1] = hi;
    } else {
      this.words[i] = Number(BigInt.asIntN(32, n));
      this.words[i + 1] = Number(BigInt.asIntN(32, n >> 32n));
    }
  }
  protected pushEmpty(): void {
    this.words = grow(this.words, (this.length + 1) * 2);
  }
  finish(): arrow.Data {
    const data = new BigInt64Array(this.words.buffer, 0, this.length);
    return arrow.makeData({
      type: toArrowType(this.type) as arrow.Int64,
      ...this.dataProps(),
      data,
    });
  }
}

class FloatBuilder extends ColumnBuilder {
  private values: Float32Array | Float64Array;
  constructor(
    private readonly kind: "float" | "double",
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
  ) {
    super(kind, nullable, path, ctx);
    this.values = kind === "float" ? new Float32Array(capacity) : new Float64Array(capacity);
  }
  protected pushValue(v: unknown): void {
    const n = typeof v === "number" ? v : toFloating(v, this.kind, this);
    this.values = grow(this.values, this.length + 1);
    this.values[this.length] = n;
  }
  protected pushEmpty(): void {
    this.values = grow(this.values, this.length + 1);
  }
  finish(): arrow.Data {
    const type = toArrowType(this.kind) as arrow.Float64;
    return arrow.makeData({
      type,
      ...this.dataProps(),
      data: this.values.subarray(0, this.length) as Float64Array,
    });
  }
}

class BoolBuilder extends ColumnBuilder {
  private bits: Uint8Array;
  constructor(nullable: boolean, path: readonly string[], ctx: Ctx, capacity: number) {
    super("boolean", nullable, path, ctx);
    this.bits = new Uint8Array((capacity + 7) >> 3);
  }
  protected pushValue(v: unknown): void {
    const b = typeof v === "boolean" ? v : toBool(v, this);
    this.bits = grow(this.bits, (this.length >> 3) + 1);
    if (b) this.bits[this.length >> 3] |= 1 << (this.length & 7);
  }
  protected pushEmpty(): void {
    this.bits = grow(this.bits, (this.length >> 3) + 1);
  }
  finish(): arrow.Data {
    return arrow.makeData({
      type: new arrow.Bool(),
      ...this.dataProps(),
      data: this.bits.subarray(0, (this.length + 7) >> 3),
    });
  }
}

const encoder = new TextEncoder();

/** Utf8 and Binary: Int32 offsets plus one byte buffer. */
class VarBinaryBuilder extends ColumnBuilder {
  private offsets: Int32Array;
  private bytes: Uint8Array;
  private end = 0;
  constructor(
    private readonly kind: "string" | "binary",
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
  ) {
    super(kind, nullable, path, ctx);
    this.offsets = new Int32Array(capacity + 1);
    this.bytes = new Uint8Array(Math.max(64, capacity * 8));
  }
  protected pushValue(v: unknown): void {
    if (this.kind === "string") {
      const s = typeof v === "string" ? v : toStr(v, this);
      // Worst case 3 bytes per UTF-16 unit.
      this.bytes = grow(this.bytes, this.end + s.length * 3);
      let pos = this.end;
      let i = 0;
      const bytes = this.bytes;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        bytes[pos++] = c;
      }
      if (i < s.length) pos += encoder.encodeInto(s.slice(i), bytes.subarray(pos)).written;
      this.end = pos;
    } else {
      const b = toBinary(v, this);
      this.bytes = grow(this.bytes, this.end + b.length);
      this.bytes.set(b, this.end);
      this.end += b.length;
    }
    this.pushOffset();
  }
  protected pushEmpty(): void {
    this.pushOffset();
  }
  private pushOffset(): void {
    this.offsets = grow(this.offsets, this.length + 2);
    this.offsets[this.length + 1] = this.end;
  }
  finish(): arrow.Data {
    const props = {
      ...this.dataProps(),
      valueOffsets: this.offsets.subarray(0, this.length + 1),
      data: this.bytes.subarray(0, this.end),
    };
    return this.kind === "string"
      ? arrow.makeData({ type: new arrow.Utf8(), ...props })
      : arrow.makeData({ type: new arrow.Binary(), ...props });
  }
}

class DateBuilder extends ColumnBuilder {
  private values: Int32Array;
  // Neighbouring rows often share a date; skip re-parsing the same text.
  private lastText: unknown;
  private lastDays = 0;
  constructor(nullable: boolean, path: readonly string[], ctx: Ctx, capacity: number) {
    super("date", nullable, path, ctx);
    this.values = new Int32Array(capacity);
  }
  protected pushValue(v: unknown): void {
    let d: number;
    if (v === this.lastText) d = this.lastDays;
    else {
      d = toDate(v, this);
      this.lastText = v;
      this.lastDays = d;
    }
    this.values = grow(this.values, this.length + 1);
    this.values[this.length] = d;
  }
  protected pushEmpty(): void {
    this.values = grow(this.values, this.length + 1);
  }
  finish(): arrow.Data {
    return arrow.makeData({
      type: new arrow.DateDay(),
      ...this.dataProps(),
      data: this.values.subarray(0, this.length),
    });
  }
}

class DecimalBuilder extends ColumnBuilder {
  private words: Uint32Array;
  constructor(
    private readonly decimalType: DecimalType,
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
  ) {
    super(decimalType, nullable, path, ctx);
    this.words = new Uint32Array(capacity * 4);
  }
  protected pushValue(v: unknown): void {
    const u = toDecimal(v, this.decimalType, this);
    this.words = grow(this.words, (this.length + 1) * 4);
    const i = this.length * 4;
    const w = this.words;
    if (typeof u === "number") {
      const hi = Math.floor(u / TWO32);
      w[i] = u - hi * TWO32;
      w[i + 1] = hi;
      const ext = u < 0 ? 0xffffffff : 0;
      w[i + 2] = ext;
      w[i + 3] = ext;
    } else {
      const x = BigInt.asUintN(128, u);
      w[i] = Number(x & 0xffffffffn);
      w[i + 1] = Number((x >> 32n) & 0xffffffffn);
      w[i + 2] = Number((x >> 64n) & 0xffffffffn);
      w[i + 3] = Number(x >> 96n);
    }
  }
  protected pushEmpty(): void {
    this.words = grow(this.words, (this.length + 1) * 4);
  }
  finish(): arrow.Data {
    return arrow.makeData({
      type: toArrowType(this.decimalType) as arrow.Decimal,
      ...this.dataProps(),
      data: this.words.subarray(0, this.length * 4),
    });
  }
}

class StructBuilder extends ColumnBuilder {
  readonly children: ColumnBuilder[];
  private readonly index: FieldIndex;
  constructor(
    private readonly structType: StructType,
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
  ) {
    super(structType, nullable, path, ctx);
    this.children = structType.fields.map((f) =>
      makeBuilder(f.type, f.nullable, [...path, f.name], ctx, capacity),
    );
    this.index = new FieldIndex(structType.fields.map((f) => f.name));
  }
  protected pushValue(v: unknown): void {
    const values = structInput(v, this.structType, this, this.index);
    for (let i = 0; i < this.children.length; i++) this.children[i].append(values[i]);
  }
  protected pushEmpty(): void {
    for (const c of this.children) c.appendNull();
  }
  finish(): arrow.Data {
    return arrow.makeData({
      type: toArrowType(this.structType) as arrow.Struct,
      ...this.dataProps(),
      children: this.children.map((c) => c.finish()),
    });
  }
}

class ListBuilder extends ColumnBuilder {
  private offsets: Int32Array;
  private readonly child: ColumnBuilder;
  constructor(
    private readonly listType: Extract<DataType, { type: "array" }>,
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
  ) {
    super(listType, nullable, path, ctx);
    this.offsets = new Int32Array(capacity + 1);
    this.child = makeBuilder(
      listType.elementType,
      listType.containsNull,
      [...path, "element"],
      ctx,
      16,
    );
  }
  protected pushValue(v: unknown): void {
    if (!Array.isArray(v)) castInvalid(v, this.listType, this);
    for (let i = 0; i < v.length; i++) this.child.append(v[i]);
    this.pushOffset();
  }
  protected pushEmpty(): void {
    this.pushOffset();
  }
  private pushOffset(): void {
    this.offsets = grow(this.offsets, this.length + 2);
    this.offsets[this.length + 1] = this.child.length;
  }
  finish(): arrow.Data {
    return arrow.makeData({
      type: toArrowType(this.listType) as arrow.List,
      ...this.dataProps(),
      valueOffsets: this.offsets.subarray(0, this.length + 1),
      child: this.child.finish(),
    });
  }
}

class MapBuilder extends ColumnBuilder {
  private offsets: Int32Array;
  private readonly keys: ColumnBuilder;
  private readonly values: ColumnBuilder;
  private count = 0;
  constructor(
    private readonly mapType: Extract<DataType, { type: "map" }>,
    nullable: boolean,
    path: readonly string[],
    ctx: Ctx,
    capacity: number,
  ) {
    super(mapType, nullable, path, ctx);
    this.offsets = new Int32Array(capacity + 1);
    this.keys = makeBuilder(mapType.keyType, false, [...path, "key"], ctx, 16);
    this.values = makeBuilder(
      mapType.valueType,
      mapType.valueContainsNull,
      [...path, "value"],
      ctx,
      16,
    );
  }
  protected pushValue(v: unknown): void {
    const entries = mapEntries(v, this.mapType.keyType, this, this.mapType);
    const seen = entries.length > 1 ? new Set<string>() : undefined;
    for (const [k, x] of entries) {
      if (k === null || k === undefined) throw nullMapKey();
      if (seen) {
        const key = mapKeyText(canonical(k, this.mapType.keyType, false, this.keys));
        if (seen.has(key)) throw duplicateMapKey(key);
        seen.add(key);
      }
      this.keys.append(k);
      this.values.append(x);
      this.count++;
    }
    this.pushOffset();
  }
  protected pushEmpty(): void {
    this.pushOffset();
  }
  private pushOffset(): void {
    this.offsets = grow(this.offsets, this.length + 2);
    this.offsets[this.length + 1] = this.count;
  }
  finish(): arrow.Data {
    const type = toArrowType(this.mapType) as arrow.Map_;
    const entries = arrow.makeData({
      type: type.children[0].type as arrow.Struct,
      length: this.count,
      nullCount: 0,
      children: [this.keys.finish(), this.values.finish()],
    });
    return arrow.makeData({
      type,
      ...this.dataProps(),
      valueOffsets: this.offsets.subarray(0, this.length + 1),
      child: entries,
    });
  }
}

function makeBuilder(
  type: DataType,
  nullable: boolean,
  path: readonly string[],
  ctx: Ctx,
  capacity: number,
): ColumnBuilder {
  if (typeof type === "string") {
    switch (type) {
      case "byte":
      case "short":
      case "integer":
        return new IntBuilder(type, nullable, path, ctx, capacity);
      case "long":
        return new Int64Builder(type, nullable, path, ctx, capacity, toLong);
      case "timestamp":
        return new Int64Builder(type, nullable, path, ctx, capacity, (v, loc) =>
          toTimestamp(v, false, loc),
        );
      case "timestamp_ntz":
        return new Int64Builder(type, nullable, path, ctx, capacity, (v, loc) =>
          toTimestamp(v, true, loc),
        );
      case "float":
      case "double":
        return new FloatBuilder(type, nullable, path, ctx, capacity);
      case "boolean":
        return new BoolBuilder(nullable, path, ctx, capacity);
      case "string":
      case "binary":
        return new VarBinaryBuilder(type, nullable, path, ctx, capacity);
      case "date":
        return new DateBuilder(nullable, path, ctx, capacity);
    }
  }
  switch (type.type) {
    case "decimal":
      return new DecimalBuilder(type, nullable, path, ctx, capacity);
    case "struct":
      return new StructBuilder(type, nullable, path, ctx, capacity);
    case "array":
      return new ListBuilder(type, nullable, path, ctx, capacity);
    case "map":
      return new MapBuilder(type, nullable, path, ctx, capacity);
    case "unsupported":
      throw siltError("UNSUPPORTED_DATATYPE:COLUMN_TYPE", {
        name: type.name.toUpperCase(),
        path: quotePath(path),
      });
  }
}

export interface RowsToArrowOptions {
  /** Table name used in Spark's error messages ("Cannot write to '<table>', ..."). */
  tableName?: string;
}

/**
 * Builds an Arrow table with the schema's logical names and types from JSON rows: objects keyed
 * by column name (matched ignoring case; absent nullable columns are null) or arrays in column
 * order. Throws Spark's error classes for bad input.
 */
export function rowsToArrow(
  rows: readonly unknown[],
  schema: StructType,
  opts: RowsToArrowOptions = {},
): arrow.Table {
  const ctx: Ctx = { row: -1, table: opts.tableName ?? "table" };
  const fields = schema.fields;
  const n = fields.length;
  const builders = fields.map((f) => makeBuilder(f.type, f.nullable, [f.name], ctx, rows.length));
  const index = new FieldIndex(fields.map((f) => f.name));
  const names = fields.map((f) => f.name);
  const values: unknown[] = new Array(n);
  // stamp[c] === r + 1 once row r has given column c: catches "a" and "A" in one object.
  const stamp = new Int32Array(n);
  for (let r = 0; r < rows.length; r++) {
    ctx.row = r;
    const row = rows[r];
    if (Array.isArray(row)) {
      if (row.length !== n) throw arityMismatch(ctx.table, names, row.length);
      for (let c = 0; c < n; c++) builders[c].append(row[c]);
    } else if (isPlainObject(row)) {
      values.fill(undefined);
      for (const key in row) {
        if (!Object.hasOwn(row, key)) continue;
        const c = index.get(key);
        if (c === undefined) {
          throw siltError("UNRESOLVED_COLUMN.WITH_SUGGESTION:NAME", {
            key: quotePath([key]),
            suggestions: suggestions(key, names),
          });
        }
        if (stamp[c] === r + 1) throw columnAlreadyExists([names[c]]);
        stamp[c] = r + 1;
        values[c] = row[key];
      }
      for (let c = 0; c < n; c++) builders[c].append(values[c]);
    } else {
      throw siltError("MALFORMED_RECORD_IN_PARSING:ROW_SHAPE", { index: r, row: showValue(row) });
    }
  }
  const children = builders.map((b) => b.finish());
  const arrowSchema = new arrow.Schema(
    fields.map((f, c) => new arrow.Field(f.name, children[c].type, f.nullable)),
  );
  const batch = new arrow.RecordBatch(
    arrowSchema,
    arrow.makeData({
      type: new arrow.Struct(arrowSchema.fields),
      length: rows.length,
      nullCount: 0,
      children,
    }),
  );
  return new arrow.Table(arrowSchema, [batch]);
}

function arityMismatch(table: string, names: readonly string[], got: number) {
  if (got < names.length) {
    return siltError("DELTA_INSERT_COLUMN_ARITY_MISMATCH:TOP_LEVEL", {
      table,
      targetColumns: names.length,
      dataColumns: got,
    });
  }
  const dataCols = Array.from({ length: got }, (_, i) => quotePath([`col${i + 1}`])).join(", ");
  return siltError("INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS:COLUMN_LISTS", {
    table: quotePath(table.split(".")),
    tableColumns: names.map((c) => quotePath([c])).join(", "),
    dataColumns: dataCols,
  });
}

/** Arrow Data for one column of JSON values (accepted input forms), e.g. partition values. */
export function valuesToArrow(
  values: readonly unknown[],
  type: DataType,
  opts: { nullable?: boolean; column?: string; tableName?: string } = {},
): arrow.Data {
  const ctx: Ctx = { row: -1, table: opts.tableName ?? "table" };
  const b = makeBuilder(type, opts.nullable ?? true, [opts.column ?? "value"], ctx, values.length);
  for (let r = 0; r < values.length; r++) {
    ctx.row = r;
    b.append(values[r]);
  }
  return b.finish();
}
