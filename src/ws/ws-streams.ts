import uWS, {
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type us_socket_context_t,
} from "uWebSockets.js";
import { STATUS_CODES } from "node:http";
import type { Logger } from "pino";
import type { AudienceLessTokens } from "../auth/audience-less-tokens.js";
import type { GatewayTokenRefusal } from "../auth/gateway-auth.js";
import type { WsCompressionMode } from "../config/gateway-config.js";
import type { BodyValidator } from "../endpoints/body-validator.js";
import type { CorsPolicy } from "../endpoints/cors-policy.js";
import { canonicalPath } from "../endpoints/request-path.js";
import { SharedQueries } from "../endpoints/shared-queries.js";
import type { StreamEndpoint } from "../endpoints/stream-endpoint.js";
import {
  corsOriginNotAllowedError,
  type ErrorAnswer,
  errorAnswer,
  errorFrameBody,
  errorFrameText,
  missingTokenError,
  quotaExceededError,
  traced,
  upgradesPacedError,
} from "../errors/index.js";
import { SharedStreams } from "../fanout/shared-streams.js";
import { userKey } from "../jwt/bearer-token.js";
import { type HeldTokens, TokenHold } from "../jwt/held-tokens.js";
import {
  clientTraceContext,
  freshTraceContext,
  sampledTraceId,
  type TraceContext,
} from "../ledger/trace-context.js";
import type { ClientQuotas, QuotaHold } from "../limits/client-quotas.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";
import type { Availability } from "../proto/api-version.js";
import type { Served } from "../proto/served-api-version.js";
import type { GatewaySpan, Tracing } from "../tracing/tracing.js";
import { CorkedUpgrade, type UpgradeHeaders } from "./corked-upgrade.js";
import { Pinger } from "./pinger.js";
import { QueryDeadlines } from "./query-deadlines.js";
import { refusalClose } from "./refusal-close.js";
import { SharedAdmissions } from "./shared-admissions.js";
import { SocketSink } from "./socket-sink.js";
import { QueuedStartTurn } from "./start-turn.js";
import type { SessionAuthorization, SessionLimits, SubscriptionSpan } from "./stream-session.js";
import { recordStreamClose, StreamSession } from "./stream-session.js";
import { UpgradeBatches } from "./upgrade-batches.js";
import { UpgradePacer } from "./upgrade-pacer.js";
import { authSubprotocol, wsAuth } from "./ws-auth.js";
export interface WsStreamsOptions {
  endpoints: readonly StreamEndpoint[];
  /**
   * The tokens the worker's open streams hold, their claims decoded once for all (the gateway's
   * one, whose stream budget reads them too).
   */
  tokens: HeldTokens;
  /**
   * Whether the Canton release served has an endpoint (its `availability`): the upgrade to one it
   * has not goes on to the HTTP routes, which answer it as that release's Canton answers an
   * unknown path (or 503 while the release is not known). Absent: every endpoint.
   */
  served?: (availability: Availability | undefined) => Served;
  pathPrefix: string;
  validator: BodyValidator;
  limits: SessionLimits;
  /** 0: no keep-alive pings. */
  pingIntervalMs: number;
  /** How each subscriber's standing with the ledger is kept: re-checks, the grace while the ledger is away, renewals. */
  authorization: SessionAuthorization;
  /** Bytes of the latest elements each shared stream keeps for joiners within them (websocket-config.fanout-history-bytes; 0: none). */
  fanoutHistoryBytes: number;
  /** permessage-deflate for clients that offer it (websocket-config.compression). */
  compression: WsCompressionMode;
  /** Whether upgrades start corked (GatewayOptions.corkedUpgrades; corked-upgrade.ts). */
  corkedUpgrades: boolean;
  /**
   * Largest query frame accepted. uWS refuses a larger one on its header, before reading it, by
   * closing the connection (the client sees 1006: no close frame on that path in uWS 3.0.6).
   */
  maxQueryBytes: number;
  /** How long a socket may wait for its query frame before it is ended (0: no limit). */
  queryFrameTimeoutMs: number;
  /**
   * Streams this worker starts a second (websocket-config.upgrades-per-second; 0: unpaced), and
   * how long one may wait for its turn from its upgrade request (upgrade-max-wait): an upgrade
   * that would wait longer is refused 503 at arrival; the rest are upgraded at once and start in
   * their turn.
   */
  pacing: { perSecond: number; maxWaitMs: number };
  metrics?: GatewayMetrics;
  /**
   * Caps per user (the token's subject) and per client address (limits.*): a socket holds a
   * connection of each and a stream of its user from before its admission until it closes.
   * Absent: none.
   */
  quotas?: ClientQuotas;
  /** Spans exported (OpenTelemetry): one per subscription; absent: none made. */
  tracing?: Tracing;
  log: Logger;
  /** The gateway's own token verification (auth.mode), run before the upgrade too. */
  tokenRefusal?: GatewayTokenRefusal;
  /** Warns of tokens without `aud`; absent: not looked for. */
  audienceLessTokens?: AudienceLessTokens;
  /**
   * Browser origins that may open streams (server.cors.*): browsers send any page's Origin with a
   * WebSocket upgrade and leave the check to the server. Absent: unchecked.
   */
  cors?: CorsPolicy;
}

