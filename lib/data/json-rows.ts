/**
 * JSON rows <-> Arrow, in the value encodings of the HTTP API (DESIGN §6):
 *
 * | Delta type          | canonical JSON value                                          |
 * |---------------------|---------------------------------------------------------------|
 * | byte/short/integer  | number                                                        |
 * | long                | number; string when beyond ±(2^53-1)                          |
 * | float/double        | number (float: shortest decimal that round-trips float32);    |
 * |                     | "NaN", "Infinity", "-Infinity" as strings                     |
 * | decimal(p,s)        | string with exactly s fraction digits ("9.50")                |
 * | boolean             | true / false                                                  |
 * | string              | string                                                        |
 * | binary              | base64 string                                                 |
 * | date                | "YYYY-MM-DD"                                                  |
 * | timestamp           | "YYYY-MM-DDTHH:MM:SS.ffffffZ" (UTC, always 6 fraction digits) |
 * | timestamp_ntz       | "YYYY-MM-DDTHH:MM:SS.ffffff"                                  |
 * | struct              | object keyed by field name                                    |
 * | array               | array                                                         |
 * | map                 | object; keys are the canonical keys as strings (non-string    |
 * |                     | keys of complex type as their JSON text)                      |
 * | NULL                | null                                                          |
 *
 * Input is more lenient, as Spark's store assignment is: numeric strings for numbers, numbers for
 * decimals, any ISO-8601 timestamp with an offset, maps as [key, value] pairs, structs as arrays
 * in field order. Invalid input fails with Spark's error class, naming the column and the row.
 */

import * as arrow from "apache-arrow";
import {
  type DataType,
  type DecimalType,
  type StructField,
  type StructType,
  sparkTypeName,
  toArrowType,
} from "../delta/schema.ts";
import { badRequest, internal } from "../errors.ts";
import {
  civilFromDays,
  MICROS_PER_DAY,
  MILLIS_PER_DAY,
  type Micros,
  splitMicros,
} from "../values/calendar.ts";
import { formatDate, formatTimestamp, parseDate, parseTimestamp } from "../values/datetime-text.ts";
import { formatDecimal, parseDecimal, type Unscaled } from "../values/decimal-text.ts";
import { nearestNames } from "../values/did-you-mean.ts";
import { shortestFloat32 } from "../values/float-text.ts";
import { quotePath } from "../values/identifiers.ts";

const TWO32 = 4294967296;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// ---------------------------------------------------------------------------------------------
// Error reporting

/** Where a value sits, for error messages: column path and row index (-1: not in a row). */
interface Loc {
  readonly path: readonly string[];
  readonly ctx: Ctx;
}

interface Ctx {
  row: number;
  table: string;
}

const NO_ROW: Ctx = { row: -1, table: "table" };

const where = (loc: Loc): string =>
  loc.ctx.row < 0
    ? `column ${quotePath(loc.path)}`
    : `column ${quotePath(loc.path)}, rows[${loc.ctx.row}]`;

const sqlTypeOfValue = (v: unknown): string => {
  switch (typeof v) {
    case "string":
      return "STRING";
    case "boolean":
      return "BOOLEAN";
    case "bigint":
      return "BIGINT";
    case "number":
      return Number.isInteger(v) ? (Math.abs(v) <= 2147483647 ? "INT" : "BIGINT") : "DOUBLE";
    default:
      return Array.isArray(v) ? "ARRAY" : v instanceof Uint8Array ? "BINARY" : "STRUCT";
  }
};

const showValue = (v: unknown): string => {
  let s: string;
  if (typeof v === "string") s = `'${v}'`;
  else if (typeof v === "bigint") s = String(v);
  else if (v instanceof Uint8Array) s = `X'${Buffer.from(v).toString("hex").toUpperCase()}'`;
  else s = JSON.stringify(v) ?? String(v);
  return s.length > 200 ? `${s.slice(0, 200)}...` : s;
};

const sqlType = (t: DataType): string => sparkTypeName(t).toUpperCase();

function castInvalid(v: unknown, type: DataType, loc: Loc): never {
  throw badRequest(
    "CAST_INVALID_INPUT",
    `The value ${showValue(v)} of the type "${sqlTypeOfValue(v)}" cannot be cast to "${sqlType(type)}" ` +
      `because it is malformed (${where(loc)}). Correct the value as per the syntax, or change its target type.`,
    "22018",
  );
}

function castOverflow(v: unknown, type: DataType, loc: Loc): never {
  const row = loc.ctx.row < 0 ? "" : ` (value ${showValue(v)}, rows[${loc.ctx.row}])`;
  throw badRequest(
    "CAST_OVERFLOW_IN_TABLE_INSERT",
    `Fail to assign a value of "${sqlTypeOfValue(v)}" type to the "${sqlType(type)}" type column or ` +
      `variable ${quotePath(loc.path)} due to an overflow${row}.`,
    "22003",
  );
}

