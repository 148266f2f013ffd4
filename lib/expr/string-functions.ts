/**
 * String functions beyond the basics in functions.ts: padding, searching, reshaping, and the
 * digests and encodings of binary values. Positions and lengths count code points, as Spark's
 * UTF8String does, so a character outside the BMP is one character.
 */

import { createHash } from "node:crypto";
import { call, define, simple } from "./function-registry.ts";

const codePoints = (s: string): string[] => Array.from(s);

/** UTF8String.lpad/rpad: an empty pad only truncates. */
function pad(s: string, len: number, padding: string, left: boolean): string {
  const cps = codePoints(s);
  if (len <= cps.length || padding === "") return cps.slice(0, Math.max(len, 0)).join("");
  const fill = codePoints(padding);
  const need = len - cps.length;
  const extra = Array.from({ length: need }, (_, i) => fill[i % fill.length]).join("");
  return left ? extra + s : s + extra;
}

for (const [name, left] of [
  ["lpad", true],
  ["rpad", false],
] as const) {
  simple(name, [2, 3], ["string", "integer", "string"], "string", ([s, len, p]) =>
    pad(s as string, len as number, (p as string | undefined) ?? " ", left),
  );
}

/** 1-based code-point position of `needle` in `s` at or after code point `from`, 0 if absent. */
function position(s: string, needle: string, from: number): number {
  const cps = codePoints(s);
  const start = cps.slice(0, from).join("").length;
  const at = s.indexOf(needle, start);
  return at < 0 ? 0 : codePoints(s.slice(0, at)).length + 1;
}

simple("instr", [2, 2], ["string", "string"], "integer", ([s, sub]) =>
  position(s as string, sub as string, 0),
);

// StringLocate: a start below 1 finds nothing.
simple("locate", [2, 3], ["string", "string", "integer"], "integer", ([sub, s, pos]) => {
  const from = (pos as number | undefined) ?? 1;
  return from < 1 ? 0 : position(s as string, sub as string, from - 1);
});

simple("left", [2, 2], ["string", "integer"], "string", ([s, n]) =>
  codePoints(s as string)
    .slice(0, Math.max(n as number, 0))
    .join(""),
);
simple("right", [2, 2], ["string", "integer"], "string", ([s, n]) =>
  (n as number) <= 0
    ? ""
    : codePoints(s as string)
        .slice(-(n as number))
        .join(""),
);

simple("reverse", [1, 1], ["string"], "string", ([s]) =>
  codePoints(s as string)
    .reverse()
    .join(""),
);

simple("repeat", [2, 2], ["string", "integer"], "string", ([s, n]) =>
  (s as string).repeat(Math.max(n as number, 0)),
);

// UTF8String.toLowerCase().toTitleCase(): a word starts after a space, nothing else.
simple("initcap", [1, 1], ["string"], "string", ([s]) =>
  (s as string)
    .toLowerCase()
    .split(" ")
    .map((w) => {
      const [first, ...rest] = codePoints(w);
      return first === undefined ? "" : first.toUpperCase() + rest.join("");
    })
    .join(" "),
);

// StringTranslate's dictionary: the first occurrence of a character decides; a character with
// no counterpart in `replace` is deleted.
simple("translate", [3, 3], ["string", "string", "string"], "string", ([s, from, to]) => {
  const target = codePoints(to as string);
  const dict = new Map<string, string>();
  codePoints(from as string).forEach((c, i) => {
    if (!dict.has(c)) dict.set(c, target[i] ?? "");
  });
  return codePoints(s as string)
    .map((c) => dict.get(c) ?? c)
    .join("");
});

// ---------------------------------------------------------------------------------------------
// Digests and encodings

const hexDigest = (algorithm: string, v: Uint8Array): string =>
  createHash(algorithm).update(v).digest("hex");

simple("md5", [1, 1], ["binary"], "string", ([v]) => hexDigest("md5", v as Uint8Array));
simple("sha1", [1, 1], ["binary"], "string", ([v]) => hexDigest("sha1", v as Uint8Array), ["sha"]);

// Sha2: 0 means 256; any other length answers NULL.
const SHA2_BITS = new Map([
  [0, "sha256"],
  [224, "sha224"],
  [256, "sha256"],
  [384, "sha384"],
  [512, "sha512"],
]);
define({
  name: "sha2",
  kind: "scalar",
  arity: { min: 2, max: 2 },
  resolve(args, ctx) {
    const cast = args.map((a, i) =>
      ctx.analyzer.expect(a, i, i === 0 ? "binary" : "integer", ctx.sql),
    );
    return call("sha2", cast, "string", true);
  },
  eval([v, bits]) {
    const algorithm = SHA2_BITS.get(bits as number);
    return algorithm === undefined ? null : hexDigest(algorithm, v as Uint8Array);
  },
});

simple("base64", [1, 1], ["binary"], "string", ([v]) =>
  Buffer.from(v as Uint8Array).toString("base64"),
);
