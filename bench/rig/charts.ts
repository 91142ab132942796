import type { Wave2Result } from "../lib/results.js";
import { barChartSvg } from "../lib/svg-chart.js";
import type { StormResult } from "./result.js";
import type { FanoutPoint, WorkersPoint } from "./scenarios/fanout.js";
import { FANOUT_CPU_TARGET_MICROS, WORKERS_TARGET } from "./targets.js";

/**
 * The bench v2 charts, by name: written as `<results file>-<name>.svg` beside the results file
 * (docs/performance.md links the committed ones) and drawn in the HTML report.
 */
export function localCharts(r: Wave2Result): [name: string, svg: string][] {
  const charts: [string, string][] = [];
  const fanout = r.fanout?.points;
  if (fanout) {
    const bars = (value: (p: FanoutPoint) => number) =>
      fanout.map((p) => ({ label: `N = ${p.subscribers}`, value: value(p) }));
    charts.push(
      [
        "fanout-deliveries",
        barChartSvg({
          title: "Deliveries/s to N identical WebSocket subscribers",
          unit: "deliveries/s",
          bars: bars((p) => p.deliveriesPerSecond),
        }),
      ],
      [
        "fanout-cpu",
        barChartSvg({
          title: "Gateway CPU per delivery",
          unit: "µs per delivered element",
          bars: bars((p) => p.gatewayCpuMicrosPerDelivery),
          target: {
            value: FANOUT_CPU_TARGET_MICROS,
            label: `target at N = 100: <= ${FANOUT_CPU_TARGET_MICROS} µs`,
          },
        }),
      ],
      [
        "fanout-upstreams",
        barChartSvg({
          title: "Upstream update streams for N identical subscribers",
          unit: "streams from the ledger (admission probes apart)",
          bars: bars((p) => p.upstreamStreams),
          target: { value: 1, label: "target: 1" },
        }),
      ],
    );
  }
  if (r.idleConnections) {
    charts.push([
      "idle",
      barChartSvg({
        title: `Gateway RSS per idle WebSocket (${r.idleConnections.connections} open)`,
        unit: "KiB per connection",
        bars: [
          {
            label: "measured",
            value: Math.round((r.idleConnections.rssPerConnectionBytes / 1024) * 10) / 10,
          },
        ],
        target: { value: 16, label: "target: <= 16 KiB" },
      }),
    ]);
  }
  if (r.workers) {
    const rate = (p: WorkersPoint) => p.framesPerSecond ?? p.requestsPerSecond;
    const one = r.workers.points[0] ? rate(r.workers.points[0]) : 1;
    charts.push([
      "workers",
      barChartSvg({
        title: "Streamed transactions/s, relative to 1 worker",
        unit: "x one worker",
        bars: r.workers.points.map((p) => ({
          label: `${p.workers} worker${p.workers > 1 ? "s" : ""}`,
          value: Math.round((rate(p) / one) * 100) / 100,
        })),
        target: { value: WORKERS_TARGET, label: `target: >= ${WORKERS_TARGET}x` },
      }),
    ]);
  }
  return charts;
}

/** Issue 39's targets: CPU per start of one token's crowd, and the established p99 in a storm. */
const STORM_CPU_TARGET_MICROS = 100;
const STORM_P99_TARGET_MS = 100;
/** Issue 39's title: a start at most twice what bare uWebSockets.js costs (one token's crowd). */
const STORM_TIMES_BARE_TARGET = 2;

/** The storm scenario's charts: CPU per start, and the established subscribers' p99, per crowd. */
export function stormCharts(storm: StormResult): [name: string, svg: string][] {
  const label = (p: StormResult["points"][number]) =>
    `${p.subscribers >= 1000 ? `${p.subscribers / 1000}k` : p.subscribers} K${p.tokens} Q${p.queries}${p.round === "warm" ? " warm" : ""}`;
  return [
    [
      "storm-cpu",
      barChartSvg({
        title: "Reconnect storm: gateway CPU per subscriber start",
        unit: "µs per start (N sockets, K tokens, Q queries)",
        bars: storm.points.map((p) => ({ label: label(p), value: p.gatewayCpuMicrosPerStart })),
        target: {
          value: STORM_CPU_TARGET_MICROS,
          label: `issue 39: <= ${STORM_CPU_TARGET_MICROS} µs (one token)`,
        },
      }),
    ],
    [
      "storm-times-bare",
      barChartSvg({
        title: "Reconnect storm: gateway CPU per start / bare uWebSockets.js's, same crowd",
        unit: "times bare uWS (measured right after each storm)",
        bars: storm.points
          .filter((p) => p.timesBare !== undefined)
          .map((p) => ({ label: label(p), value: p.timesBare as number })),
        target: {
          value: STORM_TIMES_BARE_TARGET,
          label: `issue 39: <= ${STORM_TIMES_BARE_TARGET}x (one token)`,
        },
      }),
    ],
    [
      "storm-established-p99",
      barChartSvg({
        title: "Established subscribers' p99 delivery delay during the storm",
        unit: "ms, submit to receipt",
        bars: storm.points.map((p) => ({ label: label(p), value: p.established.during.p99 })),
        target: { value: STORM_P99_TARGET_MS, label: `issue 39: < ${STORM_P99_TARGET_MS} ms at N = 10,000` },
      }),
    ],
  ];
}