function decimalOverflow(v: unknown, type: DecimalType, loc: Loc): never {
  throw badRequest(
    "NUMERIC_VALUE_OUT_OF_RANGE.WITHOUT_SUGGESTION",
    `${typeof v === "string" ? v.trim() : String(v)} cannot be represented as Decimal(${type.precision}, ${type.scale}) (${where(loc)}).`,
    "22003",
  );
}

const notNullViolation = (path: readonly string[]) =>
  badRequest(
    "DELTA_NOT_NULL_CONSTRAINT_VIOLATED",
    `NOT NULL constraint violated for column: ${path.join(".")}.`,
    "23502",
  );

const suggestions = (name: string, candidates: readonly string[]): string =>
  nearestNames(name, candidates)
    .map((c) => quotePath([c]))
    .join(", ");

// ---------------------------------------------------------------------------------------------
// Floats

const floatJson = (x: number): number | string =>
  Number.isFinite(x) ? x : Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";

const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

// ---------------------------------------------------------------------------------------------
// Scalar conversions from accepted JSON input to internal values

const INT_RE = /^[+-]?\d+$/;
const INT_RANGES: Record<string, [number, number]> = {
  byte: [-128, 127],
  short: [-32768, 32767],
  integer: [-2147483648, 2147483647],
};

function toInt(v: unknown, type: "byte" | "short" | "integer", loc: Loc): number {
  let n: number;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) castInvalid(v, type, loc);
    n = v;
  } else if (typeof v === "bigint") {
    n = v > 2147483648n || v < -2147483649n ? Number.POSITIVE_INFINITY : Number(v);
  } else if (typeof v === "string") {
    const s = v.trim();
    if (!INT_RE.test(s)) castInvalid(v, type, loc);
    n = Number(s);
  } else {
    castInvalid(v, type, loc);
  }
  const [min, max] = INT_RANGES[type];
  if (n < min || n > max) castOverflow(v, type, loc);
  return n;
}

function toLong(v: unknown, loc: Loc): number | bigint {
  let b: bigint;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) castInvalid(v, "long", loc);
    if (Number.isSafeInteger(v)) return v;
    b = BigInt(v);
  } else if (typeof v === "bigint") {
    b = v;
  } else if (typeof v === "string") {
    const s = v.trim();
    if (!INT_RE.test(s)) castInvalid(v, "long", loc);
    if (s.length <= 16) {
      const n = Number(s);
      if (Number.isSafeInteger(n)) return n;
    }
    b = BigInt(s);
  } else {
    castInvalid(v, "long", loc);
  }
  if (b < INT64_MIN || b > INT64_MAX) castOverflow(v, "long", loc);
  return Number.isSafeInteger(Number(b)) && BigInt(Number(b)) === b ? Number(b) : b;
}

function toFloating(v: unknown, type: "float" | "double", loc: Loc): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string") {
    const s = v.trim();
    if (FLOAT_RE.test(s)) return Number(s);
    const lower = s.toLowerCase();
    if (lower === "nan") return Number.NaN;
    if (lower === "infinity" || lower === "+infinity" || lower === "inf" || lower === "+inf") {
      return Number.POSITIVE_INFINITY;
    }
    if (lower === "-infinity" || lower === "-inf") return Number.NEGATIVE_INFINITY;
  }
  castInvalid(v, type, loc);
}

function toDecimal(v: unknown, type: DecimalType, loc: Loc): Unscaled {
  let text: string;
  if (typeof v === "string") text = v;
  else if (typeof v === "number") {
    if (!Number.isFinite(v)) castInvalid(v, type, loc);
    text = String(v);
  } else if (typeof v === "bigint") text = String(v);
  else castInvalid(v, type, loc);
  const r = parseDecimal(text, type.precision, type.scale);
  if (r === "invalid") castInvalid(v, type, loc);
  if (r === "overflow") decimalOverflow(v, type, loc);
  return r;
}

const TRUE_TEXT = new Set(["t", "true", "y", "yes", "1"]);
const FALSE_TEXT = new Set(["f", "false", "n", "no", "0"]);

function toBool(v: unknown, loc: Loc): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (TRUE_TEXT.has(s)) return true;
    if (FALSE_TEXT.has(s)) return false;
  }
  castInvalid(v, "boolean", loc);
}

function toStr(v: unknown, loc: Loc): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  castInvalid(v, "string", loc);
}

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]*$/;

function toBinary(v: unknown, loc: Loc): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (typeof v === "string") {
    if (BASE64_RE.test(v)) return Buffer.from(v, "base64");
    if (BASE64URL_RE.test(v) && v.length % 4 !== 1) return Buffer.from(v, "base64url");
  }
  castInvalid(v, "binary", loc);
}

function toDate(v: unknown, loc: Loc): number {
  if (typeof v === "string") {
    const d = parseDate(v);
    if (d !== undefined) return d;
  }
  castInvalid(v, "date", loc);
}

function toTimestamp(v: unknown, ntz: boolean, loc: Loc): Micros {
  if (typeof v === "string") {
    const t = parseTimestamp(v, ntz);
    if (t !== undefined) return t;
  }
  castInvalid(v, ntz ? "timestamp_ntz" : "timestamp", loc);
}

