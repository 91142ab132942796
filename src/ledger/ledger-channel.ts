import { status as GrpcStatus } from "@grpc/grpc-js";
import { callError } from "./grpc-call-error.js";
import { Http2Connection, type Http2ConnectionOptions } from "./http2-connection.js";
import type { ServerStreamCall, StreamRequest } from "./server-stream-call.js";
import { startUnaryCall, type UnaryDone, type UnaryRequest } from "./unary-call.js";

export interface LedgerChannelOptions extends Http2ConnectionOptions {
  /** Wait after a failed connection attempt: doubled per failure from `initialMs` up to `maxMs`. */
  reconnectBackoff: { initialMs: number; maxMs: number };
  /** Told the new ping interval each time the ledger refused ours as too frequent. */
  onKeepaliveThrottled?: (intervalMs: number) => void;
}

/** The longest interval a timer takes (2^31 - 1 ms), grpc-js's bound on a doubled keepalive time. */
const MAX_KEEPALIVE_MS = 2 ** 31 - 1;

/**
 * gRPC calls to the ledger, unary and server-streaming, over one HTTP/2 session of our own
 * (node:http2), shared by all of them: grpc-js's per-call layers (interceptors, resolving,
 * retrying and load-balancing calls, metadata objects) cost more CPU than the call itself for the
 * gateway's small, frequent calls (GetLedgerEnd against the sandbox: ~105-125 us of client CPU
 * through grpc-js, ~43 us on node:http2 directly, where node's own request() is most of what
 * remains), and its receive path more than the gateway's own work per streamed message.
 *
 * One session for every kind of call, as grpc-js has one per channel: one connection and one
 * keepalive for the ledger to permit. Streams past the ledger's SETTINGS_MAX_CONCURRENT_STREAMS
 * wait in nghttp2 for a slot, as they do under grpc-js.
 *
 * The session is made on the first call and calls made while it connects wait for the ledger's
 * SETTINGS (its header limit). When it goes (GOAWAY, closed, failed, dropped by the keepalive)
 * the next call makes a new one. A ledger that closed it for our pings (GOAWAY ENHANCE_YOUR_CALM
 * `too_many_pings`) gets them at twice the interval on the next one, as grpc-js does. After an
 * attempt that never reached an HTTP/2 server, calls fail at once with UNAVAILABLE (as grpc-js
 * without wait-for-ready) until the backoff has passed: one attempt at a time, no storm of
 * connects while the ledger is away, and no attempt more than `maxMs` away when it is back. A
 * call the ledger never saw (refused stream) goes once more on a new session, as grpc-js's
 * transparent retry does.
 */
export class LedgerChannel {
  private connection: Http2Connection | undefined;
  private backoffMs = 0;
  private retryAt = 0;
  private lastFailure = "";
  private closed = false;
  /** The ping interval of new sessions: the configured one, doubled on each `too_many_pings`. */
  private keepaliveTimeMs: number;

  constructor(private readonly options: LedgerChannelOptions) {
    this.keepaliveTimeMs = options.keepalive.timeMs;
  }

  unary(request: UnaryRequest, done: UnaryDone): void {
    this.attempt(request, (error, message, refused) => {
      if (refused && !this.closed) this.attempt(request, done);
      else done(error, message, refused);
    });
  }

  /** Sends a server-streaming call; it reports its messages and its end itself. */
  stream<Res>(request: StreamRequest, call: ServerStreamCall<Res>, mayRetry = true): void {
    const connection = this.usableConnection();
    if (connection === undefined) call.fail(callError(GrpcStatus.UNAVAILABLE, this.unavailableReason()));
    else {
      const retry = mayRetry ? () => this.stream(request, call, false) : undefined;
      connection.whenReady(() => call.open(connection, request, retry));
    }
  }

  /** Ends the session: calls in flight fail with UNAVAILABLE, later ones at once. */
  close(): void {
    this.closed = true;
    this.connection?.drop("The gateway closed the connection");
  }

  private attempt(request: UnaryRequest, done: UnaryDone): void {
    const connection = this.usableConnection();
    if (connection === undefined) {
      done(callError(GrpcStatus.UNAVAILABLE, this.unavailableReason()), undefined, false);
    } else {
      connection.whenReady(() => startUnaryCall(connection, request, done), request.deadline);
    }
  }

  private unavailableReason(): string {
    return this.closed ? "Channel closed" : `No connection to the ledger: ${this.lastFailure}`;
  }

  private usableConnection(): Http2Connection | undefined {
    if (this.connection?.usable) return this.connection;
    if (this.closed || Date.now() < this.retryAt) return undefined;
    const keepalive = { ...this.options.keepalive, timeMs: this.keepaliveTimeMs };
    this.connection = new Http2Connection({ ...this.options, keepalive }, (gone) => this.onGone(gone));
    return this.connection;
  }

  private onGone(connection: Http2Connection): void {
    if (this.connection === connection) this.connection = undefined;
    if (connection.tooManyPings) {
      this.keepaliveTimeMs = Math.min(this.keepaliveTimeMs * 2, MAX_KEEPALIVE_MS);
      this.options.onKeepaliveThrottled?.(this.keepaliveTimeMs);
    }
    if (connection.established) {
      this.backoffMs = 0;
      return;
    }
    const { initialMs, maxMs } = this.options.reconnectBackoff;
    this.backoffMs = Math.min(maxMs, this.backoffMs === 0 ? initialMs : this.backoffMs * 2);
    this.retryAt = Date.now() + this.backoffMs;
    this.lastFailure = connection.endReason ?? "connection failed";
  }
}
