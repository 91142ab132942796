import type { Observable } from "rxjs";
import { type SlowConsumerCause, slowConsumerBody, slowConsumerCloseReason } from "../errors/index.js";
import { DemandGate } from "../streams/demandGate.js";

/** What the sink needs of a uWS WebSocket: narrow, so that the socket layer stays thin. */
export interface FrameSocket {
  /**
   * uWS status: 1 sent, 0 sent but buffered (backpressure), 2 dropped. Elements go as bytes (one
   * Buffer shared by every member of a shared stream, UTF-8 text frames); the sink's own frames
   * (error, slow consumer) as strings.
   */
  send(message: string | Uint8Array): number;
  getBufferedAmount(): number;
  cork(fn: () => void): void;
  end(code: number, reason: string): void;
}

/** uWS: sent or corked with no user-space backlog added; the buffered amount did not grow. */
const SEND_SUCCESS = 1;
const SEND_DROPPED = 2;
export const CLOSE_NORMAL = 1000;
/** Policy violation: the client did not read fast enough (slow consumer). */
export const CLOSE_SLOW_CONSUMER = 1008;

export interface SocketSinkOptions {
  /** Buffered bytes above which demand goes false (the gRPC call pauses). */
  highWaterMark: number;
  /** Buffered bytes at or below which demand comes back (hysteresis). */
  lowWaterMark: number;
  /** Buffered bytes an element may not push the socket past: the client is disconnected instead. */
  hardLimit: number;
  /** How long the socket may drain nothing while paused or finishing; 0 disables. */
  writeDeadlineMs: number;
  /**
   * The endpoint's resume-offset hook, applied to the last delivered element (decoded from its
   * bytes: only on a disconnect, never per element).
   */
  offsetOf?: (element: string) => string | number | undefined;
  /** Element frames that went out in one batch, and their bytes. */
  onSent?: (elements: number, bytes: number) => void;
  /** Demand went false: a backpressure pause. */
  onPause?: () => void;
  onSlowConsumer?: (cause: SlowConsumerCause) => void;
}

const COMPLETE = Symbol("complete");
/** An element's bytes, the final error frame's text, or the end: no wrapper object per element. */
type Item = Uint8Array | string | typeof COMPLETE;

/**
 * The WebSocket end of the stream pipeline. Frames are batched per event-loop turn and sent in
 * one corked write; `send()`'s status and the buffered amount are read after every frame:
 * - above the high-water mark `demand$` goes false, which pauses the gRPC call, and true again
 *   on drain at or below the low-water mark;
 * - an element that would take the buffer past the hard limit, a frame uWS refuses, or a paused
 *   socket that drains nothing for the write deadline ends the stream with a slow-consumer
 *   error frame and close 1008 naming the offset to resume after. Nothing is ever dropped
 *   silently (nats.js: disconnect the slow consumer, never drop);
 * - completion waits until the client has read everything, then closes 1000.
 */
export class SocketSink {
  readonly #socket: FrameSocket;
  readonly #options: SocketSinkOptions;
  readonly #gate: DemandGate;
  #queue: Item[] = [];
  #flushScheduled = false;
  /** The socket is gone or being ended by us: nothing may touch it any more. */
  #closed = false;
  /** Completion seen; waiting for the buffer to empty before close 1000. */
  #finishing = false;
  #deadline: NodeJS.Timeout | undefined;
  #lastElement: Uint8Array | undefined;
  /** The socket's buffered amount as last read: once per batch, and after a send that added to it. */
  #level = 0;
  #delivered = 0;
  #bytes = 0;

  constructor(socket: FrameSocket, options: SocketSinkOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#gate = new DemandGate({ highWater: options.highWaterMark, lowWater: options.lowWaterMark });
  }

  /** The sink's readiness, for the endpoint's `open(..., demand$)`. */
  get demand$(): Observable<boolean> {
    return this.#gate.ready$;
  }

  /** Element frames the socket accepted. */
  get delivered(): number {
    return this.#delivered;
  }

  /**
   * One element frame: its UTF-8 bytes, sent as they are (a shared stream's members all get the
   * same Buffer: encoded once, never copied per socket). The sink holds on to it until it went out.
   */
  element(bytes: Uint8Array): void {
    this.#enqueue(bytes);
  }

  /** The final JsCantonError frame of a failed stream; completion follows. */
  errorFrame(text: string): void {
    this.#enqueue(text);
  }

  complete(): void {
    this.#enqueue(COMPLETE);
  }

