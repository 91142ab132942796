import type { HttpResponse } from "uWebSockets.js";
import { BehaviorSubject, type Subscription } from "rxjs";
import type { StreamedAnswer } from "../endpoints/route.js";
import { errorFrameText } from "../errors/index.js";
import { type ContentCoding, streamEncoder } from "./answer-compression.js";
import { STREAM_FRAMINGS } from "./stream-framing.js";

/** What the writer needs of the exchange it answers. */
export interface StreamedExchange {
  readonly res: HttpResponse;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** The request's trace: a failure after the first element names it, if the ledger's error did not. */
  readonly traceId: string;
  /** Whether the answer ends the connection. */
  closes(): boolean;
  /** Writes the status line and headers of the 200 (called inside a cork). */
  writeHead(): void;
  /** The stream failed before its first element: answered as any request's error is. */
  fail(error: unknown): void;
  /** The answer is over (ended, failed or abandoned): settles the exchange. Idempotent. */
  ended(): void;
}

/** A streamed answer being written. */
export interface StreamedWriting {
  /** Ends the stream now with `error` (the gateway shutting down). */
  stop(error: unknown): void;
  /** Whether a write waits for the client to take it. */
  waitsOnClient(): boolean;
}

/**
 * Writes a streamed answer as its elements arrive, framed as its format says, those of one event-loop turn (a ledger read's
 * worth) in one write. After a write the socket did not take whole, chunks wait in the gateway
 * until uWS reports the socket writable again, and past `highWater` characters waiting the source
 * is paused (demand false) until they are written: a client that falls behind for a moment costs
 * nothing, a slow one holds the gateway to about `highWater`, one write's remainder in uWS and
 * what was in flight when the source paused, never the stream. A client that takes nothing for
 * 10 s after a write it did not take is cut by uWS (its HTTP timeout); the source is then
 * cancelled. That timeout is uWS's only while such a write waits (`waitsOnClient`): otherwise
 * the answer lives as long as its source does, and the exchange holds the timeout off
 * (uws-timeout-hold.ts). A write that went into uWS's cork whole counts as taken, though the
 * cork's flush may leave part of it in uWS; the next write finds that and waits.
 *
 * With a `coding`, what goes to the socket is the chunks compressed, each turn's flushed.
 */
export function writeStreamed(
  exchange: StreamedExchange,
  answer: StreamedAnswer,
  highWater: number,
  coding?: ContentCoding,
): StreamedWriting {
  const { res } = exchange;
  if (exchange.signal.aborted) {
    exchange.ended();
    return { stop: () => {}, waitsOnClient: () => false };
  }
  const framing = STREAM_FRAMINGS[answer.format];
  const { idOf } = answer;
  const demand = new BehaviorSubject(true);
  /** Framed elements of this event-loop turn, handed on together after it. */
  let texts: string[] = [];
  /** What waits for the socket: text, or with a coding its bytes. */
  let out: (string | Buffer)[] = [];
  /** Characters or bytes in `out` (the same for JSON's ASCII). */
  let outLength = 0;
  let received = false;
  let headWritten = false;
  let handOnScheduled = false;
  let blocked = false;
  /** The source ended: what is left goes out with the response's end. */
  let ending = false;
  let done = false;
  let subscription: Subscription | undefined;

  const takeOut = (): string | Buffer => {
    const data =
      out.length === 0
        ? ""
        : out.length === 1
          ? (out[0] as string | Buffer)
          : coding === undefined
            ? out.join("")
            : Buffer.concat(out as Buffer[]);
    out = [];
    outLength = 0;
    return data;
  };
  const head = (): void => {
    if (headWritten) return;
    headWritten = true;
    exchange.writeHead();
  };
  const write = (data: string | Buffer): boolean => {
    let taken = true;
    res.cork(() => {
      head();
      taken = res.write(data);
    });
    return taken;
  };
  const endResponse = (): void => {
    if (done) return;
    done = true;
    const data = takeOut();
    res.cork(() => {
      head();
      // Whatever uWS still holds goes out before the end, then the connection is free.
      res.end(data, exchange.closes());
    });
    exchange.ended();
  };
  /** Text or its bytes for the socket, now or once it takes more. */
  const toSocket = (data: string | Buffer): void => {
    if (done) return;
    out.push(data);
    outLength += data.length;
    if (ending) return;
    if (!blocked) blocked = !write(takeOut());
    else if (outLength > highWater && demand.value) demand.next(false);
  };
  const encoder =
    coding === undefined
      ? undefined
      : streamEncoder(coding, toSocket, endResponse, () => {
          // Past the head nothing else can tell the client: its answer ends short, unterminated.
          abandon();
          res.close();
        });
  const handOn = (): void => {
    handOnScheduled = false;
    if (done || ending || texts.length === 0) return;
    const text = texts.length === 1 ? (texts[0] as string) : texts.join("");
    texts = [];
    if (encoder) encoder.write(text);
    else toSocket(text);
  };
  const stopSource = (): void => {
    subscription?.unsubscribe();
    demand.complete();
  };
  const finish = (last: string): void => {
    if (done || ending) return;
    ending = true;
    stopSource();
    const tail = texts.join("") + last;
    texts = [];
    if (encoder) {
      encoder.end(tail);
      return;
    }
    out.push(tail);
    endResponse();
  };
  /** Over without an end written; `answer`, if given, goes out instead (an error's). */
  const abandon = (answer?: () => void): void => {
    if (done) return;
    done = true;
    stopSource();
    encoder?.destroy();
    // Before `ended`: the exchange records the error's status, not the 200 of a stream's end.
    answer?.();
    exchange.ended();
  };
  const fail = (error: unknown): void => {
    if (done || ending) return;
    if (received) {
      finish(framing.errorFrame(errorFrameText(error, exchange.traceId)));
      return;
    }
    abandon(() => exchange.fail(error));
  };

  res.onWritable(() => {
    if (done) return true;
    // uWS sends what a write left behind only with a later write or a cork's end (it does not on
    // its own while a writable handler is set): the cork carries it out, pending chunks or none.
    let taken = true;
    res.cork(() => {
      if (out.length > 0) taken = res.write(takeOut());
    });
    if (taken) {
      blocked = false;
      if (!ending && !demand.value) demand.next(true);
    }
    return taken;
  });
  exchange.signal.addEventListener("abort", () => abandon(), { once: true });
  subscription = answer.elements(demand).subscribe({
    next: (element) => {
      received = true;
      texts.push(framing.frame(element, idOf?.(element)));
      if (!handOnScheduled) {
        handOnScheduled = true;
        // One write per event-loop turn: a ledger read's worth of elements arrives in one turn
        // (not one microtask), and one syscall for all of them is what keeps up with gRPC.
        setImmediate(handOn);
      }
    },
    error: fail,
    complete: () => finish(""),
  });
  if (done || ending) subscription.unsubscribe();
  return { stop: fail, waitsOnClient: () => blocked };
}
