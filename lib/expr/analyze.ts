/**
 * Analysis of expressions: resolves names against a scope, applies Spark's ANSI type coercion
 * (inserting implicit casts), checks types with Spark's error classes, and computes each node's
 * result type and nullability, building the analysed tree (`Typed`, lib/expr/typed.ts).
 *
 * Desugaring keeps the analysed forms few: `!=` is NOT(=), BETWEEN is (>= AND <=), IS [NOT]
 * DISTINCT FROM is [NOT] <=>, IS TRUE/FALSE is <=>, simple CASE compares with =, if/nullif/nvl2
 * are CASE nodes, ILIKE lowers both sides. Casts of literals fold into literals when they
 * succeed (a failing cast stays a cast node, so the error surfaces when evaluated).
 */
import type { DataType, DecimalType, StructField } from "../delta/schema.ts";
import { SiltError, siltError } from "../errors.ts";
import { javaDecimalString } from "../values/decimal-text.ts";
import { editDistance } from "../values/did-you-mean.ts";
import { javaDoubleString, javaFloatString } from "../values/float-text.ts";
import { quoteIdent, quoteIfNeeded, quotePath } from "../values/identifiers.ts";
import type { BinaryOp, Expr, Name, SqlType } from "./ast.ts";
import { lookupFunction } from "./functions.ts";
import { integralNegate } from "./scalar-arithmetic.ts";
import { castScalar } from "./scalar-cast.ts";
import { toScalar } from "./scalar-json.ts";
import { sqlLiteral } from "./scalar-text.ts";
import type { ArgSpec, CompareOp, Typed, TypedColumn, TypedLiteral } from "./typed.ts";
import {
  type ArithOp,
  canAnsiCast,
  canStoreAssign,
  castMismatch,
  decimalForIntegralValue,
  decimalForType,
  decimalResultType,
  isAtomic,
  isDecimalType,
  isFloating,
  isIntegral,
  isNumeric,
  isOrderable,
  ordinalNumber,
  quotedType,
  type Scalar,
  sameType,
  sqlTypeName,
  stringPromotionType,
  widerCommonType,
  widerDecimalType,
  widerTypeForTwo,
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Scope

export interface ScopeColumn {
  name: string;
  type: DataType;
  nullable: boolean;
}

export interface ScopeRelation {
  /**
   * Names that qualify this relation's columns: the alias (["t"]) or the table's full name
   * (["cat", "sch", "tbl"], any suffix of which may qualify a column). Empty: unqualifiable.
   */
  qualifier?: string[];
  columns: ScopeColumn[];
}

export interface Scope {
  /** Relations in FROM order; a column's ordinal counts across them in this order. */
  relations: ScopeRelation[];
  /** Shown by UNRESOLVED_ROUTINE, e.g. ["spark_catalog", "default"] for the current schema. */
  currentSchema?: string[];
  /** Called for subquery expressions; without it they are rejected. */
  resolveSubquery?: (expr: Expr, scope: Scope) => Typed;
}

/** A scope of one relation. */
export const scopeOf = (
  columns: ScopeColumn[] | readonly StructField[],
  qualifier?: string[],
): Scope => ({
  relations: [
    {
      qualifier,
      columns: columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
    },
  ],
});

// ---------------------------------------------------------------------------------------------
// Errors

const unresolvedRoutine = (name: string, scope: Scope) => {
  const path = ["`system`.`builtin`", "`system`.`session`"];
  if (scope.currentSchema && scope.currentSchema.length > 0) {
    path.push(quotePath(scope.currentSchema));
  }
  return siltError("UNRESOLVED_ROUTINE", { name: quoteIdent(name), path: path.join(", ") });
};

export const wrongNumArgs = (name: string, expected: string, actual: number) =>
  siltError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", { name: quoteIdent(name), expected, actual });

/** StringUtils.orderSuggestedIdentifiersBySimilarity, keeping the first five. */
function suggestions(name: Name, candidates: string[][]): string[] {
  const base = name.map(quoteIfNeeded).join(".");
  const groupSize = (drop: number) =>
    new Set(candidates.map((c) => JSON.stringify(c.slice(0, Math.max(0, c.length - drop))))).size;
  let stripped = candidates;
  if (name.length === 1 && groupSize(1) === 1) stripped = candidates.map((c) => c.slice(-1));
  else if (name.length <= 2 && groupSize(2) === 1) stripped = candidates.map((c) => c.slice(-2));
  return stripped
    .map((c) => quotePath(c))
    .map((q, i) => ({ q, d: editDistance(q, base), i }))
    .sort((x, y) => x.d - y.d || x.i - y.i)
    .slice(0, 5)
    .map((x) => x.q);
}

// ---------------------------------------------------------------------------------------------
// Public entry points

/** Analyses an expression against a scope. Throws Spark's analysis errors. */
export function analyze(expr: Expr, scope: Scope): Typed {
  return new Analyzer(scope).expr(expr);
}

/** Analyses a WHERE/ON condition: the result must be BOOLEAN (or an untyped NULL). */
export function analyzePredicate(expr: Expr, scope: Scope): Typed {
  const t = analyze(expr, scope);
  if (t.type === "boolean") return t;
  if (t.type === "null") return { kind: "literal", type: "boolean", nullable: true, value: null };
  const sql = prettySql(t);
  throw siltError("DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN", {
    sqlExpr: sql,
    type: quotedType(t.type),
  });
}

/** Every column the expression reads, in first-use order, each once. */
export function referencedColumns(t: Typed): TypedColumn[] {
  const out: TypedColumn[] = [];
  const seen = new Set<number>();
  walk(t, (n) => {
    if (n.kind === "column" && !seen.has(n.ordinal)) {
      seen.add(n.ordinal);
      out.push(n);
    }
  });
  return out;
}

export function containsAggregate(t: Typed): boolean {
  let found = false;
  walk(t, (n) => {
    if (n.kind === "aggregate") found = true;
  });
  return found;
}

/** The node's direct children. */
export function children(t: Typed): Typed[] {
  switch (t.kind) {
    case "literal":
    case "column":
      return [];
    case "field":
    case "cast":
    case "negate":
    case "bitnot":
    case "not":
    case "isNull":
      return [t.operand];
    case "arith":
    case "bitwise":
    case "compare":
    case "and":
    case "or":
      return [t.left, t.right];
    case "in":
      return [t.operand, ...t.list];
    case "like":
      return [t.operand, t.pattern];
    case "case": {
      const out: Typed[] = [];
      for (const b of t.branches) out.push(b.when, b.then);
      if (t.otherwise) out.push(t.otherwise);
      return out;
    }
    case "coalesce":
    case "call":
    case "aggregate":
      return t.args;
  }
}

function walk(t: Typed, f: (n: Typed) => void): void {
  f(t);
  for (const c of children(t)) walk(c, f);
}

// ---------------------------------------------------------------------------------------------
// Construction helpers shared with functions.ts

export const literalOf = (value: Scalar | null, type: SqlType): TypedLiteral => ({
  kind: "literal",
  type,
  nullable: value === null,
  value,
});

/** An implicit cast, folded when the operand is a literal and the cast succeeds. */
export function implicitCast(t: Typed, to: SqlType): Typed {
  if (sameType(t.type, to)) return t;
  return makeCast(t, to, false, true);
}

function makeCast(t: Typed, to: SqlType, tryCast: boolean, implicit: boolean): Typed {
  const node: Typed = {
    kind: "cast",
    type: to,
    nullable: t.nullable || tryCast || castMayYieldNull(t.type, to),
    operand: t,
    tryCast,
    implicit,
  };
  if (t.kind === "literal") {
    try {
      const value = castScalar(t.value, t.type, to, tryCast);
      return { kind: "literal", type: to, nullable: value === null, value, folded: node };
    } catch (e) {
      if (!(e instanceof SiltError)) throw e;
    }
  }
  return node;
}

/** Casts that yield NULL for some non-null input even in ANSI mode. */
const castMayYieldNull = (from: SqlType, to: SqlType): boolean =>
  isFloating(from) && isDecimalType(to);

// ---------------------------------------------------------------------------------------------
// Analyzer

const SPECIAL_NAMES: Record<string, string> = {
  current_date: "current_date",
  current_timestamp: "current_timestamp",
};

class Analyzer {
  constructor(private readonly scope: Scope) {}

  expr(e: Expr): Typed {
    switch (e.kind) {
      case "literal":
        return this.literal(e.value, e.type);
      case "column":
        return this.column(e.name);
      case "star":
        throw siltError("INVALID_USAGE_OF_STAR_OR_REGEX:EXPRESSION");
      case "unary":
        return this.unary(e.op, this.expr(e.operand));
      case "binary":
        return this.binary(e.op, this.expr(e.left), this.expr(e.right));
      case "isNull":
        return {
          kind: "isNull",
          type: "boolean",
          nullable: false,
          operand: this.expr(e.operand),
          negated: e.negated,
        };
      case "isBool": {
        const operand = this.expr(e.operand);
        let t: Typed;
        if (e.value === null) {
          const op = this.expectBoolean(operand, 0, `(${prettySql(operand)} IS UNKNOWN)`);
          t = { kind: "isNull", type: "boolean", nullable: false, operand: op, negated: false };
        } else {
          t = this.compare("<=>", operand, literalOf(e.value, "boolean"));
        }
        return e.negated ? notOf(t) : t;
      }
      case "isDistinctFrom": {
        const t = this.compare("<=>", this.expr(e.left), this.expr(e.right));
        return e.negated ? t : notOf(t);
      }
      case "in": {
        const t = this.inList(
          this.expr(e.operand),
          e.list.map((x) => this.expr(x)),
        );
        return e.negated ? notOf(t) : t;
      }
      case "between": {
        const operand = this.expr(e.operand);
        const t = andOf(
          this.compare(">=", operand, this.expr(e.low)),
          this.compare("<=", operand, this.expr(e.high)),
        );
        return e.negated ? notOf(t) : t;
      }
      case "like": {
        const t = this.like(e.op, this.expr(e.operand), this.expr(e.pattern), e.escape);
        return e.negated ? notOf(t) : t;
      }
      case "case":
        return this.caseWhen(e);
      case "cast":
        return this.cast(this.expr(e.operand), e.target, e.tryCast);
      case "call":
        return this.call(e);
      case "inSubquery":
      case "exists":
      case "scalarSubquery":
        if (this.scope.resolveSubquery) return this.scope.resolveSubquery(e, this.scope);
        throw siltError("UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY");
    }
  }

  literal(value: unknown, type: SqlType): Typed {
    return literalOf(toScalar(value, type), type);
  }

  // -- names ----------------------------------------------------------------------------------

  column(name: Name): Typed {
    type Match = { rel: number; col: number; ordinal: number; rest: string[] };
    const rels = this.scope.relations;
    const maxQualifier = Math.max(0, ...rels.map((r) => r.qualifier?.length ?? 0));
    for (let k = Math.min(name.length - 1, maxQualifier); k >= 0; k--) {
      const quals = name.slice(0, k).map((q) => q.toLowerCase());
      const colName = name[k].toLowerCase();
      const matches: Match[] = [];
      let base = 0;
      rels.forEach((r, ri) => {
        const rq = (r.qualifier ?? []).map((q) => q.toLowerCase());
        const qualifies =
          k === 0 || (rq.length >= k && quals.every((q, i) => q === rq[rq.length - k + i]));
        if (qualifies) {
          r.columns.forEach((c, ci) => {
            if (c.name.toLowerCase() === colName) {
              matches.push({ rel: ri, col: ci, ordinal: base + ci, rest: name.slice(k + 1) });
            }
          });
        }
        base += r.columns.length;
      });
      if (matches.length > 1) {
        const refs = matches
          .map((m) =>
            quotePath([...(rels[m.rel].qualifier ?? []), rels[m.rel].columns[m.col].name]),
          )
          .sort();
        throw siltError("AMBIGUOUS_REFERENCE", { name: quotePath(name), refs: refs.join(", ") });
      }
      if (matches.length === 1) {
        const m = matches[0];
        const r = rels[m.rel];
        const c = r.columns[m.col];
        let t: Typed = {
          kind: "column",
          type: c.type,
          nullable: c.nullable,
          relation: m.rel,
          index: m.col,
          ordinal: m.ordinal,
          name: c.name,
          qualifier: r.qualifier ?? [],
        };
        for (const f of m.rest) t = this.field(t, f);
        return t;
      }
    }
    if (name.length === 1 && SPECIAL_NAMES[name[0].toLowerCase()]) {
      return this.call({
        kind: "call",
        name: SPECIAL_NAMES[name[0].toLowerCase()],
        args: [],
        distinct: false,
        pos: { line: 0, column: 0 },
      });
    }
    const candidates = rels.flatMap((r) => r.columns.map((c) => [...(r.qualifier ?? []), c.name]));
    const objectName = quotePath(name);
    if (candidates.length === 0) {
      throw siltError("UNRESOLVED_COLUMN.WITHOUT_SUGGESTION", { objectName });
    }
    throw siltError("UNRESOLVED_COLUMN.WITH_SUGGESTION:NAME", {
      key: objectName,
      suggestions: suggestions(name, candidates).join(", "),
    });
  }

  field(t: Typed, name: string): Typed {
    const st = t.type;
    if (typeof st !== "object" || st.type !== "struct") {
      throw siltError("INVALID_EXTRACT_BASE_FIELD_TYPE", {
        base: prettySql(t),
        other: quotedType(st),
      });
    }
    const i = st.fields.findIndex((f) => f.name.toLowerCase() === name.toLowerCase());
    if (i < 0) {
      throw siltError("FIELD_NOT_FOUND", {
        name: quoteIdent(name),
        fields: st.fields.map((f) => quoteIdent(f.name)).join(", "),
      });
    }
    const f = st.fields[i];
    return {
      kind: "field",
      type: f.type,
      nullable: t.nullable || f.nullable,
      operand: t,
      index: i,
      name: f.name,
    };
  }

  // -- operators ------------------------------------------------------------------------------

  unary(op: "-" | "+" | "not" | "~", operand: Typed): Typed {
    const sql = () =>
      op === "not" ? `(NOT ${prettySql(operand)})` : `(${op} ${prettySql(operand)})`;
    switch (op) {
      case "not":
        return notOf(this.expectBoolean(operand, 0, sql()));
      case "~": {
        const o = operand.type === "null" ? implicitCast(operand, "long") : operand;
        if (!isIntegral(o.type))
          throw this.unexpectedType(0, '"INTEGRAL"', operand, `~${prettySql(operand)}`);
        return { kind: "bitnot", type: o.type, nullable: o.nullable, operand: o };
      }
      default: {
        const o =
          operand.type === "string" || operand.type === "null"
            ? implicitCast(operand, "double")
            : operand;
        if (!isNumeric(o.type)) {
          throw this.unexpectedType(
            0,
            '("NUMERIC" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH" or "INTERVAL")',
            operand,
            sql(),
          );
        }
        if (op === "+") return o;
        if (o.kind === "literal" && o.value !== null) {
          try {
            return { ...literalOf(negateScalar(o.value, o.type), o.type), folded: undefined };
          } catch (e) {
            if (!(e instanceof SiltError)) throw e;
          }
        }
        return { kind: "negate", type: o.type, nullable: o.nullable, operand: o };
      }
    }
  }

  binary(op: BinaryOp, l: Typed, r: Typed): Typed {
    switch (op) {
      case "+":
      case "-":
      case "*":
      case "/":
      case "%":
      case "div":
        return this.arith(op, l, r);
      case "&":
      case "|":
      case "^":
        return this.bitwise(op, l, r);
      case "||":
        return this.call(
          {
            kind: "call",
            name: "concat",
            args: [],
            distinct: false,
            pos: { line: 0, column: 0 },
          },
          [l, r],
        );
      case "=":
      case "<":
      case "<=":
      case ">":
      case ">=":
      case "<=>":
        return this.compare(op, l, r);
      case "!=":
        return notOf(this.compare("=", l, r));
      case "and":
      case "or":
        return this.logical(op, l, r);
    }
  }

  /** PromoteStrings: a string meets a non-string by being cast to the other side's type. */
  private promoteStrings(l: Typed, r: Typed): [Typed, Typed] {
    if (sameType(l.type, r.type)) return [l, r];
    const t = stringPromotionType(l.type, r.type);
    if (t === undefined) return [l, r];
    return [implicitCast(l, t), implicitCast(r, t)];
  }

  /** DecimalPrecision: integrals meet decimals as decimals, floats meet them as doubles. */
  private decimalPrecision(l: Typed, r: Typed, comparison: boolean): [Typed, Typed] {
    const toDecimal = (t: Typed): Typed => {
      if (t.kind === "literal" && t.value !== null && isIntegral(t.type)) {
        return implicitCast(t, decimalForIntegralValue(t.value as number | bigint));
      }
      return implicitCast(t, decimalForType(t.type)!);
    };
    let a = l;
    let b = r;
    if (isDecimalType(a.type) && isIntegral(b.type)) b = toDecimal(b);
    else if (isIntegral(a.type) && isDecimalType(b.type)) a = toDecimal(a);
    else if (isDecimalType(a.type) && isFloating(b.type)) a = implicitCast(a, "double");
    else if (isFloating(a.type) && isDecimalType(b.type)) b = implicitCast(b, "double");
    if (comparison && isDecimalType(a.type) && isDecimalType(b.type) && !sameType(a.type, b.type)) {
      const w = widerDecimalType(a.type, b.type);
      a = implicitCast(a, w);
      b = implicitCast(b, w);
    }
    return [a, b];
  }

  /** ImplicitTypeCasts for binary operators: both sides to the wider type if it is accepted. */
  private widen(l: Typed, r: Typed, accepts: (t: SqlType) => boolean): [Typed, Typed] {
    if (sameType(l.type, r.type)) return [l, r];
    // Decimals meet other types in decimalPrecision; only an untyped NULL is widened here.
    const ld = isDecimalType(l.type);
    const rd = isDecimalType(r.type);
    if ((ld || rd) && !(ld && r.type === "null") && !(rd && l.type === "null")) return [l, r];
    const w = widerTypeForTwo(l.type, r.type);
    if (w === undefined || !accepts(w)) return [l, r];
    return [implicitCast(l, w), implicitCast(r, w)];
  }

  private checkBinary(
    symbol: string,
    l: Typed,
    r: Typed,
    accepts: (t: SqlType) => boolean,
    inputType: string,
  ): void {
    const sql = () => `(${prettySql(l)} ${symbol} ${prettySql(r)})`;
    const bothDecimal = isDecimalType(l.type) && isDecimalType(r.type);
    if (!sameType(l.type, r.type) && !bothDecimal) {
      throw siltError("DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES", {
        sqlExpr: sql(),
        left: quotedType(l.type),
        right: quotedType(r.type),
      });
    }
    if (!accepts(l.type)) {
      throw siltError("DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE", {
        sqlExpr: sql(),
        inputType,
        type: quotedType(l.type),
      });
    }
  }

  arith(op: ArithOp, l0: Typed, r0: Typed): Typed {
    // Dates: date ± n is date_add/date_sub; n + date swaps.
    if (op === "+" || op === "-") {
      if (l0.type === "date" && r0.type !== "date" && !isDatetimeLike(r0.type)) {
        return this.callNamed(op === "+" ? "date_add" : "date_sub", [l0, r0]);
      }
      if (op === "+" && r0.type === "date" && !isDatetimeLike(l0.type)) {
        return this.callNamed("date_add", [r0, l0]);
      }
      if (
        op === "-" &&
        (l0.type === "date" || r0.type === "date") &&
        (l0.type === "date" || l0.type === "string") &&
        (r0.type === "date" || r0.type === "string")
      ) {
        throw siltError("UNSUPPORTED_DATATYPE:DATE_DIFFERENCE", {
          left: prettySql(l0),
          right: prettySql(r0),
        });
      }
    }
    let [l, r] = this.promoteStrings(l0, r0);
    [l, r] = this.decimalPrecision(l, r, false);
    const numericOrNull = (t: SqlType) => isNumeric(t) || t === "null";
    if (op === "/" && numericOrNull(l.type) && numericOrNull(r.type)) {
      if (!(isDecimalType(l.type) && isDecimalType(r.type))) {
        l = implicitCast(l, "double");
        r = implicitCast(r, "double");
      }
    }
    if (
      op === "div" &&
      (isIntegral(l.type) || l.type === "null") &&
      (isIntegral(r.type) || r.type === "null")
    ) {
      l = implicitCast(l, "long");
      r = implicitCast(r, "long");
    }
    if (l.type === "null" && r.type === "null") {
      l = implicitCast(l, "double");
      r = implicitCast(r, "double");
    }
    const accepts =
      op === "/"
        ? (t: SqlType) => t === "double" || isDecimalType(t)
        : op === "div"
          ? (t: SqlType) => t === "long" || isDecimalType(t)
          : isNumeric;
    [l, r] = this.widen(l, r, accepts);
    const inputType =
      op === "/"
        ? '("DOUBLE" or "DECIMAL")'
        : op === "div"
          ? '("BIGINT" or "DECIMAL")'
          : op === "+" || op === "-"
            ? '("NUMERIC" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH" or "INTERVAL")'
            : '"NUMERIC"';
    this.checkBinary(op, l, r, accepts, inputType);
    let type: SqlType;
    if (op === "div") type = "long";
    else if (isDecimalType(l.type) && isDecimalType(r.type)) {
      type = decimalResultType(op, l.type, r.type);
    } else type = l.type;
    return {
      kind: "arith",
      op,
      type,
      nullable: l.nullable || r.nullable || op === "/" || op === "%" || op === "div",
      left: l,
      right: r,
    };
  }

  bitwise(op: "&" | "|" | "^", l0: Typed, r0: Typed): Typed {
    let [l, r] = this.promoteStrings(l0, r0);
    if (l.type === "null" && r.type === "null") {
      l = implicitCast(l, "long");
      r = implicitCast(r, "long");
    }
    [l, r] = this.widen(l, r, isIntegral);
    this.checkBinary(op, l, r, isIntegral, '"INTEGRAL"');
    return {
      kind: "bitwise",
      op,
      type: l.type,
      nullable: l.nullable || r.nullable,
      left: l,
      right: r,
    };
  }

  compare(op: CompareOp, l0: Typed, r0: Typed): Typed {
    let [l, r] = this.promoteStrings(l0, r0);
    [l, r] = this.decimalPrecision(l, r, true);
    [l, r] = this.widen(l, r, () => true);
    this.checkBinary(op, l, r, () => true, '"ANY"');
    if (!isOrderable(l.type) || (typeof l.type === "object" && l.type.type === "map")) {
      throw siltError("DATATYPE_MISMATCH.INVALID_ORDERING_TYPE:OPERATOR", {
        sqlExpr: `(${prettySql(l)} ${op} ${prettySql(r)})`,
        op: quoteIdent(op),
        type: quotedType(l.type),
      });
    }
    return {
      kind: "compare",
      op,
      type: "boolean",
      nullable: op === "<=>" ? false : l.nullable || r.nullable,
      left: l,
      right: r,
    };
  }

  logical(op: "and" | "or", l0: Typed, r0: Typed): Typed {
    let [l, r] = this.promoteStrings(l0, r0);
    if (l.type === "null") l = implicitCast(l, "boolean");
    if (r.type === "null") r = implicitCast(r, "boolean");
    [l, r] = this.widen(l, r, (t) => t === "boolean");
    this.checkBinary(op.toUpperCase(), l, r, (t) => t === "boolean", '"BOOLEAN"');
    return op === "and"
      ? andOf(l, r)
      : { kind: "or", type: "boolean", nullable: l.nullable || r.nullable, left: l, right: r };
  }

  private expectBoolean(t: Typed, index: number, sql: string): Typed {
    if (t.type === "boolean") return t;
    if (t.type === "null" || t.type === "string") return implicitCast(t, "boolean");
    throw this.unexpectedType(index, '"BOOLEAN"', t, sql);
  }

  unexpectedType(index: number, required: string, arg: Typed, sql: string): SiltError {
    return siltError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE", {
      sqlExpr: sql,
      index: ordinalNumber(index),
      required,
      arg: prettySql(arg),
      type: quotedType(arg.type),
    });
  }

  inList(operand: Typed, list: Typed[]): Typed {
    let op = operand;
    let items = list;
    if (items.some((x) => !sameType(x.type, op.type))) {
      const t = widerCommonType([op.type, ...items.map((x) => x.type)]);
      if (t !== undefined) {
        op = implicitCast(op, t);
        items = items.map((x) => implicitCast(x, t));
      }
    }
    const sql = () => `(${prettySql(op)} IN (${items.map(prettySql).join(", ")}))`;
    if (items.some((x) => !sameType(x.type, op.type))) {
      throw siltError("DATATYPE_MISMATCH.DATA_DIFF_TYPES:IN", {
        sqlExpr: sql(),
        types: [op, ...items].map((x) => sqlTypeName(x.type)).join(", "),
      });
    }
    if (!isOrderable(op.type)) {
      throw siltError("DATATYPE_MISMATCH.INVALID_ORDERING_TYPE:IN", {
        sqlExpr: sql(),
        type: quotedType(op.type),
      });
    }
    return {
      kind: "in",
      type: "boolean",
      nullable: op.nullable || items.some((x) => x.nullable),
      operand: op,
      list: items,
    };
  }

  like(
    op: "like" | "ilike" | "rlike",
    operand0: Typed,
    pattern0: Typed,
    escapeChar?: string,
  ): Typed {
    const name = op === "rlike" ? "RLIKE" : op.toUpperCase();
    const sql = () => `${prettySql(operand0)} ${name} ${prettySql(pattern0)}`;
    const toStr = (t: Typed, i: number) => {
      if (t.type === "string") return t;
      if (t.type === "null" || (isAtomic(t.type) && t.type !== "binary"))
        return implicitCast(t, "string");
      throw this.unexpectedType(i, '"STRING"', t, sql());
    };
    let operand = toStr(operand0, 0);
    let pattern = toStr(pattern0, 1);
    if (op === "ilike") {
      operand = this.callNamed("lower", [operand]);
      pattern = this.callNamed("lower", [pattern]);
    }
    const esc = escapeChar ?? "\\";
    if (op !== "rlike" && [...esc].length !== 1) {
      throw siltError("INVALID_ESCAPE_CHAR", { escape: sqlLiteral(esc, "string") });
    }
    return {
      kind: "like",
      op: op === "rlike" ? "rlike" : "like",
      type: "boolean",
      nullable: operand.nullable || pattern.nullable,
      operand,
      pattern,
      escape: esc,
      ilike: op === "ilike" ? true : undefined,
    };
  }

  caseWhen(e: Extract<Expr, { kind: "case" }>): Typed {
    const operand = e.operand ? this.expr(e.operand) : undefined;
    const whens = e.branches.map((b) =>
      operand ? this.compare("=", operand, this.expr(b.when)) : this.expr(b.when),
    );
    const thens = e.branches.map((b) => this.expr(b.then));
    const otherwise = e.otherwise ? this.expr(e.otherwise) : undefined;
    return this.buildCase(whens, thens, otherwise, "casewhen");
  }

  /** A searched CASE with coerced branch values; `fn` names it in DATA_DIFF_TYPES. */
  buildCase(
    whens: Typed[],
    thens: Typed[],
    otherwise: Typed | undefined,
    fn: string,
    alias?: { name: string; args: Typed[] },
  ): Typed {
    const values = otherwise ? [...thens, otherwise] : thens;
    const sql = () =>
      alias
        ? `${alias.name}(${alias.args.map(prettySql).join(", ")})`
        : `CASE ${whens.map((w, i) => `WHEN ${prettySql(w)} THEN ${prettySql(thens[i])}`).join(" ")}${otherwise ? ` ELSE ${prettySql(otherwise)}` : ""} END`;
    let type: SqlType = values[0]?.type ?? "null";
    if (values.some((v) => !sameType(v.type, type))) {
      const w = widerCommonType(values.map((v) => v.type));
      if (w === undefined) {
        throw siltError("DATATYPE_MISMATCH.DATA_DIFF_TYPES:FUNCTION", {
          sqlExpr: sql(),
          fn: quoteIdent(fn),
          values: values.map((v) => sqlTypeName(v.type)).join(", "),
        });
      }
      type = w;
    }
    const conds = whens.map((w, i) => {
      if (w.type === "boolean") return w;
      if (w.type === "null") return implicitCast(w, "boolean");
      throw this.unexpectedType(i * 2, '"BOOLEAN"', w, sql());
    });
    const cast = (v: Typed) => implicitCast(v, type);
    // biome-ignore lint/suspicious/noThenProperty: CASE branches are {when, then} in the AST.
    const branches = conds.map((w, i) => ({ when: w, then: cast(thens[i]) }));
    const other = otherwise ? cast(otherwise) : undefined;
    return {
      kind: "case",
      type,
      nullable: !other || other.nullable || branches.some((b) => b.then.nullable),
      branches,
      otherwise: other,
      alias,
    };
  }

  cast(operand: Typed, target: DataType, tryCast: boolean): Typed {
    if (!canAnsiCast(operand.type, target)) {
      const sql = `${tryCast ? "TRY_CAST" : "CAST"}(${prettySql(operand)} AS ${sqlTypeName(target)})`;
      throw castMismatch(operand.type, target, tryCast, sql);
    }
    if (sameType(operand.type, target) && !tryCast) {
      return {
        kind: "cast",
        type: target,
        nullable: operand.nullable,
        operand,
        tryCast,
        implicit: false,
      };
    }
    const t = makeCast(operand, target, tryCast, false);
    return t;
  }

  // -- functions ------------------------------------------------------------------------------

  call(e: Extract<Expr, { kind: "call" }>, preAnalysed?: Typed[]): Typed {
    const name = e.name.toLowerCase();
    const def = lookupFunction(name);
    if (!def) throw unresolvedRoutine(e.name, this.scope);
    const isStar = e.args.length === 1 && e.args[0].kind === "star";
    if (isStar && name !== "count") {
      throw siltError("INVALID_USAGE_OF_STAR_OR_REGEX:IN_CLAUSE", { name: quoteIdent(name) });
    }
    const args = preAnalysed ?? (isStar ? [] : e.args.map((a) => this.expr(a)));
    const n = isStar ? 1 : args.length;
    const { min, max } = def.arity;
    if (n < min || n > max) {
      const expected =
        min === max
          ? String(min)
          : max === Number.POSITIVE_INFINITY
            ? `> ${min - 1}`
            : `[${Array.from({ length: max - min + 1 }, (_, i) => min + i).join(", ")}]`;
      throw wrongNumArgs(name, expected, n);
    }
    if (e.distinct && def.kind !== "aggregate") {
      throw siltError("INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX", {
        name: quoteIdent(name),
      });
    }
    return def.resolve(args, {
      name,
      star: isStar,
      distinct: e.distinct,
      analyzer: this,
      sql: () => callSql(name, args, e.distinct, isStar),
    });
  }

  callNamed(name: string, args: Typed[]): Typed {
    return this.call(
      { kind: "call", name, args: [], distinct: false, pos: { line: 0, column: 0 } },
      args,
    );
  }

  /** Implicit cast of argument `index` to what `spec` accepts, or UNEXPECTED_INPUT_TYPE. */
  expect(arg: Typed, index: number, spec: ArgSpec, sql: () => string): Typed {
    const t = implicitArgType(arg.type, spec);
    if (t === undefined) throw this.unexpectedType(index, specName(spec), arg, sql());
    return implicitCast(arg, t);
  }

  /** The wider common type of the arguments, or DATA_DIFF_TYPES naming the function. */
  common(args: Typed[], fn: string, sql: () => string): SqlType {
    const t = widerCommonType(args.map((a) => a.type));
    if (t === undefined) {
      throw siltError("DATATYPE_MISMATCH.DATA_DIFF_TYPES:FUNCTION", {
        sqlExpr: sql(),
        fn: quoteIdent(fn),
        values: args.map((a) => sqlTypeName(a.type)).join(", "),
      });
    }
    return t;
  }
}

