/**
 * Spark SQL type names (`INT`, `DECIMAL(10, 2)`, `ARRAY<STRING>`, `MAP<STRING, INT>`,
 * `STRUCT<a: INT NOT NULL COMMENT 'x', b STRING>`; CHAR(n)/VARCHAR(n) as STRING, since Spark
 * keeps the length only as column metadata) into Delta data types. One grammar serves both
 * readers: type text on its own (API column types, DDL given as text), read here with a small
 * tokenizer, and the SQL parser, which hands the grammar its own tokens so that errors carry
 * SQL positions and the nesting budget.
 */
import { type SiltError, siltError } from "../errors.ts";
import { scanBackQuoted } from "../values/identifiers.ts";
import {
  arrayType,
  checkDecimal,
  checkDuplicateColumns,
  type DataType,
  mapType,
  type PrimitiveTypeName,
  type StructField,
  structField,
  structType,
} from "./schema.ts";

/** What the grammar needs of a token; the SQL lexer's tokens have this shape too. */
export interface TypeNameToken {
  kind: "word" | "quoted" | "string" | "number" | "op" | "eof";
  /** word: as written; quoted: the name unquoted; string: the value unescaped. */
  text: string;
}

/** The token stream the grammar reads, and how its reader reports errors. */
export interface TypeNameCursor<T extends TypeNameToken> {
  peek(): T;
  /** The next token, consumed (the end-of-input token stays). */
  next(): T;
  accept(op: string): boolean;
  expect(op: string): void;
  /** The syntax error at a token. */
  fail(tok: T): SiltError;
  /** Runs fn, placing the errors it throws at tok. */
  at<R>(tok: T, fn: () => R): R;
  /** Runs fn one type level deeper. */
  nested<R>(fn: () => R): R;
}

const PRIMITIVES: Record<string, PrimitiveTypeName> = {
  BOOLEAN: "boolean",
  TINYINT: "byte",
  BYTE: "byte",
  SMALLINT: "short",
  SHORT: "short",
  INT: "integer",
  INTEGER: "integer",
  BIGINT: "long",
  LONG: "long",
  FLOAT: "float",
  REAL: "float",
  DOUBLE: "double",
  DATE: "date",
  TIMESTAMP: "timestamp",
  TIMESTAMP_LTZ: "timestamp",
  TIMESTAMP_NTZ: "timestamp_ntz",
  STRING: "string",
  BINARY: "binary",
};

const isWord = (t: TypeNameToken, upper: string): boolean =>
  t.kind === "word" && t.text.toUpperCase() === upper;

/** Reads one data type from the cursor. */
export function readDataType<T extends TypeNameToken>(c: TypeNameCursor<T>): DataType {
  return c.nested(() => {
    const t = c.next();
    if (t.kind !== "word") throw c.fail(t);
    const name = t.text.toUpperCase();
    switch (name) {
      case "ARRAY": {
        c.expect("<");
        const element = readDataType(c);
        c.expect(">");
        return arrayType(element, true);
      }
      case "MAP": {
        c.expect("<");
        const key = readDataType(c);
        c.expect(",");
        const value = readDataType(c);
        c.expect(">");
        return mapType(key, value, true);
      }
      case "STRUCT": {
        if (c.accept("<>")) return structType([]);
        c.expect("<");
        const fields: StructField[] = [];
        if (!c.accept(">")) {
          do fields.push(readStructField(c));
          while (c.accept(","));
          c.expect(">");
        }
        const s = structType(fields);
        c.at(t, () => checkDuplicateColumns(s));
        return s;
      }
      case "DECIMAL":
      case "DEC":
      case "NUMERIC": {
        let precision = 10;
        let scale = 0;
        if (c.accept("(")) {
          precision = nonNegativeInteger(c);
          if (c.accept(",")) scale = nonNegativeInteger(c);
          c.expect(")");
        }
        return c.at(t, () => checkDecimal(precision, scale));
      }
      case "CHAR":
      case "CHARACTER":
      case "VARCHAR": {
        if (!c.accept("(")) {
          return c.at(t, () => {
            throw siltError("DATATYPE_MISSING_SIZE", { shown: name });
          });
        }
        nonNegativeInteger(c);
        c.expect(")");
        return "string";
      }
      default: {
        const prim = PRIMITIVES[name];
        if (prim !== undefined) return prim;
        // Spark names the type with its parameters: "FOO(1,2)".
        let shown = name;
        if (c.accept("(")) {
          shown += "(";
          while (c.peek().kind !== "eof" && !c.accept(")")) shown += c.next().text;
          shown += ")";
        }
        return c.at(t, () => {
          throw siltError("UNSUPPORTED_DATATYPE:TYPE", {
            name: shown.toUpperCase(),
          });
        });
      }
    }
  });
}

