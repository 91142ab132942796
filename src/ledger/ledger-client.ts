import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { Observable, type Subscribable, type Subscription } from "rxjs";
import { CONFIG_KEYS } from "../config/config-keys.js";
import { parseDuration } from "../config/load-config.js";
import { ledgerStreamsExhaustedError } from "../errors/index.js";
import { ledgerApiProtos } from "../proto/ledger-api-protos.js";
import type { CallObserver, WatchedCall } from "./call-observer.js";
import { callError } from "./grpc-call-error.js";
import { frameMessage } from "./grpc-frame.js";
import type { RefusedCallReason } from "./http2-connection.js";
import { LedgerChannel } from "./ledger-channel.js";
import { checkRequestBounds } from "./request-bounds.js";
import { requestEncoder } from "./request-encoder.js";
import { observeCall } from "./server-stream.js";
import { ServerStreamCall } from "./server-stream-call.js";
import type { StreamPurpose, StreamSlots } from "./stream-slots.js";
import type { TraceContext } from "./trace-context.js";

/** Service names relative to `com.daml.ledger.api.v2`, e.g. `StateService`, `admin.PartyManagementService`. */
export type LedgerService = string;

export interface LedgerClientOptions {
  /** host:port */
  target: string;
  tls?: { caCert?: string; clientCert?: string; clientKey?: string };
  /** Deadline of unary calls. */
  deadlineMs: number;
  /** Watches every call (metrics, spans); not the readiness probes, which are no client's calls. */
  observer?: CallObserver;
  /**
   * Interval of HTTP/2 pings while calls are open, and how long a ping may wait for its answer
   * before the connection is dropped and made anew (`ledger.keepalive-interval` and `-timeout`;
   * unless given, their defaults). Canton's Ledger API server permits a ping every 10 s at most
   * (keep-alive permit time) and answers pings that come sooner, three times, by closing the
   * connection (GOAWAY `too_many_pings`); the interval then doubles for later connections.
   * Dropping a connection ends every stream on it, so a ledger busy for a few seconds (a large
   * DAR, a loaded machine) must not look dead: seconds to answer.
   */
  keepalive?: { timeMs: number; timeoutMs: number };
  /** Told the new ping interval when the ledger refused ours as too frequent (a log line). */
  onKeepaliveThrottled?: (intervalMs: number) => void;
  /** Largest header block of a call (`ledger.max-metadata-bytes`; unless given, its default). */
  maxMetadataBytes?: number;
  /** Told of every call refused before it was sent, for metrics. */
  onCallRefused?: (reason: RefusedCallReason) => void;
  /**
   * Told each time a connection to the ledger is established: at the first call, and after every
   * reconnect (the participant may have been restarted, or upgraded, meanwhile).
   */
  onConnected?: () => void;
  /**
   * The participant's stream budget (limits.ledger-streams): every server stream holds a slot
   * from before its call opens until it ends. Absent: no budget.
   */
  streamSlots?: StreamSlots;
}

export interface UnaryOptions {
  /**
   * Resolve with the answer's raw message bytes (a Buffer) instead of the decoded object: for
   * callers that transcode the wire bytes themselves.
   */
  rawResponse?: boolean;
  /** The trace of the request the call is made for (traceparent, tracestate). */
  trace?: TraceContext;
}

export interface ServerStreamOptions {
  /**
   * Hand over each response message as its raw bytes (a Buffer) instead of the decoded
   * object: for callers that transcode the wire bytes themselves (codec/wire-transcoder).
   */
  rawResponses?: boolean;
  /** The trace of the request the call is made for (traceparent, tracestate). */
  trace?: TraceContext;
  /** The sink's readiness: `false` pauses the call, `true` resumes it (see `serverStream`). */
  demand$?: Subscribable<boolean>;
  /**
   * Told when the ledger closes the connection of a call gracefully (GOAWAY), with the UNAVAILABLE
   * the call would end with: the call goes on for the ledger's grace period, and the consumer may
   * move it elsewhere first.
   */
  onDraining?: (closing: grpc.ServiceError) => void;
  /**
   * What the call is for, under a stream budget (default `subscription`): an `authorization`
   * call (a probe asking whether a subscriber may read) may take the share of the budget kept
   * from subscriptions, and waits in a queue of its own served first.
   */
  purpose?: StreamPurpose;
  /**
   * Told each time the call is sent: at once, or, under a stream budget, once it holds a slot
   * (until then it waits in the budget's queue and the ledger knows nothing of it).
   */
  onOpen?: () => void;
}

