/**
 * Spark SQL's type rules, in ANSI mode as Spark 4 runs by default: the names types print under,
 * the common type of two operands (AnsiTypeCoercion's precedence lists plus its string
 * promotion), decimal precision and scale of arithmetic (allowPrecisionLoss=true, 38-digit cap),
 * which CASTs are legal, and the scalar semantics shared by evaluation, constant folding and
 * pruning: casts with their ANSI errors, exact decimal arithmetic, value ordering.
 *
 * Scalars (one value of a SqlType, as analysis and evaluation hold them):
 *   boolean → boolean; byte/short/integer/date (days) → number; long/timestamp/timestamp_ntz
 *   (microseconds) → bigint; float/double → number; decimal → bigint unscaled at the type's
 *   scale; string → string; binary → Uint8Array; struct/array/map → their canonical JSON value.
 * NULL is `null` for every type.
 */
import {
  daysFromCivil,
  formatDate,
  formatDecimal,
  formatTimestamp,
  formatTimestampSpark,
  parseDecimal,
  parseTimestamp,
  shortestFloat32,
} from "../data/json-rows.ts";
import { DecimalValue } from "../data/stats.ts";
import {
  type DecimalType,
  decimal,
  MAX_DECIMAL_PRECISION,
  sparkTypeName,
} from "../delta/schema.ts";
import { badRequest, SiltError } from "../errors.ts";
import type { SqlType } from "./ast.ts";

export type Scalar = boolean | number | bigint | string | Uint8Array | object;

export type IntegralName = "byte" | "short" | "integer" | "long";

// ---------------------------------------------------------------------------------------------
// Type predicates

export const isIntegral = (t: SqlType): t is IntegralName =>
  t === "byte" || t === "short" || t === "integer" || t === "long";
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
// Names in messages

const SIMPLE_IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const quoteIdent = (name: string): string => `\`${name.replaceAll("`", "``")}\``;
export const quoteIfNeeded = (name: string): string =>
  SIMPLE_IDENT.test(name) ? name : quoteIdent(name);

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

// ---------------------------------------------------------------------------------------------
// Errors

const ANSI_CONF = '"spark.sql.ansi.enabled"';

/** DATATYPE_MISMATCH.<sub>: `Cannot resolve "<expr>" due to data type mismatch: <detail>`. */
export function dataTypeMismatch(sub: string, sqlExpr: string, detail: string): SiltError {
  return badRequest(
    `DATATYPE_MISMATCH.${sub}`,
    `Cannot resolve "${sqlExpr}" due to data type mismatch: ${detail}`,
    "42K09",
  );
}

export function arithmeticOverflow(message: string, alternative?: string): SiltError {
  const alt = alternative
    ? ` Use '${alternative}' to tolerate overflow and return NULL instead.`
    : "";
  return badRequest(
    "ARITHMETIC_OVERFLOW",
    `${message}.${alt} If necessary set ${ANSI_CONF} to "false" to bypass this error.`,
    "22003",
  );
}

export function binaryArithmeticOverflow(
  left: string,
  symbol: string,
  right: string,
  tryFunction: string,
): SiltError {
  return badRequest(
    "BINARY_ARITHMETIC_OVERFLOW",
    `${left} ${symbol} ${right} caused overflow. Use \`${tryFunction}\` to ignore overflow problem and return NULL.`,
    "22003",
  );
}

export function divideByZero(): SiltError {
  return badRequest(
    "DIVIDE_BY_ZERO",
    `Division by zero. Use \`try_divide\` to tolerate divisor being 0 and return NULL instead. If necessary set ${ANSI_CONF} to "false" to bypass this error.`,
    "22012",
  );
}

export function castInvalidInput(value: Scalar, from: SqlType, to: SqlType): SiltError {
  return badRequest(
    "CAST_INVALID_INPUT",
    `The value ${sqlLiteral(value, from)} of the type ${quotedType(from)} cannot be cast to ${quotedType(to)} because it is malformed. Correct the value as per the syntax, or change its target type. Use \`try_cast\` to tolerate malformed input and return NULL instead.`,
    "22018",
  );
}

