import type { Logger } from "pino";
import type { Observer, Subscribable, Subscription } from "rxjs";
import type { GatewayTokenRefusal } from "../auth/gateway-auth.js";
import type { BodyValidator } from "../endpoints/body-validator.js";
import { tokenRenewed } from "../endpoints/renewal-ack.js";
import { RenewalIntake } from "../endpoints/renewal-intake.js";
import type { SharedQueries } from "../endpoints/shared-queries.js";
import { type SubscriberRenewals, subscriberGrant } from "../endpoints/stream-authorization.js";
import type { StreamEndpoint } from "../endpoints/stream-endpoint.js";
import { subscriberStream } from "../endpoints/subscriber-stream.js";
import {
  endReasonOf,
  errorFrameBody,
  errorFrameText,
  InvalidValueError,
  isGatewayFault,
  isLedgerLost,
  queryFrameTimeoutBody,
  renewalBeforeStartError,
  renewalNotSupportedError,
  renewalRefusedFrameText,
  type SlowConsumerCause,
  type StreamEndReason,
  shuttingDownError,
  traced,
} from "../errors/index.js";
import type { SharedStreams } from "../fanout/shared-streams.js";
import type { TokenHold } from "../jwt/held-tokens.js";
import type { TraceContext } from "../ledger/trace-context.js";
import { closeCodeLabel, type GatewayMetrics } from "../metrics/gateway-metrics.js";
import { Relay } from "../streams/relay.js";
import { renewalFrame } from "./renewal-frame.js";
import { type FrameSocket, type SinkEvents, SocketSink, type SocketSinkOptions } from "./socket-sink.js";

export type SessionLimits = Pick<
  SocketSinkOptions,
  "highWaterMark" | "lowWaterMark" | "hardLimit" | "writeDeadlineMs"
>;

/** A subscription's span (src/tracing), its name and user already given. */
export interface SubscriptionSpan {
  readonly trace: TraceContext;
  end(attributes: Readonly<Record<string, string | number | boolean>>, error?: string): void;
}

export interface StreamSessionOptions {
  endpoint: StreamEndpoint;
  /** The token of this socket's upgrade request, for its one gRPC call (none: the ledger admitted that). */
  token: string | undefined;
  /**
   * The socket's hold of its token in the worker's held tokens, taken at its admission
   * (ws-streams): moved onto renewals the ledger accepts, given back at the close.
   */
  tokenHold: TokenHold | undefined;
  validator: BodyValidator;
  /** The app's parses of query frames, shared by the sockets that send the same text. */
  queries: SharedQueries;
  limits: SessionLimits;
  metrics: GatewayMetrics | undefined;
  log: Logger;
  /** The app's shared streams: open-ended requests the endpoint can share go through it. */
  fanout?: SharedStreams;
  /** What the subscriber's questions to the ledger name its token by (the worker's held tokens' digest). */
  digestOf?: (token: string) => string;
  authorization: SessionAuthorization;
  /** The gateway's own token check (auth.mode), which renewal tokens pass as the upgrade's did. */
  tokenRefusal?: GatewayTokenRefusal;
  /** When the socket opened (performance.now()): the session is made later, when it is first needed. */
  openedAt: number;
  /** The socket negotiated permessage-deflate (see SocketSinkOptions.compressed). */
  compressed?: boolean;
  /** The upgrade request's trace: the stream's ledger calls carry it, its error frames name it. */
  trace: TraceContext;
  /** Its span, with tracing on: ended when the socket closes, told what happened on the way. */
  span?: SubscriptionSpan;
  /** The worker's pace of stream starts (websocket-config.upgrades-per-second); absent: at once. */
  turn?: StartTurn;
}

/**
 * A stream's place in its worker's pace of starts: the socket is upgraded at once, and its stream
 * starts (its query frame parsed, its call opened or its shared stream joined) in its turn. The
 * socket's owner queues it and gives it back at the close.
 */