const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

const longJson = (v: number | bigint): number | string =>
  typeof v === "number" ? v : Number.isSafeInteger(Number(v)) ? Number(v) : String(v);

/** Sets a key on a plain object even when the key is "__proto__". */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    obj[key] = value;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** Resolves object keys to field indices: exact name first, then ignoring case, as Spark does. */
class FieldIndex {
  private readonly exact = new Map<string, number>();
  private readonly lower = new Map<string, number>();
  constructor(readonly names: readonly string[]) {
    names.forEach((n, i) => {
      this.exact.set(n, i);
      if (!this.lower.has(n.toLowerCase())) this.lower.set(n.toLowerCase(), i);
    });
  }
  get(key: string): number | undefined {
    return this.exact.get(key) ?? this.lower.get(key.toLowerCase());
  }
}

/** Reads a map key given as an object property name (always a string) for the key type. */
const mapKeyFromString = (key: string, keyType: DataType): unknown =>
  typeof keyType === "object" && keyType.type !== "decimal" ? JSON.parse(key) : key;

/**
 * Validates one value of an accepted input form and returns its canonical JSON encoding
 * (see the table at the top). `column` names the value in errors.
 */
export function canonicalValue(value: unknown, type: DataType, column = "value"): unknown {
  return canonical(value, type, true, { path: [column], ctx: NO_ROW });
}

function canonical(v: unknown, type: DataType, nullable: boolean, loc: Loc): unknown {
  if (v === null || v === undefined) {
    if (!nullable) throw notNullViolation(loc.path);
    return null;
  }
  if (typeof type === "string") {
    switch (type) {
      case "byte":
      case "short":
      case "integer":
        return toInt(v, type, loc);
      case "long":
        return longJson(toLong(v, loc));
      case "float":
        return floatJson(shortestFloat32(Math.fround(toFloating(v, type, loc))));
      case "double":
        return floatJson(toFloating(v, type, loc));
      case "boolean":
        return toBool(v, loc);
      case "string":
        return toStr(v, loc);
      case "binary":
        return base64(toBinary(v, loc));
      case "date":
        return formatDate(toDate(v, loc));
      case "timestamp":
        return formatTimestamp(toTimestamp(v, false, loc), true);
      case "timestamp_ntz":
        return formatTimestamp(toTimestamp(v, true, loc), false);
    }
  }
  switch (type.type) {
    case "decimal":
      return formatDecimal(toDecimal(v, type, loc), type.scale);
    case "struct": {
      const values = structInput(v, type, loc);
      const out: Record<string, unknown> = {};
      type.fields.forEach((f, i) => {
        const fieldLoc = { path: [...loc.path, f.name], ctx: loc.ctx };
        setKey(out, f.name, canonical(values[i], f.type, f.nullable, fieldLoc));
      });
      return out;
    }
    case "array": {
      if (!Array.isArray(v)) castInvalid(v, type, loc);
      const el = { path: [...loc.path, "element"], ctx: loc.ctx };
      return v.map((x) => canonical(x, type.elementType, type.containsNull, el));
    }
    case "map": {
      const out: Record<string, unknown> = {};
      const kLoc = { path: [...loc.path, "key"], ctx: loc.ctx };
      const vLoc = { path: [...loc.path, "value"], ctx: loc.ctx };
      for (const [k, x] of mapEntries(v, type.keyType, loc, type)) {
        if (k === null || k === undefined) throw nullMapKey();
        const ck = canonical(k, type.keyType, false, kLoc);
        const key = mapKeyText(ck);
        if (Object.hasOwn(out, key)) throw duplicateMapKey(key);
        setKey(out, key, canonical(x, type.valueType, type.valueContainsNull, vLoc));
      }
      return out;
    }
    case "unsupported":
      throw badRequest(
        "UNSUPPORTED_DATATYPE",
        `Unsupported data type "${type.name.toUpperCase()}".`,
        "0A000",
      );
  }
}

const mapKeyText = (canonicalKey: unknown): string =>
  typeof canonicalKey === "string"
    ? canonicalKey
    : typeof canonicalKey === "object"
      ? JSON.stringify(canonicalKey)
      : String(canonicalKey);

const nullMapKey = () => badRequest("NULL_MAP_KEY", "Cannot use null as map key.", "2200E");

const duplicateMapKey = (key: string) =>
  badRequest(
    "DUPLICATED_MAP_KEY",
    `Duplicate map key ${key} was found, please check the input data.`,
    "23505",
  );

function mapEntries(v: unknown, keyType: DataType, loc: Loc, type: DataType): [unknown, unknown][] {
  if (Array.isArray(v)) {
    return v.map((e) => {
      if (!Array.isArray(e) || e.length !== 2) castInvalid(v, type, loc);
      return [e[0], e[1]] as [unknown, unknown];
    });
  }
  if (!isPlainObject(v)) castInvalid(v, type, loc);
  return Object.keys(v).map((k) => {
    let key: unknown;
    try {
      key = mapKeyFromString(k, keyType);
    } catch {
      castInvalid(k, keyType, { path: [...loc.path, "key"], ctx: loc.ctx });
    }
    return [key, v[k]];
  });
}