export function castOverflow(value: Scalar, from: SqlType, to: SqlType): SiltError {
  return badRequest(
    "CAST_OVERFLOW",
    `The value ${sqlLiteral(value, from)} of the type ${quotedType(from)} cannot be cast to ${quotedType(to)} due to an overflow. Use \`try_cast\` to tolerate overflow and return NULL instead.`,
    "22003",
  );
}

export function decimalOutOfRange(valueText: string, t: DecimalType): SiltError {
  return badRequest(
    "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
    `${valueText} cannot be represented as Decimal(${t.precision}, ${t.scale}). If necessary set ${ANSI_CONF} to "false" to bypass this error, and return NULL instead.`,
    "22003",
  );
}

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
): { sub: string; detail: string } {
  const f = quotedType(from);
  const t = quotedType(to);
  const withFunctions = (names: string) => ({
    sub: "CAST_WITH_FUNC_SUGGESTION",
    detail: `cannot cast ${f} to ${t}.\nTo convert values from ${f} to ${t}, you can use the functions ${names} instead.`,
  });
  if (isNumeric(from) && to === "date") return withFunctions("`DATE_FROM_UNIX_DATE`");
  if (from === "date" && isNumeric(to)) return withFunctions("`UNIX_DATE`");
  if (!tryCast && canLegacyCast(from, to)) {
    return {
      sub: "CAST_WITH_CONF_SUGGESTION",
      detail: `cannot cast ${f} to ${t} with ANSI mode on.\nIf you have to cast ${f} to ${t}, you can set ${ANSI_CONF} as 'false'.`,
    };
  }
  return { sub: "CAST_WITHOUT_SUGGESTION", detail: `cannot cast ${f} to ${t}.` };
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

// ---------------------------------------------------------------------------------------------
// Exact decimal arithmetic on bigint unscaled values

const POW10N: bigint[] = [1n];
export function pow10n(n: number): bigint {
  for (let i = POW10N.length; i <= n; i++) POW10N.push(POW10N[i - 1] * 10n);
  return POW10N[n];
}

/** n / d rounded half away from zero (Java's HALF_UP). */
export function divHalfUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n - q * d;
  if (r === 0n) return q;
  const ar = r < 0n ? -r : r;
  const ad = d < 0n ? -d : d;
  if (ar * 2n >= ad) return n < 0n !== d < 0n ? q - 1n : q + 1n;
  return q;
}

/** Unscaled value at scale `from` brought to scale `to`, rounding HALF_UP when shortening. */
export function rescale(u: bigint, from: number, to: number): bigint {
  if (to === from) return u;
  if (to > from) return u * pow10n(to - from);
  return divHalfUp(u, pow10n(from - to));
}

export const fitsPrecision = (u: bigint, precision: number): boolean =>
  (u < 0n ? -u : u) < pow10n(precision);

function digitCount(u: bigint): number {
  return (u < 0n ? -u : u).toString().length;
}

/** The value rounded HALF_UP to 38 significant digits (java.math.MathContext(38)). */
function roundToContext(u: bigint, scale: number): [bigint, number] {
  const digits = digitCount(u);
  if (digits <= MAX_DECIMAL_PRECISION) return [u, scale];
  const drop = digits - MAX_DECIMAL_PRECISION;
  return [divHalfUp(u, pow10n(drop)), scale - drop];
}

/** The value text Spark shows for a decimal that does not fit its type. */
const plainDecimal = (u: bigint, scale: number): string =>
  scale >= 0 ? formatDecimal(u, scale) : (u * pow10n(-scale)).toString();

function checkDecimal(u: bigint, scale: number, t: DecimalType): bigint {
  const r = rescale(u, scale, t.scale);
  if (!fitsPrecision(r, t.precision)) throw decimalOutOfRange(plainDecimal(r, t.scale), t);
  return r;
}

