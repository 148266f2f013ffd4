/**
 * Spark SQL queries into the AST of ast.ts: SELECT, VALUES, `TABLE t`, set operations, joins,
 * subqueries in FROM, time travel, ORDER BY / LIMIT / OFFSET.
 *
 * Queries not in the AST's union get no node of their own: `TABLE t` and ORDER BY / LIMIT /
 * OFFSET on a query that already has them (or on VALUES) become `SELECT * FROM (…)` around it;
 * `GROUP BY ALL` parses as a column named `ALL`, as in Spark, whose analyzer resolves it.
 */

import type { Expr, FromItem, OrderItem, Pos, Query, SelectItem, TimeTravelSpec } from "./ast.ts";
import { ExpressionParser } from "./expression-parser.ts";
import type { Token } from "./lexer.ts";
import { opt } from "./parser-base.ts";

export class QueryParser extends ExpressionParser {
  query(): Query {
    return this.nested(() => this.queryFrom(this.queryPrimary()));
  }

  /** Set operations and ORDER BY / LIMIT / OFFSET after an already parsed first operand. */
  protected queryFrom(first: Query): Query {
    return this.organization(this.setOps(0, first));
  }

  protected setOpAt(t: Token): { op: "union" | "intersect" | "except"; prec: number } | undefined {
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

  protected relationPrimary(): FromItem {
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
  protected timeTravel(): TimeTravelSpec | undefined {
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
}

type JoinType = "inner" | "left" | "right" | "full" | "cross" | "semi" | "anti";

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
