/**
 * Spark SQL tokens. Follows Spark's lexer (SqlBaseLexer.g4) where users can see the difference:
 * keywords are case-insensitive words, numbers carry their suffix kind (1L, 1S, 1Y, 1D, 1F, 1BD),
 * strings unescape the way Spark does by default (backslash escapes, doubled quotes, R'raw'),
 * adjacent string literals concatenate, and bracketed comments nest.
 *
 * Every failure is a SiltError whose message ends with Spark's ` (line L, pos P)`, P 0-based.
 */
import { type ErrorCondition, type ParamsOf, type SiltError, siltError } from "../errors.ts";
import { scanBackQuoted } from "../values/identifiers.ts";
import type { Pos } from "./ast.ts";

export type NumberKind =
  | "integer"
  | "bigint"
  | "smallint"
  | "tinyint"
  | "decimal"
  | "exponent"
  | "double"
  | "float"
  | "bigdecimal";

export type TokenKind = "word" | "quoted" | "string" | "number" | "op" | "eof";

export interface Token {
  kind: TokenKind;
  /**
   * word: as written; quoted: the back-quoted name unescaped; string: the unescaped value
   * (adjacent literals already joined); number: as written, suffix included; op: the operator.
   */
  text: string;
  /** Upper-cased text of a word, for keyword tests; "" for other kinds. */
  upper: string;
  numberKind?: NumberKind;
  /** Source offsets [start, end) of the token (a joined string spans all its parts). */
  start: number;
  end: number;
  pos: Pos;
}

// ---------------------------------------------------------------------------------------------
// Errors shared with the parser

/** A parse-time error at `pos`. */
export function parseError<K extends ErrorCondition>(
  pos: Pos,
  condition: K,
  ...params: ParamsOf<K>
): SiltError {
  return atPosition(siltError(condition, ...params), pos);
}

/**
 * `err` with Spark's position suffix (`pos` is 0-based within the line there); one without a
 * SQLSTATE gets Spark's syntax-error state.
 */
export function atPosition(err: SiltError, pos: Pos): SiltError {
  return err.withMessage(
    `${err.message} (line ${pos.line}, pos ${pos.column - 1})`,
    err.sqlstate ?? "42601",
  );
}

/** Longest token text an error message repeats (a multi-megabyte literal stays out of it). */
const MAX_SHOWN = 100;

/** The text Spark shows for a token in "Syntax error at or near …". */
export function tokenDisplay(src: string, tok: Token): string {
  if (tok.kind === "eof") return "end of input";
  const text = src.slice(tok.start, tok.end);
  return `'${text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text}'`;
}

/** PARSE_SYNTAX_ERROR at a token; `hint` follows Spark's shape (": missing ')'"). */
export function syntaxError(src: string, tok: Token, hint = ""): SiltError {
  return parseError(tok.pos, "PARSE_SYNTAX_ERROR:NEAR_TOKEN", {
    near: tokenDisplay(src, tok),
    hint,
  });
}

// ---------------------------------------------------------------------------------------------
// Lexer

const OPERATORS_3 = ["<=>"];
const OPERATORS_2 = ["<>", "<=", ">=", "==", "!=", "||", "::"];
const OPERATORS_1 = "=<>+-*/%&|^~(),.;:[]@!?{}";

const isDigit = (c: string) => c >= "0" && c <= "9";
const WORD_CHAR = /[\p{L}0-9_]/u;
const isWordChar = (c: string | undefined) => c !== undefined && WORD_CHAR.test(c);
const WORD_START = /[\p{L}_]/u;
const isSpace = (c: string) => /\s/.test(c);
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);

/** Suffix forms a run of word characters starting with a digit can take as a number. */
const SUFFIXED_INT = /^(\d+)([LSY])$/i;
const SUFFIXED_FLOATING = /^(\d+)(?:E(\d+))?(D|F|BD)$/i;
const EXPONENT_INT = /^\d+E\d+$/i;

export class Lexer {
  private i = 0;
  private readonly lineStarts: number[] = [0];

  constructor(readonly src: string) {
    for (let k = 0; k < src.length; k++) {
      if (src.charCodeAt(k) === 10) this.lineStarts.push(k + 1);
    }
  }

