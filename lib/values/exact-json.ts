/**
 * JSON text parsed without rounding numbers: JSON.parse turns 9007199254740993 into
 * 9007199254740992 and 0.1000000000000000055511 into 0.1 before anyone sees them, so a BIGINT or
 * DECIMAL column could never receive the value the caller wrote.
 *
 * 1. A number a double holds exactly stays a JS number, as JSON.parse gives it (all of them up to
 *    15 characters, which is most; the rest are checked).
 * 2. An integer beyond ±(2^53 - 1) becomes a bigint.
 * 3. Any other number a double would round (more significant digits than it keeps) becomes a
 *    JsonDecimal holding its text, for the reader to convert exactly or to the nearest double.
 *
 * Everything else is as JSON.parse has it, down to a key given twice (the last one wins).
 */
import { isInteger, isNumber, isSafeNumber, parse, splitNumber } from "lossless-json";

/** A JSON number a double cannot hold exactly, as written (step 3). */
export class JsonDecimal {
  constructor(readonly text: string) {}

  /**
   * The integer this number is (`9.007199254740993e15`), or "fraction" when it is not one. Past
   * 40 digits, beyond every integer type, it stands as ±10^40: enough to fail a range check
   * without building a bigint as long as the exponent asks.
   */
  integer(): bigint | "fraction" {
    // splitNumber drops trailing zeros, so digits past the point are a fraction.
    const { sign, digits, exponent } = splitNumber(this.text);
    const zeros = exponent - (digits.length - 1);
    if (zeros < 0) return "fraction";
    const magnitude = exponent >= 40 ? 10n ** 40n : BigInt(digits) * 10n ** BigInt(zeros);
    return sign === "-" ? -magnitude : magnitude;
  }

  /** Serialized back as its text, so messages that echo a request show what was sent. */
  toJSON(): string {
    return this.text;
  }
}

export function parseExactJson(text: string): unknown {
  if (!needsExactParse(text)) return JSON.parse(text);
  return parse(text, null, { parseNumber: exactNumber, onDuplicateKey: lastWins });
}

/**
 * Whether JSON.parse (several times faster) could round a number of `text`. A number token is a
 * run of NUMBER_CHAR characters with none around it, so every token past step 1's 15 characters
 * is one of the runs of 16 or more found here; when each is a number a double holds, JSON.parse
 * gives exactly what the steps would. Runs inside strings can only send a body the slow way.
 * A loop rather than a regular expression, which took 250 ms over a 5 MB body.
 */
function needsExactParse(text: string): boolean {
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && NUMBER_CHAR[text.charCodeAt(i)] === 1) continue;
    if (i - start > 15) {
      const run = text.slice(start, i);
      if (!isNumber(run) || !isSafeNumber(run)) return true;
    }
    start = i + 1;
  }
  return false;
}

/** 1 for the characters of a JSON number token: digits, `.`, `e`, `E`, `+`, `-`. */
const NUMBER_CHAR = new Uint8Array(128);
for (const c of "0123456789.eE+-") NUMBER_CHAR[c.charCodeAt(0)] = 1;

/** A key given twice: the last value, as JSON.parse has it. */
const lastWins = ({ newValue }: { newValue: unknown }) => newValue;

function exactNumber(text: string): number | bigint | JsonDecimal {
  // Step 1: 15 characters hold at most 15 significant digits, which a double always keeps (an
  // exponent past its range gives ±Infinity or 0, as JSON.parse does).
  if (text.length <= 15) return Number(text);
  if (isInteger(text)) {
    // Step 2.
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return isSafeNumber(text) ? Number(text) : new JsonDecimal(text);
}