function nonNegativeInteger<T extends TypeNameToken>(c: TypeNameCursor<T>): number {
  const t = c.next();
  if (t.kind !== "number" || !/^\d+$/.test(t.text)) throw c.fail(t);
  return Number(t.text);
}

function readStructField<T extends TypeNameToken>(c: TypeNameCursor<T>): StructField {
  const nameTok = c.next();
  if (nameTok.kind !== "word" && nameTok.kind !== "quoted") throw c.fail(nameTok);
  c.accept(":");
  const type = readDataType(c);
  let nullable = true;
  const metadata: Record<string, unknown> = {};
  for (;;) {
    if (isWord(c.peek(), "NOT")) {
      c.next();
      const t = c.next();
      if (!isWord(t, "NULL")) throw c.fail(t);
      nullable = false;
    } else if (isWord(c.peek(), "COMMENT")) {
      c.next();
      const t = c.next();
      if (t.kind !== "string") throw c.fail(t);
      metadata.comment = t.text;
    } else {
      return structField(nameTok.text, type, nullable, metadata);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Type text on its own

interface TextToken extends TypeNameToken {
  /** Offset in the text. */
  pos: number;
}

function syntaxError(src: string, pos: number): SiltError {
  const near =
    pos >= src.length ? "end of input" : `'${src.slice(pos).split(/[\s<>(),:]/)[0] || src[pos]}'`;
  return siltError("PARSE_SYNTAX_ERROR:NEAR", { near });
}

function tokenize(src: string): TextToken[] {
  const out: TextToken[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const start = i;
    if (/\s/.test(c)) {
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      while (i < src.length && /[A-Za-z0-9_]/.test(src[i])) i++;
      out.push({ kind: "word", text: src.slice(start, i), pos: start });
    } else if (/[0-9]/.test(c)) {
      while (i < src.length && /[0-9]/.test(src[i])) i++;
      out.push({ kind: "number", text: src.slice(start, i), pos: start });
    } else if (c === "`") {
      const quoted = scanBackQuoted(src, start);
      if (!quoted) throw syntaxError(src, start);
      out.push({ kind: "quoted", text: quoted.name, pos: start });
      i = quoted.end;
    } else if (c === "'" || c === '"') {
      let text = "";
      i++;
      for (;;) {
        if (i >= src.length) throw syntaxError(src, start);
        if (src[i] === "\\" && i + 1 < src.length) {
          text += src[i + 1];
          i += 2;
          continue;
        }
        if (src[i] === c) {
          i++;
          break;
        }
        text += src[i++];
      }
      out.push({ kind: "string", text, pos: start });
    } else if ("<>(),:".includes(c)) {
      out.push({ kind: "op", text: c, pos: start });
      i++;
    } else {
      throw syntaxError(src, i);
    }
  }
  out.push({ kind: "eof", text: "", pos: src.length });
  return out;
}

/** Parses a Spark SQL type name given as text, case-insensitively. */
export function parseSparkTypeName(text: string): DataType {
  const tokens = tokenize(text);
  let p = 0;
  const peek = () => tokens[p];
  const cursor: TypeNameCursor<TextToken> = {
    peek,
    next: () => (p < tokens.length - 1 ? tokens[p++] : tokens[p]),
    accept: (op) => {
      const t = peek();
      if (t.kind !== "op" || t.text !== op) return false;
      p++;
      return true;
    },
    expect: (op) => {
      if (!cursor.accept(op)) throw syntaxError(text, peek().pos);
    },
    fail: (tok) => syntaxError(text, tok.pos),
    at: (_tok, fn) => fn(),
    nested: (fn) => fn(),
  };
  const result = readDataType(cursor);
  if (peek().kind !== "eof") throw syntaxError(text, peek().pos);
  return result;
}
