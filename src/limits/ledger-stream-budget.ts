/**
 * The participant's stream budget (limits.ledger-streams): the most server streams the gateway
 * has open on the ledger at once, all worker threads together, and a bounded queue of the
 * subscriptions that wait for one.
 *
 * Shared memory, as the quota table (shared-quotas.ts): a SharedArrayBuffer made once by the
 * main thread and handed to every gateway worker in its workerData (a single-threaded gateway
 * makes its own). Two Int32 words: the slots held and the subscriptions waiting, each changed
 * by compare-and-swap only, so neither ever passes its bound. A slot is given back with
 * Atomics.sub and Atomics.notify; a thread with waiters sleeps on the held count with
 * Atomics.waitAsync (the event loop goes on) and, woken, serves its own queue in arrival order.
 * Waiters are FIFO within a thread; across threads, whichever thread takes a freed slot first
 * serves its oldest waiter.
 */

const HELD = 0;
const QUEUED = 1;
const WORDS = 2;
/**
 * A waiting thread wakes at least this often to look at the count again. A freed slot notifies
 * at once; this bounds what a notification lost to a thread that stopped (a crashed worker) costs.
 */
const WAIT_SLICE_MS = 1_000;

/** Node 20 has Atomics.waitAsync; TypeScript's lib declares it from es2024 on. */
const atomics = Atomics as typeof Atomics & {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
    timeoutMs: number,
  ): { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };
};

export type LedgerStreamRefusalReason = "queue-full" | "queue-timeout";

export const LEDGER_STREAM_REFUSAL_REASONS: readonly LedgerStreamRefusalReason[] = [
  "queue-full",
  "queue-timeout",
];

export interface LedgerStreamBudgetSettings {
  /** Streams open at once, all threads together (at least 1). */
  readonly limit: number;
  /** Subscriptions waiting at once, all threads together; 0: none wait, past the budget is refused. */
  readonly queueLimit: number;
  /** The longest a subscription waits before it is refused. */
  readonly queueTimeoutMs: number;
}

/** Why a subscription got no slot, and the budget it was refused by. */
export interface LedgerStreamRefusal {
  readonly reason: LedgerStreamRefusalReason;
  readonly limit: number;
  readonly queueLimit: number;
  readonly queueTimeoutMs: number;
}

/** What a budget tells of itself (metrics): this thread's queue and waits, never who waits. */
export interface LedgerStreamBudgetEvents {
  /** This thread's waiting subscriptions, after each change. */
  queueLength?(length: number): void;
  /** A waiter got its slot after `ms`. */
  granted?(ms: number): void;
  /** A subscription refused, having waited `ms` (0: the queue was full). */
  refused?(reason: LedgerStreamRefusalReason, ms: number): void;
}

/** A buffer for one budget, shared by whoever gets it. */
export function ledgerStreamBudgetBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(WORDS * Int32Array.BYTES_PER_ELEMENT);
}

type ClaimState = "waiting" | "held" | "done";

interface Waiter {
  state: ClaimState;
  readonly since: number;
  readonly granted: () => void;
  readonly refused: (refusal: LedgerStreamRefusal) => void;
  timer: NodeJS.Timeout | undefined;
}

/** One thread's view of a budget: its own FIFO queue over the counters every thread shares. */
export class LedgerStreamBudget {
  readonly #ints: Int32Array;
  readonly #settings: LedgerStreamBudgetSettings;
  readonly #events: LedgerStreamBudgetEvents;
  readonly #queue: Waiter[] = [];
  /** An Atomics.waitAsync of this thread is pending: one at a time. */
  #sleeping = false;

  constructor(
    buffer: SharedArrayBuffer,
    settings: LedgerStreamBudgetSettings,
    events: LedgerStreamBudgetEvents = {},
  ) {
    if (!Number.isInteger(settings.limit) || settings.limit < 1)
      throw new RangeError(`a stream budget must be a positive integer, not ${settings.limit}`);
    this.#ints = new Int32Array(buffer, 0, WORDS);
    this.#settings = settings;
    this.#events = events;
  }

  get limit(): number {
    return this.#settings.limit;
  }

