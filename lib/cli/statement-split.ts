/**
 * A script cut into statements at the `;` tokens of the SQL lexer, so a `;` inside a string, a
 * comment or a back-quoted name does not end a statement.
 *
 * 1. Read tokens up to each `;`; the text from the first of them to the `;` is a statement
 *    (comments before it are left out; `;;` or a comment alone make none).
 * 2. What follows the last `;` is the tail: an unfinished statement the shell waits to see
 *    completed, or a script's last statement written without its `;`.
 * 3. Text the lexer cannot read (an unclosed string or comment, a stray `$`) stops the cut: from
 *    the start of its statement it is all tail, and the server answers it with the lexer's
 *    error and position, as it would the same statement sent alone. The tail's kind tells
 *    whether more input could still mend it ("open": a string, comment or name still open at
 *    the end) or not ("unreadable").
 */
import { Lexer } from "../expr/lexer.ts";

export interface Statement {
  text: string;
  /** 1-based line of the script the statement starts on. */
  line: number;
}

export interface Tail extends Statement {
  kind: "unfinished" | "open" | "unreadable";
}

export interface SplitScript {
  statements: Statement[];
  /** The text after the last `;` when it holds a token (steps 2 and 3), else undefined. */
  tail?: Tail;
}

export function splitStatements(src: string): SplitScript {
  const lexer = new Lexer(src);
  const statements: Statement[] = [];
  let start = 0;
  /** Where the statement's first token starts: comments before it are not part of it. */
  let first: number | undefined;
  const piece = (from: number, end: number): Statement => ({
    text: src.slice(from, end).trim(),
    line: lexer.posAt(from).line,
  });
  for (;;) {
    let tok: ReturnType<Lexer["next"]>;
    try {
      tok = lexer.next();
    } catch {
      const from = first ?? start + (src.length - start - src.slice(start).trimStart().length);
      const kind = runsToEnd(src.slice(start)) ? "open" : "unreadable";
      return { statements, tail: { ...piece(from, src.length), kind } };
    }
    if (tok.kind === "eof") {
      return {
        statements,
        tail: first === undefined ? undefined : { ...piece(first, src.length), kind: "unfinished" },
      };
    }
    if (tok.kind === "op" && tok.text === ";") {
      if (first !== undefined) statements.push(piece(first, tok.start));
      start = tok.end;
      first = undefined;
    } else {
      first ??= tok.start;
    }
  }
}

/**
 * Whether text the lexer refused would read once more text is added: it opens a string, a
 * bracketed comment or a back-quoted name that is still open at the end. Closing each candidate
 * and lexing again tells, without knowing the lexer's errors by their messages.
 */
function runsToEnd(text: string): boolean {
  return ["'", '"', "`", "*/"].some((close) => {
    try {
      new Lexer(`${text}${close}`).tokenize();
      return true;
    } catch {
      return false;
    }
  });
}