/**
 * HTTP/2 flow-control window per stream (and for the connection). The 64 KiB default makes a
 * busy gateway stall the ledger between window updates; 1 MiB keeps streams flowing while a
 * paused call still holds the ledger back within 1 MiB.
 */
export const FLOW_CONTROL_WINDOW_BYTES = 1024 * 1024;
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The configuration's defaults, for a client made without the settings (tests, tools). */
const KEEPALIVE = {
  timeMs: parseDuration(CONFIG_KEYS["ledger.keepalive-interval"].default) as number,
  timeoutMs: parseDuration(CONFIG_KEYS["ledger.keepalive-timeout"].default) as number,
};
const MAX_METADATA_BYTES = CONFIG_KEYS["ledger.max-metadata-bytes"].default;
/**
 * Reconnect attempts while the ledger is away: grpc-js's default waits 1 s, then 1.6 times
 * longer each time up to 2 minutes between attempts. Bounded at 1 s, no attempt is ever more
 * than a second away when the ledger returns; an attempt on a port nobody listens on is one
 * refused TCP handshake, cheap for both sides.
 */
const RECONNECT_BACKOFF = { initialMs: 250, maxMs: 1_000 };
const HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check";
/** grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING */
const HEALTH_SERVING = 1;

/**
 * The gateway's client of the participant's Ledger API, shared by every service: unary calls,
 * server streams and the readiness probe over the lean HTTP/2 channel of ledger-channel.ts. The
 * caller's token travels as `authorization` of the one call it came with and is never kept.
 */
export class LedgerClient {
  private readonly channel: LedgerChannel;

  constructor(private readonly options: LedgerClientOptions) {
    this.channel = new LedgerChannel({
      target: options.target,
      ...(options.tls ? { tls: tlsFiles(options.tls) } : {}),
      keepalive: options.keepalive ?? KEEPALIVE,
      windowBytes: FLOW_CONTROL_WINDOW_BYTES,
      reconnectBackoff: RECONNECT_BACKOFF,
      maxMetadataBytes: options.maxMetadataBytes ?? MAX_METADATA_BYTES,
      ...(options.onCallRefused ? { onRefused: options.onCallRefused } : {}),
      ...(options.onKeepaliveThrottled ? { onKeepaliveThrottled: options.onKeepaliveThrottled } : {}),
      ...(options.onConnected ? { onEstablished: options.onConnected } : {}),
    });
  }

  unary(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
    options: UnaryOptions & { rawResponse: true },
  ): Promise<Buffer>;
  unary<Res = Record<string, unknown>>(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
    options?: UnaryOptions,
  ): Promise<Res>;
  unary<Res>(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
    options: UnaryOptions = {},
  ): Promise<Res | Buffer> {
    const started = process.hrtime.bigint();
    let prepared: PreparedCall;
    try {
      prepared = this.prepare(service, method, request, token);
    } catch (error) {
      return Promise.reject(error);
    }
    const { definition, frame } = prepared;
    const watched = this.watch(service, method, false, options.trace, frame);
    if (!Buffer.isBuffer(frame)) {
      this.report(watched, frame.code, started, 0);
      return Promise.reject(frame);
    }
    const trace = watched ? watched.trace : options.trace;
    const call = {
      path: definition.path,
      frame,
      authorization: prepared.authorization,
      deadline: Date.now() + this.options.deadlineMs,
      maxReceiveBytes: MAX_MESSAGE_BYTES,
      ...(trace ? { trace } : {}),
    };
    return new Promise<Res | Buffer>((resolve, reject) => {
      this.channel.unary(call, (error, message) => {
        if (error || message === undefined) {
          this.report(watched, error?.code ?? grpc.status.INTERNAL, started, 0);
          return reject(error);
        }
        let response: Res | Buffer;
        try {
          response = options.rawResponse ? message : (definition.responseDeserialize(message) as Res);
        } catch (cause) {
          // As grpc-js: an answer that does not decode fails the call.
          const failure = callError(
            grpc.status.INTERNAL,
            `Response message parsing error: ${(cause as Error).message}`,
          );
          this.report(watched, failure.code, started, message.length);
          return reject(failure);
        }
        this.report(watched, grpc.status.OK, started, message.length);
        resolve(response);
      });
    });
  }

