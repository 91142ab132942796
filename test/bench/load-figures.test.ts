import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { abortingBreach } from "../../bench/load/abort-on-fail.js";
import { defaultOutDir } from "../../bench/load/default-out.js";
import { htmlReport } from "../../bench/load/html-report.js";
import { roundTicks } from "../../bench/load/line-chart.js";
import { LiveMetrics } from "../../bench/load/live-metrics.js";
import { loadOptions, type RawOptions } from "../../bench/load/load-options.js";
import type { LoadResult, TimelinePoint } from "../../bench/load/load-result.js";
import { mergeRuns } from "../../bench/load/merge-runs.js";
import { OfferedLoad } from "../../bench/load/offered-load.js";
import { overloadReason } from "../../bench/load/overload.js";
import { PROGRESS_LINE_MAX, progressLine } from "../../bench/load/progress-line.js";
import { decodeHistogram, percentileMs, SeriesRecorder } from "../../bench/load/recorder.js";
import { parseRegressionLimits, regressionVerdicts } from "../../bench/load/regression-gate.js";
import { summaryLines } from "../../bench/load/run-summary.js";
import { judge, parseThreshold } from "../../bench/load/thresholds.js";
import { UsageError } from "../../bench/load/usage-error.js";

/** A seeded stream of latencies (ms), so that runs are different and reproducible. */
function latencies(seed: number, n: number): number[] {
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return 0.2 + (x / 2 ** 31) ** 3 * 400;
  });
}

/** A load run's result of one request scenario with these latencies and errors, as run-load makes it. */
function run(values: readonly number[], errors: number, offered: number, dropped: number): LoadResult {
  const recorder = new SeriesRecorder(undefined, [75]);
  for (const v of values) recorder.record(v);
  for (let i = 0; i < errors; i++) recorder.error("HTTP 503");
  const interval = new SeriesRecorder(undefined, [75]);
  for (const v of values) interval.record(v);
  const cut = interval.cut();
  const point: TimelinePoint = {
    seconds: 10,
    scenarios: {
      reads: {
        count: cut.count,
        errors: 0,
        latencyMs: cut.latencyMs,
        histogram: cut.histogram,
        offered,
        dropped,
      },
    },
    clientLoopDelayMs: { p99: 1, max: 2 },
  };
  const series = {
    ...recorder.result(10),
    offered,
    dropped,
    offeredPerSecond: offered / 10,
    achievedPerSecond: (values.length + errors) / 10,
  };
  const { errorsByCode: _, ...overall } = series;
  return {
    tool: "ledger-json-gateway bench",
    command: "ledger-json-gateway bench ...",
    startedAt: "2026-11-28T05:00:00.000Z",
    target: {
      url: "http://127.0.0.1:7575",
      version: "3.5.10",
      participantId: "p",
      embeddedSandbox: false,
      ledgerJsonGateway: true,
    },
    load: {
      description: "reads; open model",
      model: { kind: "open", stages: [{ durationMs: 10_000, rate: offered / 10 }], startRate: offered / 10 },
      durationSeconds: 10,
      warmUpSeconds: 0,
      intervalSeconds: 10,
      scenarios: ["reads"],
      subscribers: 0,
      connections: 64,
      prefix: "load-x",
      maxInFlight: 100,
      percentiles: [50, 95, 99],
    },
    overall,
    scenarios: { reads: series },
    timeline: [point],
    thresholds: [],
  };
}