/**
 * Decimal arithmetic as Spark's Decimal does it: + and - exact, * / % through a 38-digit
 * HALF_UP context, then rounded HALF_UP to the result type and checked against its precision.
 * Division by zero raises DIVIDE_BY_ZERO.
 */
export function decimalArith(
  op: Exclude<ArithOp, "div">,
  a: bigint,
  ta: DecimalType,
  b: bigint,
  tb: DecimalType,
  result: DecimalType,
): bigint {
  const s = Math.max(ta.scale, tb.scale);
  switch (op) {
    case "+":
      return checkDecimal(rescale(a, ta.scale, s) + rescale(b, tb.scale, s), s, result);
    case "-":
      return checkDecimal(rescale(a, ta.scale, s) - rescale(b, tb.scale, s), s, result);
    case "*": {
      const [u, sc] = roundToContext(a * b, ta.scale + tb.scale);
      return checkDecimal(u, sc, result);
    }
    case "/": {
      if (b === 0n) throw divideByZero();
      const [u, sc] = divideToContext(a, ta.scale, b, tb.scale);
      return checkDecimal(u, sc, result);
    }
    case "%": {
      if (b === 0n) throw divideByZero();
      const r = rescale(a, ta.scale, s) % rescale(b, tb.scale, s);
      return checkDecimal(r, s, result);
    }
  }
}

/** `a div b` on decimals: the quotient truncated toward zero, as a long. */
export function decimalIntegralDivide(a: bigint, sa: number, b: bigint, sb: number): bigint {
  if (b === 0n) throw divideByZero();
  const s = Math.max(sa, sb);
  const q = rescale(a, sa, s) / rescale(b, sb, s);
  if (q < INT64_MIN || q > INT64_MAX) throw arithmeticOverflow("long overflow", "try_divide");
  return q;
}

/** (a/10^sa) / (b/10^sb) rounded HALF_UP to 38 significant digits: [unscaled, scale]. */
function divideToContext(a: bigint, sa: number, b: bigint, sb: number): [bigint, number] {
  if (a === 0n) return [0n, 0];
  // value = n / d exactly
  let n = a * pow10n(sb);
  let d = b * pow10n(sa);
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const an = n < 0n ? -n : n;
  let k = MAX_DECIMAL_PRECISION - (digitCount(an) - digitCount(d)) - 1;
  for (;;) {
    const t = k >= 0 ? (an * pow10n(k)) / d : an / (d * pow10n(-k));
    const digits = t === 0n ? 0 : t.toString().length;
    if (digits > MAX_DECIMAL_PRECISION) k--;
    else if (digits < MAX_DECIMAL_PRECISION) k++;
    else break;
  }
  const q = k >= 0 ? divHalfUp(n * pow10n(k), d) : divHalfUp(n, d * pow10n(-k));
  return [q, k];
}

// ---------------------------------------------------------------------------------------------
// Integral arithmetic with ANSI overflow checks

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

const INT_RANGE: Record<IntegralName, [number, number]> = {
  byte: [-128, 127],
  short: [-32768, 32767],
  integer: [-2147483648, 2147483647],
  long: [Number.NaN, Number.NaN],
};

const TRY_NAMES: Record<string, string> = {
  "+": "try_add",
  "-": "try_subtract",
  "*": "try_multiply",
};

/** The error an overflowing integral +, - or * raises (by type, as Spark words it). */
export function integralOverflow(
  op: "+" | "-" | "*",
  t: IntegralName,
  a: number | bigint,
  b: number | bigint,
): SiltError {
  if (t === "integer") return arithmeticOverflow("integer overflow", TRY_NAMES[op]);
  if (t === "long") return arithmeticOverflow("long overflow", TRY_NAMES[op]);
  return binaryArithmeticOverflow(sqlLiteral(a, t), op, sqlLiteral(b, t), TRY_NAMES[op]);
}

