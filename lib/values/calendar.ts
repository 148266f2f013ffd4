/**
 * Calendar arithmetic in the proleptic Gregorian calendar, as Spark 3+ uses: day numbers since
 * 1970-01-01 <-> civil dates, and microseconds since the epoch <-> (day, microsecond of day).
 * A leaf module: it imports nothing of Silt's.
 */

export const MILLIS_PER_DAY = 86_400_000;
export const MICROS_PER_DAY = 86_400_000_000;
export const MICROS_PER_DAY_N = 86_400_000_000n;

/** Beyond this many days from the epoch, day * MICROS_PER_DAY may exceed 2^53. */
const SAFE_DAYS = 104_000;

/** Microseconds since the epoch: a number while exact, a bigint beyond 2^53. */
export type Micros = number | bigint;

export const isLeapYear = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

export const daysInMonth = (y: number, m: number): number =>
  m === 2 ? (isLeapYear(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;

/** Days since 1970-01-01 of a civil date. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Days since 1970-01-01 of a civil date, or undefined when the month or day does not exist. */
export function checkedDaysFromCivil(year: number, month: number, day: number): number | undefined {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return daysFromCivil(year, month, day);
}

/** [year, month, day] of a day number. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** The instant `microsOfDay` into day `days`, as a number while that is exact. */
export function microsFromDays(days: number, microsOfDay: number): Micros {
  if (Math.abs(days) < SAFE_DAYS) return days * MICROS_PER_DAY + microsOfDay;
  return BigInt(days) * MICROS_PER_DAY_N + BigInt(microsOfDay);
}

/** [day number, microsecond of the day] of an instant, flooring toward the past. */
export function splitMicros(micros: Micros): [number, number] {
  if (typeof micros === "number") {
    let days = Math.floor(micros / MICROS_PER_DAY);
    let tod = micros - days * MICROS_PER_DAY;
    // The float division can round across a day boundary; fix the remainder up exactly.
    if (tod < 0) {
      days--;
      tod += MICROS_PER_DAY;
    } else if (tod >= MICROS_PER_DAY) {
      days++;
      tod -= MICROS_PER_DAY;
    }
    return [days, tod];
  }
  let days = micros / MICROS_PER_DAY_N;
  let tod = micros - days * MICROS_PER_DAY_N;
  if (tod < 0n) {
    days--;
    tod += MICROS_PER_DAY_N;
  }
  return [Number(days), Number(tod)];
}
