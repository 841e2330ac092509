/**
 * The known word a slip most likely meant (`lsit` → `list`, `--modle` →
 * `--model`), or undefined when none is close enough to be worth offering.
 */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const target = word.toLowerCase();
  // A longer word tolerates more slips; a short one only one, or every two-letter word would match.
  const allowed = Math.max(1, Math.floor(target.length / 4));
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(target, candidate.toLowerCase());
    if (distance <= allowed && (!best || distance < best.distance)) best = { word: candidate, distance };
  }
  return best?.word;
}

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`; a swap counts once, as typing slips do. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
