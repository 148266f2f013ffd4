/**
 * The vectorized evaluator: each analysed node evaluates to a column (vectors.ts) over a batch
 * or over a selection of its rows. Hot operations (comparisons, arithmetic on numbers, boolean
 * logic, IS NULL, IN over literals) have typed loops, here and in fast-loops.ts; everything else
 * goes value-at-a-time through the scalar kernels.
 *
 * Evaluation order follows Spark where it is observable, i.e. where it decides whether an error
 * is raised: AND/OR, CASE, COALESCE and IN evaluate their later operands only on the rows that
 * still need them (when those operands can raise at all; otherwise they run on every row).
 */

import type * as arrow from "apache-arrow";
import { siltError } from "../errors.ts";
import { MICROS_PER_DAY_N } from "../values/calendar.ts";
import { divideByZero } from "./ansi-errors.ts";
import { arrowValidity, fromArrow } from "./arrow-vectors.ts";
import type { SqlType } from "./ast.ts";
import { canThrow } from "./can-throw.ts";
import {
  arithScalar,
  asF64,
  asI32,
  asWords,
  cmpResult,
  compareFast,
  decimalFast,
  longArith,
  matcher,
} from "./fast-loops.ts";
import {
  javaRegex,
  likeBytes,
  likeRegex,
  type StringMatcher,
  simpleLike,
} from "./like-patterns.ts";
import { integralNegate, integralOverflow } from "./scalar-arithmetic.ts";
import { castScalar } from "./scalar-cast.ts";
import { toScalar } from "./scalar-json.ts";
import { compareScalars } from "./scalar-order.ts";
import type { EvalEnv, Typed, TypedColumn } from "./typed.ts";
import {
  decimalIsWiderThan,
  INT_RANK,
  type IntegralName,
  isDecimalType,
  isFloating,
  isIntegral,
  isTimestamp,
  type Scalar,
  sameType,
} from "./types.ts";
import {
  andValidity,
  at,
  builder,
  gatherVec,
  generate,
  isValidAt,
  materialize,
  SAFE,
  strings,
  TWO32,
  type VBool,
  type VConst,
  type Vec,
  validityOf,
} from "./vectors.ts";

/** Rows a sub-expression is evaluated on: all rows of the batch, or absolute row indices. */
interface Frame {
  n: number;
  sel?: Uint32Array;
}

function subFrame(f: Frame, rel: Uint32Array): Frame {
  if (!f.sel) return { n: rel.length, sel: rel };
  const abs = new Uint32Array(rel.length);
  for (let k = 0; k < rel.length; k++) abs[k] = f.sel[rel[k]];
  return { n: rel.length, sel: abs };
}

export class Evaluator {
  private readonly cols = new Map<number, Vec>();
  private readonly regexCache = new Map<string, StringMatcher>();

  constructor(
    private readonly rows: number,
    private readonly columnData: (col: TypedColumn) => arrow.Data,
    private readonly env: EvalEnv,
  ) {}

  run(t: Typed): Vec {
    return this.eval(t, { n: this.rows });
  }

