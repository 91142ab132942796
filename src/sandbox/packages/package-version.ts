/**
 * Daml package versions (`1.10.0`) order by their numeric segments, not as text, and a
 * shorter version that is a prefix of a longer one comes first (`1.0` < `1.0.1`), as
 * Canton's `PackageVersion` orders them.
 */
export function compareVersions(a: string, b: string): number {
  const left = a.split(".").map(Number);
  const right = b.split(".").map(Number);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const diff = left[i]! - right[i]!;
    if (diff !== 0) return diff < 0 ? -1 : 1;
  }
  return Math.sign(left.length - right.length);
}
