import { decodeHistogram, type PercentileName, percentileMs } from "./recorder.js";
import { UsageError } from "./usage-error.js";

/**
 * `--threshold` pass/fail criteria, k6's idea in a line: `[SCENARIO.]METRIC OP VALUE`, e.g.
 * `p95<50ms` (any percentile: `p75`, `p99.99`), `submit-and-wait.p99.9<=200ms`, `errors<1%`,
 * `reads.errors<5`, `rate>=190`, `dropped<1%` (arrivals not sent: the tool's in-flight cap was
 * reached), `achieved>=95%` (answers per second against the offered rate), `updates.p99<100ms`
 * (the subscribers' lag; `completions-stream.` the completion subscribers', `acs-stream.` the ACS
 * readers' reads). Without a scenario a threshold reads the figures of all request scenarios
 * together (the streams' figures are read only by their names).
 */
export interface Threshold {
  /** As given, to name it when breached. */
  text: string;
  scenario?: string;
  metric: Metric;
  op: "<" | "<=" | ">" | ">=";
  /**
   * Milliseconds for latencies, requests per second for rate and achieved (unless a percentage),
   * a count or a percentage for errors and dropped.
   */
  value: number;
  percent: boolean;
}

type Metric = PercentileName | "max" | "mean" | "errors" | "rate" | "dropped" | "achieved";

/** The metrics that only the open model has (a schedule to offer, arrivals to drop). */
export const OPEN_MODEL_METRICS: readonly Metric[] = ["dropped", "achieved"];

const UNITS_MS: Record<string, number> = { us: 0.001, µs: 0.001, ms: 1, s: 1000 };

const SYNTAX =
  /^(?:([a-z][a-z-]*)\.)?(p\d+(?:\.\d+)?|max|mean|errors|rate|dropped|achieved)\s*(<=|>=|<|>)\s*(\d+(?:\.\d+)?)\s*(ms|us|µs|s|%|\/s)?$/;

const EXAMPLES = "e.g. 'p95<50ms', 'submit-and-wait.p99.9<200ms', 'errors<1%', 'rate>=190', 'dropped<1%'";

export function parseThreshold(text: string): Threshold {
  const match = SYNTAX.exec(text.trim());
  if (!match)
    throw new UsageError(
      `--threshold '${text}' is not [SCENARIO.]METRIC<VALUE (metrics: any percentile pNN or pNN.N, max, mean, errors, rate, dropped, achieved), ${EXAMPLES}`,
    );
  const [, scenario, metric, op, number, unit] = match as unknown as [
    string,
    string | undefined,
    Metric,
    Threshold["op"],
    string,
    string | undefined,
  ];
  const percentile = percentileOf(metric);
  if (percentile !== undefined && !(percentile > 0 && percentile <= 100))
    throw new UsageError(`--threshold '${text}': a percentile is above 0 and at most 100`);
  const latency = percentile !== undefined || metric === "max" || metric === "mean";
  if (latency && (unit === undefined || !(unit in UNITS_MS)))
    throw new UsageError(`--threshold '${text}': a latency needs a unit (us, ms or s)`);
  if ((metric === "errors" || metric === "dropped") && unit !== undefined && unit !== "%")
    throw new UsageError(`--threshold '${text}': ${metric} take a count or a percentage`);
  if (metric === "rate" && unit !== undefined && unit !== "/s")
    throw new UsageError(`--threshold '${text}': a rate is in requests per second`);
  if (metric === "achieved" && unit !== undefined && unit !== "/s" && unit !== "%")
    throw new UsageError(`--threshold '${text}': achieved is per second or a percentage of the offered rate`);
  return {
    text,
    ...(scenario !== undefined && { scenario }),
    metric,
    op,
    value: Number(number) * (latency ? (UNITS_MS[unit as string] as number) : 1),
    percent: unit === "%",
  };
}

/** `p99.9` -> 99.9; undefined for a metric that is not a percentile. */
export function percentileOf(metric: string): number | undefined {
  return /^p\d+(\.\d+)?$/.test(metric) ? Number(metric.slice(1)) : undefined;
}

/** The figures a threshold is read from: one scenario's, or all request scenarios' together. */
export interface Figures {
  requests: number;
  errors: number;
  ratePerSecond: number;
  latencyMs: Partial<Record<string, number>>;
  /** Compressed base64 (µs): where a percentile the summary lacks is read from. */
  histogram?: string;
  /** The open model's: arrivals due in the window, those not sent, answers per second in it. */
  offered?: number;
  dropped?: number;
  offeredPerSecond?: number;
  achievedPerSecond?: number;
}

export interface Verdict {
  threshold: string;
  actual: number;
  passed: boolean;
}

/** What the threshold reads, or NaN where the figures do not have it (a breach: nothing to pass on). */
function measure(threshold: Threshold, figures: Figures): number {
  switch (threshold.metric) {
    case "errors": {
      const attempts = figures.requests + figures.errors;
      if (!threshold.percent) return figures.errors;
      return attempts === 0 ? 0 : (figures.errors / attempts) * 100;
    }
    case "rate":
      return figures.ratePerSecond;
    case "dropped": {
      if (figures.dropped === undefined || figures.offered === undefined) return Number.NaN;
      if (!threshold.percent) return figures.dropped;
      return figures.offered === 0 ? 0 : (figures.dropped / figures.offered) * 100;
    }
    case "achieved": {
      if (figures.achievedPerSecond === undefined || figures.offeredPerSecond === undefined)
        return Number.NaN;
      if (!threshold.percent) return figures.achievedPerSecond;
      return figures.offeredPerSecond === 0
        ? 100
        : (figures.achievedPerSecond / figures.offeredPerSecond) * 100;
    }
    default: {
      const summarized = figures.latencyMs[threshold.metric];
      if (summarized !== undefined) return summarized;
      const percentile = percentileOf(threshold.metric);
      if (percentile === undefined || figures.histogram === undefined) return Number.NaN;
      return percentileMs(decodeHistogram(figures.histogram), percentile);
    }
  }
}

export function judge(threshold: Threshold, figures: Figures | undefined): Verdict {
  if (figures === undefined) return { threshold: threshold.text, actual: Number.NaN, passed: false };
  const raw = measure(threshold, figures);
  const actual = Number.isNaN(raw) ? raw : Math.round(raw * 1000) / 1000;
  const passed =
    threshold.op === "<"
      ? actual < threshold.value
      : threshold.op === "<="
        ? actual <= threshold.value
        : threshold.op === ">"
          ? actual > threshold.value
          : actual >= threshold.value;
  return { threshold: threshold.text, actual, passed };
}

/** The verdicts of a run's thresholds on its figures (the whole run's, or the run so far). */
export function judgeAll(
  thresholds: readonly Threshold[],
  figures: { overall: Figures; scenarios: Record<string, Figures> },
): Verdict[] {
  return thresholds.map((threshold) =>
    judge(
      threshold,
      threshold.scenario === undefined ? figures.overall : figures.scenarios[threshold.scenario],
    ),
  );
}
