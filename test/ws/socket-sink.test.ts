import { deepStrictEqual, equal } from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { JsCantonError, SlowConsumerCause } from "../../src/errors/index.js";
import {
  CLOSE_NORMAL,
  CLOSE_SLOW_CONSUMER,
  type FrameSocket,
  READ_RECEIPT,
  SocketSink,
  type SocketSinkOptions,
} from "../../src/ws/socket-sink.js";

/**
 * A uWS socket whose client the test drives: while `reading` every frame goes straight out;
 * otherwise frames pile up in the buffer until the test calls `read(bytes)` (then the sink's
 * `drained()`, as uWS's drain handler would). `refusing` makes send() answer 2, as uWS does over
 * maxBackpressure. A ping is answered (`onPong`) once everything before it was read, unless
 * `silent`: a client whose kernel still holds frames it has not read.
 */
class FakeSocket implements FrameSocket {
  reading = false;
  refusing = false;
  silent = false;
  buffered = 0;
  /** Pings sent, and those not answered yet. */
  readonly pings: string[] = [];
  unanswered: string[] = [];
  onPong: (message: string) => void = () => undefined;
  /** Frames the socket accepted (sent or buffered), as text. */
  readonly sent: string[] = [];
  /** The same frames as the sink handed them over (elements: text or bytes, the sink's own frames: text). */
  readonly messages: (string | Uint8Array)[] = [];
  /** Frames the socket refused. */
  readonly refused: string[] = [];
  corks = 0;
  closed: { code: number; reason: string } | undefined;
  /** permessage-deflate negotiated: a frame takes this share of its bytes on the wire. */
  deflate = 1;

  send(message: string | Uint8Array): number {
    const text = typeof message === "string" ? message : Buffer.from(message).toString("utf8");
    if (this.refusing) {
      this.refused.push(text);
      return 2;
    }
    this.sent.push(text);
    this.messages.push(message);
    if (this.reading) return 1;
    // uWS buffers bytes: a string's UTF-8 length, a view's byteLength (frame headers left out).
    const bytes = typeof message === "string" ? Buffer.byteLength(message) : message.byteLength;
    this.buffered += Math.ceil(bytes * this.deflate);
    return 0;
  }

  getBufferedAmount(): number {
    return this.buffered;
  }

  ping(message: string): number {
    this.pings.push(message);
    this.unanswered.push(message);
    this.answer();
    return 1;
  }

  /** The client reads its pings (once it read what came before them) and answers them. */
  answer(): void {
    if (this.silent || this.buffered > 0) return;
    const pings = this.unanswered;
    this.unanswered = [];
    for (const message of pings) this.onPong(message);
  }

  cork(fn: () => void): void {
    this.corks += 1;
    fn();
  }

  end(code: number, reason: string): void {
    if (this.closed !== undefined) throw new Error("end() called twice");
    this.closed = { code, reason };
  }

  read(bytes: number = this.buffered): void {
    this.buffered = Math.max(0, this.buffered - bytes);
    this.answer();
  }
}

const ELEMENT_BYTES = 50;

/** An element frame of exactly ELEMENT_BYTES bytes carrying its offset. */
function element(offset: number): string {
  const bare = JSON.stringify({ offset, pad: "" });
  return JSON.stringify({ offset, pad: "x".repeat(ELEMENT_BYTES - bare.length) });
}

const OPTIONS: SocketSinkOptions = {
  highWaterMark: 2 * ELEMENT_BYTES,
  lowWaterMark: 20,
  hardLimit: 6 * ELEMENT_BYTES,
  writeDeadlineMs: 1000,
  offsetOf: (text) => (JSON.parse(text) as { offset: number }).offset,
};

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The sink batches per event-loop turn (setImmediate): let one turn pass. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(options: Partial<SocketSinkOptions> = {}) {
  const socket = new FakeSocket();
  const events = {
    pauses: 0,
    slowConsumer: [] as SlowConsumerCause[],
    sent: [] as [number, number][],
  };
  const sink = new SocketSink(socket, {
    ...OPTIONS,
    events: {
      paused: () => {
        events.pauses += 1;
      },
      slowConsumer: (cause) => events.slowConsumer.push(cause),
      elementsSent: (elements, bytes) => events.sent.push([elements, bytes]),
    },
    ...options,
  });
  socket.onPong = (message) => sink.ponged(message);
  const demand: (boolean | "complete")[] = [];
  sink.demand$.subscribe({ next: (ready) => demand.push(ready), complete: () => demand.push("complete") });
  return { socket, sink, events, demand };
}