/** A struct value's field values in field order, from an object (by name) or array (by position). */
function structInput(v: unknown, type: StructType, loc: Loc, index?: FieldIndex): unknown[] {
  const n = type.fields.length;
  if (Array.isArray(v)) {
    if (v.length < n) {
      throw badRequest(
        "DELTA_INSERT_COLUMN_ARITY_MISMATCH",
        `Cannot write to '${loc.ctx.table}', not enough nested fields in ${loc.path.join(".")}; target table has ${n} column(s) but the inserted data has ${v.length} column(s).`,
        "42802",
      );
    }
    if (v.length > n) {
      throw badRequest(
        "INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_STRUCT_FIELDS",
        `Cannot write incompatible data for the table ${quotePath([loc.ctx.table])}: Cannot write extra fields ${quotePath([`col${n + 1}`])} to the struct ${quotePath(loc.path)}.`,
        "KD000",
      );
    }
    return v;
  }
  if (!isPlainObject(v)) castInvalid(v, type, loc);
  const idx = index ?? new FieldIndex(type.fields.map((f) => f.name));
  const out: unknown[] = new Array(n);
  for (const key of Object.keys(v)) {
    const i = idx.get(key);
    if (i === undefined) {
      throw badRequest(
        "INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_STRUCT_FIELDS",
        `Cannot write incompatible data for the table ${quotePath([loc.ctx.table])}: Cannot write extra fields ${quotePath([key])} to the struct ${quotePath(loc.path)}.`,
        "KD000",
      );
    }
    if (Object.hasOwn(out, i)) throw columnAlreadyExists([...loc.path, type.fields[i].name]);
    out[i] = v[key];
  }
  return out;
}

const columnAlreadyExists = (path: string[]) =>
  badRequest(
    "COLUMN_ALREADY_EXISTS",
    `The column ${quotePath(path)} already exists. Choose another name or rename the existing column.`,
    "42711",
  );

// ---------------------------------------------------------------------------------------------
// Column builders: JSON values -> Arrow Data, writing typed arrays directly

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
      throw badRequest(
        "UNSUPPORTED_DATATYPE",
        `Unsupported data type "${type.name.toUpperCase()}" (column ${quotePath(path)}).`,
        "0A000",
      );
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
          throw badRequest(
            "UNRESOLVED_COLUMN.WITH_SUGGESTION",
            `A column, variable, or function parameter with name ${quotePath([key])} cannot be resolved. Did you mean one of the following? [${suggestions(key, names)}].`,
            "42703",
          );
        }
        if (stamp[c] === r + 1) throw columnAlreadyExists([names[c]]);
        stamp[c] = r + 1;
        values[c] = row[key];
      }
      for (let c = 0; c < n; c++) builders[c].append(values[c]);
    } else {
      throw badRequest(
        "MALFORMED_RECORD_IN_PARSING",
        `Malformed records are detected in record parsing: rows[${r}] is ${showValue(row)}, not an object or an array.`,
        "22023",
      );
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
    return badRequest(
      "DELTA_INSERT_COLUMN_ARITY_MISMATCH",
      `Cannot write to '${table}', not enough data columns; target table has ${names.length} column(s) but the inserted data has ${got} column(s).`,
      "42802",
    );
  }
  const dataCols = Array.from({ length: got }, (_, i) => quotePath([`col${i + 1}`])).join(", ");
  return badRequest(
    "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS",
    `Cannot write to ${quotePath(table.split("."))}, the reason is too many data columns:\nTable columns: ${names.map((c) => quotePath([c])).join(", ")}.\nData columns: ${dataCols}.`,
    "21S01",
  );
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

// ---------------------------------------------------------------------------------------------
// Arrow -> canonical JSON values, one column at a time

const decoder = new TextDecoder();
/** Byte span decoded as one string when converting Utf8 columns (V8 caps string length). */
const DECODE_CHUNK = 1 << 25;

/** Validity bitmap of a Data if it has nulls, else null. */
const nullsOf = (data: arrow.Data): Uint8Array | null =>
  data.nullCount > 0 && data.nullBitmap && data.nullBitmap.length > 0 ? data.nullBitmap : null;

