import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import {
  LEDGER_LOSS_CAUSES,
  type LedgerLossCause,
  STREAM_END_REASONS,
  type StreamEndReason,
} from "../errors/index.js";
import {
  ADMISSION_OUTCOMES,
  CATCH_UP_CAUSES,
  type FanoutEvents,
  MEMBER_MODES,
  ROTATION_CAUSES,
  UPSTREAM_CLOSE_REASONS,
} from "../fanout/subscription.js";
import type { CallObserver } from "../ledger/call-observer.js";
import type { RefusedCallReason } from "../ledger/http2-connection.js";
import { sampledTraceId } from "../ledger/trace-context.js";
import { QUOTA_CAPS, QUOTA_REFUSAL_REASONS, type QuotaRefusal } from "../limits/client-quotas.js";
import {
  LEDGER_STREAM_PURPOSES,
  LEDGER_STREAM_REFUSAL_REASONS,
  type LedgerStreamBudgetEvents,
} from "../limits/ledger-stream-budget.js";
import type { ServedApiVersion } from "../proto/served-api-version.js";
import { EXPOSITION_CONTENT_TYPES, type ExpositionFormat } from "./exposition-format.js";
import type { GrpcMethodLabel } from "./grpc-method-labels.js";
import { type BucketExemplars, HistogramExemplars, type MetricJson } from "./histogram-exemplars.js";
import { replaceOpenFdsGauge } from "./open-fds.js";
import { openMetricsExposition } from "./open-metrics.js";
import { PendingCounts } from "./pending-counts.js";
import { type LagSource, SubscriberLagGauges } from "./subscriber-lag.js";

const REFUSED_CALL_REASONS: readonly RefusedCallReason[] = ["metadata_too_large"];

/**
 * How long a ledger health probe's answer serves later scrapes. A probe is a call, and a call's
 * answer is traffic on the connection: a ledger that polices keep-alive pings (grpc-java: a
 * ping strike is forgiven whenever it sends something) would never see a connection idle if
 * every scrape, however frequent, made one. Scrapes come every 10-15 s in production.
 */
const LEDGER_PROBE_REUSE_MS = 5_000;

/** How a stream was served: a WebSocket, an HTTP list twin's one array, or a list twin streamed. */
export type StreamTransport = "ws" | "http" | "ndjson" | "sse";

const STREAM_TRANSPORTS: readonly StreamTransport[] = ["ws", "http", "ndjson", "sse"];

/** The classes the gateway answers with (no 1xx or 3xx: upgrades are not counted as requests). */
const STATUS_CLASSES = ["2xx", "4xx", "5xx"] as const;

/**
 * Close codes a stream socket ends with: ours (1000 completed, 1001 shutdown, 1008 slow
 * consumer) and the ones clients and uWS use (1005 none given, 1006 connection lost, 1009 query
 * frame too big, 1011). A client may close with any code from 1000 to 4999: the rest are
 * `other`, so that a client cannot mint label values.
 */
const WS_CLOSE_CODES = ["1000", "1001", "1005", "1006", "1008", "1009", "1011"] as const;

/** The `code` label of a WebSocket close. */
export function closeCodeLabel(code: number): string {
  const text = String(code);
  return (WS_CLOSE_CODES as readonly string[]).includes(text) ? text : "other";
}

/**
 * prom-client's default gauges whose names end in `_total`, which Prometheus reserves for
 * counters (`promtool check metrics` refuses them). Each is the sum over the `type` label of
 * a gauge prom-client also exports (`nodejs_active_handles` ...), so they are dropped, not
 * renamed: `sum(nodejs_active_handles)` is the same number, and a renamed copy would be
 * `nodejs_active_handles`, the name of that labelled gauge.
 */
export const DROPPED_DEFAULT_METRICS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
] as const;

/**
 * prom-client's default metrics, less the {@link DROPPED_DEFAULT_METRICS}, its open descriptors
 * counted without a listing on the event loop (open-fds.ts).
 */
export function addProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  replaceOpenFdsGauge(registry);
}

/** The HTTP series of one route template and method. */
export interface HttpRecorder {
  /** `traceId`: the request's trace, the exemplar of the duration's bucket (OpenMetrics scrapes show it). */
  record(status: number, seconds: number, traceId?: string): void;
}

const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const CALL_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120,
];

