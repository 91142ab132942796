import type { GatewayResult } from "../lib/results.js";
import type { LocalResult } from "./result.js";

/**
 * The comparison's results as named figures, `SCENARIO.NAME` -> a number and its unit: what
 * `local --threshold` reads, what `--compare` sets side by side and what the report lists. Read
 * from the results file's shape (bench/lib/results.ts), so committed runs of every age have them,
 * as far as they hold the figure: older runs lack some (no NDJSON, `upstreamCalls` before the
 * breakdown, workers counted in requests).
 */
export type FigureUnit = "µs" | "ms" | "B" | "/s" | "x" | "";

export interface Figure {
  value: number;
  unit: FigureUnit;
}

type Put = (name: string, value: number | undefined, unit: FigureUnit) => void;

export function localFigures(r: LocalResult): Record<string, Figure> {
  const figures: Record<string, Figure> = {};
  const put: Put = (name, value, unit) => {
    if (typeof value === "number" && !Number.isNaN(value)) figures[name] = { value, unit };
  };
  updateStreams(r, put);
  if (r.submitAndWait) {
    const s = r.submitAndWait;
    put("submit-and-wait.rate", s.gateway.commandsPerSecond, "/s");
    put("submit-and-wait.p50", s.gateway.p50Ms, "ms");
    put("submit-and-wait.p99", s.gateway.p99Ms, "ms");
    put("submit-and-wait.direct.rate", s.directGrpc.commandsPerSecond, "/s");
    put("submit-and-wait.direct.p50", s.directGrpc.p50Ms, "ms");
    put("submit-and-wait.direct.p99", s.directGrpc.p99Ms, "ms");
    put("submit-and-wait.vs-direct", s.ratioToDirect.throughput, "x");
  }
  fanout(r, put);
  put("idle.rss-per-connection", r.idleConnections?.rssPerConnectionBytes, "B");
  if (r.workers) {
    put("workers.two-vs-one", r.workers.ratio, "x");
    for (const p of r.workers.points)
      put(`workers.w${p.workers}.rate`, p.framesPerSecond ?? p.requestsPerSecond, "/s");
  }
  for (const [mode, points] of Object.entries(r.wsCompression ?? {}))
    for (const p of points ?? []) {
      const at = `ws-compression.${mode}.n${p.subscribers}`;
      put(`${at}.cpu-per-delivery`, p.gatewayCpuMicrosPerDelivery, "µs");
      put(`${at}.wire-bytes-per-delivery`, p.compression?.wireBytesPerDelivery, "B");
      put(`${at}.rss-per-connection`, p.compression?.rssPerConnectionBytes, "B");
    }
  requestCost(r, put);
  for (const run of r.fairness?.runs ?? []) {
    put(`fairness.caps-${run.caps}.p99-ratio`, run.ratios.p99, "x");
    put(`fairness.caps-${run.caps}.deliveries-ratio`, run.ratios.deliveriesPerSecond, "x");
    // The target is read with caps on: the bare names are that run's.
    if (run.caps === "on") {
      put("fairness.p99-ratio", run.ratios.p99, "x");
      put("fairness.deliveries-ratio", run.ratios.deliveriesPerSecond, "x");
    }
  }
  workersScaling(r, put);
  for (const p of r.storm?.points ?? []) {
    const at = `storm.n${p.subscribers}-k${p.tokens}-q${p.queries}${p.round === "warm" ? ".warm" : ""}`;
    put(`${at}.cpu-per-start`, p.gatewayCpuMicrosPerStart, "µs");
    if (p.bare !== undefined) put(`${at}.bare-cpu-per-start`, p.bare.cpuMicrosPerStart, "µs");
    if (p.timesBare !== undefined) put(`${at}.times-bare`, p.timesBare, "x");
    put(`${at}.calls-per-start`, p.ledgerCallsPerStart, "");
    put(`${at}.first-all`, p.firstAllSeconds * 1000, "ms");
    put(`${at}.established-p99`, p.established.during.p99, "ms");
    if (p.gatewayLoopLagMaxMs !== undefined) put(`${at}.loop-lag-max`, p.gatewayLoopLagMaxMs, "ms");
  }
  return figures;
}