/** +, -, * on integral scalars of type t (numbers, or bigints for long), ANSI-checked. */
export function integralArith(
  op: "+" | "-" | "*",
  t: IntegralName,
  a: number | bigint,
  b: number | bigint,
): number | bigint {
  if (t === "long") {
    const x = a as bigint;
    const y = b as bigint;
    const r = op === "+" ? x + y : op === "-" ? x - y : x * y;
    if (r < INT64_MIN || r > INT64_MAX) throw integralOverflow(op, t, a, b);
    return r;
  }
  const x = a as number;
  const y = b as number;
  const r = op === "+" ? x + y : op === "-" ? x - y : x * y;
  const [lo, hi] = INT_RANGE[t];
  if (r < lo || r > hi) throw integralOverflow(op, t, a, b);
  return r;
}

/** Unary minus of an integral scalar; MIN_VALUE overflows. */
export function integralNegate(t: IntegralName, a: number | bigint): number | bigint {
  if (t === "long") {
    if (a === INT64_MIN) throw arithmeticOverflow("long overflow");
    return -(a as bigint);
  }
  const [lo] = INT_RANGE[t];
  if (a === lo) {
    if (t === "integer") throw arithmeticOverflow("integer overflow");
    throw arithmeticOverflow(`${t === "byte" ? "tinyint" : "smallint"} overflow`);
  }
  return a === 0 ? 0 : -(a as number);
}

export function integralRange(t: IntegralName): [bigint, bigint] {
  if (t === "long") return [INT64_MIN, INT64_MAX];
  const [lo, hi] = INT_RANGE[t];
  return [BigInt(lo), BigInt(hi)];
}

// ---------------------------------------------------------------------------------------------
// Text forms

