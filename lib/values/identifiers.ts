/**
 * Identifiers as Spark writes them: back-quoted (`a``b`) when printed in messages or SQL text,
 * and the scanner of a back-quoted identifier every reader of names shares. A leaf module: it
 * imports nothing of Silt's.
 */

const SIMPLE_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One name part back-quoted, a back-quote inside doubled: `a``b`. */
export const quoteIdent = (name: string): string => `\`${name.replaceAll("`", "``")}\``;

/** `a`.`b`: a nested column path or a qualified name, as Spark prints them in messages. */
export const quotePath = (path: readonly string[]): string => path.map(quoteIdent).join(".");

/** The name bare when it reads back as itself unquoted, else back-quoted. */
export const quoteIfNeeded = (name: string): string =>
  SIMPLE_IDENTIFIER.test(name) ? name : quoteIdent(name);

/**
 * The back-quoted identifier whose opening back-quote is at `text[start]`: its name (`` read as
 * one back-quote) and the index just past its closing back-quote; undefined when it is not
 * closed.
 */
export function scanBackQuoted(
  text: string,
  start: number,
): { name: string; end: number } | undefined {
  let name = "";
  let i = start + 1;
  for (;;) {
    if (i >= text.length) return undefined;
    if (text[i] === "`") {
      if (text[i + 1] !== "`") return { name, end: i + 1 };
      name += "`";
      i += 2;
    } else {
      name += text[i++];
    }
  }
}
