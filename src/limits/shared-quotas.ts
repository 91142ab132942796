/**
 * Counters and rate limits keyed by string, in memory every thread of the process shares: a
 * SharedArrayBuffer made once (by the main thread, handed to each gateway worker in its
 * workerData), so that a cap holds across all workers together. Single-threaded gateways use
 * the same code over a buffer of their own.
 *
 * The table: open addressing with linear probing over a power-of-two number of slots, keyed by
 * a 64-bit hash of the key (two keys sharing one share a counter: with n keys held, a chance of
 * about n²/2^65). One spinlock guards it: an operation is a few probes, far shorter than any
 * wait, and a lock lets a counter that drops to 0 leave its slot (backward-shift deletion) with
 * no tombstones and no race between two threads inserting one key. Each slot holds a count (a
 * cap's slots held) and a GCRA time (a token bucket written as the time its tokens would all be
 * back: a key whose time has passed is a full bucket, the same as none).
 *
 * Full (more than 3/4 of the slots hold a key, so that probes stay short): the full buckets go
 * first; if that frees nothing, a new key is refused (`table-full`) while keys already held
 * work as before. Every held key stands for at least one open socket, stream or request, so the
 * table is full only when the process holds that many distinct users' and addresses' things.
 * A thread killed while it holds the lock would leave it held: the gateway terminates a worker
 * only when the whole gateway stops (a drain that did not end in time).
 */

/** Slots of a table unless told: 1.5 MiB, up to 49,152 keys held at once. */
const DEFAULT_QUOTA_SLOTS = 1 << 16;

export type QuotaRefusalReason = "limit" | "table-full";

/** Why a slot or a token was not given, and when asking again may succeed. */
export interface TableRefusal {
  readonly reason: QuotaRefusalReason;
  /** For a rate: when a token is back; for a count: unknown (a slot frees when its holder ends). */
  readonly retryAfterMs: number | undefined;
}

const LOCK = 0;
const USED = 1;
const SLOTS = 2;
const HEADER_BYTES = 16;
/** Four Int32 words (hash high, hash low, count, unused) and one Float64 (the GCRA time). */
const SLOT_BYTES = 24;
const SLOT_INTS = SLOT_BYTES / 4;
const SLOT_FLOATS = SLOT_BYTES / 8;
const HASH_HI = 0;
const HASH_LO = 1;
const COUNT = 2;
const INT_WORDS = 4;
/** Spins before the lock's waiter sleeps (in 1 ms steps) until the holder lets go. */
const SPINS_BEFORE_WAIT = 100;

/** A buffer for a table of `slots` slots (a power of two, at least 4), shared by whoever gets it. */
export function sharedQuotaBuffer(slots = DEFAULT_QUOTA_SLOTS): SharedArrayBuffer {
  if (!Number.isInteger(slots) || slots < 4 || (slots & (slots - 1)) !== 0)
    throw new RangeError(`quota table slots must be a power of two of at least 4, not ${slots}`);
  const buffer = new SharedArrayBuffer(HEADER_BYTES + slots * SLOT_BYTES);
  new Int32Array(buffer)[SLOTS] = slots;
  return buffer;
}

/** One view of a shared table: any number of them, in any threads, over one buffer. */
export class SharedQuotas {
  readonly #ints: Int32Array;
  readonly #floats: Float64Array;
  readonly #slots: number;
  readonly #maxUsed: number;

  constructor(
    buffer: SharedArrayBuffer,
    /** Milliseconds since the epoch: the same clock in every thread (performance.now's origin is per thread). */
    private readonly now: () => number = Date.now,
  ) {
    this.#ints = new Int32Array(buffer);
    this.#floats = new Float64Array(buffer);
    this.#slots = Atomics.load(this.#ints, SLOTS);
    this.#maxUsed = (this.#slots * 3) / 4;
  }

  /** Takes one of `limit` slots of `key`; a refusal takes nothing. */
  acquire(key: string, limit: number): TableRefusal | undefined {
    return this.#locked(key, (slot) => {
      if (slot < 0) return { reason: "table-full", retryAfterMs: undefined };
      const at = this.#int(slot, COUNT);
      if ((this.#ints[at] as number) >= limit) return { reason: "limit", retryAfterMs: undefined };
      this.#ints[at] = (this.#ints[at] as number) + 1;
      return undefined;
    });
  }

  /** Gives back one slot of `key` taken by acquire. */
  release(key: string): void {
    this.#locked(key, (slot) => {
      if (slot < 0) return;
      const at = this.#int(slot, COUNT);
      if ((this.#ints[at] as number) > 0) this.#ints[at] = (this.#ints[at] as number) - 1;
      this.#removeIfIdle(slot);
    });
  }

  /**
   * Takes a token of `key`'s bucket, which holds `burst` and gains `perSecond` a second (GCRA:
   * the slot keeps the time at which the bucket would be full again).
   */
  take(key: string, perSecond: number, burst: number): TableRefusal | undefined {
    const now = this.now();
    const interval = 1000 / perSecond;
    const tolerance = (burst - 1) * interval;
    return this.#locked(key, (slot) => {
      if (slot < 0) return { reason: "table-full", retryAfterMs: interval };
      const at = this.#float(slot);
      // A clock set back leaves no bucket emptier than `burst` takes would.
      const full = Math.min(Math.max(this.#floats[at] as number, now), now + burst * interval);
      if (full - now > tolerance) return { reason: "limit", retryAfterMs: full - now - tolerance };
      this.#floats[at] = full + interval;
      return undefined;
    });
  }

