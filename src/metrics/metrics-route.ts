import type { Route } from "../endpoints/route.js";
import type { GatewayMetrics } from "./gateway-metrics.js";

/**
 * GET /metrics, the Prometheus exposition: no token, as scrapers have none. `exposition`
 * replaces the gateway's own registry's (a worker thread serves the merge of all workers').
 */
export function metricsRoute(
  metrics: GatewayMetrics,
  exposition: () => Promise<{ contentType: string; text: string }> = () => metrics.exposition(),
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
    handle: async () => {
      const { contentType, text } = await exposition();
      return { kind: "text", text, contentType };
    },
  };
}