function decodeUtf8Column(
  bytes: Uint8Array,
  offsets: ArrayLike<number>,
  from: number,
  to: number,
  out: unknown[],
  nulls: Uint8Array | null,
  bitOffset: number,
): void {
  const base = offsets[from];
  const str = decoder.decode(bytes.subarray(base, offsets[to]));
  if (str.length === offsets[to] - base) {
    // Every byte decoded to one UTF-16 unit, so byte offsets are string offsets.
    for (let i = from; i < to; i++) {
      const bit = bitOffset + i;
      out[i] =
        nulls && (nulls[bit >> 3] & (1 << (bit & 7))) === 0
          ? null
          : str.substring(offsets[i] - base, offsets[i + 1] - base);
    }
    return;
  }
  // Map byte boundaries to UTF-16 positions: lead bytes count one unit, 4-byte sequences two.
  const bounds = new Int32Array(to - from + 1);
  let unit = 0;
  let b = base;
  for (let i = from; i < to; i++) {
    const end = offsets[i + 1];
    for (; b < end; b++) {
      const c = bytes[b];
      if (c < 0x80 || c >= 0xc0) unit += c >= 0xf0 ? 2 : 1;
    }
    bounds[i - from + 1] = unit;
  }
  const valid = unit === str.length;
  for (let i = from; i < to; i++) {
    const bit = bitOffset + i;
    if (nulls && (nulls[bit >> 3] & (1 << (bit & 7))) === 0) out[i] = null;
    else if (valid) out[i] = str.substring(bounds[i - from], bounds[i - from + 1]);
    // Invalid UTF-8 broke the mapping; decode this value on its own.
    else out[i] = decoder.decode(bytes.subarray(offsets[i], offsets[i + 1]));
  }
}

function utf8Values(data: arrow.Data, out: unknown[]): void {
  const n = data.length;
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const off: ArrayLike<number> =
    offsets instanceof BigInt64Array ? Array.from(offsets, (x) => Number(x)) : offsets;
  const bytes = data.values as Uint8Array;
  const nulls = nullsOf(data);
  let from = 0;
  while (from < n) {
    let to = from + 1;
    while (to < n && off[to + 1] - off[from] <= DECODE_CHUNK) to++;
    decodeUtf8Column(bytes, off, from, to, out, nulls, data.offset);
    from = to;
  }
}

function int64Values(
  data: arrow.Data,
  out: unknown[],
  signed: boolean,
  format?: (v: Micros) => unknown,
): void {
  const values = data.values as BigInt64Array | BigUint64Array;
  const u32 = new Uint32Array(values.buffer, values.byteOffset, data.length * 2);
  const nulls = nullsOf(data);
  const bitOffset = data.offset;
  for (let i = 0; i < data.length; i++) {
    if (nulls) {
      const bit = bitOffset + i;
      if ((nulls[bit >> 3] & (1 << (bit & 7))) === 0) {
        out[i] = null;
        continue;
      }
    }
    const lo = u32[2 * i];
    const hiU = u32[2 * i + 1];
    const hi = signed ? hiU | 0 : hiU;
    let v: Micros;
    if (hi > -2097152 && hi < 2097152) v = hi * TWO32 + lo;
    else v = values[i];
    out[i] = format ? format(v) : longJson(v);
  }
}

/** Rows per chunk of timestamp text decoded as one string (V8 caps string length). */
const TIMESTAMP_CHUNK = 1 << 22;

/**
 * Timestamp column to ISO text. Each value's ASCII bytes go into one buffer that is decoded
 * once; the values are then substrings of it, one small allocation each instead of a chain of
 * concatenations. Years outside 0000-9999 (wider text) are formatted one by one.
 */
function timestampValues(
  data: arrow.Data,
  unit: arrow.TimeUnit,
  utc: boolean,
  out: unknown[],
): void {
  const width = utc ? 27 : 26;
  const values = data.values as BigInt64Array;
  const u32 = new Uint32Array(values.buffer, values.byteOffset, data.length * 2);
  const nulls = nullsOf(data);
  const bitOffset = data.offset;
  const date = new Uint8Array(10);
  let lastDays = Number.NaN;
  let wideYear = false;
  for (let from = 0; from < data.length; from += TIMESTAMP_CHUNK) {
    const to = Math.min(data.length, from + TIMESTAMP_CHUNK);
    const buf = Buffer.allocUnsafe((to - from) * width);
    for (let i = from; i < to; i++) {
      if (nulls) {
        const bit = bitOffset + i;
        if ((nulls[bit >> 3] & (1 << (bit & 7))) === 0) {
          out[i] = null;
          continue;
        }
      }
      const hi = u32[2 * i + 1] | 0;
      let micros: Micros = hi > -2097152 && hi < 2097152 ? hi * TWO32 + u32[2 * i] : values[i];
      if (unit !== arrow.TimeUnit.MICROSECOND) micros = toMicros(micros, unit);
      let days: number;
      let tod: number;
      if (typeof micros === "number") {
        days = Math.floor(micros / MICROS_PER_DAY);
        tod = micros - days * MICROS_PER_DAY;
        if (tod < 0 || tod >= MICROS_PER_DAY) [days, tod] = splitMicros(micros);
      } else {
        [days, tod] = splitMicros(micros);
      }
      if (days !== lastDays) {
        lastDays = days;
        const [y, m, d] = civilFromDays(days);
        wideYear = y < 0 || y > 9999;
        date[0] = 48 + Math.floor(y / 1000);
        date[1] = 48 + (Math.floor(y / 100) % 10);
        date[2] = 48 + (Math.floor(y / 10) % 10);
        date[3] = 48 + (y % 10);
        date[4] = 45;
        date[5] = 48 + Math.floor(m / 10);
        date[6] = 48 + (m % 10);
        date[7] = 45;
        date[8] = 48 + Math.floor(d / 10);
        date[9] = 48 + (d % 10);
      }
      if (wideYear) {
        out[i] = formatTimestamp(micros, utc);
        continue;
      }
      const secs = Math.floor(tod / 1_000_000);
      let us = tod - secs * 1_000_000;
      const h = Math.floor(secs / 3600);
      const mi = Math.floor(secs / 60) - h * 60;
      const ss = secs - Math.floor(secs / 60) * 60;
      const p = (i - from) * width;
      buf.set(date, p);
      buf[p + 10] = 84; // T
      buf[p + 11] = 48 + Math.floor(h / 10);
      buf[p + 12] = 48 + (h % 10);
      buf[p + 13] = 58;
      buf[p + 14] = 48 + Math.floor(mi / 10);
      buf[p + 15] = 48 + (mi % 10);
      buf[p + 16] = 58;
      buf[p + 17] = 48 + Math.floor(ss / 10);
      buf[p + 18] = 48 + (ss % 10);
      buf[p + 19] = 46;
      for (let k = 25; k >= 20; k--) {
        const q = Math.floor(us / 10);
        buf[p + k] = 48 + us - q * 10;
        us = q;
      }
      if (utc) buf[p + 26] = 90; // Z
      out[i] = true;
    }
    const text = buf.toString("latin1");
    for (let i = from; i < to; i++) {
      if (out[i] === true) {
        const p = (i - from) * width;
        out[i] = text.substring(p, p + width);
      }
    }
  }
}

