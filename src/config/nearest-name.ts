/**
 * Edit distance with adjacent transpositions (optimal string alignment): `prot` is one edit
 * from `port`, as a typist would count it.
 */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (d[i - 1]?.[j] ?? 0) + 1,
        (d[i]?.[j - 1] ?? 0) + 1,
        (d[i - 1]?.[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (d[i - 2]?.[j - 2] ?? 0) + 1);
      }
      (d[i] as number[])[j] = best;
    }
  }
  return d[a.length]?.[b.length] ?? 0;
}

/** A name one may mean, and the spellings of it that a typo is compared with. */
export interface Candidate {
  /** What the suggestion prints. */
  readonly name: string;
  /** Whole spellings: the full key, a short alias. */
  readonly spellings: readonly string[];
  /**
   * Parts one may write instead of the whole (a key's last segments): half an edit farther,
   * so that `port` means the key whose alias it is rather than every key ending in `.port`.
   */
  readonly tails?: readonly string[];
}

const TAIL_PENALTY = 0.5;

/**
 * The candidates nearest to `typed` (several when tied), or none when even the nearest is too
 * far to be a typo: more than a third of the typed length, at least 2 edits allowed.
 */
export function nearestNames(typed: string, candidates: readonly Candidate[]): string[] {
  const allowed = Math.max(2, Math.floor(typed.length / 3));
  let best = Number.POSITIVE_INFINITY;
  let names: string[] = [];
  for (const candidate of candidates) {
    const distance = Math.min(
      ...candidate.spellings.map((spelling) => editDistance(typed, spelling)),
      ...(candidate.tails ?? []).map((tail) => editDistance(typed, tail) + TAIL_PENALTY),
    );
    if (distance > allowed || distance > best) continue;
    if (distance < best) {
      best = distance;
      names = [];
    }
    if (!names.includes(candidate.name)) names.push(candidate.name);
  }
  return names;
}

/** ` Did you mean X?`, ` Did you mean X or Y?`, or nothing. */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return "";
  const shown = names.slice(0, 3);
  const list = shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(", ")} or ${shown.at(-1)}`;
  return `; did you mean ${list}?`;
}