/** The context a function's `resolve` receives. */
const isDatetimeLike = (t: SqlType) => t === "timestamp" || t === "timestamp_ntz";

function negateScalar(v: Scalar, t: SqlType): Scalar {
  if (isIntegral(t)) return integralNegate(t, v as number | bigint);
  if (isDecimalType(t)) return -(v as bigint);
  return -(v as number);
}

export const notOf = (t: Typed): Typed => ({
  kind: "not",
  type: "boolean",
  nullable: t.nullable,
  operand: t,
});

export const andOf = (l: Typed, r: Typed): Typed => ({
  kind: "and",
  type: "boolean",
  nullable: l.nullable || r.nullable,
  left: l,
  right: r,
});

// ---------------------------------------------------------------------------------------------
// Implicit casts of function arguments (AnsiTypeCoercion.implicitCast)

function specAccepts(t: SqlType, spec: ArgSpec): boolean {
  if (Array.isArray(spec)) return spec.some((s) => specAccepts(t, s));
  switch (spec) {
    case "any":
      return true;
    case "numeric":
      return isNumeric(t);
    case "integral":
      return isIntegral(t);
    case "decimal":
      return isDecimalType(t);
    case "anyTimestamp":
      return t === "timestamp" || t === "timestamp_ntz";
    default:
      return sameType(t, spec as SqlType);
  }
}

