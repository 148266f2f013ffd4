/**
 * Spark SQL expressions into the AST of ast.ts, by recursive descent.
 *
 * Precedence is Spark's (SqlBaseParser.g4): OR < AND < NOT < one predicate (IS, [NOT] IN /
 * BETWEEN / LIKE / ILIKE / RLIKE) applied to a value expression, whose operators bind
 * comparison < `|` < `^` < `&` < `+ - ||` < `* / % DIV` < unary `- + ~` < `::`. A minus directly
 * before a number is part of the literal, as in Spark's `number` rule (`-2147483648` is an INT).
 *
 * EXTRACT(f FROM x), SUBSTRING(s FROM p [FOR n]) and POSITION(a IN b) become the calls
 * extract('F', x), substring(s, p[, n]) and position(a, b); bare CURRENT_DATE,
 * CURRENT_TIMESTAMP and CURRENT_USER become calls without arguments.
 *
 * Subqueries (IN, EXISTS, scalar) are the query grammar's, which extends this one: the methods
 * they need are abstract here.
 */

import type { BinaryOp, Expr, Pos, Query } from "./ast.ts";
import { parseError, type Token } from "./lexer.ts";
import { numberLiteral, typedLiteral } from "./literal-parser.ts";
import { opt } from "./parser-base.ts";
import { EXPR_RESERVED, FUNCTION_KEYWORDS, TYPED_LITERALS } from "./sql-keywords.ts";
import { TypeParser } from "./type-parser.ts";

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

export abstract class ExpressionParser extends TypeParser {
  abstract query(): Query;

  protected abstract queryFrom(first: Query): Query;

  protected abstract setOpAt(
    t: Token,
  ): { op: "union" | "intersect" | "except"; prec: number } | undefined;

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
          throw parseError(escTok.pos, "INVALID_ESC", { escapeChar });
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
  protected valueExpression(): Expr {
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
      throw parseError(t.pos, "UNSUPPORTED_DATATYPE:INTERVAL");
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
}

function scalar(query: Query, pos: Pos): Expr {
  return { kind: "scalarSubquery", query, pos };
}
