/**
 * What every level of the recursive-descent SQL parser stands on: the token cursor, the nesting
 * budget, names (identifiers, qualified names, aliases), string and integer tokens, and the two
 * node-building helpers (`opt` for optional AST fields, `withPos` to place schema errors). The
 * type, expression, query and statement parsers extend it in that order, each adding its own
 * grammar.
 */

import { SiltError } from "../errors.ts";
import type { Name, Pos } from "./ast.ts";
import { atPosition, Lexer, parseError, syntaxError, type Token, tokenDisplay } from "./lexer.ts";
import { NO_IMPLICIT_ALIAS, STRICT_RESERVED } from "./sql-keywords.ts";

/**
 * Nesting budget: each parenthesis, subquery, prefix operator, function call or type level
 * spends one or more units. 500 keeps well inside Node's default stack (it overflows near
 * 1,400 units of the costliest shape, nested scalar subqueries).
 */
export const MAX_DEPTH = 500;

export class ParserBase {
  private readonly toks: Token[];
  protected p = 0;
  private depth = 0;

  constructor(private readonly src: string) {
    this.toks = new Lexer(src).tokenize();
  }

  // ---- token helpers ------------------------------------------------------------------------

  protected peek(k = 0): Token {
    return this.toks[Math.min(this.p + k, this.toks.length - 1)];
  }

  protected next(): Token {
    const t = this.toks[this.p];
    if (t.kind !== "eof") this.p++;
    return t;
  }

  protected isKw(t: Token, ...kws: string[]): boolean {
    return t.kind === "word" && kws.includes(t.upper);
  }

  protected atKw(...kws: string[]): boolean {
    return this.isKw(this.peek(), ...kws);
  }

  protected acceptKw(kw: string): boolean {
    if (!this.atKw(kw)) return false;
    this.p++;
    return true;
  }

  protected expectKw(kw: string): Token {
    if (!this.atKw(kw)) throw this.fail();
    return this.next();
  }

  protected atOp(op: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === "op" && t.text === op;
  }

  protected acceptOp(op: string): boolean {
    if (!this.atOp(op)) return false;
    this.p++;
    return true;
  }

  protected expectOp(op: string): Token {
    if (!this.atOp(op)) throw this.fail(this.peek(), op === ")" ? ": missing ')'" : "");
    return this.next();
  }

  protected fail(tok: Token = this.peek(), hint = ""): SiltError {
    return syntaxError(this.src, tok, hint);
  }

  protected nested<T>(fn: () => T): T {
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
  protected queryStartsAt(k: number): boolean {
    return this.isKw(this.peek(k), "SELECT", "VALUES", "WITH", "TABLE");
  }

  // ---- names --------------------------------------------------------------------------------

  protected isIdentifier(t: Token): boolean {
    return t.kind === "quoted" || (t.kind === "word" && !STRICT_RESERVED.has(t.upper));
  }

  protected identifier(): string {
    const t = this.peek();
    if (!this.isIdentifier(t)) throw this.fail(t);
    this.p++;
    return t.text;
  }

  /** A part of a qualified name after a dot: any word, reserved or not. */
  protected namePart(): string {
    const t = this.peek();
    if (t.kind !== "word" && t.kind !== "quoted") throw this.fail(t);
    this.p++;
    return t.text;
  }

  /**
   * A possibly qualified object name. An unquoted part written with dashes (`my-table`) is
   * Spark's INVALID_IDENTIFIER rather than a syntax error.
   */
  protected multipartName(): Name {
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
      throw parseError(t.pos, "INVALID_IDENTIFIER:DASHED", { text });
    }
    return name;
  }

  /** `(a, b, c)` of plain identifiers. */
  protected identifierList(): string[] {
    this.expectOp("(");
    const out = [this.identifier()];
    while (this.acceptOp(",")) out.push(this.identifier());
    this.expectOp(")");
    return out;
  }

  /** `(a.b, c)` of possibly nested column names. */
  protected columnNameList(): Name[] {
    this.expectOp("(");
    const out = [this.columnName()];
    while (this.acceptOp(",")) out.push(this.columnName());
    this.expectOp(")");
    return out;
  }

  protected columnName(): Name {
    const parts = [this.identifier()];
    while (this.acceptOp(".")) parts.push(this.namePart());
    return parts;
  }

  private isImplicitAlias(t: Token): boolean {
    return t.kind === "quoted" || (t.kind === "word" && !NO_IMPLICIT_ALIAS.has(t.upper));
  }

  /** `[AS] alias`, or nothing. */
  protected optionalAlias(): string | undefined {
    if (this.acceptKw("AS")) return this.identifier();
    if (this.isImplicitAlias(this.peek())) return this.next().text;
    return undefined;
  }

  protected stringLiteral(): string {
    const t = this.peek();
    if (t.kind !== "string") throw this.fail(t);
    this.p++;
    return t.text;
  }

  protected nonNegativeInteger(): number {
    const t = this.next();
    if (t.kind !== "number" || t.numberKind !== "integer") throw this.fail(t);
    return Number(t.text);
  }
}

/** Runs fn and adds the position to a 400 SiltError it throws (schema checks know none). */
export function withPos<T>(pos: Pos, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SiltError && e.status === 400) {
      throw atPosition(e, pos);
    }
    throw e;
  }
}

/** `{key: value}` when value is defined, else `{}`: keeps optional AST fields absent. */
export function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
