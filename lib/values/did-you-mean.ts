/**
 * Suggestions for a misspelt name: the candidates nearest to it by edit distance, for messages
 * that say what the caller probably meant. A leaf module: it imports nothing of Silt's.
 */

/** Levenshtein distance: insertions, deletions and substitutions, one each. */
export function editDistance(a: string, b: string): number {
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
