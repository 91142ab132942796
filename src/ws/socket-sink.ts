import type { Subscribable } from "rxjs";
import {
  type JsCantonError,
  resumeCloseReason,
  type SlowConsumerCause,
  slowConsumerBody,
  slowConsumerCloseReason,
  traced,
  withResumeOffset,
} from "../errors/index.js";
import type { SharedPositionReader } from "../fanout/subscription.js";
import type { SubscriberLag } from "../metrics/subscriber-lag.js";
import { DemandGate } from "../streams/demand-gate.js";

/** What the sink needs of a uWS WebSocket: narrow, so that the socket layer stays thin. */
export interface FrameSocket {
  /**
   * uWS status: 1 sent, 0 sent but buffered (backpressure), 2 dropped. Text frames: strings
   * (uWS encodes them to UTF-8 natively) or UTF-8 bytes (one Buffer shared by every member of a
   * shared stream).
   */
  send(message: string | Uint8Array, isBinary?: boolean, compress?: boolean): number;
  getBufferedAmount(): number;
  /** A ping frame; the client answers it with a pong carrying the same payload once it read it. */
  ping(message: string): number;
  cork(fn: () => void): void;
  end(code: number, reason: string): void;
}

/** uWS: sent or corked with no user-space backlog added; the buffered amount did not grow. */
const SEND_SUCCESS = 1;
/** How late a turn's flush may be before the sinks flush without it (see SocketSink.flushIfOverdue). */
const OVERDUE_FLUSH_MS = 20;
const SEND_DROPPED = 2;
export const CLOSE_NORMAL = 1000;
/** Policy violation: the client did not read fast enough (slow consumer). */
export const CLOSE_SLOW_CONSUMER = 1008;
/** The payload of the ping sent after a stream's last frame: its pong says the client read everything. */
export const READ_RECEIPT = "ledger-json-gateway: last frame";

export interface SocketSinkOptions {
  /** The stream's trace: the frames the sink makes itself (slow consumer) name it. */
  traceId?: string;
  /** Buffered bytes above which demand goes false (the gRPC call pauses). */
  highWaterMark: number;
  /** Buffered bytes at or below which demand comes back (hysteresis). */
  lowWaterMark: number;
  /** Buffered bytes an element may not push the socket past: the client is disconnected instead. */
  hardLimit: number;
  /** How long the socket may drain nothing while paused or finishing; 0 disables. */
  writeDeadlineMs: number;
  /**
   * The endpoint's resume-offset hook, applied to the last delivered element (decoded when it
   * came as bytes: only on a disconnect, never per element).
   */
  offsetOf?: (element: string) => string | number | undefined;
  /** Told what happens on the socket; absent: no one listens. */
  events?: SinkEvents;
  /**
   * The socket negotiated permessage-deflate: a frame is smaller on the wire than its text, so
   * what left uWS's buffer is counted in the bytes each send added to it.
   */
  compressed?: boolean;
}

/**
 * What a sink tells its stream: methods of one object (the stream's session), where a closure
 * each cost every subscriber of a crowd some 300 bytes with their scope.
 */
export interface SinkEvents {
  /**
   * Element frames that left the gateway (uWS's buffer), and their bytes: counted when the
   * socket took them, not when they were queued in user space, where a cut connection loses them.
   */
  elementsSent(elements: number, bytes: number): void;
  /** Demand went false: a backpressure pause. */
  paused(): void;
  /** The client is disconnected as a slow consumer, for `cause`; its last frame follows. */
  slowConsumer(cause: SlowConsumerCause): void;
}

/** A last error frame that names the offset to resume after, and the close that follows it. */
class ResumableEnd {
  constructor(
    readonly body: JsCantonError,
    readonly code: number,
    readonly what: string,
  ) {}
}

/**
 * A frame of the sink's own, not an element: an error frame (a failed stream's last, a refused
 * renewal's) or a notice (an accepted renewal's). Rare: elements are the ones left unwrapped.
 */
class OwnFrame {
  constructor(readonly text: string) {}
}

const COMPLETE = Symbol("complete");
/** An element (text or bytes), the final error frame, or the end: no wrapper object per element. */
type Item = Uint8Array | string | OwnFrame | ResumableEnd | typeof COMPLETE;