export interface WsStreamsHandle {
  /** Open stream sockets. */
  open(): number;
  /** Bytes buffered in the gateway for all stream sockets together (what slow consumers cost). */
  buffered(): number;
  /**
   * Ends every stream socket (graceful shutdown): its ledger call ends, a SERVICE_NOT_RUNNING
   * frame names the offset to resume after, then close 1001; the pings stop.
   */
  closeAll(): void;
}

interface SocketData {
  endpoint: StreamEndpoint;
  token: string | undefined;
  /**
   * Its hold of its token in the worker's held tokens, taken at its admission (so that a crowd's
   * later upgrades of the token find it accepted before this socket's session is made), given
   * back at its close; its session moves it onto renewals. undefined: refused.
   */
  hold: TokenHold | undefined;
  /** The upgrade request's trace context, or a fresh one; its span's, with tracing on. */
  trace: TraceContext;
  /** The subscription's span, with tracing on: from the upgrade request to the close. */
  span: SubscriptionSpan | undefined;
  /** The client offered permessage-deflate and the route has it on: uWS negotiated it. */
  compressed: boolean;
  /** When it opened (performance.now()); 0 until then. */
  openedAt: number;
  /**
   * Made when first needed (its query frame, its query-frame deadline, a shutdown), not at the
   * open: an idle socket holds no session, sink, subjects or timers.
   */
  session?: StreamSession;
  /**
   * Refused, to be told on the socket (past a cap; a browser's upgrade the gateway or the ledger
   * refused): the socket gets this error frame and this close, and no session.
   */
  refusal?: SocketRefusal;
  /** Gives back what the socket holds of its user's and address's caps (at its close). */
  releaseQuotas?: () => void;
  /** Its stream's turn in the worker's pace of starts (websocket-config.upgrades-per-second). */
  turn?: QueuedStartTurn;
}

interface SocketRefusal {
  /** The JsCantonError frame. */
  readonly frame: string;
  readonly code: number;
  readonly reason: string;
}

/**
 * Room above the hard limit for the last frame of a slow-consumer disconnect: uWS refuses
 * frames past its maxBackpressure, and the error frame telling the client where to resume
 * must not be the one that is refused.
 */
const ERROR_FRAME_HEADROOM = 64 * 1024;

/**
 * Shared elements a subscriber catching up on its own call may hold for its splice: past it, it
 * stays on its own call until its socket is ready again, rather than hold an unbounded backlog.
 */
const FANOUT_CATCH_UP_BUFFER = 4096;
/**
 * How long before its owner's token expires a shared call moves onto a later-expiring member's
 * token: ample for a reopen, and short against the 5 minutes of Canton's tokens.
 */
const FANOUT_ROTATE_BEFORE_EXPIRY_MS = 10_000;

const COMPRESSORS: Record<WsCompressionMode, number> = { off: uWS.DISABLED, on: uWS.SHARED_COMPRESSOR };

