import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";
import type { Logger } from "pino";
import type { AudienceLessTokens } from "../auth/audience-less-tokens.js";
import type { GatewayTokenRefusal } from "../auth/gateway-auth.js";
import type { BodyValidator } from "../endpoints/body-validator.js";
import type { CorsPolicy } from "../endpoints/cors-policy.js";
import { parseRequestJson } from "../endpoints/request-json.js";
import { canonicalPath } from "../endpoints/request-path.js";
import type { Answer, HttpMethod, RequestContext, Route, StreamedAnswer } from "../endpoints/route.js";
import {
  ambiguousFramingError,
  apiVersionUnknownError,
  bodyTimeoutError,
  corsOriginNotAllowedError,
  errorAnswer,
  INTERNAL_ERROR_CODE,
  InvalidValueError,
  type JsCantonError,
  methodNotAllowedError,
  requestTooLargeError,
  routeNotFoundError,
  shuttingDownError,
  traced,
  unknownPathAnswer,
} from "../errors/index.js";
import { bearerToken, decodeTokenClaims } from "../jwt/bearer-token.js";
import {
  clientTraceContext,
  sampledTraceId,
  type TraceContext,
  traceContextOf,
} from "../ledger/trace-context.js";
import type { ClientQuotas } from "../limits/client-quotas.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";
import type { GatewaySpan, Tracing } from "../tracing/tracing.js";
import { type ContentCoding, codingAccepted } from "./answer-compression.js";
import { type WholeAnswer, writeAnswer, writeCoding, writeStatusAndHeaders } from "./answer-writing.js";
import { BodyBudget } from "./body-budget.js";
import { BodyAbortedError, BodyReader, BodyTimeoutError, BodyTooLargeError } from "./body-reader.js";
import { PathMatcher, type ServedNow } from "./path-matcher.js";
import { parsePathParams, parseQuery } from "./query-params.js";
import { type RequestFraming, requestFraming } from "./request-framing.js";
import { holdRequestQuotas, readRefusedBody } from "./request-quotas.js";
import { STREAM_FRAMINGS } from "./stream-framing.js";
import { writeStreamed } from "./streamed-response.js";
import { UwsTimeoutHold } from "./uws-timeout-hold.js";

export interface HttpAppOptions {
  routes: readonly Route[];
  /**
   * Whether the Canton release served has a route (its `availability`): a route of another
   * release is answered as that release's Canton answers an unknown path. Absent: every route.
   */
  served?: ServedNow;
  pathPrefix: string;
  maxBodyBytes: number;
  /** How long a body may take to arrive once it is read (server.body-read-timeout). */
  bodyReadTimeoutMs: number;
  validator: BodyValidator;
  /**
   * The gateway's own token check (auth.mode other than `none`), run before a body is read.
   * Absent: the ledger judges every token, and a request without one, as Canton's JSON API does.
   */
  tokenRefusal?: GatewayTokenRefusal;
  /** Warns of tokens without `aud` (sampled); absent: not looked for. */
  audienceLessTokens?: AudienceLessTokens;
  /** Browser origins that may call (server.cors.*); absent: no CORS headers, preflights unanswered. */
  cors?: CorsPolicy;
  /**
   * server.http-compression: answers of at least `minBytes` go out compressed to clients that
   * accept brotli or gzip. Absent: every answer as is.
   */
  compression?: { minBytes: number };
  /**
   * Bytes a streamed answer may have waiting in the gateway for a slow client before its ledger
   * call is paused (websocket-config.high-water-mark, as for a WebSocket).
   */
  streamHighWater: number;
  metrics?: GatewayMetrics;
  /**
   * Caps per user, the token's subject (limits.*): requests in flight, list twins as streams, the
   * command rate; held until the answer ends. Absent: none.
   */
  quotas?: ClientQuotas;
  /** Spans exported (OpenTelemetry); absent: none made. */
  tracing?: Tracing;
  /**
   * Called as each request arrives, before anything else: the WebSocket sinks' overdue flush
   * (SocketSink.flushIfOverdue), since a burst of requests holds libuv's poll phase and queues
   * nothing that would flush the established streams' elements. Absent: nothing.
   */
  arrived?: () => void;
  log: Logger;
}

