import { Observable, type Subscribable } from "rxjs";
import type { ServerStreamCall } from "./server-stream-call.js";

/**
 * The calls `open` makes, one per subscription, as a cold, pull-based Observable: what
 * LedgerClient.serverStream returns, whose comment says how it behaves. Tests wrap calls to
 * servers of other services with it (test/support/lean-calls.ts).
 */
export function observeCall<Res>(
  open: () => ServerStreamCall<Res>,
  demand$?: Subscribable<boolean>,
): Observable<Res> {
  return new Observable<Res>((subscriber) => {
    const call = open();
    // The call holds its status back until the messages before it went out, and emits nothing
    // after cancel(): no 'error' of our own CANCELLED to swallow, no status to hold here.
    call.on("data", (message) => subscriber.next(message));
    call.on("error", (error) => subscriber.error(error));
    call.on("end", () => subscriber.complete());

    // Subscribed after the 'data' listener: a synchronous `false` (replayed state) must find a
    // flowing call to pause; resume() on a flowing call does nothing.
    const demandSub = demand$?.subscribe({
      next: (ready) => {
        if (ready) call.resume();
        else call.pause();
      },
      error: (error: unknown) => subscriber.error(error),
    });

    return () => {
      demandSub?.unsubscribe();
      // Nothing once the call ended: its status went out.
      call.cancel();
    };
  });
}