function send(sink: SocketSink, from: number, to: number): void {
  for (let offset = from; offset <= to; offset += 1) sink.element(Buffer.from(element(offset)));
}

interface SlowConsumerFrame {
  code: string;
  cause: string;
  context: Record<string, string>;
}

function lastFrame(socket: FakeSocket): SlowConsumerFrame {
  return JSON.parse(socket.sent.at(-1) ?? "null") as SlowConsumerFrame;
}

describe("SocketSink", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
  afterEach(() => mock.timers.reset());

  it("sends the frames of one event-loop turn in one corked write, demand staying true while the client reads", async () => {
    const { socket, sink, events, demand } = setup();
    socket.reading = true;
    send(sink, 1, 3);
    equal(socket.sent.length, 0);
    await turn();
    deepStrictEqual(socket.sent, [element(1), element(2), element(3)]);
    equal(socket.corks, 1);
    deepStrictEqual(events.sent, [[3, 3 * ELEMENT_BYTES]]);
    equal(sink.delivered, 3);
    deepStrictEqual(demand, [true]);
  });

  it("flushes every sink given frames in a turn at that turn's end, and frames given during a flush at the next", async () => {
    const first = setup();
    const second = setup();
    const third = setup();
    for (const { socket } of [first, second, third]) socket.reading = true;
    send(second.sink, 1, 2);
    send(first.sink, 1, 1);
    // While the first sink's frame goes out, the third is given one: it goes at the next turn.
    const taken = first.socket.send.bind(first.socket);
    first.socket.send = (message) => {
      send(third.sink, 7, 7);
      return taken(message);
    };
    await turn();
    deepStrictEqual(second.socket.sent, [element(1), element(2)]);
    deepStrictEqual(first.socket.sent, [element(1)]);
    deepStrictEqual(third.socket.sent, []);
    await turn();
    deepStrictEqual(third.socket.sent, [element(7)]);
  });

  it("flushes without its turn once that turn is 20 ms overdue (a long poll phase), and no more often than that", async () => {
    const first = setup();
    const second = setup();
    for (const { socket } of [first, second]) socket.reading = true;
    let turnRan = false;
    send(first.sink, 1, 1);
    setImmediate(() => {
      turnRan = true;
    });
    // The thread held past the turn's due time, as libuv's poll phase holds it in a storm.
    const heldUntil = performance.now() + 25;
    while (performance.now() < heldUntil);
    send(second.sink, 1, 1);
    equal(first.socket.sent.length, 0);
    // At the end of the callback that queued to it (a microtask), not at the turn.
    await Promise.resolve();
    equal(turnRan, false);
    deepStrictEqual(first.socket.sent, [element(1)]);
    deepStrictEqual(second.socket.sent, [element(1)]);
    // Frames queued right after it wait for the next turn: one such flush per 20 ms at most.
    send(first.sink, 2, 2);
    await Promise.resolve();
    equal(turnRan, false);
    deepStrictEqual(first.socket.sent, [element(1)]);
    await turn();
    deepStrictEqual(first.socket.sent, [element(1), element(2)]);
  });

  it("flushes an overdue turn when a request arrives, though no sink queued anything since (a storm's upgrades)", async () => {
    const { socket, sink } = setup();
    socket.reading = true;
    let turnRan = false;
    send(sink, 1, 1);
    setImmediate(() => {
      turnRan = true;
    });
    // Not due yet: an arrival leaves the frame to its turn.
    SocketSink.flushIfOverdue();
    await Promise.resolve();
    equal(socket.sent.length, 0);
    // The poll phase holds the thread past the turn's due time with requests that queue nothing.
    const heldUntil = performance.now() + 25;
    while (performance.now() < heldUntil);
    SocketSink.flushIfOverdue();
    await Promise.resolve();
    equal(turnRan, false);
    deepStrictEqual(socket.sent, [element(1)]);
    // Nothing pending: an arrival costs a comparison.
    SocketSink.flushIfOverdue();
    await turn();
    deepStrictEqual(socket.sent, [element(1)]);
  });

  it("counts every element that left over many flushes and partial reads, its byte marks reused", async () => {
    const { socket, sink, events } = setup({ highWaterMark: 1e9, hardLimit: 2e9 });
    let offset = 0;
    for (let round = 0; round < 40; round += 1) {
      send(sink, offset + 1, offset + 100);
      offset += 100;
      await turn();
      // Most of what is buffered, all of it only every twentieth round: the marks are compacted
      // (over 1,024 out and still some buffered), and overwritten from the start.
      const all = round % 20 === 19;
      socket.read(all ? socket.buffered : socket.buffered - 37 * ELEMENT_BYTES);
      sink.drained();
      equal(sink.delivered, all ? offset : offset - 37, `round ${round}`);
    }
    equal(sink.delivered, 4000);
    const counted = events.sent.reduce((sum, [elements]) => sum + elements, 0);
    equal(counted, 4000);
    equal(
      events.sent.reduce((sum, [, bytes]) => sum + bytes, 0),
      4000 * ELEMENT_BYTES,
    );
    send(sink, 4001, 4003);
    await turn();
    socket.read(ELEMENT_BYTES);
    sink.drained();
    equal(sink.delivered, 4001, "one element's bytes read: one more out, not all three");
  });

  it("counts what left the buffer in wire bytes when the socket deflates its frames", async () => {
    const { socket, sink, events } = setup({ compressed: true, highWaterMark: 1000, hardLimit: 10_000 });
    socket.deflate = 0.5;
    send(sink, 1, 4);
    await turn();
    equal(socket.buffered, 4 * (ELEMENT_BYTES / 2));
    // Two frames' worth of wire bytes read: two elements out, not the three their text would make.
    socket.read(2 * (ELEMENT_BYTES / 2));
    sink.drained();
    equal(sink.delivered, 2);
    deepStrictEqual(events.sent, [[2, 2 * ELEMENT_BYTES]]);
  });

  it("turns demand false above the high-water mark and true again on drain at or below the low-water mark", async () => {
    const { socket, sink, events, demand } = setup();
    send(sink, 1, 2);
    await turn();
    // Exactly at the high-water mark is not above it.
    deepStrictEqual([socket.buffered, demand], [100, [true]]);
    send(sink, 3, 3);
    await turn();
    deepStrictEqual([socket.buffered, demand, events.pauses], [150, [true, false], 1]);

    socket.read(100);
    sink.drained();
    deepStrictEqual(demand, [true, false], "50 buffered is still above the low-water mark");
    socket.read(30);
    sink.drained();
    deepStrictEqual(demand, [true, false, true]);
    equal(socket.closed, undefined);
  });

  it("ends an element past the hard limit with the slow-consumer frame and close 1008 naming the resume offset", async () => {
    const { socket, sink, events, demand } = setup();
    send(sink, 1, 8);
    await turn();
    // Six elements fill the buffer to the hard limit; the seventh would pass it and is not sent.
    deepStrictEqual(socket.sent.slice(0, -1), [1, 2, 3, 4, 5, 6].map(element));
    // Handed to uWS, not read yet: not delivered, and the close waits behind them.
    deepStrictEqual([sink.sent, sink.delivered, socket.closed], [6, 0, undefined]);
    const frame = lastFrame(socket);
    deepStrictEqual(
      { code: frame.code, context: frame.context },
      {
        code: "JSON_API_SLOW_CONSUMER",
        context: { cause: "hard_limit", elements_delivered: "6", resume_after_offset: "6" },
      },
    );
    socket.read(100);
    sink.drained();
    equal(socket.closed, undefined, "the client has not read its last frame yet");
    socket.read();
    sink.drained();
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (hard_limit); resume after offset 6",
    });
    deepStrictEqual(events.slowConsumer, ["hard_limit"]);
    deepStrictEqual(demand, [true, false, "complete"]);
    equal(sink.delivered, 6);

    // The sink is done with the socket: later frames and drains touch nothing.
    send(sink, 9, 9);
    sink.complete();
    sink.drained();
    await turn();
    equal(socket.sent.length, 7);
  });

  it("sends one element larger than the hard limit when the buffer is empty", async () => {
    const { socket, sink } = setup({ hardLimit: 10 });
    send(sink, 1, 1);
    await turn();
    deepStrictEqual([socket.sent, socket.closed], [[element(1)], undefined]);
  });

  it("closes a paused socket that drains nothing for the write deadline, naming the resume offset", async () => {
    const { socket, sink, events } = setup();
    send(sink, 1, 3);
    await turn();
    mock.timers.tick(999);
    equal(lastFrame(socket).code, undefined);
    mock.timers.tick(1);
    deepStrictEqual(lastFrame(socket).context, {
      cause: "write_deadline",
      elements_delivered: "3",
      resume_after_offset: "3",
    });
    deepStrictEqual(events.slowConsumer, ["write_deadline"]);
    // Closed once the client has read everything, its last frame included, however long it took.
    mock.timers.tick(999);
    socket.read(1);
    sink.drained();
    mock.timers.tick(999);
    equal(socket.closed, undefined);
    socket.read();
    sink.drained();
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (write_deadline); resume after offset 3",
    });
    deepStrictEqual([sink.delivered, events.sent], [3, [[3, 3 * ELEMENT_BYTES]]]);
  });

  it("ends a slow consumer that reads nothing for another write deadline after its last frame: nothing counted as delivered", async () => {
    const { socket, sink, events } = setup();
    send(sink, 1, 3);
    await turn();
    mock.timers.tick(1000);
    equal(socket.closed, undefined);
    socket.read(50);
    sink.drained();
    mock.timers.tick(1000);
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (write_deadline); resume after offset 3",
    });
    // Only the element that left the gateway counts: the others die with the connection.
    deepStrictEqual([sink.sent, sink.delivered, events.sent], [3, 1, [[1, ELEMENT_BYTES]]]);
  });

  it("restarts the deadline when a paused client reads some, and drops it when demand comes back", async () => {
    const { socket, sink, demand } = setup();
    send(sink, 1, 3);
    await turn();
    mock.timers.tick(900);
    socket.read(10);
    sink.drained();
    mock.timers.tick(900);
    equal(socket.closed, undefined, "a slow reader is not a stopped one");
    socket.read(140);
    sink.drained();
    mock.timers.tick(10_000);
    deepStrictEqual([socket.closed, demand], [undefined, [true, false, true]]);
  });

  it("closes 1000 at completion once the client has read everything", async () => {
    const { socket, sink } = setup();
    send(sink, 1, 2);
    sink.complete();
    await turn();
    equal(socket.closed, undefined);
    socket.read(60);
    sink.drained();
    equal(socket.closed, undefined);
    socket.read();
    sink.drained();
    deepStrictEqual(socket.closed, { code: CLOSE_NORMAL, reason: "" });
    deepStrictEqual(socket.sent, [element(1), element(2)]);
  });

  it("closes only once the client answered the ping sent after its last frame, not when uWS's buffer is empty", async () => {
    const { socket, sink } = setup();
    // Every frame left uWS's buffer, but the client's kernel still holds them: it has not read them.
    socket.reading = true;
    socket.silent = true;
    send(sink, 1, 2);
    sink.complete();
    await turn();
    deepStrictEqual([socket.pings, socket.closed], [[READ_RECEIPT], undefined]);
    // A keep-alive ping's pong is not the receipt.
    sink.ponged("");
    equal(socket.closed, undefined);
    socket.silent = false;
    socket.answer();
    deepStrictEqual(socket.closed, { code: CLOSE_NORMAL, reason: "" });
    deepStrictEqual(socket.sent, [element(1), element(2)]);
  });

  it("ends a stream whose client never answers the read receipt after the write deadline", async () => {
    const { socket, sink } = setup();
    socket.reading = true;
    socket.silent = true;
    send(sink, 1, 1);
    sink.complete();
    await turn();
    mock.timers.tick(999);
    equal(socket.closed, undefined);
    mock.timers.tick(1);
    deepStrictEqual(socket.closed, { code: CLOSE_NORMAL, reason: "" });
  });

  it("closes 1000 at once when the buffer is already empty at completion", async () => {
    const { socket, sink } = setup();
    socket.reading = true;
    send(sink, 1, 1);
    sink.complete();
    await turn();
    deepStrictEqual(socket.closed, { code: CLOSE_NORMAL, reason: "" });
  });

  it("closes a finishing socket whose client stopped reading at the write deadline", async () => {
    const { socket, sink } = setup();
    send(sink, 1, 1);
    sink.complete();
    await turn();
    mock.timers.tick(1000);
    equal(lastFrame(socket).code, "JSON_API_SLOW_CONSUMER");
    mock.timers.tick(1000);
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (write_deadline); resume after offset 1",
    });
  });

  it("sends the error frame after the elements, then closes 1000", async () => {
    const { socket, sink } = setup();
    socket.reading = true;
    send(sink, 1, 1);
    sink.errorFrame('{"code":"NOT_FOUND"}');
    sink.complete();
    await turn();
    deepStrictEqual(socket.sent, [element(1), '{"code":"NOT_FOUND"}']);
    deepStrictEqual(socket.closed, { code: CLOSE_NORMAL, reason: "" });
  });

  it("never drops a refused element silently: close 1008 names the last offset the socket took", async () => {
    const { socket, sink, events } = setup();
    socket.reading = true;
    send(sink, 1, 2);
    await turn();
    socket.refusing = true;
    send(sink, 3, 4);
    await turn();
    equal(sink.delivered, 2);
    deepStrictEqual(socket.refused[0], element(3));
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (dropped); resume after offset 2",
    });
    deepStrictEqual(events.slowConsumer, ["dropped"]);
  });

  it("sends an element given as text as it is, counting its UTF-8 bytes and resuming after its offset", async () => {
    const { socket, sink, events } = setup();
    socket.reading = true;
    // Non-ASCII: its UTF-8 bytes outnumber its UTF-16 units.
    const text = JSON.stringify({ offset: 7, note: "é€😀" });
    sink.element(text);
    await turn();
    deepStrictEqual(socket.messages, [text]);
    equal(sink.delivered, 1);
    deepStrictEqual(events.sent, [[1, Buffer.byteLength(text)]]);
    socket.refusing = true;
    sink.element(element(8));
    await turn();
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (dropped); resume after offset 7",
    });
  });

  it("never ends with a clean close after a refused error frame", async () => {
    const { socket, sink } = setup();
    socket.reading = true;
    send(sink, 1, 1);
    await turn();
    socket.refusing = true;
    sink.errorFrame('{"code":"NOT_FOUND"}');
    sink.complete();
    await turn();
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (dropped); resume after offset 1",
    });
  });

  it("leaves the resume offset out when the endpoint cannot tell it", async () => {
    const { socket, sink } = setup({
      offsetOf: () => {
        throw new Error("not an update");
      },
    });
    send(sink, 1, 8);
    await turn();
    socket.read();
    sink.drained();
    deepStrictEqual(socket.closed, { code: CLOSE_SLOW_CONSUMER, reason: "slow consumer (hard_limit)" });
    deepStrictEqual(lastFrame(socket).context, { cause: "hard_limit", elements_delivered: "6" });
  });

  it("ends resumably: the frame names the last offset, close 1013 once the client read it, or at the deadline without a second frame", async () => {
    const body = { code: "UNAVAILABLE", context: { a: "b" } } as unknown as JsCantonError;
    const read = setup();
    send(read.sink, 1, 2);
    read.sink.resumableEnd(body, 1013, "ledger unavailable");
    read.sink.complete();
    await turn();
    deepStrictEqual(JSON.parse(read.socket.sent.at(-1) ?? ""), {
      code: "UNAVAILABLE",
      context: { a: "b", resume_after_offset: "2" },
    });
    equal(read.socket.closed, undefined);
    read.socket.read();
    read.sink.drained();
    deepStrictEqual(read.socket.closed, { code: 1013, reason: "ledger unavailable; resume after offset 2" });

    const stalled = setup();
    send(stalled.sink, 1, 2);
    stalled.sink.resumableEnd(body, 1013, "ledger unavailable");
    await turn();
    mock.timers.tick(1000);
    deepStrictEqual(
      [stalled.socket.sent.length, stalled.socket.closed],
      [3, { code: 1013, reason: "ledger unavailable; resume after offset 2" }],
    );
  });

  it("ends now at shutdown: what was queued, the frame with the last offset, and the close, in the same turn", () => {
    const { socket, sink } = setup();
    send(sink, 1, 2);
    sink.endNow(
      { code: "SERVICE_NOT_RUNNING", context: {} } as unknown as JsCantonError,
      1001,
      "shutting down",
    );
    deepStrictEqual(socket.sent.slice(0, 2), [element(1), element(2)]);
    deepStrictEqual(JSON.parse(socket.sent[2] ?? "").context, { resume_after_offset: "2" });
    deepStrictEqual(socket.closed, { code: 1001, reason: "shutting down; resume after offset 2" });
  });

  it("stops at once when the client goes away: no send, no end, demand completes", async () => {
    const { socket, sink, demand } = setup();
    send(sink, 1, 3);
    await turn();
    sink.socketClosed();
    send(sink, 4, 4);
    sink.complete();
    sink.drained();
    await turn();
    mock.timers.tick(10_000);
    deepStrictEqual([socket.sent.length, socket.closed, demand], [3, undefined, [true, false, "complete"]]);
  });

  it("keeps no frame once it went out or its socket went away: the arrays it gives back to its pool are cleared", async () => {
    const { socket, sink } = setup();
    const other = setup();
    socket.reading = true;
    other.socket.reading = true;
    // Frames the test lets go of; the sink keeps only its last sent element (the resume offset's).
    const frames = [1, 2, 3, 4, 5].map((offset) => Buffer.from(element(offset)));
    const refs = frames.map((frame) => new WeakRef(frame));
    for (const frame of frames.slice(0, 4)) sink.element(frame);
    await turn();
    // The pool's array goes to another sink next, and must not carry these frames there.
    other.sink.element(Buffer.from(element(9)));
    await turn();
    // Queued, never written: the socket goes first.
    sink.element(frames[4] as Buffer);
    sink.socketClosed();
    frames.length = 0;
    socket.messages.length = 0;
    await turn();
    gc();
    deepStrictEqual(
      refs.map((ref) => ref.deref() !== undefined),
      [false, false, false, true, false],
    );
    deepStrictEqual(other.socket.sent, [element(9)]);
  });

  it("sends an element's bytes as given: one Buffer shared by several sinks goes out as that same Buffer", async () => {
    const first = setup();
    const second = setup();
    first.socket.reading = true;
    second.socket.reading = true;
    const shared = Buffer.from(element(1));
    first.sink.element(shared);
    second.sink.element(shared);
    await turn();
    equal(first.socket.messages[0], shared);
    equal(second.socket.messages[0], shared);
    deepStrictEqual([first.events.sent, second.events.sent], [[[1, ELEMENT_BYTES]], [[1, ELEMENT_BYTES]]]);
  });

  it("counts bytes, not characters, against the water marks and the hard limit", async () => {
    // 25 characters of two UTF-8 bytes each: 50 bytes, the size of an ASCII element.
    const wide = (offset: number) => Buffer.from(JSON.stringify({ offset, pad: "é".repeat(10) }));
    const { socket, sink, events, demand } = setup({
      highWaterMark: 3 * wide(1).byteLength,
      hardLimit: 5 * wide(1).byteLength,
    });
    const size = wide(1).byteLength;
    equal(size, JSON.stringify({ offset: 1, pad: "é".repeat(10) }).length + 10);
    for (let offset = 1; offset <= 7; offset += 1) sink.element(wide(offset));
    await turn();
    socket.read();
    sink.drained();
    deepStrictEqual(events.sent, [[5, 5 * size]]);
    deepStrictEqual(demand, [true, false, "complete"]);
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (hard_limit); resume after offset 5",
    });
  });

  it("reads the resume offset from the last element's own bytes, also when they are a view into a larger buffer", async () => {
    const backing = Buffer.from(`${element(1)}${element(2)}${element(3)}`);
    const { socket, sink } = setup();
    socket.reading = true;
    sink.element(backing.subarray(ELEMENT_BYTES, 2 * ELEMENT_BYTES));
    await turn();
    socket.refusing = true;
    sink.element(backing.subarray(2 * ELEMENT_BYTES));
    await turn();
    deepStrictEqual(socket.sent[0], element(2));
    deepStrictEqual(socket.closed, {
      code: CLOSE_SLOW_CONSUMER,
      reason: "slow consumer (dropped); resume after offset 2",
    });
  });
});
