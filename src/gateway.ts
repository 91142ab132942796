import uWS from "uWebSockets.js";
import type { Logger } from "pino";
import { AudienceLessTokens } from "./auth/audience-less-tokens.js";
import { chargedStreamSlots } from "./auth/charged-stream-slots.js";
import { gatewayAuth, gatewayVerifiesSignatures } from "./auth/gateway-auth.js";
import { LedgerJson } from "./codec/index.js";
import type { GatewayConfig } from "./config/gateway-config.js";
import { docsRoutes } from "./docs/docs-routes.js";
import { BodyValidator } from "./endpoints/body-validator.js";
import { CorsPolicy } from "./endpoints/cors-policy.js";
import { ledgerStreamEndpoints } from "./endpoints/ledger-streams.js";
import { LedgerVersionWatch } from "./endpoints/ledger-version-watch.js";
import type { Route } from "./endpoints/route.js";
import type { RouteDeps } from "./endpoints/route-deps.js";
import { ledgerApiRoutes } from "./endpoints/route-table.js";
import { probeRoutes } from "./endpoints/routes/probe-routes.js";
import { schemaComponents } from "./endpoints/schema-components.js";
import type { StreamEndpoint } from "./endpoints/stream-endpoint.js";
import { tokenDigest } from "./fanout/subscription-key.js";
import { attachHttpRoutes, httpRouteLabels } from "./http/http-app.js";
import { listTwinRoute } from "./http/list-twin.js";
import { holdPort, listenExclusive, listenShared, probeAddress } from "./http/listen-exclusive.js";
import { StreamTickets } from "./http/stream-tickets.js";
import { TicketExchange } from "./http/ticket-exchange.js";
import { streamTicketRoutes, type TicketRoutesOptions, ticketHolder } from "./http/ticket-routes.js";
import { HeldTokens } from "./jwt/held-tokens.js";
import { observeBoth } from "./ledger/call-observer.js";
import { callerAdmission } from "./ledger/caller-admission.js";
import { LedgerClient } from "./ledger/ledger-client.js";
import { PackageSignatureCache } from "./ledger/package-signature-cache.js";
import type { StreamSlots } from "./ledger/stream-slots.js";
import { ClientQuotas, clientQuotaBuffer } from "./limits/client-quotas.js";
import { LedgerStreamBudget, ledgerStreamBudgetBuffer } from "./limits/ledger-stream-budget.js";
import { GatewayMetrics } from "./metrics/gateway-metrics.js";
import { grpcMethodLabels } from "./metrics/grpc-method-labels.js";
import { metricsRoute } from "./metrics/metrics-route.js";
import { type ApiVersion, DEFAULT_API_VERSION } from "./proto/api-version.js";
import { ledgerApiProtos } from "./proto/ledger-api-protos.js";
import { ServedApiVersion } from "./proto/served-api-version.js";
import { startTracing } from "./tracing/start-tracing.js";
import { SocketSink } from "./ws/socket-sink.js";
import { attachWsStreams } from "./ws/ws-streams.js";

export { type HeldPort, ListenError } from "./http/listen-exclusive.js";

/**
 * Takes the gateway's address for worker threads (server.workers > 1) before anything else
 * starts: rejects with a ListenError as {@link checkAddressFree} does, else holds the port (a
 * placeholder app) until the workers listen on it and `release()` is called.
 */
export const holdGatewayPort = (config: GatewayConfig) => holdPort(config.server.address, config.server.port);

/**
 * Rejects with a ListenError when the gateway's address is taken, so that a command line can
 * say so before it starts anything else (the embedded sandbox). startGateway checks again.
 */
export const checkAddressFree = (config: GatewayConfig): Promise<void> =>
  probeAddress(config.server.address, config.server.port);

export interface LedgerAddress {
  host: string;
  port: number;
  tls?: { caCert?: string; clientCert?: string; clientKey?: string };
}