/** A bound series of the call histogram and its buckets' exemplars. */
interface CallSeries {
  readonly duration: Histogram.Internal<"method" | "code">;
  readonly exemplars: BucketExemplars;
}

/** The label values known before the first request, for {@link GatewayMetrics.declare}. */
export interface KnownLabels {
  /** Every HTTP route as it is labelled: template and method (HEAD counts as GET). */
  readonly routes: readonly { readonly route: string; readonly method: string }[];
  /** Path templates of the stream endpoints (WebSocket and list twin share them). */
  readonly streamEndpoints: readonly string[];
  /** Every gRPC method the gateway may call. */
  readonly grpcMethods: readonly GrpcMethodLabel[];
}

/**
 * The gateway's Prometheus metrics. Labels are bounded by construction: route templates
 * (never raw paths), gRPC method names, status classes and codes. Parties, user ids and
 * tokens never become labels.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  /** Bound series of gRPC calls: `Service/Method` -> code -> histogram child. */
  readonly #calls = new Map<string, Map<string, CallSeries>>();
  /** `service/method` labels by service and method: made once, not joined per call. */
  readonly #methodLabels = new Map<string, Map<string, string>>();
  /** Bound series of HTTP answers: route template -> method -> recorder. */
  readonly #http = new Map<string, Map<string, HttpRecorder>>();

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
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  /**
   * The latency histograms' exemplars (the trace of an observation, per bucket the newest), kept
   * beside prom-client's histograms rather than in them: its exemplars need the registry to be
   * OpenMetrics, which the Prometheus text would then no longer be, and cannot be recorded through
   * a bound series.
   */
  readonly #httpExemplars = new HistogramExemplars({
    name: "ledger_gateway_http_request_duration_seconds",
    labelNames: ["route", "method"],
    bounds: HTTP_BUCKETS,
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
    buckets: CALL_BUCKETS,
    registers: [this.registry],
  });

  readonly #callExemplars = new HistogramExemplars({
    name: "ledger_gateway_grpc_client_call_duration_seconds",
    labelNames: ["method", "code"],
    bounds: CALL_BUCKETS,
  });

  readonly ledgerStreamsOpen = new Gauge({
    name: "ledger_gateway_ledger_streams_open",
    help: "Server-streaming calls open on the ledger, by method: what the gateway takes of the participant's stream budget (Canton's max-streams, shared by all its clients)",
    labelNames: ["method"] as const,
    registers: [this.registry],
  });

  /** The release served and the participant's own; set by {@link watchApiVersion}. */
  #apiVersion: ServedApiVersion | undefined;

  readonly ledgerApiVersion = new Gauge({
    name: "ledger_gateway_ledger_api_version_info",
    help: "1, labelled with the Canton release whose JSON API the gateway serves (`unknown` before the participant first said) and the release the participant reports (`` before it said): they differ when the participant runs a release the gateway does not know (served as the nearest known one) or ledger.api-version pins another",
    labelNames: ["served", "reported"] as const,
    // One release for all worker threads (they share it): each says the same.
    aggregator: "max",
    registers: [this.registry],
    collect: () => {
      const version = this.#apiVersion;
      if (version === undefined) return;
      this.ledgerApiVersion.reset();
      this.ledgerApiVersion.set(
        { served: version.current() ?? "unknown", reported: version.reported() ?? "" },
        1,
      );
    },
  });

  /** Asks the ledger whether it serves; set by {@link probeLedger}. */
  #ledgerProbe: (() => Promise<boolean>) | undefined;
  /** The last probe's answer, reused by scrapes within LEDGER_PROBE_REUSE_MS of it. */
  #ledgerProbed: { at: number; ready: Promise<boolean> } | undefined;

  readonly ledgerReady = new Gauge({
    name: "ledger_gateway_ledger_ready",
    help: "1 when the ledger answered the gateway's health probe (as /readyz asks it; made at a scrape, at most every 5 s), else 0; with worker threads, the least of theirs",
    // Every thread has its own connection to the ledger: one that lost it makes the gateway unready.
    aggregator: "min",
    registers: [this.registry],
    collect: async () => {
      const probe = this.#ledgerProbe;
      if (probe === undefined) return;
      const now = Date.now();
      if (this.#ledgerProbed === undefined || now - this.#ledgerProbed.at >= LEDGER_PROBE_REUSE_MS)
        this.#ledgerProbed = { at: now, ready: probe() };
      this.ledgerReady.set((await this.#ledgerProbed.ready) ? 1 : 0);
    },
  });

  readonly ledgerRefusedCalls = new Counter({
    name: "ledger_gateway_ledger_refused_calls_total",
    help: "Calls the gateway refused to send to the ledger, answering the client itself, by reason (metadata_too_large: headers, in practice the token, over the ledger's header limit; answered 431)",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  readonly tokensWithoutAudience = new Counter({
    name: "ledger_gateway_tokens_without_audience_total",
    help: "Tokens seen without aud (scope-based), which Canton 3.7 refuses: every WebSocket upgrade's token, and one HTTP request's in 64; any increase means clients to move to audience-based tokens",
    registers: [this.registry],
  });

  readonly limitRefusals = new Counter({
    name: "ledger_gateway_limit_refusals_total",
    help: "Requests and WebSockets refused past a cap per user or per client address (limits.*), by cap (its key) and reason (limit: the cap reached; table-full: the quota table holds as many users and addresses as it can); never by user or address",
    labelNames: ["cap", "reason"] as const,
    registers: [this.registry],
  });

  readonly ledgerStreamsBudget = new Gauge({
    name: "ledger_gateway_ledger_streams_budget",
    help: "The participant's stream budget (limits.ledger-streams): the most server streams the gateway opens on the ledger at once, all workers together, against which sum(ledger_gateway_ledger_streams_open) counts; 0: no budget",
    // One budget for all workers: the same value in each, not a sum.
    aggregator: "max",
    registers: [this.registry],
  });

  readonly ledgerStreamsQueued = new Gauge({
    name: "ledger_gateway_ledger_streams_queued",
    help: "Claims waiting for a slot of the participant's stream budget (limits.ledger-streams-queue bounds each queue), by purpose (subscription; authorization: the probes that admit and re-check subscribers, in a queue of their own served first)",
    labelNames: ["purpose"] as const,
    registers: [this.registry],
  });

  readonly ledgerStreamsQueueWait = new Histogram({
    name: "ledger_gateway_ledger_streams_queue_wait_seconds",
    help: "How long a claim waited for a slot of the participant's stream budget before its call opened, by purpose (subscription, authorization); those refused are counted by ledger_gateway_ledger_streams_refused_total",
    labelNames: ["purpose"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly ledgerStreamsRefused = new Counter({
    name: "ledger_gateway_ledger_streams_refused_total",
    help: "Claims refused a slot of the participant's stream budget with 429 MAXIMUM_NUMBER_OF_STREAMS, by reason (queue-full: limits.ledger-streams-queue already waited; queue-timeout: no slot within limits.ledger-streams-queue-timeout) and purpose (subscription; authorization: a probe, whose refusal is never a yes)",
    labelNames: ["reason", "purpose"] as const,
    registers: [this.registry],
  });

  readonly wsStreamsOpen = new Gauge({
    name: "ledger_gateway_ws_streams_open",
    help: "Open WebSocket streams, by endpoint path template",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  /** Counted per frame sent: handed to the counters when they are read (see PendingCounts). */
  readonly #elementsSent = new PendingCounts<"endpoint" | "transport">("endpoint", "transport");
  readonly #bytesSent = new PendingCounts<"endpoint" | "transport">("endpoint", "transport");

  readonly streamElements: Counter<"endpoint" | "transport"> = new Counter({
    name: "ledger_gateway_stream_elements_sent_total",
    help: "Stream elements sent to clients, by endpoint and transport (ws, http list twin, ndjson and sse: a list twin streamed)",
    labelNames: ["endpoint", "transport"] as const,
    registers: [this.registry],
    collect: () => this.#elementsSent.flushInto(this.streamElements),
  });

  readonly streamBytes: Counter<"endpoint" | "transport"> = new Counter({
    name: "ledger_gateway_stream_bytes_sent_total",
    help: "Bytes of stream elements sent to clients (JSON text), by endpoint and transport",
    labelNames: ["endpoint", "transport"] as const,
    registers: [this.registry],
    collect: () => this.#bytesSent.flushInto(this.streamBytes),
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

  /**
   * Not in ledger_gateway_ws_closes_total: such a socket never became a stream. Its own series,
   * so that alerts and the storm bench can tell these 1006s from a network's.
   */
  readonly wsUpgradesLostInCork = new Counter({
    name: "ledger_gateway_ws_upgrades_lost_in_cork_total",
    help: "WebSockets that uWS shut down inside their corked upgrade (uNetworking/uWebSockets#1929: the client sees 1006 right after its 101), by endpoint; after the first, that worker upgrades uncorked until the gateway restarts (more CPU per upgrade, and a uWS corking warning on stderr for each)",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  /** How many streams wait for their turn now: the worker's pace tells (watchWaitingStarts). */
  #waitingStarts: () => number = () => 0;

  readonly wsStreamsWaiting: Gauge = new Gauge({
    name: "ledger_gateway_ws_streams_waiting",
    help: "WebSocket streams upgraded and waiting for their turn to start under websocket-config.upgrades-per-second (a reconnect storm's queue), read at each scrape; with worker threads, the sum of theirs",
    aggregator: "sum",
    registers: [this.registry],
    collect: (): void => this.wsStreamsWaiting.set(this.#waitingStarts()),
  });

  /** Where ledger_gateway_ws_streams_waiting is read from: the worker's pace of stream starts. */
  watchWaitingStarts(waiting: () => number): void {
    this.#waitingStarts = waiting;
  }

  /** How far WebSocket subscribers are behind, in bytes and offsets, measured at scrape. */
  readonly subscriberLag = new SubscriberLagGauges(this.registry);

  readonly streamResumes = new Counter({
    name: "ledger_gateway_stream_resumes_total",
    help: "Ledger calls of streams reopened from their last delivered offset after the ledger connection was lost, by endpoint and cause (goaway, keepalive, connection, ledger)",
    labelNames: ["endpoint", "cause"] as const,
    registers: [this.registry],
  });

  readonly streamResumeSeconds = new Histogram({
    name: "ledger_gateway_stream_resume_seconds",
    help: "How long a resumed stream was without its ledger call: from the loss to the call that held, by endpoint",
    labelNames: ["endpoint"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly wsTokenRenewals = new Counter({
    name: "ledger_gateway_ws_token_renewals_total",
    help: "Token renewal frames of WebSocket streams, by endpoint and outcome (accepted: the ledger admitted the token, the stream's calls moved onto it; refused)",
    labelNames: ["endpoint", "outcome"] as const,
    registers: [this.registry],
  });

  readonly fanoutRotations = new Counter({
    name: "ledger_gateway_fanout_rotations_total",
    help: "Shared calls reopened on a token that expires later, by endpoint and cause (renewal: the owner's renewed token; expiry: the owner's was about to expire, another member's expires later)",
    labelNames: ["endpoint", "cause"] as const,
    registers: [this.registry],
  });

  readonly fanoutUpstreams = new Gauge({
    name: "ledger_gateway_fanout_upstreams",
    help: "Shared ledger streams open (one gRPC call each, whatever their subscribers), by endpoint",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  /** Changed per subscriber start: handed to the metrics when they are read (see PendingCounts). */
  readonly #fanoutModes = new PendingCounts<"endpoint" | "mode">("endpoint", "mode");
  readonly #fanoutJoined = new PendingCounts<"endpoint" | "how">("endpoint", "how");

  readonly fanoutSubscribers: Gauge<"endpoint" | "mode"> = new Gauge({
    name: "ledger_gateway_fanout_subscribers",
    help: "Subscribers of shared streams, by endpoint and what they read from (shared: the shared call; catching_up: their own call, about to splice in; own: their own call)",
    labelNames: ["endpoint", "mode"] as const,
    registers: [this.registry],
    collect: () => this.#fanoutModes.flushInto(this.fanoutSubscribers),
  });

  readonly fanoutJoins: Counter<"endpoint" | "how"> = new Counter({
    name: "ledger_gateway_fanout_joins_total",
    help: "Subscribers that joined a shared stream, by endpoint and how (direct: at once; splice: after catching up on their own call)",
    labelNames: ["endpoint", "how"] as const,
    registers: [this.registry],
    collect: () => this.#fanoutJoined.flushInto(this.fanoutJoins),
  });

  readonly fanoutCatchUps = new Counter({
    name: "ledger_gateway_fanout_catch_ups_total",
    help: "Own calls opened to catch up with a shared stream, by endpoint and cause (late_join, detach, rejoin)",
    labelNames: ["endpoint", "cause"] as const,
    registers: [this.registry],
  });

  readonly fanoutAdmissions = new Counter({
    name: "ledger_gateway_fanout_admissions_total",
    help: "Admission probes of subscribers joining a running shared stream (a short call on the subscriber's own token, not a stream; subscribers asking the same at once, same token, request and offset, share one), by endpoint and outcome (admitted, refused)",
    labelNames: ["endpoint", "outcome"] as const,
    registers: [this.registry],
  });

  readonly fanoutSharedAdmissions = new Counter({
    name: "ledger_gateway_fanout_shared_admissions_total",
    help: "Subscribers joining a running shared stream admitted with the ledger's yes to another subscriber of the same token, request and offset, younger than the re-check interval: no probe of their own, by endpoint",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly fanoutDetaches = new Counter({
    name: "ledger_gateway_fanout_detaches_total",
    help: "Slow subscribers moved off a shared stream onto their own call, by endpoint",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly fanoutHandovers = new Counter({
    name: "ledger_gateway_fanout_handovers_total",
    help: "Shared calls reopened on another subscriber's token (owner left or refused), by endpoint",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly fanoutUpstreamCloses = new Counter({
    name: "ledger_gateway_fanout_upstream_closes_total",
    help: "Shared calls ended, by endpoint and reason (last_member_left, completed, error)",
    labelNames: ["endpoint", "reason"] as const,
    registers: [this.registry],
  });

  /**
   * @param options.processMetrics prom-client's default process metrics (default true); off in
   * worker threads, whose /metrics adds the process's once (src/metrics/worker-metrics.ts).
   */
  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics !== false) addProcessMetrics(this.registry);
  }

  /**
   * Creates every series whose label values are known up front, at zero. A series that first
   * appears with the value 1 hides its first event from `rate()` and `increase()`: Prometheus
   * sees no step from nothing to 1. So every route template x method x status class, every
   * stream endpoint x transport x end reason, every endpoint x close code and every endpoint's
   * backpressure counter exists from the start.
   *
   * One label set is left to run time: the gRPC `code` of the call histogram. Every method is
   * declared with `OK`; the error codes of a method appear when they first happen. They are
   * bounded (17 gRPC codes) but 58 methods x 17 codes x 18 lines of buckets would make every
   * scrape some 18,000 lines of series that mostly never move.
   *
   * Call before serving: a histogram's series is reset by declaring it.
   */
  declare(known: KnownLabels): void {
    for (const { route, method } of known.routes) {
      for (const statusClass of STATUS_CLASSES)
        this.httpRequests.inc({ route, method, status_class: statusClass }, 0);
      this.httpDuration.zero({ route, method });
    }
    for (const { label, streaming } of known.grpcMethods) {
      this.grpcDuration.zero({ method: label, code: "OK" });
      if (streaming) this.ledgerStreamsOpen.set({ method: label }, 0);
    }
    for (const reason of REFUSED_CALL_REASONS) this.ledgerRefusedCalls.inc({ reason }, 0);
    for (const purpose of LEDGER_STREAM_PURPOSES) {
      this.ledgerStreamsQueued.set({ purpose }, 0);
      this.ledgerStreamsQueueWait.zero({ purpose });
      for (const reason of LEDGER_STREAM_REFUSAL_REASONS)
        this.ledgerStreamsRefused.inc({ reason, purpose }, 0);
    }
    for (const cap of QUOTA_CAPS)
      for (const reason of QUOTA_REFUSAL_REASONS) this.limitRefusals.inc({ cap, reason }, 0);
    for (const endpoint of known.streamEndpoints) {
      this.wsStreamsOpen.set({ endpoint }, 0);
      this.#declareFanout(endpoint);
      this.subscriberLag.declare(endpoint);
      this.wsBackpressurePauses.inc({ endpoint }, 0);
      this.wsUpgradesLostInCork.inc({ endpoint }, 0);
      for (const cause of LEDGER_LOSS_CAUSES) this.streamResumes.inc({ endpoint, cause }, 0);
      this.streamResumeSeconds.zero({ endpoint });
      for (const outcome of ["accepted", "refused"]) this.wsTokenRenewals.inc({ endpoint, outcome }, 0);
      for (const code of [...WS_CLOSE_CODES, "other"]) this.wsCloses.inc({ endpoint, code }, 0);
      for (const transport of STREAM_TRANSPORTS) {
        this.streamElements.inc({ endpoint, transport }, 0);
        this.streamBytes.inc({ endpoint, transport }, 0);
        for (const reason of STREAM_END_REASONS) {
          this.streamEnds.inc({ endpoint, transport, reason }, 0);
          this.streamDuration.zero({ endpoint, transport, reason });
        }
      }
    }
  }

  #declareFanout(endpoint: string): void {
    this.fanoutUpstreams.set({ endpoint }, 0);
    this.fanoutDetaches.inc({ endpoint }, 0);
    this.fanoutHandovers.inc({ endpoint }, 0);
    for (const cause of ROTATION_CAUSES) this.fanoutRotations.inc({ endpoint, cause }, 0);
    for (const mode of MEMBER_MODES) this.fanoutSubscribers.set({ endpoint, mode }, 0);
    for (const how of ["direct", "splice"]) this.fanoutJoins.inc({ endpoint, how }, 0);
    for (const cause of CATCH_UP_CAUSES) this.fanoutCatchUps.inc({ endpoint, cause }, 0);
    for (const outcome of ADMISSION_OUTCOMES) this.fanoutAdmissions.inc({ endpoint, outcome }, 0);
    this.fanoutSharedAdmissions.inc({ endpoint }, 0);
    for (const reason of UPSTREAM_CLOSE_REASONS) this.fanoutUpstreamCloses.inc({ endpoint, reason }, 0);
  }

  /** The fan-out's events as these metrics (src/fanout knows no registry). */
  fanoutEvents(): FanoutEvents {
    return {
      upstreamOpened: (endpoint) => this.fanoutUpstreams.inc({ endpoint }),
      upstreamClosed: (endpoint, reason) => {
        this.fanoutUpstreams.dec({ endpoint });
        this.fanoutUpstreamCloses.inc({ endpoint, reason });
      },
      handover: (endpoint) => this.fanoutHandovers.inc({ endpoint }),
      rotated: (endpoint, cause) => this.fanoutRotations.inc({ endpoint, cause }),
      memberMode: (endpoint, mode, previous) => {
        if (previous !== undefined) this.#fanoutModes.add(endpoint, previous, -1);
        if (mode !== undefined) this.#fanoutModes.add(endpoint, mode, 1);
      },
      joined: (endpoint, how) => this.#fanoutJoined.add(endpoint, how, 1),
      catchUp: (endpoint, cause) => this.fanoutCatchUps.inc({ endpoint, cause }),
      detached: (endpoint) => this.fanoutDetaches.inc({ endpoint }),
      admission: (endpoint, outcome) => this.fanoutAdmissions.inc({ endpoint, outcome }),
      sharedAdmission: (endpoint) => this.fanoutSharedAdmissions.inc({ endpoint }),
    };
  }

  /** A WebSocket subscriber, measured by the lag gauges at every scrape until `untrackSubscriber`. */
  trackSubscriber(endpoint: string, source: LagSource): void {
    this.subscriberLag.track(endpoint, source);
  }

  untrackSubscriber(endpoint: string, source: LagSource): void {
    this.subscriberLag.untrack(endpoint, source);
  }

  /** `ledger_gateway_ledger_ready` asks `probe` at a scrape, at most every 5 s (LedgerClient.isReady). */
  probeLedger(probe: () => Promise<boolean>): void {
    this.#ledgerProbe = probe;
  }

  /** Reports `served` at every scrape in ledger_gateway_ledger_api_version_info. */
  watchApiVersion(served: ServedApiVersion): void {
    this.#apiVersion = served;
  }

  /** The ledger calls' series: duration by method and code, server streams open. */
  ledgerCalls(): CallObserver {
    return (call) => {
      const method = this.#methodLabel(call.service, call.method);
      if (call.streaming) this.ledgerStreamsOpen.inc({ method });
      return {
        trace: call.trace,
        end: (outcome) => {
          if (call.streaming) this.ledgerStreamsOpen.dec({ method });
          const series = this.#callSeries(method, outcome.code);
          series.duration.observe(outcome.seconds);
          const traceId = call.trace === undefined ? undefined : sampledTraceId(call.trace);
          if (traceId !== undefined) series.exemplars.record(outcome.seconds, traceId);
        },
      };
    };
  }

  #methodLabel(service: string, rpc: string): string {
    let labels = this.#methodLabels.get(service);
    if (labels === undefined) {
      labels = new Map();
      this.#methodLabels.set(service, labels);
    }
    let label = labels.get(rpc);
    if (label === undefined) {
      label = `${service}/${rpc}`;
      labels.set(rpc, label);
    }
    return label;
  }

  /**
   * Label lookups cost more than the observation itself (prom-client hashes the label object on
   * every call): each series is bound once, on its first call, and reused.
   */
  #callSeries(method: string, code: string): CallSeries {
    let codes = this.#calls.get(method);
    if (codes === undefined) {
      codes = new Map();
      this.#calls.set(method, codes);
    }
    let series = codes.get(code);
    if (series === undefined) {
      series = {
        duration: this.grpcDuration.labels({ method, code }),
        exemplars: this.#callExemplars.series({ method, code }),
      };
      codes.set(code, series);
    }
    return series;
  }

  recordRefusedCall(reason: RefusedCallReason): void {
    this.ledgerRefusedCalls.inc({ reason });
  }

  /** A request or socket refused past a cap (limits.*): by cap and reason, never by whose. */
  /** The stream budget's series: its value (0: none), and its queues' lengths, waits and refusals by purpose. */
  ledgerStreamBudget(limit: number): LedgerStreamBudgetEvents {
    this.ledgerStreamsBudget.set(limit);
    return {
      queueLength: (length, purpose) => this.ledgerStreamsQueued.set({ purpose }, length),
      granted: (ms, purpose) => this.ledgerStreamsQueueWait.observe({ purpose }, ms / 1000),
      refused: (reason, _ms, purpose) => this.ledgerStreamsRefused.inc({ reason, purpose }),
    };
  }

  recordLimitRefusal(refusal: QuotaRefusal): void {
    this.limitRefusals.inc({ cap: refusal.cap, reason: refusal.reason });
  }

  recordHttp(route: string, method: string, status: number, seconds: number, traceId?: string): void {
    this.httpRecorder(route, method).record(status, seconds, traceId);
  }

  /** The series of one route template and method, bound once: hold it for the route's requests. */
  httpRecorder(route: string, method: string): HttpRecorder {
    let methods = this.#http.get(route);
    if (methods === undefined) {
      methods = new Map();
      this.#http.set(route, methods);
    }
    let recorder = methods.get(method);
    if (recorder === undefined) {
      recorder = this.#bindHttp(route, method);
      methods.set(method, recorder);
    }
    return recorder;
  }

  #bindHttp(route: string, method: string): HttpRecorder {
    const duration = this.httpDuration.labels({ route, method });
    const exemplars = this.#httpExemplars.series({ route, method });
    const classes = new Map<number, Counter.Internal>();
    return {
      record: (status, seconds, traceId) => {
        const statusClass = Math.floor(status / 100);
        let requests = classes.get(statusClass);
        if (requests === undefined) {
          requests = this.httpRequests.labels({ route, method, status_class: `${statusClass}xx` });
          classes.set(statusClass, requests);
        }
        requests.inc();
        duration.observe(seconds);
        if (traceId !== undefined) exemplars.record(seconds, traceId);
      },
    };
  }

  recordStreamSent(endpoint: string, transport: StreamTransport, elements: number, bytes: number): void {
    this.#elementsSent.add(endpoint, transport, elements);
    this.#bytesSent.add(endpoint, transport, bytes);
  }

  recordStreamResume(endpoint: string, cause: LedgerLossCause, seconds: number): void {
    this.streamResumes.inc({ endpoint, cause });
    this.streamResumeSeconds.observe({ endpoint }, seconds);
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

  /**
   * The registry's metrics as data, with the latency histograms' exemplars on their buckets: what
   * an OpenMetrics exposition writes, and what a worker thread sends the main thread to merge.
   */
  async snapshot(): Promise<MetricJson[]> {
    const metrics: MetricJson[] = await this.registry.getMetricsAsJSON();
    this.#httpExemplars.attach(metrics);
    this.#callExemplars.attach(metrics);
    return metrics;
  }

  /** The /metrics text in the format the scraper asked for (see expositionFormatOf). */
  async exposition(format: ExpositionFormat = "prometheus"): Promise<{ contentType: string; text: string }> {
    if (format === "openmetrics") return openMetricsExposition(await this.snapshot());
    return { contentType: EXPOSITION_CONTENT_TYPES.prometheus, text: await this.registry.metrics() };
  }
}
