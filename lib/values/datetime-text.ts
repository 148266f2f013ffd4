/**
 * Dates and timestamps as text: the ISO-8601 forms of DESIGN §6 and Spark's casts (parse and
 * format), Spark's display form, and java.sql.Timestamp#toString as Spark's messages print it.
 * A leaf module: it imports nothing of Silt's.
 */

import {
  checkedDaysFromCivil,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  type Micros,
  microsFromDays,
  splitMicros,
} from "./calendar.ts";
import { INT64_MAX, INT64_MIN } from "./int64.ts";

const PAD2 = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));

/** Years print as java.time does: 4 digits, a sign beyond 9999 or below 0. */
function formatYear(y: number): string {
  if (y >= 0 && y <= 9999) return y < 1000 ? String(y).padStart(4, "0") : String(y);
  return y > 9999 ? `+${y}` : `-${String(-y).padStart(4, "0")}`;
}

/** "YYYY-MM-DD" of a day number. */
export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days);
  return `${formatYear(y)}-${PAD2[m]}-${PAD2[d]}`;
}

const DATE_RE = /^\s*([+-]?\d{4,6})-(\d{1,2})-(\d{1,2})(?:[T ].*)?\s*$/s;

/** Value of the digits text[from, to), or -1 if any is not a digit. */
function digitsAt(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Day number of "YYYY-MM-DD" at the start of text, or undefined if it is not exactly there. */
function fastDate(text: string): number | undefined {
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return undefined;
  const y = digitsAt(text, 0, 4);
  const mo = digitsAt(text, 5, 7);
  const d = digitsAt(text, 8, 10);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  return daysFromCivil(y, mo, d);
}

/** Day number of "YYYY-MM-DD" (Spark also ignores a trailing time part); undefined if invalid. */
export function parseDate(text: string): number | undefined {
  if (text.length === 10) {
    const fast = fastDate(text);
    if (fast !== undefined) return fast;
  }
  const m = DATE_RE.exec(text);
  if (!m) return undefined;
  return checkedDaysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
}

const TS_RE =
  /^\s*([+-]?\d{4,6})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:[.,](\d{0,9}))?)?)?)?\s*(?:Z|UTC|GMT|([+-])(\d{1,2})(?::?(\d{2})(?::?(\d{2}))?)?)?\s*$/i;

/**
 * Microseconds of an ISO-8601 / Spark timestamp text. Without a zone the text is UTC; with
 * `ntz` any zone is ignored, as Spark's cast to TIMESTAMP_NTZ does. Undefined if invalid.
 */
export function parseTimestamp(text: string, ntz: boolean): Micros | undefined {
  const fast = fastTimestamp(text, ntz);
  if (fast !== undefined) return fast;
  const m = TS_RE.exec(text);
  if (!m) return undefined;
  const hh = m[4] === undefined ? 0 : Number(m[4]);
  const mi = m[5] === undefined ? 0 : Number(m[5]);
  const ss = m[6] === undefined ? 0 : Number(m[6]);
  const days = checkedDaysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
  if (days === undefined) return undefined;
  if (hh > 23 || mi > 59 || ss > 59) return undefined;
  // Sub-microsecond digits are truncated, as Spark does.
  const frac = m[7] ? Number(m[7].slice(0, 6).padEnd(6, "0")) : 0;
  let offsetSeconds = 0;
  if (m[8] !== undefined) {
    const oh = Number(m[9]);
    const om = m[10] === undefined ? 0 : Number(m[10]);
    const os = m[11] === undefined ? 0 : Number(m[11]);
    if (oh > 18 || om > 59 || os > 59) return undefined;
    if (!ntz) offsetSeconds = (m[8] === "-" ? -1 : 1) * (oh * 3600 + om * 60 + os);
  }
  const micros = microsFromDays(
    days,
    ((hh * 60 + mi) * 60 + ss - offsetSeconds) * 1_000_000 + frac,
  );
  if (typeof micros === "bigint" && (micros < INT64_MIN || micros > INT64_MAX)) return undefined;
  return micros;
}

/**
 * The common shape "YYYY-MM-DD[T ]HH:MM:SS[.f{1,9}][Z|±HH:MM]" without the regex; undefined
 * for anything else (parseTimestamp then tries the general form).
 */