export interface GatewayOptions {
  /**
   * The stream endpoints, each served as a WebSocket and as its HTTP list twin; built from the
   * route dependencies (ledger client, codec, protos) so that they can open and decode their calls.
   * Default: the six stream endpoints of the JSON Ledger API.
   */
  streamEndpoints?: (deps: RouteDeps) => readonly StreamEndpoint[];
  /**
   * `exclusive` (default): the address is this gateway's alone (probe, then no SO_REUSEPORT).
   * `shared`: a worker thread joining the port its main thread holds (holdGatewayPort).
   */
  listen?: "exclusive" | "shared";
  /** prom-client's process metrics in this gateway's registry (default true; off in workers). */
  processMetrics?: boolean;
  /** What GET /metrics serves instead of this gateway's registry (a worker: all workers' merge). */
  metricsExposition?: () => Promise<{ contentType: string; text: string }>;
  /** The worker thread this gateway is (server.workers > 1): its spans say which. */
  worker?: number;
  /**
   * The table of the caps per user and per address (limits.*) this gateway shares with others:
   * a worker's is its main thread's, so that the caps hold across all workers. Default: a table
   * of its own when a cap is on.
   */
  quotaBuffer?: SharedArrayBuffer;
  /**
   * The counters of the participant's stream budget (limits.ledger-streams) this gateway shares
   * with others: a worker's is its main thread's (ledgerStreamBudgetBuffer), so that the budget
   * holds for all workers together. Default: its own when the budget is on.
   */
  ledgerStreamBuffer?: SharedArrayBuffer;
  /**
   * The Canton release served (servedApiVersionBuffer), one for all the gateway's workers: a
   * worker's is its main thread's, so that every worker serves the same API. Default: its own.
   */
  apiVersionBuffer?: SharedArrayBuffer;
  /**
   * false: every WebSocket upgrade is made outside a cork (each piece of the 101 a send() of its
   * own, and uWS's corking warning on stderr for each), as a worker does once a socket was lost in
   * its cork (src/ws/corked-upgrade.ts): for a gateway that shares its thread with other work,
   * the tests' one-process stacks, where that fault (uNetworking/uWebSockets#1929) lost a socket in
   * about one CI run of two. Default true.
   */
  corkedUpgrades?: boolean;
}

export interface RunningGateway {
  readonly port: number;
  /** This gateway's own metrics (undefined when metrics.enabled is false). */
  readonly metrics: GatewayMetrics | undefined;
  /**
   * The lame duck before a shutdown: /readyz answers 503 from now on, everything else is served
   * as before, so that load balancers stop routing here before requests are refused.
   */
  enterLameDuck(): void;
  /**
   * Graceful shutdown: stops accepting connections and requests (503 SERVICE_NOT_RUNNING, then
   * close), lets the requests in flight be answered (up to `drainMs`, by default the request
   * timeout and a second: every unary ledger call has ended by then), then ends the WebSocket
   * streams and closes the gRPC channel. A second call is the first one.
   */
  stop(drainMs?: number): Promise<void>;
}

/**
 * The ledger client's stream budget (limits.ledger-streams), none when it is 0. Each claim is
 * charged to the user of the call's token (its subject within its issuer), so that one user holds
 * at most its share (limits.ledger-streams-per-user), once that token is known to be the user's
 * (see chargedStreamSlots); the token itself goes no further.
 */
function streamBudget(
  config: GatewayConfig,
  buffer: SharedArrayBuffer | undefined,
  metrics: GatewayMetrics | undefined,
  tokens: HeldTokens,
  admission: (token: string) => Promise<void>,
): { streamSlots?: StreamSlots } {
  const { limit } = config.ledgerStreams;
  const events = metrics?.ledgerStreamBudget(limit);
  if (limit === 0) return {};
  const budget = new LedgerStreamBudget(
    buffer ?? ledgerStreamBudgetBuffer(config.ledgerStreams),
    config.ledgerStreams,
    events,
  );
  const verified = gatewayVerifiesSignatures(config.auth);
  return { streamSlots: chargedStreamSlots(budget, tokens, verified ? "verified" : admission) };
}