function updateStreams(r: GatewayResult, put: Put): void {
  for (const [prefix, u] of [
    ["update-stream", r.updateStream],
    ["update-stream.batched", r.updateStreamBatched],
  ] as const) {
    if (!u) continue;
    put(`${prefix}.direct-rate`, u.eventsPerSecond.directGrpc, "/s");
    put(`${prefix}.ws-rate`, u.eventsPerSecond.gatewayWebSocket, "/s");
    put(`${prefix}.list-rate`, u.eventsPerSecond.gatewayHttpList, "/s");
    put(`${prefix}.ws-vs-direct`, u.ratioToDirect.gatewayWebSocket, "x");
    put(`${prefix}.list-vs-direct`, u.ratioToDirect.gatewayHttpList, "x");
    put(`${prefix}.streaming-rss`, u.gatewayFirstWebSocketRssBytes, "B");
    put(`${prefix}.peak-rss`, u.gatewayPeakRssBytes, "B");
  }
}

function fanout(r: GatewayResult, put: Put): void {
  const points = r.fanout?.points ?? [];
  for (const p of points) {
    const at = `fanout.n${p.subscribers}`;
    put(`${at}.deliveries-rate`, p.deliveriesPerSecond, "/s");
    put(`${at}.cpu-per-delivery`, p.gatewayCpuMicrosPerDelivery, "µs");
    put(`${at}.upstream-streams`, p.upstreamStreams ?? p.upstreamCalls, "");
  }
  // The target's point (N = 100), and the most upstream streams any N took (the target: 1).
  put(
    "fanout.cpu-per-delivery",
    points.find((p) => p.subscribers === 100)?.gatewayCpuMicrosPerDelivery,
    "µs",
  );
  const streams = points.map((p) => p.upstreamStreams ?? p.upstreamCalls ?? Number.NaN);
  if (streams.length > 0) put("fanout.upstream-streams", Math.max(...streams), "");
}

function requestCost(r: GatewayResult, put: Put): void {
  const c = r.requestCost;
  if (!c) return;
  put("request-cost.cpu-per-submit", c.submitAndWait.gatewayCpuMsPerCommand, "ms");
  put(
    "request-cost.cpu-per-submit-for-transaction",
    c.submitAndWaitForTransaction.gatewayCpuMsPerRequest,
    "ms",
  );
  put("request-cost.cpu-per-get", c.ledgerEnd.gatewayCpuMsPerRequest, "ms");
  put("request-cost.submit-vs-direct", c.submitAndWait.ratioToDirect.throughput, "x");
  for (const [prefix, u] of [
    ["request-cost", c.updateStream],
    ["request-cost.batched", c.updateStreamBatched],
  ] as const) {
    const cpu = u.gatewayCost?.cpuMicrosPerElement;
    put(`${prefix}.ws-cpu-per-element`, cpu?.webSocket, "µs");
    put(`${prefix}.list-cpu-per-element`, cpu?.httpList, "µs");
    put(`${prefix}.ndjson-cpu-per-element`, cpu?.ndjson, "µs");
    put(`${prefix}.ws-vs-direct`, u.ratioToDirect.gatewayWebSocket, "x");
    put(`${prefix}.list-vs-direct`, u.ratioToDirect.gatewayHttpList, "x");
    put(`${prefix}.ndjson-vs-direct`, u.ratioToDirect.gatewayNdjson, "x");
  }
  put("request-cost.ndjson-first-element", c.updateStream.ndjsonFirstElementMs, "ms");
  put("request-cost.list-rss-times-answer", c.targets?.listTwinPeakRss?.timesAnswer, "x");
}

/**
 * Per load (streams, submit) and worker count W (`default` too): `rate-wW`, `gateway-cores-wW`,
 * `cpu-per-transaction-wW` or `cpu-per-command-wW`, and `wW-vs-1`, the rate against the first
 * 1-worker point's. A count measured again (`--scaling-workers 1,2,1,2`) names its later points
 * `-run2`, `-run3`, so that no point hides another.
 */
function workersScaling(r: LocalResult, put: Put): void {
  for (const [load, measured] of Object.entries(r.workersScaling?.results ?? {})) {
    const at = `workers-scaling.${load}`;
    const per = load === "streams" ? "cpu-per-transaction" : "cpu-per-command";
    const seen = new Map<string, number>();
    for (const p of measured?.points ?? []) {
      const runs = (seen.get(String(p.workers)) ?? 0) + 1;
      seen.set(String(p.workers), runs);
      const w = `w${p.workers}${runs > 1 ? `-run${runs}` : ""}`;
      put(`${at}.rate-${w}`, p.perSecond, "/s");
      put(`${at}.gateway-cores-${w}`, p.cores.gateway, "");
      put(`${at}.${per}-${w}`, p.gatewayCpuMicrosPer, "µs");
      put(`${at}.${w}-vs-1`, p.ratio, "x");
    }
  }
}
