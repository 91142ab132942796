import type { HttpResponse } from "uWebSockets.js";
import { BehaviorSubject, type Subscription } from "rxjs";
import type { StreamedAnswer } from "../endpoints/route.js";

/** What the writer needs of the exchange it answers. */
export interface StreamedExchange {
  readonly res: HttpResponse;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** Whether the answer ends the connection. */
  closes(): boolean;
  /** Writes the status line and headers of the 200 (called inside a cork). */
  writeHead(): void;
  /** The stream failed before its first chunk: answered as any request's error is. */
  fail(error: unknown): void;
  /** The answer is over (ended, failed or abandoned): settles the exchange. Idempotent. */
  ended(): void;
}

/**
 * Writes a streamed answer as its chunks arrive. Chunks arriving together (one gRPC read) are
 * written in one go. After a write the socket did not take whole, chunks wait in the gateway
 * until uWS reports the socket writable again, and past `highWater` characters waiting the source
 * is paused (demand false) until they are written: a client that falls behind for a moment costs
 * nothing, a slow one holds the gateway to about `highWater`, one write's remainder in uWS and
 * what was in flight when the source paused, never the stream. A client that takes nothing for
 * 10 s after a write it did not take is cut by uWS (its HTTP timeout); the source is then
 * cancelled.
 *
 * Returns `stop`: end the stream now with `error` (the gateway shutting down).
 */
export function writeStreamed(
  exchange: StreamedExchange,
  answer: StreamedAnswer,
  highWater: number,
): (error: unknown) => void {
  const { res } = exchange;
  if (exchange.signal.aborted) {
    exchange.ended();
    return () => {};
  }
  const demand = new BehaviorSubject(true);
  let pending: string[] = [];
  /** Characters in `pending`: its bytes for JSON's ASCII, fewer for other text. */
  let pendingLength = 0;
  let received = false;
  let headWritten = false;
  let flushScheduled = false;
  let blocked = false;
  let done = false;
  let subscription: Subscription | undefined;

  const write = (text: string): boolean => {
    let taken = true;
    res.cork(() => {
      if (!headWritten) {
        headWritten = true;
        exchange.writeHead();
      }
      taken = res.write(text);
    });
    return taken;
  };
  const takePending = (): string => {
    const text = pending.length === 1 ? (pending[0] as string) : pending.join("");
    pending = [];
    pendingLength = 0;
    return text;
  };
  const flush = (): void => {
    flushScheduled = false;
    if (done || blocked || pending.length === 0) return;
    blocked = !write(takePending());
  };
  const finish = (last: string): void => {
    if (done) return;
    done = true;
    subscription?.unsubscribe();
    demand.complete();
    const text = takePending() + last;
    res.cork(() => {
      if (!headWritten) {
        headWritten = true;
        exchange.writeHead();
      }
      // Whatever uWS still holds goes out before the end, then the connection is free.
      res.end(text, exchange.closes());
    });
    exchange.ended();
  };
  const fail = (error: unknown): void => {
    if (done) return;
    if (received) {
      finish(answer.errorChunk(error));
      return;
    }
    done = true;
    subscription?.unsubscribe();
    demand.complete();
    exchange.fail(error);
    exchange.ended();
  };

  res.onWritable(() => {
    if (done) return true;
    // uWS sends what a write left behind only with a later write or a cork's end (it does not on
    // its own while a writable handler is set): the cork carries it out, pending chunks or none.
    let taken = true;
    res.cork(() => {
      if (pending.length > 0) taken = res.write(takePending());
    });
    if (taken) {
      blocked = false;
      if (!demand.value) demand.next(true);
    }
    return taken;
  });
  exchange.signal.addEventListener(
    "abort",
    () => {
      if (done) return;
      done = true;
      subscription?.unsubscribe();
      demand.complete();
      exchange.ended();
    },
    { once: true },
  );
  subscription = answer.chunks(demand).subscribe({
    next: (chunk) => {
      received = true;
      pending.push(chunk);
      pendingLength += chunk.length;
      if (blocked) {
        if (pendingLength > highWater && demand.value) demand.next(false);
      } else if (!flushScheduled) {
        flushScheduled = true;
        queueMicrotask(flush);
      }
    },
    error: fail,
    complete: () => finish(""),
  });
  if (done) subscription.unsubscribe();
  return fail;
}
