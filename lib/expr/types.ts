/**
 * Spark SQL's type system, in ANSI mode as Spark 4 runs by default: the type predicates, the
 * names types print under, decimal precision and scale of arithmetic (allowPrecisionLoss=true,
 * 38-digit cap), the common type of two operands (AnsiTypeCoercion's precedence lists plus its
 * string promotion) and which CASTs are legal. What values of these types do is the scalar-*.ts
 * modules' job.
 *
 * Scalars (one value of a SqlType, as analysis and evaluation hold them):
 *   boolean → boolean; byte/short/integer/date (days) → number; long/timestamp/timestamp_ntz
 *   (microseconds) → bigint; float/double → number; decimal → bigint unscaled at the type's
 *   scale; string → string; binary → Uint8Array; struct/array/map → their canonical JSON value.
 * NULL is `null` for every type.
 */
import {
  type DecimalType,
  decimal,
  MAX_DECIMAL_PRECISION,
  sparkTypeName,
} from "../delta/schema.ts";
import { type SiltError, siltError } from "../errors.ts";
import { quoteIfNeeded } from "../values/identifiers.ts";
import type { SqlType } from "./ast.ts";

export type Scalar = boolean | number | bigint | string | Uint8Array | object;

export type IntegralName = "byte" | "short" | "integer" | "long";

// ---------------------------------------------------------------------------------------------
// Type predicates

export const isIntegral = (t: SqlType): t is IntegralName =>
  t === "byte" || t === "short" || t === "integer" || t === "long";
/** The integral types in widening order: a cast to an equal or higher rank cannot overflow. */
export const INT_RANK: Record<string, number> = { byte: 0, short: 1, integer: 2, long: 3 };
export const isDecimalType = (t: SqlType): t is DecimalType =>
  typeof t === "object" && t.type === "decimal";
export const isFloating = (t: SqlType): t is "float" | "double" => t === "float" || t === "double";
export const isFractional = (t: SqlType): boolean => isFloating(t) || isDecimalType(t);
export const isNumeric = (t: SqlType): boolean => isIntegral(t) || isFractional(t);
export const isTimestamp = (t: SqlType): t is "timestamp" | "timestamp_ntz" =>
  t === "timestamp" || t === "timestamp_ntz";
export const isDatetime = (t: SqlType): boolean => t === "date" || isTimestamp(t);
/** Spark's AtomicType: every primitive (numbers, strings, binary, boolean, datetimes). */
export const isAtomic = (t: SqlType): boolean =>
  t !== "null" && (typeof t === "string" || t.type === "decimal");
export const isComplex = (t: SqlType): boolean =>
  typeof t === "object" && (t.type === "struct" || t.type === "array" || t.type === "map");

/** Type equality ignoring nullability flags, as Spark's sameType does. */
export function sameType(a: SqlType, b: SqlType): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  switch (a.type) {
    case "decimal":
      return b.type === "decimal" && a.precision === b.precision && a.scale === b.scale;
    case "array":
      return b.type === "array" && sameType(a.elementType, b.elementType);
    case "map":
      return (
        b.type === "map" && sameType(a.keyType, b.keyType) && sameType(a.valueType, b.valueType)
      );
    case "struct":
      return (
        b.type === "struct" &&
        a.fields.length === b.fields.length &&
        a.fields.every(
          (f, i) =>
            f.name.toLowerCase() === b.fields[i].name.toLowerCase() &&
            sameType(f.type, b.fields[i].type),
        )
      );
    case "unsupported":
      return b.type === "unsupported" && a.name === b.name;
  }
}

/** Whether values of the type have an order (maps do not). */
export function isOrderable(t: SqlType): boolean {
  if (typeof t === "string") return true;
  switch (t.type) {
    case "map":
    case "unsupported":
      return false;
    case "array":
      return isOrderable(t.elementType);
    case "struct":
      return t.fields.every((f) => isOrderable(f.type));
    default:
      return true;
  }
}

// ---------------------------------------------------------------------------------------------
/** Spark's DataType.sql: "INT", "DECIMAL(3,2)", "ARRAY<INT>", "STRUCT<a: INT>", "VOID". */
export function sqlTypeName(t: SqlType): string {
  if (t === "null") return "VOID";
  if (typeof t === "string") return sparkTypeName(t).toUpperCase();
  switch (t.type) {
    case "decimal":
      return `DECIMAL(${t.precision},${t.scale})`;
    case "array":
      return `ARRAY<${sqlTypeName(t.elementType)}>`;
    case "map":
      return `MAP<${sqlTypeName(t.keyType)}, ${sqlTypeName(t.valueType)}>`;
    case "struct":
      return `STRUCT<${t.fields.map((f) => `${quoteIfNeeded(f.name)}: ${sqlTypeName(f.type)}`).join(", ")}>`;
    case "unsupported":
      return t.name.toUpperCase();
  }
}

