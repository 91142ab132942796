/**
 * A shared element as the history holds it: its bytes (encoded once for every member's socket),
 * and its text only once a replay decoded it again. Bytes live outside the JavaScript heap,
 * texts in it: thousands of texts held in case of a replay would be copied and marked by every
 * garbage collection of a stream that nobody replays (one subscriber, texts and bytes held,
 * alternated: 44.5-57.5 µs of gateway CPU per 1.3 KB element with 8 MiB held, 37.5-42.5 with
 * 1.4 MB), while a crowd replaying the same elements decodes each once.
 */
export interface HeldElement {
  readonly bytes: Uint8Array;
  readonly offset: number;
  readonly checkpoint: boolean;
  /** Set by the first replay that needs it. */
  text: string | undefined;
}

/** A shared element as the stream hands it out. */
export interface SharedElement {
  readonly text: string;
  readonly bytes: Uint8Array;
  readonly offset: number;
  readonly checkpoint: boolean;
}

/**
 * Where a reader stands: the offset of the last element it had, and whether that element was a
 * checkpoint (a checkpoint may carry the offset of the transaction before it, so a reader at an
 * offset may or may not have had the checkpoint there).
 */
export interface Position {
  readonly offset: number;
  readonly checkpoint: boolean;
}

/** Ends a hold; a second call does nothing, so a hold cannot be released twice. */
export type Release = () => void;

/** A reader the history holds elements for: `last` is the offset of the last element it had. */
interface Reader {
  readonly last: number;
}

export interface ReplayHistoryLimits {
  /**
   * Bytes of the latest elements kept in any case (their UTF-8 bytes, what a replay sends); 0:
   * none, the history only knows where it starts. Bytes, not a count: what a history costs and
   * what a replay sends grow with the elements' size, which a count says nothing about.
   */
  readonly bytes: number;
  /**
   * Bytes the history may grow to past `bytes` for each reader held for (up to
   * {@link MAX_HELD_READERS} of them) while a hold needs the elements from its offset on: a
   * reader that is held for must not cost more than its socket alone might have buffered.
   */
  readonly heldBytes: number;
}

/**
 * Held readers whose `heldBytes` add up: a history shared by a crowd that lags (a replay read by
 * one client at its own pace: the readers take turns being the slowest and spread over tens of
 * MiB) keeps what its slowest need instead of sending them onto ledger calls of their own, which
 * transcode every element again for one reader; readers that stop at the same place still cost
 * a bounded history (8 hard limits, 128 MiB by default), not one hard limit each.
 */
export const MAX_HELD_READERS = 8;

/** Dropped elements kept in the array before it is cut: cutting it costs a copy of the rest. */
const MIN_CUT = 1024;

/**
 * The latest elements of a shared call, so that a reader behind it (admitted late, or skipped
 * while over its high-water mark) is replayed from them instead of opening a call of its own.
 *
 * The history knows the position it starts after: a reader at or after it is covered (every
 * later element is held or still to come), a reader before it would see a gap. Holds keep the
 * elements a known reader still needs past the element limit, bounded by bytes: past that the
 * oldest go anyway, and the caller learns that the start moved so that it can move the readers
 * no longer covered elsewhere.
 */
export class ReplayHistory {
  readonly #limits: ReplayHistoryLimits;
  /**
   * Oldest first from `#head`: dropping an element only moves the head, and the array is cut once
   * the dropped prefix outweighs the rest, so that remembering stays cheap per element.
   */
  #elements: HeldElement[] = [];
  #head = 0;
  #bytes = 0;
  #start: Position = { offset: 0, checkpoint: false };
  /** One object per hold, so that two holds for one reader are released one by one. */
  readonly #holds = new Set<{ readonly reader: Reader }>();
  /** The lowest held offset, as last read (see hold). */
  #floor = Number.POSITIVE_INFINITY;
  /**
   * A hold ended since the floor was read: it is read again when an element is to be dropped, not
   * at each release (a crowd's admissions release thousands of holds in one turn; reading the
   * rest at each was N² over a reconnect storm). Until then the floor is at most the true one:
   * readers only move on and holds only went away, so the history keeps more, never less.
   */
  #floorStale = false;

