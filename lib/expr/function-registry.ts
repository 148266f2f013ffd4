/**
 * The registry of built-in functions and the helpers each family of them (functions.ts and the
 * *-functions.ts modules it loads) defines its functions with.
 */

import type { SqlType } from "./ast.ts";
import type { ArgSpec, CallNode, FunctionDef, Typed } from "./typed.ts";

const REGISTRY = new Map<string, FunctionDef>();

export function lookupFunction(name: string): FunctionDef | undefined {
  return REGISTRY.get(name.toLowerCase());
}

/** Names of every registered function (scalar and aggregate). */
export const functionNames = (): string[] => [...REGISTRY.keys()].sort();

export function define(def: FunctionDef, ...aliases: string[]): void {
  REGISTRY.set(def.name, def);
  for (const a of aliases) REGISTRY.set(a, { ...def, name: a });
}

export const call = (name: string, args: Typed[], type: SqlType, nullable: boolean): CallNode => ({
  kind: "call",
  name,
  args,
  type,
  nullable,
  fn: REGISTRY.get(name)!,
});

export const anyNullable = (args: Typed[]) => args.some((a) => a.nullable);

/** A scalar function whose arguments are implicitly cast to `specs`, result type fixed. */
export function simple(
  name: string,
  arity: [number, number],
  specs: ArgSpec[],
  type: SqlType | ((args: Typed[]) => SqlType),
  kernel: NonNullable<FunctionDef["eval"]>,
  aliases: string[] = [],
): void {
  define(
    {
      name,
      kind: "scalar",
      arity: { min: arity[0], max: arity[1] },
      resolve(args, ctx) {
        const cast = args.map((a, i) =>
          ctx.analyzer.expect(a, i, specs[Math.min(i, specs.length - 1)], ctx.sql),
        );
        const t = typeof type === "function" ? type(cast) : type;
        return call(ctx.name, cast, t, anyNullable(cast));
      },
      eval: kernel,
    },
    ...aliases,
  );
}
