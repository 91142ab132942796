/**
 * The pace at which a worker admits WebSocket upgrades (websocket-config.upgrades-per-second),
 * so that a reconnect storm (every subscriber of a restarted gateway or a moved balancer at
 * once) cannot take the worker's CPU from the subscribers that are already streaming: each start
 * costs the worker a few hundred µs, 10,000 of them at once seconds. A generic cell rate
 * algorithm: one upgrade per `1 / perSecond` s, a burst of 50 ms worth at once. An upgrade past
 * that waits for its slot, at most `maxWaitMs`; the waits end on 20 ms turns, so that the
 * upgrades of a turn go on together (and share their ledger questions: one token's admission is
 * asked once for those in flight together). One that would wait longer is refused (503 with
 * Retry-After) and takes no slot; the refused are told to come back one slot apart, in the order
 * they were refused, so that they return at the pace rather than all at once.
 */
export type Pace =
  | { readonly kind: "now" }
  | { readonly kind: "wait"; readonly ms: number }
  | { readonly kind: "refuse"; readonly retryAfterSeconds: number };

const NOW: Pace = { kind: "now" };

/** The burst a pacer lets through at once: this long's worth of its rate. */
const BURST_MS = 50;
/** Waits end on turns of this length: a turn's upgrades go on together. */
const TURN_MS = 20;

export class UpgradePacer {
  readonly #intervalMs: number;
  readonly #toleranceMs: number;
  readonly #maxWaitMs: number;
  readonly #now: () => number;
  /** When the next upgrade's slot is due, were there no burst (the algorithm's theoretical arrival time). */
  #due = Number.NEGATIVE_INFINITY;
  /** The slot the last refused upgrade was told to come back for: the next refused, one later. */
  #told = Number.NEGATIVE_INFINITY;

  constructor(perSecond: number, maxWaitMs: number, now: () => number = performance.now.bind(performance)) {
    this.#intervalMs = 1000 / perSecond;
    this.#toleranceMs = Math.max(0, Math.floor((perSecond * BURST_MS) / 1000) - 1) * this.#intervalMs;
    this.#maxWaitMs = maxWaitMs;
    this.#now = now;
  }

  /** Takes the next slot: now, after a wait, or none (refused, with when to come back). */
  take(): Pace {
    const now = this.#now();
    const due = Math.max(this.#due, now);
    const wait = due - now - this.#toleranceMs;
    if (wait > this.#maxWaitMs) {
      this.#told = Math.max(this.#told, due) + this.#intervalMs;
      return { kind: "refuse", retryAfterSeconds: Math.max(1, Math.ceil((this.#told - now) / 1000)) };
    }
    this.#due = due + this.#intervalMs;
    return wait <= 0 ? NOW : { kind: "wait", ms: Math.ceil(wait / TURN_MS) * TURN_MS };
  }
}