function defaultConcrete(spec: ArgSpec): SqlType {
  switch (spec) {
    case "numeric":
      return "double";
    case "integral":
      return "long";
    case "decimal":
      return { type: "decimal", precision: 38, scale: 18 } as DecimalType;
    case "anyTimestamp":
      return "timestamp";
    default:
      return spec as SqlType;
  }
}

export function implicitArgType(t: SqlType, spec: ArgSpec): SqlType | undefined {
  if (specAccepts(t, spec)) return t;
  if (Array.isArray(spec)) {
    for (const s of spec) {
      const r = implicitArgType(t, s);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (spec === "any") return t;
  if (isNumeric(t) && !isDecimalType(t) && spec === "decimal") return decimalForType(t);
  if (t === "string" && spec === "string") return undefined;
  if (isFloating(t) && spec === "integral") return undefined;
  if (isDecimalType(t) && spec === "integral") return undefined;
  if (t === "string" && (isAtomic(spec as SqlType) || typeof spec === "string")) {
    return defaultConcrete(spec);
  }
  const concrete = defaultConcrete(spec);
  return canStoreAssign(t, concrete) ? concrete : undefined;
}

export function specName(spec: ArgSpec): string {
  if (Array.isArray(spec)) return `(${spec.map(specName).join(" or ")})`;
  switch (spec) {
    case "any":
      return '"ANY"';
    case "numeric":
      return '"NUMERIC"';
    case "integral":
      return '"INTEGRAL"';
    case "decimal":
      return '"DECIMAL"';
    case "anyTimestamp":
      return '("TIMESTAMP" or "TIMESTAMP_NTZ")';
    default:
      return quotedType(spec as SqlType);
  }
}

// ---------------------------------------------------------------------------------------------
// Printing

function callSql(name: string, args: Typed[], distinct: boolean, star: boolean): string {
  if (star) return `${name}(1)`;
  return `${name}(${distinct ? "DISTINCT " : ""}${args.map(prettySql).join(", ")})`;
}

/** A literal as Spark's toPrettySQL shows it: numbers and strings bare, others as SQL. */
function prettyLiteral(v: Scalar | null, t: SqlType): string {
  if (v === null) return "NULL";
  if (t === "string") return v as string;
  if (isIntegral(t)) return String(v);
  if (t === "double") return javaDoubleString(v as number);
  if (t === "float") return javaFloatString(v as number);
  if (isDecimalType(t)) return javaDecimalString(v as bigint, t.scale);
  return sqlLiteral(v, t);
}

/**
 * The expression as Spark's error messages show it (toPrettySQL): columns by name, literals
 * bare, implicit casts invisible.
 */
export function prettySql(t: Typed): string {
  switch (t.kind) {
    case "literal":
      if (t.folded) {
        return t.folded.kind === "literal"
          ? prettyLiteral(t.folded.value, t.folded.type)
          : prettySql(t.folded);
      }
      return prettyLiteral(t.value, t.type);
    case "column":
      return t.name;
    case "field":
      return `${prettySql(t.operand)}.${t.name}`;
    case "cast":
      if (t.implicit) return prettySql(t.operand);
      return `${t.tryCast ? "TRY_CAST" : "CAST"}(${prettySql(t.operand)} AS ${sqlTypeName(t.type)})`;
    case "arith":
    case "bitwise":
      return `(${prettySql(t.left)} ${t.op} ${prettySql(t.right)})`;
    case "compare":
      return `(${prettySql(t.left)} ${t.op} ${prettySql(t.right)})`;
    case "and":
      return `(${prettySql(t.left)} AND ${prettySql(t.right)})`;
    case "or":
      return `(${prettySql(t.left)} OR ${prettySql(t.right)})`;
    case "negate":
      return `(- ${prettySql(t.operand)})`;
    case "bitnot":
      return `~${prettySql(t.operand)}`;
    case "not":
      return `(NOT ${prettySql(t.operand)})`;
    case "isNull":
      return `(${prettySql(t.operand)} IS ${t.negated ? "NOT " : ""}NULL)`;
    case "in":
      return `(${prettySql(t.operand)} IN (${t.list.map(prettySql).join(", ")}))`;
    case "like": {
      const name = t.op === "rlike" ? "RLIKE" : t.ilike ? "ILIKE" : "LIKE";
      const operand = t.ilike ? unwrapLower(t.operand) : t.operand;
      const pattern = t.ilike ? unwrapLower(t.pattern) : t.pattern;
      const esc = t.op === "like" && t.escape !== "\\" ? ` ESCAPE '${t.escape}'` : "";
      return `${prettySql(operand)} ${name} ${prettySql(pattern)}${esc}`;
    }
    case "case":
      if (t.alias) return `${t.alias.name}(${t.alias.args.map(prettySql).join(", ")})`;
      return `CASE ${t.branches.map((b) => `WHEN ${prettySql(b.when)} THEN ${prettySql(b.then)}`).join(" ")}${t.otherwise ? ` ELSE ${prettySql(t.otherwise)}` : ""} END`;
    case "coalesce":
      return `${t.name}(${t.args.map(prettySql).join(", ")})`;
    case "call":
      return callSql(t.name, t.args, false, false);
    case "aggregate":
      return callSql(t.name, t.args, t.distinct, t.star);
  }
}

const unwrapLower = (t: Typed): Typed => (t.kind === "call" && t.name === "lower" ? t.args[0] : t);

/**
 * Spark's `.sql` text of a parsed expression, e.g. `(day = DATE '2026-10-03')`: operators
 * parenthesized, literals typed (1L, 9.50BD, 'x'), names quoted only where needed. Used in
 * error messages and Delta history (operationParameters.predicate).
 */
export function expressionSql(e: Expr): string {
  switch (e.kind) {
    case "literal":
      return sqlLiteral(toScalar(e.value, e.type), e.type);
    case "column":
      return e.name.map(quoteIfNeeded).join(".");
    case "star":
      return e.qualifier ? `${e.qualifier.map(quoteIfNeeded).join(".")}.*` : "*";
    case "unary":
      if (e.op === "not") return `(NOT ${expressionSql(e.operand)})`;
      if (e.op === "~") return `~${expressionSql(e.operand)}`;
      return `(${e.op} ${expressionSql(e.operand)})`;
    case "binary": {
      const l = expressionSql(e.left);
      const r = expressionSql(e.right);
      switch (e.op) {
        case "||":
          return `concat(${l}, ${r})`;
        case "!=":
          return `(NOT (${l} = ${r}))`;
        case "and":
        case "or":
          return `(${l} ${e.op.toUpperCase()} ${r})`;
        default:
          return `(${l} ${e.op} ${r})`;
      }
    }
    case "isNull":
      return `(${expressionSql(e.operand)} IS ${e.negated ? "NOT " : ""}NULL)`;
    case "isBool": {
      const v = e.value === null ? "UNKNOWN" : e.value ? "TRUE" : "FALSE";
      return `(${expressionSql(e.operand)} IS ${e.negated ? "NOT " : ""}${v})`;
    }
    case "isDistinctFrom": {
      const s = `(${expressionSql(e.left)} <=> ${expressionSql(e.right)})`;
      return e.negated ? s : `(NOT ${s})`;
    }
    case "in": {
      const s = `(${expressionSql(e.operand)} IN (${e.list.map(expressionSql).join(", ")}))`;
      return e.negated ? `(NOT ${s})` : s;
    }
    case "inSubquery": {
      const s = `(${expressionSql(e.operand)} IN (subquery))`;
      return e.negated ? `(NOT ${s})` : s;
    }
    case "exists":
      return e.negated ? "(NOT exists(subquery))" : "exists(subquery)";
    case "scalarSubquery":
      return "scalarsubquery()";
    case "between": {
      const s = `(${expressionSql(e.operand)} BETWEEN ${expressionSql(e.low)} AND ${expressionSql(e.high)})`;
      return e.negated ? `(NOT ${s})` : s;
    }
    case "like": {
      const esc = e.escape !== undefined && e.escape !== "\\" ? ` ESCAPE '${e.escape}'` : "";
      const s = `${expressionSql(e.operand)} ${e.op.toUpperCase()} ${expressionSql(e.pattern)}${esc}`;
      return e.negated ? `(NOT ${s})` : s;
    }
    case "case": {
      const head = e.operand ? `CASE ${expressionSql(e.operand)}` : "CASE";
      const branches = e.branches
        .map((b) => ` WHEN ${expressionSql(b.when)} THEN ${expressionSql(b.then)}`)
        .join("");
      const other = e.otherwise ? ` ELSE ${expressionSql(e.otherwise)}` : "";
      return `${head}${branches}${other} END`;
    }
    case "cast":
      return `${e.tryCast ? "TRY_CAST" : "CAST"}(${expressionSql(e.operand)} AS ${sqlTypeName(e.target)})`;
    case "call": {
      const args = e.args.map((a) => (a.kind === "star" ? "*" : expressionSql(a))).join(", ");
      return `${e.name}(${e.distinct ? "DISTINCT " : ""}${args})`;
    }
  }
}
