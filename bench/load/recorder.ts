import {
  build,
  decodeFromCompressedBase64,
  encodeIntoCompressedBase64,
  type Histogram,
} from "hdr-histogram-js";

/**
 * Latencies and errors of one series (a request scenario, the completions, the subscribers' lag)
 * in HDR histograms of microseconds (3 significant digits, up to an hour): one for the whole
 * measured window and one per interval, which `cut` reads and resets for the timeline and the
 * progress line. Latencies are whatever the caller measured from (load.ts: the intended send time).
 */
const HOUR_US = 3_600_000_000;

export const histogram = (): Histogram =>
  build({
    bitBucketSize: 32,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HOUR_US,
    numberOfSignificantValueDigits: 3,
  });

/** HdrHistogram's compressed base64 form (microseconds), as the results file holds it. */
export const decodeHistogram = (encoded: string): Histogram => {
  const decoded = decodeFromCompressedBase64(encoded, 32, false);
  // Into one of ours, so that histograms of several files add whatever range each one had.
  const into = histogram();
  into.add(decoded);
  return into;
};
export const encodeHistogram = (h: Histogram): string => encodeIntoCompressedBase64(h);

/** The percentiles every summary holds; thresholds and `--percentiles` may read any other. */
const SUMMARY_PERCENTILES = [50, 90, 95, 99, 99.9] as const;

/** `p50`, `p99.9`: how a percentile is named in summaries, thresholds and flags. */
export type PercentileName = `p${number}`;
export const percentileName = (p: number): PercentileName => `p${p}`;

/** Latencies in ms: the fixed percentiles, max, mean, and any other asked for (`p75`, `p99.99`). */
export type LatencySummary = Record<"p50" | "p90" | "p95" | "p99" | "p99.9" | "max" | "mean", number> &
  Partial<Record<PercentileName, number>>;

/** One interval of one series, as the timeline holds it (latencies in ms). */
export interface IntervalFigures {
  count: number;
  errors: number;
  latencyMs: LatencySummary;
  /** acs-stream: the contracts its reads received over the interval. */
  elements?: number;
  /** Request scenarios of the open model: arrivals due in the interval, and those not sent (the cap). */
  offered?: number;
  dropped?: number;
  /** The interval's histogram (compressed base64, µs): what `bench merge` adds across runs. */
  histogram?: string;
}

const ms = (us: number) => Math.round(us) / 1000;

/** The latency at percentile `p` (0-100] in ms; 0 for an empty histogram. */
export const percentileMs = (h: Histogram, p: number): number =>
  h.totalCount === 0 ? 0 : ms(h.getValueAtPercentile(p));

export const summarize = (h: Histogram, extra: readonly number[] = []): LatencySummary => {
  const summary = {
    // As the percentiles are: the top of the value's bucket (3 significant digits), so max >= p99.9.
    max: percentileMs(h, 100),
    mean: h.totalCount === 0 ? 0 : ms(h.mean),
  } as LatencySummary;
  for (const p of [...SUMMARY_PERCENTILES, ...extra]) summary[percentileName(p)] = percentileMs(h, p);
  return summary;
};

/** Told of every measured latency and error as it is recorded (the live metrics). */
export interface SeriesListener {
  record(latencyMs: number): void;
  error(code: string): void;
}

export class SeriesRecorder {
  readonly total = histogram();
  private interval = histogram();
  private intervalErrors = 0;
  errors = 0;
  readonly errorsByCode = new Map<string, number>();

  constructor(
    private readonly listener?: SeriesListener,
    /** Percentiles asked for beyond the fixed ones (`--percentiles`). */
    private readonly percentiles: readonly number[] = [],
  ) {}

  record(latencyMs: number): void {
    const us = Math.min(HOUR_US, Math.max(1, Math.round(latencyMs * 1000)));
    this.total.recordValue(us);
    this.interval.recordValue(us);
    this.listener?.record(latencyMs);
  }

  error(code: string): void {
    this.errors++;
    this.intervalErrors++;
    this.errorsByCode.set(code, (this.errorsByCode.get(code) ?? 0) + 1);
    this.listener?.error(code);
  }

  /** This interval's figures; the next interval starts empty. */
  cut(): IntervalFigures & { histogram: string; raw: Histogram } {
    const figures = {
      count: this.interval.totalCount,
      errors: this.intervalErrors,
      latencyMs: summarize(this.interval, this.percentiles),
      histogram: encodeHistogram(this.interval),
      raw: this.interval,
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
      latencyMs: summarize(this.total, this.percentiles),
      /** HdrHistogram's compressed base64 form (microseconds), readable by any HdrHistogram library. */
      histogram: encodeHistogram(this.total),
    };
  }
}

/** Several histograms as one (the progress line's figure over all request scenarios). */
export function merged(histograms: readonly Histogram[]): Histogram {
  const all = histogram();
  for (const h of histograms) all.add(h);
  return all;
}

/** The whole windows of several series as one (thresholds without a scenario). */
export function mergedTotals(
  series: readonly SeriesRecorder[],
  seconds: number,
  percentiles: readonly number[],
) {
  const all = merged(series.map((s) => s.total));
  const errors = series.reduce((sum, s) => sum + s.errors, 0);
  return {
    requests: all.totalCount,
    errors,
    ratePerSecond: Math.round((all.totalCount / seconds) * 10) / 10,
    latencyMs: summarize(all, percentiles),
    histogram: encodeHistogram(all),
  };
}
