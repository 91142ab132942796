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
 * of any thread waits for one (the freed slot is theirs). Within a queue, users in turn (each
 * user's own claims in arrival order: see FairQueue), so that one user's crowd of waiters does
 * not stand before another user's one; across threads, whichever thread takes a freed slot first
 * serves its next waiter.
 *
 * Each user (the token's subject within its issuer) holds at most a share of each purpose,
 * slots held and claims waiting together (limits.ledger-streams-per-user): counted in a table of
 * the shared quotas' kind laid out in the same buffer, so that the share holds across threads.
 * Past it a claim is refused at once ("user-share"), before it takes a slot or a place in a
 * queue: one user can neither hold the subscriptions' share nor fill a queue, however many
 * distinct (if equivalent) queries or tokens it opens streams with.
 */

import { FairQueue } from "./fair-queue.js";
import { SharedQuotas, sharedQuotaBuffer } from "./shared-quotas.js";

/** Bits of the held word below the subscriptions' count: the slots held by every purpose. */
const SUBSCRIPTIONS_SHIFT = 32n;
const TOTAL_MASK = (1n << SUBSCRIPTIONS_SHIFT) - 1n;
/** What one slot adds to the held word, by purpose. */
const UNIT = {
  subscription: (1n << SUBSCRIPTIONS_SHIFT) + 1n,
  authorization: 1n,
} as const;
const HELD_BYTES = BigInt64Array.BYTES_PER_ELEMENT;
/** A user's share that no user reaches: claims at once never pass 2^31 - 1. */
const NO_USER_SHARE = 2 ** 31 - 1;
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

export type LedgerStreamRefusalReason = "queue-full" | "queue-timeout" | "user-share";

export const LEDGER_STREAM_REFUSAL_REASONS: readonly LedgerStreamRefusalReason[] = [
  "queue-full",
  "queue-timeout",
  "user-share",
];

/**
 * Whose claim it is: a user key (src/jwt userKey). Claims whose user cannot be told (no token,
 * not a JWT) all count as one user's, so that they share one share rather than go uncounted.
 */
const UNKNOWN_USER = "?";

/**
 * Keys no user's is (a user key is a JSON array, or UNKNOWN_USER): the claims nobody judged, all
 * users together, and a user's (the prefix before its key).
 */
const UNJUDGED = "~";

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
  /**
   * Subscription slots one user may hold and wait for at once, all threads together (at least
   * 1); default: no share of its own (the budget's bounds alone).
   */
  readonly subscriptionsPerUser?: number;
  /** Authorization calls one user may have held and waiting at once (at least 1); default: no share of its own. */
  readonly authorizationsPerUser?: number;
}

/** Why a claim got no slot, and the budget it was refused by. */
export interface LedgerStreamRefusal {
  readonly reason: LedgerStreamRefusalReason;
  readonly purpose: LedgerStreamPurpose;
  readonly limit: number;
  readonly reservedForAuthorization: number;
  readonly queueLimit: number;
  readonly queueTimeoutMs: number;
  /** The user's share of `purpose` that the claim would pass ("user-share"). */
  readonly perUser: number;
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

/** The budget's words, after its table of users' shares. */
const BUDGET_BYTES = HELD_BYTES + QUEUED_WORDS * Int32Array.BYTES_PER_ELEMENT;
/** Slots of the users' table unless told: room for 3,072 users' claims (each key holds at least one claim). */
const DEFAULT_USER_SLOTS = 1 << 12;

/**
 * A buffer for one budget, shared by whoever gets it: the users' table (a shared-quotas table)
 * first, the budget's words after it. Sized for `settings`, the table has room for a key per
 * claim that can be held or waiting at once (every key stands for at least one), so that it is
 * never full while the budget's own bounds hold; were it full all the same, a new user's claim
 * is refused (fail closed).
 */
export function ledgerStreamBudgetBuffer(
  settings?: Pick<LedgerStreamBudgetSettings, "limit" | "queueLimit">,
): SharedArrayBuffer {
  const table = sharedQuotaBuffer(userSlots(settings));
  const buffer = new SharedArrayBuffer(table.byteLength + BUDGET_BYTES);
  new Int32Array(buffer).set(new Int32Array(table));
  return buffer;
}

function userSlots(settings: Pick<LedgerStreamBudgetSettings, "limit" | "queueLimit"> | undefined): number {
  if (settings === undefined) return DEFAULT_USER_SLOTS;
  // Claims at once: every slot held, a full queue of each purpose, and a few more in flight
  // between threads; the places of claims nobody judged (holdUnjudged: half the slots at most,
  // each user's key and one of all users); the table keeps its probes short below 3/4 full.
  const keys = settings.limit + 2 * settings.queueLimit + Math.ceil(settings.limit / 2) + 64;
  let slots = DEFAULT_USER_SLOTS;
  while ((slots * 3) / 4 < keys) slots *= 2;
  return slots;
}

type ClaimState = "waiting" | "held" | "done";

interface Waiter {
  state: ClaimState;
  readonly purpose: LedgerStreamPurpose;
  readonly user: string;
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
  readonly #users: SharedQuotas;
  readonly #perUser: Record<LedgerStreamPurpose, number>;
  readonly #queues: Record<LedgerStreamPurpose, FairQueue<Waiter>> = {
    subscription: new FairQueue(),
    authorization: new FairQueue(),
  };
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
    const subscriptionsPerUser = settings.subscriptionsPerUser ?? NO_USER_SHARE;
    const authorizationsPerUser = settings.authorizationsPerUser ?? NO_USER_SHARE;
    for (const [name, value] of [
      ["subscriptionsPerUser", subscriptionsPerUser],
      ["authorizationsPerUser", authorizationsPerUser],
    ] as const)
      if (!Number.isInteger(value) || value < 1 || value > Number(TOTAL_MASK >> 1n))
        throw new RangeError(`a user's share (${name}) must be an integer from 1 to 2^31 - 1, not ${value}`);
    const budgetAt = buffer.byteLength - BUDGET_BYTES;
    this.#users = new SharedQuotas(buffer);
    this.#held = new BigInt64Array(buffer, budgetAt, 1);
    this.#queued = new Int32Array(buffer, budgetAt + HELD_BYTES, QUEUED_WORDS);
    this.#settings = settings;
    this.#subscriptionLimit = limit - reserved;
    this.#perUser = { subscription: subscriptionsPerUser, authorization: authorizationsPerUser };
    this.#events = events;
  }

  get limit(): number {
    return this.#settings.limit;
  }

  get reservedForAuthorization(): number {
    return this.#settings.reservedForAuthorization;
  }

  /**
   * Asks for a slot for `purpose` on behalf of `user`. `granted` is called once one is held (at
   * once when one is free to that purpose and nobody of this thread waits before it in its
   * queue), `refused` when the user's share is taken, the queue is full or the wait too long;
   * exactly one of them, at most once. The function returned ends the claim, however often it is
   * called: a held slot is given back once, a waiter leaves the queue, a refused or ended claim
   * does nothing.
   */
  claim(
    granted: () => void,
    refused: (refusal: LedgerStreamRefusal) => void,
    purpose: LedgerStreamPurpose = "subscription",
    user: string = UNKNOWN_USER,
  ): () => void {
    const waiter: Waiter = {
      state: "waiting",
      purpose,
      user,
      since: Date.now(),
      granted,
      refused,
      timer: undefined,
    };
    const end = () => this.#end(waiter);
    // The user's share first: a claim past it takes neither a slot nor a place in a queue. A
    // full table refuses as the share does (fail closed).
    if (this.#users.acquire(userShareKey(purpose, user), this.#perUser[purpose]) !== undefined) {
      waiter.state = "done";
      this.#refuse(waiter, "user-share");
      return end;
    }
    const queue = this.#queues[purpose];
    if (queue.length === 0 && this.#take(purpose)) {
      waiter.state = "held";
      granted();
      return end;
    }
    if (!this.#enqueue(purpose)) {
      waiter.state = "done";
      this.#releaseShare(waiter);
      this.#refuse(waiter, "queue-full");
      return end;
    }
    waiter.timer = setTimeout(() => this.#timeOut(waiter), this.#settings.queueTimeoutMs);
    queue.push(user, waiter);
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

  /** Slots `user` (undefined: claims that name no user) holds and waits for now, all threads together, of `purpose`. */
  heldBy(user: string | undefined, purpose: LedgerStreamPurpose): number {
    return this.#users.count(userShareKey(purpose, user ?? UNKNOWN_USER));
  }

  /**
   * Takes a place for a claim whose token nobody has judged (neither the gateway nor the ledger:
   * see chargedStreamSlots), held and waiting, all threads together: such claims may hold at
   * most half of `user`'s share (undefined: claims that name no user), and at most half the
   * slots of `purpose` of all users together (the subscriptions' share of the budget, or the
   * reserve). So the other half of a share is for the user's own tokens, and the other half of
   * the budget for tokens someone judged, however many users forged tokens make up. The
   * function returned gives the place back, once; undefined: none left.
   */
  holdUnjudged(purpose: LedgerStreamPurpose, user: string | undefined): (() => void) | undefined {
    const slots =
      purpose === "subscription" ? this.#subscriptionLimit : this.#settings.reservedForAuthorization;
    const everyone = userShareKey(purpose, UNJUDGED);
    const own = userShareKey(purpose, `${UNJUDGED}${user ?? UNKNOWN_USER}`);
    if (this.#users.acquire(own, Math.floor(this.#perUser[purpose] / 2)) !== undefined) return undefined;
    if (this.#users.acquire(everyone, Math.floor(slots / 2)) !== undefined) {
      this.#users.release(own);
      return undefined;
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#users.release(everyone);
      this.#users.release(own);
    };
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
      this.#releaseShare(waiter);
      Atomics.sub(this.#held, 0, UNIT[waiter.purpose]);
      Atomics.notify(this.#held, 0);
      // This thread's waiters first: no need to wait for the notification to come round.
      this.#serve();
    } else if (state === "waiting") this.#leave(waiter);
  }

  /** The user's place in its share, given back once its claim is over (ended, refused). */
  #releaseShare(waiter: Waiter): void {
    this.#users.release(userShareKey(waiter.purpose, waiter.user));
  }

  #leave(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const queue = this.#queues[waiter.purpose];
    queue.remove(waiter.user, waiter);
    this.#dequeue(waiter.purpose);
    this.#releaseShare(waiter);
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
    const perUser = this.#perUser[purpose];
    this.#events.refused?.(reason, reason === "queue-timeout" ? Date.now() - waiter.since : 0, purpose);
    waiter.refused({ reason, purpose, limit, reservedForAuthorization, queueLimit, queueTimeoutMs, perUser });
  }

  /** The queue served next: authorization calls before subscriptions. */
  #next(): LedgerStreamPurpose | undefined {
    if (this.#queues.authorization.length > 0) return "authorization";
    if (this.#queues.subscription.length > 0) return "subscription";
    return undefined;
  }

  /**
   * Gives freed slots to this thread's waiters, authorization calls first, each queue's users in
   * turn; sleeps on the held word while none is free to the one served next.
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

/** The users' table key of `user`'s share of `purpose`. */
function userShareKey(purpose: LedgerStreamPurpose, user: string): string {
  return `${purpose === "subscription" ? "s" : "a"}${user}`;
}
