/**
 * The keyword sets of Spark SQL's grammar that decide what a word is where it stands: never an
 * identifier, never a column in an expression, never an implicit alias, still a function name,
 * or the prefix of a typed literal.
 */

/** Spark's strict non-reserved keywords: never identifiers in its default (non-ANSI) mode. */
export const STRICT_RESERVED = new Set([
  "ANTI",
  "CROSS",
  "EXCEPT",
  "FULL",
  "INNER",
  "INTERSECT",
  "JOIN",
  "LATERAL",
  "LEFT",
  "MINUS",
  "NATURAL",
  "ON",
  "RIGHT",
  "SEMI",
  "UNION",
  "USING",
]);

/** Words that cannot name a column in an expression (they end or structure one). */
export const EXPR_RESERVED = new Set([
  ...STRICT_RESERVED,
  "AND",
  "AS",
  "BETWEEN",
  "BY",
  "DISTINCT",
  "DIV",
  "ELSE",
  "END",
  "ESCAPE",
  "FROM",
  "GROUP",
  "HAVING",
  "ILIKE",
  "IN",
  "INTO",
  "IS",
  "LIKE",
  "LIMIT",
  "NOT",
  "OR",
  "ORDER",
  "REGEXP",
  "RLIKE",
  "SELECT",
  "THEN",
  "WHEN",
  "WHERE",
]);

/** Words after an expression or table that start the next clause instead of being an alias. */
export const NO_IMPLICIT_ALIAS = new Set([
  ...EXPR_RESERVED,
  "ASC",
  "CLUSTER",
  "DESC",
  "DISTRIBUTE",
  "DRY",
  "FILTER",
  "LITE",
  "NULLS",
  "OFFSET",
  "OVER",
  "PARTITION",
  "PIVOT",
  "QUALIFY",
  "REPLACE",
  "RETAIN",
  "SET",
  "SORT",
  "TABLE",
  "TABLESAMPLE",
  "TO",
  "UNPIVOT",
  "VALUES",
  "WINDOW",
  "WITH",
  "WITHIN",
  "ZORDER",
]);

/** Reserved words that still name functions when a parenthesis follows: left(s, 2). */
export const FUNCTION_KEYWORDS = new Set(["LEFT", "RIGHT"]);

export const TYPED_LITERALS = new Set(["DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "X"]);