function scaleUp(v: Micros, factor: number): Micros {
  if (typeof v === "number" && Math.abs(v) * factor <= Number.MAX_SAFE_INTEGER) return v * factor;
  return BigInt(v) * BigInt(factor);
}

function floorDiv(v: Micros, d: number): Micros {
  if (typeof v === "number") {
    const q = Math.floor(v / d);
    // The rounded quotient may land on the next integer; the product check is exact.
    return q * d > v ? q - 1 : q;
  }
  const bd = BigInt(d);
  const q = v / bd;
  return v < 0n && q * bd !== v ? q - 1n : q;
}

/** Converts a timestamp of the Arrow type's unit to microseconds (flooring nanoseconds). */
function toMicros(v: Micros, unit: arrow.TimeUnit): Micros {
  switch (unit) {
    case arrow.TimeUnit.SECOND:
      return scaleUp(v, 1_000_000);
    case arrow.TimeUnit.MILLISECOND:
      return scaleUp(v, 1_000);
    case arrow.TimeUnit.NANOSECOND:
      return floorDiv(v, 1_000);
    default:
      return v;
  }
}

function decimalUnscaled(words: Uint32Array, i: number, stride: number): Unscaled {
  const k = i * stride;
  if (stride === 1) return words[k] | 0;
  const w0 = words[k];
  const w1 = words[k + 1];
  let high = true;
  let ones = true;
  for (let j = 2; j < stride; j++) {
    if (words[k + j] !== 0) high = false;
    if (words[k + j] !== 0xffffffff) ones = false;
  }
  if (high && w1 < 2097152) return w1 * TWO32 + w0;
  if (ones && w1 > 0xffe00000) return (w1 - TWO32) * TWO32 + w0;
  let b = 0n;
  for (let j = stride - 1; j >= 0; j--) b = (b << 32n) | BigInt(words[k + j]);
  return BigInt.asIntN(stride * 32, b);
}

function structName(type: DataType | undefined, i: number, fallback: string): string {
  return type !== undefined && typeof type === "object" && type.type === "struct" && type.fields[i]
    ? type.fields[i].name
    : fallback;
}

/**
 * Canonical JSON values of one Arrow column (see the table at the top). `type`, when given, is
 * the column's Delta type: it decides what the Arrow type cannot say (struct field names,
 * whether a timestamp has a zone, a decimal's scale after widening, text stored as binary).
 */
export function arrowValues(data: arrow.Data | arrow.Vector, type?: DataType): unknown[] {
  if (data instanceof arrow.Vector) {
    const out: unknown[] = [];
    for (const d of data.data) {
      const part = arrowValues(d, type);
      for (const x of part) out.push(x);
    }
    return out;
  }
  const out: unknown[] = new Array(data.length);
  fillValues(data, type, out);
  return out;
}

