/**
 * Suggestions for a misspelt name: the candidates nearest to it by edit distance, for messages
 * that say what the caller probably meant. A leaf module: it imports nothing of Silt's.
 */

/**
 * Names are compared on at most this many characters: no real identifier is longer, and the work
 * grows with the product of the lengths, so a megabyte-long name must not buy seconds of it.
 */
const MAX_COMPARED = 256;

/**
 * Levenshtein distance: insertions, deletions and substitutions, one each. Past MAX_COMPARED
 * characters it is an estimate: the distance of the first MAX_COMPARED characters plus one edit
 * for every character of the longer name beyond them, which only ranks extreme names.
 */
export function editDistance(a: string, b: string): number {
  const beyond = Math.max(a.length, b.length) - MAX_COMPARED;
  if (beyond > 0) {
    return levenshtein(a.slice(0, MAX_COMPARED), b.slice(0, MAX_COMPARED)) + beyond;
  }
  return levenshtein(a, b);
}

function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j] as number;
      prev[j] = Math.min(
        (prev[j] as number) + 1,
        (prev[j - 1] as number) + 1,
        diag + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      diag = tmp;
    }
  }
  return prev[b.length] as number;
}

/** The `limit` candidates nearest to `name`, case-insensitively, nearest first. */
export function nearestNames(name: string, candidates: readonly string[], limit = 5): string[] {
  return candidates
    .map((c) => ({ c, d: editDistance(name.toLowerCase(), c.toLowerCase()) }))
    .sort((x, y) => x.d - y.d)
    .slice(0, limit)
    .map((x) => x.c);
}

/**
 * The candidate `name` is plausibly a typo of, if any: the nearest within a third of its length
 * in edits (at least one). Further than that a suggestion misleads more than it helps (`where`
 * is not a misspelt `schema`).
 */
export function likelyMeant(name: string, candidates: readonly string[]): string | undefined {
  const [nearest] = nearestNames(name, candidates, 1);
  if (nearest === undefined) return undefined;
  const limit = Math.max(1, Math.floor(name.length / 3));
  return editDistance(name.toLowerCase(), nearest.toLowerCase()) <= limit ? nearest : undefined;
}