/**
 * Arrays a sink needs only while it has frames to write or bytes in uWS's buffer: taken when its
 * first frame comes, given back once all left (its queue at each flush, its bookkeeping when
 * uWS's buffer is empty). Nearly every subscriber of a crowd is idle between elements, and four
 * arrays of its own, grown by its first flush, were some 600 bytes of each one's heap (what every
 * garbage collection of a reconnect storm marks or copies). A busy socket takes and gives back
 * the same array each turn, allocating nothing. Per thread (each worker has its own).
 */
class ArrayPool<T> {
  readonly #free: T[][] = [];

  take(): T[] {
    return this.#free.pop() ?? [];
  }

  /** Given back, its slots of elements already cleared by the caller (it keeps no frame alive). */
  giveBack(array: T[]): void {
    // A few are enough (flushes run one at a time); a huge one (a replay's backlog) goes to the GC.
    if (this.#free.length < POOLED_ARRAYS && array.length <= POOLED_LENGTH) this.#free.push(array);
  }
}

const POOLED_ARRAYS = 64;
const POOLED_LENGTH = 4096;
const queues = new ArrayPool<Item | undefined>();
const ledgers = new ArrayPool<number>();

/**
 * The WebSocket end of the stream pipeline. Frames are batched per event-loop turn and sent in
 * one corked write; `send()`'s status and the buffered amount are read after every frame:
 * - above the high-water mark `demand$` goes false, which pauses the gRPC call, and true again
 *   on drain at or below the low-water mark;
 * - an element that would take the buffer past the hard limit, a frame uWS refuses, or a paused
 *   socket that drains nothing for the write deadline ends the stream with a slow-consumer
 *   error frame naming the offset to resume after, and close 1008. Nothing is ever dropped
 *   silently (nats.js: disconnect the slow consumer, never drop);
 * - the close waits until the client has read everything before it, the last frame included:
 *   1000 at completion, 1008 after a slow-consumer frame. uWS's buffer being empty is not
 *   enough: the kernel's socket buffers may still hold megabytes, and uWS cuts an ended socket
 *   after 4 seconds; a pong the client sends after that (to a keep-alive ping it reads late)
 *   meets a closed socket, whose RST makes the client's kernel discard what it had not read yet,
 *   and the client sees 1006 with its last elements lost. So once uWS's buffer is empty the sink
 *   pings, and closes when the pong to that ping comes back: TCP delivers in order, so the client
 *   has read every frame before it. A client that reads nothing for another write deadline is
 *   ended anyway; whatever was still in the gateway then never reaches it, and is not counted as
 *   delivered.
 */
export class SocketSink {
  readonly #socket: FrameSocket;
  readonly #options: SocketSinkOptions;
  readonly #gate: DemandGate;
  /**
   * Frames for the turn's flush, the first `#queued` of the array: taken from the pool at the
   * first, given back (its slots cleared) once sent, so that a busy socket's frames allocate no
   * array per turn (a replay crowd's sockets take some 200 frames a turn each), and an idle one
   * holds none.
   */
  #queue: (Item | undefined)[] | undefined;
  #queued = 0;
  #flushScheduled = false;
  /** The socket is gone or being ended by us: nothing may touch it any more. */
  #closed = false;
  /** The stream's last frame is queued: the close to send once the client has read everything. */
  #closing: { code: number; reason: string } | undefined;
  /** The read-receipt ping went out after the last frame: the close waits for its pong. */
  #receiptAsked = false;
  #deadline: NodeJS.Timeout | undefined;
  #lastElement: Uint8Array | string | undefined;
  /** The socket's buffered amount as last read: once per batch, and after a send that added to it. */
  #level = 0;
  /** Elements handed to uWS and their bytes; the bytes of every frame the sink handed it. */
  #sent = 0;
  #sentBytes = 0;
  #written = 0;
  /**
   * Per element handed to uWS and maybe still in its buffer, two numbers: where it ends in
   * #written, and in #sentBytes. From the pool while uWS's buffer holds any; none once it is empty.
   */
  #ends: number[] | undefined;
  /**
   * Elements of #ends before `#head` have left the gateway; those from `#tail` on are stale (the
   * array is overwritten from the start once all left, not emptied: no regrowth per flush).
   */
  #head = 0;
  #tail = 0;
  #delivered = 0;
  #bytes = 0;
  /** A fan-out member's position, from its shared stream (see {@link followShared}). */
  #shared: SharedPositionReader | undefined;
  /** The last element whose offset the lag was read from, and that offset: parsed once. */
  #measured: { element: Uint8Array | string; offset: number | undefined } | undefined;

