import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { CallOutcome } from "../ledger/ledger-client.js";

/**
 * The gateway's Prometheus metrics. Labels are bounded by construction: route templates
 * (never raw paths), gRPC method names, status classes and codes. Parties, user ids and
 * tokens never become labels.
 */
export class GatewayMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: "ledger_gateway_http_requests_total",
    help: "HTTP requests answered, by route template, method and status class",
    labelNames: ["route", "method", "status_class"] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: "ledger_gateway_http_request_duration_seconds",
    help: "Time from request to the last byte of the answer, by route template and method",
    labelNames: ["route", "method"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly httpInFlight = new Gauge({
    name: "ledger_gateway_http_requests_in_flight",
    help: "HTTP requests being served",
    registers: [this.registry],
  });

  readonly grpcDuration = new Histogram({
    name: "ledger_gateway_grpc_client_call_duration_seconds",
    help: "Duration of calls to the ledger's gRPC API, by method and gRPC status code",
    labelNames: ["method", "code"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  recordCall(outcome: CallOutcome): void {
    this.grpcDuration.observe(
      { method: `${outcome.service}/${outcome.method}`, code: outcome.code },
      outcome.seconds,
    );
  }

  recordHttp(route: string, method: string, status: number, seconds: number): void {
    this.httpRequests.inc({ route, method, status_class: `${Math.floor(status / 100)}xx` });
    this.httpDuration.observe({ route, method }, seconds);
  }

  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
