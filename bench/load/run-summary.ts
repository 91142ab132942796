import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { machine } from "../lib/results.js";
import { htmlReport } from "./html-report.js";
import type { LoadResult } from "./load-result.js";
import { percentileName } from "./recorder.js";

/** `load-2026-11-28T05-01-02Z`: the stem of a run's files, from a moment (its start). */
export const runStem = (at: Date) =>
  `load-${at
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-")}`;

/** Writes `<dir>/<stem>.json` and `.html`; answers their paths. */
export function writeRun(result: LoadResult, dir: string, stem: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${stem}.json`);
  const html = join(dir, `${stem}.html`);
  writeFileSync(json, `${JSON.stringify({ ...result, machine: machine() }, null, 2)}\n`);
  writeFileSync(html, htmlReport(result));
  return { json, html };
}

/**
 * What the run prints on stdout at its end: a line per series with the percentiles asked for,
 * the offered and achieved rates and dropped arrivals, the overload flag, the thresholds'
 * verdicts. The sandbox caveat once, first.
 */
export function summaryLines(result: LoadResult): string[] {
  const percentiles = result.load.percentiles ?? [50, 95, 99, 99.9];
  const out: string[] = [];
  if (result.target.caveat) out.push(`every figure below is ${result.target.caveat}`);
  const line = (name: string, s: LoadResult["scenarios"][string]) => {
    const l = s.latencyMs;
    const rate =
      s.offeredPerSecond !== undefined
        ? `${s.requests} at ${s.ratePerSecond}/s (achieved ${s.achievedPerSecond}/s of ${s.offeredPerSecond}/s offered, ${s.dropped} dropped)`
        : `${s.requests} at ${s.ratePerSecond}/s`;
    const figures = percentiles.map((p) => `${percentileName(p)} ${l[percentileName(p)] ?? "-"} ms`);
    return `${name}: ${rate}${s.elementsPerSecond !== undefined ? ` (${s.elementsPerSecond} contracts/s)` : ""}, ${figures.join(", ")}, max ${l.max} ms, errors ${s.errors}${Object.keys(s.errorsByCode).length ? ` ${JSON.stringify(s.errorsByCode)}` : ""}`;
  };
  for (const [name, s] of Object.entries(result.scenarios)) {
    out.push(line(name, s));
    for (const [step, figures] of Object.entries(s.steps ?? {}))
      out.push(`  ${line(`step ${step}`, figures)}`);
  }
  if (result.overloaded)
    out.push(`OVERLOADED: the run could not keep its offered rate: ${result.overloaded}`);
  if (result.load.abortedBy)
    out.push(
      `aborted at ${result.load.abortedBy.atSeconds} s: threshold ${result.load.abortedBy.threshold} breached by the run so far (--abort-on-fail)`,
    );
  for (const verdict of result.thresholds)
    out.push(
      `threshold ${verdict.threshold}: ${verdict.passed ? "passed" : "BREACHED"} (measured ${Number.isNaN(verdict.actual) ? "nothing: no such series" : verdict.actual})`,
    );
  return out;
}
