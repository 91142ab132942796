import uWS, {
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type us_socket_context_t,
} from "uWebSockets.js";
import type { Logger } from "pino";
import type { GatewayTokenCheck } from "../auth/gateway-auth.js";
import type { BodyValidator } from "../endpoints/body-validator.js";
import { DEFAULT_RECHECK_INTERVAL_MS } from "../endpoints/stream-authorization.js";
import type { StreamEndpoint } from "../endpoints/stream-endpoint.js";
import { missingTokenError } from "../errors/index.js";
import { SharedStreams } from "../fanout/shared-streams.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";
import { Pinger } from "./pinger.js";
import type { SessionLimits } from "./stream-session.js";
import { StreamSession } from "./stream-session.js";
import { wsAuth } from "./ws-auth.js";

export interface WsStreamsOptions {
  endpoints: readonly StreamEndpoint[];
  pathPrefix: string;
  validator: BodyValidator;
  limits: SessionLimits;
  /** 0: no keep-alive pings. */
  pingIntervalMs: number;
  /** How often each subscriber's token is asked about again while it streams (0: never). */
  recheckIntervalMs?: number;
  /** Latest elements each shared stream keeps for late joiners within them (0: none; default 1024). */
  fanoutHistoryElements?: number;
  /** Largest query frame accepted; uWS closes the socket past it. */
  maxQueryBytes: number;
  metrics?: GatewayMetrics;
  log: Logger;
  /** The gateway's own token verification (auth.mode), run before the upgrade too. */
  acceptsToken?: GatewayTokenCheck;
}

export interface WsStreamsHandle {
  /** Open stream sockets. */
  open(): number;
  /** Bytes buffered in the gateway for all stream sockets together (what slow consumers cost). */
  buffered(): number;
  /** Ends every stream socket with 1001 (going away) and stops the pings. */
  closeAll(): void;
}

interface SocketData {
  token: string | undefined;
  session?: StreamSession;
}

/**
 * Room above the hard limit for the last frame of a slow-consumer disconnect: uWS refuses
 * frames past its maxBackpressure, and the error frame telling the client where to resume
 * must not be the one that is refused.
 */
const ERROR_FRAME_HEADROOM = 64 * 1024;

const GOING_AWAY = 1001;

/**
 * Serves every stream endpoint as a WebSocket on the gateway's uWS app (the same port as HTTP;
 * uWS routes upgrade requests here and everything else to the HTTP routes). The token is checked
 * before the upgrade, so a client without one gets a plain HTTP 401 and no socket.
 */
export function attachWsStreams(app: TemplatedApp, options: WsStreamsOptions): WsStreamsHandle {
  const pinger = new Pinger(options.pingIntervalMs);
  const sockets = new Set<uWS.WebSocket<SocketData>>();
  const fanout = new SharedStreams({
    ...(options.metrics ? { events: options.metrics.fanoutEvents() } : {}),
    ...(options.fanoutHistoryElements !== undefined ? { history: options.fanoutHistoryElements } : {}),
  });
  for (const endpoint of options.endpoints) {
    options.validator.prepare(endpoint.requestSchema);
    app.ws<SocketData>(`${options.pathPrefix}${endpoint.path}`, {
      compression: uWS.DISABLED,
      maxPayloadLength: options.maxQueryBytes,
      // Liveness is the pings' and the write deadline's job; an idle open-ended stream is legitimate.
      idleTimeout: 0,
      maxBackpressure: options.limits.hardLimit + ERROR_FRAME_HEADROOM,
      sendPingsAutomatically: false,
      upgrade: (res, req, context) => upgrade(res, req, context, endpoint, options),
      open: (ws) => {
        sockets.add(ws);
        pinger.add(ws);
        ws.getUserData().session = new StreamSession(ws, {
          endpoint,
          token: ws.getUserData().token,
          validator: options.validator,
          limits: options.limits,
          metrics: options.metrics,
          log: options.log,
          fanout,
          recheckIntervalMs: options.recheckIntervalMs ?? DEFAULT_RECHECK_INTERVAL_MS,
        });
      },
      message: (ws, message) => ws.getUserData().session?.message(Buffer.from(message).toString("utf8")),
      drain: (ws) => ws.getUserData().session?.drained(),
      close: (ws, code) => {
        sockets.delete(ws);
        pinger.delete(ws);
        ws.getUserData().session?.closed(code);
      },
    });
  }
  return {
    open: () => sockets.size,
    buffered: () => {
      let total = 0;
      for (const ws of sockets) total += ws.getBufferedAmount();
      return total;
    },
    closeAll: () => {
      pinger.stop();
      for (const ws of [...sockets]) ws.end(GOING_AWAY, "gateway shutting down");
    },
  };
}

function upgrade(
  res: HttpResponse,
  req: HttpRequest,
  context: us_socket_context_t,
  endpoint: StreamEndpoint,
  options: WsStreamsOptions,
): void {
  // Everything from `req` must be read now: uWS frees it when this function returns. The ledger
  // is not asked before upgrading (as Canton does, issue 15 item 4): an upgrade after a real
  // wait, corked as uWS requires, loses about 1 socket in 200 (closed 1006 inside the upgrade)
  // with the pinned uWebSockets.js 3.0.6; see README, Differences from Canton.
  const auth = wsAuth(req.getHeader("authorization"), req.getHeader("sec-websocket-protocol"));
  const key = req.getHeader("sec-websocket-key");
  const extensions = req.getHeader("sec-websocket-extensions");
  const refuse = () => {
    const error = missingTokenError();
    options.metrics?.recordHttp(endpoint.path, "GET", error.httpStatus, 0);
    res
      .writeStatus(`${error.httpStatus} Unauthorized`)
      .writeHeader("Content-Type", "application/json")
      .end(JSON.stringify(error.body));
  };
  if (auth === undefined) {
    refuse();
    return;
  }
  const accept = () =>
    res.upgrade<SocketData>({ token: auth.token }, key, auth.protocol, extensions, context);
  if (options.acceptsToken === undefined) {
    accept();
    return;
  }
  // Verification may wait (keys); the client may leave meanwhile.
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  void options.acceptsToken(auth.token, `GET ${endpoint.path}`).then((ok) => {
    if (!aborted) res.cork(ok ? accept : refuse);
  });
}