  /** 1-based line and column of a source offset. */
  posAt(offset: number): Pos {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.lineStarts[lo] + 1 };
  }

  /** All tokens up to and including the end-of-input token. */
  tokenize(): Token[] {
    const out: Token[] = [];
    for (;;) {
      const t = this.next();
      out.push(t);
      if (t.kind === "eof") return out;
    }
  }

  next(): Token {
    this.skipTrivia();
    const src = this.src;
    const start = this.i;
    if (start >= src.length) return this.token("eof", "", start, start);
    const c = src[start];

    if ((c === "r" || c === "R") && (src[start + 1] === "'" || src[start + 1] === '"')) {
      return this.stringToken();
    }
    if (c === "'" || c === '"') return this.stringToken();
    if (c === "`") return this.quotedIdentifier();
    if (isDigit(c) || (c === "." && isDigit(src[start + 1] ?? ""))) {
      const num = this.numberOrWord();
      if (num) return num;
    }
    if (WORD_START.test(c)) {
      let j = start + 1;
      while (j < src.length && isWordChar(src[j])) j++;
      this.i = j;
      return this.token("word", src.slice(start, j), start, j);
    }
    for (const op of OPERATORS_3) {
      if (src.startsWith(op, start)) return this.op(op);
    }
    for (const op of OPERATORS_2) {
      if (src.startsWith(op, start)) return this.op(op);
    }
    if (OPERATORS_1.includes(c)) return this.op(c);
    // Anything else (a stray `$`, `#`, control character) cannot start a token.
    const bad = this.token("op", c, start, start + 1);
    throw syntaxError(src, bad);
  }

  private token(
    kind: TokenKind,
    text: string,
    start: number,
    end: number,
    numberKind?: NumberKind,
  ): Token {
    const t: Token = {
      kind,
      text,
      upper: kind === "word" ? text.toUpperCase() : "",
      start,
      end,
      pos: this.posAt(start),
    };
    if (numberKind !== undefined) t.numberKind = numberKind;
    return t;
  }

  private op(text: string): Token {
    const start = this.i;
    this.i += text.length;
    return this.token("op", text, start, this.i);
  }

  /** Whitespace, `-- line` comments and nested bracketed comments (hints count as comments). */
  private skipTrivia(): void {
    const src = this.src;
    while (this.i < src.length) {
      const c = src[this.i];
      if (isSpace(c)) {
        this.i++;
      } else if (c === "-" && src[this.i + 1] === "-") {
        const nl = src.indexOf("\n", this.i);
        this.i = nl < 0 ? src.length : nl + 1;
      } else if (c === "/" && src[this.i + 1] === "*") {
        this.skipBracketedComment();
      } else {
        return;
      }
    }
  }

  private skipBracketedComment(): void {
    const src = this.src;
    const open = this.i;
    let depth = 0;
    let j = this.i;
    while (j < src.length) {
      if (src[j] === "/" && src[j + 1] === "*" && (depth === 0 || src[j + 2] !== "+")) {
        depth++;
        j += 2;
      } else if (src[j] === "*" && src[j + 1] === "/") {
        depth--;
        j += 2;
        if (depth === 0) {
          this.i = j;
          return;
        }
      } else {
        j++;
      }
    }
    throw parseError(this.posAt(open), "UNCLOSED_BRACKETED_COMMENT");
  }

  /** One string literal plus any that follow it (Spark joins `'a' 'b'` into 'ab'). */
  private stringToken(): Token {
    const start = this.i;
    let value = this.readString();
    for (;;) {
      const save = this.i;
      this.skipTrivia();
      const c = this.src[this.i];
      const raw =
        (c === "r" || c === "R") && (this.src[this.i + 1] === "'" || this.src[this.i + 1] === '"');
      if (c === "'" || c === '"' || raw) {
        value += this.readString();
      } else {
        this.i = save;
        break;
      }
    }
    return this.token("string", value, start, this.i);
  }

  private readString(): string {
    const src = this.src;
    const start = this.i;
    let raw = false;
    if (src[this.i] === "r" || src[this.i] === "R") {
      raw = true;
      this.i++;
    }
    const quote = src[this.i];
    this.i++;
    let out = "";
    for (;;) {
      if (this.i >= src.length) {
        const tok = this.token("string", "", start, src.length);
        throw syntaxError(src, tok, ": unclosed string literal");
      }
      const c = src[this.i];
      if (c === quote) {
        // A doubled quote stands for one quote character (not in raw strings).
        if (!raw && src[this.i + 1] === quote) {
          out += quote;
          this.i += 2;
          continue;
        }
        this.i++;
        return out;
      }
      if (c === "\\" && !raw) {
        const [text, width] = unescapeAt(src, this.i);
        out += text;
        this.i += width;
        continue;
      }
      out += c;
      this.i++;
    }
  }

  private quotedIdentifier(): Token {
    const start = this.i;
    const quoted = scanBackQuoted(this.src, start);
    if (!quoted) {
      throw syntaxError(
        this.src,
        this.token("quoted", "", start, this.src.length),
        ": unclosed identifier",
      );
    }
    this.i = quoted.end;
    return this.token("quoted", quoted.name, start, quoted.end);
  }

  /**
   * A number, or null when the characters form a word instead: Spark's IDENTIFIER rule allows
   * leading digits (`1a`), and the longest match wins, with number rules first on ties.
   */
  private numberOrWord(): Token | null {
    const src = this.src;
    const start = this.i;
    let j = start;
    while (j < src.length && isDigit(src[j])) j++;
    const intEnd = j;

    if (src[j] === ".") {
      const decimal = this.decimalAt(start, intEnd);
      if (decimal) return decimal;
      if (intEnd === start) return null;
      // "2.x" is not a decimal: the integer ends before the dot.
      this.i = intEnd;
      return this.token("number", src.slice(start, intEnd), start, intEnd, "integer");
    }
    if (intEnd === start) return null;

    let w = intEnd;
    while (w < src.length && isWordChar(src[w])) w++;
    const word = src.slice(start, w);
    let kind: NumberKind | undefined;
    let end = w;
    if (w === intEnd) {
      kind = "integer";
    } else if (SUFFIXED_INT.test(word)) {
      const s = word[word.length - 1].toUpperCase();
      kind = s === "L" ? "bigint" : s === "S" ? "smallint" : "tinyint";
    } else if (SUFFIXED_FLOATING.test(word)) {
      kind = suffixKind(word);
    } else if (EXPONENT_INT.test(word)) {
      kind = "exponent";
    } else if (
      /^\d+E$/i.test(word) &&
      (src[w] === "+" || src[w] === "-") &&
      isDigit(src[w + 1] ?? "")
    ) {
      // "1e-3": the sign stopped the word; the exponent continues past it.
      let k = w + 1;
      while (k < src.length && isDigit(src[k])) k++;
      const suffix = /^(BD|D|F)/i.exec(src.slice(k, k + 2));
      let sEnd = k;
      if (suffix && !isWordChar(src[k + suffix[1].length])) sEnd = k + suffix[1].length;
      kind = sEnd === k ? "exponent" : suffixKind(src.slice(start, sEnd));
      end = sEnd;
    }
    if (kind === undefined) {
      // Digits then letters: a word such as `1a`, as Spark's IDENTIFIER allows.
      this.i = w;
      return this.token("word", word, start, w);
    }
    this.i = end;
    return this.token("number", src.slice(start, end), start, end, kind);
  }

  /** `1.5`, `.5`, `1.`, `1.5e3`, `1.5D`, `1.5BD`…, valid only when no word character follows. */
  private decimalAt(start: number, intEnd: number): Token | null {
    const src = this.src;
    let j = intEnd + 1;
    while (j < src.length && isDigit(src[j])) j++;
    if (intEnd === start && j === intEnd + 1) return null;
    let kind: NumberKind = "decimal";
    if (
      (src[j] === "e" || src[j] === "E") &&
      (isDigit(src[j + 1] ?? "") ||
        ((src[j + 1] === "+" || src[j + 1] === "-") && isDigit(src[j + 2] ?? "")))
    ) {
      j += src[j + 1] === "+" || src[j + 1] === "-" ? 2 : 1;
      while (j < src.length && isDigit(src[j])) j++;
      kind = "exponent";
    }
    const suffix = /^(BD|D|F)/i.exec(src.slice(j, j + 2));
    if (suffix) {
      const s = suffix[1].toUpperCase();
      kind = s === "BD" ? "bigdecimal" : s === "D" ? "double" : "float";
      j += s.length;
    }
    if (isWordChar(src[j])) return null;
    this.i = j;
    return this.token("number", src.slice(start, j), start, j, kind);
  }
}