describe("the load tool's figures", () => {
  it("reads any percentile in a threshold, p95 from the summary and others from the histogram", () => {
    const recorder = new SeriesRecorder();
    for (let i = 1; i <= 1000; i++) recorder.record(i / 10);
    const figures = recorder.result(10);
    const at = (p: number) => percentileMs(recorder.total, p);
    // HDR's 3 significant digits: the top of the value's bucket.
    assert.ok(Math.abs(figures.latencyMs.p95 - 95) < 0.1, String(figures.latencyMs.p95));
    assert.equal(figures.latencyMs.p95, at(95));
    assert.equal(judge(parseThreshold("p95<96ms"), figures).passed, true);
    assert.deepEqual(judge(parseThreshold("p95<95ms"), figures), {
      threshold: "p95<95ms",
      actual: at(95),
      passed: false,
    });
    // p75 is in no summary: read from the encoded histogram.
    assert.equal(figures.latencyMs.p75, undefined);
    assert.equal(judge(parseThreshold("p75<=80ms"), figures).actual, at(75));
    assert.ok(Math.abs(at(75) - 75) < 0.1);
    assert.equal(judge(parseThreshold("p99.99<1s"), figures).actual, at(99.99));
    assert.throws(() => parseThreshold("p0<1ms"), /a percentile is above 0 and at most 100/);
    assert.throws(() => parseThreshold("p101<1ms"), /a percentile is above 0 and at most 100/);
    assert.throws(() => parseThreshold("p95<1"), /a latency needs a unit/);
  });

  it("fails a run on its dropped arrivals and on its achieved share of the offered rate", () => {
    const figures = {
      requests: 900,
      errors: 0,
      ratePerSecond: 90,
      latencyMs: {},
      offered: 1000,
      dropped: 20,
      offeredPerSecond: 100,
      achievedPerSecond: 90,
    };
    assert.equal(judge(parseThreshold("dropped<1%"), figures).actual, 2);
    assert.equal(judge(parseThreshold("dropped<1%"), figures).passed, false);
    assert.equal(judge(parseThreshold("dropped<=20"), figures).passed, true);
    assert.equal(judge(parseThreshold("achieved>=95%"), figures).actual, 90);
    assert.equal(judge(parseThreshold("achieved>=95%"), figures).passed, false);
    assert.equal(judge(parseThreshold("achieved>85/s"), figures).passed, true);
    // The closed model has no offered rate: nothing to pass on.
    assert.ok(Number.isNaN(judge(parseThreshold("dropped<1%"), { ...figures, offered: undefined }).actual));
  });

  it("flags a run that dropped an arrival or achieved under 95% of its offered rate, and only such a run", () => {
    const kept = { offered: 1000, dropped: 0, offeredPerSecond: 100, achievedPerSecond: 96 };
    assert.equal(overloadReason(kept), undefined);
    assert.match(overloadReason({ ...kept, dropped: 1 }) ?? "", /^1 of 1000 arrivals dropped \(0\.1%/);
    assert.match(
      overloadReason({ offered: 15000, dropped: 0, offeredPerSecond: 1500, achievedPerSecond: 1050 }) ?? "",
      /^achieved 1050\/s of 1500\/s offered \(70%, under 95%\)$/,
    );
  });

  it("drops an arrival past the in-flight cap and counts what was offered, dropped and answered", () => {
    const dropped: string[] = [];
    const load = new OfferedLoad(2, (name) => dropped.push(name));
    assert.equal(load.arrive("reads", true), true);
    assert.equal(load.arrive("reads", true), true);
    assert.equal(load.arrive("reads", true), false, "two in flight: the third is dropped");
    assert.equal(load.arrive("reads", false), false, "a warm-up arrival past the cap is not sent either");
    load.settled("reads", true);
    assert.equal(load.arrive("reads", true), true);
    assert.deepEqual(dropped, ["reads"], "warm-up arrivals are not counted");
    assert.deepEqual(load.result("reads", 2), {
      offered: 4,
      dropped: 1,
      offeredPerSecond: 2,
      achievedPerSecond: 0.5,
    });
    assert.deepEqual(load.cut().get("reads"), { offered: 4, dropped: 1, answered: 1 });
    assert.equal(load.cut().size, 0, "the next interval starts at zero");
  });

  it("aborts at once on a count that only grows, on the others from the second interval", () => {
    const figures = { requests: 100, errors: 12, ratePerSecond: 10, latencyMs: { p95: 80 } };
    const soFar = { overall: figures, scenarios: {} };
    const errors = [parseThreshold("errors<10")];
    assert.equal(abortingBreach(errors, soFar, 1)?.threshold, "errors<10");
    const latency = [parseThreshold("p95<50ms")];
    assert.equal(
      abortingBreach(latency, soFar, 1),
      undefined,
      "a latency may recover after the first interval",
    );
    assert.equal(abortingBreach(latency, soFar, 2)?.actual, 80);
    assert.equal(abortingBreach([parseThreshold("errors<20")], soFar, 5), undefined);
  });

  it("merges two runs into one result: counts add up, percentiles from the merged histograms", () => {
    const a = latencies(1, 3000);
    const b = latencies(2, 1000).map((v) => v * 3);
    const merged = mergeRuns([
      { file: "a.json", result: run(a, 5, 4000, 10) },
      { file: "b.json", result: run(b, 1, 1000, 0) },
    ]);
    // One run that had recorded both machines' answers.
    const both = run([...a, ...b], 6, 5000, 10);
    const reads = merged.scenarios.reads;
    const one = both.scenarios.reads;
    assert.ok(reads && one);
    assert.equal(reads.requests, 4000);
    assert.equal(reads.errors, 6);
    assert.deepEqual(reads.errorsByCode, { "HTTP 503": 6 });
    assert.equal(reads.offered, 5000);
    assert.equal(reads.dropped, 10);
    for (const p of ["p50", "p95", "p99", "p99.9", "max", "mean"] as const)
      assert.equal(reads.latencyMs[p], one.latencyMs[p], p);
    assert.equal(reads.latencyMs.p75, undefined, "the shown percentiles, not the runs' extra ones");
    assert.equal(
      percentileMs(decodeHistogram(reads.histogram), 75),
      percentileMs(decodeHistogram(one.histogram), 75),
    );
    assert.equal(merged.overall.requests, 4000);
    assert.equal(merged.overall.latencyMs.p99, one.latencyMs.p99);
    const point = merged.timeline[0]?.scenarios.reads;
    assert.equal(point?.count, 4000);
    assert.equal(point?.latencyMs.p99, both.timeline[0]?.scenarios.reads?.latencyMs.p99);
    assert.deepEqual(
      merged.load.merged?.map((m) => m.file),
      ["a.json", "b.json"],
    );
    assert.match(merged.overloaded ?? "", /10 of 5000 arrivals dropped/);
    assert.equal(judge(parseThreshold("reads.p99<1ms"), reads).actual, one.latencyMs.p99);
  });

  it("merges a workflow's steps and shows them under the workflow, in the summary and the report", () => {
    const withSteps = (values: readonly number[]): LoadResult => {
      const result = run(values, 0, values.length, 0);
      const step = new SeriesRecorder(undefined, [50, 95, 99]);
      for (const v of values) step.record(v / 2);
      const reads = result.scenarios.reads;
      assert.ok(reads);
      return { ...result, scenarios: { reads: { ...reads, steps: { create: step.result(10) } } } };
    };
    const a = latencies(3, 400);
    const b = latencies(4, 100);
    const merged = mergeRuns([
      { file: "a.json", result: withSteps(a) },
      { file: "b.json", result: withSteps(b) },
    ]);
    const one = withSteps([...a, ...b]).scenarios.reads?.steps?.create;
    const create = merged.scenarios.reads?.steps?.create;
    assert.equal(create?.requests, 500);
    assert.equal(create?.latencyMs.p99, one?.latencyMs.p99);
    const lines = summaryLines(merged);
    const at = lines.findIndex((line) => line.startsWith("reads: "));
    assert.match(lines[at + 1] ?? "", /^ {2}step create: 500 at /);
    assert.match(htmlReport(merged), /reads \/ step create<\/td><td>500</);
  });

  it("refuses to merge runs whose timelines do not add up", () => {
    const other = run(latencies(3, 10), 0, 10, 0);
    other.load.intervalSeconds = 5;
    assert.throws(
      () =>
        mergeRuns([
          { file: "a.json", result: run(latencies(1, 10), 0, 10, 0) },
          { file: "c.json", result: other },
        ]),
      /c\.json has intervals of 5 s, a\.json of 10 s/,
    );
  });

  it("gates a comparison on regressions beyond a limit: latencies and errors up, rates down", () => {
    const base = run(latencies(1, 2000), 0, 2000, 0);
    const slower = run(
      latencies(1, 2000).map((v) => v * 1.2),
      0,
      2000,
      0,
    );
    const [p99] = regressionVerdicts(base, slower, parseRegressionLimits(["p99=10%"]));
    assert.equal(p99?.passed, false);
    assert.match(
      p99?.line ?? "",
      /^regression reads p99: [\d.]+ -> [\d.]+ \(\+20\.\d% worse, at most 10%\): FAILED$/,
    );
    assert.ok(
      regressionVerdicts(base, slower, parseRegressionLimits(["reads.p99=25%"])).every((v) => v.passed),
    );
    const [rate] = regressionVerdicts(slower, base, parseRegressionLimits(["rate=0%"]));
    assert.equal(rate?.passed, true, "the same rate");
    const [faster] = regressionVerdicts(slower, base, parseRegressionLimits(["p75=0%"]));
    assert.equal(faster?.passed, true, "an improvement passes, p75 read from the histograms");
    assert.throws(() => parseRegressionLimits(["p99<10%"]), /--max-regression takes \[SERIES\.\]METRIC=N%/);
  });

  it("writes a progress line with elapsed and total time, under 400 characters with every series", () => {
    const figures = (count: number) => ({
      count,
      errors: 123,
      latencyMs: {
        p50: 1234.5,
        p90: 2345.6,
        p95: 3456.7,
        p99: 4567.8,
        "p99.9": 56789.1,
        max: 99999,
        mean: 1,
      },
      offered: 150000,
      dropped: 12345,
      elements: 9_999_999,
    });
    const names = ["submit-and-wait", "reads", "completions", "updates", "completions-stream", "acs-stream"];
    const point: TimelinePoint = {
      seconds: 3599.5,
      scenarios: Object.fromEntries(names.map((name) => [name, figures(99999)])),
      clientLoopDelayMs: { p99: 250.5, max: 999.9 },
    };
    // Latencies up to an hour, as the request figures would be on a server falling over.
    const requests = new SeriesRecorder();
    for (const v of [1234.5, 56789.1, 3_599_999]) requests.record(v);
    const line = progressLine(point, [requests.cut().raw], 5, {
      totalSeconds: 3600,
      percentiles: [50, 95, 99, 99.9],
      open: true,
    });
    assert.match(line, /^\[3599\.5\/3600 s\] [\d.]+ req\/s \(offered [\d.]+\/s, \d+ dropped\) p50 /);
    assert.ok(line.length < PROGRESS_LINE_MAX, `${line.length}: ${line}`);
  });

  it("puts round ticks on the charts' axes", () => {
    assert.deepEqual(roundTicks(108), [0, 50, 100, 150]);
    assert.deepEqual(roundTicks(36.1), [0, 10, 20, 30, 40]);
    assert.deepEqual(roundTicks(0.93), [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(roundTicks(0), [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(roundTicks(60), [0, 20, 40, 60]);
  });

  it("keeps results under the XDG state folder by default, not in the working directory", () => {
    assert.equal(defaultOutDir({ XDG_STATE_HOME: "/var/state" }), "/var/state/ledger-json-gateway/bench");
    assert.match(defaultOutDir({}), /\/\.local\/state\/ledger-json-gateway\/bench$/);
    assert.match(
      defaultOutDir({ XDG_STATE_HOME: "relative" }),
      /\/\.local\/state\//,
      "XDG: a relative path is ignored",
    );
  });

  it("reads the percentiles shown, the in-flight cap and the metrics port, and refuses what cannot be judged", () => {
    const raw = (over: Partial<RawOptions>): RawOptions => ({
      url: "http://127.0.0.1:7575",
      "token-file": "t",
      scenario: "reads,updates",
      subscribers: "2",
      duration: "10s",
      "warm-up": "0",
      interval: "1s",
      connections: "4",
      "acs-contracts": "1",
      "reassignment-contracts": "1",
      ...over,
    });
    const defaults = loadOptions(raw({}));
    assert.deepEqual(defaults.percentiles, [50, 95, 99, 99.9]);
    assert.equal(defaults.maxInFlight, 1000);
    assert.equal(defaults.abortOnFail, false);
    assert.equal(defaults.metricsPort, undefined);
    const given = loadOptions(
      raw({ percentiles: "p75,p99.99", "max-in-flight": "8", "abort-on-fail": true, "metrics-port": "0" }),
    );
    assert.deepEqual(
      [given.percentiles, given.maxInFlight, given.abortOnFail, given.metricsPort],
      [[75, 99.99], 8, true, 0],
    );
    const refused = (over: Partial<RawOptions>, message: RegExp) =>
      assert.throws(
        () => loadOptions(raw(over)),
        (error: Error) => error instanceof UsageError && message.test(error.message),
      );
    refused({ percentiles: "p50,median" }, /--percentiles takes pNN or pNN\.N names .* got 'median'/);
    refused({ percentiles: "p0" }, /--percentiles takes/);
    refused({ "metrics-port": "70000" }, /--metrics-port takes a port/);
    refused({ "max-in-flight": "0" }, /--max-in-flight takes a whole number of at least 1/);
    refused({ concurrency: "2", threshold: ["dropped<1%"] }, /dropped is the open model's .* offers no rate/);
    refused(
      { threshold: ["updates.achieved>=95%"] },
      /achieved is a request scenario's \(reads\), not updates's/,
    );
    assert.equal(loadOptions(raw({ threshold: ["reads.dropped<1%", "achieved>=95%"] })).thresholds.length, 2);
  });

  it("exposes every metric its Grafana dashboard queries, counting measured answers, errors and arrivals", async () => {
    const metrics = new LiveMetrics();
    metrics.openScenarios(["reads"]);
    const reads = metrics.series("reads");
    reads.record(2);
    reads.record(3);
    reads.error("HTTP 503");
    metrics.offer("reads");
    metrics.drop("reads");
    const text = await metrics.exposition();
    assert.match(text, /^ledger_gateway_bench_answers_total\{series="reads"\} 2$/m);
    assert.match(text, /^ledger_gateway_bench_errors_total\{series="reads",code="HTTP 503"\} 1$/m);
    assert.match(text, /^ledger_gateway_bench_offered_total\{scenario="reads"\} 1$/m);
    assert.match(text, /^ledger_gateway_bench_dropped_iterations_total\{scenario="reads"\} 1$/m);
    assert.match(text, /^ledger_gateway_bench_latency_seconds_bucket\{le="0.004",series="reads"\} 2$/m);
    const dashboard = readFileSync("grafana/dashboards/ledger-json-gateway-bench.json", "utf8");
    const used = new Set(
      [...dashboard.matchAll(/\b(ledger_gateway_bench_[a-z0-9_]+)/g)].map((m) => m[1] as string),
    );
    assert.ok(used.size >= 6, [...used].join(", "));
    for (const name of used) assert.match(text, new RegExp(`^${name}[{ ]`, "m"), `${name} is not exposed`);
  });
});