/**
 * Upgrades a worker makes in one event-loop turn (UpgradeBatches): some 40 µs each here, so a
 * batch holds the worker for a few ms.
 */
const UPGRADES_PER_BATCH = 100;

/** RFC 6455 "Try Again Later": a cap of limits.* refused the socket. */
const TRY_AGAIN_LATER = 1013;
/** uWS's code for a connection that ended without a close frame. */
const ABNORMAL = 1006;

/**
 * Serves every stream endpoint as a WebSocket on the gateway's uWS app (the same port as HTTP;
 * uWS routes upgrade requests here and everything else to the HTTP routes). The caller is
 * admitted before the upgrade, as Canton does: a refused caller gets a plain HTTP answer (401,
 * 403, ...) with a JsCantonError body, and no socket; a browser's upgrade (one with `Origin`) is
 * refused after the upgrade instead, with that JsCantonError as a frame and a close naming the
 * cause (4000 + the status), as the page could read nothing else.
 */
export function attachWsStreams(app: TemplatedApp, options: WsStreamsOptions): WsStreamsHandle {
  const pinger = new Pinger(options.pingIntervalMs);
  const { tokens } = options;
  const digestOf = (token: string) => tokens.digest(token);
  const admissions = new SharedAdmissions(digestOf);
  const queries = new SharedQueries();
  const pacer =
    options.pacing.perSecond > 0
      ? new UpgradePacer(options.pacing.perSecond, options.pacing.maxWaitMs)
      : undefined;
  if (pacer !== undefined) options.metrics?.watchWaitingStarts(() => pacer.waiting);
  // The worker's one: a closure made in `upgrade` would keep that upgrade's whole scope (its
  // request's headers, its response, its refusals: some 1.5 KB) for as long as its socket lives.
  const pacedRefusal = (retryAfterSeconds: number) =>
    upgradesPacedError(options.pacing.perSecond, retryAfterSeconds);
  const pacing = pacer && { pacer, refusal: pacedRefusal };
  const sockets = new Set<uWS.WebSocket<SocketData>>();
  const corked = new CorkedUpgrade<SocketData>(options.corkedUpgrades);
  const batches = new UpgradeBatches(UPGRADES_PER_BATCH);
  const sessionOf = (ws: uWS.WebSocket<SocketData>): StreamSession => {
    const data = ws.getUserData();
    if (data.session !== undefined) return data.session;
    deadlines.delete(ws);
    // One shape for every session's options (no conditional spreads).
    data.session = new StreamSession(ws, {
      endpoint: data.endpoint,
      // Already the worker's one copy of the token, held since its admission.
      token: data.token,
      tokenHold: data.hold,
      compressed: data.compressed,
      trace: data.trace,
      span: data.span,
      validator: options.validator,
      queries,
      limits: options.limits,
      metrics: options.metrics,
      log: options.log,
      fanout,
      digestOf,
      authorization: options.authorization,
      tokenRefusal: options.tokenRefusal,
      openedAt: data.openedAt,
      turn: data.turn,
    });
    return data.session;
  };
  const deadlines = new QueryDeadlines<uWS.WebSocket<SocketData>>(options.queryFrameTimeoutMs, (ws) =>
    sessionOf(ws).queryFrameTimedOut(options.queryFrameTimeoutMs),
  );
  const fanout = new SharedStreams({
    ...(options.metrics ? { events: options.metrics.fanoutEvents() } : {}),
    historyBytes: options.fanoutHistoryBytes,
    lagBytes: options.limits.hardLimit,
    catchUpBuffer: FANOUT_CATCH_UP_BUFFER,
    rotateBeforeExpiryMs: FANOUT_ROTATE_BEFORE_EXPIRY_MS,
    digestOf,
  });
  const opened = (ws: uWS.WebSocket<SocketData>): void => {
    const { endpoint, span, refusal } = ws.getUserData();
    if (refusal !== undefined) {
      span?.end({ "http.response.status_code": 101, "ledger_gateway.stream.close_code": refusal.code });
      ws.cork(() => {
        ws.send(refusal.frame);
        ws.end(refusal.code, refusal.reason);
      });
      return;
    }
    const data = ws.getUserData();
    data.openedAt = performance.now();
    data.turn?.queue();
    sockets.add(ws);
    pinger.add(ws);
    deadlines.add(ws);
    options.metrics?.wsStreamsOpen.inc({ endpoint: endpoint.path });
  };
  // Every upgrade: corked, the socket's open work once the cork has returned (corked-upgrade.ts).
  const upgradeCorked: UpgradeCorked = (res, data, headers) => {
    const ws = corked.upgrade(res, data, headers);
    if (ws !== undefined) opened(ws);
    else {
      options.metrics?.wsUpgradesLostInCork.inc({ endpoint: data.endpoint.path });
      options.log.error(
        { endpoint: data.endpoint.path },
        "WebSocket closed by uWS inside its upgrade (uNetworking/uWebSockets#1929): this worker upgrades uncorked from now on, and uWS prints a corking warning for each upgrade",
      );
    }
  };
  const endpoints = new Map<string, StreamEndpoint>();
  for (const endpoint of options.endpoints) {
    options.validator.prepare(endpoint.requestSchema);
    endpoints.set(`${options.pathPrefix}${endpoint.path}`, endpoint);
  }
  // One route for every path: the endpoint is found as the HTTP routes find theirs, with empty
  // path segments skipped (`//v2/updates`, as clients that join an origin ending in a slash send
  // it). An upgrade anywhere else goes on to the HTTP routes (uWS's yield), as it always did.
  app.ws<SocketData>("/*", {
    compression: COMPRESSORS[options.compression],
    maxPayloadLength: options.maxQueryBytes,
    // Liveness is the pings' and the write deadline's job; an idle open-ended stream is legitimate.
    idleTimeout: 0,
    maxBackpressure: options.limits.hardLimit + ERROR_FRAME_HEADROOM,
    sendPingsAutomatically: false,
    upgrade: (res, req, context) => {
      SocketSink.flushIfOverdue();
      const endpoint = endpoints.get(canonicalPath(req.getUrl()).replace(/(.)\/$/, "$1"));
      if (
        endpoint === undefined ||
        (endpoint.availability && options.served?.(endpoint.availability) !== "yes")
      )
        req.setYield(true);
      else upgrade(res, req, context, endpoint, options, admissions, tokens, pacing, upgradeCorked, batches);
    },
    open: (ws) => {
      if (!corked.handOver(ws)) opened(ws);
    },
    message: (ws, message) => {
      // A storm's query frames come in one long poll phase, as its upgrade requests do.
      SocketSink.flushIfOverdue();
      if (ws.getUserData().refusal === undefined)
        sessionOf(ws).message(Buffer.from(message).toString("utf8"));
    },
    drain: (ws) => ws.getUserData().session?.drained(),
    pong: (ws, message) => ws.getUserData().session?.ponged(Buffer.from(message).toString("utf8")),
    close: (ws, code, message) => {
      const inUpgrade = corked.closing(ws);
      // uWS's own reasons for cutting a connection (a frame over maxPayloadLength, invalid
      // UTF-8), which the client is not told.
      if (code === ABNORMAL && message.byteLength > 0) {
        options.log.info(
          { endpoint: ws.getUserData().endpoint.path, reason: Buffer.from(message).toString("utf8") },
          "WebSocket closed by uWS",
        );
      }
      const data = ws.getUserData();
      sockets.delete(ws);
      pinger.delete(ws);
      deadlines.delete(ws);
      data.releaseQuotas?.();
      // Its session's too (a hold is given back once): a socket closed before its query frame has none.
      data.hold?.release();
      // Its turn, if it has not come yet, goes back unused.
      data.turn?.giveBack();
      if (data.session !== undefined) {
        data.session.closed(code);
        return;
      }
      // Closed inside its upgrade (see upgradeCorked): never a stream.
      if (inUpgrade)
        data.span?.end(
          { "http.response.status_code": 101, "ledger_gateway.stream.close_code": code },
          "closed in upgrade",
        );
      // Closed before it needed a session; a refused socket was never a stream.
      else if (data.refusal === undefined) recordStreamClose({ ...data, metrics: options.metrics }, code);
    },
  });
  return {
    open: () => sockets.size,
    buffered: () => {
      let total = 0;
      for (const ws of sockets) total += ws.getBufferedAmount();
      return total;
    },
    closeAll: () => {
      pinger.stop();
      deadlines.stop();
      for (const ws of [...sockets]) sessionOf(ws).goAway();
    },
  };
}

