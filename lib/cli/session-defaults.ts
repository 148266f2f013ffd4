/**
 * `USE` in the shell. /api/v1/sql is stateless (each request names its defaults), so the shell
 * keeps the session's catalog and schema and sends them with every statement, as Spark's
 * session would hold them:
 *
 * - `USE CATALOG c`: catalog c, and its schema `default`, as Databricks does;
 * - `USE SCHEMA s`, `USE DATABASE s`, `USE s`: schema s of the current catalog;
 * - `USE c.s` (with or without SCHEMA/DATABASE): both.
 *
 * `probe` is a statement that fails, with the server's error, when the new defaults name a
 * catalog or schema that does not exist, so a typo never becomes the session's default.
 */
import { Lexer, type Token } from "../expr/lexer.ts";
import { quotePath } from "../values/identifiers.ts";
import type { SessionDefaults } from "./run-statement.ts";

export interface UseStatement {
  defaults: SessionDefaults;
  probe: string;
}

/** The USE statement `statement` is, or undefined when it is not one (it goes to the server). */
export function parseUse(statement: string, current: SessionDefaults): UseStatement | undefined {
  let tokens: Token[];
  try {
    tokens = new Lexer(statement).tokenize();
  } catch {
    return undefined;
  }
  if (tokens[0]?.upper !== "USE") return undefined;
  let i = 1;
  const kind = ["CATALOG", "SCHEMA", "DATABASE", "NAMESPACE"].includes(tokens[i]?.upper)
    ? tokens[i++].upper
    : "SCHEMA";
  const name: string[] = [];
  for (;;) {
    const t = tokens[i++];
    if (t === undefined || (t.kind !== "word" && t.kind !== "quoted")) return undefined;
    name.push(t.text);
    if (tokens[i]?.text !== ".") break;
    i++;
  }
  if (tokens[i]?.kind !== "eof") return undefined;
  if (kind === "CATALOG") {
    if (name.length !== 1) return undefined;
    return {
      defaults: { catalog: name[0], schema: "default" },
      probe: `SHOW SCHEMAS IN ${quotePath(name)}`,
    };
  }
  if (name.length > 2) return undefined;
  const catalog = name.length === 2 ? name[0] : current.catalog;
  const schema = name[name.length - 1];
  const path = catalog === undefined ? [schema] : [catalog, schema];
  return { defaults: { catalog, schema }, probe: `SHOW TABLES IN ${quotePath(path)}` };
}
