import type { Route } from "../endpoints/route.js";
import { type ExpositionFormat, expositionFormatOf } from "./exposition-format.js";
import type { GatewayMetrics } from "./gateway-metrics.js";

/** The /metrics text in a format; a worker thread's is the merge of all workers'. */
export type MetricsExposition = (format: ExpositionFormat) => Promise<{ contentType: string; text: string }>;

/**
 * GET /metrics, the Prometheus exposition: no token, as scrapers have none. The format follows
 * the scraper's Accept: OpenMetrics (with exemplars) for one that asks for it, as Prometheus
 * does, the Prometheus text for any other. `exposition` replaces the gateway's own registry's (a
 * worker thread serves the merge of all workers').
 */
export function metricsRoute(
  metrics: GatewayMetrics,
  exposition: MetricsExposition = (format) => metrics.exposition(format),
): Route {
  return {
    method: "GET",
    path: "/metrics",
    operationId: "getMetrics",
    summary: "Prometheus metrics of the gateway",
    tag: "Metrics",
    response: { kind: "text", contentType: metrics.registry.contentType },
    auth: "none",
    countsInFlight: false,
    headers: ["accept"],
    handle: async (ctx) => {
      const { contentType, text } = await exposition(expositionFormatOf(ctx.headers.accept ?? ""));
      return { kind: "text", text, contentType };
    },
  };
}