/** The worker's pace of stream starts, and the refusal of a turn it cannot make in time. */
interface Pacing {
  readonly pacer: UpgradePacer;
  readonly refusal: (retryAfterSeconds: number) => unknown;
}

/** Upgrades `res`: corked, then the socket's open work. */
type UpgradeCorked = (res: HttpResponse, data: SocketData, headers: UpgradeHeaders) => void;

function upgrade(
  res: HttpResponse,
  req: HttpRequest,
  context: us_socket_context_t,
  endpoint: StreamEndpoint,
  options: WsStreamsOptions,
  admissions: SharedAdmissions,
  tokens: HeldTokens,
  pacing: Pacing | undefined,
  upgradeCorked: UpgradeCorked,
  batches: UpgradeBatches,
): void {
  // Everything from `req` must be read now: uWS frees it when this function returns.
  const protocols = req.getHeader("sec-websocket-protocol");
  const auth = wsAuth(req.getHeader("authorization"), protocols, (token) => tokens.claims(token));
  if (auth?.claims.withoutAudience) options.audienceLessTokens?.seen();
  const key = req.getHeader("sec-websocket-key");
  const extensions = req.getHeader("sec-websocket-extensions");
  const origin = req.getHeader("origin");
  const client = clientTraceContext(req.getHeader("traceparent"), req.getHeader("tracestate"));
  const span = subscriptionSpan(options.tracing, client, endpoint, auth?.claims.subject);
  const trace = span?.trace ?? client ?? freshTraceContext();
  // A browser (it sends Origin; other clients need not) never sees a refused upgrade's status:
  // it is refused on the socket instead, with a close that names the cause. Others keep
  // Canton's plain HTTP refusal.
  const refuseCaller = (error: unknown, retryAfterSeconds?: number): void => {
    const answer = errorAnswer(error);
    if (origin === "") {
      refuse(res, endpoint, options, answer, trace, span, retryAfterSeconds);
      return;
    }
    const expiry = auth?.claims.expiresAtMs;
    const refusal = socketRefusal(error, answer, trace, expiry !== undefined && expiry <= Date.now());
    options.metrics?.recordHttp(endpoint.path, "GET", answer.status, 0, sampledTraceId(trace));
    upgradeCorked(
      res,
      {
        endpoint,
        token: undefined,
        hold: undefined,
        compressed: false,
        trace,
        span,
        openedAt: 0,
        refusal,
      },
      { key, protocol: authSubprotocol(protocols), extensions, context },
    );
  };
  if (options.cors !== undefined && !options.cors.allows(origin)) {
    refuseCaller(corsOriginNotAllowedError(origin));
    return;
  }
  if (auth === undefined) {
    refuseCaller(missingTokenError());
    return;
  }
  // Before anything the start costs (the ledger's admission, the caps, the upgrade itself): a
  // crowd past what the worker's pace can start within upgrade-max-wait is told when to come
  // back; the rest are upgraded once admitted, and their streams start at the pace.
  const pace = pacing?.pacer.arrive(userKey(auth.claims));
  if (pace?.kind === "refuse") {
    refuseCaller(
      upgradesPacedError(options.pacing.perSecond, pace.retryAfterSeconds),
      pace.retryAfterSeconds,
    );
    return;
  }
  const compressed = options.compression !== "off" && /permessage-deflate/i.test(extensions);
  const address = options.quotas && Buffer.from(res.getRemoteAddressAsText()).toString("utf8");
  // The checks ask the ledger (and may wait for keys); the client may leave meanwhile.
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  let hold: QuotaHold | undefined;
  // After the gateway's own token check (a token it refuses takes nothing of anyone's caps) and
  // before the ledger is asked (a client past its caps costs no admission call).
  const holdCaps = (): boolean => {
    hold = options.quotas?.hold([
      { cap: "ws-connections-per-address", who: address },
      ...userClaims(auth.claims.subject),
    ]);
    return hold?.refusal === undefined;
  };
  const left = (): boolean => {
    if (!aborted) return false;
    pace?.ticket.abandon();
    hold?.release();
    span?.end({ "http.response.status_code": 499 });
    return true;
  };
  const admitting = { token: auth.token, expiresAt: auth.claims.expiresAtMs, trace };
  void admission(admitting, endpoint, options, admissions, tokens, holdCaps).then((admitted) => {
    if (left()) return;
    if (admitted.refused) {
      const refusal = admitted.error;
      pace?.ticket.abandon();
      hold?.release();
      // A plain answer is written in one cork; an upgrade corks itself (not inside another cork,
      // whose check would come after the socket's open work: see corked-upgrade.ts).
      if (origin === "") res.cork(() => refuseCaller(refusal));
      else refuseCaller(refusal);
      return;
    }
    if (hold?.refusal !== undefined) {
      // Upgraded, to be told on the socket: a browser never sees the status of a refused upgrade.
      const capped: SocketRefusal = {
        frame: errorFrameText(quotaExceededError(hold.refusal), trace.traceId),
        code: TRY_AGAIN_LATER,
        reason: "limit reached",
      };
      pace?.ticket.abandon();
      upgradeCorked(
        res,
        {
          endpoint,
          token: undefined,
          hold: undefined,
          compressed,
          trace,
          span,
          openedAt: 0,
          refusal: capped,
        },
        { key, protocol: auth.protocol, extensions, context },
      );
      return;
    }
    trace.span?.event("admission", { outcome: "admitted", at: "upgrade" });
    // The worker's one copy of the token (see HeldTokens.shared), held from the ledger's yes.
    const token = tokens.shared(auth.token);
    const tokenHold = new TokenHold(tokens, token, endpoint.admit !== undefined, admitted.askedAt);
    batches.run(() => {
      // The client may have left while the upgrade waited for its batch.
      if (left()) {
        tokenHold.release();
        return;
      }
      upgradeCorked(
        res,
        {
          endpoint,
          token,
          hold: tokenHold,
          compressed,
          trace,
          span,
          openedAt: 0,
          ...(hold === undefined ? {} : { releaseQuotas: hold.release }),
          // What a start costs a worker is what the pace bounds: the socket waits for its turn.
          ...(pace === undefined || pacing === undefined
            ? {}
            : { turn: new QueuedStartTurn(pace.ticket, pacing.refusal) }),
        },
        { key, protocol: auth.protocol, extensions, context },
      );
    });
  });
}