function fastTimestamp(text: string, ntz: boolean): Micros | undefined {
  const len = text.length;
  if (len < 19) return undefined;
  const sep = text.charCodeAt(10);
  if ((sep !== 84 && sep !== 32) || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) {
    return undefined;
  }
  const days = fastDate(text);
  const hh = digitsAt(text, 11, 13);
  const mi = digitsAt(text, 14, 16);
  const ss = digitsAt(text, 17, 19);
  if (days === undefined || hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 59) {
    return undefined;
  }
  let pos = 19;
  let frac = 0;
  if (pos < len && text.charCodeAt(pos) === 46) {
    pos++;
    let digits = 0;
    for (; pos < len; pos++) {
      const d = text.charCodeAt(pos) - 48;
      if (d < 0 || d > 9) break;
      // Sub-microsecond digits are truncated, as Spark does.
      if (digits < 6) frac = frac * 10 + d;
      digits++;
    }
    if (digits === 0 || digits > 9) return undefined;
    for (let k = digits; k < 6; k++) frac *= 10;
  }
  let offsetSeconds = 0;
  if (pos < len) {
    const c = text.charCodeAt(pos);
    if (c === 90 && pos + 1 === len) {
      // "Z"
    } else if ((c === 43 || c === 45) && pos + 6 === len && text.charCodeAt(pos + 3) === 58) {
      const oh = digitsAt(text, pos + 1, pos + 3);
      const om = digitsAt(text, pos + 4, pos + 6);
      if (oh < 0 || oh > 18 || om < 0 || om > 59) return undefined;
      if (!ntz) offsetSeconds = (c === 45 ? -1 : 1) * (oh * 3600 + om * 60);
    } else {
      return undefined;
    }
  }
  return microsFromDays(days, ((hh * 60 + mi) * 60 + ss - offsetSeconds) * 1_000_000 + frac);
}

const PAD3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0"));
/** "HH:MM:SS." per second of the day, filled as seen: most columns reuse a few thousand. */
const HMS: (string | undefined)[] = new Array(86400);

function hmsText(secs: number): string {
  const h = Math.floor(secs / 3600);
  const mi = Math.floor(secs / 60) - h * 60;
  const text = `${PAD2[h]}:${PAD2[mi]}:${PAD2[secs - Math.floor(secs / 60) * 60]}.`;
  HMS[secs] = text;
  return text;
}

function formatTimeOfDay(tod: number): string {
  const secs = Math.floor(tod / 1_000_000);
  const us = tod - secs * 1_000_000;
  const ms = Math.floor(us / 1000);
  return (HMS[secs] ?? hmsText(secs)) + PAD3[ms] + PAD3[us - ms * 1000];
}

/** ISO-8601 with microseconds: "2026-10-03T12:00:00.000000Z", without "Z" when `utc` is false. */
export function formatTimestamp(micros: Micros, utc: boolean): string {
  const [days, tod] = splitMicros(micros);
  return `${formatDate(days)}T${formatTimeOfDay(tod)}${utc ? "Z" : ""}`;
}

/** Spark's text of a timestamp: "YYYY-MM-DD HH:MM:SS[.f...]" with trailing fraction zeros cut. */
export function formatTimestampSpark(micros: Micros): string {
  const [days, tod] = splitMicros(micros);
  const t = formatTimeOfDay(tod);
  const frac = t.slice(9).replace(/0+$/, "");
  return `${formatDate(days)} ${t.slice(0, 8)}${frac ? `.${frac}` : ""}`;
}

/** `yyyy-MM-dd HH:mm:ss` of epoch milliseconds, UTC. */
export function secondsTimestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${PAD2[d.getUTCMonth() + 1]}-${PAD2[d.getUTCDate()]} ` +
    `${PAD2[d.getUTCHours()]}:${PAD2[d.getUTCMinutes()]}:${PAD2[d.getUTCSeconds()]}`
  );
}

/** java.sql.Timestamp#toString of epoch milliseconds in UTC, as Spark prints them in messages. */
export function javaTimestamp(ms: number): string {
  const millis = ((ms % 1000) + 1000) % 1000;
  const frac = millis === 0 ? "0" : String(millis).padStart(3, "0").replace(/0+$/, "");
  return `${secondsTimestamp(ms)}.${frac}`;
}
