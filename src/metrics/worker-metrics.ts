import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import { EXPOSITION_CONTENT_TYPES, type ExpositionFormat } from "./exposition-format.js";
import type { Exemplar, MetricJson } from "./histogram-exemplars.js";
import { openMetricsExposition } from "./open-metrics.js";

/**
 * One worker's registry as GatewayMetrics.snapshot() gives it (`getMetricsAsJSON()` with the
 * latency histograms' exemplars): plain data, sent between threads.
 */
export type WorkerMetricsJson = MetricJson[];

const sumOf = (metrics: WorkerMetricsJson, name: string): number =>
  metrics.find((metric) => metric.name === name)?.values.reduce((sum, { value }) => sum + value, 0) ?? 0;

/**
 * The /metrics text of a gateway whose worker threads each keep their own registry
 * (server.workers > 1): every `ledger_gateway_` series is the sum over the workers, without a
 * `worker` label (prom-client's AggregatorRegistry: counters, histograms and gauges summed), so
 * queries read as with one thread. The process metrics (CPU, resident memory, file descriptors,
 * the main thread's heap and event loop) come once, from `processRegistry`, not once per worker.
 *
 * The one place a worker label matters is how the load spreads over the threads (SO_REUSEPORT
 * hashes connections, not requests): `ledger_gateway_worker_http_requests_total{worker}` and
 * `ledger_gateway_worker_ws_streams_open{worker}`, taken from each worker's own series at scrape,
 * and `ledger_gateway_worker_up{worker}`, 0 for a worker that did not answer the scrape in time
 * (its series are then missing from the sums).
 *
 * In OpenMetrics (`format`), each histogram bucket keeps the newest exemplar any worker had for it
 * (the aggregation itself drops them).
 *
 * A worker that did not answer this scrape but an earlier one is summed with what it said then
 * (`stale`): its counters stay where they were instead of dropping out of the sums, which
 * Prometheus would read as a counter reset (and rates and increases would jump, twice).
 *
 * @param perWorker index i is worker i + 1's metrics; undefined: that worker never answered
 * @param stale the indexes of `perWorker` whose metrics are from an earlier scrape
 */
export async function mergedWorkerExposition(
  perWorker: readonly (WorkerMetricsJson | undefined)[],
  processRegistry: Registry,
  format: ExpositionFormat = "prometheus",
  stale: ReadonlySet<number> = new Set(),
): Promise<{ contentType: string; text: string }> {
  const answered = perWorker.filter((metrics): metrics is WorkerMetricsJson => metrics !== undefined);
  const merged = AggregatorRegistry.aggregate<typeof Registry.PROMETHEUS_CONTENT_TYPE>(answered);
  const byWorker = new Registry();
  const requests = new Counter({
    name: "ledger_gateway_worker_http_requests_total",
    help: "HTTP requests answered, by worker thread (server.workers): how the load spreads over them",
    labelNames: ["worker"] as const,
    registers: [byWorker],
  });
  const streams = new Gauge({
    name: "ledger_gateway_worker_ws_streams_open",
    help: "Open WebSocket streams, by worker thread (server.workers)",
    labelNames: ["worker"] as const,
    registers: [byWorker],
  });
  const up = new Gauge({
    name: "ledger_gateway_worker_up",
    help: "1 when the worker thread (server.workers) answered this scrape, 0 when it did not in time: stuck or gone",
    labelNames: ["worker"] as const,
    registers: [byWorker],
  });
  perWorker.forEach((metrics, i) => {
    const worker = String(i + 1);
    up.set({ worker }, metrics === undefined || stale.has(i) ? 0 : 1);
    if (metrics === undefined) return;
    requests.inc({ worker }, sumOf(metrics, "ledger_gateway_http_requests_total"));
    streams.set({ worker }, sumOf(metrics, "ledger_gateway_ws_streams_open"));
  });
  if (format === "openmetrics") {
    const metrics: MetricJson[] = await merged.getMetricsAsJSON();
    attachNewestExemplars(metrics, answered);
    // The process registry is read as data too: written as OpenMetrics itself, prom-client would
    // rename its live counters (see openMetricsExposition).
    metrics.push(...(await byWorker.getMetricsAsJSON()), ...(await processRegistry.getMetricsAsJSON()));
    return openMetricsExposition(metrics);
  }
  const all = Registry.merge([merged, byWorker, processRegistry]);
  return { contentType: EXPOSITION_CONTENT_TYPES.prometheus, text: await all.metrics() };
}

/** Each histogram bucket of `merged` gets the newest of the workers' exemplars for it. */
function attachNewestExemplars(merged: MetricJson[], perWorker: readonly WorkerMetricsJson[]): void {
  const key = (name: string, labels: object) =>
    `${name} ${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
  const newest = new Map<string, Exemplar>();
  for (const metrics of perWorker) {
    for (const metric of metrics) {
      for (const { exemplar, labels } of metric.values) {
        if (exemplar == null) continue;
        const bucket = key(metric.name, labels);
        const known = newest.get(bucket);
        if (known === undefined || exemplar.timestamp > known.timestamp) newest.set(bucket, exemplar);
      }
    }
  }
  if (newest.size === 0) return;
  for (const metric of merged) {
    for (const value of metric.values) {
      const exemplar = newest.get(key(metric.name, value.labels));
      if (exemplar !== undefined) value.exemplar = exemplar;
    }
  }
}
