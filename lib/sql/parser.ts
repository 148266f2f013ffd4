/**
 * Spark SQL statements and expressions into the AST of lib/expr/ast.ts, by recursive descent.
 *
 * Expression precedence is Spark's (SqlBaseParser.g4): OR < AND < NOT < one predicate (IS,
 * [NOT] IN / BETWEEN / LIKE / ILIKE / RLIKE) applied to a value expression, whose operators bind
 * comparison < `|` < `^` < `&` < `+ - ||` < `* / % DIV` < unary `- + ~` < `::`. A minus directly
 * before a number is part of the literal, as in Spark's `number` rule (`-2147483648` is an INT).
 *
 * Statements not in the AST's union get no node of their own:
 * - `USE [SCHEMA|DATABASE|NAMESPACE] a.b` becomes `{kind: "set", key: "__use__", value: "a.b"}`
 *   and `USE CATALOG c` becomes `{kind: "set", key: "__use_catalog__", value: "c"}`; name parts
 *   that are not plain identifiers are back-quoted in the value.
 * - `TABLE t` and ORDER BY / LIMIT / OFFSET on a query that already has them (or on VALUES)
 *   become `SELECT * FROM (…)` around it.
 * - `GROUP BY ALL` parses as a column named `ALL`, as in Spark, whose analyzer resolves it.
 * - EXTRACT(f FROM x), SUBSTRING(s FROM p [FOR n]) and POSITION(a IN b) become the calls
 *   extract('F', x), substring(s, p[, n]) and position(a, b); bare CURRENT_DATE,
 *   CURRENT_TIMESTAMP and CURRENT_USER become calls without arguments.
 *
 * Every failure is a SiltError (status 400) with Spark's parse error classes and a position;
 * nesting deeper than MAX_DEPTH is a PARSE_SYNTAX_ERROR rather than a stack overflow.
 */

import {
  daysFromCivil,
  formatDate,
  formatTimestamp,
  parseTimestamp,
  shortestFloat32,
} from "../data/json-rows.ts";
import {
  arrayType,
  checkDecimal,
  checkDuplicateColumns,
  type DataType,
  mapType,
  type PrimitiveTypeName,
  type StructField,
  structField,
  structType,
} from "../delta/schema.ts";
import { badRequest, SiltError } from "../errors.ts";
import type {
  Assignment,
  BinaryOp,
  ColumnChange,
  ColumnDef,
  Expr,
  FromItem,
  MergeClause,
  Name,
  NewColumn,
  OrderItem,
  Pos,
  Query,
  SecurableRef,
  SelectItem,
  Statement,
  TimeTravelSpec,
} from "../expr/ast.ts";
import { Lexer, parseError, syntaxError, type Token, tokenDisplay } from "./lexer.ts";

/**
 * Nesting budget: each parenthesis, subquery, prefix operator, function call or type level
 * spends one or more units. 500 keeps well inside Node's default stack (it overflows near
 * 1,400 units of the costliest shape, nested scalar subqueries).
 */
export const MAX_DEPTH = 500;

/** Parses exactly one statement; trailing semicolons are allowed, a second statement is not. */
export function parseStatement(sql: string): Statement {
  return guard(() => {
    const first = new Lexer(sql).next();
    if (first.kind === "word" && first.upper === "SET") return parseSet(sql, first);
    const p = new Parser(sql);
    return p.statement();
  });
}

/** Parses one expression (a REPLACE WHERE predicate, a pruning filter, …) and nothing more. */
export const parseExpression = (sql: string): Expr => parseWhole(sql, (p) => p.expression());

/** Parses one query (SELECT, VALUES, set operations). */
export const parseQuery = (sql: string): Query => parseWhole(sql, (p) => p.query());

/** Parses a Spark SQL type name (`DECIMAL(10,2)`, `ARRAY<STRUCT<a: INT>>`). */
export const parseDataType = (sql: string): DataType => parseWhole(sql, (p) => p.dataType());

/** `sql` as exactly one construct of the kind `parse` reads, with nothing after it. */
function parseWhole<T>(sql: string, parse: (p: Parser) => T): T {
  return guard(() => {
    const p = new Parser(sql);
    const result = parse(p);
    p.expectEnd();
    return result;
  });
}

