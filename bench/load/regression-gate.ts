import type { LoadResult } from "./load-result.js";
import { decodeHistogram, percentileMs } from "./recorder.js";
import { percentileOf } from "./thresholds.js";
import { UsageError } from "./usage-error.js";

/**
 * `--compare A.json B.json --max-regression p99=10%`: B (the new run) fails when a figure is worse
 * than A's (the baseline) by more than the share given: a latency (any percentile, max, mean) or
 * the errors higher, the rate lower. `SERIES.METRIC=N%` limits one series; without one, every
 * series both runs have. Several limits: the flag again, or a comma list.
 */
export interface RegressionLimit {
  text: string;
  series?: string;
  metric: string;
  /** The share allowed, in percent of A's figure. */
  percent: number;
}

const SYNTAX = /^(?:([a-z][a-z-]*)\.)?(p\d+(?:\.\d+)?|max|mean|errors|rate)=(\d+(?:\.\d+)?)%$/;

export function parseRegressionLimits(texts: readonly string[]): RegressionLimit[] {
  return texts
    .flatMap((text) => text.split(","))
    .map((part) => {
      const text = part.trim();
      const match = SYNTAX.exec(text);
      if (!match)
        throw new UsageError(
          `--max-regression takes [SERIES.]METRIC=N% (metrics: pNN, max, mean, errors, rate), e.g. p99=10%; got '${text}'`,
        );
      const [, series, metric, percent] = match as unknown as [string, string | undefined, string, string];
      return { text, ...(series !== undefined && { series }), metric, percent: Number(percent) };
    });
}

type Series = LoadResult["scenarios"][string];

function read(series: Series, metric: string): number {
  if (metric === "errors") return series.errors;
  if (metric === "rate") return series.ratePerSecond;
  const summarized = (series.latencyMs as Record<string, number | undefined>)[metric];
  if (summarized !== undefined) return summarized;
  return percentileMs(decodeHistogram(series.histogram), percentileOf(metric) as number);
}

export interface RegressionVerdict {
  line: string;
  passed: boolean;
}

/** Each limit on each series both runs have: the change from A to B against the limit. */
export function regressionVerdicts(
  a: LoadResult,
  b: LoadResult,
  limits: readonly RegressionLimit[],
): RegressionVerdict[] {
  const verdicts: RegressionVerdict[] = [];
  for (const limit of limits) {
    const names = (limit.series === undefined ? Object.keys(a.scenarios) : [limit.series]).filter(
      (name) => a.scenarios[name] && b.scenarios[name],
    );
    if (names.length === 0) {
      verdicts.push({ line: `regression ${limit.text}: no series in both runs`, passed: false });
      continue;
    }
    for (const name of names) {
      const before = read(a.scenarios[name] as Series, limit.metric);
      const after = read(b.scenarios[name] as Series, limit.metric);
      // A rate regresses down; latencies and errors up.
      const worse = limit.metric === "rate" ? before - after : after - before;
      const change = before === 0 ? (worse > 0 ? Number.POSITIVE_INFINITY : 0) : (worse / before) * 100;
      const passed = change <= limit.percent;
      const shown = Number.isFinite(change)
        ? `${change >= 0 ? "+" : ""}${change.toFixed(1)}% worse`
        : "from 0";
      verdicts.push({
        line: `regression ${name} ${limit.metric}: ${before} -> ${after} (${shown}, at most ${limit.percent}%): ${passed ? "passed" : "FAILED"}`,
        passed,
      });
    }
  }
  return verdicts;
}
