import { type Figures, judgeAll, type Threshold, type Verdict } from "./thresholds.js";

/**
 * `--abort-on-fail`: whether the run should stop now, judged at each interval's end on the run so
 * far (every series' figures from the end of the warm-up to now, as the final verdict reads the
 * whole window). A threshold on a count that only grows (`errors<10`, `dropped<=0`) is breached
 * for good once breached: it stops the run at once. The others (latencies, rates, shares) could
 * recover, and the first interval of a run is its noisiest: they stop it from the second
 * interval's end on, when the run so far already breaches them. Answers the first breach, or nothing.
 */
export function abortingBreach(
  thresholds: readonly Threshold[],
  soFar: { overall: Figures; scenarios: Record<string, Figures> },
  intervalsEnded: number,
): Verdict | undefined {
  const verdicts = judgeAll(thresholds, soFar);
  return verdicts.find(
    (verdict, i) =>
      !verdict.passed &&
      !Number.isNaN(verdict.actual) &&
      (intervalsEnded >= 2 || isFinalOnceBreached(thresholds[i] as Threshold)),
  );
}

/** An upper bound on a count that only grows: once above it, it stays above. */
function isFinalOnceBreached(threshold: Threshold): boolean {
  return (
    (threshold.metric === "errors" || threshold.metric === "dropped") &&
    !threshold.percent &&
    (threshold.op === "<" || threshold.op === "<=")
  );
}