  /**
   * A gRPC server-streaming call as a cold, pull-based Observable: the source of every stream
   * endpoint. No deadline: a stream lasts as long as its consumer wants it.
   *
   * - Each subscription opens its own call, with this method, request and token.
   * - `demand$` is the sink's readiness. RxJS is push-only, so flow control travels on this second
   *   channel: while its latest value is `false` the call is paused, `true` resumes it; before its
   *   first value the call flows. A paused call stops reading its HTTP/2 stream, the stream's
   *   window fills and the server's writes block, so a slow consumer holds the ledger back instead
   *   of piling messages up in the gateway. Messages already received when the pause starts stay
   *   buffered in the call and are delivered, in order, after `true`. A completed `demand$` leaves
   *   the last state in force; an erroring one cancels the call and errors the stream.
   * - Unsubscribing cancels the call; the CANCELLED status that follows is ours and not surfaced.
   * - A non-OK status errors the stream with the grpc-js-shaped `ServiceError` as is (code, details,
   *   metadata: the error mapping decodes the rich status from it), after every message that
   *   arrived before it. OK completes the stream. A request out of bounds errors it on subscribe.
   * - With a stream budget (`streamSlots`), the call opens once the subscription holds a slot
   *   of its `purpose` (it may wait in the budget's queue); the slot goes back when the call
   *   ends, however it ends, and a waiter that unsubscribes leaves the queue. No slot (queue
   *   full, waited too long): the stream errors with MAXIMUM_NUMBER_OF_STREAMS (429), and no call
   *   is made; a token the ledger refused before the budget charged its user: with that refusal.
   */
  serverStream<Res = Record<string, unknown>>(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
    options: ServerStreamOptions = {},
  ): Observable<Res> {
    const calls = observeCall(() => {
      options.onOpen?.();
      return this.openStream<Res>(service, method, request, token, options);
    }, options.demand$);
    const slots = this.options.streamSlots;
    if (slots === undefined) return calls;
    return new Observable<Res>((subscriber) => {
      let call: Subscription | undefined;
      const release = slots.claim(
        () => {
          call = calls.subscribe(subscriber);
        },
        (refusal) =>
          subscriber.error(
            refusal.reason === "token-refused" ? refusal.error : ledgerStreamsExhaustedError(refusal),
          ),
        options.purpose ?? "subscription",
        token,
      );
      // Runs once the call ended (its end reached the subscriber) or the subscriber left.
      return () => {
        call?.unsubscribe();
        release();
      };
    });
  }

  /**
   * Whether the ledger answers within `timeoutMs` and says it serves (readiness probe): a live
   * round trip, not the channel's connection state, which stays READY while the ledger is frozen
   * or the session is dead. It asks the standard gRPC health service, which Canton's Ledger API
   * serves without a token (SERVING while its own health checks pass); a ledger without it
   * answers UNIMPLEMENTED, an answer all the same. No token, so no auth failure in the ledger's
   * log per probe. Not told to the observer: probes are not the clients' calls.
   */
  isReady(timeoutMs: number): Promise<boolean> {
    const probe = {
      path: HEALTH_CHECK_PATH,
      // HealthCheckRequest{service: ""}: the server as a whole; proto3 writes it as no bytes.
      frame: EMPTY_MESSAGE_FRAME,
      authorization: undefined,
      deadline: Date.now() + timeoutMs,
      maxReceiveBytes: MAX_MESSAGE_BYTES,
    };
    return new Promise((resolve) => {
      this.channel.unary(probe, (error, message) => {
        if (error || message === undefined) resolve(error?.code === grpc.status.UNIMPLEMENTED);
        else resolve(servingStatus(message) === HEALTH_SERVING);
      });
    });
  }