/** toSQLType: the type name in double quotes. */
export const quotedType = (t: SqlType): string => `"${sqlTypeName(t)}"`;

const ORDINALS = [
  "first",
  "second",
  "third",
  "fourth",
  "fifth",
  "sixth",
  "seventh",
  "eighth",
  "ninth",
  "tenth",
];

/** Spark's ordinalNumber(i) for 0-based i: "first", "second", …, "11th". */
export function ordinalNumber(i: number): string {
  if (i < ORDINALS.length) return ORDINALS[i];
  const n = i + 1;
  const suffix =
    n % 100 >= 11 && n % 100 <= 13
      ? "th"
      : n % 10 === 1
        ? "st"
        : n % 10 === 2
          ? "nd"
          : n % 10 === 3
            ? "rd"
            : "th";
  return `${n}${suffix}`;
}

/** The setting Spark's ANSI errors name as the way around them. */
export const ANSI_CONF = '"spark.sql.ansi.enabled"';

// ---------------------------------------------------------------------------------------------
// Decimal types

/** The decimal an integral or floating type widens to (DecimalType.forType). */
export function decimalForType(t: SqlType): DecimalType | undefined {
  switch (t) {
    case "byte":
      return decimal(3, 0);
    case "short":
      return decimal(5, 0);
    case "integer":
      return decimal(10, 0);
    case "long":
      return decimal(20, 0);
    case "float":
      return decimal(14, 7);
    case "double":
      return decimal(30, 15);
    default:
      return isDecimalType(t) ? t : undefined;
  }
}

/** The narrowest decimal that holds an integer literal (literalPickMinimumPrecision). */
export function decimalForIntegralValue(v: number | bigint): DecimalType {
  const digits = String(v < 0 ? -BigInt(v) : BigInt(v)).length;
  return decimal(Math.max(1, digits), 0);
}

export const boundedDecimal = (precision: number, scale: number): DecimalType =>
  decimal(Math.min(precision, MAX_DECIMAL_PRECISION), Math.min(scale, MAX_DECIMAL_PRECISION));

/** DecimalType.adjustPrecisionScale with allowPrecisionLoss: keep at least 6 fraction digits. */
export function adjustPrecisionScale(precision: number, scale: number): DecimalType {
  if (precision <= MAX_DECIMAL_PRECISION) return decimal(precision, scale);
  const intDigits = precision - scale;
  const minScale = Math.min(scale, 6);
  return decimal(MAX_DECIMAL_PRECISION, Math.max(MAX_DECIMAL_PRECISION - intDigits, minScale));
}

export function widerDecimalType(a: DecimalType, b: DecimalType): DecimalType {
  const scale = Math.max(a.scale, b.scale);
  const range = Math.max(a.precision - a.scale, b.precision - b.scale);
  return boundedDecimal(range + scale, scale);
}

export function decimalIsWiderThan(d: DecimalType, other: SqlType): boolean {
  const o = isIntegral(other) ? decimalForType(other) : isDecimalType(other) ? other : undefined;
  if (!o) return false;
  return d.precision - d.scale >= o.precision - o.scale && d.scale >= o.scale;
}

export type ArithOp = "+" | "-" | "*" | "/" | "%" | "div";

