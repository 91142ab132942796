/**
 * When a run could not keep its offered rate, and why: the open model's verdict on itself,
 * printed in the summary, written in the results and shown on the report. Flagged when any
 * measured arrival was dropped (the tool's in-flight cap was reached: requests were out so long
 * that the schedule outran them), or when the answers received inside the window fall below 95%
 * of the arrivals due in it (the server fell behind: a backlog grew, even if nothing was dropped
 * yet). The closed model offers no rate, so it is never flagged.
 */
const ACHIEVED_SHARE = 0.95;

export function overloadReason(figures: {
  offered: number;
  dropped: number;
  offeredPerSecond: number;
  achievedPerSecond: number;
}): string | undefined {
  const reasons: string[] = [];
  if (figures.dropped > 0)
    reasons.push(
      `${figures.dropped} of ${figures.offered} arrivals dropped (${((figures.dropped / Math.max(1, figures.offered)) * 100).toFixed(1)}%: the in-flight cap was reached)`,
    );
  if (figures.offeredPerSecond > 0 && figures.achievedPerSecond < ACHIEVED_SHARE * figures.offeredPerSecond)
    reasons.push(
      `achieved ${figures.achievedPerSecond}/s of ${figures.offeredPerSecond}/s offered (${Math.round((figures.achievedPerSecond / figures.offeredPerSecond) * 100)}%, under ${ACHIEVED_SHARE * 100}%)`,
    );
  return reasons.length > 0 ? reasons.join("; ") : undefined;
}
