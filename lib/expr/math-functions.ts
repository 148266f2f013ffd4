/**
 * Math functions over doubles (roots, exp, logarithms, powers): Spark casts their arguments
 * to DOUBLE and answers a DOUBLE. A logarithm of a value at or below zero is NULL, not NaN, as
 * Spark's Logarithm family answers, so those are typed nullable.
 */

import { call, define, simple } from "./function-registry.ts";

const unary = (name: string, f: (x: number) => number) =>
  simple(name, [1, 1], ["double"], "double", ([x]) => f(x as number));

unary("sqrt", Math.sqrt);
unary("cbrt", Math.cbrt);
unary("exp", Math.exp);
unary("expm1", Math.expm1);

simple("pow", [2, 2], ["double", "double"], "double", ([x, y]) => (x as number) ** (y as number), [
  "power",
]);

/** A logarithm defined only above zero; NULL elsewhere. */
function logarithm(name: string, f: (x: number) => number): void {
  define({
    name,
    kind: "scalar",
    arity: { min: 1, max: 1 },
    resolve(args, ctx) {
      return call(name, [ctx.analyzer.expect(args[0], 0, "double", ctx.sql)], "double", true);
    },
    eval: ([x]) => ((x as number) <= 0 ? null : f(x as number)),
  });
}

logarithm("ln", Math.log);
logarithm("log10", Math.log10);
logarithm("log2", Math.log2);

// log(x) is ln(x); log(base, x) is NULL when either is at or below zero.
define({
  name: "log",
  kind: "scalar",
  arity: { min: 1, max: 2 },
  resolve(args, ctx) {
    const cast = args.map((a, i) => ctx.analyzer.expect(a, i, "double", ctx.sql));
    return call("log", cast, "double", true);
  },
  eval(args) {
    const [base, x] = args.length === 1 ? [Math.E, args[0] as number] : (args as number[]);
    if (x <= 0 || base <= 0) return null;
    return args.length === 1 ? Math.log(x) : Math.log(x) / Math.log(base);
  },
});
