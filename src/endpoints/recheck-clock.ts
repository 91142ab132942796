/**
 * One timer per re-check interval for all the subscribers of a thread, where each had its own:
 * their re-checks come due together, so that those that ask the ledger the same question share
 * its one answer (InFlightQuestions), and 10,000 subscribers hold one timer, not 10,000. A
 * subscriber's first re-check comes at the next tick, within one interval of its start.
 */
class RecheckClock {
  readonly #due = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number) {}

  /** Calls `recheck` at every tick until the returned function is called. */
  every(recheck: () => void): () => void {
    this.#due.add(recheck);
    this.#timer ??= setInterval(() => this.#tick([...this.#due], 0), this.intervalMs);
    return () => {
      this.#due.delete(recheck);
      if (this.#due.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /**
   * A tick's re-checks, a slice per turn of the event loop: 10,000 subscribers' re-checks in one
   * callback held a worker for 100-200 ms every interval, and every stream's deliveries with it.
   * The slices follow one another within milliseconds, so that a crowd's re-checks still share
   * their questions in flight. One that left meanwhile is not asked.
   */
  #tick(due: (() => void)[], from: number): void {
    const to = Math.min(due.length, from + RECHECKS_PER_TURN);
    for (let i = from; i < to; i++) {
      const recheck = due[i] as () => void;
      if (this.#due.has(recheck)) recheck();
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