function suffixKind(text: string): NumberKind {
  const upper = text.toUpperCase();
  if (upper.endsWith("BD")) return "bigdecimal";
  return upper.endsWith("D") ? "double" : "float";
}

/**
 * One backslash escape at src[i] as Spark's unescapeSQLString reads it: \u + 4 hex digits, \U + 8 hex digits,
 * three octal digits, \0 \b \n \r \t \Z, `\%` and `\_` kept with their backslash (LIKE needs
 * them), anything else stands for itself. Returns the text and the characters consumed.
 */
function unescapeAt(src: string, i: number): [string, number] {
  const n = src[i + 1];
  if (n === undefined) return ["\\", 1];
  if (n === "u" && [2, 3, 4, 5].every((k) => isHex(src[i + k]))) {
    return [String.fromCharCode(Number.parseInt(src.slice(i + 2, i + 6), 16)), 6];
  }
  if (n === "U" && [2, 3, 4, 5, 6, 7, 8, 9].every((k) => isHex(src[i + k]))) {
    const cp = Number.parseInt(src.slice(i + 2, i + 10), 16);
    if (cp <= 0x10ffff) return [String.fromCodePoint(cp), 10];
  }
  if (/[0-3]/.test(n) && /[0-7]/.test(src[i + 2] ?? "") && /[0-7]/.test(src[i + 3] ?? "")) {
    return [String.fromCharCode(Number.parseInt(src.slice(i + 1, i + 4), 8)), 4];
  }
  switch (n) {
    case "0":
      return ["\u0000", 2];
    case "b":
      return ["\b", 2];
    case "n":
      return ["\n", 2];
    case "r":
      return ["\r", 2];
    case "t":
      return ["\t", 2];
    case "Z":
      return ["\u001A", 2];
    case "%":
      return ["\\%", 2];
    case "_":
      return ["\\_", 2];
    default:
      return [n, 2];
  }
}

/** Tokens of a whole text (convenience for tests and tools). */
export const tokenize = (src: string): Token[] => new Lexer(src).tokenize();
