/**
 * JSON input values (the accepted forms of DESIGN §6) into internal values and canonical JSON.
 * Input is more lenient, as Spark's store assignment is: numeric strings for numbers, numbers for
 * decimals, any ISO-8601 timestamp with an offset, maps as [key, value] pairs, structs as arrays
 * in field order. Invalid input fails with Spark's error class, naming the column and the row.
 */
import {
  type DataType,
  type DecimalType,
  type StructType,
  sparkTypeName,
} from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import type { Micros } from "../values/calendar.ts";
import { parseBoolean, parseFloating } from "../values/cast-text.ts";
import { formatDate, formatTimestamp, parseDate, parseTimestamp } from "../values/datetime-text.ts";
import { formatDecimal, parseDecimal, type Unscaled } from "../values/decimal-text.ts";
import { nearestNames } from "../values/did-you-mean.ts";
import { JsonDecimal } from "../values/exact-json.ts";
import { shortestFloat32 } from "../values/float-text.ts";
import { quotePath } from "../values/identifiers.ts";
import { INT64_MAX, INT64_MIN } from "../values/int64.ts";
import { base64, floatJson, longJson, mapKeyText, setKey } from "./json-encoding.ts";

// ---------------------------------------------------------------------------------------------
// Error reporting

/** Where a value sits, for error messages: column path and row index (-1: not in a row). */
export interface Loc {
  readonly path: readonly string[];
  readonly ctx: Ctx;
}

export interface Ctx {
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
      if (v instanceof JsonDecimal) return "DOUBLE";
      return Array.isArray(v) ? "ARRAY" : v instanceof Uint8Array ? "BINARY" : "STRUCT";
  }
};

export const showValue = (v: unknown): string => {
  let s: string;
  if (typeof v === "string") s = `'${v}'`;
  else if (typeof v === "bigint") s = String(v);
  else if (v instanceof JsonDecimal) s = v.text;
  else if (v instanceof Uint8Array) s = `X'${Buffer.from(v).toString("hex").toUpperCase()}'`;
  else s = JSON.stringify(v) ?? String(v);
  return s.length > 200 ? `${s.slice(0, 200)}...` : s;
};

const sqlType = (t: DataType): string => sparkTypeName(t).toUpperCase();

export function castInvalid(v: unknown, type: DataType, loc: Loc): never {
  throw siltError("CAST_INVALID_INPUT:AT_LOCATION", {
    expression: showValue(v),
    sourceType: sqlTypeOfValue(v),
    targetType: sqlType(type),
    loc: where(loc),
  });
}

function castOverflow(v: unknown, type: DataType, loc: Loc): never {
  const row = loc.ctx.row < 0 ? "" : ` (value ${showValue(v)}, rows[${loc.ctx.row}])`;
  throw siltError("CAST_OVERFLOW_IN_TABLE_INSERT", {
    sourceType: sqlTypeOfValue(v),
    targetType: sqlType(type),
    columnName: quotePath(loc.path),
    row,
  });
}

function decimalOverflow(v: unknown, type: DecimalType, loc: Loc): never {
  throw siltError("NUMERIC_VALUE_OUT_OF_RANGE.WITHOUT_SUGGESTION", {
    value: typeof v === "string" ? v.trim() : String(v),
    precision: type.precision,
    scale: type.scale,
    loc: where(loc),
  });
}

export const notNullViolation = (path: readonly string[]) =>
  siltError("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", { path: path.join(".") });

export const suggestions = (name: string, candidates: readonly string[]): string =>
  nearestNames(name, candidates)
    .map((c) => quotePath([c]))
    .join(", ");

// ---------------------------------------------------------------------------------------------
// Scalar conversions from accepted JSON input to internal values

const INT_RE = /^[+-]?\d+$/;
const INT_RANGES: Record<string, [number, number]> = {
  byte: [-128, 127],
  short: [-32768, 32767],
  integer: [-2147483648, 2147483647],
};

export function toInt(v: unknown, type: "byte" | "short" | "integer", loc: Loc): number {
  let n: number;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) castInvalid(v, type, loc);
    n = v;
  } else if (typeof v === "bigint" || v instanceof JsonDecimal) {
    const b = typeof v === "bigint" ? v : v.integer();
    if (b === "fraction") castInvalid(v, type, loc);
    n = b > 2147483648n || b < -2147483649n ? Number.POSITIVE_INFINITY : Number(b);
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

export function toLong(v: unknown, loc: Loc): number | bigint {
  let b: bigint;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) castInvalid(v, "long", loc);
    if (Number.isSafeInteger(v)) return v;
    b = BigInt(v);
  } else if (typeof v === "bigint") {
    b = v;
  } else if (v instanceof JsonDecimal) {
    const exact = v.integer();
    if (exact === "fraction") castInvalid(v, "long", loc);
    b = exact;
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

export function toFloating(v: unknown, type: "float" | "double", loc: Loc): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  // The nearest double to the digits written.
  if (v instanceof JsonDecimal) return Number(v.text);
  const x = typeof v === "string" ? parseFloating(v) : undefined;
  if (x === undefined) castInvalid(v, type, loc);
  return x;
}

