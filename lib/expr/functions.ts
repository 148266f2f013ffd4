/**
 * Built-in functions: each one's signature (argument counts, implicit casts of its arguments,
 * result type and nullability, as Spark types them) and, for scalar functions, a row kernel over
 * scalars that evaluation applies. Aggregates (count/sum/min/max/avg) are typed here only; the
 * query engine computes them. Families of their own (string-functions.ts, math-functions.ts)
 * register themselves when this module loads them.
 *
 * Conditional functions (coalesce, if, nullif, nvl2, …) become `coalesce` or `case` nodes, so
 * their lazily evaluated arguments follow the same rules as CASE.
 */

import { decimal } from "../delta/schema.ts";
import { siltError } from "../errors.ts";
import { civilFromDays, daysFromCivil, daysInMonth, MICROS_PER_DAY_N } from "../values/calendar.ts";
import { divHalfUp, fitsPrecision, pow10n, rescale } from "../values/decimal-scale.ts";
import { formatDecimal, parseDecimal } from "../values/decimal-text.ts";
import { floorDiv } from "../values/floor-div.ts";
import { INT64_MAX, INT64_MIN } from "../values/int64.ts";
import { arithmeticOverflow, castInvalidInput, decimalOutOfRange } from "./ansi-errors.ts";
import { anyNullable, call, define, lookupFunction, simple } from "./function-registry.ts";
import "./math-functions.ts";
import "./string-functions.ts";
import type { SqlType } from "./ast.ts";
import { integralNegate } from "./scalar-arithmetic.ts";
import { compareScalars } from "./scalar-order.ts";
import { parseSparkDate, parseSparkTimestamp } from "./scalar-parse.ts";
import type { ArgSpec, ResolveContext, Typed } from "./typed.ts";
import {
  boundedDecimal,
  isDecimalType,
  isIntegral,
  isOrderable,
  quotedType,
  type Scalar,
  sameType,
} from "./types.ts";

export { functionNames, lookupFunction } from "./function-registry.ts";

// ---------------------------------------------------------------------------------------------
// Conditional functions

define({
  name: "coalesce",
  kind: "scalar",
  arity: { min: 1, max: Number.POSITIVE_INFINITY },
  resolve(args, ctx) {
    const t = ctx.analyzer.common(args, ctx.name, ctx.sql);
    const cast = args.map((a) => castTo(a, t));
    return {
      kind: "coalesce",
      name: ctx.name,
      type: t,
      nullable: cast.every((a) => a.nullable),
      args: cast,
    };
  },
});
for (const alias of ["nvl", "ifnull"]) {
  define({ ...lookupFunction("coalesce")!, name: alias, arity: { min: 2, max: 2 } });
}

define({
  name: "if",
  kind: "scalar",
  arity: { min: 3, max: 3 },
  resolve(args, ctx) {
    return ctx.analyzer.buildCase([args[0]], [args[1]], args[2], "if", {
      name: "if",
      args,
    });
  },
});

define({
  name: "nullif",
  kind: "scalar",
  arity: { min: 2, max: 2 },
  resolve(args, ctx) {
    const cond = ctx.analyzer.compare("=", args[0], args[1]);
    const nul: Typed = { kind: "literal", type: args[0].type, nullable: true, value: null };
    return ctx.analyzer.buildCase([cond], [nul], args[0], "nullif", { name: "nullif", args });
  },
});

define({
  name: "nvl2",
  kind: "scalar",
  arity: { min: 3, max: 3 },
  resolve(args, ctx) {
    const cond: Typed = {
      kind: "isNull",
      type: "boolean",
      nullable: false,
      operand: args[0],
      negated: true,
    };
    return ctx.analyzer.buildCase([cond], [args[1]], args[2], "nvl2", { name: "nvl2", args });
  },
});