/**
 * Request bodies of the largest size (server.max-body-bytes) one app reads at once; smaller ones
 * share the same bytes. More wait, paused, in arrival order (bounded by server.body-read-timeout).
 */
const BODY_BUDGET_BODIES = 2;

const METHODS = new Set<string>(["GET", "POST", "PATCH", "PUT", "DELETE"]);

/** The `route` label of a request that matched no route (404, 405). */
const UNMATCHED_ROUTE = "unmatched";

/** Every `route` x `method` label pair the HTTP side can report: routes, then unmatched ones. */
export function httpRouteLabels(routes: readonly Route[]): { route: string; method: string }[] {
  return [
    ...routes.map(({ path, method }) => ({ route: path, method })),
    ...[...METHODS, "OTHER"].map((method) => ({ route: UNMATCHED_ROUTE, method })),
  ];
}

export interface HttpRoutesHandle {
  /** Requests received and not yet answered nor abandoned by their client (for a draining shutdown). */
  inFlight(): number;
  /**
   * Shutdown begins: every request from now on is answered 503 SERVICE_NOT_RUNNING, and every
   * answer, those in flight included, closes its connection, so clients reconnect elsewhere.
   */
  drain(): void;
}

interface AppState {
  inFlight: number;
  draining: boolean;
  /** Streamed answers being written: each ends with this error when the gateway drains. */
  readonly streams: Set<(error: unknown) => void>;
  /** Keeps uWS's HTTP timeout off the answers being made after their body was read. */
  readonly timeoutHold: UwsTimeoutHold;
}

/**
 * Serves the route table on a uWS app. One straight line per request:
 * framing -> match -> token -> body -> parse path/query -> validate -> handler -> answer; any
 * failure on the way becomes an answer through src/errors. The token is judged before a byte of
 * the body is read, and the body is read with its limit checked as bytes arrive.
 */
export function attachHttpRoutes(app: TemplatedApp, options: HttpAppOptions): HttpRoutesHandle {
  for (const route of options.routes)
    if (route.body?.kind === "json") options.validator.prepare(route.body.schema);
  const matcher = new PathMatcher(options.routes, options.pathPrefix, options.served);
  const state: AppState = {
    inFlight: 0,
    draining: false,
    streams: new Set(),
    timeoutHold: new UwsTimeoutHold(),
  };
  const budget = new BodyBudget(BODY_BUDGET_BODIES * options.maxBodyBytes);
  app.any("/*", (res, req) => serve(res, req, matcher, options, state, budget));
  return {
    inFlight: () => state.inFlight,
    drain: () => {
      state.draining = true;
      for (const stop of state.streams) stop(shuttingDownError());
    },
  };
}

/** One request and its answer. It leaves the in-flight count exactly once: answered or abandoned. */
class Exchange {
  readonly started = process.hrtime.bigint();
  aborted = false;
  /** Made when a handler first asks for the signal: most never do (unary calls end with the answer). */
  #abort: AbortController | undefined;
  /** Answer with `Connection: close` (an unread body, a draining gateway, ambiguous framing). */
  closeConnection = false;
  readonly headers: [string, string][] = [];
  private counted = true;
  /** Gives back what the request holds of its user's caps, when it settles. */
  #releaseQuotas: (() => void) | undefined;
  /** Gives uWS's HTTP timeout back to uWS, when the answer is handed over or abandoned. */
  #releaseTimeout: (() => void) | undefined;
  /** A streamed answer's: whether one of its writes waits for the client. */
  #waitsOnClient: () => boolean = () => false;
  #trace: TraceContext | undefined;
  #coding: { value: ContentCoding | undefined } | undefined;
  /** The request's span, with tracing on: made at once, so that it starts with the request. */
  #span: GatewaySpan | undefined;
  /** Who the token names (its subject), for the span only. */
  user: string | undefined;

  constructor(
    readonly res: HttpResponse,
    readonly head: boolean,
    private readonly state: AppState,
    private readonly gauge: GatewayMetrics | undefined,
    /** The request's `traceparent` and `tracestate` headers ("" when absent). */
    private readonly traceHeaders: readonly [string, string],
    /** Its `Accept-Encoding`; undefined when answers are not compressed (off, or a HEAD). */
    private readonly acceptEncoding: string | undefined,
    tracing: Tracing | undefined,
  ) {
    state.inFlight++;
    gauge?.httpInFlight.inc();
    if (tracing !== undefined) {
      this.#span = tracing.request(clientTraceContext(...traceHeaders));
      this.#trace = this.#span.trace;
    }
  }

