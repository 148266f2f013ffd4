/**
 * The errors Spark raises in ANSI mode when types do not fit, arithmetic overflows, a divisor is
 * zero or a cast cannot succeed: Spark's error classes, SQLSTATEs and message texts.
 */
import type { DecimalType } from "../delta/schema.ts";
import { badRequest, type SiltError } from "../errors.ts";
import type { SqlType } from "./ast.ts";
import { sqlLiteral } from "./scalar-text.ts";
import { ANSI_CONF, quotedType, type Scalar } from "./types.ts";

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
