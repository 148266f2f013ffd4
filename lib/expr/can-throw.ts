/**
 * Whether evaluating an analysed expression can raise an error for some input. The evaluator
 * asks it to decide evaluation order where Spark's is observable: operands that cannot raise run
 * on every row, those that can run only on the rows that still need them.
 */
import { children } from "./analyze.ts";
import type { SqlType } from "./ast.ts";
import { likeRegex } from "./like-patterns.ts";
import type { Typed } from "./typed.ts";
import {
  decimalIsWiderThan,
  INT_RANK,
  isDecimalType,
  isFloating,
  isIntegral,
  isTimestamp,
  sameType,
} from "./types.ts";

/** Whether evaluating the node (not its children) can raise an error for some input. */
function nodeCanThrow(t: Typed): boolean {
  switch (t.kind) {
    case "cast":
      return !t.tryCast && !safeCast(t.operand.type, t.type);
    case "arith":
      if (t.op === "+" || t.op === "-" || t.op === "*") return !isFloating(t.type);
      return true;
    case "negate":
      return isIntegral(t.type);
    case "like":
      return t.pattern.kind !== "literal" || t.op === "rlike" || !likeCompiles(t);
    case "call":
      return THROWING_FUNCTIONS.has(t.name) || (t.name === "abs" && isIntegral(t.type));
    case "aggregate":
      return true;
    default:
      return false;
  }
}

const THROWING_FUNCTIONS = new Set(["round", "to_date", "to_timestamp"]);

function likeCompiles(t: Extract<Typed, { kind: "like" }>): boolean {
  const p = (t.pattern as Extract<Typed, { kind: "literal" }>).value;
  if (p === null) return true;
  try {
    likeRegex(p as string, t.escape);
    return true;
  } catch {
    return false;
  }
}

function safeCast(from: SqlType, to: SqlType): boolean {
  if (sameType(from, to) || from === "null" || to === "string") return true;
  if (isIntegral(from)) {
    if (isFloating(to)) return true;
    if (isIntegral(to)) return INT_RANK[to] >= INT_RANK[from];
    if (isDecimalType(to)) return decimalIsWiderThan(to, from);
    return false;
  }
  if (from === "float" && to === "double") return true;
  if (isDecimalType(from) && isFloating(to)) return true;
  if (isDecimalType(from) && isDecimalType(to)) {
    return to.precision - to.scale >= from.precision - from.scale && to.scale >= from.scale;
  }
  if (from === "date" && isTimestamp(to)) return true;
  if (isTimestamp(from) && (isTimestamp(to) || to === "date")) return true;
  return false;
}

const throwCache = new WeakMap<Typed, boolean>();

/** Whether evaluating the subtree can raise an error. */
export function canThrow(t: Typed): boolean {
  const cached = throwCache.get(t);
  if (cached !== undefined) return cached;
  const r = nodeCanThrow(t) || children(t).some(canThrow);
  throwCache.set(t, r);
  return r;
}
