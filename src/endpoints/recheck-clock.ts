/**
 * One timer per re-check interval for all the subscribers of a thread, where each had its own:
 * their re-checks come due together, so that those that ask the ledger the same question share
 * its one answer (InFlightQuestions), and 10,000 subscribers hold one timer, not 10,000. A
 * subscriber's first re-check comes at the next tick, within one interval of its start.
 */
/** A subscriber the clock re-checks: its gate. */
export interface Rechecked {
  recheck(): void;
}

class RecheckClock {
  readonly #due = new Set<Rechecked>();
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number) {}

  /**
   * Re-checks `subscriber` at every tick until `stop`: an object, not a callback, so that a
   * subscriber is on the clock for the price of none (a closure, its scope and the removal's).
   */
  every(subscriber: Rechecked): void {
    this.#due.add(subscriber);
    this.#timer ??= setInterval(() => this.#tick([...this.#due], 0), this.intervalMs);
  }

  stop(subscriber: Rechecked): void {
    this.#due.delete(subscriber);
    if (this.#due.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /**
   * A tick's re-checks, a slice per turn of the event loop: 10,000 subscribers' re-checks in one
   * callback held a worker for 100-200 ms every interval, and every stream's deliveries with it.
   * The slices follow one another within milliseconds, so that a crowd's re-checks still share
   * their questions in flight. One that left meanwhile is not asked.
   */
  #tick(due: Rechecked[], from: number): void {
    const to = Math.min(due.length, from + RECHECKS_PER_TURN);
    for (let i = from; i < to; i++) {
      const subscriber = due[i] as Rechecked;
      if (this.#due.has(subscriber)) subscriber.recheck();
    }
    if (to < due.length) setImmediate(() => this.#tick(due, to));
  }
}

/** Re-checks made in one turn of the event loop (about 5 ms of a worker's CPU). */
const RECHECKS_PER_TURN = 500;

const clocks = new Map<number, RecheckClock>();

/** The clock of `intervalMs` of this thread. */
export function recheckClock(intervalMs: number): RecheckClock {
  let clock = clocks.get(intervalMs);
  if (clock === undefined) {
    clock = new RecheckClock(intervalMs);
    clocks.set(intervalMs, clock);
  }
  return clock;
}