/** A socket is a connection of its user and a stream (one subscription); no user, no per-user cap. */
function userClaims(user: string | undefined) {
  return [
    { cap: "ws-connections-per-user", who: user },
    { cap: "streams-per-user", who: user },
  ] as const;
}

/** A refusal told on the socket: its JsCantonError frame (naming the trace) and its close. */
function socketRefusal(
  error: unknown,
  answer: ErrorAnswer,
  trace: TraceContext,
  tokenExpired: boolean,
): SocketRefusal {
  const body = errorFrameBody(error, trace.traceId);
  return { frame: JSON.stringify(body), ...refusalClose(answer.status, body.code, tokenExpired) };
}

/**
 * A plain HTTP answer instead of the upgrade: no socket. A JsCantonError without a trace of the
 * ledger's names the upgrade request's (its `traceparent` and `tracestate`, or a fresh trace).
 */
function refuse(
  res: HttpResponse,
  endpoint: StreamEndpoint,
  options: WsStreamsOptions,
  answer: ErrorAnswer,
  trace: TraceContext,
  span: SubscriptionSpan | undefined,
  /** Written as Retry-After (a paced upgrade's 503). */
  retryAfterSeconds?: number,
): void {
  options.metrics?.recordHttp(endpoint.path, "GET", answer.status, 0, sampledTraceId(trace));
  span?.end(
    { "http.response.status_code": answer.status },
    answer.status >= 500 ? String(answer.status) : undefined,
  );
  res.writeStatus(`${answer.status} ${STATUS_CODES[answer.status] ?? ""}`.trimEnd());
  if (retryAfterSeconds !== undefined) res.writeHeader("Retry-After", String(retryAfterSeconds));
  if (answer.kind === "json") {
    const body = traced(answer.body, trace.traceId);
    res.writeHeader("Content-Type", "application/json").end(JSON.stringify(body));
  } else {
    res.writeHeader("Content-Type", "text/plain; charset=utf-8").end(answer.text);
  }
}

