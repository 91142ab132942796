import type { Observable, Subscribable } from "rxjs";
import type { ShareSpec } from "../fanout/subscription.js";
import type { TraceContext } from "../ledger/trace-context.js";
import type { Availability } from "../proto/api-version.js";

/**
 * One streaming endpoint of the JSON API (completions, active contracts, updates, ...), written
 * once and served two ways: as a WebSocket (src/ws/ws-streams.ts) and as its HTTP list twin
 * (src/http/list-twin.ts), and knowing neither. The serving layers own everything around the
 * stream — auth, request validation against `requestSchema`, backpressure, limits, idle waits,
 * error frames, metrics — so an endpoint is only "request -> gRPC call -> JSON texts".
 *
 * @example
 * const updates: StreamEndpoint = {
 *   path: "/v2/updates",
 *   summary: "Read the ledger's filtered update stream",
 *   requestSchema: "GetUpdatesRequest",
 *   responseSchema: "JsGetUpdatesResponse",
 *   open: (request, token, demand$) =>
 *     ledger
 *       .serverStream("UpdateService", "GetUpdates", toGrpc(request), token, { demand$ })
 *       .pipe(map((message) => JSON.stringify(toJson(message)))),
 *   probe: (request, token, trace) =>
 *     ledger
 *       .serverStream("UpdateService", "GetUpdates", toGrpc(request), token, { purpose: "authorization", trace })
 *       .pipe(map((message) => JSON.stringify(toJson(message)))),
 *   idleByDefault: (request) => (request as { endInclusive?: unknown }).endInclusive === undefined,
 *   offsetOf: (element) => /"offset":(\d+)/.exec(element)?.[1],
 * };
 */
export interface StreamEndpoint {
  /** Path template without the server's path prefix, e.g. `/v2/updates`; also the metric label. */
  readonly path: string;
  /** One line for the AsyncAPI and OpenAPI documents. */
  readonly summary: string;
  /** Component schema (schemas/components.json) of the request: the query frame and the list twin's body. */
  readonly requestSchema: string;
  /** Component schema of one element (errors are JsCantonError frames). */
  readonly responseSchema: string;
  readonly deprecated?: boolean;
  /** The Canton releases that have this channel and its list twin; absent: every known one. */
  readonly availability?: Availability;
  /**
   * Opens the stream for one subscriber. Must be cold (nothing happens before subscribe) and
   * cancel its gRPC call on unsubscribe; LedgerClient.serverStream does both.
   * - `request`: the JSON already validated against `requestSchema`.
   * - `token`: the caller's bearer token, for this call only (none: the ledger judges that).
   * - `demand$`: the sink's readiness; pass it to LedgerClient.serverStream so that a slow consumer pauses
   *   the gRPC call instead of piling elements up in the gateway.
   * - `renewed$`: tokens that replace `token`, each already admitted by the ledger (a WebSocket
   *   client renewing in band); the ledger ends a call when its token expires, so a `renewable`
   *   endpoint moves its call onto each, from where it is.
   * - `trace`: the W3C trace context of the request the stream serves; its calls carry it.
   * - `opened`: told each time a call is sent (at once, or once the stream budget gave it a slot:
   *   a call waiting in the budget's queue has not started, so a list twin's idle wait waits too).
   * Emits one JSON text per element, sent as is (no re-serialisation). Errors with a gRPC
   * `ServiceError` or a gateway error (`CantonHttpError`, `InvalidValueError`); the serving
   * layer turns them into the final JsCantonError frame / HTTP answer through src/errors.
   */
  open(
    request: unknown,
    token: string | undefined,
    demand$: Subscribable<boolean>,
    renewed$?: Observable<string>,
    trace?: TraceContext,
    opened?: () => void,
  ): Observable<string>;
  /**
   * One ledger call of this endpoint for `request` on `token`, to ask the ledger whether the
   * token may read it (an authorization probe: the stream authorization builds the request, an
   * empty range or the first message of the open-ended one). The call is an authorization call
   * of the participant's stream budget: it may take the share subscriptions cannot, so they
   * cannot starve it. Always ready (no pause), never reopened after a lost connection and never
   * moved onto a renewed token: the call's own end or error is the answer. Cold, and cancels its
   * call on unsubscribe, as `open`; emits once per message of the ledger's, which is all a probe
   * reads (what it emits need not be the element: ledgerStream's probes do not transcode).
   */
  probe(request: unknown, token: string | undefined, trace?: TraceContext): Observable<string>;
  /**
   * Whether a stream can move onto a renewed token (`renewed$`): its elements say where it
   * stands, so a new call resumes after the last one. Not the active contracts, a snapshot.
   */
  readonly renewable?: boolean;
  /**
   * Whether the ledger admits this caller at all, asked before a WebSocket upgrade: Canton
   * resolves the token's claims (its user exists, is active, its rights can be read) before it
   * upgrades, so a refused caller gets a plain HTTP answer and no socket. Rejects with the
   * ledger's error; whether the caller may read what it asks for is the stream's own call.
   */
  admit?(token: string | undefined, trace?: TraceContext): Promise<void>;
  /**
   * Whether the list twin waits for more with an idle timeout when the client gave no
   * `stream_idle_timeout_ms`: Canton's rule is open-ended streams only (updates without
   * `endInclusive`, completions always, never the ACS).
   */
  idleByDefault(request: unknown): boolean;
  /**
   * The offset a client resumes from after this element, when the element carries one. Called
   * only when a slow consumer is disconnected (never per element), on the last element it got,
   * so that the close tells the client where to resume instead of silently losing anything.
   */
  offsetOf?(element: string): string | number | undefined;
  /**
   * The request that continues after the element whose `offsetOf` was `id` (a server-sent
   * events client reconnecting with `Last-Event-ID`). Throws an InvalidValueError for an `id`
   * no element of this stream has.
   */
  startAfter?(request: unknown, id: string): unknown;
  /**
   * For open-ended streams whose subscribers can share one gRPC call (src/fanout): the request's
   * share key, offset and re-offset form; undefined when this request is not shared (bounded,
   * or a form the call will refuse). Absent: every subscriber gets its own call.
   */
  share?(request: unknown, token: string | undefined, trace?: TraceContext): ShareSpec | undefined;
}