  /** Ends the request's span, if it has one (once: a streamed answer may end after an error). */
  endSpan(route: string, method: string, status: number): void {
    if (this.#span === undefined) return;
    this.#span.end(
      `${method} ${route}`,
      {
        "http.request.method": method,
        "http.route": route,
        "http.response.status_code": status,
        ...(this.user === undefined ? {} : { "enduser.id": this.user }),
      },
      status >= 500 ? String(status) : undefined,
    );
  }

  /**
   * The coding the client accepts for a compressed answer, read when first asked for: most
   * answers are too small to be compressed and never ask.
   */
  get coding(): ContentCoding | undefined {
    this.#coding ??= { value: this.acceptEncoding ? codingAccepted(this.acceptEncoding) : undefined };
    return this.#coding.value;
  }

  /** Made when first asked for: a request answered before any ledger call or error needs none. */
  get trace(): TraceContext {
    this.#trace ??= traceContextOf(...this.traceHeaders);
    return this.#trace;
  }

  /**
   * The trace a latency exemplar names: a sampled one, which a tracing system records. A request
   * without a traceparent and without a span has none, and makes no trace for it.
   */
  get exemplarTrace(): string | undefined {
    if (this.#trace === undefined && this.traceHeaders[0] === "") return undefined;
    return sampledTraceId(this.trace);
  }

  get signal(): AbortSignal {
    this.#abort ??= new AbortController();
    if (this.aborted) this.#abort.abort();
    return this.#abort.signal;
  }

  /** The client went away: the handler's signal aborts, then `stopReading`, then the count settles. */
  abandon(stopReading: () => void): void {
    this.aborted = true;
    this.#abort?.abort();
    stopReading();
    this.settle();
  }

  /** Whether the answer ends the connection: so it must when the gateway drains, too. */
  get closes(): boolean {
    return this.closeConnection || this.state.draining;
  }

  /** Registers a streamed answer's `stop` until the answer ends; returns the unregistering. */
  streaming(stop: (error: unknown) => void): () => void {
    this.state.streams.add(stop);
    return () => this.state.streams.delete(stop);
  }

  /**
   * From the end of its body to its answer, the exchange's time is the gateway's: uWS's HTTP
   * timeout, armed when the body was read, is held off (uws-timeout-hold.ts), except while a
   * streamed answer's write waits for the client (`waitsOnClient`).
   */
  holdTimeout(): void {
    if (this.counted && this.#releaseTimeout === undefined) {
      this.#releaseTimeout = this.state.timeoutHold.hold(this.res, () => this.#waitsOnClient());
    }
  }

  /** A streamed answer tells how to know that its client owes a read. */
  waitsOnClientWhen(waits: () => boolean): void {
    this.#waitsOnClient = waits;
  }

  /** `release` runs when the request settles; at once when it has (its client left meanwhile). */
  holdUntilSettled(release: () => void): void {
    if (this.counted) this.#releaseQuotas = release;
    else release();
  }

  settle(): void {
    if (!this.counted) return;
    this.counted = false;
    this.state.inFlight--;
    this.gauge?.httpInFlight.dec();
    this.#releaseQuotas?.();
    this.#releaseTimeout?.();
  }
}

function serve(
  res: HttpResponse,
  req: HttpRequest,
  matcher: PathMatcher,
  options: HttpAppOptions,
  state: AppState,
  budget: BodyBudget,
): void {
  options.arrived?.();
  // Everything from `req` must be read now: uWS frees it when this function returns.
  const rawMethod = req.getCaseSensitiveMethod().toUpperCase();
  const head = rawMethod === "HEAD";
  const method = (head ? "GET" : rawMethod) as HttpMethod;
  const url = canonicalPath(req.getUrl());
  const rawQuery = req.getQuery() ?? "";
  const authorization = req.getHeader("authorization");
  const framing = requestFraming(req);
  // Read only when CORS is on: two header lookups per request the default configuration never needs.
  const { cors } = options;
  const origin = cors === undefined ? "" : req.getHeader("origin");
  const preflight =
    cors !== undefined && rawMethod === "OPTIONS" && req.getHeader("access-control-request-method") !== "";
  const match = METHODS.has(method) ? matcher.match(method, url) : ({ kind: "not-found" } as const);
  const gauge = match.kind === "found" && match.route.countsInFlight === false ? undefined : options.metrics;
  const exchange = new Exchange(
    res,
    head,
    state,
    gauge,
    [req.getHeader("traceparent"), req.getHeader("tracestate")],
    options.compression && !head ? req.getHeader("accept-encoding") : undefined,
    options.tracing,
  );
  // The method is the client's to choose: any other would mint a label value.
  const methodLabel = METHODS.has(method) ? method : "OTHER";
  const headers = match.kind === "found" ? readHeaders(req, match.route.headers) : NO_HEADERS;
  // Canton's unknown-path answer names the request's absolute URI, its Host included, and its
  // method as its routes saw it (a HEAD as the GET that pekko-http's transparent HEAD makes of it).
  const notInRelease =
    match.kind === "not-in-release"
      ? unknownPathAnswer(method, req.getHeader("host"), req.getUrl(), rawQuery)
      : undefined;
  let reader: BodyReader | undefined;
  res.onAborted(() => {
    exchange.abandon(() => reader?.abort());
  });

  if (cors?.allows(origin)) exchange.headers.push(...cors.answerHeaders(origin));
  if (preflight) {
    answerPreflight(exchange, cors, origin, options);
    return;
  }
  if (framing.kind === "ambiguous") {
    refuseFraming(exchange, framing, methodLabel, options);
    return;
  }
  if (state.draining) {
    exchange.closeConnection = true;
    answerError(exchange, shuttingDownError(), routeLabel(match), methodLabel, options);
    return;
  }
  if (notInRelease !== undefined) {
    finish(exchange, { kind: "json", ...notInRelease }, UNMATCHED_ROUTE, methodLabel, options);
    return;
  }
  if (match.kind === "release-unknown") {
    const error = apiVersionUnknownError(match.route.method, match.route.path);
    answerError(exchange, error, UNMATCHED_ROUTE, methodLabel, options);
    return;
  }
  if (match.kind !== "found") {
    if (match.kind === "method-not-allowed") exchange.headers.push(["Allow", allowHeader(match.allowed)]);
    const error =
      match.kind === "method-not-allowed"
        ? methodNotAllowedError(rawMethod)
        : routeNotFoundError(rawMethod, url);
    answerError(exchange, error, UNMATCHED_ROUTE, methodLabel, options);
    return;
  }
  const { route } = match;
  const maxBodyBytes =
    route.body?.kind === "json" && route.body.maxBytes !== undefined
      ? Math.min(route.body.maxBytes, options.maxBodyBytes)
      : options.maxBodyBytes;
  if (route.body && framing.length !== undefined && framing.length > maxBodyBytes) {
    // Refused on its Content-Length alone: not a byte of it is read.
    exchange.closeConnection = true;
    fail(exchange, new BodyTooLargeError(maxBodyBytes), route, options);
    return;
  }
  const token = bearerToken(authorization);
  if (token !== undefined && route.auth !== "none") options.audienceLessTokens?.sampleHttp(token);
  if (route.body) {
    reader = new BodyReader(res, framing.length, {
      maxBytes: maxBodyBytes,
      timeoutMs: options.bodyReadTimeoutMs,
      budget,
      timeoutHold: state.timeoutHold,
    });
  }
  void respond(exchange, route, match.path, rawQuery, token, headers, method, reader, options);
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

function readHeaders(
  req: HttpRequest,
  names: readonly string[] | undefined,
): Readonly<Record<string, string>> {
  if (names === undefined) return NO_HEADERS;
  const headers: Record<string, string> = {};
  for (const name of names) headers[name] = req.getHeader(name);
  return headers;
}

/**
 * After the request line and headers: token, body, path and query, validation, handler, answer.
 * One async function, not a chain of promises per step: the unary path's cost is per request.
 */
async function respond(
  exchange: Exchange,
  route: Route,
  pathValues: Readonly<Record<string, string>>,
  rawQuery: string,
  token: string | undefined,
  headers: Readonly<Record<string, string>>,
  method: HttpMethod,
  body: BodyReader | undefined,
  options: HttpAppOptions,
): Promise<void> {
  let answer: Answer;
  // The token's subject names the user on the span; the token itself goes nowhere.
  if (options.tracing !== undefined && token !== undefined) exchange.user = decodeTokenClaims(token)?.subject;
  try {
    if (
      options.tokenRefusal &&
      (route.auth === "token" || (route.auth === "optional" && token !== undefined))
    ) {
      const refused = await options.tokenRefusal(token, `${route.method} ${route.path}`);
      if (refused) throw refused;
    }
    if (options.quotas !== undefined && token !== undefined) {
      // The token's subject is the user whose caps the request takes; no token, no user.
      const user = exchange.user ?? decodeTokenClaims(token)?.subject;
      try {
        if (user !== undefined) exchange.holdUntilSettled(holdRequestQuotas(user, route, options.quotas));
      } catch (refusal) {
        await readRefusedBody(body);
        throw refusal;
      }
    }
    const raw = body ? await body.read() : undefined;
    // Reading it armed uWS's HTTP timeout; a request without a body never had it armed.
    if (body) exchange.holdTimeout();
    const path = parsePathParams(pathValues, route.pathParams);
    const query = parseQuery(rawQuery, route.query);
    let decoded: unknown;
    try {
      decoded = decodeBody(route, raw, options.validator);
    } finally {
      // Parsed (or refused): the raw bytes are garbage now, and the next body may have them.
      body?.release();
    }
    const ctx: RequestContext = {
      path,
      query,
      body: decoded,
      token,
      headers,
      get signal() {
        return exchange.signal;
      },
      get trace() {
        return exchange.trace;
      },
    };
    if (!options.tokenRefusal && token !== undefined && options.log.isLevelEnabled("debug")) {
      // Nobody verified this token here (auth.mode none): what it claims is not who sent it.
      const unverifiedUser = decodeTokenClaims(token)?.subject;
      options.log.debug(
        { route: route.path, method, unverifiedUser, traceId: exchange.trace.traceId },
        "request",
      );
    }
    answer = await route.handle(ctx);
  } catch (error) {
    // An answer before the whole body arrived: the rest of it is not read, the connection ends.
    if (body && !body.done) {
      body.discard();
      exchange.closeConnection = true;
    }
    body?.release();
    fail(exchange, error, route, options);
    return;
  }
  if (answer.kind === "stream") stream(exchange, answer, route, options);
  else finish(exchange, answer, route.path, method, options);
}

/**
 * A streamed answer: counted in flight until its end, its request's duration taken when its
 * status goes out (time to the first element), ended with SERVICE_NOT_RUNNING when the gateway
 * drains.
 */
function stream(exchange: Exchange, answer: StreamedAnswer, route: Route, options: HttpAppOptions): void {
  const { res, coding } = exchange;
  let over = false;
  let unregister = (): void => {};
  const writing = writeStreamed(
    {
      res,
      signal: exchange.signal,
      traceId: exchange.trace.traceId,
      closes: () => exchange.closes,
      writeHead: () => {
        const seconds = Number(process.hrtime.bigint() - exchange.started) / 1e9;
        options.metrics?.recordHttp(route.path, route.method, 200, seconds, exchange.exemplarTrace);
        writeStatusAndHeaders(exchange, 200);
        res.writeHeader("Content-Type", STREAM_FRAMINGS[answer.format].contentType);
        if (coding !== undefined) writeCoding(exchange, coding);
        // Proxies pass each element on as it comes (nginx buffers answers unless told).
        res.writeHeader("Cache-Control", "no-cache");
        res.writeHeader("X-Accel-Buffering", "no");
      },
      fail: (error) => fail(exchange, error, route, options),
      ended: () => {
        over = true;
        unregister();
        exchange.settle();
        exchange.endSpan(route.path, route.method, 200);
      },
    },
    answer,
    options.streamHighWater,
    coding,
  );
  exchange.waitsOnClientWhen(writing.waitsOnClient);
  if (!over) unregister = exchange.streaming(writing.stop);
}

/**
 * Conflicting Content-Length headers: uWS frames the body by the first one, a proxy in front may
 * have used another, and the rest would be read as a second request (smuggling). The answer waits
 * one turn of the event loop: a request uWS already parsed from those bytes behind this one finds
 * this answer pending, and uWS then closes the connection without serving it.
 */
function refuseFraming(
  exchange: Exchange,
  framing: Extract<RequestFraming, { kind: "ambiguous" }>,
  methodLabel: string,
  options: HttpAppOptions,
): void {
  exchange.closeConnection = true;
  setImmediate(() =>
    answerError(exchange, ambiguousFramingError(framing.cause), UNMATCHED_ROUTE, methodLabel, options),
  );
}

/**
 * A CORS preflight (OPTIONS with Access-Control-Request-Method), whatever its path: 204 with what
 * a listed origin may send (the request itself gets its own answer, a 404 included), else 403.
 * Counted as the unmatched OPTIONS requests always were.
 */
function answerPreflight(
  exchange: Exchange,
  cors: CorsPolicy,
  origin: string,
  options: HttpAppOptions,
): void {
  if (origin === "" || !cors.allows(origin)) {
    answerError(exchange, corsOriginNotAllowedError(origin), UNMATCHED_ROUTE, "OTHER", options);
    return;
  }
  exchange.headers.push(...cors.preflightHeaders());
  finish(exchange, { kind: "empty", status: 204 }, UNMATCHED_ROUTE, "OTHER", options);
}

function routeLabel(match: ReturnType<PathMatcher["match"]>): string {
  return match.kind === "found" ? match.route.path : UNMATCHED_ROUTE;
}

/** RFC 9110 section 15.5.6: a 405 lists the methods the resource has; GET brings HEAD. */
function allowHeader(allowed: readonly HttpMethod[]): string {
  const methods = new Set<string>(allowed);
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].join(", ");
}

function answerError(
  exchange: Exchange,
  error: { httpStatus: number; body: JsCantonError },
  route: string,
  method: string,
  options: HttpAppOptions,
): void {
  const body = traced(error.body, exchange.trace.traceId);
  finish(exchange, { kind: "json", status: error.httpStatus, body }, route, method, options);
}

function decodeBody(route: Route, raw: Buffer | undefined, validator: BodyValidator): unknown {
  if (!route.body || raw === undefined) return undefined;
  if (route.body.kind === "bytes") return raw;
  // Content-Type is not looked at: Canton's own TypeScript client sends none.
  if (raw.length === 0) throw new InvalidValueError("body", "missing");
  const json = parseRequestJson(raw.toString("utf8"));
  validator.validate(route.body.schema, json);
  return json;
}

function fail(exchange: Exchange, error: unknown, route: Route, options: HttpAppOptions): void {
  if (error instanceof BodyAbortedError || exchange.aborted) {
    // The client left (before its body arrived, or while its answer was made): nobody to answer,
    // only the count to settle; what failed after it left (a cancelled stream, a probe) is no
    // fault of the gateway's.
    finish(exchange, { kind: "empty", status: 499 }, route.path, route.method, options);
    return;
  }
  const answer = errorAnswer(bodyError(error));
  const { traceId } = exchange.trace;
  if (answer.kind === "json" && answer.status >= 500 && answer.body.code === INTERNAL_ERROR_CODE) {
    options.log.error({ err: error, route: route.path, traceId }, "request failed in the gateway");
  }
  const http: Answer =
    answer.kind === "text"
      ? { kind: "text", status: answer.status, text: answer.text }
      : { kind: "json", status: answer.status, body: traced(answer.body, traceId) };
  finish(exchange, http, route.path, route.method, options);
}

/** The body reader's failures as the errors clients get. */
function bodyError(error: unknown): unknown {
  if (error instanceof BodyTooLargeError) return requestTooLargeError(error.message);
  if (error instanceof BodyTimeoutError) return bodyTimeoutError(error.message);
  return error;
}

function finish(
  exchange: Exchange,
  answer: WholeAnswer,
  routeLabel: string,
  method: string,
  options: HttpAppOptions,
): void {
  const status = "status" in answer && answer.status !== undefined ? answer.status : 200;
  const seconds = Number(process.hrtime.bigint() - exchange.started) / 1e9;
  options.metrics?.recordHttp(routeLabel, method, status, seconds, exchange.exemplarTrace);
  exchange.endSpan(routeLabel, method, status);
  writeAnswer(exchange, status, answer, options.compression?.minBytes, options.log);
}
