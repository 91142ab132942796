import {
  concat,
  defer,
  EMPTY,
  finalize,
  identity,
  ignoreElements,
  type Observable,
  ReplaySubject,
  type Subscribable,
  tap,
} from "rxjs";
import { confirmEmptyAnswer } from "../endpoints/ledger-questions.js";
import { operationId } from "../endpoints/operation-id.js";
import type { Answer, RequestContext, Route, StreamedAnswer } from "../endpoints/route.js";
import { subscriberGrant } from "../endpoints/stream-authorization.js";
import type { StreamEndpoint } from "../endpoints/stream-endpoint.js";
import { type StreamFormat, streamFormatOf } from "../endpoints/stream-format.js";
import { type SubscriberStreamOptions, subscriberStream } from "../endpoints/subscriber-stream.js";
import { InvalidValueError, type StreamEndReason } from "../errors/index.js";
import { type HeldTokens, TokenHold } from "../jwt/held-tokens.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";
import { elementLimit } from "../streams/element-limit.js";
import { idleTimeout } from "../streams/idle-timeout.js";
import { streamEnd } from "../streams/stream-end.js";
import { JsonArrayBytes } from "./json-array-bytes.js";

export interface ListTwinConfig {
  /** websocket-config.http-list-max-elements-limit */
  httpListMaxElementsLimit: number;
  /** websocket-config.http-list-wait-time */
  httpListWaitTimeMs: number;
  /** websocket-config.stream-authorization-recheck-interval: a reader is asked about again while it reads. */
  streamAuthorizationRecheckMs: number;
  /** websocket-config.resume-window: how long a reader stays, elements held, while the ledger is away. */
  resumeWindowMs: number;
}

/**
 * Who reads a streamed answer, and what: the request's body on its bearer token, or (the GET form
 * a browser's EventSource opens, ticket-routes.ts) the request and token a stream ticket stands
 * for, with renewals.
 */
export interface AnswerReader {
  readonly request: unknown;
  readonly token: string | undefined;
  /** Renewed tokens for the reader's gate, as a WebSocket's renewal frames are (ticket-renewals.ts). */
  readonly renewals?: SubscriberStreamOptions["renewals"];
  /** The SSE `id:` of an element (default: the endpoint's offsetOf). */
  readonly idOf?: (element: string) => string | number | undefined;
}

/**
 * A list twin's reader's elements: its own call, behind the same gate as every stream subscriber
 * (src/endpoints/subscriber-stream.ts): the call on its token admits it, its token's expiry ends
 * it with ACCESS_TOKEN_EXPIRED, and while it lasts (an idle wait may be long) it is asked about
 * again, STALE_STREAM_AUTHORIZATION when the ledger refuses or does not answer. A renewal the
 * ledger accepts moves its grant and its call onto the new token, as on a WebSocket. Its idle
 * wait, if any, counts from when its call is sent: a call waiting for a stream-budget slot has
 * read nothing yet, and an empty list then would say the ledger had nothing (the reader gets its
 * elements once the slot comes, or 429 MAXIMUM_NUMBER_OF_STREAMS past the budget's queue timeout).
 */
function readerElements(
  endpoint: StreamEndpoint,
  reader: AnswerReader,
  ctx: RequestContext,
  demand$: Subscribable<boolean>,
  config: ListTwinConfig,
  idle: { readonly ms: number | undefined; readonly onIdle: () => void },
): Observable<string> {
  const recheckIntervalMs = config.streamAuthorizationRecheckMs;
  return defer(() => {
    const opened = new ReplaySubject<void>(1);
    const elements$ = subscriberStream({
      endpoint,
      request: reader.request,
      token: reader.token,
      grant: subscriberGrant(reader.token, recheckIntervalMs, config.resumeWindowMs),
      recheckIntervalMs,
      demand$,
      trace: ctx.trace,
      opened: () => opened.next(),
      ...(reader.renewals ? { renewals: reader.renewals } : {}),
    });
    return idle.ms === undefined
      ? elements$
      : elements$.pipe(idleTimeout<string>(idle.ms, { onIdle: idle.onIdle, startOn: opened }));
  });
}

/**
 * The HTTP list twin of a stream endpoint: POST on the same path with the same body, the whole
 * stream as one JSON array, with Canton's rules (json-api-behaviour.md):
 * - cut at min(`limit` ?? max+1, max+1) elements; more than max -> 413
 *   JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED; `limit` <= max just truncates (200);
 * - an idle wait (`stream_idle_timeout_ms` ?? the configured wait) applies when the client gives
 *   one or the stream is open-ended; it also bounds the wait for the first element, and the
 *   answer is what was collected (an empty one only once the ledger admitted the reader);
 * - the array is written from the elements' JSON texts as they arrive, straight into the answer's
 *   bytes (never re-serialised, never held twice);
 * - a client that goes away unsubscribes, which cancels the gRPC call.
 * A client whose `Accept` prefers NDJSON or server-sent events gets the elements streamed
 * instead (streamedAnswer below), re-checked as a WebSocket subscriber is.
 */
