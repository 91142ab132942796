import { escapeXml } from "../lib/svg-chart.js";
import { lineChartSvg } from "./line-chart.js";
import type { LoadResult } from "./load-result.js";
import { type PercentileName, percentileName } from "./recorder.js";

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
type Figure = PercentileName | "max";

/**
 * The run as one self-contained HTML page (inline SVG, one inline script, nothing fetched): what
 * was loaded and how, a table per series, the thresholds, and charts over time of the latency
 * percentiles, the throughput against the offered rate, the errors, the subscribers' lag and the
 * ACS readers' reads. Against the embedded sandbox the caveat is said once, at the top, where it
 * is read before any figure (beside each of them it was said some 15 times a page). The script marks `<body data-charts-drawn="N">` with the
 * charts whose lines the browser laid out with a length: what a test reads in headless Chromium.
 */
export function htmlReport(result: LoadResult): string {
  const caveat = result.target.caveat;
  const shown = (result.load.percentiles ?? [50, 99, 99.9]).map(percentileName);
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
  const latencyChart = (name: string, title: string, percentiles: readonly Figure[]) =>
    lineChartSvg({
      title,
      unit: "ms",
      series: percentiles.map((p) => ({ name: p, points: points(name, (f) => f.latencyMs[p] ?? 0) })),
    });

  const charts: string[] = [];
  for (const name of requestNames)
    charts.push(latencyChart(name, `${name}: latency percentiles per interval`, shown));
  const open = result.overall.offered !== undefined;
  const perSecond = (count: number, seconds: number) => (seconds > 0 ? count / seconds : 0);
  charts.push(
    lineChartSvg({
      title: open ? "throughput: answers per second, and the rate offered" : "throughput: answers per second",
      unit: "per second",
      series: [
        ...requestNames.map((name) => ({
          name,
          points: points(name, (f, seconds) => perSecond(f.count + f.errors, seconds)),
        })),
        ...(open
          ? requestNames
              .filter((name) => name !== "completions")
              .map((name) => ({
                name: `${name} offered`,
                points: points(name, (f, seconds) => perSecond(f.offered ?? 0, seconds)),
              }))
          : []),
      ],
    }),
    lineChartSvg({
      title: open ? "errors, and arrivals dropped, per interval" : "errors per interval",
      unit: "count",
      series: [
        ...Object.keys(result.scenarios).map((name) => ({ name, points: points(name, (f) => f.errors) })),
        ...(open
          ? requestNames
              .filter((name) => name !== "completions")
              .map((name) => ({ name: `${name} dropped`, points: points(name, (f) => f.dropped ?? 0) }))
          : []),
      ],
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

  const row = (label: string, s: LoadResult["scenarios"][string], withOffered: boolean) => {
    const l = s.latencyMs as Record<string, number | undefined>;
    const codes = Object.entries(s.errorsByCode)
      .map(([code, n]) => `${escapeXml(code)}: ${n}`)
      .join(", ");
    const offered = !open
      ? ""
      : withOffered
        ? `<td>${s.offeredPerSecond ?? "-"}</td><td>${s.achievedPerSecond ?? "-"}</td><td>${s.dropped ?? "-"}</td>`
        : "<td></td><td></td><td></td>";
    const latencies = [...shown, "max"].map((p) => `<td>${l[p] ?? "-"}</td>`).join("");
    return `<tr><td>${escapeXml(label)}</td><td>${s.requests}</td><td>${s.ratePerSecond}</td>${offered}${latencies}<td>${s.errors}${codes ? ` (${codes})` : ""}</td></tr>`;
  };
  // A workflow's steps follow its row: what each request of an iteration took.
  const rows = Object.entries(result.scenarios).flatMap(([name, s]) => {
    const label =
      name === "acs-stream"
        ? `acs-stream: per snapshot read (${s.elementsPerSecond ?? 0} contracts/s)`
        : (SERIES_LABELS[name] ?? name);
    return [
      row(label, s, true),
      ...Object.entries(s.steps ?? {}).map(([step, figures]) =>
        row(`${name} / step ${step}`, figures, false),
      ),
    ];
  });
  const verdicts = result.thresholds.map(
    (v) =>
      `<tr><td>${escapeXml(v.threshold)}</td><td>${Number.isNaN(v.actual) ? "no such figure" : v.actual}</td><td class="${v.passed ? "pass" : "fail"}">${v.passed ? "passed" : "BREACHED"}</td></tr>`,
  );
  const aborted = result.load.abortedBy;
  const stopped = [
    ...(result.overloaded
      ? [
          `<p class="overload"><strong>Overloaded:</strong> the run could not keep its offered rate: ${escapeXml(result.overloaded)}.</p>`,
        ]
      : []),
    ...(aborted
      ? [
          `<p class="overload">Stopped at ${aborted.atSeconds} s by --abort-on-fail: ${escapeXml(aborted.threshold)} breached by the run so far (${aborted.actual}).</p>`,
        ]
      : []),
    ...(result.load.interrupted
      ? ['<p class="overload">Stopped by a signal: the figures cover the part of the window it ran.</p>']
      : []),
    ...(result.load.merged
      ? [
          `<p>Merged from ${result.load.merged.length} runs: ${result.load.merged.map((run) => `<code>${escapeXml(run.file)}</code>`).join(", ")}.</p>`,
        ]
      : []),
  ].join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Load run ${escapeXml(result.startedAt)}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
.banner { background: #fff3e0; border: 1px solid #e0a060; padding: 0.6em 1em; } .overload { color: #c0392b; } .pass { color: #27ae60; } .fail { color: #c0392b; font-weight: bold; }
figure { display: inline-block; margin: 0.5em; }
</style></head>
<body>
<h1>Load run against ${escapeXml(result.target.url)}</h1>
${caveat ? `<p class="banner"><strong>Every figure here is ${escapeXml(caveat)}.</strong> The embedded sandbox is an in-memory model; a Canton participant spends milliseconds per command.</p>` : ""}
<p>Ledger API ${escapeXml(result.target.version)}, participant <code>${escapeXml(result.target.participantId)}</code>. Started ${escapeXml(result.startedAt)}.</p>
<p>Load: ${escapeXml(result.load.description)}. Latency is measured from each request's intended send time (a request late because of a backlog counts its wait); lag from a command's intended send time to its transaction at each subscriber.</p>
<p><code>${escapeXml(result.command)}</code></p>
${stopped}
<h2>Figures</h2>
<table><tr><th>series</th><th>count</th><th>per second</th>${open ? "<th>offered /s</th><th>achieved /s</th><th>dropped</th>" : ""}${[...shown, "max"].map((p) => `<th>${p} ms</th>`).join("")}<th>errors</th></tr>
${rows.join("\n")}
</table>
${verdicts.length ? `<h2>Thresholds</h2><table><tr><th>threshold</th><th>measured</th><th>verdict</th></tr>${verdicts.join("\n")}</table>` : ""}
<h2>Over time</h2>
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
