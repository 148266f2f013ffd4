/**
 * SET, which Spark reads as raw text after the keyword rather than as tokens: `SET`, `SET -v`,
 * `SET TIME ZONE …`, `SET key`, `SET key=value` and their back-quoted forms.
 */

import type { Statement } from "../expr/ast.ts";
import { parseError, type Token } from "../expr/lexer.ts";
import { scanBackQuoted } from "../values/identifiers.ts";

const SET_KEY_VALUE = /^([A-Za-z_\d\\.:]+)\s*=([^;]*)$/s;
const SET_KEY = /^([A-Za-z_\d\\.:]+)$/;

export function parseSet(sql: string, setTok: Token): Statement {
  const pos = setTok.pos;
  const rest = sql
    .slice(setTok.end)
    .replace(/[\s;]+$/, "")
    .trim();
  if (rest === "") return { kind: "set", pos };
  if (rest === "-v") return { kind: "set", key: "-v", pos };
  const tz = /^TIME\s+ZONE\s+(.+)$/is.exec(rest);
  if (tz) {
    const raw = tz[1].trim();
    const quoted = /^'(.*)'$|^"(.*)"$/s.exec(raw);
    const value = quoted ? (quoted[1] ?? quoted[2]) : raw;
    return { kind: "set", key: "spark.sql.session.timeZone", value, pos };
  }
  let m = SET_KEY_VALUE.exec(rest);
  if (m) return { kind: "set", key: m[1], value: m[2].trim(), pos };
  m = SET_KEY.exec(rest);
  if (m) return { kind: "set", key: m[1], pos };
  const quoted = rest.startsWith("`") ? scanBackQuoted(rest, 0) : undefined;
  if (quoted !== undefined && quoted.name !== "") {
    const after = rest.slice(quoted.end).trimStart();
    if (after === "") return { kind: "set", key: quoted.name, pos };
    if (after.startsWith("=")) {
      let value = after.slice(1).trim();
      const quotedValue = value.startsWith("`") ? scanBackQuoted(value, 0) : undefined;
      if (quotedValue?.end === value.length) value = quotedValue.name;
      return { kind: "set", key: quoted.name, value, pos };
    }
  }
  throw parseError(pos, "INVALID_SET_SYNTAX");
}
