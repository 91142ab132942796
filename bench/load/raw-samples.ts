import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { IntervalFigures } from "./recorder.js";

/**
 * The raw per-interval samples of a run as NDJSON (`<out>/load-<time>.ndjson`): one line per
 * interval and series, appended as each interval ends, so a run stopped by anything still leaves
 * what it measured until then, and a tool that reads k6's or Gatling's raw output reads it too.
 * Each line holds the interval's histogram (compressed base64, µs): percentiles over any span
 * of lines are their histograms added.
 */
export interface RawSample extends IntervalFigures {
  /** Wall-clock end of the interval (ISO 8601). */
  time: string;
  /** Seconds since the end of the warm-up, at the end of the interval. */
  seconds: number;
  series: string;
}

/** Written from the first interval on: a run that fails before it leaves no file behind. */
export class RawSamples {
  constructor(readonly path: string) {}

  write(samples: readonly RawSample[]): void {
    if (samples.length === 0) return;
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, samples.map((s) => `${JSON.stringify(s)}\n`).join(""));
  }
}