  /** The slots of `key` held now (tests, diagnostics). */
  count(key: string): number {
    const [hi, lo] = keyHash(key);
    this.#lock();
    try {
      const slot = this.#find(hi, lo);
      return slot < 0 ? 0 : (this.#ints[this.#int(slot, COUNT)] as number);
    } finally {
      this.#unlock();
    }
  }

  /** Keys held now. */
  size(): number {
    return Atomics.load(this.#ints, USED);
  }

  /** Runs `use` under the lock with `key`'s slot, made if missing; -1 when the table is full. */
  #locked<T>(key: string, use: (slot: number) => T): T {
    const [hi, lo] = keyHash(key);
    this.#lock();
    try {
      return use(this.#slotOf(hi, lo));
    } finally {
      this.#unlock();
    }
  }

  #lock(): void {
    for (let spins = 0; Atomics.compareExchange(this.#ints, LOCK, 0, 1) !== 0; spins++) {
      if (spins >= SPINS_BEFORE_WAIT) Atomics.wait(this.#ints, LOCK, 1, 1);
    }
  }

  #unlock(): void {
    Atomics.store(this.#ints, LOCK, 0);
    Atomics.notify(this.#ints, LOCK, 1);
  }

  #int(slot: number, word: number): number {
    return HEADER_BYTES / 4 + slot * SLOT_INTS + word;
  }

  #float(slot: number): number {
    return HEADER_BYTES / 8 + slot * SLOT_FLOATS + 2;
  }

  #home(lo: number): number {
    return (lo >>> 0) & (this.#slots - 1);
  }

  #isEmpty(slot: number): boolean {
    return this.#ints[this.#int(slot, HASH_LO)] === 0;
  }

  /** The slot holding hash (hi, lo), or -1. */
  #find(hi: number, lo: number): number {
    for (let i = 0, slot = this.#home(lo); i < this.#slots; i++, slot = (slot + 1) & (this.#slots - 1)) {
      if (this.#isEmpty(slot)) return -1;
      if (this.#ints[this.#int(slot, HASH_LO)] === lo && this.#ints[this.#int(slot, HASH_HI)] === hi)
        return slot;
    }
    return -1;
  }

  #slotOf(hi: number, lo: number): number {
    const found = this.#find(hi, lo);
    if (found >= 0) return found;
    if ((this.#ints[USED] as number) >= this.#maxUsed) this.#evictFullBuckets();
    if ((this.#ints[USED] as number) >= this.#maxUsed) return -1;
    let slot = this.#home(lo);
    while (!this.#isEmpty(slot)) slot = (slot + 1) & (this.#slots - 1);
    this.#ints[this.#int(slot, HASH_HI)] = hi;
    this.#ints[this.#int(slot, HASH_LO)] = lo;
    this.#ints[this.#int(slot, COUNT)] = 0;
    this.#floats[this.#float(slot)] = 0;
    Atomics.store(this.#ints, USED, (this.#ints[USED] as number) + 1);
    return slot;
  }

  /** A slot with no count and a full bucket holds nothing: it goes. */
  #removeIfIdle(slot: number, now = this.now()): boolean {
    if (this.#ints[this.#int(slot, COUNT)] !== 0 || (this.#floats[this.#float(slot)] as number) > now)
      return false;
    this.#remove(slot);
    return true;
  }

  #evictFullBuckets(): void {
    const now = this.now();
    // A removal shifts a later key into `slot`: it is looked at before moving on.
    for (let slot = 0; slot < this.#slots; ) {
      if (this.#isEmpty(slot) || !this.#removeIfIdle(slot, now)) slot++;
    }
  }

  /** Backward-shift deletion: the keys after it move up, so that no probe stops short of its key. */
  #remove(slot: number): void {
    const mask = this.#slots - 1;
    let hole = slot;
    for (let next = (hole + 1) & mask; !this.#isEmpty(next); next = (next + 1) & mask) {
      const home = this.#home(this.#ints[this.#int(next, HASH_LO)] as number);
      // `next` may move into the hole when its home is not cyclically within (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      for (let w = 0; w < INT_WORDS; w++)
        this.#ints[this.#int(hole, w)] = this.#ints[this.#int(next, w)] as number;
      this.#floats[this.#float(hole)] = this.#floats[this.#float(next)] as number;
      hole = next;
    }
    this.#ints[this.#int(hole, HASH_HI)] = 0;
    this.#ints[this.#int(hole, HASH_LO)] = 0;
    Atomics.store(this.#ints, USED, (this.#ints[USED] as number) - 1);
  }
}

/** A 64-bit hash of `key` as two Int32 words (cyrb53's mixing); the low word is never 0 (0: an empty slot). */
function keyHash(key: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 | 0, h2 | 1];
}