function fillValues(data: arrow.Data, type: DataType | undefined, out: unknown[]): void {
  const n = data.length;
  const nulls = nullsOf(data);
  const bitOffset = data.offset;
  const isNull = (i: number) => {
    if (!nulls) return false;
    const bit = bitOffset + i;
    return (nulls[bit >> 3] & (1 << (bit & 7))) === 0;
  };
  const t = data.type;
  switch (t.typeId) {
    case arrow.Type.Null:
      out.fill(null, 0, n);
      return;
    case arrow.Type.Int: {
      const it = t as arrow.Int;
      if (it.bitWidth === 64) {
        int64Values(data, out, it.isSigned);
        return;
      }
      const values = data.values as Int32Array;
      for (let i = 0; i < n; i++) out[i] = isNull(i) ? null : values[i];
      return;
    }
    case arrow.Type.Float: {
      const precision = (t as arrow.Float).precision;
      const values = data.values as Float64Array;
      if (precision === arrow.Precision.DOUBLE) {
        for (let i = 0; i < n; i++) {
          const x = values[i];
          out[i] = isNull(i) ? null : x - x === 0 ? x : floatJson(x);
        }
      } else if (precision === arrow.Precision.SINGLE) {
        for (let i = 0; i < n; i++)
          out[i] = isNull(i) ? null : floatJson(shortestFloat32(values[i]));
      } else {
        const vec = arrow.makeVector(data);
        for (let i = 0; i < n; i++) {
          out[i] = isNull(i) ? null : floatJson(shortestFloat32(Math.fround(vec.get(i) as number)));
        }
      }
      return;
    }
    case arrow.Type.Bool: {
      const bits = data.values as Uint8Array;
      for (let i = 0; i < n; i++) {
        const bit = bitOffset + i;
        out[i] = isNull(i) ? null : (bits[bit >> 3] & (1 << (bit & 7))) !== 0;
      }
      return;
    }
    case arrow.Type.Utf8:
    case arrow.Type.LargeUtf8:
      utf8Values(data, out);
      return;
    case arrow.Type.Binary:
    case arrow.Type.LargeBinary: {
      if (type === "string") {
        utf8Values(data, out);
        return;
      }
      const bytes = data.values as Uint8Array;
      const offsets = data.valueOffsets as Int32Array | BigInt64Array;
      for (let i = 0; i < n; i++) {
        out[i] = isNull(i)
          ? null
          : base64(bytes.subarray(Number(offsets[i]), Number(offsets[i + 1])));
      }
      return;
    }
    case arrow.Type.FixedSizeBinary: {
      const w = (t as arrow.FixedSizeBinary).byteWidth;
      const bytes = data.values as Uint8Array;
      for (let i = 0; i < n; i++) {
        const b = bytes.subarray(i * w, (i + 1) * w);
        out[i] = isNull(i) ? null : type === "string" ? decoder.decode(b) : base64(b);
      }
      return;
    }
    case arrow.Type.Utf8View:
    case arrow.Type.BinaryView: {
      const vec = arrow.makeVector(data);
      const text = t.typeId === arrow.Type.Utf8View;
      for (let i = 0; i < n; i++) {
        const v = vec.get(i) as string | Uint8Array | null;
        out[i] =
          v === null || isNull(i)
            ? null
            : text
              ? v
              : type === "string"
                ? decoder.decode(v as Uint8Array)
                : base64(v as Uint8Array);
      }
      return;
    }
    case arrow.Type.Date: {
      let last = Number.NaN;
      let lastText = "";
      const millis = (t as arrow.Date_).unit === arrow.DateUnit.MILLISECOND;
      const values = data.values as Int32Array | BigInt64Array;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) {
          out[i] = null;
          continue;
        }
        const days = millis
          ? Math.floor(Number(values[i]) / MILLIS_PER_DAY)
          : (values[i] as number);
        if (days !== last) {
          last = days;
          lastText = formatDate(days);
        }
        out[i] = lastText;
      }
      return;
    }
    case arrow.Type.Timestamp: {
      const ts = t as arrow.Timestamp;
      const utc = type === "timestamp" ? true : type === "timestamp_ntz" ? false : !!ts.timezone;
      timestampValues(data, ts.unit, utc, out);
      return;
    }
    case arrow.Type.Decimal: {
      const dt = t as arrow.Decimal;
      const stride = dt.bitWidth / 32;
      const words = data.values as Uint32Array;
      const extra =
        type !== undefined &&
        typeof type === "object" &&
        type.type === "decimal" &&
        type.scale > dt.scale
          ? type.scale - dt.scale
          : 0;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) {
          out[i] = null;
          continue;
        }
        const u = decimalUnscaled(words, i, stride);
        out[i] =
          extra === 0
            ? formatDecimal(u, dt.scale)
            : formatDecimal(BigInt(u) * 10n ** BigInt(extra), dt.scale + extra);
      }
      return;
    }
    case arrow.Type.Struct: {
      const fields = (t as arrow.Struct).children;
      const names = fields.map((f, i) => structName(type, i, f.name));
      const childTypes = fields.map((_, i) =>
        type !== undefined && typeof type === "object" && type.type === "struct"
          ? type.fields[i]?.type
          : undefined,
      );
      const cols = data.children.map((c, i) => {
        const vals: unknown[] = new Array(c.length);
        fillValues(c, childTypes[i], vals);
        return vals;
      });
      for (let i = 0; i < n; i++) {
        if (isNull(i)) {
          out[i] = null;
          continue;
        }
        const o: Record<string, unknown> = {};
        for (let c = 0; c < cols.length; c++) setKey(o, names[c], cols[c][i]);
        out[i] = o;
      }
      return;
    }
    case arrow.Type.List:
    case arrow.Type.LargeList:
    case arrow.Type.Map: {
      const offsets = data.valueOffsets as Int32Array | BigInt64Array;
      const first = Number(offsets[0]);
      const last = Number(offsets[n]);
      const child = data.children[0].slice(first, last - first);
      if (t.typeId === arrow.Type.Map) {
        const mt =
          type !== undefined && typeof type === "object" && type.type === "map" ? type : undefined;
        const keys: unknown[] = new Array(child.length);
        const vals: unknown[] = new Array(child.length);
        fillValues(child.children[0], mt?.keyType, keys);
        fillValues(child.children[1], mt?.valueType, vals);
        for (let i = 0; i < n; i++) {
          if (isNull(i)) {
            out[i] = null;
            continue;
          }
          const o: Record<string, unknown> = {};
          for (let j = Number(offsets[i]) - first; j < Number(offsets[i + 1]) - first; j++) {
            setKey(o, mapKeyText(keys[j]), vals[j]);
          }
          out[i] = o;
        }
        return;
      }
      const at =
        type !== undefined && typeof type === "object" && type.type === "array" ? type : undefined;
      const vals: unknown[] = new Array(child.length);
      fillValues(child, at?.elementType, vals);
      for (let i = 0; i < n; i++) {
        out[i] = isNull(i)
          ? null
          : vals.slice(Number(offsets[i]) - first, Number(offsets[i + 1]) - first);
      }
      return;
    }
    case arrow.Type.FixedSizeList: {
      const size = (t as arrow.FixedSizeList).listSize;
      const at =
        type !== undefined && typeof type === "object" && type.type === "array" ? type : undefined;
      const child = data.children[0];
      const vals: unknown[] = new Array(child.length);
      fillValues(child, at?.elementType, vals);
      for (let i = 0; i < n; i++) out[i] = isNull(i) ? null : vals.slice(i * size, (i + 1) * size);
      return;
    }
    case arrow.Type.Dictionary: {
      const dict = data.dictionary;
      const dictValues = dict ? arrowValues(dict, type) : [];
      const indices = data.values as Int32Array | BigInt64Array;
      for (let i = 0; i < n; i++) out[i] = isNull(i) ? null : dictValues[Number(indices[i])];
      return;
    }
    default: {
      // Time, duration, interval and union columns have no Delta type; show Arrow's rendering.
      const vec = arrow.makeVector(data);
      for (let i = 0; i < n; i++) {
        const v = vec.get(i);
        out[i] =
          v === null || isNull(i)
            ? null
            : typeof v === "bigint"
              ? String(v)
              : typeof v === "object"
                ? String(v)
                : v;
      }
    }
  }
}