export function listTwinRoute(
  endpoint: StreamEndpoint,
  config: ListTwinConfig,
  metrics?: GatewayMetrics,
  /** The worker's held tokens: a reader holds its token while it reads (see HeldTokens). */
  tokens?: HeldTokens,
): Route {
  return {
    method: "POST",
    path: endpoint.path,
    operationId: operationId("POST", endpoint.path),
    summary: `${endpoint.summary} (as a list: the stream's elements in one JSON array)`,
    tag: tagOf(endpoint.path),
    query: [
      { name: "limit", type: "int64" },
      { name: "stream_idle_timeout_ms", type: "int64" },
    ],
    body: { kind: "json", schema: endpoint.requestSchema },
    response: { kind: "json-array", schema: endpoint.responseSchema, streamed: true },
    auth: "token",
    headers: ["accept", "last-event-id"],
    ...(endpoint.deprecated ? { deprecated: true } : {}),
    ...(endpoint.availability ? { availability: endpoint.availability } : {}),
    handle: async (ctx): Promise<Answer> => {
      const limit = nonNegative(ctx, "limit");
      const idleMs = nonNegative(ctx, "stream_idle_timeout_ms");
      const wait = idleMs ?? (endpoint.idleByDefault(ctx.body) ? config.httpListWaitTimeMs : undefined);
      const format = streamFormatOf(ctx.headers.accept ?? "");
      if (format !== undefined) {
        const lastId = format === "sse" ? ctx.headers["last-event-id"] : "";
        const request = lastId ? startAfter(endpoint, ctx.body, lastId) : ctx.body;
        const reader = { request, token: ctx.token };
        return streamedAnswer(endpoint, ctx, format, { limit, wait, config, metrics, tokens }, reader);
      }
      const started = process.hrtime.bigint();
      let reason: StreamEndReason = "completed";
      const record = (elements: number, bytes: number): void => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        metrics?.recordStreamSent(endpoint.path, "http", elements, bytes);
        metrics?.recordStreamEnd(endpoint.path, "http", reason, seconds);
      };
      // The demand never goes false: the element limit bounds what is held, and the answer is
      // written once.
      const idle = { ms: wait, onIdle: () => (reason = "idle") };
      const reader = { request: ctx.body, token: ctx.token };
      const source = readerElements(endpoint, reader, ctx, EMPTY, config, idle).pipe(
        elementLimit<string>(config.httpListMaxElementsLimit, limit),
        streamEnd<string>((end) => {
          if (end.reason !== "completed") reason = end.reason;
        }),
      );
      const array = new JsonArrayBytes();
      const hold = readerHold(tokens, ctx.token);
      try {
        await collect(source, ctx.signal, array);
        // `reason` is set by the operators' callbacks, which the compiler cannot see.
        if ((reason as StreamEndReason) === "idle" && array.elements === 0) {
          await confirmEmptyAnswer(endpoint, ctx.body, ctx.token, ctx.signal, ctx.trace);
        }
      } catch (error) {
        record(0, 0);
        // An ElementLimitExceededError becomes Canton's 413 in src/errors.
        throw error;
      } finally {
        hold?.release();
      }
      const { chunks, length } = array.end();
      record(array.elements, length);
      return { kind: "json-bytes", chunks, length };
    },
  };
}

/** How a streamed answer ends, besides its ledger call's own end. */
export interface StreamedAnswerPolicy {
  /** Elements at most (`limit`); undefined: no cut. */
  readonly limit: number | undefined;
  /** The idle wait; undefined: none (a bounded request with no `stream_idle_timeout_ms`). */
  readonly wait: number | undefined;
  readonly config: ListTwinConfig;
  readonly metrics: GatewayMetrics | undefined;
  /** The worker's held tokens, which hold the reader's token while it reads. */
  readonly tokens?: HeldTokens | undefined;
}

/**
 * The list twin streamed (NDJSON or server-sent events): the same elements, each written as it
 * arrives and paused by the socket's backpressure. The node's element limit does not apply (it
 * bounds what a list holds, and nothing is held here); `limit` and the idle wait do. A server-
 * sent events client reconnecting with `Last-Event-ID` continues after that element.
 * It may last as long as a WebSocket stream, so it is authorized as one is, by the same
 * operator: its own call on its token is its admission; at the token's expiry it ends with
 * ACCESS_TOKEN_EXPIRED, and a re-check the ledger refuses ends it with STALE_STREAM_AUTHORIZATION,
 * the last line or event (a proper HTTP error before the first element).
 */
