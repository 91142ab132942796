import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";
import type { Logger } from "pino";
import type { BodyValidator } from "../endpoints/body-validator.js";
import type { Answer, HttpMethod, RequestContext, Route } from "../endpoints/route.js";
import {
  errorAnswer,
  INTERNAL_ERROR_CODE,
  InvalidValueError,
  methodNotAllowedError,
  missingTokenError,
  requestTooLargeError,
  routeNotFoundError,
} from "../errors/index.js";
import { bearerToken, decodeTokenClaims } from "../jwt/bearer-token.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";
import { BodyTooLargeError, readBody } from "./body-reader.js";
import { PathMatcher } from "./path-matcher.js";
import { parsePathParams, parseQuery } from "./query-params.js";

export interface HttpAppOptions {
  routes: readonly Route[];
  pathPrefix: string;
  maxBodyBytes: number;
  validator: BodyValidator;
  metrics?: GatewayMetrics;
  log: Logger;
}

const METHODS = new Set<string>(["GET", "POST", "PATCH", "PUT", "DELETE"]);

/** The `route` label of a request that matched no route (404, 405). */
export const UNMATCHED_ROUTE = "unmatched";

/** Every `route` x `method` label pair the HTTP side can report: routes, then unmatched ones. */
export function httpRouteLabels(routes: readonly Route[]): { route: string; method: string }[] {
  return [
    ...routes.map(({ path, method }) => ({ route: path, method })),
    ...[...METHODS, "OTHER"].map((method) => ({ route: UNMATCHED_ROUTE, method })),
  ];
}

export interface HttpRoutesHandle {
  /** Requests received and not yet answered (for a draining shutdown). */
  inFlight(): number;
}

/**
 * Serves the route table on a uWS app. One straight line per request:
 * match -> token -> body -> parse path/query -> validate -> handler -> answer; any failure
 * on the way becomes an answer through src/errors.
 */
export function attachHttpRoutes(app: TemplatedApp, options: HttpAppOptions): HttpRoutesHandle {
  for (const route of options.routes)
    if (route.body?.kind === "json") options.validator.prepare(route.body.schema);
  const matcher = new PathMatcher(options.routes, options.pathPrefix);
  const counter = { inFlight: 0 };
  app.any("/*", (res, req) => serve(res, req, matcher, options, counter));
  return { inFlight: () => counter.inFlight };
}

interface Exchange {
  readonly res: HttpResponse;
  readonly head: boolean;
  readonly started: bigint;
  aborted: boolean;
  readonly abort: AbortController;
  readonly done: () => void;
}

function serve(
  res: HttpResponse,
  req: HttpRequest,
  matcher: PathMatcher,
  options: HttpAppOptions,
  counter: { inFlight: number },
): void {
  // Everything from `req` must be read now: uWS frees it when this function returns.
  const rawMethod = req.getCaseSensitiveMethod().toUpperCase();
  const head = rawMethod === "HEAD";
  const method = (head ? "GET" : rawMethod) as HttpMethod;
  const url = req.getUrl();
  const rawQuery = req.getQuery() ?? "";
  const authorization = req.getHeader("authorization");
  const match = METHODS.has(method) ? matcher.match(method, url) : ({ kind: "not-found" } as const);
  const gauge = match.kind === "found" && match.route.countsInFlight === false ? undefined : options.metrics;
  const exchange: Exchange = {
    res,
    head,
    started: process.hrtime.bigint(),
    aborted: false,
    abort: new AbortController(),
    done: () => {
      counter.inFlight--;
      gauge?.httpInFlight.dec();
    },
  };
  counter.inFlight++;
  gauge?.httpInFlight.inc();
  res.onAborted(() => {
    exchange.aborted = true;
    exchange.abort.abort();
  });

  if (match.kind !== "found") {
    const error =
      match.kind === "method-not-allowed"
        ? methodNotAllowedError(rawMethod)
        : routeNotFoundError(rawMethod, url);
    finish(
      exchange,
      { kind: "json", status: error.httpStatus, body: error.body },
      UNMATCHED_ROUTE,
      // The method is the client's to choose: any other would mint a label value.
      METHODS.has(method) ? method : "OTHER",
      options,
    );
    return;
  }
  const { route } = match;
  const token = bearerToken(authorization);
  const body = route.body ? readBody(res, options.maxBodyBytes) : Promise.resolve(undefined);
  // Only where the gateway verifies tokens itself; else the ledger judges a token-less request.
  if (route.refusesMissingToken && token === undefined) {
    body.catch(() => undefined);
    fail(exchange, missingTokenError(), route, options);
    return;
  }
  body
    .then(async (raw) => {
      const ctx: RequestContext = {
        path: parsePathParams(match.path, route.pathParams),
        query: parseQuery(rawQuery, route.query),
        body: decodeBody(route, raw, options.validator),
        token,
        signal: exchange.abort.signal,
      };
      if (token !== undefined && options.log.isLevelEnabled("debug")) {
        options.log.debug({ route: route.path, method, user: decodeTokenClaims(token)?.subject }, "request");
      }
      return route.handle(ctx);
    })
    .then(
      (answer) => finish(exchange, answer, route.path, method, options),
      (error: unknown) => fail(exchange, error, route, options),
    );
}

