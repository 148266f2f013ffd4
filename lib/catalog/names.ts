/**
 * Identifier rules for catalogs, schemas and tables.
 *
 * Unity Catalog (as Databricks documents it) limits object names to 255 characters, forbids '.',
 * '/' and control characters, and stores every name lower-cased, so `Sales.Q1` and `sales.q1` are
 * the same table. We follow that, and also forbid '\' because names end up in log lines and error
 * messages that users paste into paths. Unlike Databricks we accept spaces inside back-quoted
 * names (`my table`): nothing in our storage layout depends on the name, since a table's files
 * live under its id, never under its name.
 */
import { type SiltError, siltError } from "../errors.ts";
import { quoteIdent, quotePath, scanBackQuoted } from "../values/identifiers.ts";

export const MAX_NAME_LENGTH = 255;

export type NameKind = "catalog" | "schema" | "table";

export interface QualifiedName {
  catalog: string;
  schema: string;
  table: string;
}

export interface NameDefaults {
  catalog?: string;
  schema?: string;
}

// \p{Cc} covers C0 (U+0000-U+001F), DEL (U+007F) and C1 (U+0080-U+009F).
const CONTROL_CHAR = /\p{Cc}/u;
// Spark's lexer accepts letters, digits and underscores in an unquoted identifier; anything
// else has to be back-quoted.
const UNQUOTED_IDENTIFIER = /^[A-Za-z0-9_]+$/;

/** `c`.`s`.`t` — the form Spark uses for relation names in error messages. */
export const formatQualifiedName = (...parts: string[]): string => quotePath(parts);

function describeChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  return `control character U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

function invalidName(kind: NameKind, shown: string, problem: string): SiltError {
  return siltError("INVALID_SCHEMA_OR_RELATION_NAME:INVALID_NAME", {
    shown,
    kind,
    problem,
    maxLength: MAX_NAME_LENGTH,
  });
}

/**
 * Checks one catalog, schema or table name and returns its stored form (lower-cased). Throws
 * INVALID_SCHEMA_OR_RELATION_NAME (400) naming the problem.
 */
export function normalizeName(name: string, kind: NameKind): string {
  if (typeof name !== "string" || name.length === 0) {
    throw invalidName(kind, "``", "it is empty");
  }
  const control = name.match(CONTROL_CHAR);
  // A control character would make the quoted name in the message unreadable, so show an escape.
  const shown = control ? JSON.stringify(name) : quoteIdent(name);
  if (control) throw invalidName(kind, shown, `it contains the ${describeChar(control[0])}`);
  for (const ch of [".", "/", "\\"]) {
    if (name.includes(ch)) throw invalidName(kind, shown, `it contains '${ch}'`);
  }
  // Lower-casing can lengthen a string (e.g. U+0130), so measure the stored form.
  const lowered = name.toLowerCase();
  const length = [...lowered].length;
  if (length > MAX_NAME_LENGTH) {
    throw invalidName(kind, quoteIdent(`${name.slice(0, 32)}…`), `it is ${length} characters long`);
  }
  return lowered;
}

/** Names compare case-insensitively; both sides must already be valid names. */
export function namesEqual(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * Splits a dotted identifier into its parts. Parts may be back-quoted (`my table`, with `` for a
 * literal back-quote); unquoted parts follow Spark's lexer (letters, digits, underscore) and may be
 * surrounded by spaces. Parts are returned as written, not yet validated or lower-cased.
 */
export function splitNameParts(text: string): string[] {
  const parts: string[] = [];
  let i = 0;
  const syntaxError = (detail: string) =>
    siltError("INVALID_ATTRIBUTE_NAME_SYNTAX", { text: JSON.stringify(text), detail });
  const skipSpaces = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  };
  for (;;) {
    skipSpaces();
    let part: string;
    if (text[i] === "`") {
      const quoted = scanBackQuoted(text, i);
      if (!quoted) throw syntaxError("a back-quoted part is not closed");
      part = quoted.name;
      i = quoted.end;
    } else {
      const start = i;
      while (i < text.length && text[i] !== "." && text[i] !== "`") i++;
      part = text.slice(start, i).trimEnd();
      if (text[i] === "`") throw syntaxError("a back-quote appears inside an unquoted part");
      if (part.length > 0 && !UNQUOTED_IDENTIFIER.test(part)) {
        throw siltError("INVALID_IDENTIFIER:NAME_PART", {
          ident: part,
          quoted: quoteIdent(part),
        });
      }
    }
    parts.push(part);
    skipSpaces();
    if (i >= text.length) return parts;
    if (text[i] !== ".") throw syntaxError(`unexpected ${JSON.stringify(text[i])} after a part`);
    i++;
  }
}

/**
 * Parses `catalog.schema.table`, `schema.table` or `table`, filling missing leading parts from
 * `defaults`. Every part is validated and returned lower-cased.
 */
export function parseQualifiedName(text: string, defaults: NameDefaults = {}): QualifiedName {
  return qualifyNameParts(splitNameParts(text), defaults);
}

/** As parseQualifiedName, for a name already split into its parts (e.g. by the SQL parser). */
export function qualifyNameParts(
  parts: readonly string[],
  defaults: NameDefaults = {},
): QualifiedName {
  if (parts.length > 3) {
    throw siltError("IDENTIFIER_TOO_MANY_NAME_PARTS", { name: formatQualifiedName(...parts) });
  }
  const table = normalizeName(parts[parts.length - 1], "table");
  let schema: string;
  let catalog: string;
  if (parts.length >= 2) {
    schema = normalizeName(parts[parts.length - 2], "schema");
  } else if (defaults.schema !== undefined) {
    schema = normalizeName(defaults.schema, "schema");
  } else {
    throw siltError("INVALID_SCHEMA_OR_RELATION_NAME:NO_DEFAULT_SCHEMA", {
      table: quoteIdent(table),
    });
  }
  if (parts.length === 3) {
    catalog = normalizeName(parts[0], "catalog");
  } else if (defaults.catalog !== undefined) {
    catalog = normalizeName(defaults.catalog, "catalog");
  } else {
    throw siltError("INVALID_SCHEMA_OR_RELATION_NAME:NO_DEFAULT_CATALOG", {
      schemaTable: formatQualifiedName(schema, table),
    });
  }
  return { catalog, schema, table };
}

/** A table as callers name it: dotted text ("c.s.t"), or parts already split by a parser. */
export type TableRef = string | readonly string[];

/** The qualified name a TableRef names, missing leading parts filled from `defaults`. */
export function resolveName(name: TableRef, defaults?: NameDefaults): QualifiedName {
  return typeof name === "string"
    ? parseQualifiedName(name, defaults ?? {})
    : qualifyNameParts(name, defaults ?? {});
}