  /** uWS `drain`: some of the buffer went out. */
  drained(): void {
    if (this.#closed) return;
    const level = this.#socket.getBufferedAmount();
    this.#setLevel(level);
    if (this.#finishing && level === 0) {
      this.#end(CLOSE_NORMAL, "");
      return;
    }
    // Progress: the client reads, however slowly; the deadline measures a client that stopped.
    if (this.#deadline !== undefined) this.#armDeadline();
  }

  /** uWS `close`: the socket is gone, whoever closed it. */
  socketClosed(): void {
    this.#closed = true;
    this.#queue = [];
    this.#clearDeadline();
    this.#gate.close();
  }

  #enqueue(item: Item): void {
    if (this.#closed || this.#finishing) return;
    this.#queue.push(item);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // One corked write per event-loop turn: grpc-js delivers a read's worth of messages in one
    // turn, and one syscall for all of them is what keeps the socket path near gRPC speed.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (this.#closed) return;
    const items = this.#queue;
    this.#queue = [];
    let ending: { code: number; reason: string } | undefined;
    const before = { delivered: this.#delivered, bytes: this.#bytes };
    this.#level = this.#socket.getBufferedAmount();
    this.#socket.cork(() => {
      for (const item of items) {
        ending = this.#sendItem(item);
        if (ending !== undefined) return;
      }
    });
    // Metrics once per batch, not per element: label lookups cost more than a send.
    if (this.#delivered > before.delivered) {
      this.#options.onSent?.(this.#delivered - before.delivered, this.#bytes - before.bytes);
    }
    // end() runs the close handler synchronously: never from inside the cork.
    if (ending !== undefined) this.#end(ending.code, ending.reason);
  }

  /** Sends one item; returns how to end the socket when this item ends the stream. */
  #sendItem(item: Item): { code: number; reason: string } | undefined {
    if (item === COMPLETE) {
      this.#finishing = true;
      if (this.#socket.getBufferedAmount() === 0) return { code: CLOSE_NORMAL, reason: "" };
      this.#armDeadline();
      return undefined;
    }
    if (typeof item === "string") {
      // A refused error frame followed by close 1000 would read as a clean end: the client is
      // told to resume instead, and meets the error again if it persists.
      if (this.#socket.send(item) === SEND_DROPPED) return this.#slowConsumer("dropped");
      return undefined;
    }
    const bytes = item.byteLength;
    const buffered = this.#level;
    // An element alone on an empty buffer always goes: the limit bounds the backlog, not the
    // size of one element.
    if (buffered > 0 && buffered + bytes > this.#options.hardLimit) return this.#slowConsumer("hard_limit");
    const status = this.#socket.send(item);
    if (status === SEND_DROPPED) return this.#slowConsumer("dropped");
    this.#delivered += 1;
    this.#bytes += bytes;
    this.#lastElement = item;
    // Per element, the buffered amount is read only when the send added to it (two native calls
    // fewer per delivery while the client keeps up).
    if (status !== SEND_SUCCESS) this.#setLevel(this.#socket.getBufferedAmount());
    return undefined;
  }

  #setLevel(level: number): void {
    this.#level = level;
    const wasReady = this.#gate.ready;
    const ready = this.#gate.update(level);
    if (wasReady && !ready) {
      this.#options.onPause?.();
      this.#armDeadline();
    } else if (ready && !this.#finishing) {
      this.#clearDeadline();
    }
  }

  #slowConsumer(cause: SlowConsumerCause): { code: number; reason: string } {
    this.#options.onSlowConsumer?.(cause);
    const offset = this.#resumeOffset();
    // The socket keeps headroom above the hard limit (see ws-streams.ts) for this last frame.
    this.#socket.send(JSON.stringify(slowConsumerBody(cause, this.#delivered, offset)));
    return { code: CLOSE_SLOW_CONSUMER, reason: slowConsumerCloseReason(cause, offset) };
  }

  #resumeOffset(): string | number | undefined {
    if (this.#lastElement === undefined || this.#options.offsetOf === undefined) return undefined;
    try {
      const last = this.#lastElement;
      return this.#options.offsetOf(
        Buffer.from(last.buffer, last.byteOffset, last.byteLength).toString("utf8"),
      );
    } catch {
      return undefined;
    }
  }

  #armDeadline(): void {
    this.#clearDeadline();
    if (this.#options.writeDeadlineMs <= 0) return;
    this.#deadline = setTimeout(() => {
      this.#deadline = undefined;
      if (this.#closed) return;
      let ending: { code: number; reason: string } | undefined;
      this.#socket.cork(() => {
        ending = this.#slowConsumer("write_deadline");
      });
      if (ending !== undefined) this.#end(ending.code, ending.reason);
    }, this.#options.writeDeadlineMs);
    this.#deadline.unref();
  }

  #clearDeadline(): void {
    if (this.#deadline === undefined) return;
    clearTimeout(this.#deadline);
    this.#deadline = undefined;
  }

  #end(code: number, reason: string): void {
    if (this.#closed) return;
    this.socketClosed();
    this.#socket.end(code, reason);
  }
}
