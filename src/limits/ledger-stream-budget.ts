/**
 * The participant's stream budget (limits.ledger-streams): the most server streams the gateway
 * has open on the ledger at once, all worker threads together, with a share of it kept for the
 * gateway's authorization calls (limits.ledger-streams-reserved-for-authorization) and a bounded
 * queue of the claims that wait for a slot.
 *
 * Two purposes claim slots. Subscriptions (WebSocket streams, list twins, fan-out upstreams and
 * catch-ups) may hold at most `limit - reservedForAuthorization`; authorization calls (the short
 * probes that ask the ledger whether a subscriber may read) may take any free slot, the reserve
 * included. So however subscriptions fill their share, an authorization call finds a slot unless
 * other authorization calls hold the reserve too: a client that opens streams cannot starve the
 * checks that would refuse it or close a revoked reader.
 *
 * Shared memory, as the quota table (shared-quotas.ts): a SharedArrayBuffer made once by the
 * main thread and handed to every gateway worker in its workerData (a single-threaded gateway
 * makes its own). One 64-bit word holds both counts, the slots held (low 32 bits) and those of
 * them held by subscriptions (high 32 bits), so that one compare-and-swap checks and takes a
 * slot against both bounds at once: neither is ever passed. Two Int32 words count the claims
 * waiting, subscriptions and authorization calls, each bounded by the queue's limit the same way.
 * A slot is given back with Atomics.sub and Atomics.notify; a thread with waiters sleeps on the
 * held word with Atomics.waitAsync (the event loop goes on) and, woken, serves its own queues.
 *
 * Authorization calls never wait behind a subscription: a thread serves its authorization queue
 * before its subscriptions' queue, and no subscription takes a slot while an authorization call
 * of any thread waits for one (the freed slot is theirs). Within a queue, arrival order; across
 * threads, whichever thread takes a freed slot first serves its oldest waiter.
 */

/** Bits of the held word below the subscriptions' count: the slots held by every purpose. */
const SUBSCRIPTIONS_SHIFT = 32n;
const TOTAL_MASK = (1n << SUBSCRIPTIONS_SHIFT) - 1n;
/** What one slot adds to the held word, by purpose. */
const UNIT = {
  subscription: (1n << SUBSCRIPTIONS_SHIFT) + 1n,
  authorization: 1n,
} as const;
const HELD_BYTES = BigInt64Array.BYTES_PER_ELEMENT;
/** The waiting claims' counts, by purpose: Int32 words after the held word. */
const QUEUED = { subscription: 0, authorization: 1 } as const;
const QUEUED_WORDS = 2;
/**
 * A waiting thread wakes at least this often to look at the counts again. A freed slot notifies
 * at once; this bounds what a notification lost to a thread that stopped (a crashed worker), or
 * raced past a subscription deciding to wait for an authorization queue that just emptied, costs.
 */
const WAIT_SLICE_MS = 1_000;

/** Node 20 has Atomics.waitAsync; TypeScript's lib declares it from es2024 on. */
const atomics = Atomics as typeof Atomics & {
  waitAsync(
    array: BigInt64Array,
    index: number,
    value: bigint,
    timeoutMs: number,
  ): { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };
};

/** What a slot is for: it decides which share of the budget it may take and which queue it waits in. */
export type LedgerStreamPurpose = "subscription" | "authorization";

export const LEDGER_STREAM_PURPOSES: readonly LedgerStreamPurpose[] = ["subscription", "authorization"];

export type LedgerStreamRefusalReason = "queue-full" | "queue-timeout";

export const LEDGER_STREAM_REFUSAL_REASONS: readonly LedgerStreamRefusalReason[] = [
  "queue-full",
  "queue-timeout",
];

export interface LedgerStreamBudgetSettings {
  /** Streams open at once, all threads together (at least 2: one for each purpose). */
  readonly limit: number;
  /**
   * Slots subscriptions may not take, all threads together: at least 1 and less than `limit`, so
   * that authorization calls always have a slot and subscriptions at least one.
   */
  readonly reservedForAuthorization: number;
  /** Claims waiting at once in each queue, all threads together; 0: none wait, past the budget is refused. */
  readonly queueLimit: number;
  /** The longest a claim waits before it is refused. */
  readonly queueTimeoutMs: number;
}

/** Why a claim got no slot, and the budget it was refused by. */
export interface LedgerStreamRefusal {
  readonly reason: LedgerStreamRefusalReason;
  readonly purpose: LedgerStreamPurpose;
  readonly limit: number;
  readonly reservedForAuthorization: number;
  readonly queueLimit: number;
  readonly queueTimeoutMs: number;
}

