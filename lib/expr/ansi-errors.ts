/**
 * The errors Spark raises in ANSI mode when types do not fit, arithmetic overflows, a divisor is
 * zero or a cast cannot succeed: Spark's error classes, SQLSTATEs and message texts.
 */
import type { DecimalType } from "../delta/schema.ts";
import { type SiltError, siltError } from "../errors.ts";
import type { SqlType } from "./ast.ts";
import { sqlLiteral } from "./scalar-text.ts";
import { ANSI_CONF, quotedType, type Scalar } from "./types.ts";

export function arithmeticOverflow(message: string, alternative?: string): SiltError {
  const alt = alternative
    ? ` Use '${alternative}' to tolerate overflow and return NULL instead.`
    : "";
  return siltError("ARITHMETIC_OVERFLOW", { message, alt, config: ANSI_CONF });
}

export function binaryArithmeticOverflow(
  left: string,
  symbol: string,
  right: string,
  tryFunction: string,
): SiltError {
  return siltError("BINARY_ARITHMETIC_OVERFLOW", { left, symbol, right, tryFunction });
}

export function divideByZero(): SiltError {
  return siltError("DIVIDE_BY_ZERO");
}

export function remainderByZero(): SiltError {
  return siltError("REMAINDER_BY_ZERO");
}

export function castInvalidInput(value: Scalar, from: SqlType, to: SqlType): SiltError {
  return siltError("CAST_INVALID_INPUT:USE_TRY_CAST", {
    value: sqlLiteral(value, from),
    from: quotedType(from),
    to: quotedType(to),
  });
}

export function castOverflow(value: Scalar, from: SqlType, to: SqlType): SiltError {
  return siltError("CAST_OVERFLOW", {
    value: sqlLiteral(value, from),
    from: quotedType(from),
    to: quotedType(to),
  });
}

export function decimalOutOfRange(valueText: string, t: DecimalType): SiltError {
  return siltError("NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION", {
    value: valueText,
    precision: t.precision,
    scale: t.scale,
    config: ANSI_CONF,
  });
}