  constructor(socket: FrameSocket, options: SocketSinkOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#gate = new DemandGate({ highWater: options.highWaterMark, lowWater: options.lowWaterMark });
  }

  /** The sink's readiness, for the endpoint's `open(..., demand$)`. */
  get demand$(): Subscribable<boolean> {
    return this.#gate.ready$;
  }

  /** Element frames that left the gateway for the socket (not those still in uWS's buffer). */
  get delivered(): number {
    return this.#delivered;
  }

  /** Element frames handed to uWS, delivered or still buffered there. */
  get sent(): number {
    return this.#sent;
  }

  /**
   * What the subscriber was sent and has not taken (uWS's buffer and the sink's queue), and the
   * offset of the last element it was sent, for the lag gauges: read at scrape, so that the
   * elements' path pays nothing for them. A fan-out member's offsets come from its shared stream,
   * which knows them already (and its upstream's newest); another's from its last element,
   * parsed once.
   */
  lag(): SubscriberLag {
    if (this.#closed) return { bytes: 0 };
    let bytes = this.#socket.getBufferedAmount();
    const queue = this.#queue;
    // An idle sink holds no queue: a scrape reads 10,000 of them without an array each.
    for (let i = 0; queue !== undefined && i < this.#queued; i += 1) {
      const item = queue[i];
      if (typeof item === "string") bytes += Buffer.byteLength(item);
      else if (item instanceof Uint8Array) bytes += item.byteLength;
    }
    const shared = this.#shared?.sharedPosition();
    if (shared !== undefined) return { bytes, offset: shared.last, newest: shared.newest };
    const offset = this.#lastOffset();
    return offset === undefined ? { bytes } : { bytes, offset };
  }

  /**
   * The subscriber reads a fan-out's shared stream, which tells where it stands (its member: an
   * object, where a closure and the session's own closure passing it on were).
   */
  followShared(reader: SharedPositionReader): void {
    this.#shared = reader;
  }

  /**
   * One element frame: its text, or its UTF-8 bytes (a shared stream's members all get the same
   * Buffer: encoded once, never copied per socket). A text goes to uWS as it is, which encodes it
   * in native code: a JS Buffer per element (allocation, pool refills, GC) cost about 0.8 µs of
   * the 10 µs a one-event element costs. The sink holds on to it until it went out.
   */
  element(frame: Uint8Array | string): void {
    this.#enqueue(frame);
  }

  /** The final JsCantonError frame of a failed stream; completion follows. */
  errorFrame(text: string): void {
    this.#enqueue(new OwnFrame(text));
  }

  /** A frame that tells the client something (not an element, not counted as one), in order. */
  notice(text: string): void {
    this.#enqueue(new OwnFrame(text));
  }

  complete(): void {
    this.#enqueue(COMPLETE);
  }

  /**
   * The stream's last frame, `body` with the offset of the last element before it
   * (`resume_after_offset`), then close `code` once the client has read it, the reason naming
   * that offset too: for ends the client recovers from by resuming (the ledger went away).
   */
  resumableEnd(body: JsCantonError, code: number, what: string): void {
    this.#enqueue(new ResumableEnd(body, code, what));
  }

  /**
   * Ends the stream now (shutdown): what is queued goes out, then the resumable frame, then the
   * close, without waiting for the client to read them.
   */
  endNow(body: JsCantonError, code: number, what: string): void {
    if (this.#closed) return;
    if (this.#closing === undefined) {
      const queued = (this.#queue?.slice(0, this.#queued) ?? []) as Item[];
      const items = [...queued, new ResumableEnd(body, code, what)];
      this.#releaseQueue();
      this.#socket.cork(() => {
        for (const item of items) {
          this.#sendItem(item);
          if (this.#closing !== undefined) return;
        }
      });
    }
    this.#settle(this.#socket.getBufferedAmount());
    const closing = this.#closing ?? { code, reason: what };
    this.#end(closing.code, closing.reason);
  }

  /** uWS `drain`: some of the buffer went out. */
  drained(): void {
    if (this.#closed) return;
    const level = this.#socket.getBufferedAmount();
    this.#settle(level);
    this.#setLevel(level);
    if (this.#closing !== undefined && level === 0) {
      this.#askReceipt();
      return;
    }
    // Progress: the client reads, however slowly; the deadline measures a client that stopped.
    if (this.#deadline !== undefined) this.#armDeadline();
  }

  /** uWS `close`: the socket is gone, whoever closed it. */
  socketClosed(): void {
    this.#closed = true;
    this.#releaseQueue();
    this.#releaseEnds();
    this.#clearDeadline();
    this.#gate.close();
  }

  #enqueue(item: Item): void {
    if (this.#closed || this.#closing !== undefined) return;
    this.#queue ??= queues.take();
    this.#queue[this.#queued++] = item;
    if (this.#flushScheduled) {
      // Already waiting for its flush: every 32nd frame of such sinks looks at the clock.
      if ((++SocketSink.#queuedSince & 31) === 0) SocketSink.flushIfOverdue();
      return;
    }
    this.#flushScheduled = true;
    // One corked write per event-loop turn: grpc-js delivers a read's worth of messages in one
    // turn, and one syscall for all of them is what keeps the socket path near gRPC speed.
    SocketSink.#flushing.push(this);
    if (SocketSink.#flushing.length > 1) {
      SocketSink.flushIfOverdue();
      return;
    }
    SocketSink.#flushDueAt = performance.now() + OVERDUE_FLUSH_MS;
    setImmediate(SocketSink.#flushAll);
  }

  /**
   * The turn's flush runs in setImmediate, after libuv's poll phase, and one poll phase can last
   * hundreds of ms: libuv handles up to 48 rounds of 1,024 ready sockets before it returns, as a
   * reconnect storm's upgrade requests all are at once, and the streams already open would get
   * nothing for all of it (200-500 ms of event-loop lag in a storm of 10,000). A flush overdue
   * by OVERDUE_FLUSH_MS runs at the end of the callback that queued to it instead (a microtask),
   * the next one again that much later: bounded, so that a sink whose flush queues more (a
   * replay's next elements) never keeps the thread from the poll phase. Requests that arrive in
   * that poll phase ask too (`flushIfOverdue`): a storm's upgrade requests queue nothing to a
   * sink, and an element that reached the established streams meanwhile would wait for them all.
   */
  static flushIfOverdue(): void {
    if (SocketSink.#overdueFlush || performance.now() < SocketSink.#flushDueAt) return;
    SocketSink.#overdueFlush = true;
    queueMicrotask(() => {
      SocketSink.#overdueFlush = false;
      SocketSink.#flushAll();
    });
  }

  /** When the pending turn's flush is overdue (performance.now()); +Infinity with none pending. */
  static #flushDueAt = Number.POSITIVE_INFINITY;
  static #overdueFlush = false;
  static #queuedSince = 0;

  /**
   * The sinks with frames to flush at this turn's end: one setImmediate for all of them, in the
   * order they asked. One each cost an Immediate and a closure per socket per turn: a shared
   * element reaching 100 sockets at a turn of its own was some 130 bytes of garbage per
   * delivery, the most of any step (a heap profile of the replay crowd).
   */
  static readonly #flushing: SocketSink[] = [];

  static #flushAll(): void {
    // Sinks that ask while these flush go to the next turn, as their own setImmediate would.
    const sinks = SocketSink.#flushing.splice(0);
    // None pending now; the next sink to ask sets when its turn's flush is due.
    SocketSink.#flushDueAt = Number.POSITIVE_INFINITY;
    for (const sink of sinks) sink.#flush();
  }

  #flush(): void {
    this.#flushScheduled = false;
    const items = this.#queue;
    if (this.#closed || items === undefined) return;
    const count = this.#queued;
    // What the sends lead to enqueue goes to the next flush, in an array of its own.
    this.#queue = undefined;
    this.#queued = 0;
    this.#level = this.#socket.getBufferedAmount();
    this.#socket.cork(() => {
      for (let i = 0; i < count; i += 1) {
        this.#sendItem(items[i] as Item);
        if (this.#closing !== undefined) return;
      }
    });
    items.fill(undefined, 0, count);
    queues.giveBack(items);
    this.#afterWrites();
  }

  /** After the sink wrote (outside the cork): what left the gateway, and the close when due. */
  #afterWrites(): void {
    const level = this.#socket.getBufferedAmount();
    this.#settle(level);
    if (this.#closing === undefined) return;
    // end() runs the close handler synchronously: never from inside the cork.
    if (level === 0) this.#askReceipt();
    else if (this.#deadline === undefined) this.#armDeadline();
  }

  /** uWS `pong`: the answer to the read-receipt ping closes the stream. */
  ponged(message: string): void {
    if (this.#closed || !this.#receiptAsked || message !== READ_RECEIPT) return;
    const closing = this.#closing as { code: number; reason: string };
    this.#end(closing.code, closing.reason);
  }

  /** Everything left uWS's buffer: the ping whose pong says the client read it all. */
  #askReceipt(): void {
    if (this.#receiptAsked) return;
    this.#receiptAsked = true;
    this.#armDeadline();
    this.#socket.ping(READ_RECEIPT);
  }

  /**
   * Counts the elements that left uWS's buffer, from the bytes still in it. The sink counts
   * payloads only: frame headers and frames it did not write (pings) in that buffer only make
   * it count fewer, never more. Metrics once per call, not per element.
   */
  #settle(level: number): void {
    const before = { delivered: this.#delivered, bytes: this.#bytes };
    if (level === 0) {
      this.#delivered = this.#sent;
      this.#bytes = this.#sentBytes;
      this.#releaseEnds();
    } else if (this.#ends !== undefined) {
      const ends = this.#ends;
      const written = this.#written - level;
      const from = this.#head;
      while (this.#head < this.#tail && (ends[2 * this.#head] as number) <= written) this.#head++;
      if (this.#head > from) {
        this.#delivered += this.#head - from;
        this.#bytes = ends[2 * this.#head - 1] as number;
      }
      if (this.#head > 1024 && this.#head * 2 > this.#tail) {
        ends.copyWithin(0, 2 * this.#head, 2 * this.#tail);
        this.#tail -= this.#head;
        this.#head = 0;
      }
    }
    if (this.#delivered > before.delivered) {
      this.#options.events?.elementsSent(this.#delivered - before.delivered, this.#bytes - before.bytes);
    }
  }

  /** Sends one item; sets #closing when this item ends the stream. */
  #sendItem(item: Item): void {
    if (item === COMPLETE) {
      this.#closing = { code: CLOSE_NORMAL, reason: "" };
      return;
    }
    if (item instanceof ResumableEnd) {
      const offset = this.#resumeOffset();
      const body = traced(withResumeOffset(item.body, offset), this.#options.traceId);
      if (this.#sendText(JSON.stringify(body)) === SEND_DROPPED) {
        this.#slowConsumer("dropped");
        return;
      }
      this.#closing = { code: item.code, reason: resumeCloseReason(item.what, offset) };
      return;
    }
    if (item instanceof OwnFrame) {
      // A refused error frame followed by close 1000 would read as a clean end: the client is
      // told to resume instead, and meets the error again if it persists.
      if (this.#sendText(item.text) === SEND_DROPPED) this.#slowConsumer("dropped");
      return;
    }
    const bytes = typeof item === "string" ? Buffer.byteLength(item) : item.byteLength;
    const buffered = this.#level;
    // An element alone on an empty buffer always goes: the limit bounds the backlog, not the
    // size of one element.
    if (buffered > 0 && buffered + bytes > this.#options.hardLimit) {
      this.#slowConsumer("hard_limit");
      return;
    }
    const before = this.#options.compressed ? this.#socket.getBufferedAmount() : 0;
    // Deflated when the socket negotiated permessage-deflate; uWS ignores the flag otherwise.
    const status = this.#socket.send(item, false, true);
    if (status === SEND_DROPPED) {
      this.#slowConsumer("dropped");
      return;
    }
    this.#sent += 1;
    this.#sentBytes += bytes;
    this.#written += this.#wireBytes(bytes, before);
    this.#ends ??= ledgers.take();
    const ends = this.#ends;
    ends[2 * this.#tail] = this.#written;
    ends[2 * this.#tail + 1] = this.#sentBytes;
    this.#tail += 1;
    this.#lastElement = item;
    // Per element, the buffered amount is read only when the send added to it (two native calls
    // fewer per delivery while the client keeps up).
    if (status !== SEND_SUCCESS) this.#setLevel(this.#socket.getBufferedAmount());
  }

  /** One of the sink's own text frames (error, slow consumer), counted in #written. */
  #sendText(text: string): number {
    const before = this.#options.compressed ? this.#socket.getBufferedAmount() : 0;
    const status = this.#socket.send(text, false, true);
    if (status !== SEND_DROPPED) this.#written += this.#wireBytes(Buffer.byteLength(text), before);
    return status;
  }

  /**
   * What a frame of `bytes` added to #written: its size, or, compressed, what it added to uWS's
   * buffer (`before` the send): the part the kernel took at once has left already.
   */
  #wireBytes(bytes: number, before: number): number {
    if (!this.#options.compressed) return bytes;
    return Math.max(0, this.#socket.getBufferedAmount() - before);
  }

  #setLevel(level: number): void {
    this.#level = level;
    const wasReady = this.#gate.ready;
    const ready = this.#gate.update(level);
    if (wasReady && !ready) {
      this.#options.events?.paused();
      this.#armDeadline();
    } else if (ready && this.#closing === undefined) {
      this.#clearDeadline();
    }
  }

  /**
   * The last frame: every element handed to uWS goes out before it, so the count and the offset
   * it names are those of elements the client has read when it reads this frame.
   */
  #slowConsumer(cause: SlowConsumerCause): void {
    this.#options.events?.slowConsumer(cause);
    const offset = this.#resumeOffset();
    // The socket keeps headroom above the hard limit (see ws-streams.ts) for this last frame.
    this.#sendText(
      JSON.stringify(traced(slowConsumerBody(cause, this.#sent, offset), this.#options.traceId)),
    );
    this.#closing = { code: CLOSE_SLOW_CONSUMER, reason: slowConsumerCloseReason(cause, offset) };
    this.#gate.close();
    this.#clearDeadline();
  }

  #lastOffset(): number | undefined {
    const last = this.#lastElement;
    if (last === undefined) return undefined;
    if (this.#measured?.element !== last) {
      const offset = Number(this.#resumeOffset());
      this.#measured = { element: last, offset: Number.isFinite(offset) ? offset : undefined };
    }
    return this.#measured.offset;
  }

  #resumeOffset(): string | number | undefined {
    if (this.#lastElement === undefined || this.#options.offsetOf === undefined) return undefined;
    try {
      const last = this.#lastElement;
      return this.#options.offsetOf(
        typeof last === "string"
          ? last
          : Buffer.from(last.buffer, last.byteOffset, last.byteLength).toString("utf8"),
      );
    } catch {
      return undefined;
    }
  }

  /** The queue's array back to the pool, its frames dropped (sent, or the socket is gone). */
  #releaseQueue(): void {
    const queue = this.#queue;
    this.#queue = undefined;
    if (queue !== undefined) {
      queue.fill(undefined, 0, this.#queued);
      queues.giveBack(queue);
    }
    this.#queued = 0;
  }

  /** Nothing handed to uWS is still in its buffer: the bookkeeping's array back to the pool. */
  #releaseEnds(): void {
    const ends = this.#ends;
    this.#ends = undefined;
    this.#head = 0;
    this.#tail = 0;
    if (ends !== undefined) ledgers.giveBack(ends);
  }

  #armDeadline(): void {
    this.#clearDeadline();
    if (this.#options.writeDeadlineMs <= 0) return;
    this.#deadline = setTimeout(() => {
      this.#deadline = undefined;
      if (this.#closed) return;
      if (this.#closing !== undefined && (this.#closing.code !== CLOSE_NORMAL || this.#receiptAsked)) {
        // Its last frame did not get out, or the client did not read it: end it anyway, the client
        // resumes from what it got.
        this.#end(this.#closing.code, this.#closing.reason);
        return;
      }
      this.#socket.cork(() => this.#slowConsumer("write_deadline"));
      this.#afterWrites();
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