  eval(t: Typed, f: Frame): Vec {
    // Nothing is evaluated for no rows, so constant sub-expressions raise nothing either.
    if (f.n === 0) return { tag: "const", n: 0, value: null };
    switch (t.kind) {
      case "literal":
        return { tag: "const", n: f.n, value: t.value };
      case "column": {
        let v = this.cols.get(t.ordinal);
        if (!v) {
          v = fromArrow(this.columnData(t), t.type, t.name);
          this.cols.set(t.ordinal, v);
        }
        return f.sel ? gatherVec(v, f.sel) : v;
      }
      case "field":
        return this.field(t, f);
      case "cast":
        return this.cast(this.eval(t.operand, f), t.operand.type, t.type, t.tryCast);
      case "arith": {
        const l = this.eval(t.left, f);
        return this.arith(t, l, this.evalAfter([l], t.right, f));
      }
      case "bitwise": {
        const l = this.eval(t.left, f);
        return this.bitwise(t, l, this.evalAfter([l], t.right, f));
      }
      case "negate": {
        const v = this.eval(t.operand, f);
        const ty = t.type;
        return this.map1(v, ty, (x) =>
          isIntegral(ty)
            ? integralNegate(ty, x as number | bigint)
            : isDecimalType(ty)
              ? -(x as bigint)
              : -(x as number),
        );
      }
      case "bitnot": {
        const v = this.eval(t.operand, f);
        return this.map1(v, t.type, (x) =>
          typeof x === "bigint" ? BigInt.asIntN(64, ~x) : ~(x as number),
        );
      }
      case "compare": {
        const l = this.eval(t.left, f);
        const r = t.op === "<=>" ? this.eval(t.right, f) : this.evalAfter([l], t.right, f);
        return this.compare(t.op, t.left.type, l, r, f.n);
      }
      case "and":
      case "or":
        return this.logical(t, f);
      case "not": {
        const v = this.eval(t.operand, f);
        if (v.tag === "const")
          return { tag: "const", n: f.n, value: v.value === null ? null : !v.value };
        const b = v as VBool;
        const data = new Uint8Array(f.n);
        for (let i = 0; i < f.n; i++) data[i] = b.data[i] ^ 1;
        return { tag: "bool", n: f.n, valid: b.valid, data };
      }
      case "isNull": {
        const v = this.eval(t.operand, f);
        const valid = validityOf(v);
        const data = new Uint8Array(f.n);
        if (t.negated) {
          if (valid) data.set(valid);
          else data.fill(1);
        } else if (valid) {
          for (let i = 0; i < f.n; i++) data[i] = valid[i] ^ 1;
        }
        return { tag: "bool", n: f.n, data };
      }
      case "in":
        return this.inList(t, f);
      case "like":
        return this.like(t, f);
      case "case":
        return this.caseWhen(t, f);
      case "coalesce":
        return this.coalesce(t, f);
      case "call":
        return this.call(t, f);
      case "aggregate":
        throw siltError("INTERNAL_ERROR:AGGREGATE_AS_SCALAR", { name: t.name });
    }
  }

  /**
   * Evaluates `next` where every `prev` value is non-NULL (NULL elsewhere): a null-intolerant
   * operator never looks at later operands of a row whose earlier operand is NULL, so their
   * errors must not surface there. Operands that cannot raise simply run on every row.
   */
  private evalAfter(prev: Vec[], next: Typed, f: Frame): Vec {
    if (!canThrow(next)) return this.eval(next, f);
    const rows: number[] = [];
    for (let i = 0; i < f.n; i++) if (prev.every((v) => isValidAt(v, i))) rows.push(i);
    if (rows.length === f.n) return this.eval(next, f);
    const rel = Uint32Array.from(rows);
    const sub = this.eval(next, subFrame(f, rel));
    const b = builder(next.type, f.n);
    for (let k = 0; k < rel.length; k++) b.set(rel[k], at(sub, k));
    return b.finish();
  }

  /** Applies a null-intolerant scalar function row by row. */
  private map1(v: Vec, t: SqlType, f: (x: Scalar) => Scalar | null): Vec {
    if (v.tag === "const")
      return { tag: "const", n: v.n, value: v.value === null ? null : f(v.value) };
    return generate(t, v.n, (i) => {
      const x = at(v, i);
      return x === null ? null : f(x);
    });
  }

  private field(t: Extract<Typed, { kind: "field" }>, f: Frame): Vec {
    const chain: Extract<Typed, { kind: "field" }>[] = [];
    let base: Typed = t;
    while (base.kind === "field") {
      chain.unshift(base);
      base = base.operand;
    }
    if (base.kind === "column") {
      let data = this.columnData(base);
      let valid = arrowValidity(data);
      for (const step of chain) {
        data = data.children[step.index];
        valid = andValidity(valid, arrowValidity(data), data.length);
      }
      const v = fromArrow(data, t.type, t.name);
      const withParent = valid ? restrictValidity(v, valid) : v;
      return f.sel ? gatherVec(withParent, f.sel) : withParent;
    }
    const parent = this.eval(t.operand, f);
    return this.map1(parent, t.type, (x) =>
      toScalar((x as Record<string, unknown>)[t.name], t.type),
    );
  }

  // -- casts ----------------------------------------------------------------------------------