export interface StartTurn {
  /** `waiter` told to start in its turn, or refused with the error it ends with (the pace could not make it in time). */
  wait(waiter: StartWaiter): void;
}

/** A stream waiting for its turn (StartTurn): the session itself, no closures of its own. */
export interface StartWaiter {
  startNow(): void;
  startRefused(error: unknown): void;
}

/** How a subscriber's standing with the ledger is kept (src/endpoints/stream-authorization.ts). */
export interface SessionAuthorization {
  /** How often the ledger is asked again whether the subscriber's token may still read its request. */
  readonly recheckIntervalMs: number;
  /** How long a subscriber stays open, elements held, while the ledger is away (the resume window). */
  readonly ledgerAwayGraceMs: number;
  /** Renewal frames a minute (websocket-config.token-renewals-per-minute). */
  readonly renewalsPerMinute: number;
}

/** RFC 6455 "Try Again Later": the ledger went away; the client resumes once it is back. */
const CLOSE_TRY_AGAIN_LATER = 1013;
const CLOSE_GOING_AWAY = 1001;

/**
 * One WebSocket stream from query frame to close: parse and validate the one query frame,
 * open the endpoint with the sink's demand, frame elements and the final error, record how it
 * ended. The uWS handlers in ws-streams.ts only forward their events here.
 */
export class StreamSession implements SinkEvents, Observer<string>, SubscriberRenewals, StartWaiter {
  readonly #options: StreamSessionOptions;
  readonly #sink: SocketSink;
  #queried = false;
  #subscription: Subscription | undefined;
  /** The first cause wins: a slow-consumer disconnect also unsubscribes, which is not the reason. */
  #reason: StreamEndReason | undefined;
  /**
   * Tokens of the client's renewal frames that passed the intake, for the ledger to judge: a
   * relay, not a Subject, as nearly every subscriber never renews (see Relay).
   */
  readonly #renewals = new Relay<string>();
  /** Where its elements come from: its own ledger call or a shared one (none before the query). */
  #upstream: "own" | "shared" | undefined;
  #renewalIntake: RenewalIntake | undefined;
  /**
   * Tokens whose renewal frame asked to be told when the ledger accepts them; at most the
   * renewals a minute (the intake refuses more), the oldest forgotten first.
   */
  #acknowledge: Set<string> | undefined;
  /** Its hold of its token, as accepted: moved onto renewals, given back at the close. */
  #tokenHold: TokenHold | undefined;
  /** Its query was taken and its stream waits for its turn (StartTurn) to start. */
  #waiting = false;
  /** The query's request while it waits for its turn. */
  #request: unknown;

