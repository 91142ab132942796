import { EventEmitter } from "node:events";
import http2, { type ClientHttp2Stream } from "node:http2";
import { status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { errorOfStatus, errorWithoutStatus, wasRefused, watchStatus } from "./call-end.js";
import { callError } from "./grpc-call-error.js";
import { GrpcMessageReader } from "./grpc-message-reader.js";
import type { Http2Connection } from "./http2-connection.js";
import { type TraceContext, traceHeaders } from "./trace-context.js";

export interface StreamRequest {
  /** `/package.Service/Method` */
  path: string;
  /** The request message, framed (grpc-frame.ts). */
  frame: Buffer;
  /** `Bearer <token>`, for this call only. */
  authorization: string | undefined;
  maxReceiveBytes: number;
  /** The request's trace, for the ledger's logs and errors. */
  trace?: TraceContext;
}

const { NGHTTP2_CANCEL } = http2.constants;

/**
 * One server-streaming call as one HTTP/2 stream of the lean channel, made an Observable by
 * server-stream.ts: 'data' with each message (decoded by `decode`) in order, then 'end' on OK or
 * 'error' with a grpc-js-shaped ServiceError (what the error mapping reads).
 * No deadline: a stream lasts as long as its consumer wants it.
 *
 * Messages are cut out of the DATA chunks as they come (grpc-message-reader.ts) and handed over
 * at once: no per-message copy, promise or object-mode stream, which is what grpc-js's receive
 * path costs per message. `pause()` stops reading the HTTP/2 stream: node then stops giving the
 * ledger flow-control credit for it, so the stream's window (the session's `windowBytes`) bounds
 * what the ledger sends meanwhile. Messages of a chunk read before the pause wait here and come
 * first after `resume()`, and an OK status waits for them and for `resume()`; an error waits for
 * them only, as grpc-js's does. `cancel()` resets the stream (CANCEL) and emits nothing more.
 * 'draining' tells that the ledger is closing the call's connection gracefully (GOAWAY), with the
 * UNAVAILABLE the call would end with: it goes on for the ledger's grace period, and the consumer
 * may move it elsewhere first.
 */
export class ServerStreamCall<Res> extends EventEmitter {
  private stream: ClientHttp2Stream | undefined;
  private connection: Http2Connection | undefined;
  private readonly reader: GrpcMessageReader;
  /** Messages received while paused, from `queueHead` on. */
  private queue: Buffer[] = [];
  private queueHead = 0;
  private paused = false;
  /** The HTTP/2 call is over (status read, failed or cancelled); told to `onEnd` once. */
  private callEnded = false;
  /** How the call ended, held until the messages before it are delivered; null: OK. */
  private outcome: ServiceError | null | undefined;
  /** Nothing more is emitted: the outcome went out, or the consumer cancelled. */
  private done = false;
  /** Stops listening to the connection's GOAWAY. */
  private undrain: (() => void) | undefined;
  /** Response messages' bytes, told to `onEnd`. */
  private receivedBytes = 0;

  constructor(
    private readonly decode: (bytes: Buffer) => Res,
    private readonly onEnd: (code: GrpcStatus, receivedBytes: number) => void,
    maxReceiveBytes: number,
  ) {
    super();
    this.reader = new GrpcMessageReader(maxReceiveBytes);
  }

  override on(event: "data", listener: (message: Res) => void): this;
  override on(event: "error", listener: (error: ServiceError) => void): this;
  override on(event: "end", listener: () => void): this;
  override on(event: "draining", listener: (closing: ServiceError) => void): this;
  override on(event: string, listener: Parameters<EventEmitter["on"]>[1]): this {
    return super.on(event, listener);
  }

  /** Messages received and not delivered yet (paused). */
  get readableLength(): number {
    return this.queue.length - this.queueHead;
  }

  /**
   * Sends the call on `connection`. `retry`, if given, sends it once more elsewhere when the
   * ledger never saw it (the stream was refused or never left the session).
   */
  open(connection: Http2Connection, request: StreamRequest, retry?: () => void): void {
    // Cancelled while it waited for the connection.
    if (this.callEnded) return;
    let stream: ClientHttp2Stream;
    try {
      const opened = connection.openCall(request.path, request.authorization, traceHeaders(request.trace));
      // Refused before sending (headers over the ledger's limit): no other session would take it.
      if (opened instanceof Error) {
        this.fail(opened);
        return;
      }
      stream = opened;
    } catch (error) {
      if (retry) retry();
      else this.fail(callError(GrpcStatus.UNAVAILABLE, (error as Error).message));
      return;
    }
    this.stream = stream;
    this.connection = connection;
    connection.callStarted();
    this.undrain = connection.onDrain(() =>
      this.emit(
        "draining",
        callError(GrpcStatus.UNAVAILABLE, "The ledger is closing the connection (GOAWAY)"),
      ),
    );
    if (this.paused) stream.pause();
    const status = watchStatus(stream);
    let streamError: (Error & { code?: string }) | undefined;
    stream.on("data", (chunk: Buffer) => {
      if (this.callEnded) return;
      const error = this.reader.read(chunk, this.receive);
      if (error !== undefined) this.endCall(error);
    });
    stream.on("error", (error) => {
      streamError = error;
    });
    stream.on("close", () => {
      if (this.callEnded || this.stream !== stream) return;
      if (status.fields !== undefined) {
        const truncated = this.reader.midMessage
          ? callError(GrpcStatus.INTERNAL, "Received a truncated message")
          : null;
        return this.endCall(errorOfStatus(status.fields, status.httpStatus) ?? truncated);
      }
      // Refused before any answer: the ledger never saw it. After one, messages may have come.
      if (retry && status.httpStatus === 0 && wasRefused(stream)) {
        connection.callEnded();
        this.undrain?.();
        this.stream = undefined;
        this.connection = undefined;
        return retry();
      }
      this.endCall(errorWithoutStatus(connection, stream, status.httpStatus, streamError));
    });
    stream.end(request.frame);
  }

  /** Ends a call that could not be sent; asynchronous, as the caller attaches its listeners after. */
  fail(error: ServiceError): void {
    process.nextTick(() => this.endCall(error));
  }

  pause(): void {
    this.paused = true;
    this.stream?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.deliverQueued();
    if (!this.paused) this.stream?.resume();
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.endCall(callError(GrpcStatus.CANCELLED, "Cancelled on client"));
  }

  private readonly receive = (message: Buffer): void => {
    // Ended while this chunk was being read: by a message that did not decode, or a cancel.
    if (this.done) return;
    this.receivedBytes += message.length;
    if (this.paused || this.queueHead < this.queue.length) this.queue.push(message);
    else this.deliver(message);
  };

  private deliver(bytes: Buffer): void {
    let message: Res;
    try {
      message = this.decode(bytes);
    } catch (cause) {
      // As grpc-js: a message that does not decode ends the call.
      this.queue = [];
      this.queueHead = 0;
      this.endCall(
        callError(GrpcStatus.INTERNAL, `Response message parsing error: ${(cause as Error).message}`),
      );
      return;
    }
    this.emit("data", message);
  }

  private deliverQueued(): void {
    while (!this.paused && !this.done && this.queueHead < this.queue.length) {
      this.deliver(this.queue[this.queueHead++] as Buffer);
    }
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    }
    this.emitOutcome();
  }

  /** The HTTP/2 call is over: the stream reset if still open, the status told, the outcome held. */
  private endCall(outcome: ServiceError | null): void {
    if (this.callEnded) return;
    this.callEnded = true;
    this.undrain?.();
    if (this.stream !== undefined && this.connection !== undefined) {
      this.connection.callEnded();
      if (!this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
    }
    this.onEnd(outcome?.code ?? GrpcStatus.OK, this.receivedBytes);
    this.outcome = outcome;
    this.emitOutcome();
  }

  private emitOutcome(): void {
    if (this.done || this.outcome === undefined || this.readableLength > 0) return;
    if (this.outcome === null && this.paused) return;
    this.done = true;
    if (this.outcome === null) this.emit("end");
    else this.emit("error", this.outcome);
  }
}