  private cast(v: Vec, from: SqlType, to: SqlType, tryCast: boolean): Vec {
    if (sameType(from, to)) return v;
    if (v.tag === "const") {
      return { tag: "const", n: v.n, value: castScalar(v.value, from, to, tryCast) };
    }
    const n = v.n;
    if (
      v.tag === "i32" &&
      isIntegral(from) &&
      (to === "long" || to === "double" || to === "float")
    ) {
      if (to === "long") {
        const data = new BigInt64Array(n);
        const words = new Int32Array(data.buffer, 0, n * 2);
        for (let i = 0; i < n; i++) {
          const x = v.data[i];
          words[2 * i] = x;
          words[2 * i + 1] = x < 0 ? -1 : 0;
        }
        return { tag: "i64", n, valid: v.valid, data, words };
      }
      return { tag: "f64", n, valid: v.valid, data: Float64Array.from(v.data) };
    }
    if (v.tag === "i32" && isIntegral(from) && isIntegral(to) && INT_RANK[to] >= INT_RANK[from]) {
      return v;
    }
    if (v.tag === "i64" && from === "long" && to === "double") {
      const data = new Float64Array(n);
      const w = v.words;
      for (let i = 0; i < n; i++) data[i] = w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);
      return { tag: "f64", n, valid: v.valid, data };
    }
    if (v.tag === "f64" && from === "float" && to === "double") return v;
    if (v.tag === "i32" && isIntegral(from) && isDecimalType(to) && decimalIsWiderThan(to, from)) {
      const m = 10 ** to.scale;
      if (to.scale <= 15 && 2147483648 * m <= SAFE) {
        const small = new Float64Array(n);
        for (let i = 0; i < n; i++) small[i] = v.data[i] * m;
        return { tag: "dec", n, valid: v.valid, small };
      }
    }
    if (v.tag === "dec" && v.small && isDecimalType(from) && to === "double" && from.scale <= 22) {
      const d = 10 ** from.scale;
      const data = new Float64Array(n);
      for (let i = 0; i < n; i++) data[i] = v.small[i] / d;
      return { tag: "f64", n, valid: v.valid, data };
    }
    if (v.tag === "i32" && from === "date" && isTimestamp(to)) {
      const data = new BigInt64Array(n);
      for (let i = 0; i < n; i++) data[i] = BigInt(v.data[i]) * MICROS_PER_DAY_N;
      return { tag: "i64", n, valid: v.valid, data, words: new Int32Array(data.buffer, 0, n * 2) };
    }
    return generate(to, n, (i) => {
      const x = at(v, i);
      return x === null ? null : castScalar(x, from, to, tryCast);
    });
  }

  // -- arithmetic -----------------------------------------------------------------------------

  private arith(t: Extract<Typed, { kind: "arith" }>, l: Vec, r: Vec): Vec {
    const lt = t.left.type;
    const n = Math.max(l.n, r.n);
    if (l.tag === "const" && r.tag === "const") {
      const value = l.value === null || r.value === null ? null : arithScalar(t, l.value, r.value);
      return { tag: "const", n, value };
    }
    const valid = andValidity(validityOf(l), validityOf(r), n);
    const op = t.op;
    if (isFloating(lt) && op !== "%") {
      const a = asF64(l, lt);
      const b = asF64(r, lt);
      if (a && b) {
        const data = new Float64Array(n);
        const fl = t.type === "float";
        for (let i = 0; i < n; i++) {
          const x = a[i];
          const y = b[i];
          let z: number;
          if (op === "+") z = x + y;
          else if (op === "-") z = x - y;
          else if (op === "*") z = x * y;
          else {
            if (y === 0 && (!valid || valid[i] === 1)) throw divideByZero();
            z = x / y;
          }
          data[i] = fl ? Math.fround(z) : z;
        }
        return { tag: "f64", n, valid, data };
      }
    }
    if (
      (lt === "integer" || lt === "short" || lt === "byte") &&
      (op === "+" || op === "-" || op === "*")
    ) {
      const a = asI32(l);
      const b = asI32(r);
      if (a && b) {
        const data = new Int32Array(n);
        const lo = lt === "integer" ? -2147483648 : lt === "short" ? -32768 : -128;
        const hi = -lo - 1;
        for (let i = 0; i < n; i++) {
          const x = a[i];
          const y = b[i];
          const z = op === "+" ? x + y : op === "-" ? x - y : x * y;
          if ((z < lo || z > hi) && (!valid || valid[i] === 1)) {
            throw integralOverflow(op, lt as IntegralName, x, y);
          }
          data[i] = z;
        }
        return { tag: "i32", n, valid, data };
      }
    }
    if (lt === "long" && (op === "+" || op === "-" || op === "*")) {
      const a = asWords(l);
      const b = asWords(r);
      if (a && b) return longArith(op, a, b, n, valid);
    }
    if (
      isDecimalType(lt) &&
      isDecimalType(t.right.type) &&
      isDecimalType(t.type) &&
      (op === "+" || op === "-" || op === "*")
    ) {
      const fast = decimalFast(t, l, r, n, valid);
      if (fast) return fast;
    }
    return generate(t.type, n, (i) => {
      if (valid && valid[i] === 0) return null;
      return arithScalar(t, at(l, i) as Scalar, at(r, i) as Scalar);
    });
  }

  private bitwise(t: Extract<Typed, { kind: "bitwise" }>, l: Vec, r: Vec): Vec {
    const n = Math.max(l.n, r.n);
    const f = (x: Scalar, y: Scalar): Scalar => {
      if (typeof x === "bigint") {
        const a = x;
        const b = y as bigint;
        return BigInt.asIntN(64, t.op === "&" ? a & b : t.op === "|" ? a | b : a ^ b);
      }
      const a = x as number;
      const b = y as number;
      return t.op === "&" ? a & b : t.op === "|" ? a | b : a ^ b;
    };
    if (l.tag === "const" && r.tag === "const") {
      return {
        tag: "const",
        n,
        value: l.value === null || r.value === null ? null : f(l.value, r.value),
      };
    }
    return generate(t.type, n, (i) => {
      const x = at(l, i);
      const y = at(r, i);
      return x === null || y === null ? null : f(x, y);
    });
  }

  // -- comparisons ----------------------------------------------------------------------------

  private compare(op: string, t: SqlType, l: Vec, r: Vec, n: number): Vec {
    if (op === "<=>") return this.nullSafeEqual(t, l, r, n);
    if (l.tag === "const" && r.tag === "const") {
      const value =
        l.value === null || r.value === null
          ? null
          : cmpResult(op, compareScalars(t, l.value, r.value));
      return { tag: "const", n, value };
    }
    const valid = andValidity(validityOf(l), validityOf(r), n);
    const fast = compareFast(op, t, l, r, n);
    if (fast) return { tag: "bool", n, valid, data: fast };
    const data = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      if (valid && valid[i] === 0) continue;
      data[i] = cmpResult(op, compareScalars(t, at(l, i) as Scalar, at(r, i) as Scalar)) ? 1 : 0;
    }
    return { tag: "bool", n, valid, data };
  }

  private nullSafeEqual(t: SqlType, l: Vec, r: Vec, n: number): Vec {
    const eq = this.compare("=", t, l, r, n);
    if (eq.tag === "const") {
      const lv = (l as VConst).value;
      const rv = (r as VConst).value;
      return {
        tag: "const",
        n,
        value: lv === null || rv === null ? lv === null && rv === null : eq.value,
      };
    }
    const lvld = validityOf(l);
    const rvld = validityOf(r);
    const e = eq as VBool;
    const data = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const a = lvld ? lvld[i] : 1;
      const b = rvld ? rvld[i] : 1;
      data[i] = a & b ? e.data[i] : a | b ? 0 : 1;
    }
    return { tag: "bool", n, data };
  }

  // -- boolean logic --------------------------------------------------------------------------

  private logical(t: Extract<Typed, { kind: "and" | "or" }>, f: Frame): Vec {
    const isAnd = t.kind === "and";
    const l = this.eval(t.left, f);
    const n = f.n;
    // Rows whose result the left side already decides: FALSE for AND, TRUE for OR.
    const decided = isAnd ? 0 : 1;
    let r: Vec;
    if (canThrow(t.right)) {
      const need: number[] = [];
      for (let i = 0; i < n; i++) {
        const x = at(l, i);
        if (x === null || (x ? 1 : 0) !== decided) need.push(i);
      }
      if (need.length === n) r = this.eval(t.right, f);
      else {
        const rel = Uint32Array.from(need);
        const sub = this.eval(t.right, subFrame(f, rel));
        const b = builder("boolean", n);
        for (let k = 0; k < rel.length; k++) b.set(rel[k], at(sub, k));
        r = b.finish();
      }
    } else {
      r = this.eval(t.right, f);
    }
    if (l.tag === "const" && r.tag === "const") {
      return {
        tag: "const",
        n,
        value: kleene(isAnd, l.value as boolean | null, r.value as boolean | null),
      };
    }
    const a = materialize(l, "boolean") as VBool;
    const b = materialize(r, "boolean") as VBool;
    const data = new Uint8Array(n);
    let valid: Uint8Array | undefined;
    if (!a.valid && !b.valid) {
      if (isAnd) for (let i = 0; i < n; i++) data[i] = a.data[i] & b.data[i];
      else for (let i = 0; i < n; i++) data[i] = a.data[i] | b.data[i];
    } else {
      valid = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const av = a.valid ? a.valid[i] : 1;
        const bv = b.valid ? b.valid[i] : 1;
        const ad = a.data[i];
        const bd = b.data[i];
        if (isAnd) {
          if ((av && !ad) || (bv && !bd)) valid[i] = 1;
          else if (av && bv) {
            valid[i] = 1;
            data[i] = 1;
          }
        } else if ((av && ad) || (bv && bd)) {
          valid[i] = 1;
          data[i] = 1;
        } else if (av && bv) valid[i] = 1;
      }
    }
    return { tag: "bool", n, valid, data };
  }

  // -- IN -------------------------------------------------------------------------------------

  private inList(t: Extract<Typed, { kind: "in" }>, f: Frame): Vec {
    const n = f.n;
    const ty = t.operand.type;
    const operand = this.eval(t.operand, f);
    const literalItems = t.list.every((x) => x.kind === "literal");
    if (literalItems) {
      const values = t.list.map((x) => (x as Extract<Typed, { kind: "literal" }>).value);
      const hasNull = values.some((x) => x === null);
      const present = values.filter((x): x is Scalar => x !== null);
      const match = matcher(ty, present);
      const valid = new Uint8Array(n);
      const data = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const x = at(operand, i);
        if (x === null) continue;
        if (match(x)) {
          data[i] = 1;
          valid[i] = 1;
        } else if (!hasNull) valid[i] = 1;
      }
      return { tag: "bool", n, valid, data };
    }
    // General lists: each element only on the rows still undecided, in order.
    const state = new Uint8Array(n); // 0 undecided, 1 true, 2 saw NULL
    const valid = new Uint8Array(n);
    const data = new Uint8Array(n);
    const pending: number[] = [];
    for (let i = 0; i < n; i++) if (isValidAt(operand, i)) pending.push(i);
    let rows = Uint32Array.from(pending);
    for (const item of t.list) {
      if (rows.length === 0) break;
      const sub = rows.length === n ? f : subFrame(f, rows);
      const iv = this.eval(item, sub);
      const next: number[] = [];
      for (let k = 0; k < rows.length; k++) {
        const i = rows[k];
        const y = at(iv, k);
        if (y === null) {
          state[i] = 2;
          next.push(i);
        } else if (compareScalars(ty, at(operand, i) as Scalar, y) === 0) state[i] = 1;
        else next.push(i);
      }
      rows = Uint32Array.from(next);
    }
    for (let i = 0; i < n; i++) {
      if (!isValidAt(operand, i)) continue;
      if (state[i] === 1) {
        data[i] = 1;
        valid[i] = 1;
      } else if (state[i] === 0) valid[i] = 1;
    }
    return { tag: "bool", n, valid, data };
  }

  // -- LIKE / RLIKE ---------------------------------------------------------------------------

  private like(t: Extract<Typed, { kind: "like" }>, f: Frame): Vec {
    const n = f.n;
    const s = this.eval(t.operand, f);
    const p = this.evalAfter([s], t.pattern, f);
    const compile = (pattern: string): StringMatcher => {
      const key = `${t.op}\u0000${t.escape}\u0000${pattern}`;
      let re = this.regexCache.get(key);
      if (!re) {
        re = t.op === "like" ? likeRegex(pattern, t.escape) : javaRegex(pattern);
        this.regexCache.set(key, re);
      }
      return re;
    };
    if (p.tag === "const") {
      if (p.value === null) return { tag: "const", n, value: null };
      if (n === 0) return { tag: "bool", n, data: new Uint8Array(0) };
      const re = compile(p.value as string);
      const data = new Uint8Array(n);
      const valid = validityOf(s);
      const simple =
        t.op === "like" && s.tag === "utf8" ? simpleLike(p.value as string, t.escape) : undefined;
      if (simple && s.tag === "utf8") {
        likeBytes(simple, s, data);
        return { tag: "bool", n, valid, data };
      }
      const str = s.tag === "utf8" ? strings(s) : undefined;
      for (let i = 0; i < n; i++) {
        if (valid && valid[i] === 0) continue;
        const x = (str ? str[i] : at(s, i)) as string;
        data[i] = re.test(x) ? 1 : 0;
      }
      return { tag: "bool", n, valid, data };
    }
    return generate("boolean", n, (i) => {
      const x = at(s, i);
      const y = at(p, i);
      if (x === null || y === null) return null;
      return compile(y as string).test(x as string);
    });
  }

  // -- CASE / COALESCE ------------------------------------------------------------------------

  private caseWhen(t: Extract<Typed, { kind: "case" }>, f: Frame): Vec {
    const n = f.n;
    if (!canThrow(t)) {
      const conds = t.branches.map((b) => this.eval(b.when, f));
      const vals = t.branches.map((b) => this.eval(b.then, f));
      const other = t.otherwise ? this.eval(t.otherwise, f) : undefined;
      return generate(t.type, n, (i) => {
        for (let k = 0; k < conds.length; k++) if (at(conds[k], i) === true) return at(vals[k], i);
        return other ? at(other, i) : null;
      });
    }
    const out = builder(t.type, n);
    let rows: Uint32Array | undefined; // undefined: every row of the frame
    const count = () => (rows ? rows.length : n);
    const rowAt = (k: number) => (rows ? rows[k] : k);
    for (const b of t.branches) {
      if (count() === 0) break;
      const frame = rows ? subFrame(f, rows) : f;
      const cond = this.eval(b.when, frame);
      const take: number[] = [];
      const rest: number[] = [];
      for (let k = 0; k < count(); k++) (at(cond, k) === true ? take : rest).push(rowAt(k));
      if (take.length > 0) {
        const rel = Uint32Array.from(take);
        const v = this.eval(b.then, subFrame(f, rel));
        for (let k = 0; k < rel.length; k++) out.set(rel[k], at(v, k));
      }
      rows = Uint32Array.from(rest);
    }
    if (t.otherwise && count() > 0) {
      const rel = rows ?? Uint32Array.from({ length: n }, (_, i) => i);
      const v = this.eval(t.otherwise, subFrame(f, rel));
      for (let k = 0; k < rel.length; k++) out.set(rel[k], at(v, k));
    }
    return out.finish();
  }

  private coalesce(t: Extract<Typed, { kind: "coalesce" }>, f: Frame): Vec {
    const n = f.n;
    if (!canThrow(t)) {
      const args = t.args.map((a) => this.eval(a, f));
      return generate(t.type, n, (i) => {
        for (const a of args) {
          const x = at(a, i);
          if (x !== null) return x;
        }
        return null;
      });
    }
    const out = builder(t.type, n);
    let rows = Uint32Array.from({ length: n }, (_, i) => i);
    for (const a of t.args) {
      if (rows.length === 0) break;
      const v = this.eval(a, rows.length === n ? f : subFrame(f, rows));
      const rest: number[] = [];
      for (let k = 0; k < rows.length; k++) {
        const x = at(v, k);
        if (x === null) rest.push(rows[k]);
        else out.set(rows[k], x);
      }
      rows = Uint32Array.from(rest);
    }
    for (const i of rows) out.set(i, null);
    return out.finish();
  }

  // -- functions ------------------------------------------------------------------------------

  private call(t: Extract<Typed, { kind: "call" }>, f: Frame): Vec {
    const kernel = t.fn.eval;
    if (!kernel) throw siltError("INTERNAL_ERROR:NO_EVALUATOR", { name: t.name });
    const nullSafe = t.fn.nullSafe === true;
    const args: Vec[] = [];
    for (const a of t.args) {
      args.push(nullSafe || t.fn.evaluatesAll ? this.eval(a, f) : this.evalAfter(args, a, f));
    }
    const row: (Scalar | null)[] = new Array(args.length);
    const one = (i: number): Scalar | null => {
      for (let k = 0; k < args.length; k++) {
        const x = at(args[k], i);
        if (x === null && !nullSafe) return null;
        row[k] = x;
      }
      return kernel(row, t, this.env);
    };
    if (args.every((a) => a.tag === "const"))
      return { tag: "const", n: f.n, value: f.n > 0 ? one(0) : null };
    return generate(t.type, f.n, one);
  }
}

function restrictValidity(v: Vec, valid: Uint8Array): Vec {
  if (v.tag === "const") return v;
  const own = validityOf(v);
  const both = andValidity(own, valid, v.n);
  if (v.tag === "obj") {
    const data = v.data.map((x, i) => (both && both[i] === 0 ? null : x));
    return { ...v, valid: both, data };
  }
  if (v.tag === "utf8") return { ...v, valid: both, strings: undefined };
  return { ...v, valid: both } as Vec;
}

const kleene = (isAnd: boolean, a: boolean | null, b: boolean | null): boolean | null => {
  if (isAnd) {
    if (a === false || b === false) return false;
    return a === null || b === null ? null : true;
  }
  if (a === true || b === true) return true;
  return a === null || b === null ? null : false;
};