function decodeBody(route: Route, raw: Buffer | undefined, validator: BodyValidator): unknown {
  if (!route.body || raw === undefined) return undefined;
  if (route.body.kind === "bytes") return raw;
  // Content-Type is not looked at: Canton's own TypeScript client sends none.
  let json: unknown;
  try {
    json = raw.length === 0 ? undefined : JSON.parse(raw.toString("utf8"));
  } catch (error) {
    throw new InvalidValueError("body", (error as Error).message);
  }
  if (json === undefined) throw new InvalidValueError("body", "missing");
  validator.validate(route.body.schema, json);
  return json;
}

function fail(exchange: Exchange, error: unknown, route: Route, options: HttpAppOptions): void {
  const answer = errorAnswer(
    error instanceof BodyTooLargeError ? requestTooLargeError(error.message) : error,
  );
  if (answer.kind === "json" && answer.status >= 500 && answer.body.code === INTERNAL_ERROR_CODE) {
    options.log.error({ err: error, route: route.path }, "request failed in the gateway");
  }
  const http: Answer =
    answer.kind === "text"
      ? { kind: "text", status: answer.status, text: answer.text }
      : { kind: "json", status: answer.status, body: answer.body };
  finish(exchange, http, route.path, route.method, options);
}

const STATUS_TEXT: Record<number, string> = {
  200: "200 OK",
  400: "400 Bad Request",
  401: "401 Unauthorized",
  403: "403 Forbidden",
  404: "404 Not Found",
  405: "405 Method Not Allowed",
  409: "409 Conflict",
  413: "413 Payload Too Large",
  429: "429 Too Many Requests",
  499: "499 Client Closed Request",
  500: "500 Internal Server Error",
  501: "501 Not Implemented",
  503: "503 Service Unavailable",
  504: "504 Gateway Timeout",
};

function finish(
  exchange: Exchange,
  answer: Answer,
  routeLabel: string,
  method: string,
  options: HttpAppOptions,
): void {
  const status = "status" in answer && answer.status !== undefined ? answer.status : 200;
  const seconds = Number(process.hrtime.bigint() - exchange.started) / 1e9;
  options.metrics?.recordHttp(routeLabel, method, status, seconds);
  exchange.done();
  if (exchange.aborted) return;
  const { res } = exchange;
  res.cork(() => {
    res.writeStatus(STATUS_TEXT[status] ?? `${status} Status`);
    switch (answer.kind) {
      case "json":
        send(exchange, "application/json", JSON.stringify(answer.body));
        break;
      case "json-text":
        send(exchange, "application/json", answer.text);
        break;
      case "text":
        send(exchange, answer.contentType ?? "text/plain; charset=utf-8", answer.text);
        break;
      case "bytes":
        for (const [name, value] of Object.entries(answer.headers)) res.writeHeader(name, value);
        sendChunked(exchange, "application/octet-stream", answer.body);
        break;
      case "empty":
        if (exchange.head) res.endWithoutBody(0);
        else res.end();
        break;
    }
  });
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Binary downloads go out with `Transfer-Encoding: chunked` (uWS switches to it on `write`), as
 * the description promises for package bytes; uWS buffers what the socket cannot take yet.
 */
function sendChunked(exchange: Exchange, contentType: string, body: Uint8Array): void {
  const { res } = exchange;
  res.writeHeader("Content-Type", contentType);
  if (exchange.head) {
    res.endWithoutBody(body.byteLength);
    return;
  }
  for (let offset = 0; offset < body.byteLength; offset += CHUNK_BYTES) {
    res.write(body.subarray(offset, Math.min(offset + CHUNK_BYTES, body.byteLength)));
  }
  res.end();
}

function send(exchange: Exchange, contentType: string, body: string | Uint8Array): void {
  const { res } = exchange;
  res.writeHeader("Content-Type", contentType);
  if (exchange.head) {
    res.endWithoutBody(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
  } else {
    res.end(body);
  }
}
