/**
 * LIKE, ILIKE and RLIKE patterns: simple LIKE patterns matched on UTF-8 bytes directly, the rest
 * compiled to JavaScript regular expressions (LIKE with its escape character, RLIKE from Java's
 * regex syntax), with Spark's errors for invalid patterns.
 */
import { RE2JS } from "re2js";
import { siltError } from "../errors.ts";
import { utf8Enc, type VUtf8 } from "./vectors.ts";

interface SimpleLike {
  kind: "exact" | "prefix" | "suffix" | "contains";
  bytes: Uint8Array;
}

/** LIKE patterns that are a literal with % only at its ends: matched on UTF-8 bytes. */
export function simpleLike(pattern: string, escapeChar: string): SimpleLike | undefined {
  const cps = Array.from(pattern);
  let lit = "";
  let lead = false;
  let trail = false;
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    if (c === escapeChar) {
      const next = cps[i + 1];
      if (next !== "_" && next !== "%" && next !== escapeChar) return undefined;
      if (trail) return undefined;
      lit += next;
      i++;
    } else if (c === "%") {
      if (lit === "" && !trail) lead = true;
      else trail = true;
    } else if (c === "_") return undefined;
    else {
      if (trail) return undefined;
      lit += c;
    }
  }
  const bytes = utf8Enc.encode(lit);
  const kind = lead && trail ? "contains" : lead ? "suffix" : trail ? "prefix" : "exact";
  return { kind, bytes };
}

export function likeBytes(p: SimpleLike, v: VUtf8, out: Uint8Array): void {
  const { offsets, bytes } = v;
  const key = p.bytes;
  const k = key.length;
  for (let i = 0; i < v.n; i++) {
    const s = offsets[i];
    const e = offsets[i + 1];
    const len = e - s;
    let ok = false;
    switch (p.kind) {
      case "exact":
      case "prefix":
        if (p.kind === "exact" ? len === k : len >= k) {
          ok = true;
          for (let j = 0; j < k; j++) {
            if (bytes[s + j] !== key[j]) {
              ok = false;
              break;
            }
          }
        }
        break;
      case "suffix":
        if (len >= k) {
          ok = true;
          for (let j = 0; j < k; j++) {
            if (bytes[e - k + j] !== key[j]) {
              ok = false;
              break;
            }
          }
        }
        break;
      case "contains":
        for (let start = s; start + k <= e && !ok; start++) {
          let j = 0;
          while (j < k && bytes[start + j] === key[j]) j++;
          ok = j === k;
        }
        break;
    }
    out[i] = ok ? 1 : 0;
  }
}

const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/;

/** Spark's LIKE pattern (escapeLikeRegex) as an anchored, dot-all JS RegExp. */
export function likeRegex(pattern: string, escapeChar: string): RegExp {
  let out = "";
  const cps = Array.from(pattern);
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    if (c === escapeChar) {
      if (i + 1 >= cps.length) {
        throw siltError("INVALID_FORMAT.ESC_AT_THE_END", { pattern });
      }
      const next = cps[++i];
      if (next !== "_" && next !== "%" && next !== escapeChar) {
        throw siltError("INVALID_FORMAT.ESC_IN_THE_MIDDLE", { pattern, next });
      }
      out += REGEX_SYNTAX.test(next) ? `\\${next}` : next;
    } else if (c === "_") out += ".";
    else if (c === "%") out += "[\\s\\S]*";
    else out += REGEX_SYNTAX.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${out}$`, "su");
}

/** A compiled pattern: LIKE's RegExp, or RLIKE's linear-time matcher. */
export interface StringMatcher {
  test(s: string): boolean;
}

/**
 * A Java regex (RLIKE: a match anywhere), matched by RE2 (re2js) in time linear in the input, so
 * no pattern can stall the process the way a backtracking engine does on `^(a+)+$`. RE2 reads
 * Java's syntax, embedded flags such as (?i) included; what it refuses, a Java regex with
 * backreferences or lookaround, is refused as an invalid pattern.
 */
export function javaRegex(pattern: string): StringMatcher {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    throw siltError("INVALID_PARAMETER_VALUE.PATTERN", { message: (e as Error).message });
  }
  return { test: (s) => re.matcher(s).find() };
}