  close(): void {
    this.channel.close();
  }

  /** One call of `serverStream`, sent; throws when the request is out of bounds. */
  private openStream<Res>(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
    options: ServerStreamOptions,
  ): ServerStreamCall<Res> {
    const { definition, frame, authorization } = this.prepare(service, method, request, token);
    const started = process.hrtime.bigint();
    const watched = this.watch(service, method, true, options.trace, frame);
    const trace = watched ? watched.trace : options.trace;
    const call = new ServerStreamCall<Res>(
      (options.rawResponses ? rawBytes : definition.responseDeserialize) as (bytes: Buffer) => Res,
      (code, receivedBytes) => this.report(watched, code, started, receivedBytes),
      MAX_MESSAGE_BYTES,
    );
    if (options.onDraining !== undefined) call.on("draining", options.onDraining);
    if (!Buffer.isBuffer(frame)) {
      call.fail(frame);
      return call;
    }
    const streamRequest = {
      path: definition.path,
      frame,
      authorization,
      maxReceiveBytes: MAX_MESSAGE_BYTES,
      ...(trace ? { trace } : {}),
    };
    this.channel.stream(streamRequest, call);
    return call;
  }

  /**
   * What unary calls and streams both send: the request checked (`checkRequestBounds` throws) and
   * framed (or the error of one over the size limit), and the token as `authorization`.
   */
  private prepare(
    service: LedgerService,
    method: string,
    request: object,
    token: string | undefined,
  ): PreparedCall {
    const { definition, requestType } = ledgerApiProtos().method(service, method);
    checkRequestBounds(requestType, request);
    const encode = requestEncoder(requestType, definition.requestSerialize);
    return {
      definition,
      frame: frameMessage(encode(request), MAX_MESSAGE_BYTES),
      authorization: token === undefined ? undefined : `Bearer ${token}`,
    };
  }

  private watch(
    service: string,
    method: string,
    streaming: boolean,
    trace: TraceContext | undefined,
    frame: Buffer | grpc.ServiceError,
  ): WatchedCall | undefined {
    const sentBytes = Buffer.isBuffer(frame) ? frame.length : 0;
    return this.options.observer?.({ service, method, streaming, trace, sentBytes });
  }

  private report(
    watched: WatchedCall | undefined,
    code: grpc.status,
    started: bigint,
    receivedBytes: number,
  ): void {
    if (watched === undefined) return;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    watched.end({ code: grpc.status[code] ?? String(code), seconds, receivedBytes });
  }
}

interface PreparedCall {
  definition: grpc.MethodDefinition<object, object>;
  frame: Buffer | grpc.ServiceError;
  authorization: string | undefined;
}

const EMPTY_MESSAGE_FRAME = Buffer.alloc(5);

/** HealthCheckResponse's `status` (field 1, varint; absent = UNKNOWN, 0). */
function servingStatus(bytes: Buffer): number {
  return bytes.length >= 2 && bytes[0] === 0x08 ? (bytes[1] as number) & 0x7f : 0;
}

/** Each message's bytes as they came, for callers that transcode them themselves. */
const rawBytes = (bytes: Buffer): Buffer => bytes;

/** The PEM files of `ledger.tls`, read once at start-up (absent: the system's CAs, no client cert). */
function tlsFiles(tls: NonNullable<LedgerClientOptions["tls"]>): {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
} {
  const read = (path?: string) => (path === undefined ? undefined : readFileSync(path));
  return { ca: read(tls.caCert), cert: read(tls.clientCert), key: read(tls.clientKey) };
}
