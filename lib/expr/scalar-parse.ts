/**
 * Spark's partial dates and timestamps as its casts read them (the rest of cast text is in
 * lib/values/cast-text.ts).
 */
import { checkedDaysFromCivil, MICROS_PER_DAY_N } from "../values/calendar.ts";
import { trimControl } from "../values/cast-text.ts";
import { parseTimestamp } from "../values/datetime-text.ts";

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