/** An upgrade's admission: refused (why), or admitted (when the ledger was asked, if it was). */
type Admission =
  | { readonly refused: true; readonly error: unknown }
  | { readonly refused: false; readonly askedAt: number | undefined };

const ADMITTED_UNASKED: Admission = { refused: false, askedAt: undefined };

/**
 * Whether this caller gets a stream. Canton resolves the token's claims before it upgrades (its
 * user exists, is active, its rights can be read), so a caller it refuses gets a plain HTTP
 * answer (a browser: the refusal on the socket, see refusal-close.ts): the gateway's own token
 * check first (when configured), then the caps (limits.*: past one, admitted here and the socket
 * is refused on itself), then the ledger's admission: one question for the upgrades of a token in
 * flight together, none for a token the worker holds for an open socket whose admission the
 * ledger answered yes within the re-check interval (as Canton's own user cache would: the
 * interval's default is its expiry). What the caller may read is the stream's own call, after the
 * query: its admission is never shared by a token of another's.
 */
async function admission(
  caller: { readonly token: string; readonly expiresAt: number | undefined; readonly trace: TraceContext },
  endpoint: StreamEndpoint,
  options: WsStreamsOptions,
  admissions: SharedAdmissions,
  tokens: HeldTokens,
  /** Takes the caller's caps; false: past one of them, the ledger is not asked. */
  holdCaps: () => boolean,
): Promise<Admission> {
  const { token, trace } = caller;
  const refused = await options.tokenRefusal?.(token, `GET ${endpoint.path}`);
  if (refused !== undefined) return { refused: true, error: refused };
  if (!holdCaps()) return ADMITTED_UNASKED;
  const { admit } = endpoint;
  if (admit === undefined) return ADMITTED_UNASKED;
  if (freshlyAccepted(tokens, caller, options.authorization.recheckIntervalMs)) return ADMITTED_UNASKED;
  try {
    const askedAt = await admissions.admit(endpoint.path, token, () => admit(token, trace));
    return { refused: false, askedAt };
  } catch (error) {
    return { refused: true, error: error ?? new Error("admission refused") };
  }
}

