import type { HttpResponse } from "uWebSockets.js";

/**
 * usockets sweeps its timeouts every 4 s, so uWS's 10 s HTTP timeout fires 8 to 12 s after it
 * was armed: armed afresh every 4 s, it never fires.
 */
const REARM_MS = 4000;

interface Held {
  readonly res: HttpResponse;
  readonly waitsOnClient: () => boolean;
}

/**
 * Keeps uWS's HTTP timeout from cutting answers the gateway is still making. uWS arms that
 * timeout (10 s) while a request's body arrives and when a paused request is resumed (body-reader.ts
 * pauses a body that must wait for its read), and disarms it only at a writable event of a response with an `onWritable`
 * handler: an answer that takes longer than that to make (a streamed list twin, a list waiting
 * out `stream_idle_timeout_ms`, a slow ledger) was cut some 10 s after its body arrived, while
 * its client took everything (issue 35). uWS.js offers no call that sets the timeout, but
 * `pause()` disarms it and `resume()` arms it afresh: together, every few seconds, they keep it
 * from firing. While a write waits for the client (`waitsOnClient`), the timeout is left to
 * uWS, which arms it at every write the socket did not take: a client that takes nothing is
 * cut, as uWS means it to be. A body being read is held too (body-reader.ts): uWS would cut one
 * that arrives slower than 16 kB/s without an answer, where server.body-read-timeout answers 408.
 * One clock for all the answers and bodies held, running only while there are.
 */
export class UwsTimeoutHold {
  readonly #held = new Set<Held>();
  #clock: NodeJS.Timeout | undefined;

  /**
   * Holds `res`'s timeout off until the returned release, which must come before the response is
   * ended or right at its abort (uWS.js throws on a discarded response).
   */
  hold(res: HttpResponse, waitsOnClient: () => boolean): () => void {
    const held: Held = { res, waitsOnClient };
    this.#held.add(held);
    this.#clock ??= setInterval(() => this.#rearm(), REARM_MS).unref();
    return () => {
      this.#held.delete(held);
      if (this.#held.size === 0 && this.#clock !== undefined) {
        clearInterval(this.#clock);
        this.#clock = undefined;
      }
    };
  }

  #rearm(): void {
    for (const { res, waitsOnClient } of this.#held) {
      if (waitsOnClient()) continue;
      res.pause();
      res.resume();
    }
  }
}
