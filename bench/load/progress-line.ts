import type { Histogram } from "hdr-histogram-js";
import type { TimelinePoint } from "./load-result.js";
import { merged } from "./recorder.js";

const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;

/**
 * The line printed at the end of each interval: the rate achieved by all request scenarios, their
 * p50/p99/p99.9 over the interval, the errors, the subscribers' lag (updates, completions), the
 * ACS readers' reads; on the embedded sandbox, a reminder that these are not a participant's figures.
 */
/** Series of the stream scenarios: their errors are their own, not the requests'. */
const STREAM_SERIES = ["updates", "completions-stream", "acs-stream"];

export function progressLine(
  point: TimelinePoint,
  requestHistograms: readonly Histogram[],
  intervalSeconds: number,
  /** The streams of each stream scenario of the run. */
  streams: Partial<Record<"updates" | "completions-stream" | "acs-stream", number>>,
  sandbox: boolean,
): string {
  const latency = merged(requestHistograms);
  const count = requestHistograms.reduce((sum, h) => sum + h.totalCount, 0);
  const errors = Object.entries(point.scenarios)
    .filter(([name]) => !STREAM_SERIES.includes(name))
    .reduce((sum, [, s]) => sum + s.errors, 0);
  const parts = [`[${point.seconds.toFixed(1).padStart(6)} s]`];
  // acs-stream alone sends no requests: their figures would be zeros that read as measured.
  if (requestHistograms.length > 0)
    parts.push(
      `${(count / Math.max(intervalSeconds, 1e-3)).toFixed(1)} req/s`,
      `p50 ${ms(latency.p50)}`,
      `p99 ${ms(latency.p99)}`,
      `p99.9 ${ms(latency["p99.9"])}`,
      `errors ${errors}`,
    );
  const completions = point.scenarios.completions;
  if (completions) parts.push(`| completions p99 ${ms(completions.latencyMs.p99)}`);
  const updates = point.scenarios.updates;
  if (updates)
    parts.push(
      `| lag p50 ${ms(updates.latencyMs.p50)} p99 ${ms(updates.latencyMs.p99)} over ${streams.updates} subscribers (${updates.count} deliveries, ${updates.errors} stream errors)`,
    );
  const completionsStream = point.scenarios["completions-stream"];
  if (completionsStream)
    parts.push(
      `| completion lag p50 ${ms(completionsStream.latencyMs.p50)} p99 ${ms(completionsStream.latencyMs.p99)} over ${streams["completions-stream"]} subscribers (${completionsStream.count} completions, ${completionsStream.errors} errors)`,
    );
  const acs = point.scenarios["acs-stream"];
  if (acs)
    parts.push(
      `| acs reads p50 ${ms(acs.latencyMs.p50)} p99 ${ms(acs.latencyMs.p99)} ${(acs.count / Math.max(intervalSeconds, 1e-3)).toFixed(1)}/s ${Math.round((acs.elements ?? 0) / Math.max(intervalSeconds, 1e-3))} contracts/s over ${streams["acs-stream"]} readers (${acs.errors} errors)`,
    );
  const delay = point.clientLoopDelayMs;
  parts.push(
    `| tool loop delay p99 ${ms(delay.p99)}${delay.p99 > 50 ? " (the tool is behind: its delay is in these figures)" : ""}`,
  );
  if (sandbox) parts.push("[embedded sandbox: not a participant's figure]");
  return parts.join("  ");
}
