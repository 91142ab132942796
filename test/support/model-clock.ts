/**
 * Virtual time for a model-based test: `Date.now`, `setTimeout`, `setInterval` and `setImmediate`
 * (and their clears) replaced on the global object while installed, so that the code under test,
 * which reads them at call time (the gate's re-check clock, question deadlines, token expiry
 * timers, the stream budget's queue timeout, the fan-out's handovers and replay turns, RxJS's
 * async scheduler in the resume of a lost call), runs on the test's time.
 *
 * Unlike node:test's mock timers, time moves from one due timer to the next with every promise
 * settled in between (`advance`), as it does on a real event loop: a deadline cannot fire before
 * the answer that came in the same instant was read, and a step of 10 s is a few dozen turns, not
 * 10,000. The real `setImmediate` is kept aside: awaiting it drains the microtask queue.
 */

const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  clearImmediate: globalThis.clearImmediate,
  dateNow: Date.now,
};

/** Turns of immediates one settle may take before it calls the system a livelock. */
const MAX_TURNS = 100_000;

type Callback = (...args: unknown[]) => void;

/** A virtual timer, shaped like node's Timeout/Immediate as far as the code under test uses them. */
class VirtualTimer {
  cleared = false;
  /** Order among timers due together: when it was set, or re-armed. */
  seq: number;

  constructor(
    readonly id: number,
    public due: number,
    readonly repeat: number | undefined,
    readonly callback: Callback,
    readonly args: unknown[],
  ) {
    this.seq = id;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  hasRef(): boolean {
    return false;
  }

  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

export class ModelClock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, VirtualTimer>();
  #immediates: VirtualTimer[] = [];
  #installed = false;

  constructor(start: number) {
    this.#now = start;
  }

  get now(): number {
    return this.#now;
  }

  install(): void {
    if (this.#installed) throw new Error("a model clock is installed already");
    this.#installed = true;
    const g = globalThis as unknown as Record<string, unknown>;
    Date.now = () => this.#now;
    g.setTimeout = (callback: Callback, ms?: number, ...args: unknown[]) =>
      this.#schedule(callback, ms, undefined, args);
    g.setInterval = (callback: Callback, ms?: number, ...args: unknown[]) =>
      this.#schedule(callback, ms, Math.max(1, Number(ms) || 0), args);
    g.clearTimeout = g.clearInterval = (timer: unknown) => this.#clear(timer);
    g.setImmediate = (callback: Callback, ...args: unknown[]) => {
      const immediate = new VirtualTimer(this.#nextId++, this.#now, undefined, callback, args);
      this.#immediates.push(immediate);
      return immediate;
    };
    g.clearImmediate = (immediate: unknown) => {
      if (immediate instanceof VirtualTimer) immediate.cleared = true;
    };
  }

  /** Puts the real functions back; pending virtual timers are dropped. */
  uninstall(): void {
    if (!this.#installed) return;
    this.#installed = false;
    const g = globalThis as unknown as Record<string, unknown>;
    Date.now = real.dateNow;
    g.setTimeout = real.setTimeout;
    g.clearTimeout = real.clearTimeout;
    g.setInterval = real.setInterval;
    g.clearInterval = real.clearInterval;
    g.setImmediate = real.setImmediate;
    g.clearImmediate = real.clearImmediate;
    this.#timers.clear();
    this.#immediates = [];
  }

  /**
   * Runs what is due now until nothing is: every promise settled, then the immediates queued
   * meanwhile, in turns, as node's event loop does.
   */
  async settle(): Promise<void> {
    for (let turn = 0; ; turn += 1) {
      await new Promise<void>((resolve) => real.setImmediate(resolve));
      if (this.#immediates.length === 0) return;
      if (turn > MAX_TURNS) throw new Error(`immediates still queued after ${MAX_TURNS} turns: a livelock`);
      const batch = this.#immediates;
      this.#immediates = [];
      for (const immediate of batch) if (!immediate.cleared) immediate.callback(...immediate.args);
    }
  }

  /** Moves time `ms` on, firing each timer at its due time with everything settled in between. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await this.settle();
    for (let next = this.#nextDue(target); next !== undefined; next = this.#nextDue(target)) {
      this.#now = Math.max(this.#now, next.due);
      if (next.repeat === undefined) this.#timers.delete(next.id);
      else {
        next.due = this.#now + next.repeat;
        next.seq = this.#nextId++;
      }
      next.callback(...next.args);
      await this.settle();
    }
    this.#now = target;
    await this.settle();
  }

  #schedule(callback: Callback, ms: number | undefined, repeat: number | undefined, args: unknown[]) {
    // As node: a delay below 1 ms (or none, or not a number) is 1 ms.
    const delay = Math.max(1, Number(ms) || 0);
    const timer = new VirtualTimer(this.#nextId++, this.#now + delay, repeat, callback, args);
    this.#timers.set(timer.id, timer);
    return timer;
  }

  #clear(timer: unknown): void {
    const id = timer instanceof VirtualTimer ? timer.id : typeof timer === "number" ? timer : undefined;
    if (id === undefined) return;
    const found = this.#timers.get(id);
    if (found !== undefined) found.cleared = true;
    this.#timers.delete(id);
  }

  /** The earliest timer due by `target` (the first set among those due together). */
  #nextDue(target: number): VirtualTimer | undefined {
    let next: VirtualTimer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.due > target) continue;
      if (next === undefined || timer.due < next.due || (timer.due === next.due && timer.seq < next.seq))
        next = timer;
    }
    return next;
  }
}
