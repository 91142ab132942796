/**
 * One timer per re-check interval for all the subscribers of a thread, where each had its own.
 * The subscribers of one token come due together, so that those that ask the ledger the same
 * question share its one answer (InFlightQuestions); different tokens come due in different
 * phases of the interval. All at once, a crowd of 100 tokens' re-checks asked 100 questions in one
 * go and took their answers and its 10,000 subscribers' reactions at once: some 150 ms of a
 * worker every interval, every stream's deliveries held behind it. A subscriber's first re-check
 * comes at its phase's next tick, within one interval of its start, and then one every interval.
 */
/** A subscriber the clock re-checks: its gate. */
export interface Rechecked {
  recheck(): void;
}

/** The phases an interval is cut into: ticks this far apart (500 ms of 5 s). */
const PHASES = 10;

class RecheckClock {
  /** The subscribers of each phase. */
  readonly #phases: Set<Rechecked>[] = Array.from({ length: PHASES }, () => new Set());
  #size = 0;
  /** The phase the next tick re-checks. */
  #next = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number) {}

  /**
   * Re-checks `subscriber` once an interval, in the phase of `group` (its token, by digest:
   * subscribers of one group share a phase), until `stop`. An object, not a callback, so that a
   * subscriber is on the clock for the price of none (a closure, its scope and the removal's).
   */
  every(subscriber: Rechecked, group: string | undefined): void {
    const phase = this.#phases[phaseOf(group)] as Set<Rechecked>;
    if (phase.has(subscriber)) return;
    phase.add(subscriber);
    this.#size++;
    this.#timer ??= setInterval(() => this.#tickPhase(), this.intervalMs / PHASES);
  }

  stop(subscriber: Rechecked): void {
    for (const phase of this.#phases) {
      if (!phase.delete(subscriber)) continue;
      this.#size--;
      break;
    }
    if (this.#size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #tickPhase(): void {
    const phase = this.#phases[this.#next] as Set<Rechecked>;
    this.#next = (this.#next + 1) % PHASES;
    if (phase.size > 0) this.#tick(phase, [...phase], 0);
  }

  /**
   * A phase's re-checks, a slice per turn of the event loop: 10,000 subscribers' re-checks in one
   * callback held a worker for 100-200 ms, and every stream's deliveries with it. The slices
   * follow one another within milliseconds, so that a crowd's re-checks still share their
   * questions in flight. One that left meanwhile is not asked.
   */
  #tick(phase: Set<Rechecked>, due: Rechecked[], from: number): void {
    const to = Math.min(due.length, from + RECHECKS_PER_TURN);
    for (let i = from; i < to; i++) {
      const subscriber = due[i] as Rechecked;
      if (phase.has(subscriber)) subscriber.recheck();
    }
    if (to < due.length) setImmediate(() => this.#tick(phase, due, to));
  }
}

/** Re-checks made in one turn of the event loop (about 5 ms of a worker's CPU). */
const RECHECKS_PER_TURN = 500;

/**
 * A group's phase, from the end of its text (a digest's hex, or a token's signature: a JWT's
 * start is its header, the same for every token of an issuer). None: the first phase.
 */
function phaseOf(group: string | undefined): number {
  if (group === undefined) return 0;
  let hash = 0;
  for (let i = Math.max(0, group.length - 8); i < group.length; i++)
    hash = (hash * 31 + group.charCodeAt(i)) | 0;
  return (hash >>> 0) % PHASES;
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