  constructor(limits: ReplayHistoryLimits) {
    this.#limits = limits;
  }

  /** Before its first element: the history starts where its shared call starts. */
  startAfter(offset: number): void {
    this.#start = { offset, checkpoint: false };
  }

  /**
   * Whether every element after `last` is held or still to come. A checkpoint at the start's
   * offset that was dropped is a gap for a reader at that offset, unless the reader's element
   * there was itself a checkpoint.
   */
  covers(last: Position): boolean {
    const start = this.#start;
    return (
      last.offset > start.offset || (last.offset === start.offset && (last.checkpoint || !start.checkpoint))
    );
  }

  /**
   * The held elements from the first at `offset` on, oldest first. Those at `offset` itself are
   * included: whether a reader there lacks one (a checkpoint) is the reader's to judge, as it
   * goes, since each element it takes changes what it has.
   */
  *atOrAfter(offset: number): Generator<HeldElement> {
    for (let i = this.indexAtOrAfter(offset), held = this.at(i); held !== undefined; held = this.at(++i))
      yield held;
  }

  /**
   * Where {@link atOrAfter} starts, for {@link at}: a replay walks the history by index, with no
   * iterator result per element (a crowd's replays are most of its deliveries). Valid until the
   * history takes its next element or is cleared.
   */
  indexAtOrAfter(offset: number): number {
    // Offsets never go down along the history.
    let low = this.#head;
    let high = this.#elements.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.#elements[middle] as HeldElement).offset < offset) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The element at `index` (see {@link indexAtOrAfter}); undefined past the newest. */
  at(index: number): HeldElement | undefined {
    return this.#elements[index];
  }

  /**
   * Adds the newest element and drops the oldest past the limits. True when the start moved:
   * a reader held for may no longer be covered.
   */
  remember(element: HeldElement): boolean {
    const { bytes: limit } = this.#limits;
    const heldBytes = this.#limits.heldBytes * Math.min(this.#holds.size, MAX_HELD_READERS);
    if (limit <= 0) {
      this.#drop(element);
      return true;
    }
    this.#elements.push(element);
    this.#bytes += element.bytes.byteLength;
    let dropped = false;
    // The newest element stays even when it alone is past the limit: a history never holds less
    // than the last element, so that a reader at the shared position is covered.
    while (this.#bytes > limit && this.#elements.length - this.#head > 1) {
      const oldest = this.#elements[this.#head] as HeldElement;
      if (oldest.offset >= this.#heldFloor() && this.#bytes <= heldBytes) break;
      this.#drop(oldest);
      this.#bytes -= oldest.bytes.byteLength;
      this.#head += 1;
      dropped = true;
    }
    if (this.#head >= Math.max(MIN_CUT, this.#elements.length - this.#head)) {
      this.#elements = this.#elements.slice(this.#head);
      this.#head = 0;
    }
    return dropped;
  }

  /**
   * Keeps the elements from the reader's offset on past the element limit, up to `heldBytes` for
   * each reader held for (at most {@link MAX_HELD_READERS}) in all, until released. The offset is
   * read as the hold starts, and again once a hold ended, when an element is next to be dropped:
   * a reader may have moved on meanwhile.
   */
  hold(reader: Reader): Release {
    const hold = { reader };
    this.#holds.add(hold);
    this.#floor = Math.min(this.#floor, reader.last);
    return () => {
      if (this.#holds.delete(hold)) this.#floorStale = true;
    };
  }

  /** The lowest offset a hold needs, read again once a hold ended (see #floorStale). */
  #heldFloor(): number {
    if (this.#floorStale) {
      this.#floorStale = false;
      let floor = Number.POSITIVE_INFINITY;
      for (const { reader: held } of this.#holds) floor = Math.min(floor, held.last);
      this.#floor = floor;
    }
    return this.#floor;
  }

  /** Lets go of every element: their stream is over. */
  clear(): void {
    this.#elements = [];
    this.#head = 0;
    this.#bytes = 0;
  }

  #drop(element: HeldElement): void {
    const start = this.#start;
    this.#start = {
      offset: element.offset,
      checkpoint: element.checkpoint || (element.offset === start.offset && start.checkpoint),
    };
  }
}
