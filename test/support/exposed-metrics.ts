import { Registry } from "prom-client";
import { GatewayMetrics } from "../../src/metrics/gateway-metrics.js";
import { mergedWorkerExposition } from "../../src/metrics/worker-metrics.js";

/** A histogram's series names its family with one of these suffixes. */
export const HISTOGRAM_SUFFIX = /_(bucket|count|sum)$/;

const typed = (text: string) => [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string);

/**
 * Metric families the gateway exposes, as Prometheus will see them: with one thread, and with
 * several (server.workers > 1 adds the per-worker series). What the dashboard's panels and the
 * alert rules query must be among them.
 */
export async function exposedFamilies(): Promise<Set<string>> {
  const { text } = await new GatewayMetrics().exposition();
  const worker = await new GatewayMetrics({ processMetrics: false }).registry.getMetricsAsJSON();
  const workers = await mergedWorkerExposition([worker, worker], new Registry());
  return new Set([...typed(text), ...typed(workers.text)]);
}
