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
    this.#timer ??= setInterval(() => {
      for (const due of [...this.#due]) due();
    }, this.intervalMs);
    return () => {
      this.#due.delete(recheck);
      if (this.#due.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }
}

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
