import { build, encodeIntoCompressedBase64, type Histogram } from "hdr-histogram-js";

/**
 * Latencies and errors of one series (a request scenario, the completions, the subscribers' lag)
 * in HDR histograms of microseconds (3 significant digits, up to an hour): one for the whole
 * measured window and one per interval, which `cut` reads and resets for the timeline and the
 * progress line. Latencies are whatever the caller measured from (load.ts: the intended send time).
 */
const HOUR_US = 3_600_000_000;

const histogram = (): Histogram =>
  build({
    bitBucketSize: 32,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HOUR_US,
    numberOfSignificantValueDigits: 3,
  });

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  "p99.9": number;
  max: number;
  mean: number;
}

/** One interval of one series, as the timeline holds it (latencies in ms). */
export interface IntervalFigures {
  count: number;
  errors: number;
  latencyMs: LatencySummary;
  /** acs-stream: the contracts its reads received over the interval. */
  elements?: number;
}

const summarize = (h: Histogram): LatencySummary => {
  const ms = (us: number) => Math.round(us) / 1000;
  if (h.totalCount === 0) return { p50: 0, p90: 0, p99: 0, "p99.9": 0, max: 0, mean: 0 };
  return {
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    "p99.9": ms(h.getValueAtPercentile(99.9)),
    // As the percentiles are: the top of the value's bucket (3 significant digits), so max >= p99.9.
    max: ms(h.getValueAtPercentile(100)),
    mean: ms(h.mean),
  };
};

export class SeriesRecorder {
  readonly total = histogram();
  private interval = histogram();
  private intervalErrors = 0;
  errors = 0;
  readonly errorsByCode = new Map<string, number>();

  record(latencyMs: number): void {
    const us = Math.min(HOUR_US, Math.max(1, Math.round(latencyMs * 1000)));
    this.total.recordValue(us);
    this.interval.recordValue(us);
  }

  error(code: string): void {
    this.errors++;
    this.intervalErrors++;
    this.errorsByCode.set(code, (this.errorsByCode.get(code) ?? 0) + 1);
  }

  /** This interval's figures; the next interval starts empty. */
  cut(): IntervalFigures & { histogram: Histogram } {
    const figures = {
      count: this.interval.totalCount,
      errors: this.intervalErrors,
      latencyMs: summarize(this.interval),
      histogram: this.interval,
    };
    this.interval = histogram();
    this.intervalErrors = 0;
    return figures;
  }

  /** The whole window: counts, rate over `seconds`, percentiles, errors by code, the histogram itself. */
  result(seconds: number) {
    return {
      requests: this.total.totalCount,
      errors: this.errors,
      errorsByCode: Object.fromEntries(this.errorsByCode),
      ratePerSecond: Math.round((this.total.totalCount / seconds) * 10) / 10,
      latencyMs: summarize(this.total),
      /** HdrHistogram's compressed base64 form (microseconds), readable by any HdrHistogram library. */
      histogram: encodeIntoCompressedBase64(this.total),
    };
  }
}

/** Several interval histograms as one (the progress line's figure over all request scenarios). */
export function merged(histograms: readonly Histogram[]): LatencySummary {
  const all = histogram();
  for (const h of histograms) all.add(h);
  return summarize(all);
}

/** The whole windows of several series as one (thresholds without a scenario). */
export function mergedTotals(series: readonly SeriesRecorder[], seconds: number) {
  const all = histogram();
  let errors = 0;
  for (const s of series) {
    all.add(s.total);
    errors += s.errors;
  }
  return {
    requests: all.totalCount,
    errors,
    ratePerSecond: Math.round((all.totalCount / seconds) * 10) / 10,
    latencyMs: summarize(all),
  };
}
