/**
 * The pace at which a worker admits WebSocket upgrades (websocket-config.upgrades-per-second),
 * so that a reconnect storm (every subscriber of a restarted gateway or a moved balancer at
 * once) cannot take the worker's CPU from the subscribers that are already streaming: each start
 * costs the worker a few hundred µs, 10,000 of them in one turn several seconds. A generic cell
 * rate algorithm: one upgrade per `1 / perSecond` s, a burst of 50 ms worth at once; an upgrade
 * past that waits for its slot, at most `maxWaitMs`; one that would wait longer is refused (503
 * with Retry-After, clients reconnect later) and takes no slot.
 */
export type Pace =
  | { readonly kind: "now" }
  | { readonly kind: "wait"; readonly ms: number }
  | { readonly kind: "refuse"; readonly retryAfterSeconds: number };

const NOW: Pace = { kind: "now" };

/** The burst a pacer lets through at once: this long's worth of its rate. */
const BURST_MS = 50;

export class UpgradePacer {
  readonly #intervalMs: number;
  readonly #toleranceMs: number;
  readonly #maxWaitMs: number;
  readonly #now: () => number;
  /** When the next upgrade's slot is due, were there no burst (the algorithm's theoretical arrival time). */
  #due = Number.NEGATIVE_INFINITY;

  constructor(perSecond: number, maxWaitMs: number, now: () => number = performance.now.bind(performance)) {
    this.#intervalMs = 1000 / perSecond;
    this.#toleranceMs = Math.max(0, Math.floor((perSecond * BURST_MS) / 1000) - 1) * this.#intervalMs;
    this.#maxWaitMs = maxWaitMs;
    this.#now = now;
  }

  /** Takes the next slot: now, after a wait, or none (refused). */
  take(): Pace {
    const now = this.#now();
    const due = Math.max(this.#due, now);
    const wait = due - now - this.#toleranceMs;
    if (wait > this.#maxWaitMs) {
      return { kind: "refuse", retryAfterSeconds: Math.max(1, Math.ceil((wait - this.#maxWaitMs) / 1000)) };
    }
    this.#due = due + this.#intervalMs;
    return wait <= 0 ? NOW : { kind: "wait", ms: wait };
  }
}