  /**
   * Asks for a slot. `granted` is called once one is held (at once when one is free and nobody
   * of this thread waits before it), `refused` when the queue is full or the wait too long;
   * exactly one of them, at most once. The function returned ends the claim, however often it
   * is called: a held slot is given back once, a waiter leaves the queue, a refused or ended
   * claim does nothing.
   */
  claim(granted: () => void, refused: (refusal: LedgerStreamRefusal) => void): () => void {
    const waiter: Waiter = { state: "waiting", since: Date.now(), granted, refused, timer: undefined };
    const end = () => this.#end(waiter);
    if (this.#queue.length === 0 && this.#take()) {
      waiter.state = "held";
      granted();
      return end;
    }
    if (!this.#enqueue()) {
      waiter.state = "done";
      this.#refuse(waiter, "queue-full");
      return end;
    }
    waiter.timer = setTimeout(() => this.#timeOut(waiter), this.#settings.queueTimeoutMs);
    this.#queue.push(waiter);
    this.#events.queueLength?.(this.#queue.length);
    this.#serve();
    return end;
  }

  /** Slots held now, all threads together. */
  held(): number {
    return Atomics.load(this.#ints, HELD);
  }

  /** Subscriptions waiting now, all threads together. */
  waiting(): number {
    return Atomics.load(this.#ints, QUEUED);
  }

  /** This thread's waiting subscriptions. */
  queueLength(): number {
    return this.#queue.length;
  }

  /** One slot, never past the budget. */
  #take(): boolean {
    for (;;) {
      const held = Atomics.load(this.#ints, HELD);
      if (held >= this.#settings.limit) return false;
      if (Atomics.compareExchange(this.#ints, HELD, held, held + 1) === held) return true;
    }
  }

  /** One place in the queue, never past its bound. */
  #enqueue(): boolean {
    for (;;) {
      const queued = Atomics.load(this.#ints, QUEUED);
      if (queued >= this.#settings.queueLimit) return false;
      if (Atomics.compareExchange(this.#ints, QUEUED, queued, queued + 1) === queued) return true;
    }
  }

  #end(waiter: Waiter): void {
    const state = waiter.state;
    waiter.state = "done";
    if (state === "held") {
      Atomics.sub(this.#ints, HELD, 1);
      Atomics.notify(this.#ints, HELD);
      // This thread's waiters first: no need to wait for the notification to come round.
      this.#serve();
    } else if (state === "waiting") this.#leave(waiter);
  }

  #leave(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const at = this.#queue.indexOf(waiter);
    if (at >= 0) this.#queue.splice(at, 1);
    Atomics.sub(this.#ints, QUEUED, 1);
    this.#events.queueLength?.(this.#queue.length);
  }

  #timeOut(waiter: Waiter): void {
    if (waiter.state !== "waiting") return;
    waiter.state = "done";
    this.#leave(waiter);
    this.#refuse(waiter, "queue-timeout");
  }

  #refuse(waiter: Waiter, reason: LedgerStreamRefusalReason): void {
    const { limit, queueLimit, queueTimeoutMs } = this.#settings;
    this.#events.refused?.(reason, reason === "queue-full" ? 0 : Date.now() - waiter.since);
    waiter.refused({ reason, limit, queueLimit, queueTimeoutMs });
  }

  /** Gives freed slots to this thread's waiters in arrival order; sleeps on the count while none is free. */
  #serve(): void {
    while (this.#queue.length > 0) {
      if (this.#take()) {
        // Out of the queue before its callback, which may end the claim (and serve) at once.
        const waiter = this.#queue.shift() as Waiter;
        clearTimeout(waiter.timer);
        Atomics.sub(this.#ints, QUEUED, 1);
        waiter.state = "held";
        this.#events.queueLength?.(this.#queue.length);
        this.#events.granted?.(Date.now() - waiter.since);
        waiter.granted();
        continue;
      }
      if (this.#sleeping) return;
      // Sleep on the full count seen; one freed since #take looked is taken on the next round.
      const held = Atomics.load(this.#ints, HELD);
      if (held < this.#settings.limit) continue;
      const wait = atomics.waitAsync(this.#ints, HELD, held, WAIT_SLICE_MS);
      // The count moved between the load and the wait: look again.
      if (!wait.async) continue;
      this.#sleeping = true;
      void wait.value.then(() => {
        this.#sleeping = false;
        this.#serve();
      });
      return;
    }
  }
}
