import { escapeXml } from "../lib/svg-chart.js";
import { lineChartSvg } from "./line-chart.js";
import type { LoadResult } from "./load-result.js";

/** Series of the stream scenarios: charted apart from the requests' latency and throughput. */
const STREAM_SERIES = ["updates", "completions-stream", "acs-stream"];
/** What a series' latencies are, where its name does not say it. */
const SERIES_LABELS: Record<string, string> = {
  updates: "updates: lag per delivery",
  completions: "completions: send to completion",
  "completions-stream": "completions-stream: lag per completion",
};
/** A stream's lag or read latency: its tail matters, so the max too. */
const STREAM_PERCENTILES = ["p50", "p99", "p99.9", "max"] as const;

/**
 * The run as one self-contained HTML page (inline SVG, one inline script, nothing fetched): what
 * was loaded and how, a table per series, the thresholds, and charts over time of the latency
 * percentiles, the throughput, the errors, the subscribers' lag and the ACS readers' reads. Against the embedded sandbox
 * the caveat stands beside every figure. The script marks `<body data-charts-drawn="N">` with the
 * charts whose lines the browser laid out with a length: what a test reads in headless Chromium.
 */
export function htmlReport(result: LoadResult): string {
  const caveat = result.target.caveat;
  const beside = caveat ? ` (${caveat})` : "";
  const requestNames = Object.keys(result.scenarios).filter((name) => !STREAM_SERIES.includes(name));
  const timeline = result.timeline;
  const points = (
    name: string,
    value: (f: LoadResult["timeline"][number]["scenarios"][string], seconds: number) => number,
  ) =>
    timeline.flatMap((point, i) => {
      const figures = point.scenarios[name];
      const seconds = point.seconds - (timeline[i - 1]?.seconds ?? 0);
      return figures ? [[point.seconds, value(figures, seconds)] as const] : [];
    });

  /** A series' latency percentiles over the run, one line each. */
  const latencyChart = (
    name: string,
    title: string,
    percentiles: readonly ("p50" | "p99" | "p99.9" | "max")[],
  ) =>
    lineChartSvg({
      title,
      unit: "ms",
      series: percentiles.map((p) => ({ name: p, points: points(name, (f) => f.latencyMs[p]) })),
      ...(caveat && { caption: caveat }),
    });

  const charts: string[] = [];
  for (const name of requestNames)
    charts.push(latencyChart(name, `${name}: latency percentiles per interval`, ["p50", "p99", "p99.9"]));
  charts.push(
    lineChartSvg({
      title: "throughput: answers per second",
      unit: "per second",
      series: requestNames.map((name) => ({
        name,
        points: points(name, (f, seconds) => (seconds > 0 ? f.count / seconds : 0)),
      })),
      ...(caveat && { caption: caveat }),
    }),
    lineChartSvg({
      title: "errors per interval",
      unit: "errors",
      series: Object.keys(result.scenarios).map((name) => ({ name, points: points(name, (f) => f.errors) })),
      ...(caveat && { caption: caveat }),
    }),
  );
  if (result.scenarios.updates)
    charts.push(
      latencyChart(
        "updates",
        `stream lag: command sent -> transaction at each of ${result.load.subscribers} subscribers`,
        STREAM_PERCENTILES,
      ),
    );
  if (result.scenarios["completions-stream"])
    charts.push(
      latencyChart(
        "completions-stream",
        `completion lag: command sent -> completion at each of ${result.load.streams?.["completions-stream"]} subscribers`,
        STREAM_PERCENTILES,
      ),
    );
  if (result.scenarios["acs-stream"])
    charts.push(
      latencyChart(
        "acs-stream",
        `ACS snapshot reads: latency per read at ${result.load.streams?.["acs-stream"]} readers`,
        STREAM_PERCENTILES,
      ),
      lineChartSvg({
        title: "ACS snapshot reads: contracts received per second",
        unit: "per second",
        series: [
          {
            name: "contracts",
            points: points("acs-stream", (f, seconds) => (seconds > 0 ? (f.elements ?? 0) / seconds : 0)),
          },
        ],
        ...(caveat && { caption: caveat }),
      }),
    );

  charts.push(
    lineChartSvg({
      title: "the load tool's own event-loop delay (high: its delay is in the figures)",
      unit: "ms",
      series: (["p99", "max"] as const).map((p) => ({
        name: p,
        points: timeline.map((point) => [point.seconds, point.clientLoopDelayMs[p]] as const),
      })),
    }),
  );

  const rows = Object.entries(result.scenarios).map(([name, s]) => {
    const l = s.latencyMs;
    const codes = Object.entries(s.errorsByCode)
      .map(([code, n]) => `${escapeXml(code)}: ${n}`)
      .join(", ");
    const label =
      name === "acs-stream"
        ? `acs-stream: per snapshot read (${s.elementsPerSecond ?? 0} contracts/s)`
        : (SERIES_LABELS[name] ?? name);
    return `<tr><td>${escapeXml(label)}</td><td>${s.requests}</td><td>${s.ratePerSecond}</td><td>${l.p50}</td><td>${l.p90}</td><td>${l.p99}</td><td>${l["p99.9"]}</td><td>${l.max}</td><td>${s.errors}${codes ? ` (${codes})` : ""}</td>${caveat ? `<td class="caveat">${escapeXml(caveat)}</td>` : ""}</tr>`;
  });
  const verdicts = result.thresholds.map(
    (v) =>
      `<tr><td>${escapeXml(v.threshold)}</td><td>${Number.isNaN(v.actual) ? "no such figure" : v.actual}</td><td class="${v.passed ? "pass" : "fail"}">${v.passed ? "passed" : "BREACHED"}</td>${caveat ? `<td class="caveat">${escapeXml(caveat)}</td>` : ""}</tr>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Load run ${escapeXml(result.startedAt)}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
td:first-child, th:first-child { text-align: left; } .caveat { color: #a04000; text-align: left; }
.banner { background: #fff3e0; border: 1px solid #e0a060; padding: 0.6em 1em; } .pass { color: #27ae60; } .fail { color: #c0392b; font-weight: bold; }
figure { display: inline-block; margin: 0.5em; } figcaption { font-size: 0.8em; color: #a04000; }
</style></head>
<body>
<h1>Load run against ${escapeXml(result.target.url)}</h1>
${caveat ? `<p class="banner"><strong>Every figure here is ${escapeXml(caveat)}.</strong> The embedded sandbox is an in-memory model; a Canton participant spends milliseconds per command.</p>` : ""}
<p>Ledger API ${escapeXml(result.target.version)}, participant <code>${escapeXml(result.target.participantId)}</code>. Started ${escapeXml(result.startedAt)}.</p>
<p>Load: ${escapeXml(result.load.description)}. Latency is measured from each request's intended send time (a request late because of a backlog counts its wait); lag from a command's intended send time to its transaction at each subscriber.</p>
<p><code>${escapeXml(result.command)}</code></p>
<h2>Figures${escapeXml(beside)}</h2>
<table><tr><th>series</th><th>count</th><th>per second</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>errors</th>${caveat ? "<th></th>" : ""}</tr>
${rows.join("\n")}
</table>
${verdicts.length ? `<h2>Thresholds</h2><table><tr><th>threshold</th><th>measured</th><th>verdict</th>${caveat ? "<th></th>" : ""}</tr>${verdicts.join("\n")}</table>` : ""}
<h2>Over time${escapeXml(beside)}</h2>
${charts.join("\n")}
<script>
(() => {
  let drawn = 0;
  for (const chart of document.querySelectorAll("svg.chart")) {
    const lines = [...chart.querySelectorAll("polyline.series")];
    if (lines.some((line) => line.points.numberOfItems > 1 && line.getTotalLength() > 0)) drawn++;
  }
  document.body.dataset.chartsDrawn = String(drawn);
  document.body.dataset.charts = String(document.querySelectorAll("svg.chart").length);
})();
</script>
</body></html>
`;
}
