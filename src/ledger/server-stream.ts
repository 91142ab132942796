import type { ClientReadableStream, ServiceError } from "@grpc/grpc-js";
import { Observable } from "rxjs";
import type { ServerStreamCall } from "./server-stream-call.js";

/**
 * What `serverStream` reads of a call: the lean channel's ServerStreamCall (the gateway's) and
 * grpc-js's ClientReadableStream (test servers of other services) both are one.
 */
interface StreamingCall<Res> {
  on(event: "data", listener: (message: Res) => void): unknown;
  on(event: "error", listener: (error: ServiceError) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  /** Messages received and not delivered yet. */
  readonly readableLength: number;
  pause(): unknown;
  resume(): unknown;
  cancel(): void;
}

/**
 * A gRPC server-streaming call as a cold, pull-based Observable: the source of every stream
 * endpoint (DESIGN.md, "The stream pipeline").
 *
 * - Each subscription calls `open()` once, so each subscriber gets its own call; `open` is where
 *   the caller binds method, request and metadata (token).
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
 *   arrived before it. OK completes the stream.
 */
export function serverStream<Res>(
  open: () => ServerStreamCall<Res> | ClientReadableStream<Res>,
  demand$?: Observable<boolean>,
): Observable<Res> {
  return new Observable<Res>((subscriber) => {
    const call: StreamingCall<Res> = open();
    let ended = false;
    // A status that arrives while messages are still buffered (paused call) must not overtake
    // them: grpc-js emits 'error' right after queueing end-of-stream, before the buffer drains
    // (the lean call holds its error back itself).
    let pendingError: ServiceError | undefined;

    const fail = (err: ServiceError): void => {
      ended = true;
      subscriber.error(err);
    };

    call.on("data", (message: Res) => subscriber.next(message));
    // Stays attached after unsubscribe: grpc-js emits the CANCELLED of our own cancel() as an
    // 'error' event, and an 'error' event without listener would crash the process.
    call.on("error", (err: ServiceError) => {
      if (subscriber.closed) return;
      if (call.readableLength > 0) pendingError = err;
      else fail(err);
    });
    call.on("end", () => {
      if (ended) return;
      ended = true;
      if (pendingError !== undefined) subscriber.error(pendingError);
      else subscriber.complete();
    });

    // Subscribed after the 'data' listener: a synchronous `false` (replayed state) must find a
    // flowing stream to pause; resume() on an already flowing stream does nothing.
    const demandSub = demand$?.subscribe({
      next: (ready) => {
        if (ready) call.resume();
        else call.pause();
      },
      error: (err: unknown) => subscriber.error(err),
    });

    return () => {
      demandSub?.unsubscribe();
      if (!ended) {
        ended = true;
        call.cancel();
      }
    };
  });
}