  constructor(socket: FrameSocket, options: StreamSessionOptions) {
    this.#options = options;
    const { limits } = options;
    // One shape for every session's options (no spreads): the sink reads them on every frame.
    this.#sink = new SocketSink(socket, {
      highWaterMark: limits.highWaterMark,
      lowWaterMark: limits.lowWaterMark,
      hardLimit: limits.hardLimit,
      writeDeadlineMs: limits.writeDeadlineMs,
      traceId: options.trace.traceId,
      compressed: options.compressed === true,
      // The endpoint's own function (a closure of its module's, not a method): shared by its sessions.
      offsetOf: options.endpoint.offsetOf,
      // The session itself: no closures of its own per socket.
      events: this,
    });
    options.metrics?.trackSubscriber(options.endpoint.path, this.#sink);
    this.#tokenHold = options.tokenHold;
  }

  /** SinkEvents: frames that left the gateway, for the metrics. */
  elementsSent(elements: number, bytes: number): void {
    this.#options.metrics?.recordStreamSent(this.#options.endpoint.path, "ws", elements, bytes);
  }

  /** SinkEvents: a backpressure pause. */
  paused(): void {
    this.#options.metrics?.wsBackpressurePauses.inc({ endpoint: this.#options.endpoint.path });
  }

  /** SinkEvents: the client is disconnected as a slow consumer. */
  slowConsumer(cause: SlowConsumerCause): void {
    const { trace, log, endpoint } = this.#options;
    this.#reason ??= "slow_consumer";
    trace.span?.event("slow_consumer", { cause, elements: this.#sink.sent });
    log.warn({ endpoint: endpoint.path, cause, elements: this.#sink.sent }, "slow consumer disconnected");
    // Its last frame is queued behind what it has not read yet: the call has nothing more for it.
    this.#subscription?.unsubscribe();
  }

  /**
   * No query frame within `waitMs` of the upgrade (websocket-config.query-frame-timeout): a
   * socket that never asks for anything would otherwise hold its place forever.
   */
  queryFrameTimedOut(waitMs: number): void {
    if (this.#queried) return;
    this.#queried = true;
    this.#reason = "error";
    this.#sink.errorFrame(JSON.stringify(traced(queryFrameTimeoutBody(waitMs), this.#options.trace.traceId)));
    this.#sink.complete();
  }

  /**
   * A client frame: the first is the query. Later ones are ignored (as Canton does), except a
   * renewal frame, `{"token": "<JWT>"}`: the subscriber's token from then on once the ledger
   * admitted it (see authorizeSubscriber), a `token_renewal: refused` error frame otherwise, as
   * for a `token` that is no JWT text at all (a client that meant to renew must learn it did not);
   * with `"acknowledge": true`, an accepted one is answered a `tokenRenewed` frame (opt-in: clients
   * written when nothing answered an accepted renewal see nothing new).
   */
  message(text: string): void {
    if (this.#queried) {
      const renewal = renewalFrame(text);
      if (renewal !== undefined && this.#waiting) {
        // Not started yet: the ledger has nothing to move onto the token, and the frame must not
        // vanish either (its client would take its renewal for done).
        this.#renewalRefused(renewalBeforeStartError());
        return;
      }
      if (renewal === undefined || this.#subscription === undefined) return;
      if (renewal instanceof InvalidValueError) {
        this.#renewalRefused(renewal);
        return;
      }
      if (!this.#options.endpoint.renewable) {
        this.#renewalRefused(renewalNotSupportedError(this.#options.endpoint.path));
        return;
      }
      if (renewal.acknowledge) this.#wantsAcknowledgement(renewal.token);
      this.#renew(renewal.token);
      return;
    }
    this.#queried = true;
    const { endpoint, validator } = this.#options;
    let request: unknown;
    try {
      request = this.#options.queries.parse(text, endpoint.requestSchema, validator);
    } catch (error) {
      this.#reason = "error";
      this.#sink.errorFrame(errorFrameText(error, this.#options.trace.traceId));
      this.#sink.complete();
      return;
    }
    const { turn } = this.#options;
    if (turn === undefined) {
      this.#start(request);
      return;
    }
    this.#waiting = true;
    this.#request = request;
    turn.wait(this);
  }

  /** StartWaiter: its turn came. */
  startNow(): void {
    const request = this.#request;
    this.#waiting = false;
    this.#request = undefined;
    this.#start(request);
  }

  /** StartWaiter: the pace could not make its turn in time; the refusal is its last frame. */
  startRefused(error: unknown): void {
    this.#waiting = false;
    this.#request = undefined;
    this.#reason = "error";
    this.#sink.errorFrame(errorFrameText(error, this.#options.trace.traceId));
    this.#sink.complete();
  }

  /**
   * Opens the stream of its query: its own ledger call, or a place in a shared one. Its grant is
   * made now, not with the session: a yes is as old as the stream, and a wait for its turn at the
   * pace is the gateway's, not the ledger's silence (made at the query, a stream that waited past
   * twice the re-check interval was ended at its first re-check before its call could answer).
   */
  #start(request: unknown): void {
    const { endpoint, token, fanout, trace } = this.#options;
    const { recheckIntervalMs, ledgerAwayGraceMs } = this.#options.authorization;
    this.#subscription = subscriberStream({
      endpoint,
      request,
      token,
      // The upgrade token's expiry, read when it was held (no renewal comes before the start).
      grant: subscriberGrant(
        token,
        recheckIntervalMs,
        ledgerAwayGraceMs,
        Date.now,
        this.#tokenHold?.expiresAt,
      ),
      recheckIntervalMs: this.#options.authorization.recheckIntervalMs,
      demand$: this.#sink.demand$,
      ...(fanout ? { fanout } : {}),
      trace,
      position: this.#sink,
      digestOf: this.#options.digestOf,
      upstream: (upstream) => {
        this.#upstream = upstream;
      },
      // The session itself (tokens$, renewed, refused): no object of closures per socket.
      renewals: this,
    })
      // One subscriber, no operators: how it ended is recorded here, and an error is the stream's
      // last frame (a session's pipeline pieces and a frame object per element were a start's
      // and a delivery's garbage). The session is its observer (next, error, complete): no
      // closures per socket. Unsubscribed before either: `closed` records it.
      .subscribe(this);
  }

  /** The stream's observer: a shared element's one Buffer (encoded once for every member), else its text. */
  next(text: string): void {
    this.#sink.element(this.#options.fanout?.bytesOf(text) ?? text);
  }

  /** The stream's observer: it failed; the error is its last frame. */
  error(error: unknown): void {
    this.#reason ??= endReasonOf(error);
    this.#logFailure(error);
    this.#lastFrame(error);
    this.#sink.complete();
  }

  /** The stream's observer: it ended. */
  complete(): void {
    this.#reason ??= "completed";
    this.#sink.complete();
  }

  /** Renewals: the tokens of the client's renewal frames that passed the intake, for the ledger to judge. */
  get tokens$(): Subscribable<string> {
    return this.#renewals;
  }

  /** Renewals: the ledger accepted `token`; the stream's calls move onto it. */
  renewed(token: string): void {
    this.#tokenHold?.renewed(token);
    const { endpoint, trace } = this.#options;
    this.#options.metrics?.wsTokenRenewals.inc({ endpoint: endpoint.path, outcome: "accepted" });
    trace.span?.event("renewal", { outcome: "accepted" });
    if (this.#acknowledge?.delete(token)) this.#sink.notice(JSON.stringify(tokenRenewed(token)));
  }

  /** Renewals: the ledger did not accept a renewal's token; the stream goes on, on the one it has. */
  refused(error: unknown): void {
    this.#renewalRefused(error);
  }

  /**
   * A renewal frame's token: past the gateway's verifier, the user check and the socket's rate
   * (RenewalIntake), to the gate, which asks the ledger; refused anywhere, an error frame.
   */
  #renew(token: string): void {
    this.#renewalIntake ??= new RenewalIntake({
      ...(this.#options.tokenRefusal ? { tokenRefusal: this.#options.tokenRefusal } : {}),
      where: `WebSocket ${this.#options.endpoint.path} token renewal`,
      perMinute: this.#options.authorization.renewalsPerMinute,
      upgradeToken: this.#options.token,
    });
    void this.#renewalIntake.check(token).then((refusal) => {
      if (this.#subscription?.closed !== false) return;
      if (refusal === undefined) this.#renewals.next(token);
      else this.#renewalRefused(refusal);
    });
  }

  #wantsAcknowledgement(token: string): void {
    // Made at the first renewal that asks: a start allocates nothing for renewals it may never see.
    this.#acknowledge ??= new Set();
    const acknowledge = this.#acknowledge;
    acknowledge.delete(token);
    acknowledge.add(token);
    const kept = Math.max(1, this.#options.authorization.renewalsPerMinute);
    for (const oldest of acknowledge) {
      if (acknowledge.size <= kept) break;
      acknowledge.delete(oldest);
    }
  }

  /** A renewal frame refused: the stream goes on, on the token it has. */
  #renewalRefused(error: unknown): void {
    const endpoint = this.#options.endpoint.path;
    this.#options.metrics?.wsTokenRenewals.inc({ endpoint, outcome: "refused" });
    this.#options.trace.span?.event("renewal", { outcome: "refused" });
    this.#sink.errorFrame(renewalRefusedFrameText(error, this.#options.trace.traceId));
  }

  /** A failed stream's last frame: one it resumes from when the ledger went away. */
  #lastFrame(error: unknown): void {
    const { traceId } = this.#options.trace;
    if (isLedgerLost(error)) {
      this.#sink.resumableEnd(errorFrameBody(error, traceId), CLOSE_TRY_AGAIN_LATER, "ledger unavailable");
    } else {
      this.#sink.errorFrame(errorFrameText(error, traceId));
    }
  }

  /**
   * Graceful shutdown: the ledger call ends, and the client gets what was queued for it, then
   * SERVICE_NOT_RUNNING with the offset to resume after, then close 1001, at once.
   */
  goAway(): void {
    this.#subscription?.unsubscribe();
    const body = traced(shuttingDownError().body, this.#options.trace.traceId);
    this.#sink.endNow(body, CLOSE_GOING_AWAY, "gateway shutting down");
  }

  /** uWS `drain`. */
  drained(): void {
    this.#sink.drained();
  }

  /** uWS `pong`. */
  ponged(message: string): void {
    this.#sink.ponged(message);
  }

  /** uWS `close`, whoever closed: cancels the gRPC call at once and records the end. */
  closed(code: number): void {
    const undelivered = this.#sink.sent - this.#sink.delivered;
    if (undelivered > 0) {
      // Handed to uWS but never out of its buffer: lost with the connection, so not counted.
      this.#options.log.info(
        { endpoint: this.#options.endpoint.path, code, delivered: this.#sink.delivered, undelivered },
        "stream socket closed with elements still in the gateway",
      );
    }
    this.#sink.socketClosed();
    this.#tokenHold?.release();
    this.#options.metrics?.untrackSubscriber(this.#options.endpoint.path, this.#sink);
    this.#subscription?.unsubscribe();
    recordStreamClose(this.#options, code, {
      reason: this.#reason ?? "unsubscribed",
      upstream: this.#upstream ?? "none",
      delivered: this.#sink.delivered,
    });
  }

  #logFailure(error: unknown): void {
    // Ledger refusals and client faults are the client's business (they get the frame).
    if (isGatewayFault(error)) {
      this.#options.log.error(
        { err: error, endpoint: this.#options.endpoint.path },
        "stream failed in the gateway",
      );
    }
  }
}

/**
 * How a stream socket ended, in its span and the metrics; for a socket closed before it needed a
 * session (it never sent its query), with nothing delivered and no upstream.
 */
export function recordStreamClose(
  socket: Pick<StreamSessionOptions, "endpoint" | "metrics" | "span" | "openedAt">,
  code: number,
  how: { reason: StreamEndReason; upstream: "own" | "shared" | "none"; delivered: number } = {
    reason: "unsubscribed",
    upstream: "none",
    delivered: 0,
  },
): void {
  socket.span?.end(
    {
      "ledger_gateway.stream.upstream": how.upstream,
      "ledger_gateway.stream.elements": how.delivered,
      "ledger_gateway.stream.end_reason": how.reason,
      "ledger_gateway.stream.close_code": code,
    },
    how.reason === "error" ? "error" : undefined,
  );
  const endpoint = socket.endpoint.path;
  const metrics = socket.metrics;
  if (metrics === undefined) return;
  const seconds = (performance.now() - socket.openedAt) / 1000;
  metrics.wsStreamsOpen.dec({ endpoint });
  metrics.wsCloses.inc({ endpoint, code: closeCodeLabel(code) });
  metrics.recordStreamEnd(endpoint, "ws", how.reason, seconds);
}