/**
 * Transposes column arrays into row arrays. Array literals for narrow rows let V8 pretenure them
 * (the rows all survive, and copying them through the young generation dominated the time).
 */
function assembleRows(cols: unknown[][], len: number, rows: unknown[][], base: number): void {
  const [a, b, c, d, e, f] = cols;
  switch (cols.length) {
    case 1:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i]];
      return;
    case 2:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i]];
      return;
    case 3:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i]];
      return;
    case 4:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i], d[i]];
      return;
    case 5:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i], d[i], e[i]];
      return;
    case 6:
      for (let i = 0; i < len; i++) rows[base + i] = [a[i], b[i], c[i], d[i], e[i], f[i]];
      return;
    default: {
      const n = cols.length;
      for (let i = 0; i < len; i++) {
        const row: unknown[] = new Array(n);
        for (let k = 0; k < n; k++) row[k] = cols[k][i];
        rows[base + i] = row;
      }
    }
  }
}

/**
 * Rows of canonical JSON values (arrays in column order) from an Arrow table. `schema`, when
 * given, is the Delta schema of the table's columns in the same order.
 */
export function arrowToRows(
  table: arrow.Table | arrow.RecordBatch,
  schema?: StructType,
): unknown[][] {
  const ncols = table.schema.fields.length;
  if (schema && schema.fields.length !== ncols) {
    throw internal(
      "INTERNAL_ERROR",
      `arrowToRows: the schema has ${schema.fields.length} column(s) but the data has ${ncols}.`,
    );
  }
  const rows: unknown[][] = new Array(table.numRows);
  const batches = table instanceof arrow.Table ? table.batches : [table];
  let base = 0;
  for (const batch of batches) {
    const len = batch.numRows;
    const cols = batch.data.children.map((child, c) => {
      const field: StructField | undefined = schema?.fields[c];
      const vals: unknown[] = new Array(len);
      fillValues(child, field?.type, vals);
      return vals;
    });
    assembleRows(cols, len, rows, base);
    base += len;
  }
  return rows;
}