/** What a budget tells of itself (metrics): this thread's queues and waits, never who waits. */
export interface LedgerStreamBudgetEvents {
  /** This thread's waiting claims of `purpose`, after each change. */
  queueLength?(length: number, purpose: LedgerStreamPurpose): void;
  /** A waiter got its slot after `ms`. */
  granted?(ms: number, purpose: LedgerStreamPurpose): void;
  /** A claim refused, having waited `ms` (0: the queue was full). */
  refused?(reason: LedgerStreamRefusalReason, ms: number, purpose: LedgerStreamPurpose): void;
}

/** A buffer for one budget, shared by whoever gets it. */
export function ledgerStreamBudgetBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(HELD_BYTES + QUEUED_WORDS * Int32Array.BYTES_PER_ELEMENT);
}

type ClaimState = "waiting" | "held" | "done";

interface Waiter {
  state: ClaimState;
  readonly purpose: LedgerStreamPurpose;
  readonly since: number;
  readonly granted: () => void;
  readonly refused: (refusal: LedgerStreamRefusal) => void;
  timer: NodeJS.Timeout | undefined;
}

/** One thread's view of a budget: its own FIFO queues over the counters every thread shares. */
export class LedgerStreamBudget {
  readonly #held: BigInt64Array;
  readonly #queued: Int32Array;
  readonly #settings: LedgerStreamBudgetSettings;
  readonly #subscriptionLimit: number;
  readonly #events: LedgerStreamBudgetEvents;
  readonly #queues: Record<LedgerStreamPurpose, Waiter[]> = { subscription: [], authorization: [] };
  /** An Atomics.waitAsync of this thread is pending: one at a time. */
  #sleeping = false;

  constructor(
    buffer: SharedArrayBuffer,
    settings: LedgerStreamBudgetSettings,
    events: LedgerStreamBudgetEvents = {},
  ) {
    const { limit, reservedForAuthorization: reserved } = settings;
    if (!Number.isInteger(limit) || limit < 2 || limit > Number(TOTAL_MASK >> 1n))
      throw new RangeError(`a stream budget must be an integer from 2 to 2^31 - 1, not ${limit}`);
    if (!Number.isInteger(reserved) || reserved < 1 || reserved >= limit)
      throw new RangeError(
        `the budget's reserve for authorization calls must be an integer from 1 to ${limit - 1}, not ${reserved}`,
      );
    this.#held = new BigInt64Array(buffer, 0, 1);
    this.#queued = new Int32Array(buffer, HELD_BYTES, QUEUED_WORDS);
    this.#settings = settings;
    this.#subscriptionLimit = limit - reserved;
    this.#events = events;
  }

  get limit(): number {
    return this.#settings.limit;
  }

  get reservedForAuthorization(): number {
    return this.#settings.reservedForAuthorization;
  }

