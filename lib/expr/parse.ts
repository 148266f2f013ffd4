/**
 * The SQL parser's entry points for expressions, queries and type names, each reading exactly
 * one construct. Every failure is a SiltError (status 400) with Spark's parse error classes and
 * a position; nesting deeper than MAX_DEPTH is a PARSE_SYNTAX_ERROR rather than a stack overflow.
 */

import type { DataType } from "../delta/schema.ts";
import { SiltError, siltError } from "../errors.ts";
import type { Expr, Query } from "./ast.ts";
import { QueryParser } from "./query-parser.ts";

/** Parses one expression (a REPLACE WHERE predicate, a pruning filter, …) and nothing more. */
export const parseExpression = (sql: string): Expr => parseWhole(sql, (p) => p.expression());

/** Parses one query (SELECT, VALUES, set operations). */
export const parseQuery = (sql: string): Query => parseWhole(sql, (p) => p.query());

/** Parses a Spark SQL type name (`DECIMAL(10,2)`, `ARRAY<STRUCT<a: INT>>`). */
export const parseDataType = (sql: string): DataType => parseWhole(sql, (p) => p.dataType());

/** `sql` as exactly one construct of the kind `parse` reads, with nothing after it. */
function parseWhole<T>(sql: string, parse: (p: QueryParser) => T): T {
  return guard(() => {
    const p = new QueryParser(sql);
    const result = parse(p);
    p.expectEnd();
    return result;
  });
}

/** Keeps the promise that nothing but a SiltError escapes, whatever the input. */
export function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SiltError) throw e;
    if (e instanceof RangeError) {
      // A stack overflow the depth limit did not foresee: still the caller's input at fault.
      throw siltError("PARSE_SYNTAX_ERROR:TOO_DEEP");
    }
    throw siltError("INTERNAL_ERROR:SQL_PARSER_FAILED", {
      reason: e instanceof Error ? e.message : String(e),
    });
  }
}
