import { appendFileSync, writeFileSync } from "node:fs";
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

export class RawSamples {
  constructor(private readonly path: string) {
    writeFileSync(path, "");
  }

  write(samples: readonly RawSample[]): void {
    if (samples.length > 0) appendFileSync(this.path, samples.map((s) => `${JSON.stringify(s)}\n`).join(""));
  }
}