/** Wires config -> ledger client -> route table -> uWS and starts listening. */
export async function startGateway(
  config: GatewayConfig,
  ledgerAddress: LedgerAddress,
  log: Logger,
  options: GatewayOptions = {},
): Promise<RunningGateway> {
  const metrics = config.metrics.enabled
    ? new GatewayMetrics({ processMetrics: options.processMetrics !== false })
    : undefined;
  // The OTEL_* environment, as the OpenTelemetry SDK reads it.
  const tracing = await startTracing(process.env, options.worker);
  const protos = ledgerApiProtos();
  // The tokens this worker's open streams (WebSockets, list twins) hold, with their claims decoded once.
  const tokens = new HeldTokens(tokenDigest);
  const ledgerTarget = `${ledgerAddress.host}:${ledgerAddress.port}`;
  const observers = [metrics?.ledgerCalls(), tracing?.ledgerCalls].filter((o) => o !== undefined);
  const { keepaliveIntervalMs, keepaliveTimeoutMs, maxMetadataBytes } = config.ledgerConnection;
  const served = new ServedApiVersion(config.ledgerApiVersion, options.apiVersionBuffer);
  // A new connection may reach another participant release (restarted, upgraded): ask it again.
  let onConnected = (): void => {};
  const ledger: LedgerClient = new LedgerClient({
    target: ledgerTarget,
    ...(ledgerAddress.tls ? { tls: ledgerAddress.tls } : {}),
    deadlineMs: config.server.requestTimeoutMs,
    keepalive: { timeMs: keepaliveIntervalMs, timeoutMs: keepaliveTimeoutMs },
    maxMetadataBytes,
    onKeepaliveThrottled: (intervalMs) =>
      log.warn(
        { ledger: ledgerTarget, keepaliveIntervalMs: intervalMs },
        `the ledger closed the connection for too many pings (GOAWAY too_many_pings): pinging every ${intervalMs} ms on new connections`,
      ),
    ...(observers.length > 0 ? { observer: observers.reduce(observeBoth) } : {}),
    ...(metrics ? { onCallRefused: (reason) => metrics.recordRefusedCall(reason) } : {}),
    ...streamBudget(
      config,
      options.ledgerStreamBuffer,
      metrics,
      tokens,
      (token): Promise<void> => callerAdmission(ledger, token),
    ),
    onConnected: () => onConnected(),
  });
  const versionWatch = new LedgerVersionWatch(ledger, served, log, ledgerTarget);
  onConnected = () => void versionWatch.ask();
  metrics?.watchApiVersion(served);
  // Served from the first request when the participant answers at once; a ledger that is away
  // (or slow) does not hold the start up: its release is learnt when it answers.
  const asked = versionWatch.ask();
  let askTimer: NodeJS.Timeout | undefined;
  await Promise.race([asked, new Promise((resolve) => (askTimer = setTimeout(resolve, VERSION_WAIT_MS)))]);
  clearTimeout(askTimer);
  const servedVersion = (): ApiVersion => served.current() ?? DEFAULT_API_VERSION;
  const servedNow = served.serves.bind(served);
  metrics?.probeLedger(() => ledger.isReady(LEDGER_READY_PROBE_MS));
  const signatures = new PackageSignatureCache({ ledger });
  const json = new LedgerJson(protos.root, signatures, signatures.codec);
  const deps: RouteDeps = {
    ledger,
    json,
    protos,
    resume: {
      windowMs: config.websocket.resumeWindowMs,
      ...(metrics ? { onResume: metrics.recordStreamResume.bind(metrics) } : {}),
    },
  };
  const streamEndpoints = (options.streamEndpoints ?? ledgerStreamEndpoints)(deps);
  const auth = gatewayAuth(config.auth, log);
  const quotaBuffer = options.quotaBuffer ?? clientQuotaBuffer(config.quotas);
  const quotas =
    quotaBuffer === undefined
      ? undefined
      : new ClientQuotas(
          config.quotas,
          quotaBuffer,
          metrics && ((refusal) => metrics.recordLimitRefusal(refusal)),
        );
  const tickets = new StreamTickets({
    ticketTtlMs: config.server.streamTicketTtlMs,
    pendingPerUser: STREAM_TICKETS_PER_USER,
  });
  // Worker threads share the port, so a ticket's requests may reach any of them: they ask each
  // other. The channel is named by the port, which every worker of one gateway holds.
  const ticketExchange =
    options.worker !== undefined && config.server.workers > 1
      ? new TicketExchange(
          `ledger-json-gateway/stream-tickets/${config.server.port}`,
          options.worker,
          config.server.workers - 1,
          ticketHolder(tickets),
        )
      : undefined;
  let lameDuck = false;
  const routes = routeTable(
    config,
    deps,
    streamEndpoints,
    servedVersion,
    metrics,
    options.metricsExposition,
    () => lameDuck,
    tokens,
    {
      tickets,
      tokens,
      ...(ticketExchange ? { exchange: ticketExchange } : {}),
      pendingPerUser: STREAM_TICKETS_PER_USER,
      config: config.websocket,
      maxRequestBytes: config.websocket.maxQueryFrameBytes,
      renewalsPerMinute: config.websocket.tokenRenewalsPerMinute,
      ...(auth ? { tokenRefusal: auth.refusal } : {}),
      ...(quotas?.countsHttp ? { quotas } : {}),
      ...(metrics ? { metrics } : {}),
    },
  );

  metrics?.declare({
    // A WebSocket refused before its upgrade is counted as a GET of the endpoint's path.
    routes: [
      ...httpRouteLabels(routes),
      ...streamEndpoints.map(({ path }) => ({ route: path, method: "GET" })),
    ],
    streamEndpoints: streamEndpoints.map(({ path }) => path),
    grpcMethods: grpcMethodLabels(protos.root),
  });

  const app = uWS.App();
  const audienceLessTokens = new AudienceLessTokens(log, metrics);
  const validator = new BodyValidator(servedVersion);
  const cors = config.server.cors ? new CorsPolicy(config.server.cors) : undefined;
  const http = attachHttpRoutes(app, {
    routes,
    served: servedNow,
    pathPrefix: config.server.pathPrefix,
    maxBodyBytes: config.server.maxBodyBytes,
    bodyReadTimeoutMs: config.server.bodyReadTimeoutMs,
    streamHighWater: config.websocket.highWaterMark,
    validator,
    log,
    ...(metrics ? { metrics } : {}),
    ...(tracing ? { tracing } : {}),
    ...(auth ? { tokenRefusal: auth.refusal } : {}),
    audienceLessTokens,
    ...(cors ? { cors } : {}),
    ...(config.server.httpCompression ? { compression: config.server.httpCompression } : {}),
    ...(quotas?.countsHttp ? { quotas } : {}),
    arrived: () => SocketSink.flushIfOverdue(),
  });
  const ws = attachWsStreams(app, {
    endpoints: streamEndpoints,
    tokens,
    served: servedNow,
    pathPrefix: config.server.pathPrefix,
    validator,
    limits: {
      highWaterMark: config.websocket.highWaterMark,
      lowWaterMark: config.websocket.lowWaterMark,
      hardLimit: config.websocket.hardLimit,
      writeDeadlineMs: config.websocket.writeDeadlineMs,
    },
    pingIntervalMs: config.websocket.pingIntervalMs,
    queryFrameTimeoutMs: config.websocket.queryFrameTimeoutMs,
    pacing: { perSecond: config.websocket.upgradesPerSecond, maxWaitMs: config.websocket.upgradeMaxWaitMs },
    authorization: {
      recheckIntervalMs: config.websocket.streamAuthorizationRecheckMs,
      ledgerAwayGraceMs: config.websocket.resumeWindowMs,
      renewalsPerMinute: config.websocket.tokenRenewalsPerMinute,
    },
    fanoutHistoryBytes: config.websocket.fanoutHistoryBytes,
    compression: config.websocket.compression,
    corkedUpgrades: options.corkedUpgrades ?? true,
    maxQueryBytes: config.websocket.maxQueryFrameBytes,
    log,
    ...(metrics ? { metrics } : {}),
    ...(tracing ? { tracing } : {}),
    ...(auth ? { tokenRefusal: auth.refusal } : {}),
    audienceLessTokens,
    ...(cors ? { cors } : {}),
    ...(quotas?.countsWebSockets ? { quotas } : {}),
  });

  let listenSocket: uWS.us_listen_socket;
  try {
    listenSocket =
      options.listen === "shared"
        ? await listenShared(app, config.server.address, config.server.port)
        : await listenExclusive(app, config.server.address, config.server.port);
  } catch (error) {
    app.close();
    ticketExchange?.close();
    versionWatch.stop();
    ledger.close();
    await tracing?.shutdown();
    throw error;
  }
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  // A worker says so for itself; its main thread says "gateway listening" once all of them do.
  log.info(
    { address: config.server.address, port, ledger: ledgerTarget },
    options.listen === "shared" ? "worker listening" : "gateway listening",
  );
  const ledgerWatch = watchLedgerAtStart(ledger, ledgerTarget, log);

  const stop = async (drainMs: number) => {
    ledgerWatch.stop();
    versionWatch.stop();
    uWS.us_listen_socket_close(listenSocket);
    http.drain();
    log.info({ inFlight: http.inFlight(), drainMs }, "draining: new requests refused");
    const deadline = Date.now() + drainMs;
    while (http.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (http.inFlight() > 0)
      log.warn({ inFlight: http.inFlight(), drainMs }, "requests still in flight at shutdown");
    // Streams never drain by themselves: they are told the gateway goes away.
    ws.closeAll();
    app.close();
    ticketExchange?.close();
    ledger.close();
    // The spans of what just ended go out before the process does.
    await tracing?.shutdown();
  };
  // Once only: closing uWS's listen socket or app a second time touches what the first close
  // freed, and crashed the process (SIGSEGV) when sockets had been open.
  let stopped: Promise<void> | undefined;
  return {
    port,
    metrics,
    enterLameDuck() {
      lameDuck = true;
    },
    stop(drainMs = drainBoundMs(config)) {
      stopped ??= stop(drainMs);
      return stopped;
    },
  };
}

/**
 * How long a graceful shutdown waits for requests in flight: the deadline of every unary ledger
 * call (server.request-timeout), and a second for its answer to be written.
 */
export function drainBoundMs(config: GatewayConfig): number {
  return config.server.requestTimeoutMs + 1_000;
}

/** Unused stream tickets one user may hold at once (a page needs one per stream it opens). */
const STREAM_TICKETS_PER_USER = 64;

const LEDGER_CHECK_TIMEOUT_MS = 5_000;
/** How long a start waits for the participant to say its release before it listens anyway. */
const VERSION_WAIT_MS = 2_000;
/** The scrape's probe: well within a scrape's timeout (Prometheus: 10 s by default). */
const LEDGER_READY_PROBE_MS = 2_000;
const LEDGER_RETRY_MAX_MS = 30_000;

/**
 * Tells the operator at start whether the ledger answers: /readyz knows it, but nobody reads
 * /readyz while starting a gateway by hand. While the ledger does not answer, a warning per
 * attempt (backing off to every 30 s) until it does, then one line saying it does.
 */
function watchLedgerAtStart(ledger: LedgerClient, target: string, log: Logger): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  const check = async () => {
    const ready = await ledger.isReady(LEDGER_CHECK_TIMEOUT_MS);
    if (stopped) return;
    if (ready) {
      log.info({ ledger: target, failedChecks: failures }, "ledger reachable");
      return;
    }
    failures++;
    const retryInMs = Math.min(1_000 * 2 ** (failures - 1), LEDGER_RETRY_MAX_MS);
    log.warn(
      { ledger: target, failedChecks: failures, retryInMs },
      `ledger unreachable: nothing answers gRPC at ${target} within ${LEDGER_CHECK_TIMEOUT_MS / 1000} s; requests fail with 503 and /readyz answers 503 until it does; retrying`,
    );
    timer = setTimeout(() => void check(), retryInMs);
  };
  void check();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Every HTTP endpoint of the gateway, in one list: probes, metrics, the API's routes, a list
 * twin and a ticketed GET form (browsers' EventSource) per stream endpoint, and the docs that
 * describe them all (the WebSocket side included).
 */
function routeTable(
  config: GatewayConfig,
  deps: RouteDeps,
  streamEndpoints: readonly StreamEndpoint[],
  servedVersion: () => ApiVersion,
  metrics: GatewayMetrics | undefined,
  metricsExposition: GatewayOptions["metricsExposition"],
  shuttingDown: () => boolean,
  tokens: HeldTokens,
  tickets: TicketRoutesOptions,
): Route[] {
  const routes: Route[] = [
    ...probeRoutes(deps.ledger, shuttingDown),
    ...(metrics ? [metricsRoute(metrics, metricsExposition)] : []),
    ...ledgerApiRoutes(deps),
    ...streamEndpoints.map((endpoint) => listTwinRoute(endpoint, config.websocket, metrics, tokens)),
    ...streamTicketRoutes(streamEndpoints, tickets),
  ];
  const channels = streamEndpoints.map(({ path, summary, requestSchema, responseSchema, availability }) => ({
    path,
    summary,
    requestSchema,
    responseSchema,
    ...(availability ? { availability } : {}),
  }));
  // Read lazily, so that the docs list the docs routes themselves too.
  routes.push(
    ...docsRoutes(() => routes, channels, schemaComponents, config.server.pathPrefix, servedVersion),
  );
  return routes;
}
