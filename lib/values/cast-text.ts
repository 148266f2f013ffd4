/**
 * Text as Spark's casts read it, wherever text becomes a value (CAST, JSON rows): Java's trim,
 * Double.parseDouble's grammar with Spark's special literals, and the strings that are booleans.
 */

/** Trims what Java's String.trim trims (every char <= U+0020), as Spark's casts do. */
export function trimControl(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 32) start++;
  while (end > start && s.charCodeAt(end - 1) <= 32) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[dDfF]?$/;

/** Double.parseDouble plus Spark's special literals; undefined when malformed. */
export function parseFloating(text: string): number | undefined {
  const s = trimControl(text);
  if (FLOAT_TEXT.test(s)) {
    const last = s.charCodeAt(s.length - 1);
    return Number(last > 57 ? s.slice(0, -1) : s);
  }
  switch (s.toLowerCase()) {
    case "inf":
    case "+inf":
    case "infinity":
    case "+infinity":
      return Number.POSITIVE_INFINITY;
    case "-inf":
    case "-infinity":
      return Number.NEGATIVE_INFINITY;
    case "nan":
      return Number.NaN;
    default:
      return undefined;
  }
}

const TRUE_STRINGS = new Set(["t", "true", "y", "yes", "1"]);
const FALSE_STRINGS = new Set(["f", "false", "n", "no", "0"]);

/** The boolean a string casts to, or undefined when it is neither. */
export function parseBoolean(text: string): boolean | undefined {
  const s = trimControl(text).toLowerCase();
  if (TRUE_STRINGS.has(s)) return true;
  if (FALSE_STRINGS.has(s)) return false;
  return undefined;
}