export function streamedAnswer(
  endpoint: StreamEndpoint,
  ctx: RequestContext,
  format: StreamFormat,
  { limit, wait, config, metrics, tokens }: StreamedAnswerPolicy,
  reader: AnswerReader,
): StreamedAnswer {
  const { request, token } = reader;
  const idOf = reader.idOf ?? endpoint.offsetOf;
  return {
    kind: "stream",
    format,
    ...(format === "sse" && idOf ? { idOf } : {}),
    elements: (demand$) =>
      defer(() => {
        const started = process.hrtime.bigint();
        let reason: StreamEndReason = "completed";
        let elements = 0;
        let bytes = 0;
        const idle = { ms: wait, onIdle: () => (reason = "idle") };
        const hold = readerHold(tokens, token);
        const elements$ = readerElements(endpoint, heldReader(reader, hold), ctx, demand$, config, idle).pipe(
          // No node limit here (nothing is held), only the client's; a limit of 0 still waits
          // for the ledger's first word, as the array's does.
          limit === undefined ? identity : elementLimit<string>(Number.MAX_SAFE_INTEGER, limit),
          tap((text) => {
            elements += 1;
            bytes += Buffer.byteLength(text);
          }),
          streamEnd<string>((end) => {
            if (end.reason !== "completed") reason = end.reason;
            const seconds = Number(process.hrtime.bigint() - started) / 1e9;
            metrics?.recordStreamSent(endpoint.path, format, elements, bytes);
            metrics?.recordStreamEnd(endpoint.path, format, reason, seconds);
          }),
        );
        // An empty answer is a 200 only once the ledger admitted the reader (as the list's).
        const verdict = defer(async () => {
          if ((reason as StreamEndReason) === "idle" && elements === 0) {
            await confirmEmptyAnswer(endpoint, request, token, ctx.signal, ctx.trace);
          }
        }).pipe(ignoreElements());
        return concat(elements$, verdict).pipe(finalize(() => hold?.release()));
      }),
  };
}

/** The request that continues after the element whose SSE id was `id`; 400 where none can. */
export function startAfter(endpoint: StreamEndpoint, request: unknown, id: string): unknown {
  if (endpoint.startAfter === undefined) {
    throw new InvalidValueError("header Last-Event-ID", `${endpoint.path} cannot continue after an element`);
  }
  return endpoint.startAfter(request, id);
}

function nonNegative(ctx: RequestContext, name: string): number | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || value < 0 || !Number.isSafeInteger(value)) {
    throw new InvalidValueError(`query parameter ${name}`, `expected an integer >= 0, got ${value}`);
  }
  return value;
}

/** The texts in order into `array`; rejects with the stream's error; the signal's abort cancels the stream. */
function collect(source: Observable<string>, signal: AbortSignal, array: JsonArrayBytes): Promise<void> {
  return new Promise((resolve, reject) => {
    const gone = (): void => {
      subscription.unsubscribe();
      reject(new Error("client went away"));
    };
    const subscription = source.subscribe({
      next: (text) => array.push(text),
      error: (error: unknown) => {
        signal.removeEventListener("abort", gone);
        reject(error);
      },
      complete: () => {
        signal.removeEventListener("abort", gone);
        resolve();
      },
    });
    if (signal.aborted) gone();
    else if (!subscription.closed) signal.addEventListener("abort", gone, { once: true });
  });
}

/** The OpenAPI tag Canton uses: the path's first segment after the version, capitalised. */
export function tagOf(path: string): string {
  const segment = path.split("/").filter((s) => s !== "")[1] ?? "";
  return segment.charAt(0).toUpperCase() + segment.slice(1);
}

/**
 * The reader's token held in the worker's held tokens while it reads: once the ledger accepted
 * it for the reader's first call, the reader's later calls (re-checks, an empty answer's
 * verdict) are charged to its user without asking again (chargedStreamSlots).
 */
function readerHold(tokens: HeldTokens | undefined, token: string | undefined): TokenHold | undefined {
  return tokens === undefined || token === undefined ? undefined : new TokenHold(tokens, token, false);
}

/** The reader, its hold moved onto each renewed token the ledger accepted. */
function heldReader(reader: AnswerReader, hold: TokenHold | undefined): AnswerReader {
  const { renewals } = reader;
  if (hold === undefined || renewals === undefined) return reader;
  const renewed = (token: string) => {
    hold.renewed(token);
    renewals.renewed(token);
  };
  return { ...reader, renewals: { ...renewals, renewed } };
}
