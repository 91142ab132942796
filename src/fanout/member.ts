import type { Subscriber, Subscription, Unsubscribable } from "rxjs";
import type { Position, Release, SharedElement } from "./replay-history.js";
import type { MemberMode, MemberRequest } from "./subscription.js";

/**
 * Where a subscriber's teardown leads: the stream it is a member of now. A member handed from a
 * catch-up stream to the main one takes its seat along, so that its subscriber leaves the right one.
 */
export interface Seat {
  /** Its place in the stream it is a member of now (none before it joined). */
  place: { leave(): void } | undefined;
}

/** Where a member handed over from another stream of the same request starts. */
export interface MemberStart {
  readonly position: Position;
  /** Its token then: it may have renewed it since its request came. */
  readonly token: string | undefined;
}

/** One subscriber of a shared stream. */
export class Member {
  mode: MemberMode = "shared";
  /** The offset of the last element handed to the subscriber: it gets only elements after it. */
  last: number;
  /** The element at `last` was a checkpoint: another checkpoint at that offset is a duplicate. */
  lastCheckpoint = false;
  ready = true;
  /** Shared elements held while catching up; undefined: not registered for a splice. */
  buffer: SharedElement[] | undefined;
  /** The shared position when the buffer started: the own call splices once it reaches it. */
  spliceAt = 0;
  own: Subscription | undefined;
  demand: Unsubscribable | undefined;
  renewals: Unsubscribable | undefined;
  /** The token its calls are opened with: its request's, or the latest it renewed to. */
  token: string | undefined;
  /** When the ledger stops accepting `token` (epoch ms; never: infinity). */
  expiresAt: number;
  /**
   * Set while in shared mode and not ready: skipped, and replayed from the history when it
   * drains; the history holds what comes after `last` for it until this is called.
   */
  lagging: Release | undefined;

  constructor(
    readonly request: MemberRequest,
    readonly subscriber: Subscriber<string>,
    readonly seat: Seat,
    start?: MemberStart,
  ) {
    this.last = start?.position.offset ?? request.share.begin;
    this.lastCheckpoint = start?.position.checkpoint ?? false;
    this.token = start === undefined ? request.token : start.token;
    this.expiresAt = request.source.expiryOf(this.token) ?? Number.POSITIVE_INFINITY;
  }

  position(): Position {
    return { offset: this.last, checkpoint: this.lastCheckpoint };
  }

  /**
   * Whether an element comes after what the member has: a later offset, or a checkpoint at the
   * member's offset that it has not had (a checkpoint may carry the offset of the transaction
   * before it, or the subscriber's `beginExclusive`).
   */
  lacks(offset: number, checkpoint: boolean): boolean {
    return offset > this.last || (offset === this.last && checkpoint && !this.lastCheckpoint);
  }
}
