import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { StreamEndReason } from "../errors/index.js";
import type { CallOutcome } from "../ledger/ledger-client.js";

/** How a stream was served: a WebSocket or an HTTP list twin. */
export type StreamTransport = "ws" | "http";

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

  readonly wsStreamsOpen = new Gauge({
    name: "ledger_gateway_ws_streams_open",
    help: "Open WebSocket streams, by endpoint path template",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly streamElements = new Counter({
    name: "ledger_gateway_stream_elements_sent_total",
    help: "Stream elements sent to clients, by endpoint and transport (ws, http list twin)",
    labelNames: ["endpoint", "transport"] as const,
    registers: [this.registry],
  });

  readonly streamBytes = new Counter({
    name: "ledger_gateway_stream_bytes_sent_total",
    help: "Bytes of stream elements sent to clients (JSON text), by endpoint and transport",
    labelNames: ["endpoint", "transport"] as const,
    registers: [this.registry],
  });

  readonly wsBackpressurePauses = new Counter({
    name: "ledger_gateway_ws_backpressure_pauses_total",
    help: "Times a WebSocket went over its high-water mark and its gRPC stream was paused",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly streamEnds = new Counter({
    name: "ledger_gateway_stream_ends_total",
    help: "Streams ended, by endpoint, transport and reason (completed, idle, element_limit, slow_consumer, error, unsubscribed)",
    labelNames: ["endpoint", "transport", "reason"] as const,
    registers: [this.registry],
  });

  readonly streamDuration = new Histogram({
    name: "ledger_gateway_stream_duration_seconds",
    help: "Lifetime of streams, by endpoint, transport and end reason",
    labelNames: ["endpoint", "transport", "reason"] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400],
    registers: [this.registry],
  });

  readonly wsCloses = new Counter({
    name: "ledger_gateway_ws_closes_total",
    help: "WebSocket stream closes, by endpoint and close code",
    labelNames: ["endpoint", "code"] as const,
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

  recordStreamSent(endpoint: string, transport: StreamTransport, elements: number, bytes: number): void {
    this.streamElements.inc({ endpoint, transport }, elements);
    this.streamBytes.inc({ endpoint, transport }, bytes);
  }

  recordStreamEnd(
    endpoint: string,
    transport: StreamTransport,
    reason: StreamEndReason,
    seconds: number,
  ): void {
    this.streamEnds.inc({ endpoint, transport, reason });
    this.streamDuration.observe({ endpoint, transport, reason }, seconds);
  }

  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