for (const [name, negated] of [
  ["isnull", false],
  ["isnotnull", true],
] as const) {
  define({
    name,
    kind: "scalar",
    arity: { min: 1, max: 1 },
    resolve(args) {
      return { kind: "isNull", type: "boolean", nullable: false, operand: args[0], negated };
    },
  });
}

function castTo(a: Typed, t: SqlType): Typed {
  if (sameType(a.type, t)) return a;
  if (a.kind === "literal" && a.value === null) return { ...a, type: t, folded: a };
  return {
    kind: "cast",
    type: t,
    nullable: a.nullable,
    operand: a,
    tryCast: false,
    implicit: true,
  };
}

for (const [name, sign] of [
  ["greatest", 1],
  ["least", -1],
] as const) {
  define({
    name,
    kind: "scalar",
    arity: { min: 2, max: Number.POSITIVE_INFINITY },
    nullSafe: true,
    resolve(args, ctx) {
      const t = ctx.analyzer.common(args, ctx.name, ctx.sql);
      if (!isOrderable(t)) {
        throw ctx.analyzer.unexpectedType(0, '"ORDERABLE"', args[0], ctx.sql());
      }
      const cast = args.map((a) => castTo(a, t));
      return call(
        name,
        cast,
        t,
        cast.every((a) => a.nullable),
      );
    },
    eval(args, node) {
      let best: Scalar | null = null;
      for (const v of args) {
        if (v === null) continue;
        if (best === null || sign * compareScalars(node.type, v, best) > 0) best = v;
      }
      return best;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Math

simple(
  "abs",
  [1, 1],
  ["numeric"],
  (a) => a[0].type,
  ([v], node) => {
    const t = node.type;
    if (isIntegral(t)) {
      const neg = typeof v === "bigint" ? v < 0n : (v as number) < 0;
      return neg ? integralNegate(t, v as number | bigint) : v;
    }
    if (isDecimalType(t)) return (v as bigint) < 0n ? -(v as bigint) : v;
    return Math.abs(v as number);
  },
);

/** Rounding of an integral scalar to 10^-scale (scale < 0), HALF_UP. */
function roundIntegral(v: number | bigint, scale: number, t: SqlType): number | bigint {
  if (scale >= 0) return v;
  const p = pow10n(-scale);
  const r = divHalfUp(BigInt(v), p) * p;
  if (t === "long") {
    if (r < INT64_MIN || r > INT64_MAX) throw arithmeticOverflow("long overflow");
    return r;
  }
  const n = Number(r);
  const limit = t === "byte" ? 128 : t === "short" ? 32768 : 2147483648;
  if (n < -limit || n >= limit)
    throw arithmeticOverflow(`${t === "integer" ? "integer" : t} overflow`);
  return n;
}

/** HALF_UP rounding of a double through its shortest decimal text, as BigDecimal(d) does. */
export function roundDouble(x: number, scale: number): number {
  if (!Number.isFinite(x)) return x;
  const r = parseDecimal(String(x), 800, scale);
  if (typeof r === "string") return x;
  const v = Number(formatDecimal(r, scale));
  return v === 0 && (x < 0 || Object.is(x, -0)) ? -0 : v;
}

define({
  name: "round",
  kind: "scalar",
  arity: { min: 1, max: 2 },
  resolve(args, ctx) {
    const x = ctx.analyzer.expect(args[0], 0, "numeric", ctx.sql);
    let scaleArg: Typed = { kind: "literal", type: "integer", nullable: false, value: 0 };
    if (args.length > 1) {
      const s = ctx.analyzer.expect(args[1], 1, "integer", ctx.sql);
      if (s.kind !== "literal" || s.value === null) {
        throw siltError("DATATYPE_MISMATCH.NON_FOLDABLE_INPUT", { sqlExpr: ctx.sql() });
      }
      scaleArg = s;
    }
    const scale = scaleArg.value as number;
    let t: SqlType = x.type;
    if (isDecimalType(t)) {
      const intDigits = t.precision - t.scale + 1;
      t =
        scale < 0
          ? decimal(Math.min(Math.max(intDigits, -scale + 1), 38), 0)
          : decimal(Math.min(intDigits + Math.min(t.scale, scale), 38), Math.min(t.scale, scale));
    }
    return call("round", [x, scaleArg], t, x.nullable);
  },
  eval([v, s], node) {
    const scale = s as number;
    const xt = node.args[0].type;
    if (isIntegral(xt)) return roundIntegral(v as number | bigint, scale, xt);
    if (isDecimalType(xt)) {
      const rt = node.type as ReturnType<typeof decimal>;
      let u: bigint;
      if (scale < 0) {
        const p = pow10n(-scale);
        u = divHalfUp(v as bigint, pow10n(xt.scale) * p) * p;
      } else {
        u = rescale(v as bigint, xt.scale, rt.scale);
      }
      if (!fitsPrecision(u, rt.precision)) throw decimalOutOfRange(formatDecimal(u, rt.scale), rt);
      return u;
    }
    const r = roundDouble(v as number, scale);
    return xt === "float" ? Math.fround(r) : r;
  },
});

for (const name of ["floor", "ceil", "ceiling"]) {
  const up = name !== "floor";
  define({
    name,
    kind: "scalar",
    arity: { min: 1, max: 1 },
    resolve(args, ctx) {
      const x = ctx.analyzer.expect(args[0], 0, ["double", "decimal", "long"], ctx.sql);
      const t: SqlType = isDecimalType(x.type)
        ? boundedDecimal(x.type.precision - x.type.scale + 1, 0)
        : "long";
      return call(name, [x], t, x.nullable);
    },
    eval([v], node) {
      const xt = node.args[0].type;
      if (xt === "long") return v;
      if (isDecimalType(xt)) {
        const p = pow10n(xt.scale);
        const u = v as bigint;
        return up ? -floorDiv(-u, p) : floorDiv(u, p);
      }
      const x = v as number;
      const r = up ? Math.ceil(x) : Math.floor(x);
      // Java's (long) conversion: NaN is 0, out-of-range values saturate.
      if (Number.isNaN(r)) return 0n;
      if (r >= 2 ** 63) return INT64_MAX;
      if (r <= -(2 ** 63)) return INT64_MIN;
      return BigInt(r);
    },
  });
}

simple("sign", [1, 1], ["double"], "double", ([v]) => Math.sign(v as number), ["signum"]);

// ---------------------------------------------------------------------------------------------
// Strings

const codePointLength = (s: string): number => {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const p = s.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) n--;
    }
  }
  return n;
};

const HAS_SURROGATE = /[\uD800-\uDFFF]/;

simple("lower", [1, 1], ["string"], "string", ([v]) => (v as string).toLowerCase(), ["lcase"]);
simple("upper", [1, 1], ["string"], "string", ([v]) => (v as string).toUpperCase(), ["ucase"]);

function trimChars(s: string, chars: string, left: boolean, right: boolean): string {
  const set = new Set(Array.from(chars));
  const cps = Array.from(s);
  let start = 0;
  let end = cps.length;
  if (left) while (start < end && set.has(cps[start])) start++;
  if (right) while (end > start && set.has(cps[end - 1])) end--;
  return cps.slice(start, end).join("");
}

for (const [name, left, right] of [
  ["trim", true, true],
  ["ltrim", true, false],
  ["rtrim", false, true],
] as const) {
  simple(name, [1, 2], ["string", "string"], "string", ([v, chars]) => {
    const s = v as string;
    if (chars !== undefined) return trimChars(s, chars as string, left, right);
    let a = 0;
    let b = s.length;
    if (left) while (a < b && s.charCodeAt(a) === 32) a++;
    if (right) while (b > a && s.charCodeAt(b - 1) === 32) b--;
    return s.slice(a, b);
  });
}

simple(
  "length",
  [1, 1],
  [["string", "binary"]],
  "integer",
  ([v]) => (typeof v === "string" ? codePointLength(v) : (v as Uint8Array).length),
  ["char_length", "character_length", "len"],
);

/** UTF8String.substringSQL on a sequence of `len` units. */
function substringBounds(len: number, pos: number, length: number): [number, number] {
  let start = pos > 0 ? pos - 1 : pos < 0 ? len + pos : 0;
  const end = Math.min(len, start + length);
  start = Math.max(start, 0);
  return start >= end ? [0, 0] : [start, end];
}

simple(
  "substring",
  [2, 3],
  [["string", "binary"], "integer", "integer"],
  (args) => args[0].type,
  ([v, pos, len]) => {
    const length = len === undefined ? 2147483647 : (len as number);
    if (v instanceof Uint8Array) {
      const [a, b] = substringBounds(v.length, pos as number, length);
      return v.slice(a, b);
    }
    const s = v as string;
    if (!HAS_SURROGATE.test(s)) {
      const [a, b] = substringBounds(s.length, pos as number, length);
      return s.slice(a, b);
    }
    const cps = Array.from(s);
    const [a, b] = substringBounds(cps.length, pos as number, length);
    return cps.slice(a, b).join("");
  },
  ["substr"],
);

define({
  name: "concat",
  kind: "scalar",
  evaluatesAll: true,
  arity: { min: 0, max: Number.POSITIVE_INFINITY },
  resolve(args, ctx) {
    const allBinary = args.length > 0 && args.every((a) => a.type === "binary");
    const t: SqlType = allBinary ? "binary" : "string";
    const cast = args.map((a, i) => ctx.analyzer.expect(a, i, t, ctx.sql));
    return call("concat", cast, t, anyNullable(cast));
  },
  eval(args, node) {
    if (node.type === "binary") {
      const parts = args as Uint8Array[];
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let pos = 0;
      for (const p of parts) {
        out.set(p, pos);
        pos += p.length;
      }
      return out;
    }
    return (args as string[]).join("");
  },
});

define({
  name: "concat_ws",
  kind: "scalar",
  arity: { min: 1, max: Number.POSITIVE_INFINITY },
  nullSafe: true,
  resolve(args, ctx) {
    const cast = args.map((a, i) => ctx.analyzer.expect(a, i, "string", ctx.sql));
    return call("concat_ws", cast, "string", cast[0].nullable);
  },
  eval(args) {
    const [sep, ...rest] = args;
    if (sep === null) return null;
    return (rest.filter((x) => x !== null) as string[]).join(sep as string);
  },
});

simple("startswith", [2, 2], ["string", "string"], "boolean", ([a, b]) =>
  (a as string).startsWith(b as string),
);
simple("endswith", [2, 2], ["string", "string"], "boolean", ([a, b]) =>
  (a as string).endsWith(b as string),
);
simple("contains", [2, 2], ["string", "string"], "boolean", ([a, b]) =>
  (a as string).includes(b as string),
);
simple("replace", [2, 3], ["string", "string", "string"], "string", ([s, search, rep]) =>
  search === "" ? s : (s as string).split(search as string).join((rep as string | undefined) ?? ""),
);

// ---------------------------------------------------------------------------------------------
// Dates and times

const DAY_SPECS: ArgSpec[] = ["date", ["integer", "short", "byte"]];

simple("date_add", [2, 2], DAY_SPECS, "date", ([d, n]) => ((d as number) + (n as number)) | 0, [
  "dateadd",
]);
simple("date_sub", [2, 2], DAY_SPECS, "date", ([d, n]) => ((d as number) - (n as number)) | 0);
simple(
  "datediff",
  [2, 2],
  ["date", "date"],
  "integer",
  ([end, start]) => (end as number) - (start as number),
);

simple("year", [1, 1], ["date"], "integer", ([d]) => civilFromDays(d as number)[0]);
simple("month", [1, 1], ["date"], "integer", ([d]) => civilFromDays(d as number)[1]);
simple("day", [1, 1], ["date"], "integer", ([d]) => civilFromDays(d as number)[2], ["dayofmonth"]);
simple(
  "quarter",
  [1, 1],
  ["date"],
  "integer",
  ([d]) => Math.floor((civilFromDays(d as number)[1] - 1) / 3) + 1,
);
simple("dayofweek", [1, 1], ["date"], "integer", ([d]) => {
  // 1970-01-01 was a Thursday; Spark numbers Sunday 1 … Saturday 7.
  const k = ((d as number) + 4) % 7;
  return (k < 0 ? k + 7 : k) + 1;
});
simple("dayofyear", [1, 1], ["date"], "integer", ([d]) => {
  const [y] = civilFromDays(d as number);
  return (d as number) - daysFromCivil(y, 1, 1) + 1;
});

const MICROS_PER_HOUR = 3_600_000_000n;
const timeOfDay = (ts: bigint): bigint => ts - floorDiv(ts, MICROS_PER_DAY_N) * MICROS_PER_DAY_N;
simple("hour", [1, 1], ["timestamp"], "integer", ([t]) =>
  Number(timeOfDay(t as bigint) / MICROS_PER_HOUR),
);
simple("minute", [1, 1], ["timestamp"], "integer", ([t]) =>
  Number((timeOfDay(t as bigint) / 60_000_000n) % 60n),
);
simple("second", [1, 1], ["timestamp"], "integer", ([t]) =>
  Number((timeOfDay(t as bigint) / 1_000_000n) % 60n),
);

define({
  name: "current_date",
  kind: "scalar",
  arity: { min: 0, max: 0 },
  resolve: () => call("current_date", [], "date", false),
  eval: (_args, _node, env) => Number(floorDiv(env.now, MICROS_PER_DAY_N)),
});
define(
  {
    name: "current_timestamp",
    kind: "scalar",
    arity: { min: 0, max: 0 },
    resolve: (_args, ctx) => call(ctx.name, [], "timestamp", false),
    eval: (_args, _node, env) => env.now,
  },
  "now",
);

function parseDateTimeArg(target: "date" | "timestamp") {
  return (args: Typed[], ctx: ResolveContext): Typed => {
    const x = ctx.analyzer.expect(
      args[0],
      0,
      ["string", "date", "timestamp", "timestamp_ntz"],
      ctx.sql,
    );
    const fmt = args.length > 1 ? ctx.analyzer.expect(args[1], 1, "string", ctx.sql) : undefined;
    if (x.type !== "string" && x.type !== "null") {
      if (sameType(x.type, target)) return x;
      return {
        kind: "cast",
        type: target,
        nullable: x.nullable,
        operand: x,
        tryCast: false,
        implicit: false,
      };
    }
    const cast = fmt ? [x, fmt] : [x];
    return call(ctx.name, cast, target, anyNullable(cast));
  };
}

const cannotParse = (text: string, index: number) =>
  siltError("CANNOT_PARSE_TIMESTAMP", { text, index });

define({
  name: "to_date",
  kind: "scalar",
  arity: { min: 1, max: 2 },
  resolve: parseDateTimeArg("date"),
  eval([s, fmt]) {
    if (fmt === undefined) {
      const d = parseSparkDate(s as string);
      if (d === undefined) throw castInvalidInput(s as string, "string", "date");
      return d;
    }
    const p = parseWithPattern(s as string, fmt as string);
    return daysFromCivil(p.year, p.month, p.day);
  },
});

define({
  name: "to_timestamp",
  kind: "scalar",
  arity: { min: 1, max: 2 },
  resolve: parseDateTimeArg("timestamp"),
  eval([s, fmt]) {
    if (fmt === undefined) {
      const t = parseSparkTimestamp(s as string, false);
      if (t === undefined) throw castInvalidInput(s as string, "string", "timestamp");
      return t;
    }
    const p = parseWithPattern(s as string, fmt as string);
    const days = BigInt(daysFromCivil(p.year, p.month, p.day));
    return (
      days * MICROS_PER_DAY_N +
      BigInt(((p.hour * 60 + p.minute) * 60 + p.second) * 1_000_000 + p.micros)
    );
  },
});

// ---------------------------------------------------------------------------------------------
// Datetime patterns (the java.time subset people write: yyyy-MM-dd, dd/MM/yyyy, HH:mm:ss.SSS)

type PatternToken =
  | { kind: "field"; letter: string; count: number }
  | { kind: "lit"; text: string };

const FIELD_LETTERS = new Set(["y", "u", "M", "L", "d", "H", "h", "m", "s", "S", "a", "E"]);
const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

function tokenizePattern(p: string): PatternToken[] {
  const out: PatternToken[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (/[A-Za-z]/.test(c)) {
      if (!FIELD_LETTERS.has(c)) {
        throw siltError("INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER", { pattern: p, c });
      }
      let j = i;
      while (j < p.length && p[j] === c) j++;
      out.push({ kind: "field", letter: c, count: j - i });
      i = j;
    } else if (c === "'") {
      let text = "";
      i++;
      for (;;) {
        if (i >= p.length) break;
        if (p[i] === "'") {
          if (p[i + 1] === "'") {
            text += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += p[i++];
      }
      out.push({ kind: "lit", text: text === "" ? "'" : text });
    } else {
      out.push({ kind: "lit", text: c });
      i++;
    }
  }
  return out;
}

interface ParsedDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  micros: number;
}

const isNumericField = (t: PatternToken | undefined) =>
  t !== undefined &&
  t.kind === "field" &&
  !"aE".includes(t.letter) &&
  !(t.letter === "M" && t.count >= 3);

/** Parses `text` with a java.time-style pattern; CANNOT_PARSE_TIMESTAMP when it does not fit. */
export function parseWithPattern(text: string, pattern: string): ParsedDateTime {
  const tokens = tokenizePattern(pattern);
  const r: ParsedDateTime = {
    year: 1970,
    month: 1,
    day: 1,
    hour: 0,
    minute: 0,
    second: 0,
    micros: 0,
  };
  let pm: boolean | undefined;
  let hour12: number | undefined;
  let pos = 0;
  const digits = (min: number, max: number): number => {
    let j = pos;
    while (j < text.length && j - pos < max && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57)
      j++;
    if (j - pos < min) throw cannotParse(text, pos);
    const v = Number(text.slice(pos, j));
    pos = j;
    return v;
  };
  const word = (names: string[], short: boolean): number => {
    const rest = text.slice(pos).toLowerCase();
    for (let k = 0; k < names.length; k++) {
      const n = short ? names[k].slice(0, 3) : names[k];
      if (rest.startsWith(n)) {
        pos += n.length;
        return k;
      }
    }
    throw cannotParse(text, pos);
  };
  tokens.forEach((tok, ti) => {
    if (tok.kind === "lit") {
      if (!text.startsWith(tok.text, pos)) throw cannotParse(text, pos);
      pos += tok.text.length;
      return;
    }
    const adjacent = isNumericField(tokens[ti + 1]);
    const width = (n: number, max: number) =>
      n >= 2 || adjacent ? [n, n >= 2 ? (adjacent ? n : Math.max(n, max)) : n] : [1, max];
    switch (tok.letter) {
      case "y":
      case "u":
        if (tok.count === 2) {
          r.year = 2000 + digits(2, 2);
        } else {
          const [min, max] = adjacent ? [tok.count, Math.max(tok.count, 4)] : [tok.count, 10];
          r.year = digits(min, max);
        }
        return;
      case "M":
      case "L":
        if (tok.count >= 3) r.month = word(MONTHS, tok.count === 3) + 1;
        else r.month = digits(...(width(tok.count, 2) as [number, number]));
        return;
      case "d":
        r.day = digits(...(width(tok.count, 2) as [number, number]));
        return;
      case "H":
        r.hour = digits(...(width(tok.count, 2) as [number, number]));
        return;
      case "h":
        hour12 = digits(...(width(tok.count, 2) as [number, number]));
        return;
      case "m":
        r.minute = digits(...(width(tok.count, 2) as [number, number]));
        return;
      case "s":
        r.second = digits(...(width(tok.count, 2) as [number, number]));
        return;
      case "S": {
        const start = pos;
        const v = digits(tok.count, tok.count);
        const n = pos - start;
        r.micros = n >= 6 ? Math.floor(v / 10 ** (n - 6)) : v * 10 ** (6 - n);
        return;
      }
      case "a": {
        const rest = text.slice(pos, pos + 2).toUpperCase();
        if (rest !== "AM" && rest !== "PM") throw cannotParse(text, pos);
        pm = rest === "PM";
        pos += 2;
        return;
      }
      case "E":
        word(WEEKDAYS, tok.count <= 3);
        return;
    }
  });
  if (pos !== text.length) throw cannotParse(text, pos);
  if (hour12 !== undefined) {
    if (hour12 < 1 || hour12 > 12) throw cannotParse(text, 0);
    r.hour = (hour12 % 12) + (pm ? 12 : 0);
  } else if (pm !== undefined && pm && r.hour < 12) {
    r.hour += 12;
  }
  if (
    r.month < 1 ||
    r.month > 12 ||
    r.day < 1 ||
    r.day > daysInMonth(r.year, r.month) ||
    r.hour > 23 ||
    r.minute > 59 ||
    r.second > 59
  ) {
    throw cannotParse(text, 0);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Aggregates (typed here; computed by the query engine)

function aggregate(
  name: string,
  arity: [number, number],
  typeOf: (
    args: Typed[],
    ctx: ResolveContext,
  ) => { args: Typed[]; type: SqlType; nullable: boolean },
  ...aliases: string[]
): void {
  define(
    {
      name,
      kind: "aggregate",
      arity: { min: arity[0], max: arity[1] },
      resolve(args, ctx) {
        const r = typeOf(args, ctx);
        return {
          kind: "aggregate",
          name: ctx.name,
          args: r.args,
          distinct: ctx.distinct,
          star: ctx.star,
          type: r.type,
          nullable: r.nullable,
        };
      },
    },
    ...aliases,
  );
}

aggregate("count", [1, Number.POSITIVE_INFINITY], (args) => ({
  args,
  type: "long",
  nullable: false,
}));

aggregate("sum", [1, 1], (args, ctx) => {
  const x = ctx.analyzer.expect(args[0], 0, "numeric", ctx.sql);
  const t = x.type;
  const type: SqlType = isDecimalType(t)
    ? boundedDecimal(t.precision + 10, t.scale)
    : isIntegral(t)
      ? "long"
      : "double";
  return { args: [x], type, nullable: true };
});

aggregate(
  "avg",
  [1, 1],
  (args, ctx) => {
    const x = ctx.analyzer.expect(args[0], 0, "numeric", ctx.sql);
    const t = x.type;
    const type: SqlType = isDecimalType(t)
      ? boundedDecimal(t.precision + 4, t.scale + 4)
      : "double";
    return { args: [x], type, nullable: true };
  },
  "mean",
);

for (const name of ["min", "max"]) {
  aggregate(name, [1, 1], (args, ctx) => {
    const x = args[0];
    if (!isOrderable(x.type)) {
      throw siltError("DATATYPE_MISMATCH.INVALID_ORDERING_TYPE:FUNCTION", {
        sqlExpr: ctx.sql(),
        name,
        type: quotedType(x.type),
      });
    }
    return { args: [x], type: x.type, nullable: true };
  });
}
