/**
 * The pace at which a worker upgrades WebSockets (websocket-config.upgrades-per-second), so that
 * a reconnect storm (every subscriber of a restarted gateway or a moved balancer at once) cannot
 * take the worker's CPU from the subscribers that are already streaming: each start costs the
 * worker a few hundred µs, most of it the upgrade itself, and 10,000 at once seconds.
 *
 * Two steps. At arrival (`arrive`), a generic cell rate algorithm decides whether the upgrade is
 * taken: one per `1 / perSecond` s, a burst of 50 ms worth; one that would wait longer than
 * `maxWaitMs` for its slot is refused (503 with Retry-After) and takes no slot, the refused told
 * to come back one slot apart, in the order refused, so that they return at the pace rather than
 * at once. A taken upgrade's ledger admission is asked at once (so that the upgrades of a token
 * in flight together share one question). Then the upgrades themselves (`release`) go out at the
 * pace from a queue, a burst of 50 ms worth at most, whatever batch the ledger's answers came in:
 * a shared answer admits hundreds at once, and upgrading them in one go is what stalls a worker.
 */
export type Arrival =
  | { readonly kind: "taken" }
  | { readonly kind: "refuse"; readonly retryAfterSeconds: number };

const TAKEN: Arrival = { kind: "taken" };

/** The burst a pacer lets through at once: this long's worth of its rate. */
const BURST_MS = 50;
/**
 * How often a queue of upgrades is served while it waits: a turn's upgrades go out together (a
 * burst's worth), so that their query frames join their streams together and share the
 * ledger's admission of each token and query.
 */
const TURN_MS = 50;

export class UpgradePacer {
  readonly #intervalMs: number;
  readonly #toleranceMs: number;
  readonly #maxWaitMs: number;
  readonly #burst: number;
  readonly #perSecond: number;
  readonly #now: () => number;
  /** When the next upgrade's slot is due, were there no burst (the algorithm's theoretical arrival time). */
  #due = Number.NEGATIVE_INFINITY;
  /** The slot the last refused upgrade was told to come back for: the next refused, one later. */
  #told = Number.NEGATIVE_INFINITY;
  /** Upgrades admitted and waiting to go out, oldest first. */
  #queue: (() => void)[] = [];
  /** Upgrades the release may make now (a token bucket of `#burst`), as of `#filledAt`. */
  #allowance: number;
  #filledAt: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(perSecond: number, maxWaitMs: number, now: () => number = performance.now.bind(performance)) {
    this.#perSecond = perSecond;
    this.#intervalMs = 1000 / perSecond;
    this.#burst = Math.max(1, Math.floor((perSecond * BURST_MS) / 1000));
    this.#toleranceMs = (this.#burst - 1) * this.#intervalMs;
    this.#maxWaitMs = maxWaitMs;
    this.#now = now;
    this.#allowance = this.#burst;
    this.#filledAt = now();
  }

  /** An upgrade arrives: taken (it will go out within `maxWaitMs`), or refused with when to come back. */
  arrive(): Arrival {
    const now = this.#now();
    const due = Math.max(this.#due, now);
    if (due - now - this.#toleranceMs > this.#maxWaitMs) {
      this.#told = Math.max(this.#told, due) + this.#intervalMs;
      return { kind: "refuse", retryAfterSeconds: Math.max(1, Math.ceil((this.#told - now) / 1000)) };
    }
    this.#due = due + this.#intervalMs;
    return TAKEN;
  }

  /** Runs `upgrade` at the pace: now if the allowance has room and nothing waits, else in its turn. */
  release(upgrade: () => void): void {
    this.#queue.push(upgrade);
    this.#serve();
  }

  /** Upgrades waiting to go out, for tests. */
  get waiting(): number {
    return this.#queue.length;
  }

  #serve(): void {
    const now = this.#now();
    this.#allowance = Math.min(
      this.#burst,
      this.#allowance + ((now - this.#filledAt) * this.#perSecond) / 1000,
    );
    this.#filledAt = now;
    let served = 0;
    while (served < this.#queue.length && this.#allowance >= 1) {
      this.#allowance -= 1;
      served++;
    }
    const due = this.#queue.slice(0, served);
    this.#queue = served === 0 ? this.#queue : this.#queue.slice(served);
    if (this.#queue.length > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#serve();
      }, TURN_MS);
    }
    for (const upgrade of due) upgrade();
  }
}
