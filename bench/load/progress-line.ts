import type { Histogram } from "hdr-histogram-js";
import type { TimelinePoint } from "./load-result.js";
import { merged, percentileMs, percentileName } from "./recorder.js";

/** A latency in ms as a reader takes it in: 1.23ms, 45.6ms, 2.35s, 3601s. */
const ms = (value: number) =>
  value < 10
    ? `${value.toFixed(2)}ms`
    : value < 1000
      ? `${value.toFixed(1)}ms`
      : value < 100_000
        ? `${(value / 1000).toFixed(2)}s`
        : `${Math.round(value / 1000)}s`;
const perSecond = (count: number, seconds: number) => {
  const rate = count / Math.max(seconds, 1e-3);
  return rate < 1000 ? rate.toFixed(1) : String(Math.round(rate));
};

/** Series of the stream scenarios: their errors are their own, not the requests'. */
const STREAM_SERIES = ["updates", "completions-stream", "acs-stream"];

/** Past it a terminal wraps a line into a paragraph nobody reads as it scrolls. */
export const PROGRESS_LINE_MAX = 400;

/**
 * The line printed at the end of each interval: elapsed of total seconds, the rate achieved by all
 * request scenarios against the offered rate (open model) and the arrivals dropped, their
 * percentiles over the interval, the errors, the subscribers' lag (updates, completions), the ACS
 * readers' reads and the tool's own loop delay. What stays the same over the run (the streams'
 * counts) and the sandbox caveat are said once, above the lines.
 */
export function progressLine(
  point: TimelinePoint,
  requestHistograms: readonly Histogram[],
  intervalSeconds: number,
  run: { totalSeconds: number; percentiles: readonly number[]; open: boolean },
): string {
  const all = merged(requestHistograms);
  const requestSeries = Object.entries(point.scenarios).filter(([name]) => !STREAM_SERIES.includes(name));
  const requests = requestSeries.filter(([name]) => name !== "completions");
  const errors = requestSeries.reduce((sum, [, s]) => sum + s.errors, 0);
  const answered = requests.reduce((sum, [, s]) => sum + s.count + s.errors, 0);
  const parts = [`[${point.seconds.toFixed(1).padStart(6)}/${run.totalSeconds} s]`];
  // acs-stream alone sends no requests: their figures would be zeros that read as measured.
  if (requestHistograms.length > 0) {
    parts.push(`${perSecond(answered, intervalSeconds)} req/s`);
    if (run.open) {
      const offered = requests.reduce((sum, [, s]) => sum + (s.offered ?? 0), 0);
      const dropped = requests.reduce((sum, [, s]) => sum + (s.dropped ?? 0), 0);
      parts.push(`(offered ${perSecond(offered, intervalSeconds)}/s, ${dropped} dropped)`);
    }
    parts.push(
      ...run.percentiles.map((p) => `${percentileName(p)} ${ms(percentileMs(all, p))}`),
      `errors ${errors}`,
    );
  }
  const completions = point.scenarios.completions;
  if (completions) parts.push(`| completions p99 ${ms(completions.latencyMs.p99)}`);
  const updates = point.scenarios.updates;
  if (updates)
    parts.push(
      `| lag p50 ${ms(updates.latencyMs.p50)} p99 ${ms(updates.latencyMs.p99)} (${updates.count} deliveries, ${updates.errors} errors)`,
    );
  const completionsStream = point.scenarios["completions-stream"];
  if (completionsStream)
    parts.push(
      `| completion lag p50 ${ms(completionsStream.latencyMs.p50)} p99 ${ms(completionsStream.latencyMs.p99)} (${completionsStream.errors} errors)`,
    );
  const acs = point.scenarios["acs-stream"];
  if (acs)
    parts.push(
      `| acs reads p50 ${ms(acs.latencyMs.p50)} p99 ${ms(acs.latencyMs.p99)} ${perSecond(acs.count, intervalSeconds)}/s ${Math.round((acs.elements ?? 0) / Math.max(intervalSeconds, 1e-3))} contracts/s (${acs.errors} errors)`,
    );
  const delay = point.clientLoopDelayMs;
  parts.push(
    `| tool loop p99 ${ms(delay.p99)}${delay.p99 > 50 ? " (late: its delay is in the figures)" : ""}`,
  );
  return parts.join(" ");
}
