import { UsageError } from "./usage-error.js";

/**
 * `--threshold` pass/fail criteria, k6's idea in a line: `[SCENARIO.]METRIC OP VALUE`, e.g.
 * `p99<50ms`, `submit-and-wait.p99.9<=200ms`, `errors<1%`, `reads.errors<5`, `rate>=190`,
 * `updates.p99<100ms` (the subscribers' lag; `completions-stream.` the completion subscribers',
 * `acs-stream.` the ACS readers' reads). Without a scenario a threshold reads the figures of all
 * request scenarios together (the streams' figures are read only by their names).
 */
export interface Threshold {
  /** As given, to name it when breached. */
  text: string;
  scenario?: string;
  metric: Metric;
  op: "<" | "<=" | ">" | ">=";
  /** Milliseconds for latencies, requests per second for rate, a count or a percentage for errors. */
  value: number;
  percent: boolean;
}

const LATENCY_METRICS = ["p50", "p90", "p99", "p99.9", "max", "mean"] as const;
type Metric = (typeof LATENCY_METRICS)[number] | "errors" | "rate";

const UNITS_MS: Record<string, number> = { us: 0.001, µs: 0.001, ms: 1, s: 1000 };

const SYNTAX =
  /^(?:([a-z][a-z-]*)\.)?(p50|p90|p99\.9|p99|max|mean|errors|rate)\s*(<=|>=|<|>)\s*(\d+(?:\.\d+)?)\s*(ms|us|µs|s|%|\/s)?$/;

export function parseThreshold(text: string): Threshold {
  const match = SYNTAX.exec(text.trim());
  if (!match)
    throw new UsageError(
      `--threshold '${text}' is not [SCENARIO.]METRIC<VALUE (metrics: ${LATENCY_METRICS.join(", ")}, errors, rate), e.g. 'p99<50ms', 'submit-and-wait.p99.9<200ms', 'errors<1%', 'rate>=190'`,
    );
  const [, scenario, metric, op, number, unit] = match as unknown as [
    string,
    string | undefined,
    Metric,
    Threshold["op"],
    string,
    string | undefined,
  ];
  const latency = (LATENCY_METRICS as readonly string[]).includes(metric);
  if (latency && (unit === undefined || !(unit in UNITS_MS)))
    throw new UsageError(`--threshold '${text}': a latency needs a unit (us, ms or s)`);
  if (metric === "errors" && unit !== undefined && unit !== "%")
    throw new UsageError(`--threshold '${text}': errors take a count or a percentage`);
  if (metric === "rate" && unit !== undefined && unit !== "/s")
    throw new UsageError(`--threshold '${text}': a rate is in requests per second`);
  return {
    text,
    ...(scenario !== undefined && { scenario }),
    metric,
    op,
    value: Number(number) * (latency ? (UNITS_MS[unit as string] as number) : 1),
    percent: unit === "%",
  };
}

/** The figures a threshold is read from: one scenario's, or all request scenarios' together. */
export interface Figures {
  requests: number;
  errors: number;
  ratePerSecond: number;
  latencyMs: Record<(typeof LATENCY_METRICS)[number], number>;
}

export interface Verdict {
  threshold: string;
  actual: number;
  passed: boolean;
}

export function judge(threshold: Threshold, figures: Figures | undefined): Verdict {
  if (figures === undefined) return { threshold: threshold.text, actual: Number.NaN, passed: false };
  let actual: number;
  if (threshold.metric === "errors") {
    const attempts = figures.requests + figures.errors;
    actual = threshold.percent ? (attempts === 0 ? 0 : (figures.errors / attempts) * 100) : figures.errors;
  } else if (threshold.metric === "rate") {
    actual = figures.ratePerSecond;
  } else {
    actual = figures.latencyMs[threshold.metric];
  }
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