  /**
   * Asks for a slot for `purpose`. `granted` is called once one is held (at once when one is
   * free to that purpose and nobody of this thread waits before it in its queue), `refused`
   * when the queue is full or the wait too long; exactly one of them, at most once. The function
   * returned ends the claim, however often it is called: a held slot is given back once, a
   * waiter leaves the queue, a refused or ended claim does nothing.
   */
  claim(
    granted: () => void,
    refused: (refusal: LedgerStreamRefusal) => void,
    purpose: LedgerStreamPurpose = "subscription",
  ): () => void {
    const waiter: Waiter = {
      state: "waiting",
      purpose,
      since: Date.now(),
      granted,
      refused,
      timer: undefined,
    };
    const end = () => this.#end(waiter);
    const queue = this.#queues[purpose];
    if (queue.length === 0 && this.#take(purpose)) {
      waiter.state = "held";
      granted();
      return end;
    }
    if (!this.#enqueue(purpose)) {
      waiter.state = "done";
      this.#refuse(waiter, "queue-full");
      return end;
    }
    waiter.timer = setTimeout(() => this.#timeOut(waiter), this.#settings.queueTimeoutMs);
    queue.push(waiter);
    this.#events.queueLength?.(queue.length, purpose);
    this.#serve();
    return end;
  }

  /** Slots held now, all threads together: by `purpose`, or by both. */
  held(purpose?: LedgerStreamPurpose): number {
    const word = Atomics.load(this.#held, 0);
    const subscriptions = Number(word >> SUBSCRIPTIONS_SHIFT);
    const total = Number(word & TOTAL_MASK);
    if (purpose === undefined) return total;
    return purpose === "subscription" ? subscriptions : total - subscriptions;
  }

  /** Claims waiting now, all threads together: of `purpose`, or of both. */
  waiting(purpose?: LedgerStreamPurpose): number {
    if (purpose !== undefined) return Atomics.load(this.#queued, QUEUED[purpose]);
    return Atomics.load(this.#queued, QUEUED.subscription) + Atomics.load(this.#queued, QUEUED.authorization);
  }

  /** This thread's waiting claims: of `purpose`, or of both. */
  queueLength(purpose?: LedgerStreamPurpose): number {
    if (purpose !== undefined) return this.#queues[purpose].length;
    return this.#queues.subscription.length + this.#queues.authorization.length;
  }

  /** Whether a slot of `purpose` is free in the held word `word`. */
  #fits(purpose: LedgerStreamPurpose, word: bigint): boolean {
    if (Number(word & TOTAL_MASK) >= this.#settings.limit) return false;
    if (purpose === "authorization") return true;
    // A slot freed while authorization calls wait is theirs, whichever thread they wait on.
    return (
      Number(word >> SUBSCRIPTIONS_SHIFT) < this.#subscriptionLimit &&
      Atomics.load(this.#queued, QUEUED.authorization) === 0
    );
  }

  /** One slot of `purpose`, never past the budget nor, for a subscription, past its share. */
  #take(purpose: LedgerStreamPurpose): boolean {
    for (;;) {
      const word = Atomics.load(this.#held, 0);
      if (!this.#fits(purpose, word)) return false;
      if (Atomics.compareExchange(this.#held, 0, word, word + UNIT[purpose]) === word) return true;
    }
  }

  /** One place in `purpose`'s queue, never past its bound. */
  #enqueue(purpose: LedgerStreamPurpose): boolean {
    const at = QUEUED[purpose];
    for (;;) {
      const queued = Atomics.load(this.#queued, at);
      if (queued >= this.#settings.queueLimit) return false;
      if (Atomics.compareExchange(this.#queued, at, queued, queued + 1) === queued) return true;
    }
  }

  /** A place given back; subscriptions held back by the authorization calls' queue look again once it empties. */
  #dequeue(purpose: LedgerStreamPurpose): void {
    const left = Atomics.sub(this.#queued, QUEUED[purpose], 1) - 1;
    if (purpose === "authorization" && left === 0) Atomics.notify(this.#held, 0);
  }

  #end(waiter: Waiter): void {
    const state = waiter.state;
    waiter.state = "done";
    if (state === "held") {
      Atomics.sub(this.#held, 0, UNIT[waiter.purpose]);
      Atomics.notify(this.#held, 0);
      // This thread's waiters first: no need to wait for the notification to come round.
      this.#serve();
    } else if (state === "waiting") this.#leave(waiter);
  }

  #leave(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const queue = this.#queues[waiter.purpose];
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    this.#dequeue(waiter.purpose);
    this.#events.queueLength?.(queue.length, waiter.purpose);
    // A subscription behind an authorization call that left may take a slot now.
    if (waiter.purpose === "authorization") this.#serve();
  }

  #timeOut(waiter: Waiter): void {
    if (waiter.state !== "waiting") return;
    waiter.state = "done";
    this.#leave(waiter);
    this.#refuse(waiter, "queue-timeout");
  }

  #refuse(waiter: Waiter, reason: LedgerStreamRefusalReason): void {
    const { limit, reservedForAuthorization, queueLimit, queueTimeoutMs } = this.#settings;
    const { purpose } = waiter;
    this.#events.refused?.(reason, reason === "queue-full" ? 0 : Date.now() - waiter.since, purpose);
    waiter.refused({ reason, purpose, limit, reservedForAuthorization, queueLimit, queueTimeoutMs });
  }

  /** The queue served next: authorization calls before subscriptions. */
  #next(): LedgerStreamPurpose | undefined {
    if (this.#queues.authorization.length > 0) return "authorization";
    if (this.#queues.subscription.length > 0) return "subscription";
    return undefined;
  }

  /**
   * Gives freed slots to this thread's waiters, authorization calls first, each queue in arrival
   * order; sleeps on the held word while none is free to the one served next.
   */
  #serve(): void {
    for (let purpose = this.#next(); purpose !== undefined; purpose = this.#next()) {
      if (this.#take(purpose)) {
        const queue = this.#queues[purpose];
        // Out of the queue before its callback, which may end the claim (and serve) at once.
        const waiter = queue.shift() as Waiter;
        clearTimeout(waiter.timer);
        this.#dequeue(purpose);
        waiter.state = "held";
        this.#events.queueLength?.(queue.length, purpose);
        this.#events.granted?.(Date.now() - waiter.since, purpose);
        waiter.granted();
        continue;
      }
      if (this.#sleeping) return;
      // Sleep on the word seen; one freed since #take looked is taken on the next round.
      const word = Atomics.load(this.#held, 0);
      if (this.#fits(purpose, word)) continue;
      const wait = atomics.waitAsync(this.#held, 0, word, WAIT_SLICE_MS);
      // The word moved between the load and the wait: look again.
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