/** Result type of decimal arithmetic on operands of these decimal types. */
export function decimalResultType(op: ArithOp, a: DecimalType, b: DecimalType): DecimalType {
  const { precision: p1, scale: s1 } = a;
  const { precision: p2, scale: s2 } = b;
  switch (op) {
    case "+":
    case "-": {
      const scale = Math.max(s1, s2);
      return adjustPrecisionScale(Math.max(p1 - s1, p2 - s2) + scale + 1, scale);
    }
    case "*":
      return adjustPrecisionScale(p1 + p2 + 1, s1 + s2);
    case "/": {
      const scale = Math.max(6, s1 + p2 + 1);
      return adjustPrecisionScale(p1 - s1 + s2 + scale, scale);
    }
    case "%": {
      const scale = Math.max(s1, s2);
      return adjustPrecisionScale(Math.min(p1 - s1, p2 - s2) + scale, scale);
    }
    case "div":
      return decimal(20, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Common types

const NUMERIC_PRECEDENCE: Record<string, number> = {
  byte: 0,
  short: 1,
  integer: 2,
  long: 3,
  float: 4,
  double: 5,
};

/** findTightestCommonType (ANSI): a common type reachable without losing anything. */
export function tightestCommonType(a: SqlType, b: SqlType): SqlType | undefined {
  if (sameType(a, b)) return a;
  if (a === "null") return b;
  if (b === "null") return a;
  if (isIntegral(a) && isDecimalType(b)) return decimalIsWiderThan(b, a) ? b : undefined;
  if (isDecimalType(a) && isIntegral(b)) return decimalIsWiderThan(a, b) ? a : undefined;
  const pa = typeof a === "string" ? NUMERIC_PRECEDENCE[a] : undefined;
  const pb = typeof b === "string" ? NUMERIC_PRECEDENCE[b] : undefined;
  if (pa !== undefined && pb !== undefined) {
    const wider = (pa > pb ? a : b) as string;
    // An integral and a float meet at DOUBLE: FLOAT would lose digits.
    return wider === "float" ? "double" : (wider as SqlType);
  }
  if (isDatetime(a) && isDatetime(b)) {
    if (a === "timestamp" || b === "timestamp") return "timestamp";
    if (a === "timestamp_ntz" || b === "timestamp_ntz") return "timestamp_ntz";
    return "date";
  }
  return complexCommonType(a, b, tightestCommonType);
}

function complexCommonType(
  a: SqlType,
  b: SqlType,
  inner: (x: SqlType, y: SqlType) => SqlType | undefined,
): SqlType | undefined {
  if (typeof a !== "object" || typeof b !== "object") return undefined;
  if (a.type === "array" && b.type === "array") {
    const e = inner(a.elementType, b.elementType);
    return e === undefined || e === "null"
      ? undefined
      : { type: "array", elementType: e, containsNull: a.containsNull || b.containsNull };
  }
  if (a.type === "map" && b.type === "map") {
    const k = inner(a.keyType, b.keyType);
    const v = inner(a.valueType, b.valueType);
    return k === undefined || v === undefined || k === "null" || v === "null"
      ? undefined
      : {
          type: "map",
          keyType: k,
          valueType: v,
          valueContainsNull: a.valueContainsNull || b.valueContainsNull,
        };
  }
  if (a.type === "struct" && b.type === "struct" && a.fields.length === b.fields.length) {
    const fields = [];
    for (let i = 0; i < a.fields.length; i++) {
      const fa = a.fields[i];
      const fb = b.fields[i];
      if (fa.name.toLowerCase() !== fb.name.toLowerCase()) return undefined;
      const t = inner(fa.type, fb.type);
      if (t === undefined || t === "null") return undefined;
      fields.push({ ...fa, type: t, nullable: fa.nullable || fb.nullable });
    }
    return { type: "struct", fields };
  }
  return undefined;
}

function widerDecimalCommonType(a: SqlType, b: SqlType): SqlType | undefined {
  if (isDecimalType(a) && isDecimalType(b)) return widerDecimalType(a, b);
  if (isIntegral(a) && isDecimalType(b)) return widerDecimalType(decimalForType(a)!, b);
  if (isDecimalType(a) && isIntegral(b)) return widerDecimalType(a, decimalForType(b)!);
  if ((isFloating(a) && isDecimalType(b)) || (isDecimalType(a) && isFloating(b))) return "double";
  return undefined;
}

/** AnsiStringPromotionTypeCoercion.findWiderTypeForString. */
export function stringPromotionType(a: SqlType, b: SqlType): SqlType | undefined {
  if (a === "string") {
    if (isIntegral(b)) return "long";
    if (isFractional(b)) return "double";
    if (b === "null") return "string";
    if (isAtomic(b)) return b;
    return undefined;
  }
  if (b === "string") return stringPromotionType(b, a);
  return undefined;
}

/** findWiderTypeForTwo (ANSI). */
export function widerTypeForTwo(a: SqlType, b: SqlType): SqlType | undefined {
  return (
    tightestCommonType(a, b) ??
    widerDecimalCommonType(a, b) ??
    stringPromotionType(a, b) ??
    complexCommonType(a, b, widerTypeForTwo)
  );
}

/** findWiderCommonType: folds the types left to right, starting from NULL. */
export function widerCommonType(types: readonly SqlType[]): SqlType | undefined {
  let acc: SqlType | undefined = "null";
  for (const t of types) {
    if (acc === undefined) return undefined;
    acc = widerTypeForTwo(acc, t);
  }
  return acc;
}

// ---------------------------------------------------------------------------------------------
// Cast legality

/** Cast.canAnsiCast. */
export function canAnsiCast(from: SqlType, to: SqlType): boolean {
  if (sameType(from, to) || from === "null" || to === "string") return true;
  if (typeof from === "object" && typeof to === "object") {
    if (from.type === "array" && to.type === "array") {
      return (
        canAnsiCast(from.elementType, to.elementType) && (!from.containsNull || to.containsNull)
      );
    }
    if (from.type === "map" && to.type === "map") {
      return (
        canAnsiCast(from.keyType, to.keyType) &&
        canAnsiCast(from.valueType, to.valueType) &&
        (!from.valueContainsNull || to.valueContainsNull)
      );
    }
    if (from.type === "struct" && to.type === "struct") {
      return (
        from.fields.length === to.fields.length &&
        from.fields.every(
          (f, i) =>
            canAnsiCast(f.type, to.fields[i].type) && (!f.nullable || to.fields[i].nullable),
        )
      );
    }
  }
  if (from === "string") {
    return to === "binary" || to === "boolean" || isDatetime(to) || isNumeric(to);
  }
  if (isNumeric(from)) return to === "boolean" || to === "timestamp" || isNumeric(to);
  switch (from) {
    case "date":
      return isTimestamp(to);
    case "timestamp":
      return to === "timestamp_ntz" || to === "date" || isNumeric(to);
    case "timestamp_ntz":
      return to === "timestamp" || to === "date";
    case "boolean":
      return isNumeric(to);
    default:
      return false;
  }
}

/** Cast.canCast (non-ANSI): decides between the two suggestions of a refused ANSI cast. */
function canLegacyCast(from: SqlType, to: SqlType): boolean {
  if (canAnsiCast(from, to)) return true;
  if (isIntegral(from) && to === "binary") return true;
  if ((from === "date" || from === "timestamp") && to === "boolean") return true;
  if (from === "boolean" && to === "timestamp") return true;
  if (from === "date" && isNumeric(to)) return true;
  return false;
}

/** The DATATYPE_MISMATCH sub-class and detail for a CAST the ANSI rules refuse. */
export function castMismatch(
  from: SqlType,
  to: SqlType,
  tryCast: boolean,
  sqlExpr: string,
): SiltError {
  const types = { sqlExpr, srcType: quotedType(from), targetType: quotedType(to) };
  const withFunctions = (functionNames: string) =>
    siltError("DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION", { ...types, functionNames });
  if (isNumeric(from) && to === "date") return withFunctions("`DATE_FROM_UNIX_DATE`");
  if (from === "date" && isNumeric(to)) return withFunctions("`UNIX_DATE`");
  if (!tryCast && canLegacyCast(from, to)) {
    return siltError("DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION", {
      ...types,
      config: ANSI_CONF,
    });
  }
  return siltError("DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION", types);
}

/** Cast.canANSIStoreAssign: what a function argument may be implicitly cast from. */
export function canStoreAssign(from: SqlType, to: SqlType): boolean {
  if (sameType(from, to) || from === "null") return true;
  if (isNumeric(from) && isNumeric(to)) return true;
  if (isAtomic(from) && to === "string") return true;
  if (isDatetime(from) && isDatetime(to)) return true;
  if (typeof from === "object" && typeof to === "object") {
    if (from.type === "array" && to.type === "array") {
      return (
        (!from.containsNull || to.containsNull) && canStoreAssign(from.elementType, to.elementType)
      );
    }
    if (from.type === "struct" && to.type === "struct") {
      return (
        from.fields.length === to.fields.length &&
        from.fields.every(
          (f, i) =>
            (!f.nullable || to.fields[i].nullable) && canStoreAssign(f.type, to.fields[i].type),
        )
      );
    }
    if (from.type === "map" && to.type === "map") {
      return (
        (!from.valueContainsNull || to.valueContainsNull) &&
        canStoreAssign(from.keyType, to.keyType) &&
        canStoreAssign(from.valueType, to.valueType)
      );
    }
  }
  return false;
}