export function toDecimal(v: unknown, type: DecimalType, loc: Loc): Unscaled {
  let text: string;
  if (typeof v === "string") text = v;
  else if (typeof v === "number") {
    if (!Number.isFinite(v)) castInvalid(v, type, loc);
    text = String(v);
  } else if (typeof v === "bigint") text = String(v);
  else if (v instanceof JsonDecimal) text = v.text;
  else castInvalid(v, type, loc);
  const r = parseDecimal(text, type.precision, type.scale);
  if (r === "invalid") castInvalid(v, type, loc);
  if (r === "overflow") decimalOverflow(v, type, loc);
  return r;
}

export function toBool(v: unknown, loc: Loc): boolean {
  if (typeof v === "boolean") return v;
  const b = typeof v === "string" ? parseBoolean(v) : undefined;
  if (b === undefined) castInvalid(v, "boolean", loc);
  return b;
}

export function toStr(v: unknown, loc: Loc): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (v instanceof JsonDecimal) return v.text;
  castInvalid(v, "string", loc);
}

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]*$/;

export function toBinary(v: unknown, loc: Loc): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (typeof v === "string") {
    if (BASE64_RE.test(v)) return Buffer.from(v, "base64");
    if (BASE64URL_RE.test(v) && v.length % 4 !== 1) return Buffer.from(v, "base64url");
  }
  castInvalid(v, "binary", loc);
}

export function toDate(v: unknown, loc: Loc): number {
  if (typeof v === "string") {
    const d = parseDate(v);
    if (d !== undefined) return d;
  }
  castInvalid(v, "date", loc);
}

export function toTimestamp(v: unknown, ntz: boolean, loc: Loc): Micros {
  if (typeof v === "string") {
    const t = parseTimestamp(v, ntz);
    if (t !== undefined) return t;
  }
  castInvalid(v, ntz ? "timestamp_ntz" : "timestamp", loc);
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  !(v instanceof Uint8Array) &&
  !(v instanceof JsonDecimal);

/** Resolves object keys to field indices: exact name first, then ignoring case, as Spark does. */
export class FieldIndex {
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

export function canonical(v: unknown, type: DataType, nullable: boolean, loc: Loc): unknown {
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
      throw siltError("UNSUPPORTED_DATATYPE:TYPE", {
        name: type.name.toUpperCase(),
      });
  }
}

export const nullMapKey = () => siltError("NULL_MAP_KEY");

export const duplicateMapKey = (key: string) => siltError("DUPLICATED_MAP_KEY", { key });

export function mapEntries(
  v: unknown,
  keyType: DataType,
  loc: Loc,
  type: DataType,
): [unknown, unknown][] {
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
export function structInput(v: unknown, type: StructType, loc: Loc, index?: FieldIndex): unknown[] {
  const n = type.fields.length;
  if (Array.isArray(v)) {
    if (v.length < n) {
      throw siltError("DELTA_INSERT_COLUMN_ARITY_MISMATCH:NESTED", {
        table: loc.ctx.table,
        path: loc.path.join("."),
        targetColumns: n,
        dataColumns: v.length,
      });
    }
    if (v.length > n) {
      throw siltError("INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_STRUCT_FIELDS", {
        table: quotePath([loc.ctx.table]),
        column: quotePath([`col${n + 1}`]),
        path: quotePath(loc.path),
      });
    }
    return v;
  }
  if (!isPlainObject(v)) castInvalid(v, type, loc);
  const idx = index ?? new FieldIndex(type.fields.map((f) => f.name));
  const out: unknown[] = new Array(n);
  for (const key of Object.keys(v)) {
    const i = idx.get(key);
    if (i === undefined) {
      throw siltError("INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_STRUCT_FIELDS", {
        table: quotePath([loc.ctx.table]),
        column: quotePath([key]),
        path: quotePath(loc.path),
      });
    }
    if (Object.hasOwn(out, i)) throw columnAlreadyExists([...loc.path, type.fields[i].name]);
    out[i] = v[key];
  }
  return out;
}

export const columnAlreadyExists = (path: string[]) =>
  siltError("COLUMN_ALREADY_EXISTS:EXISTS", { path: quotePath(path) });
