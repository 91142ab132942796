import uWS from "uWebSockets.js";
import { pino } from "pino";
import { loadConfig } from "../../src/config/load-config.js";
import { BodyValidator } from "../../src/endpoints/body-validator.js";
import { schemaComponents } from "../../src/endpoints/schema-components.js";
import { tokenDigest } from "../../src/fanout/subscription-key.js";
import { attachHttpRoutes } from "../../src/http/http-app.js";
import { listTwinRoute } from "../../src/http/list-twin.js";
import { HeldTokens } from "../../src/jwt/held-tokens.js";
import { GatewayMetrics } from "../../src/metrics/gateway-metrics.js";
import type { SessionLimits } from "../../src/ws/stream-session.js";
import { attachWsStreams, type WsStreamsHandle } from "../../src/ws/ws-streams.js";
import { counterEndpoint, withTestSchemas } from "../fixtures/counter-endpoint.js";
import { type CounterServer, startCounterServer } from "../fixtures/counter-server.js";
import { IN_PROCESS_GATEWAY } from "./in-process-gateway.js";

const DEFAULTS = loadConfig({ argv: [], env: {} }).websocket;

export interface Harness {
  port: number;
  url: string;
  wsUrl: string;
  counter: CounterServer;
  ws: WsStreamsHandle;
  metrics: GatewayMetrics;
  stop(): void;
}

export interface HarnessOptions {
  limits?: Partial<SessionLimits>;
  maxElements?: number;
  waitTimeMs?: number;
  pingIntervalMs?: number;
  /**
   * websocket-config.stream-authorization-recheck-interval; default 0: the counter is no Ledger
   * API stream, so there is no question to ask the ledger about its readers (a re-check would find
   * none and close them as stale), only its own call's admission and the token's expiry.
   */
  recheckIntervalMs?: number;
}

/**
 * A real uWS app serving the test endpoint both ways (WebSocket and list twin) with the
 * gateway's own modules, in front of the real test gRPC server. Nothing is mocked.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const counter = await startCounterServer();
  const endpoint = counterEndpoint(counter);
  const metrics = new GatewayMetrics();
  const validator = new BodyValidator(undefined, (version) => withTestSchemas(schemaComponents(version)));
  const log = pino({ level: "silent" });
  const app = uWS.App();
  attachHttpRoutes(app, {
    routes: [
      listTwinRoute(
        endpoint,
        {
          httpListMaxElementsLimit: options.maxElements ?? 100,
          httpListWaitTimeMs: options.waitTimeMs ?? 300,
          streamAuthorizationRecheckMs: options.recheckIntervalMs ?? 0,
          resumeWindowMs: DEFAULTS.resumeWindowMs,
        },
        metrics,
      ),
    ],
    pathPrefix: "",
    maxBodyBytes: 1024 * 1024,
    bodyReadTimeoutMs: 60_000,
    streamHighWater: 1024 * 1024,
    validator,
    metrics,
    log,
  });
  const ws = attachWsStreams(app, {
    endpoints: [endpoint],
    tokens: new HeldTokens(tokenDigest),
    pathPrefix: "",
    validator,
    limits: {
      highWaterMark: 64 * 1024,
      lowWaterMark: 16 * 1024,
      hardLimit: 1024 * 1024,
      writeDeadlineMs: 30_000,
      ...options.limits,
    },
    pingIntervalMs: options.pingIntervalMs ?? 0,
    maxQueryBytes: 64 * 1024,
    // The configuration's defaults.
    authorization: {
      recheckIntervalMs: options.recheckIntervalMs ?? 0,
      ledgerAwayGraceMs: DEFAULTS.resumeWindowMs,
      renewalsPerMinute: DEFAULTS.tokenRenewalsPerMinute,
    },
    queryFrameTimeoutMs: DEFAULTS.queryFrameTimeoutMs,
    pacing: { perSecond: 0, maxWaitMs: 0 },
    fanoutHistoryBytes: DEFAULTS.fanoutHistoryBytes,
    compression: DEFAULTS.compression,
    // In the test's own process, as IN_PROCESS_GATEWAY says.
    corkedUpgrades: IN_PROCESS_GATEWAY.corkedUpgrades,
    metrics,
    log,
  });
  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    app.listen("127.0.0.1", 0, (socket) => (socket ? resolve(socket) : reject(new Error("cannot listen")))),
  );
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    counter,
    ws,
    metrics,
    stop: () => {
      ws.closeAll();
      uWS.us_listen_socket_close(listenSocket);
      app.close();
      counter.stop();
    },
  };
}

/** Polls a condition (not a timing assertion): fails only if it is still false after `bound` ms. */
export async function waitFor(what: string, condition: () => boolean, bound = 10_000): Promise<void> {
  const deadline = Date.now() + bound;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