/**
 * Whether the worker holds `caller`'s token for an open socket, accepted by the ledger on a
 * question asked within `withinMs` (0: never), and the token has not expired.
 */
function freshlyAccepted(
  tokens: HeldTokens,
  caller: { readonly token: string; readonly expiresAt: number | undefined },
  withinMs: number,
): boolean {
  const acceptedAt = tokens.acceptedAt(caller.token);
  if (acceptedAt === undefined || withinMs <= 0) return false;
  const now = Date.now();
  return now - acceptedAt <= withinMs && (caller.expiresAt === undefined || now < caller.expiresAt);
}

/** A subscription's span, named by its endpoint and user (the token's subject, never the token). */
function subscriptionSpan(
  tracing: Tracing | undefined,
  client: TraceContext | undefined,
  endpoint: StreamEndpoint,
  /** The token's subject (never the token). */
  user: string | undefined,
): SubscriptionSpan | undefined {
  if (tracing === undefined) return undefined;
  const span: GatewaySpan = tracing.subscription(client);
  const named = {
    "ledger_gateway.stream.endpoint": endpoint.path,
    ...(user === undefined ? {} : { "enduser.id": user }),
  };
  return {
    trace: span.trace,
    end: (attributes, error) => span.end(`WebSocket ${endpoint.path}`, { ...named, ...attributes }, error),
  };
}
