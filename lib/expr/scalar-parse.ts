/**
 * Text parsing as Spark's casts do it: Java's trim, floating-point text (with d/f suffixes),
 * Spark's partial dates and timestamps, and the strings that cast to TRUE and FALSE.
 */
import { checkedDaysFromCivil, MICROS_PER_DAY_N } from "../values/calendar.ts";
import { parseTimestamp } from "../values/datetime-text.ts";

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

const SPARK_DATE = /^([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?$/s;

/** Spark's stringToDate: `yyyy`, `yyyy-[m]m`, `yyyy-[m]m-[d]d[T ]…`; undefined if invalid. */
export function parseSparkDate(text: string): number | undefined {
  const m = SPARK_DATE.exec(trimControl(text));
  if (!m) return undefined;
  return checkedDaysFromCivil(Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1));
}

const YEAR_ONLY = /^[+-]?\d{4,7}$/;
const YEAR_MONTH = /^([+-]?\d{4,7})-(\d{1,2})$/;

/** Spark's stringToTimestamp (UTC session time zone); undefined if invalid. */
export function parseSparkTimestamp(text: string, ntz: boolean): bigint | undefined {
  const s = trimControl(text);
  if (YEAR_ONLY.test(s) || YEAR_MONTH.test(s)) {
    const days = parseSparkDate(s);
    return days === undefined ? undefined : BigInt(days) * MICROS_PER_DAY_N;
  }
  const m = parseTimestamp(s, ntz);
  return m === undefined ? undefined : BigInt(m);
}

/** floor(a / b) on bigints. */
export function floorDivN(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

export const TRUE_STRINGS = new Set(["t", "true", "y", "yes", "1"]);
export const FALSE_STRINGS = new Set(["f", "false", "n", "no", "0"]);