/** Keeps the promise that nothing but a SiltError escapes, whatever the input. */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SiltError) throw e;
    if (e instanceof RangeError) {
      // A stack overflow the depth limit did not foresee: still the caller's input at fault.
      throw badRequest(
        "PARSE_SYNTAX_ERROR",
        "Syntax error at or near end of input: the statement nests too deeply.",
        "42601",
      );
    }
    throw new SiltError(
      "INTERNAL_ERROR",
      `The SQL parser failed unexpectedly: ${e instanceof Error ? e.message : String(e)}`,
      500,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Keyword sets

/** Spark's strict non-reserved keywords: never identifiers in its default (non-ANSI) mode. */
const STRICT_RESERVED = new Set([
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
const EXPR_RESERVED = new Set([
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
const NO_IMPLICIT_ALIAS = new Set([
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
const FUNCTION_KEYWORDS = new Set(["LEFT", "RIGHT"]);

const TYPED_LITERALS = new Set(["DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "X"]);

const SQL_PRIMITIVES: Record<string, PrimitiveTypeName> = {
  BOOLEAN: "boolean",
  TINYINT: "byte",
  BYTE: "byte",
  SMALLINT: "short",
  SHORT: "short",
  INT: "integer",
  INTEGER: "integer",
  BIGINT: "long",
  LONG: "long",
  FLOAT: "float",
  REAL: "float",
  DOUBLE: "double",
  DATE: "date",
  TIMESTAMP: "timestamp",
  TIMESTAMP_LTZ: "timestamp",
  TIMESTAMP_NTZ: "timestamp_ntz",
  STRING: "string",
  BINARY: "binary",
};

type OperatorInfo = { op: BinaryOp; bp: number };

/** Binding power of each value operator; comparison binds loosest. */
const BINARY_OPS: Record<string, OperatorInfo> = {
  "=": { op: "=", bp: 1 },
  "==": { op: "=", bp: 1 },
  "!=": { op: "!=", bp: 1 },
  "<>": { op: "!=", bp: 1 },
  "<": { op: "<", bp: 1 },
  "<=": { op: "<=", bp: 1 },
  ">": { op: ">", bp: 1 },
  ">=": { op: ">=", bp: 1 },
  "<=>": { op: "<=>", bp: 1 },
  "|": { op: "|", bp: 2 },
  "^": { op: "^", bp: 3 },
  "&": { op: "&", bp: 4 },
  "+": { op: "+", bp: 5 },
  "-": { op: "-", bp: 5 },
  "||": { op: "||", bp: 5 },
  "*": { op: "*", bp: 6 },
  "/": { op: "/", bp: 6 },
  "%": { op: "%", bp: 6 },
};
const DIV_OP: OperatorInfo = { op: "div", bp: 6 };

// ---------------------------------------------------------------------------------------------
// Parser

class Parser {
  private readonly toks: Token[];
  private p = 0;
  private depth = 0;

  constructor(private readonly src: string) {
    this.toks = new Lexer(src).tokenize();
  }

  // ---- token helpers ------------------------------------------------------------------------

  private peek(k = 0): Token {
    return this.toks[Math.min(this.p + k, this.toks.length - 1)];
  }

  private next(): Token {
    const t = this.toks[this.p];
    if (t.kind !== "eof") this.p++;
    return t;
  }

  private isKw(t: Token, ...kws: string[]): boolean {
    return t.kind === "word" && kws.includes(t.upper);
  }

  private atKw(...kws: string[]): boolean {
    return this.isKw(this.peek(), ...kws);
  }

  private acceptKw(kw: string): boolean {
    if (!this.atKw(kw)) return false;
    this.p++;
    return true;
  }

  private expectKw(kw: string): Token {
    if (!this.atKw(kw)) throw this.fail();
    return this.next();
  }

  private atOp(op: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === "op" && t.text === op;
  }

  private acceptOp(op: string): boolean {
    if (!this.atOp(op)) return false;
    this.p++;
    return true;
  }

  private expectOp(op: string): Token {
    if (!this.atOp(op)) throw this.fail(this.peek(), op === ")" ? ": missing ')'" : "");
    return this.next();
  }

  private fail(tok: Token = this.peek(), hint = ""): SiltError {
    return syntaxError(this.src, tok, hint);
  }

  private nested<T>(fn: () => T): T {
    if (++this.depth > MAX_DEPTH) {
      throw this.fail(this.peek(), ": the statement nests too deeply");
    }
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  expectEnd(): void {
    const t = this.peek();
    if (t.kind !== "eof") throw this.fail(t, `: extra input ${this.display(t)}`);
  }

  private display(t: Token): string {
    return tokenDisplay(this.src, t);
  }

  /** Does a query begin at token index k (SELECT, VALUES, WITH, TABLE)? */
  private queryStartsAt(k: number): boolean {
    return this.isKw(this.peek(k), "SELECT", "VALUES", "WITH", "TABLE");
  }

  // ---- names --------------------------------------------------------------------------------

  private isIdentifier(t: Token): boolean {
    return t.kind === "quoted" || (t.kind === "word" && !STRICT_RESERVED.has(t.upper));
  }

  private identifier(): string {
    const t = this.peek();
    if (!this.isIdentifier(t)) throw this.fail(t);
    this.p++;
    return t.text;
  }

  /** A part of a qualified name after a dot: any word, reserved or not. */
  private namePart(): string {
    const t = this.peek();
    if (t.kind !== "word" && t.kind !== "quoted") throw this.fail(t);
    this.p++;
    return t.text;
  }

  /**
   * A possibly qualified object name. An unquoted part written with dashes (`my-table`) is
   * Spark's INVALID_IDENTIFIER rather than a syntax error.
   */
  private multipartName(): Name {
    const parts = [this.objectNamePart()];
    while (this.atOp(".")) {
      this.p++;
      parts.push(this.objectNamePart());
    }
    return parts;
  }

  private objectNamePart(): string {
    const t = this.peek();
    const name = this.identifier();
    if (t.kind === "word" && this.atOp("-") && this.peek(1).kind === "word") {
      let text = t.text;
      while (this.atOp("-") && (this.peek(1).kind === "word" || this.peek(1).kind === "number")) {
        this.p++;
        text += `-${this.next().text}`;
      }
      throw parseError(
        "INVALID_IDENTIFIER",
        `The unquoted identifier ${text} is invalid and must be back quoted as: \`${text}\`.\n` +
          "Unquoted identifiers can only contain ASCII letters ('a' - 'z', 'A' - 'Z'), digits " +
          "('0' - '9'), and underbar ('_').\nUnquoted identifiers must also not start with a " +
          "digit.\nDifferent data sources and meta stores may impose additional restrictions on " +
          "valid identifiers.",
        "42602",
        t.pos,
      );
    }
    return name;
  }

  /** `(a, b, c)` of plain identifiers. */
  private identifierList(): string[] {
    this.expectOp("(");
    const out = [this.identifier()];
    while (this.acceptOp(",")) out.push(this.identifier());
    this.expectOp(")");
    return out;
  }

  /** `(a.b, c)` of possibly nested column names. */
  private columnNameList(): Name[] {
    this.expectOp("(");
    const out = [this.columnName()];
    while (this.acceptOp(",")) out.push(this.columnName());
    this.expectOp(")");
    return out;
  }

  private columnName(): Name {
    const parts = [this.identifier()];
    while (this.acceptOp(".")) parts.push(this.namePart());
    return parts;
  }

  private isImplicitAlias(t: Token): boolean {
    return t.kind === "quoted" || (t.kind === "word" && !NO_IMPLICIT_ALIAS.has(t.upper));
  }

  /** `[AS] alias`, or nothing. */
  private optionalAlias(): string | undefined {
    if (this.acceptKw("AS")) return this.identifier();
    if (this.isImplicitAlias(this.peek())) return this.next().text;
    return undefined;
  }

  private stringLiteral(): string {
    const t = this.peek();
    if (t.kind !== "string") throw this.fail(t);
    this.p++;
    return t.text;
  }

  private ifNotExists(): boolean {
    if (this.atKw("IF") && this.isKw(this.peek(1), "NOT") && this.isKw(this.peek(2), "EXISTS")) {
      this.p += 3;
      return true;
    }
    return false;
  }

  private ifExists(): boolean {
    if (this.atKw("IF") && this.isKw(this.peek(1), "EXISTS")) {
      this.p += 2;
      return true;
    }
    return false;
  }

  // ---- statements ---------------------------------------------------------------------------

  statement(): Statement {
    while (this.atOp(";")) this.p++;
    const t = this.peek();
    if (t.kind === "eof") {
      throw parseError(
        "PARSE_EMPTY_STATEMENT",
        "Syntax error, unexpected empty statement.",
        "42617",
        t.pos,
      );
    }
    const stmt = this.statementBody(t);
    while (this.acceptOp(";")) {
      // Spark's singleStatement allows any number of trailing semicolons.
    }
    this.expectEnd();
    return stmt;
  }

  private statementBody(t: Token): Statement {
    const pos = t.pos;
    if (this.queryStartsAt(0) || this.atOp("(")) {
      return { kind: "query", query: this.query(), pos };
    }
    if (t.kind !== "word") throw this.fail(t);
    switch (t.upper) {
      case "CREATE":
        return this.create(pos);
      case "REPLACE":
        this.p++;
        this.expectKw("TABLE");
        return this.createTable(pos, "replace");
      case "INSERT":
        return this.insert(pos);
      case "SHOW":
        return this.show(pos);
      case "USE":
        return this.use(pos);
      case "DESCRIBE":
      case "DESC":
        return this.describe(pos);
      case "DROP":
        return this.drop(pos);
      case "UPDATE":
        return this.update(pos);
      case "DELETE":
        return this.delete(pos);
      case "MERGE":
        return this.merge(pos);
      case "RESTORE":
        return this.restore(pos);
      case "OPTIMIZE":
        return this.optimize(pos);
      case "VACUUM":
        return this.vacuum(pos);
      case "REORG":
        return this.reorg(pos);
      case "ALTER":
        return this.alter(pos);
      case "GRANT":
        return this.grant(pos, false);
      case "REVOKE":
        return this.grant(pos, true);
      default:
        throw this.fail(t);
    }
  }

  private create(pos: Pos): Statement {
    this.p++;
    if (this.acceptKw("OR")) {
      this.expectKw("REPLACE");
      this.expectKw("TABLE");
      return this.createTable(pos, "createOrReplace");
    }
    const what = this.peek();
    if (this.isKw(what, "TABLE")) {
      this.p++;
      return this.createTable(pos, "create");
    }
    if (this.isKw(what, "CATALOG")) {
      this.p++;
      const ifNotExists = this.ifNotExists();
      const name = this.identifier();
      const comment = this.namespaceComment();
      return { kind: "createCatalog", name, ifNotExists, ...opt("comment", comment), pos };
    }
    if (this.isKw(what, "SCHEMA", "DATABASE", "NAMESPACE")) {
      this.p++;
      const ifNotExists = this.ifNotExists();
      const name = this.multipartName();
      const comment = this.namespaceComment();
      return { kind: "createSchema", name, ifNotExists, ...opt("comment", comment), pos };
    }
    throw this.fail(what);
  }

  private namespaceComment(): string | undefined {
    let comment: string | undefined;
    while (this.atKw("COMMENT")) {
      const clause = this.next();
      if (comment !== undefined) throw duplicateClause("COMMENT", clause.pos);
      comment = this.stringLiteral();
    }
    return comment;
  }

  private createTable(pos: Pos, mode: "create" | "createOrReplace" | "replace"): Statement {
    // Spark's replaceTableHeader has no IF NOT EXISTS: `CREATE OR REPLACE TABLE IF NOT …`
    // reads IF as the table name and fails at NOT.
    const ifNotExists = mode === "create" && this.ifNotExists();
    const name = this.multipartName();
    let columns: ColumnDef[] | undefined;
    if (this.atOp("(") && !this.queryStartsAt(1)) columns = this.columnDefs();
    let using: string | undefined;
    if (this.acceptKw("USING")) using = this.columnName().join(".");

    const seen = new Map<string, Pos>();
    const clause = (label: string, tok: Token) => {
      if (seen.has(label)) throw duplicateClause(label, tok.pos);
      seen.set(label, tok.pos);
    };
    let partitionedBy: string[] = [];
    let clusterBy: string[] | undefined;
    let location: string | undefined;
    let comment: string | undefined;
    let properties: Record<string, string> = {};
    for (;;) {
      const t = this.peek();
      if (this.isKw(t, "PARTITIONED") && this.isKw(this.peek(1), "BY")) {
        clause("PARTITIONED BY", t);
        this.p += 2;
        partitionedBy = this.identifierList();
      } else if (this.isKw(t, "CLUSTER") && this.isKw(this.peek(1), "BY")) {
        clause("CLUSTER BY", t);
        this.p += 2;
        if (this.acceptKw("NONE")) clusterBy = [];
        else clusterBy = this.columnNameList().map((n) => n.join("."));
      } else if (this.isKw(t, "LOCATION")) {
        clause("LOCATION", t);
        this.p++;
        location = this.stringLiteral();
      } else if (this.isKw(t, "COMMENT")) {
        clause("COMMENT", t);
        this.p++;
        comment = this.stringLiteral();
      } else if (this.isKw(t, "TBLPROPERTIES")) {
        clause("TBLPROPERTIES", t);
        this.p++;
        properties = this.propertyList();
      } else {
        break;
      }
    }
    if (partitionedBy.length > 0 && clusterBy !== undefined) {
      throw parseError(
        "SPECIFY_CLUSTER_BY_WITH_PARTITIONED_BY_IS_NOT_ALLOWED",
        "Cannot specify both CLUSTER BY and PARTITIONED BY.",
        "42908",
        seen.get("CLUSTER BY") ?? pos,
      );
    }
    let asQuery: Query | undefined;
    if (this.acceptKw("AS")) asQuery = this.query();
    else if (this.queryStartsAt(0) || this.atOp("(")) asQuery = this.query();
    return {
      kind: "createTable",
      name,
      mode,
      ifNotExists,
      ...opt("columns", columns),
      ...opt("using", using),
      partitionedBy,
      ...opt("clusterBy", clusterBy),
      ...opt("location", location),
      ...opt("comment", comment),
      properties,
      ...opt("asQuery", asQuery),
      pos,
    };
  }

  private columnDefs(): ColumnDef[] {
    this.expectOp("(");
    const out: ColumnDef[] = [];
    do {
      const start = this.peek();
      const name = this.identifier();
      const type = this.dataType();
      let nullable = true;
      let comment: string | undefined;
      const given = new Set<string>();
      const descriptor = (label: string) => {
        if (given.has(label)) {
          throw parseError(
            "CREATE_TABLE_COLUMN_DESCRIPTOR_DUPLICATE",
            `CREATE TABLE column ${quoteName(name)} specifies descriptor "${label}" more than ` +
              "once, which is invalid.",
            "42710",
            start.pos,
          );
        }
        given.add(label);
      };
      for (;;) {
        if (this.atKw("NOT") && this.isKw(this.peek(1), "NULL")) {
          descriptor("NOT NULL");
          this.p += 2;
          nullable = false;
        } else if (this.atKw("COMMENT")) {
          descriptor("COMMENT");
          this.p++;
          comment = this.stringLiteral();
        } else {
          break;
        }
      }
      out.push({ name, type, nullable, ...opt("comment", comment), pos: start.pos });
    } while (this.acceptOp(","));
    this.expectOp(")");
    return out;
  }

  /**
   * ALTER TABLE t SET TBLPROPERTIES (…) | UNSET TBLPROPERTIES [IF EXISTS] (…)
   * | ADD COLUMN[S] [(]spec, …[)] | RENAME COLUMN a.b TO c | DROP COLUMN[S] [IF EXISTS] [(]a, …[)]
   * | {ALTER | CHANGE} [COLUMN] a.b {COMMENT '…' | DROP NOT NULL}.
   */
  private alter(pos: Pos): Statement {
    this.p++;
    this.expectKw("TABLE");
    const table = this.multipartName();
    const columns = (change: ColumnChange): Statement => ({
      kind: "alterColumns",
      table,
      change,
      pos,
    });
    if (this.atKw("ADD") && this.isKw(this.peek(1), "COLUMN", "COLUMNS")) {
      this.p += 2;
      return columns({
        kind: "addColumns",
        columns: this.parenthesizedList(() => this.newColumn()),
      });
    }
    if (this.atKw("RENAME") && this.isKw(this.peek(1), "COLUMN")) {
      this.p += 2;
      const column = this.columnName();
      this.expectKw("TO");
      return columns({ kind: "renameColumn", column, newName: this.identifier() });
    }
    if (this.atKw("DROP") && this.isKw(this.peek(1), "COLUMN", "COLUMNS")) {
      this.p += 2;
      let ifExists = false;
      if (this.atKw("IF") && this.isKw(this.peek(1), "EXISTS")) {
        this.p += 2;
        ifExists = true;
      }
      const names = this.parenthesizedList(() => this.columnName());
      return columns({ kind: "dropColumns", columns: names, ifExists });
    }
    if (this.atKw("ALTER", "CHANGE")) {
      this.p++;
      this.acceptKw("COLUMN");
      const column = this.columnName();
      if (this.acceptKw("COMMENT")) {
        return columns({ kind: "alterColumn", column, comment: this.stringLiteral() });
      }
      this.expectKw("DROP");
      this.expectKw("NOT");
      this.expectKw("NULL");
      return columns({ kind: "alterColumn", column, dropNotNull: true });
    }
    if (this.acceptKw("SET")) {
      this.expectKw("TBLPROPERTIES");
      return { kind: "alterProperties", table, set: this.propertyList(), ifExists: false, pos };
    }
    const t = this.peek();
    if (this.acceptKw("UNSET")) {
      this.expectKw("TBLPROPERTIES");
      let ifExists = false;
      if (this.acceptKw("IF")) {
        this.expectKw("EXISTS");
        ifExists = true;
      }
      this.expectOp("(");
      const unset: string[] = [];
      do {
        unset.push(
          this.peek().kind === "string" ? this.stringLiteral() : this.columnName().join("."),
        );
      } while (this.acceptOp(","));
      this.expectOp(")");
      return { kind: "alterProperties", table, unset, ifExists, pos };
    }
    throw this.fail(t);
  }

  /** `item, …` or `(item, …)`, as ALTER TABLE's column lists may be written. */
  private parenthesizedList<T>(item: () => T): T[] {
    const parens = this.acceptOp("(");
    const out = [item()];
    while (this.acceptOp(",")) out.push(item());
    if (parens) this.expectOp(")");
    return out;
  }

  /** `a.b type [NOT NULL] [COMMENT '…'] [FIRST | AFTER c]`, each descriptor at most once. */
  private newColumn(): NewColumn {
    const start = this.peek();
    const path = this.columnName();
    const type = this.dataType();
    const name = path[path.length - 1];
    const col: NewColumn = { parent: path.slice(0, -1), name, type, nullable: true };
    const given = new Set<string>();
    const descriptor = (label: string) => {
      if (given.has(label)) {
        throw parseError(
          "ALTER_TABLE_COLUMN_DESCRIPTOR_DUPLICATE",
          `ALTER TABLE ADD column ${quoteName(name)} specifies descriptor "${label}" ` +
            "more than once, which is invalid.",
          "42710",
          start.pos,
        );
      }
      given.add(label);
    };
    for (;;) {
      if (this.atKw("NOT") && this.isKw(this.peek(1), "NULL")) {
        descriptor("NOT NULL");
        this.p += 2;
        col.nullable = false;
      } else if (this.acceptKw("COMMENT")) {
        descriptor("COMMENT");
        col.comment = this.stringLiteral();
      } else if (this.acceptKw("FIRST")) {
        descriptor("FIRST|AFTER");
        col.position = { first: true };
      } else if (this.acceptKw("AFTER")) {
        descriptor("FIRST|AFTER");
        col.position = { after: this.identifier() };
      } else {
        return col;
      }
    }
  }

  /** `('k' = 'v', a.b = true, …)`: keys as written, values as Spark stores them. */
  private propertyList(): Record<string, string> {
    this.expectOp("(");
    const props: Record<string, string> = {};
    do {
      const keyTok = this.peek();
      const key = keyTok.kind === "string" ? this.stringLiteral() : this.columnName().join(".");
      this.acceptOp("=");
      const value = this.propertyValue();
      if (Object.hasOwn(props, key)) throw duplicateKey(key, keyTok.pos);
      props[key] = value;
    } while (this.acceptOp(","));
    this.expectOp(")");
    return props;
  }

  /** A property value: a string, a (signed) number as written, or a lower-cased boolean. */
  private propertyValue(): string {
    const v = this.next();
    if (v.kind === "string") return v.text;
    if (v.kind === "number") return v.text;
    if (v.kind === "op" && (v.text === "-" || v.text === "+") && this.peek().kind === "number") {
      return v.text + this.next().text;
    }
    if (this.isKw(v, "TRUE", "FALSE")) return v.upper.toLowerCase();
    throw this.fail(v);
  }

  private insert(pos: Pos): Statement {
    this.p++;
    let overwrite = false;
    if (this.acceptKw("OVERWRITE")) overwrite = true;
    else this.expectKw("INTO");
    this.acceptKw("TABLE");
    const table = this.multipartName();
    const aliasTok = this.peek();
    const alias = this.optionalAlias();

    let partitionSpec: { column: string; value?: Expr }[] | undefined;
    if (this.acceptKw("PARTITION")) {
      this.expectOp("(");
      partitionSpec = [];
      do {
        const column = this.identifier();
        if (this.acceptOp("=") || this.acceptOp("==")) {
          partitionSpec.push({ column, value: this.expression() });
        } else {
          partitionSpec.push({ column });
        }
      } while (this.acceptOp(","));
      this.expectOp(")");
    }

    let byName = false;
    let columns: string[] | undefined;
    if (this.atKw("BY") && this.isKw(this.peek(1), "NAME")) {
      this.p += 2;
      byName = true;
    } else if (this.atOp("(") && !this.queryStartsAt(1) && !this.atOp("(", 1)) {
      columns = this.identifierList();
    }

    let replaceWhere: Expr | undefined;
    let replaceUsing: string[] | undefined;
    let replaceOn: { condition: Expr; sourceAlias?: string } | undefined;
    let query: Query;
    if (this.atKw("REPLACE")) {
      const replaceTok = this.next();
      // Databricks' grammar: REPLACE WHERE / USING / ON only follow INSERT INTO t [BY NAME].
      if (overwrite || partitionSpec || columns) throw this.fail(replaceTok);
      if (this.acceptKw("WHERE")) {
        replaceWhere = this.expression();
      } else if (this.acceptKw("USING")) {
        replaceUsing = this.identifierList();
      } else if (this.acceptKw("ON")) {
        const condition = this.expression();
        if (this.atOp("(")) {
          query = this.query();
          const sourceAlias = this.optionalAlias();
          replaceOn = { condition, ...opt("sourceAlias", sourceAlias) };
        } else {
          replaceOn = { condition };
          query = this.query();
        }
      } else {
        throw this.fail();
      }
    }
    if (alias !== undefined && replaceOn === undefined) throw this.fail(aliasTok);
    query ??= this.query();
    return {
      kind: "insert",
      table,
      ...opt("alias", alias),
      overwrite,
      ...opt("columns", columns),
      byName,
      ...opt("partitionSpec", partitionSpec),
      ...opt("replaceWhere", replaceWhere),
      ...opt("replaceUsing", replaceUsing),
      ...opt("replaceOn", replaceOn),
      query,
      pos,
    };
  }

  private show(pos: Pos): Statement {
    this.p++;
    if (this.atKw("GRANTS", "GRANT")) return this.showGrants(pos);
    if (this.acceptKw("TBLPROPERTIES")) {
      const table = this.multipartName();
      let key: string | undefined;
      if (this.acceptOp("(")) {
        key = this.peek().kind === "string" ? this.stringLiteral() : this.columnName().join(".");
        this.expectOp(")");
      }
      return { kind: "showProperties", table, ...opt("key", key), pos };
    }
    const t = this.next();
    let what: "catalogs" | "schemas" | "tables";
    if (this.isKw(t, "CATALOGS")) what = "catalogs";
    else if (this.isKw(t, "SCHEMAS", "DATABASES", "NAMESPACES")) what = "schemas";
    else if (this.isKw(t, "TABLES")) what = "tables";
    else throw this.fail(t);
    let inName: Name | undefined;
    if (what !== "catalogs" && (this.acceptKw("FROM") || this.acceptKw("IN"))) {
      inName = this.multipartName();
    }
    let like: string | undefined;
    if (this.acceptKw("LIKE")) like = this.stringLiteral();
    else if (this.peek().kind === "string") like = this.stringLiteral();
    return { kind: "show", what, ...opt("in", inName), ...opt("like", like), pos };
  }

  /** GRANT privileges ON object TO principal | REVOKE privileges ON object FROM principal. */
  private grant(pos: Pos, revoke: boolean): Statement {
    this.p++;
    const privileges = this.privilegeList();
    this.expectKw("ON");
    const end = revoke ? "FROM" : "TO";
    const on = this.securable(end);
    this.expectKw(end);
    return { kind: "grant", revoke, privileges, on, principal: this.identifier(), pos };
  }

  /** SHOW GRANTS [principal] ON object. */
  private showGrants(pos: Pos): Statement {
    this.p++;
    const principal = this.atKw("ON") ? undefined : this.identifier();
    this.expectKw("ON");
    return { kind: "showGrants", ...opt("principal", principal), on: this.securable(), pos };
  }

  /**
   * `SELECT, MODIFY`, `USE CATALOG`, `ALL PRIVILEGES`: each privilege is a run of words, checked
   * against the object's type when the statement runs.
   */
  private privilegeList(): string[] {
    const out: string[] = [];
    do {
      const words: string[] = [];
      while (this.peek().kind === "word" && !this.atKw("ON")) words.push(this.next().upper);
      if (words.length === 0) throw this.fail();
      out.push(words.join(" "));
    } while (this.acceptOp(","));
    return out;
  }

  /**
   * CATALOG [name] | SCHEMA name | [TABLE] name. A catalog's name may be left out (the default
   * catalog) when `end` follows; `catalog.s.t` is a table, not the CATALOG keyword.
   */
  private securable(end?: string): SecurableRef {
    const keywordHere = (...kws: string[]) => this.atKw(...kws) && !this.atOp(".", 1);
    if (keywordHere("CATALOG")) {
      this.p++;
      const named = this.peek().kind !== "eof" && !(end !== undefined && this.atKw(end));
      return { type: "catalog", name: named ? [this.identifier()] : [] };
    }
    if (keywordHere("SCHEMA", "DATABASE", "NAMESPACE")) {
      this.p++;
      return { type: "schema", name: this.multipartName() };
    }
    if (keywordHere("TABLE")) this.p++;
    return { type: "table", name: this.multipartName() };
  }

  private use(pos: Pos): Statement {
    this.p++;
    let key = "__use__";
    const t = this.peek();
    const kindWord = this.isIdentifier(this.peek(1));
    if (this.isKw(t, "CATALOG") && kindWord) {
      this.p++;
      key = "__use_catalog__";
    } else if (this.isKw(t, "SCHEMA", "DATABASE", "NAMESPACE") && kindWord) {
      this.p++;
    }
    const name = key === "__use_catalog__" ? [this.identifier()] : this.multipartName();
    return { kind: "set", key, value: name.map(quoteIfNeeded).join("."), pos };
  }

  private describe(pos: Pos): Statement {
    this.p++;
    const t = this.peek();
    const nextIsName = this.isIdentifier(this.peek(1));
    if (this.isKw(t, "HISTORY") && nextIsName) {
      this.p++;
      const table = this.multipartName();
      let limit: number | undefined;
      if (this.acceptKw("LIMIT")) limit = this.nonNegativeInteger();
      return { kind: "describeHistory", table, ...opt("limit", limit), pos };
    }
    if (this.isKw(t, "DETAIL") && nextIsName) {
      this.p++;
      return { kind: "describeDetail", table: this.multipartName(), pos };
    }
    if (this.isKw(t, "SCHEMA", "DATABASE", "NAMESPACE", "CATALOG", "FUNCTION", "QUERY")) {
      if (nextIsName) throw this.fail(t);
    }
    if (this.isKw(t, "TABLE") && (nextIsName || this.isKw(this.peek(1), "EXTENDED"))) this.p++;
    let extended = false;
    if (this.atKw("EXTENDED", "FORMATTED") && this.isIdentifier(this.peek(1))) {
      this.p++;
      extended = true;
    }
    return { kind: "describeTable", table: this.multipartName(), extended, pos };
  }

  private drop(pos: Pos): Statement {
    this.p++;
    const t = this.next();
    if (this.isKw(t, "TABLE")) {
      const ifExists = this.ifExists();
      const table = this.multipartName();
      this.acceptKw("PURGE");
      return { kind: "dropTable", table, ifExists, pos };
    }
    if (this.isKw(t, "SCHEMA", "DATABASE", "NAMESPACE")) {
      const ifExists = this.ifExists();
      const name = this.multipartName();
      return { kind: "dropSchema", name, ifExists, cascade: this.cascade(), pos };
    }
    if (this.isKw(t, "CATALOG")) {
      const ifExists = this.ifExists();
      const name = this.identifier();
      return { kind: "dropCatalog", name, ifExists, cascade: this.cascade(), pos };
    }
    throw this.fail(t);
  }

  private cascade(): boolean {
    if (this.acceptKw("CASCADE")) return true;
    this.acceptKw("RESTRICT");
    return false;
  }

  private update(pos: Pos): Statement {
    this.p++;
    const table = this.multipartName();
    const alias = this.optionalAlias();
    this.expectKw("SET");
    const assignments = this.assignments();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    return {
      kind: "update",
      table,
      ...opt("alias", alias),
      assignments,
      ...opt("where", where),
      pos,
    };
  }

  private assignments(): Assignment[] {
    const out: Assignment[] = [];
    do {
      const column = this.columnName();
      if (!this.acceptOp("=") && !this.acceptOp("==")) throw this.fail();
      out.push({ column, value: this.expression() });
    } while (this.acceptOp(","));
    return out;
  }

  private delete(pos: Pos): Statement {
    this.p++;
    this.expectKw("FROM");
    const table = this.multipartName();
    const alias = this.optionalAlias();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    return { kind: "delete", table, ...opt("alias", alias), ...opt("where", where), pos };
  }

  private merge(pos: Pos): Statement {
    this.p++;
    let withSchemaEvolution = false;
    if (this.acceptKw("WITH")) {
      this.expectKw("SCHEMA");
      this.expectKw("EVOLUTION");
      withSchemaEvolution = true;
    }
    this.expectKw("INTO");
    const target = this.multipartName();
    const targetAlias = this.optionalAlias();
    this.expectKw("USING");
    const source = this.relationPrimary();
    this.expectKw("ON");
    const on = this.expression();
    const clauses: MergeClause[] = [];
    const unconditioned = { matched: 0, notMatched: 0, notMatchedBySource: 0 };
    while (this.atKw("WHEN")) {
      const when = this.next();
      const clause = this.mergeClause();
      clauses.push(clause);
      checkMergeOrder(clauses, when.pos, unconditioned);
    }
    if (clauses.length === 0) {
      throw parseError(
        "MERGE_WITHOUT_WHEN",
        "There must be at least one WHEN clause in a MERGE statement.",
        "42601",
        this.peek().pos,
      );
    }
    return {
      kind: "merge",
      target,
      ...opt("targetAlias", targetAlias),
      source,
      on,
      clauses,
      withSchemaEvolution,
      pos,
    };
  }

  private mergeClause(): MergeClause {
    if (this.acceptKw("MATCHED")) {
      const condition = this.acceptKw("AND") ? this.expression() : undefined;
      this.expectKw("THEN");
      if (this.acceptKw("DELETE"))
        return { kind: "matched", ...opt("condition", condition), action: { kind: "delete" } };
      this.expectKw("UPDATE");
      this.expectKw("SET");
      if (this.acceptOp("*")) {
        return { kind: "matched", ...opt("condition", condition), action: { kind: "updateStar" } };
      }
      return {
        kind: "matched",
        ...opt("condition", condition),
        action: { kind: "update", assignments: this.assignments() },
      };
    }
    this.expectKw("NOT");
    this.expectKw("MATCHED");
    let bySource = false;
    if (this.acceptKw("BY")) {
      if (this.acceptKw("SOURCE")) bySource = true;
      else this.expectKw("TARGET");
    }
    const condition = this.acceptKw("AND") ? this.expression() : undefined;
    this.expectKw("THEN");
    if (bySource) {
      if (this.acceptKw("DELETE")) {
        return {
          kind: "notMatchedBySource",
          ...opt("condition", condition),
          action: { kind: "delete" },
        };
      }
      this.expectKw("UPDATE");
      this.expectKw("SET");
      return {
        kind: "notMatchedBySource",
        ...opt("condition", condition),
        action: { kind: "update", assignments: this.assignments() },
      };
    }
    this.expectKw("INSERT");
    if (this.acceptOp("*")) {
      return { kind: "notMatched", ...opt("condition", condition), action: { kind: "insertStar" } };
    }
    const columns = this.atOp("(") ? this.columnNameList() : undefined;
    this.expectKw("VALUES");
    this.expectOp("(");
    const values = [this.expression()];
    while (this.acceptOp(",")) values.push(this.expression());
    this.expectOp(")");
    return {
      kind: "notMatched",
      ...opt("condition", condition),
      action: { kind: "insert", ...opt("columns", columns), values },
    };
  }

  private restore(pos: Pos): Statement {
    this.p++;
    if (this.atKw("TABLE") && this.isIdentifier(this.peek(1))) this.p++;
    const table = this.multipartName();
    this.acceptKw("TO");
    const spec = this.timeTravel();
    if (!spec) throw this.fail();
    return { kind: "restore", table, ...spec, pos };
  }

  private optimize(pos: Pos): Statement {
    this.p++;
    const table = this.multipartName();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    let zorderBy: string[] = [];
    if (this.atKw("ZORDER")) {
      this.p++;
      this.expectKw("BY");
      if (this.atOp("(")) {
        zorderBy = this.columnNameList().map((n) => n.join("."));
      } else {
        zorderBy = [this.columnName().join(".")];
        while (this.acceptOp(",")) zorderBy.push(this.columnName().join("."));
      }
    }
    return { kind: "optimize", table, ...opt("where", where), zorderBy, pos };
  }

  private reorg(pos: Pos): Statement {
    this.p++;
    this.expectKw("TABLE");
    const table = this.multipartName();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    this.expectKw("APPLY");
    this.expectOp("(");
    this.expectKw("PURGE");
    this.expectOp(")");
    return { kind: "reorg", table, ...opt("where", where), pos };
  }

  private vacuum(pos: Pos): Statement {
    this.p++;
    const table = this.multipartName();
    let retainHours: number | undefined;
    let dryRun = false;
    let mode: "lite" | "full" | undefined;
    // Delta's order is [LITE|FULL] [RETAIN n HOURS] [DRY RUN]; any order is accepted, once each.
    for (;;) {
      const t = this.peek();
      if (this.isKw(t, "LITE", "FULL") && mode === undefined) {
        this.p++;
        mode = t.upper === "LITE" ? "lite" : "full";
      } else if (this.isKw(t, "RETAIN") && retainHours === undefined) {
        this.p++;
        const n = this.next();
        if (n.kind !== "number" || !/^\d+(\.\d*)?$/.test(n.text)) throw this.fail(n);
        retainHours = Number(n.text);
        this.expectKw("HOURS");
      } else if (this.isKw(t, "DRY") && !dryRun) {
        this.p++;
        this.expectKw("RUN");
        dryRun = true;
      } else {
        break;
      }
    }
    return {
      kind: "vacuum",
      table,
      ...opt("retainHours", retainHours),
      dryRun,
      ...opt("mode", mode),
      pos,
    };
  }

  private nonNegativeInteger(): number {
    const t = this.next();
    if (t.kind !== "number" || t.numberKind !== "integer") throw this.fail(t);
    return Number(t.text);
  }

  // ---- queries ------------------------------------------------------------------------------

  query(): Query {
    return this.nested(() => this.queryFrom(this.queryPrimary()));
  }

  /** Set operations and ORDER BY / LIMIT / OFFSET after an already parsed first operand. */
  private queryFrom(first: Query): Query {
    return this.organization(this.setOps(0, first));
  }

  private setOpAt(t: Token): { op: "union" | "intersect" | "except"; prec: number } | undefined {
    if (this.isKw(t, "UNION")) return { op: "union", prec: 1 };
    if (this.isKw(t, "EXCEPT", "MINUS")) return { op: "except", prec: 1 };
    if (this.isKw(t, "INTERSECT")) return { op: "intersect", prec: 2 };
    return undefined;
  }

  private setOps(minPrec: number, first?: Query): Query {
    let left = first ?? this.queryPrimary();
    for (;;) {
      const info = this.setOpAt(this.peek());
      if (!info || info.prec < minPrec) return left;
      this.p++;
      let all = false;
      if (this.acceptKw("ALL")) all = true;
      else this.acceptKw("DISTINCT");
      const right = this.setOps(info.prec + 1);
      left = { kind: "setOp", op: info.op, all, left, right, orderBy: [], pos: left.pos };
    }
  }

  private queryPrimary(): Query {
    const t = this.peek();
    if (this.isKw(t, "SELECT")) return this.select();
    if (this.isKw(t, "VALUES")) {
      const rows = this.valuesRows();
      const { alias, columns } = this.tableAlias(true);
      return {
        kind: "values",
        rows,
        ...opt("alias", alias),
        ...opt("columns", columns),
        pos: t.pos,
      };
    }
    if (this.isKw(t, "TABLE")) {
      this.p++;
      const name = this.multipartName();
      return selectStar({ kind: "table", name, pos: t.pos }, t.pos);
    }
    if (this.atOp("(")) {
      this.p++;
      const q = this.query();
      this.expectOp(")");
      return q;
    }
    // The AST has no common table expressions; say so rather than leave a bare syntax error.
    if (this.isKw(t, "WITH"))
      throw this.fail(t, ": WITH (common table expressions) is not supported");
    throw this.fail(t);
  }

  private organization(q: Query): Query {
    let orderBy: OrderItem[] = [];
    if (this.atKw("ORDER") && this.isKw(this.peek(1), "BY")) {
      this.p += 2;
      orderBy = this.orderItems();
    }
    let limit: Expr | undefined;
    if (this.acceptKw("LIMIT")) {
      if (!this.acceptKw("ALL")) limit = this.expression();
    }
    let offset: Expr | undefined;
    if (this.acceptKw("OFFSET")) offset = this.expression();
    if (orderBy.length === 0 && limit === undefined && offset === undefined) return q;

    const free = (x: { orderBy: OrderItem[]; limit?: Expr }) =>
      x.orderBy.length === 0 && x.limit === undefined;
    if (q.kind === "select" && free(q) && q.offset === undefined) {
      return { ...q, orderBy, ...opt("limit", limit), ...opt("offset", offset) };
    }
    if (q.kind === "setOp" && free(q) && offset === undefined) {
      return { ...q, orderBy, ...opt("limit", limit) };
    }
    const wrapped = selectStar({ kind: "subquery", query: q, pos: q.pos }, q.pos);
    return { ...wrapped, orderBy, ...opt("limit", limit), ...opt("offset", offset) };
  }

  private orderItems(): OrderItem[] {
    const out: OrderItem[] = [];
    do {
      const expr = this.expression();
      let descending = false;
      if (this.acceptKw("DESC")) descending = true;
      else this.acceptKw("ASC");
      let nullsFirst = !descending;
      if (this.acceptKw("NULLS")) {
        if (this.acceptKw("FIRST")) nullsFirst = true;
        else {
          this.expectKw("LAST");
          nullsFirst = false;
        }
      }
      out.push({ expr, descending, nullsFirst });
    } while (this.acceptOp(","));
    return out;
  }

  private select(): Query {
    const pos = this.next().pos;
    let distinct = false;
    if (this.acceptKw("DISTINCT")) distinct = true;
    else if (this.atKw("ALL") && !this.atOp(",", 1) && !this.isKw(this.peek(1), "FROM")) this.p++;
    const items: SelectItem[] = [];
    do {
      const expr = this.expression();
      const alias = this.optionalAlias();
      items.push({ expr, ...opt("alias", alias) });
    } while (this.acceptOp(","));
    const from = this.acceptKw("FROM") ? this.fromClause() : undefined;
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    let groupBy: Expr[] = [];
    if (this.atKw("GROUP") && this.isKw(this.peek(1), "BY")) {
      this.p += 2;
      groupBy = [this.expression()];
      while (this.acceptOp(",")) groupBy.push(this.expression());
    }
    const having = this.acceptKw("HAVING") ? this.expression() : undefined;
    return {
      kind: "select",
      distinct,
      items,
      ...opt("from", from),
      ...opt("where", where),
      groupBy,
      ...opt("having", having),
      orderBy: [],
      pos,
    };
  }

  private fromClause(): FromItem {
    let left = this.joinedRelation();
    while (this.acceptOp(",")) {
      const right = this.joinedRelation();
      left = { kind: "join", joinType: "cross", left, right, pos: left.pos };
    }
    return left;
  }

  private joinType(): JoinType | undefined {
    const t = this.peek();
    const t1 = this.peek(1);
    const t2 = this.peek(2);
    const take = (n: number, type: JoinType) => {
      this.p += n;
      return type;
    };
    if (this.isKw(t, "JOIN")) return take(1, "inner");
    if (this.isKw(t, "INNER") && this.isKw(t1, "JOIN")) return take(2, "inner");
    if (this.isKw(t, "CROSS") && this.isKw(t1, "JOIN")) return take(2, "cross");
    if (this.isKw(t, "LEFT", "RIGHT", "FULL")) {
      const side = t.upper.toLowerCase() as "left" | "right" | "full";
      if (this.isKw(t1, "JOIN")) return take(2, side);
      if (this.isKw(t1, "OUTER") && this.isKw(t2, "JOIN")) return take(3, side);
      if (side === "left" && this.isKw(t1, "SEMI") && this.isKw(t2, "JOIN")) return take(3, "semi");
      if (side === "left" && this.isKw(t1, "ANTI") && this.isKw(t2, "JOIN")) return take(3, "anti");
      throw this.fail(t1);
    }
    if (this.isKw(t, "SEMI") && this.isKw(t1, "JOIN")) return take(2, "semi");
    if (this.isKw(t, "ANTI") && this.isKw(t1, "JOIN")) return take(2, "anti");
    // NATURAL joins have no AST form; INNER/CROSS/SEMI/ANTI need JOIN next.
    if (this.isKw(t, "NATURAL")) throw this.fail(t);
    if (this.isKw(t, "INNER", "CROSS", "SEMI", "ANTI")) throw this.fail(t1);
    return undefined;
  }

  private joinedRelation(): FromItem {
    let left = this.relationPrimary();
    for (;;) {
      const joinType = this.joinType();
      if (joinType === undefined) return left;
      const right = this.relationPrimary();
      let on: Expr | undefined;
      let using: string[] | undefined;
      if (this.acceptKw("ON")) on = this.expression();
      else if (this.acceptKw("USING")) using = this.identifierList();
      left = {
        kind: "join",
        joinType,
        left,
        right,
        ...opt("on", on),
        ...opt("using", using),
        pos: left.pos,
      };
    }
  }

  private relationPrimary(): FromItem {
    return this.nested(() => {
      const t = this.peek();
      if (this.atOp("(")) {
        if (this.queryStartsAt(1) || this.atOp("(", 1)) {
          this.p++;
          const query = this.query();
          this.expectOp(")");
          const { alias, columns } = this.tableAlias(true);
          return {
            kind: "subquery",
            query,
            ...opt("alias", alias),
            ...opt("columns", columns),
            pos: t.pos,
          };
        }
        this.p++;
        const inner = this.joinedRelation();
        this.expectOp(")");
        return inner;
      }
      if (this.isKw(t, "VALUES")) {
        const rows = this.valuesRows();
        const { alias, columns } = this.tableAlias(true);
        return {
          kind: "values",
          rows,
          ...opt("alias", alias),
          ...opt("columns", columns),
          pos: t.pos,
        };
      }
      const name = this.multipartName();
      const timeTravel = this.timeTravel();
      const alias = this.optionalAlias();
      return {
        kind: "table",
        name,
        ...opt("alias", alias),
        ...opt("timeTravel", timeTravel),
        pos: t.pos,
      };
    });
  }

  /** `[AS] alias [(c1, c2)]` after a subquery or VALUES. */
  private tableAlias(allowColumns: boolean): { alias?: string; columns?: string[] } {
    const alias = this.optionalAlias();
    if (alias !== undefined && allowColumns && this.atOp("(")) {
      return { alias, columns: this.identifierList() };
    }
    return alias === undefined ? {} : { alias };
  }

  /** VALUES rows: `(a, b), (c, d)` or single expressions `1, 2`. */
  private valuesRows(): Expr[][] {
    this.expectKw("VALUES");
    const rows: Expr[][] = [];
    do {
      if (this.atOp("(") && !this.queryStartsAt(1)) {
        this.p++;
        const row = this.nested(() => {
          const r = [this.expression()];
          while (this.acceptOp(",")) r.push(this.expression());
          return r;
        });
        this.expectOp(")");
        rows.push(row);
      } else {
        rows.push([this.expression()]);
      }
    } while (this.acceptOp(","));
    return rows;
  }

  /**
   * `[FOR] VERSION AS OF n`, `[FOR] TIMESTAMP AS OF expr` (SYSTEM_VERSION / SYSTEM_TIME too),
   * or Delta's `@v123` / `@yyyyMMddHHmmssSSS`.
   */
  private timeTravel(): TimeTravelSpec | undefined {
    const asOf = (k: number) => this.isKw(this.peek(k), "AS") && this.isKw(this.peek(k + 1), "OF");
    const k = this.atKw("FOR") ? 1 : 0;
    const t = this.peek(k);
    if (this.isKw(t, "VERSION", "SYSTEM_VERSION") && asOf(k + 1)) {
      this.p += k + 3;
      return { version: this.versionNumber() };
    }
    if (this.isKw(t, "TIMESTAMP", "SYSTEM_TIME") && asOf(k + 1)) {
      this.p += k + 3;
      return { timestamp: this.valueExpression() };
    }
    if (this.atOp("@")) {
      this.p++;
      const v = this.next();
      if (v.kind === "word" && /^v\d+$/i.test(v.text)) return { version: Number(v.text.slice(1)) };
      if (v.kind === "number" && /^\d{17}$/.test(v.text)) {
        const d = v.text;
        const text = `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)} ${d.slice(8, 10)}:${d.slice(10, 12)}:${d.slice(12, 14)}.${d.slice(14)}`;
        return { timestamp: { kind: "literal", value: text, type: "string", pos: v.pos } };
      }
      throw this.fail(v);
    }
    return undefined;
  }

  private versionNumber(): number {
    const t = this.next();
    if (t.kind === "number" && t.numberKind === "integer") return Number(t.text);
    if (t.kind === "string" && /^\s*\d+\s*$/.test(t.text)) return Number(t.text);
    throw this.fail(t);
  }

  // ---- expressions --------------------------------------------------------------------------

  expression(init?: Expr): Expr {
    return this.nested(() => this.or(init));
  }

  private or(init?: Expr): Expr {
    let left = this.and(init);
    while (this.acceptKw("OR")) {
      const right = this.and();
      left = { kind: "binary", op: "or", left, right, pos: left.pos };
    }
    return left;
  }

  private and(init?: Expr): Expr {
    let left = this.not(init);
    while (this.acceptKw("AND")) {
      const right = this.not();
      left = { kind: "binary", op: "and", left, right, pos: left.pos };
    }
    return left;
  }

  private not(init?: Expr): Expr {
    if (init === undefined && (this.atKw("NOT") || this.atOp("!"))) {
      const tok = this.next();
      const operand = this.nested(() => this.not());
      if (operand.kind === "exists" && !operand.negated) {
        return { ...operand, negated: true, pos: tok.pos };
      }
      return { kind: "unary", op: "not", operand, pos: tok.pos };
    }
    return this.predicated(init);
  }

  private predicated(init?: Expr): Expr {
    const v = this.value(0, init);
    const t = this.peek();
    let negated = false;
    if (
      (this.isKw(t, "NOT") || (t.kind === "op" && t.text === "!")) &&
      this.isKw(this.peek(1), "BETWEEN", "IN", "LIKE", "ILIKE", "RLIKE", "REGEXP")
    ) {
      this.p++;
      negated = true;
    }
    const op = this.peek();
    if (this.isKw(op, "BETWEEN")) {
      this.p++;
      const low = this.value(0);
      this.expectKw("AND");
      const high = this.value(0);
      return { kind: "between", operand: v, low, high, negated, pos: v.pos };
    }
    if (this.isKw(op, "IN")) {
      this.p++;
      return this.inTail(v, negated);
    }
    if (this.isKw(op, "LIKE", "ILIKE", "RLIKE", "REGEXP")) {
      this.p++;
      const kind = op.upper === "LIKE" ? "like" : op.upper === "ILIKE" ? "ilike" : "rlike";
      if (this.atKw("ANY", "SOME", "ALL") && this.atOp("(", 1)) throw this.fail();
      const pattern = this.value(0);
      let escapeChar: string | undefined;
      if (kind !== "rlike" && this.atKw("ESCAPE")) {
        this.p++;
        const escTok = this.peek();
        escapeChar = this.stringLiteral();
        if (escapeChar.length !== 1) {
          throw parseError(
            "INVALID_ESC",
            `Found an invalid escape string: ${escapeChar}. The escape string must contain only one ` +
              "character.",
            "42604",
            escTok.pos,
          );
        }
      }
      return {
        kind: "like",
        op: kind,
        operand: v,
        pattern,
        ...opt("escape", escapeChar),
        negated,
        pos: v.pos,
      };
    }
    if (this.isKw(op, "IS")) {
      this.p++;
      const not = this.acceptKw("NOT") || this.acceptOp("!");
      const w = this.next();
      if (this.isKw(w, "NULL")) return { kind: "isNull", operand: v, negated: not, pos: v.pos };
      if (this.isKw(w, "TRUE", "FALSE", "UNKNOWN")) {
        const value = w.upper === "TRUE" ? true : w.upper === "FALSE" ? false : null;
        return { kind: "isBool", operand: v, value, negated: not, pos: v.pos };
      }
      if (this.isKw(w, "DISTINCT")) {
        this.expectKw("FROM");
        const right = this.value(0);
        return { kind: "isDistinctFrom", left: v, right, negated: not, pos: v.pos };
      }
      throw this.fail(w);
    }
    return v;
  }

  /** After `[NOT] IN`: a parenthesized list or subquery. */
  private inTail(operand: Expr, negated: boolean): Expr {
    const pos = operand.pos;
    if (this.atOp("(") && this.queryStartsAt(1)) {
      this.p++;
      const query = this.query();
      this.expectOp(")");
      return { kind: "inSubquery", operand, query, negated, pos };
    }
    this.expectOp("(");
    return this.nested(() => {
      let first: Expr;
      if (this.atOp("(")) {
        const inner = this.parenthesized();
        if ("query" in inner) {
          if (
            this.atOp(")") ||
            this.setOpAt(this.peek()) ||
            this.atKw("ORDER", "LIMIT", "OFFSET")
          ) {
            const query = this.queryFrom(inner.query);
            this.expectOp(")");
            return { kind: "inSubquery", operand, query, negated, pos };
          }
          first = this.expression(scalar(inner.query, inner.pos));
        } else {
          first = this.expression(inner.expr);
        }
      } else {
        first = this.expression();
      }
      const list = [first];
      while (this.acceptOp(",")) list.push(this.expression());
      this.expectOp(")");
      return { kind: "in", operand, list, negated, pos };
    });
  }

  /** A value expression: operators down to comparison, no predicates or boolean logic. */
  private valueExpression(): Expr {
    return this.nested(() => this.value(0));
  }

  private binaryAt(t: Token): OperatorInfo | undefined {
    if (t.kind === "op") return BINARY_OPS[t.text];
    if (t.kind === "word" && t.upper === "DIV") return DIV_OP;
    return undefined;
  }

  private value(minBp: number, init?: Expr): Expr {
    let left = init !== undefined ? this.postfix(init) : this.unary();
    for (;;) {
      const info = this.binaryAt(this.peek());
      if (!info || info.bp < minBp) return left;
      this.p++;
      const right = this.value(info.bp + 1);
      left = { kind: "binary", op: info.op, left, right, pos: left.pos };
    }
  }

  private unary(): Expr {
    const t = this.peek();
    if (t.kind === "op" && (t.text === "-" || t.text === "+" || t.text === "~")) {
      this.p++;
      const n = this.peek();
      // Spark's `number` rule takes the sign into the literal: -128Y is a TINYINT.
      if (t.text === "-" && n.kind === "number") {
        this.p++;
        return this.postfix(numberLiteral(n, true, t.pos));
      }
      const operand = this.nested(() => this.unary());
      return { kind: "unary", op: t.text as "-" | "+" | "~", operand, pos: t.pos };
    }
    return this.postfix(this.primary());
  }

  private postfix(e: Expr): Expr {
    let out = e;
    while (this.atOp("::")) {
      this.p++;
      const target = this.dataType();
      out = { kind: "cast", operand: out, target, tryCast: false, pos: out.pos };
    }
    return out;
  }

  private primary(): Expr {
    const t = this.peek();
    switch (t.kind) {
      case "number":
        this.p++;
        return numberLiteral(t, false, t.pos);
      case "string":
        this.p++;
        return { kind: "literal", value: t.text, type: "string", pos: t.pos };
      case "quoted":
        return this.columnOrStar();
      case "word":
        return this.wordPrimary(t);
      case "op":
        if (t.text === "*") {
          this.p++;
          return { kind: "star", pos: t.pos };
        }
        if (t.text === "(") {
          const r = this.parenthesized();
          return "query" in r ? scalar(r.query, r.pos) : r.expr;
        }
        throw this.fail(t);
      default:
        throw this.fail(t);
    }
  }

  /**
   * `( … )` in an expression: a subquery or a parenthesized expression, told apart even when
   * more parentheses open first (`((SELECT 1) UNION (SELECT 2))` vs `((SELECT 1) + 1)`).
   */
  private parenthesized(): { expr: Expr; pos: Pos } | { query: Query; pos: Pos } {
    return this.nested(() => {
      const open = this.expectOp("(");
      if (this.queryStartsAt(0)) {
        const query = this.query();
        this.expectOp(")");
        return { query, pos: open.pos };
      }
      if (this.atOp("(")) {
        const inner = this.parenthesized();
        if ("query" in inner) {
          if (this.setOpAt(this.peek()) || this.atKw("ORDER", "LIMIT", "OFFSET")) {
            const query = this.queryFrom(inner.query);
            this.expectOp(")");
            return { query, pos: open.pos };
          }
          if (this.acceptOp(")")) return { query: inner.query, pos: open.pos };
          const expr = this.expression(scalar(inner.query, inner.pos));
          this.expectOp(")");
          return { expr, pos: open.pos };
        }
        const expr = this.expression(inner.expr);
        this.expectOp(")");
        return { expr, pos: open.pos };
      }
      const expr = this.expression();
      this.expectOp(")");
      return { expr, pos: open.pos };
    });
  }

  private wordPrimary(t: Token): Expr {
    const u = t.upper;
    const n1 = this.peek(1);
    const callFollows = this.atOp("(", 1) && !this.queryStartsAt(2);
    if (u === "NULL") {
      this.p++;
      return { kind: "literal", value: null, type: "null", pos: t.pos };
    }
    if (u === "TRUE" || u === "FALSE") {
      this.p++;
      return { kind: "literal", value: u === "TRUE", type: "boolean", pos: t.pos };
    }
    if (n1.kind === "string" && TYPED_LITERALS.has(u)) {
      this.p += 2;
      return typedLiteral(u, n1.text, t.pos);
    }
    if (u === "INTERVAL" && (n1.kind === "string" || n1.kind === "number")) {
      throw parseError("UNSUPPORTED_DATATYPE", 'Unsupported data type "INTERVAL".', "0A000", t.pos);
    }
    if (u === "CASE") return this.caseExpr();
    if ((u === "CAST" || u === "TRY_CAST") && this.atOp("(", 1)) {
      this.p += 2;
      return this.nested(() => {
        const operand = this.expression();
        this.expectKw("AS");
        const target = this.dataType();
        this.expectOp(")");
        return { kind: "cast", operand, target, tryCast: u === "TRY_CAST", pos: t.pos };
      });
    }
    if (u === "EXISTS" && this.atOp("(", 1)) {
      this.p += 2;
      const query = this.query();
      this.expectOp(")");
      return { kind: "exists", query, negated: false, pos: t.pos };
    }
    if (
      (u === "CURRENT_DATE" || u === "CURRENT_TIMESTAMP" || u === "CURRENT_USER") &&
      !this.atOp("(", 1)
    ) {
      this.p++;
      return { kind: "call", name: u.toLowerCase(), args: [], distinct: false, pos: t.pos };
    }
    if (callFollows && (!EXPR_RESERVED.has(u) || FUNCTION_KEYWORDS.has(u))) return this.call();
    if (EXPR_RESERVED.has(u)) throw this.fail(t);
    return this.columnOrStar();
  }

  private columnOrStar(): Expr {
    const first = this.next();
    if (first.kind === "quoted" && this.atOp("(") && !this.queryStartsAt(1)) {
      this.p--;
      return this.call();
    }
    const parts = [first.text];
    while (this.atOp(".")) {
      const after = this.peek(1);
      if (after.kind === "op" && after.text === "*") {
        this.p += 2;
        return { kind: "star", qualifier: parts, pos: first.pos };
      }
      this.p++;
      parts.push(this.namePart());
    }
    return { kind: "column", name: parts, pos: first.pos };
  }

  private call(): Expr {
    const nameTok = this.next();
    const name = nameTok.text.toLowerCase();
    const pos = nameTok.pos;
    this.expectOp("(");
    return this.nested(() => {
      const done = (args: Expr[], distinct = false): Expr => {
        this.expectOp(")");
        return { kind: "call", name, args, distinct, pos };
      };
      if (name === "extract" && this.peek().kind === "word" && this.isKw(this.peek(1), "FROM")) {
        const field = this.next();
        this.p++;
        const source = this.expression();
        const fieldLit: Expr = {
          kind: "literal",
          value: field.upper,
          type: "string",
          pos: field.pos,
        };
        return done([fieldLit, source]);
      }
      if (name === "position" && !this.atOp(")")) {
        const first = this.valueExpression();
        if (this.acceptKw("IN")) return done([first, this.valueExpression()]);
        const args = [this.expression(first)];
        while (this.acceptOp(",")) args.push(this.expression());
        return done(args);
      }
      if ((name === "substring" || name === "substr") && !this.atOp(")")) {
        const str = this.expression();
        if (this.acceptKw("FROM")) {
          const args = [str, this.expression()];
          if (this.acceptKw("FOR")) args.push(this.expression());
          return done(args);
        }
        const args = [str];
        while (this.acceptOp(",")) args.push(this.expression());
        return done(args);
      }
      if (this.atOp(")")) return done([]);
      if (this.atOp("*") && this.atOp(")", 1)) {
        const star = this.next();
        return done([{ kind: "star", pos: star.pos }]);
      }
      let distinct = false;
      if (this.acceptKw("DISTINCT")) distinct = true;
      else if (this.atKw("ALL") && !this.atOp(")", 1) && !this.atOp(",", 1)) this.p++;
      const args = [this.expression()];
      while (this.acceptOp(",")) args.push(this.expression());
      return done(args, distinct);
    });
  }

  private caseExpr(): Expr {
    const caseTok = this.next();
    return this.nested(() => {
      const operand = this.atKw("WHEN") ? undefined : this.expression();
      const branches: { when: Expr; then: Expr }[] = [];
      while (this.acceptKw("WHEN")) {
        const when = this.expression();
        this.expectKw("THEN");
        // biome-ignore lint/suspicious/noThenProperty: the AST names CASE branches {when, then}.
        branches.push({ when, then: this.expression() });
      }
      if (branches.length === 0) throw this.fail();
      const otherwise = this.acceptKw("ELSE") ? this.expression() : undefined;
      this.expectKw("END");
      return {
        kind: "case",
        ...opt("operand", operand),
        branches,
        ...opt("otherwise", otherwise),
        pos: caseTok.pos,
      };
    });
  }

  // ---- types --------------------------------------------------------------------------------

  dataType(): DataType {
    return this.nested(() => {
      const t = this.next();
      if (t.kind !== "word") throw this.fail(t);
      switch (t.upper) {
        case "ARRAY": {
          this.expectOp("<");
          const element = this.dataType();
          this.expectOp(">");
          return arrayType(element, true);
        }
        case "MAP": {
          this.expectOp("<");
          const key = this.dataType();
          this.expectOp(",");
          const value = this.dataType();
          this.expectOp(">");
          return mapType(key, value, true);
        }
        case "STRUCT": {
          if (this.acceptOp("<>")) return structType([]);
          this.expectOp("<");
          const fields: StructField[] = [];
          if (!this.acceptOp(">")) {
            do fields.push(this.structFieldDef());
            while (this.acceptOp(","));
            this.expectOp(">");
          }
          const s = structType(fields);
          withPos(t.pos, () => checkDuplicateColumns(s));
          return s;
        }
        case "DECIMAL":
        case "DEC":
        case "NUMERIC": {
          let precision = 10;
          let scale = 0;
          if (this.acceptOp("(")) {
            precision = this.nonNegativeInteger();
            if (this.acceptOp(",")) scale = this.nonNegativeInteger();
            this.expectOp(")");
          }
          return withPos(t.pos, () => checkDecimal(precision, scale));
        }
        case "CHAR":
        case "CHARACTER":
        case "VARCHAR": {
          if (!this.atOp("(")) {
            throw parseError(
              "DATATYPE_MISSING_SIZE",
              `DataType "${t.upper}" requires a length parameter, for example "${t.upper}"(10). ` +
                "Please specify the length.",
              "42K01",
              t.pos,
            );
          }
          this.p++;
          this.nonNegativeInteger();
          this.expectOp(")");
          return "string";
        }
        default: {
          const prim = SQL_PRIMITIVES[t.upper];
          if (prim === undefined) {
            throw parseError(
              "UNSUPPORTED_DATATYPE",
              `Unsupported data type "${t.upper}".`,
              "0A000",
              t.pos,
            );
          }
          return prim;
        }
      }
    });
  }

  private structFieldDef(): StructField {
    const nameTok = this.peek();
    if (nameTok.kind !== "word" && nameTok.kind !== "quoted") throw this.fail(nameTok);
    this.p++;
    this.acceptOp(":");
    const type = this.dataType();
    let nullable = true;
    const metadata: Record<string, unknown> = {};
    for (;;) {
      if (this.atKw("NOT") && this.isKw(this.peek(1), "NULL")) {
        this.p += 2;
        nullable = false;
      } else if (this.acceptKw("COMMENT")) {
        metadata.comment = this.stringLiteral();
      } else {
        return structField(nameTok.text, type, nullable, metadata);
      }
    }
  }
}

type JoinType = "inner" | "left" | "right" | "full" | "cross" | "semi" | "anti";

// ---------------------------------------------------------------------------------------------
// SET, which Spark reads as raw text rather than tokens

const SET_KEY_VALUE = /^([A-Za-z_\d\\.:]+)\s*=([^;]*)$/s;
const SET_KEY = /^([A-Za-z_\d\\.:]+)$/;
const SET_QUOTED = /^`((?:[^`]|``)+)`\s*(?:=\s*(.*))?$/s;

function parseSet(sql: string, setTok: Token): Statement {
  const pos = setTok.pos;
  const rest = sql
    .slice(setTok.end)
    .replace(/[\s;]+$/, "")
    .trim();
  if (rest === "") return { kind: "set", pos };
  if (rest === "-v") return { kind: "set", key: "-v", pos };
  const tz = /^TIME\s+ZONE\s+(.+)$/is.exec(rest);
  if (tz) {
    const raw = tz[1].trim();
    const quoted = /^'(.*)'$|^"(.*)"$/s.exec(raw);
    const value = quoted ? (quoted[1] ?? quoted[2]) : raw;
    return { kind: "set", key: "spark.sql.session.timeZone", value, pos };
  }
  let m = SET_KEY_VALUE.exec(rest);
  if (m) return { kind: "set", key: m[1], value: m[2].trim(), pos };
  m = SET_KEY.exec(rest);
  if (m) return { kind: "set", key: m[1], pos };
  m = SET_QUOTED.exec(rest);
  if (m) {
    const key = m[1].replaceAll("``", "`");
    if (m[2] === undefined) return { kind: "set", key, pos };
    let value = m[2].trim();
    const bq = /^`((?:[^`]|``)*)`$/s.exec(value);
    if (bq) value = bq[1].replaceAll("``", "`");
    return { kind: "set", key, value, pos };
  }
  throw parseError(
    "INVALID_SET_SYNTAX",
    "Expected format is 'SET', 'SET key', or 'SET key=value'. If you want to include special " +
      "characters in key, or include semicolon in value, please use backquotes, e.g., " +
      "SET `key`=`value`.",
    "42000",
    pos,
  );
}

// ---------------------------------------------------------------------------------------------
// Literals

const INT32_MIN = -2147483648n;
const INT32_MAX = 2147483647n;
const INT64_MIN = -9223372036854775808n;
const INT64_MAX = 9223372036854775807n;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

const integral = (n: bigint): number | bigint => (n <= SAFE_MAX && n >= -SAFE_MAX ? Number(n) : n);

/** A number token as Spark types it; `negative` when a minus sign directly preceded it. */
function numberLiteral(tok: Token, negative: boolean, pos: Pos): Expr {
  const sign = negative ? "-" : "";
  const text = tok.text;
  switch (tok.numberKind) {
    case "integer": {
      const n = BigInt(sign + text);
      if (n >= INT32_MIN && n <= INT32_MAX) {
        return { kind: "literal", value: Number(n), type: "integer", pos };
      }
      if (n >= INT64_MIN && n <= INT64_MAX) {
        return { kind: "literal", value: integral(n), type: "long", pos };
      }
      return decimalLiteral(sign + text, pos);
    }
    case "bigint":
      return ranged(sign + text.slice(0, -1), "long", "bigint", INT64_MIN, INT64_MAX, pos);
    case "smallint":
      return ranged(sign + text.slice(0, -1), "short", "smallint", -32768n, 32767n, pos);
    case "tinyint":
      return ranged(sign + text.slice(0, -1), "byte", "tinyint", -128n, 127n, pos);
    case "decimal":
      return decimalLiteral(sign + text, pos);
    case "bigdecimal":
      return decimalLiteral(sign + text.slice(0, -2), pos);
    case "exponent":
      return floating(sign + text, "double", pos);
    case "double":
      return floating(sign + text.slice(0, -1), "double", pos);
    default:
      return floating(sign + text.slice(0, -1), "float", pos);
  }
}

function rangeError(raw: string, typeName: string, min: string, max: string, pos: Pos) {
  return parseError(
    "INVALID_NUMERIC_LITERAL_RANGE",
    `Numeric literal ${raw} is outside the valid range for ${typeName} with minimum value of ` +
      `${min} and maximum value of ${max}. Please adjust the value accordingly.`,
    "22003",
    pos,
  );
}

function ranged(
  raw: string,
  type: "long" | "short" | "byte",
  typeName: string,
  min: bigint,
  max: bigint,
  pos: Pos,
): Expr {
  const n = BigInt(raw);
  if (n < min || n > max) throw rangeError(raw, typeName, String(min), String(max), pos);
  return { kind: "literal", value: integral(n), type, pos };
}

const DOUBLE_LIMIT = "1.7976931348623157E+308";
const FLOAT_LIMIT = "3.4028234663852886E+38";

function floating(raw: string, type: "double" | "float", pos: Pos): Expr {
  const v = Number(raw);
  const limit = type === "double" ? Number.MAX_VALUE : 3.4028234663852886e38;
  if (!Number.isFinite(v) || Math.abs(v) > limit) {
    const shown = type === "double" ? DOUBLE_LIMIT : FLOAT_LIMIT;
    throw rangeError(raw, type, `-${shown}`, shown, pos);
  }
  const value = type === "float" ? shortestFloat32(Math.fround(v)) : v;
  return { kind: "literal", value, type, pos };
}

/**
 * A decimal literal typed as Java's BigDecimal would be: precision = significant digits of the
 * unscaled value, scale = fraction digits (less any exponent; a negative scale is rounded up to
 * 0, as Spark does without its legacy flag), DECIMAL(max(precision, scale), scale).
 */
function decimalLiteral(raw: string, pos: Pos): Expr {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:E([+-]?\d+))?$/i.exec(raw);
  if (!m) {
    throw parseError("PARSE_SYNTAX_ERROR", `Syntax error at or near '${raw}'.`, "42601", pos);
  }
  const negative = m[1] === "-";
  const frac = m[3] ?? "";
  let digits = (m[2] ?? "") + frac;
  let scale = frac.length - (m[4] ? Number(m[4]) : 0);
  if (scale < 0) {
    digits += "0".repeat(-scale);
    scale = 0;
  }
  const unscaled = digits.replace(/^0+/, "") || "0";
  const precision = Math.max(unscaled.length, scale);
  const type = withPos(pos, () => checkDecimal(precision, scale));
  const padded = unscaled.padStart(scale + 1, "0");
  const intPart = padded.slice(0, padded.length - scale);
  const text = scale > 0 ? `${intPart}.${padded.slice(padded.length - scale)}` : intPart;
  const isZero = unscaled === "0";
  return { kind: "literal", value: negative && !isZero ? `-${text}` : text, type, pos };
}

const DATE_LITERAL = /^\s*([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?\s*$/s;
const PARTIAL_DATE = /^\s*([+-]?\d{4,7})(?:-(\d{1,2}))?\s*$/;

function typedLiteral(kind: string, text: string, pos: Pos): Expr {
  const invalid = () =>
    parseError(
      "INVALID_TYPED_LITERAL",
      `The value of the typed literal "${kind}" is invalid: '${text}'.`,
      "42604",
      pos,
    );
  switch (kind) {
    case "DATE": {
      const days = civilDays(text, DATE_LITERAL);
      if (days === undefined) throw invalid();
      return { kind: "literal", value: formatDate(days), type: "date", pos };
    }
    case "X": {
      const hex = text.length % 2 === 0 ? text : `0${text}`;
      if (!/^[0-9a-fA-F]*$/.test(hex)) throw invalid();
      return {
        kind: "literal",
        value: Buffer.from(hex, "hex").toString("base64"),
        type: "binary",
        pos,
      };
    }
    default: {
      const ntz = kind === "TIMESTAMP_NTZ";
      // Spark refuses a zone in a TIMESTAMP_NTZ literal rather than dropping it.
      if (ntz && /:\d{1,2}(?:[.,]\d*)?\s*(?:Z|UTC|GMT|[+-]\d)/i.test(text)) throw invalid();
      let micros: number | bigint | undefined;
      const partial = civilDays(text, PARTIAL_DATE);
      if (partial !== undefined) {
        const big = BigInt(partial) * 86_400_000_000n;
        micros = big <= SAFE_MAX && big >= -SAFE_MAX ? Number(big) : big;
      } else {
        micros = parseTimestamp(text, ntz);
      }
      if (micros === undefined) throw invalid();
      return {
        kind: "literal",
        value: formatTimestamp(micros, !ntz),
        type: ntz ? "timestamp_ntz" : "timestamp",
        pos,
      };
    }
  }
}

/** Day number of a date text Spark's stringToDate accepts (`2026`, `2026-1`, `2026-01-02 …`). */
function civilDays(text: string, re: RegExp): number | undefined {
  const m = re.exec(text);
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = m[2] === undefined ? 1 : Number(m[2]);
  const d = m[3] === undefined ? 1 : Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  return daysFromCivil(y, mo, d);
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Runs fn and adds the position to a 400 SiltError it throws (schema checks know none). */
function withPos<T>(pos: Pos, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SiltError && e.status === 400) {
      throw parseError(e.errorClass, e.message, e.sqlstate ?? "42601", pos);
    }
    throw e;
  }
}

/** `{key: value}` when value is defined, else `{}`: keeps optional AST fields absent. */
function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function scalar(query: Query, pos: Pos): Expr {
  return { kind: "scalarSubquery", query, pos };
}

function selectStar(from: FromItem, pos: Pos): Query & { kind: "select" } {
  return {
    kind: "select",
    distinct: false,
    items: [{ expr: { kind: "star", pos } }],
    from,
    groupBy: [],
    orderBy: [],
    pos,
  };
}

const quoteName = (name: string) => `\`${name.replaceAll("`", "``")}\``;

const quoteIfNeeded = (name: string) =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : quoteName(name);

function duplicateClause(label: string, pos: Pos) {
  return parseError(
    "DUPLICATE_CLAUSES",
    `Found duplicate clauses: ${label}. Please, remove one of them.`,
    "42614",
    pos,
  );
}

function duplicateKey(key: string, pos: Pos) {
  return parseError("DUPLICATE_KEY", `Found duplicate keys ${quoteName(key)}.`, "23505", pos);
}

/**
 * Spark's rule: within each kind of WHEN clause only the last may omit its condition (the
 * later ones could never fire).
 */
function checkMergeOrder(
  clauses: MergeClause[],
  pos: Pos,
  unconditioned: { matched: number; notMatched: number; notMatchedBySource: number },
): void {
  const last = clauses[clauses.length - 1];
  if (unconditioned[last.kind] > 0) {
    const [errorClass, what] =
      last.kind === "matched"
        ? ["NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION", "MATCHED"]
        : last.kind === "notMatched"
          ? ["NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION", "NOT MATCHED [BY TARGET]"]
          : ["NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION", "NOT MATCHED BY SOURCE"];
    throw parseError(
      errorClass,
      `When there are more than one ${what} clauses in a MERGE statement, only the last ${what} ` +
        "clause can omit the condition.",
      "42613",
      pos,
    );
  }
  if (last.condition === undefined) unconditioned[last.kind]++;
}
