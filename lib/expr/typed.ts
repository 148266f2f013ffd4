/**
 * The analysed tree (lib/expr/analyze.ts builds it; evaluation and pruning walk it) and the
 * contract of a built-in function (lib/expr/functions.ts defines them), which refer to each other:
 * a call node carries its function, and a function resolves its arguments into nodes.
 */
import type { SiltError } from "../errors.ts";
import type { SqlType } from "./ast.ts";
import type { ArithOp, Scalar } from "./types.ts";

export type CompareOp = "=" | "<" | "<=" | ">" | ">=" | "<=>";

interface Base {
  /** Result type ("null" only for an untyped NULL). */
  type: SqlType;
  /** Whether the node can yield NULL. */
  nullable: boolean;
}

export interface TypedLiteral extends Base {
  kind: "literal";
  /** The value as a scalar of `type` (see types.ts); null for NULL. */
  value: Scalar | null;
  /** The expression a folded cast or negation came from (for printing). */
  folded?: Typed;
}

export interface TypedColumn extends Base {
  kind: "column";
  /** Index of the relation in the scope. */
  relation: number;
  /** Index of the column within its relation. */
  index: number;
  /** Position across all relations of the scope: the batch column evaluation reads. */
  ordinal: number;
  /** The column's name as the relation spells it. */
  name: string;
  qualifier: string[];
}

export type Typed =
  | TypedLiteral
  | TypedColumn
  /** Struct field `operand.name` (field `index` of the struct). */
  | (Base & { kind: "field"; operand: Typed; index: number; name: string })
  | (Base & { kind: "cast"; operand: Typed; tryCast: boolean; implicit: boolean })
  /** + - * / % div; both operands already of the operation's input type. */
  | (Base & { kind: "arith"; op: ArithOp; left: Typed; right: Typed })
  | (Base & { kind: "bitwise"; op: "&" | "|" | "^"; left: Typed; right: Typed })
  | (Base & { kind: "negate"; operand: Typed })
  | (Base & { kind: "bitnot"; operand: Typed })
  /** Both operands of one (coerced) type. */
  | (Base & { kind: "compare"; op: CompareOp; left: Typed; right: Typed })
  | (Base & { kind: "and"; left: Typed; right: Typed })
  | (Base & { kind: "or"; left: Typed; right: Typed })
  | (Base & { kind: "not"; operand: Typed })
  | (Base & { kind: "isNull"; operand: Typed; negated: boolean })
  /** operand IN (list); every element of the operand's type. */
  | (Base & { kind: "in"; operand: Typed; list: Typed[] })
  /** String LIKE (with its escape character) or RLIKE (Java regex, partial match). */
  | (Base & {
      kind: "like";
      op: "like" | "rlike";
      operand: Typed;
      pattern: Typed;
      escape: string;
      /** ILIKE, printed as such (operand and pattern are already lower-cased). */
      ilike?: boolean;
    })
  /** Searched CASE; branches evaluated in order, lazily. `alias` names the sugar it came from. */
  | (Base & {
      kind: "case";
      branches: { when: Typed; then: Typed }[];
      otherwise?: Typed;
      alias?: { name: string; args: Typed[] };
    })
  /** coalesce / nvl / ifnull: each argument evaluated only where the previous ones are NULL. */
  | (Base & { kind: "coalesce"; args: Typed[]; name: string })
  | (Base & { kind: "call"; name: string; args: Typed[]; fn: FunctionDef })
  /** An aggregate call; the query engine evaluates these (evaluate() refuses them). */
  | (Base & { kind: "aggregate"; name: string; args: Typed[]; distinct: boolean; star: boolean });

/** What an argument accepts: a type, an abstract family, or any of several. */
export type ArgSpec =
  | SqlType
  | "numeric"
  | "integral"
  | "decimal"
  | "anyTimestamp"
  | "any"
  | readonly ArgSpec[];

export interface EvalEnv {
  /** The statement's instant, microseconds since the epoch (current_date/current_timestamp). */
  now: bigint;
}

export type CallNode = Extract<Typed, { kind: "call" }>;

export interface FunctionDef {
  name: string;
  kind: "scalar" | "aggregate";
  /** Accepted argument counts (max may be Infinity). */
  arity: { min: number; max: number };
  resolve(args: Typed[], ctx: ResolveContext): Typed;
  /**
   * Row kernel for `call` nodes: argument scalars of the node's argument types. Unless
   * `nullSafe`, a NULL argument makes the result NULL without calling it.
   */
  eval?: (args: (Scalar | null)[], node: CallNode, env: EvalEnv) => Scalar | null;
  nullSafe?: boolean;
  /** Every argument is evaluated even after a NULL one (Spark's n-ary concat does). */
  evaluatesAll?: boolean;
}

export interface ResolveContext {
  name: string;
  star: boolean;
  distinct: boolean;
  analyzer: {
    expect(arg: Typed, index: number, spec: ArgSpec, sql: () => string): Typed;
    common(args: Typed[], fn: string, sql: () => string): SqlType;
    compare(op: CompareOp, l: Typed, r: Typed): Typed;
    buildCase(
      whens: Typed[],
      thens: Typed[],
      otherwise: Typed | undefined,
      fn: string,
      alias?: { name: string; args: Typed[] },
    ): Typed;
    unexpectedType(index: number, required: string, arg: Typed, sql: string): SiltError;
  };
  /** The call as Spark prints it in errors. */
  sql(): string;
}
