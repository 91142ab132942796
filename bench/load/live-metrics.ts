import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { SeriesListener } from "./recorder.js";

/**
 * The run's figures as Prometheus metrics while it runs (`--metrics-port`): a scrape endpoint
 * rather than remote-write, as the operators' Prometheus already scrapes the gateway the same
 * way (grafana/prometheus.yml), prom-client is already the gateway's, and nothing the tool would
 * need to be told (a remote-write URL, its credentials) can be wrong. A registry of its own, not
 * prom-client's global one. Only measured figures count (the warm-up's are not recorded);
 * labels are bounded: the series name and, for errors, their code (an HTTP status with its
 * error code, a close code, a socket error), never a party, a command id or a token.
 */
const PREFIX = "ledger_gateway_bench_";

/** From 0.5 ms to ~33 s, doubling: a participant's answers, and a sandbox's sub-millisecond ones. */
const BUCKETS = Array.from({ length: 17 }, (_, i) => 0.0005 * 2 ** i);

export class LiveMetrics {
  private readonly registry = new Registry();
  private readonly latency = new Histogram({
    name: `${PREFIX}latency_seconds`,
    help: "Measured latency per series: request scenarios from the intended send time, streams' lag or read time",
    labelNames: ["series"],
    buckets: BUCKETS,
    registers: [this.registry],
  });
  private readonly answers = new Counter({
    name: `${PREFIX}answers_total`,
    help: "Measured answers (or deliveries, reads) without error per series",
    labelNames: ["series"],
    registers: [this.registry],
  });
  private readonly errors = new Counter({
    name: `${PREFIX}errors_total`,
    help: "Measured errors per series and code",
    labelNames: ["series", "code"],
    registers: [this.registry],
  });
  private readonly offered = new Counter({
    name: `${PREFIX}offered_total`,
    help: "Open model: arrivals due in the measured window per request scenario",
    labelNames: ["scenario"],
    registers: [this.registry],
  });
  private readonly dropped = new Counter({
    name: `${PREFIX}dropped_iterations_total`,
    help: "Open model: arrivals not sent because --max-in-flight requests were out",
    labelNames: ["scenario"],
    registers: [this.registry],
  });
  readonly inFlight = new Gauge({
    name: `${PREFIX}requests_in_flight`,
    help: "Requests sent and not yet answered",
    registers: [this.registry],
  });
  readonly targetRate = new Gauge({
    name: `${PREFIX}target_rate`,
    help: "Open model: the schedule's rate now, requests per second (0 in the closed model)",
    registers: [this.registry],
  });
  readonly loopDelay = new Gauge({
    name: `${PREFIX}event_loop_delay_p99_seconds`,
    help: "The tool's own event-loop delay over the last interval (high: its delay is in the figures)",
    registers: [this.registry],
  });
  private server: Server | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** What a series' recorder tells, for these metrics. */
  series(name: string): SeriesListener {
    const latency = this.latency.labels(name);
    const answers = this.answers.labels(name);
    return {
      record: (latencyMs) => {
        latency.observe(latencyMs / 1000);
        answers.inc();
      },
      error: (code) => this.errors.labels(name, code).inc(),
    };
  }

  /** The open model's scenarios, at 0 from the start: a run that drops nothing shows 0, not no data. */
  openScenarios(scenarios: readonly string[]): void {
    for (const scenario of scenarios) {
      this.offered.labels(scenario).inc(0);
      this.dropped.labels(scenario).inc(0);
    }
  }

  offer(scenario: string): void {
    this.offered.labels(scenario).inc();
  }

  drop(scenario: string): void {
    this.dropped.labels(scenario).inc();
  }

  /** The text a scrape gets (Prometheus exposition format). */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  /** Serves `GET /metrics` on all interfaces (a Prometheus elsewhere scrapes it); resolves the port. */
  async listen(port: number): Promise<number> {
    const server = createServer((request, response) => {
      if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
        response.writeHead(404).end();
        return;
      }
      this.exposition().then(
        (text) => response.writeHead(200, { "content-type": this.registry.contentType }).end(text),
        (error: Error) => response.writeHead(500).end(error.message),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}