/** Java's Double.toString: "1.0", "1.0E10", "1.0E-5", "NaN", "Infinity". */
export function javaDoubleString(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Number.POSITIVE_INFINITY) return "Infinity";
  if (x === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(x);
    return s.includes(".") ? s : `${s}.0`;
  }
  const [mantissa, exp] = x.toExponential().split("e");
  return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}E${exp.startsWith("+") ? exp.slice(1) : exp}`;
}

/** Java's Float.toString of a float value held as a JS number. */
export const javaFloatString = (x: number): string =>
  javaDoubleString(Number.isFinite(x) ? shortestFloat32(Math.fround(x)) : x);

/** Java BigDecimal.toString of a decimal scalar (scientific below 1E-6, as Spark prints). */
export const decimalString = (u: bigint, scale: number): string =>
  new DecimalValue(u, scale).toString();

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex").toUpperCase();

/** Spark's Literal.sql: how a value prints as a SQL literal (1L, 9.50BD, DATE '…', 'x'). */
export function sqlLiteral(v: Scalar | null, t: SqlType): string {
  if (v === null) return "NULL";
  if (typeof t === "object") {
    if (t.type === "decimal") return `${decimalString(v as bigint, t.scale)}BD`;
    return JSON.stringify(v);
  }
  switch (t) {
    case "boolean":
      return v ? "true" : "false";
    case "byte":
      return `${v}Y`;
    case "short":
      return `${v}S`;
    case "integer":
      return String(v);
    case "long":
      return `${v}L`;
    case "float":
    case "double": {
      const x = v as number;
      const name = t === "float" ? "FLOAT" : "DOUBLE";
      if (!Number.isFinite(x)) return `CAST('${javaDoubleString(x)}' AS ${name})`;
      return t === "float" ? `${javaFloatString(x)}F` : `${javaDoubleString(x)}D`;
    }
    case "string":
      return `'${(v as string).replaceAll("'", "\\'")}'`;
    case "binary":
      return `X'${hex(v as Uint8Array)}'`;
    case "date":
      return `DATE '${formatDate(v as number)}'`;
    case "timestamp":
      return `TIMESTAMP '${formatTimestampSpark(v as bigint)}'`;
    case "timestamp_ntz":
      return `TIMESTAMP_NTZ '${formatTimestampSpark(v as bigint)}'`;
    default:
      return String(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Canonical JSON values (DESIGN §6) <-> scalars

const base64 = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

const MAX_SAFE_N = BigInt(Number.MAX_SAFE_INTEGER);

/** A scalar from a canonical JSON value (or a looser form: numbers for decimals, etc.). */
export function toScalar(value: unknown, t: SqlType): Scalar | null {
  if (value === null || value === undefined || t === "null") return null;
  if (typeof t === "object") {
    if (t.type !== "decimal") return value as Scalar;
    if (typeof value === "bigint") return value * pow10n(t.scale);
    if (value instanceof DecimalValue) return rescale(value.unscaled, value.scale, t.scale);
    const r = parseDecimal(String(value), MAX_DECIMAL_PRECISION + t.scale + 1, t.scale);
    if (typeof r === "string") throw castInvalidInput(String(value), "string", t);
    return BigInt(r);
  }
  switch (t) {
    case "boolean":
      return value === true || value === "true";
    case "byte":
    case "short":
    case "integer":
      return Number(value);
    case "long":
      return typeof value === "bigint" ? value : BigInt(value as number | string);
    case "float":
    case "double": {
      if (typeof value === "number") return t === "float" ? Math.fround(value) : value;
      const x = parseFloating(String(value));
      if (x === undefined) throw castInvalidInput(String(value), "string", t);
      return t === "float" ? Math.fround(x) : x;
    }
    case "string":
      return String(value);
    case "binary":
      return value instanceof Uint8Array
        ? value
        : new Uint8Array(Buffer.from(String(value), "base64"));
    case "date": {
      if (typeof value === "number") return value;
      const d = parseSparkDate(String(value));
      if (d === undefined) throw castInvalidInput(String(value), "string", "date");
      return d;
    }
    case "timestamp":
    case "timestamp_ntz": {
      if (typeof value === "bigint") return value;
      const m = parseSparkTimestamp(String(value), t === "timestamp_ntz");
      if (m === undefined) throw castInvalidInput(String(value), "string", t);
      return m;
    }
  }
}

/** The canonical JSON value of a scalar (what arrowValues yields for the same value). */
export function fromScalar(v: Scalar | null, t: SqlType): unknown {
  if (v === null || t === "null") return null;
  if (typeof t === "object") {
    return t.type === "decimal" ? formatDecimal(v as bigint, t.scale) : v;
  }
  switch (t) {
    case "long": {
      const b = v as bigint;
      return b >= -MAX_SAFE_N && b <= MAX_SAFE_N ? Number(b) : String(b);
    }
    case "float": {
      const x = v as number;
      return Number.isFinite(x) ? shortestFloat32(Math.fround(x)) : floatText(x);
    }
    case "double": {
      const x = v as number;
      return Number.isFinite(x) ? x : floatText(x);
    }
    case "binary":
      return base64(v as Uint8Array);
    case "date":
      return formatDate(v as number);
    case "timestamp":
      return formatTimestamp(v as bigint, true);
    case "timestamp_ntz":
      return formatTimestamp(v as bigint, false);
    default:
      return v;
  }
}

const floatText = (x: number): string =>
  Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";

// ---------------------------------------------------------------------------------------------
// Ordering

/** Code point order of two strings (UTF-8 byte order, as Spark's UTF8String compares). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // Surrogates encode code points above U+FFFF, so they sort after U+E000..U+FFFF.
      const fx = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
      const fy = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
      return fx - fy;
    }
  }
  return a.length - b.length;
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** Spark's double ordering: NaN equals NaN and sorts above everything; -0.0 equals 0.0. */
export function compareDoubles(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  const na = Number.isNaN(a);
  const nb = Number.isNaN(b);
  return na && nb ? 0 : na ? 1 : -1;
}

/** Order of two non-null scalars of the same type. */
export function compareScalars(t: SqlType, a: Scalar, b: Scalar): number {
  if (typeof a === "number" && typeof b === "number") {
    return isFloating(t) ? compareDoubles(a, b) : a - b;
  }
  if (typeof a === "bigint") return a < (b as bigint) ? -1 : a > (b as bigint) ? 1 : 0;
  if (typeof a === "string") return compareStrings(a, b as string);
  if (typeof a === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array) return compareBytes(a, b as Uint8Array);
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Text parsing as Spark's casts do it

/** Trims what Java's String.trim trims (every char <= U+0020), as Spark's casts do. */
export function trimControl(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 32) start++;
  while (end > start && s.charCodeAt(end - 1) <= 32) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[dDfF]?$/;

/** Double.parseDouble plus Spark's special literals; undefined when malformed. */
export function parseFloating(text: string): number | undefined {
  const s = trimControl(text);
  if (FLOAT_TEXT.test(s)) {
    const last = s.charCodeAt(s.length - 1);
    return Number(last > 57 ? s.slice(0, -1) : s);
  }
  switch (s.toLowerCase()) {
    case "inf":
    case "+inf":
    case "infinity":
    case "+infinity":
      return Number.POSITIVE_INFINITY;
    case "-inf":
    case "-infinity":
      return Number.NEGATIVE_INFINITY;
    case "nan":
      return Number.NaN;
    default:
      return undefined;
  }
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
export const daysInMonth = (y: number, m: number): number =>
  m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;

const SPARK_DATE = /^([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?$/s;

/** Spark's stringToDate: `yyyy`, `yyyy-[m]m`, `yyyy-[m]m-[d]d[T ]…`; undefined if invalid. */
export function parseSparkDate(text: string): number | undefined {
  const m = SPARK_DATE.exec(trimControl(text));
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = m[2] === undefined ? 1 : Number(m[2]);
  const d = m[3] === undefined ? 1 : Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  return daysFromCivil(y, mo, d);
}

const YEAR_ONLY = /^[+-]?\d{4,7}$/;
const YEAR_MONTH = /^([+-]?\d{4,7})-(\d{1,2})$/;

/** Spark's stringToTimestamp (UTC session time zone); undefined if invalid. */
export function parseSparkTimestamp(text: string, ntz: boolean): bigint | undefined {
  const s = trimControl(text);
  if (YEAR_ONLY.test(s) || YEAR_MONTH.test(s)) {
    const days = parseSparkDate(s);
    return days === undefined ? undefined : BigInt(days) * MICROS_PER_DAY;
  }
  const m = parseTimestamp(s, ntz);
  return m === undefined ? undefined : BigInt(m);
}

export const MICROS_PER_DAY = 86_400_000_000n;

/** floor(a / b) on bigints. */
export function floorDivN(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

export const TRUE_STRINGS = new Set(["t", "true", "y", "yes", "1"]);
export const FALSE_STRINGS = new Set(["f", "false", "n", "no", "0"]);

// ---------------------------------------------------------------------------------------------
// CAST

const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

/**
 * CAST of a scalar with ANSI semantics: malformed text raises CAST_INVALID_INPUT, values out of
 * range CAST_OVERFLOW or NUMERIC_VALUE_OUT_OF_RANGE. With `tryCast`, those become NULL.
 */
export function castScalar(
  v: Scalar | null,
  from: SqlType,
  to: SqlType,
  tryCast = false,
): Scalar | null {
  if (v === null) return null;
  if (!tryCast) return castValue(v, from, to);
  try {
    return castValue(v, from, to);
  } catch (e) {
    if (e instanceof SiltError) return null;
    throw e;
  }
}

function castValue(v: Scalar, from: SqlType, to: SqlType): Scalar | null {
  if (sameType(from, to)) return v;
  if (from === "null") return null;
  if (to === "string") return scalarToString(v, from);
  if (typeof to === "object") {
    if (to.type === "decimal") return toDecimal(v, from, to);
    return castComplex(v, from, to);
  }
  switch (to) {
    case "binary":
      return utf8Encoder.encode(v as string);
    case "boolean":
      if (from === "string") {
        const s = trimControl(v as string).toLowerCase();
        if (TRUE_STRINGS.has(s)) return true;
        if (FALSE_STRINGS.has(s)) return false;
        throw castInvalidInput(v, from, to);
      }
      if (typeof v === "bigint") return v !== 0n;
      return (v as number) !== 0;
    case "byte":
    case "short":
    case "integer":
    case "long":
      return toIntegral(v, from, to);
    case "float":
    case "double": {
      let x: number;
      if (from === "string") {
        const p = parseFloating(v as string);
        if (p === undefined) throw castInvalidInput(v, from, to);
        x = p;
      } else if (from === "boolean") {
        x = v ? 1 : 0;
      } else if (isDecimalType(from)) {
        x = Number(formatDecimal(v as bigint, from.scale));
      } else if (from === "timestamp") {
        x = Number(v as bigint) / 1e6;
      } else {
        x = Number(v);
      }
      return to === "float" ? Math.fround(x) : x;
    }
    case "date":
      if (from === "string") {
        const d = parseSparkDate(v as string);
        if (d === undefined) throw castInvalidInput(v, from, to);
        return d;
      }
      return Number(floorDivN(v as bigint, MICROS_PER_DAY));
    case "timestamp":
    case "timestamp_ntz":
      if (from === "string") {
        const m = parseSparkTimestamp(v as string, to === "timestamp_ntz");
        if (m === undefined) throw castInvalidInput(v, from, to);
        return m;
      }
      if (from === "date") return BigInt(v as number) * MICROS_PER_DAY;
      if (isTimestamp(from)) return v;
      return numericToTimestamp(v, from);
    default:
      return null;
  }
}

function numericToTimestamp(v: Scalar, from: SqlType): bigint {
  if (isFloating(from)) {
    const x = v as number;
    if (!Number.isFinite(x)) throw castInvalidInput(v, from, "timestamp");
    const m = BigInt(Math.trunc(x * 1e6));
    return m < INT64_MIN ? INT64_MIN : m > INT64_MAX ? INT64_MAX : m;
  }
  if (isDecimalType(from)) {
    const m = ((v as bigint) * 1_000_000n) / pow10n(from.scale);
    if (m < INT64_MIN || m > INT64_MAX) throw castOverflow(v, from, "timestamp");
    return m;
  }
  const m = BigInt(v as number | bigint) * 1_000_000n;
  if (m < INT64_MIN || m > INT64_MAX) throw arithmeticOverflow("long overflow");
  return m;
}

const INT_TEXT = /^[+-]?\d+$/;

function toIntegral(v: Scalar, from: SqlType, to: IntegralName): number | bigint {
  const [lo, hi] = integralRange(to);
  let b: bigint;
  if (from === "string") {
    const s = trimControl(v as string);
    if (!INT_TEXT.test(s)) throw castInvalidInput(v, from, to);
    b = BigInt(s);
    if (b < lo || b > hi) throw castInvalidInput(v, from, to);
  } else if (from === "boolean") {
    b = v ? 1n : 0n;
  } else if (isDecimalType(from)) {
    b = (v as bigint) / pow10n(from.scale);
    if (b < lo || b > hi) throw castOverflow(v, from, to);
  } else if (isFloating(from)) {
    const x = v as number;
    // Spark's test: floor(x) <= MAX and ceil(x) >= MIN, in double arithmetic.
    if (!(Math.floor(x) <= Number(hi) && Math.ceil(x) >= Number(lo))) {
      throw castOverflow(v, from, to);
    }
    b = BigInt(Math.trunc(x));
    if (b > hi) b = hi;
    if (b < lo) b = lo;
  } else if (from === "timestamp") {
    b = floorDivN(v as bigint, 1_000_000n);
    if (b < lo || b > hi) throw castOverflow(v, from, to);
  } else {
    b = BigInt(v as number | bigint);
    if (b < lo || b > hi) throw castOverflow(v, from, to);
  }
  return to === "long" ? b : Number(b);
}

function toDecimal(v: Scalar, from: SqlType, to: DecimalType): bigint | null {
  let u: bigint;
  let scale: number;
  if (from === "string") {
    const r = parseDecimal(trimControl(v as string), MAX_DECIMAL_PRECISION * 2, to.scale);
    if (r === "invalid") throw castInvalidInput(v, from, to);
    if (r === "overflow") throw decimalOutOfRange(trimControl(v as string), to);
    u = BigInt(r);
    scale = to.scale;
  } else if (from === "boolean") {
    u = v ? 1n : 0n;
    scale = 0;
  } else if (isDecimalType(from)) {
    u = v as bigint;
    scale = from.scale;
  } else if (isFloating(from)) {
    const x = v as number;
    // Spark's Decimal(double) fails on NaN and infinities and the cast yields NULL.
    if (!Number.isFinite(x)) return null;
    const r = parseDecimal(String(x), 400, to.scale);
    if (typeof r === "string") throw decimalOutOfRange(javaDoubleString(x), to);
    u = BigInt(r);
    scale = to.scale;
  } else if (from === "timestamp") {
    u = v as bigint;
    scale = 6;
  } else {
    u = BigInt(v as number | bigint);
    scale = 0;
  }
  const r = rescale(u, scale, to.scale);
  if (!fitsPrecision(r, to.precision)) throw decimalOutOfRange(plainDecimal(r, to.scale), to);
  return r;
}

function castComplex(v: Scalar, from: SqlType, to: SqlType): Scalar {
  if (typeof from !== "object" || typeof to !== "object") return v;
  if (from.type === "array" && to.type === "array" && Array.isArray(v)) {
    return v.map((e) =>
      fromScalar(
        castValue(toScalar(e, from.elementType) as Scalar, from.elementType, to.elementType),
        to.elementType,
      ),
    );
  }
  if (from.type === "struct" && to.type === "struct") {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    from.fields.forEach((f, i) => {
      const x = toScalar(o[f.name], f.type);
      const tf = to.fields[i];
      out[tf.name] = x === null ? null : fromScalar(castValue(x, f.type, tf.type), tf.type);
    });
    return out;
  }
  return v;
}

/** CAST(x AS STRING) of a non-null scalar. */
export function scalarToString(v: Scalar, t: SqlType): string {
  if (typeof t === "object") {
    if (t.type === "decimal") return decimalString(v as bigint, t.scale);
    return complexToString(v, t);
  }
  switch (t) {
    case "string":
      return v as string;
    case "boolean":
      return v ? "true" : "false";
    case "float":
      return javaFloatString(v as number);
    case "double":
      return javaDoubleString(v as number);
    case "date":
      return formatDate(v as number);
    case "timestamp":
    case "timestamp_ntz":
      return formatTimestampSpark(v as bigint);
    case "binary":
      return utf8Decoder.decode(v as Uint8Array);
    default:
      return String(v);
  }
}

/** Spark's text of arrays "[1, 2]", structs "{1, a}" and maps "{k -> v}". */
function complexToString(v: unknown, t: SqlType): string {
  const el = (x: unknown, et: SqlType): string => {
    if (x === null || x === undefined) return "null";
    return isComplex(et) ? complexToString(x, et) : scalarToString(toScalar(x, et) as Scalar, et);
  };
  if (typeof t !== "object") return String(v);
  if (t.type === "array") {
    return `[${(v as unknown[]).map((x) => el(x, t.elementType)).join(", ")}]`;
  }
  if (t.type === "struct") {
    const o = v as Record<string, unknown>;
    return `{${t.fields.map((f) => el(o[f.name], f.type)).join(", ")}}`;
  }
  if (t.type === "map") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .map((k) => `${el(k, t.keyType)} -> ${el(o[k], t.valueType)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(v);
}
