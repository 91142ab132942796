import type { Observer, Subscribable, Subscription } from "rxjs";
import type { Member } from "./member.js";
import type { FanoutEvents, RotationCause, UpstreamCloseReason } from "./subscription.js";

interface UpstreamCallOptions {
  /** The stream's members, live: whose token the call may move onto. */
  readonly members: ReadonlySet<Member>;
  /** Where each call reopens: after the last shared element. */
  readonly position: () => number;
  readonly demand$: Subscribable<boolean>;
  /** Whichever call runs, its elements, its error and its end go here. */
  readonly observer: Observer<string>;
  readonly events: FanoutEvents;
  /**
   * How long before its token expires the call moves onto a member's token that expires later
   * (the ledger ends a call when its token expires).
   */
  readonly rotateBeforeExpiryMs: number;
}

/** The shared member whose token expires last (the newest of those alike), else any member's. */
function lastToExpire(members: Iterable<Member>): Member | undefined {
  let shared: Member | undefined;
  let any: Member | undefined;
  for (const member of members) {
    if (any === undefined || member.expiresAt >= any.expiresAt) any = member;
    if (member.mode === "shared" && (shared === undefined || member.expiresAt >= shared.expiresAt))
      shared = member;
  }
  return shared ?? any;
}

/**
 * The one ledger call of a shared stream, kept on a token the ledger accepts: the call runs on
 * its owner's token, and the ledger ends a call when that token expires or is refused, or the
 * owner leaves. The call then moves (is reopened from the shared position) onto another member's
 * token, which the members never see.
 */
export class UpstreamCall {
  readonly #options: UpstreamCallOptions;
  #endpoint = "";
  #opened = false;
  #owner: Member | undefined;
  #call: Subscription | undefined;
  #handoverScheduled = false;
  /** Due shortly before the owner's token expires (see checkExpiry). */
  #expiryTimer: NodeJS.Timeout | undefined;
  /** When #expiryTimer is due (epoch ms): a join that finds it armed for then leaves it. */
  #expiryDue = 0;
  #closed = false;

  constructor(options: UpstreamCallOptions) {
    this.#options = options;
  }

  get opened(): boolean {
    return this.#opened;
  }

  /** The member whose token the call runs on; undefined while none runs. */
  get owner(): Member | undefined {
    return this.#owner;
  }

  open(owner: Member): void {
    if (!this.#opened) {
      this.#opened = true;
      this.#endpoint = owner.request.endpoint;
      this.#options.events.upstreamOpened?.(this.#endpoint);
    }
    this.#owner = owner;
    const { source, share } = owner.request;
    const { position, demand$, observer } = this.#options;
    this.#call = source.open(share.from(position()), owner.token, demand$).subscribe(observer);
    this.checkExpiry();
  }

  /** A member joined while no call runs and none is due: every member had left while it was admitted. */
  resumeOn(member: Member): void {
    if (this.#call !== undefined || this.#handoverScheduled) return;
    this.#options.events.handover?.(this.#endpoint);
    this.open(member);
  }

  /**
   * Cancels the owner's call at once (its token is no longer the stream's) and reopens it on
   * another member's token after this turn: members that leave together cost one reopen, or none
   * when they were the last.
   */
  handOver(): void {
    this.#call?.unsubscribe();
    this.#call = undefined;
    this.#owner = undefined;
    if (this.#handoverScheduled) return;
    this.#handoverScheduled = true;
    setImmediate(() => {
      this.#handoverScheduled = false;
      if (this.#closed || this.#call !== undefined) return;
      const next = lastToExpire(this.#options.members);
      if (next === undefined) return;
      this.#options.events.handover?.(this.#endpoint);
      this.open(next);
    });
  }

  /** The call failed with its owner's token refused: nothing is left to cancel, the owner leaves next. */
  dropped(): void {
    this.#call = undefined;
  }

  /** A member's token was renewed: the owner's call moves onto it now, before the old one expires. */
  renewed(member: Member): void {
    if (member === this.#owner && this.#call !== undefined) this.#rotate(member, "renewal");
    else this.checkExpiry();
  }

  /**
   * Within `rotateBeforeExpiryMs` of the owner's expiry, the call moves onto the member whose
   * token expires last, if that is later; before, a timer comes back then. Asked again when a
   * member joins, splices in or renews: it may be the later one.
   */
  checkExpiry(): void {
    const owner = this.#owner;
    const due =
      owner === undefined || this.#call === undefined || this.#closed
        ? Number.POSITIVE_INFINITY
        : owner.expiresAt - this.#options.rotateBeforeExpiryMs;
    const wait = due - Date.now();
    // A crowd joining one call asks at each join: the timer armed for the same owner's expiry
    // stays (a timer and its closure a join less).
    if (wait > 0 && this.#expiryTimer !== undefined && this.#expiryDue === due) return;
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
    if (owner === undefined || due === Number.POSITIVE_INFINITY) return;
    if (wait > 0) {
      // setTimeout's limit is 2^31 - 1 ms: a later expiry is looked at again then.
      this.#expiryDue = due;
      this.#expiryTimer = setTimeout(
        () => {
          this.#expiryTimer = undefined;
          this.checkExpiry();
        },
        Math.min(wait, 2 ** 31 - 1),
      );
      this.#expiryTimer.unref();
      return;
    }
    const later = lastToExpire(this.#options.members);
    if (later !== undefined && later.expiresAt > owner.expiresAt) this.#rotate(later, "expiry");
  }

  close(reason: UpstreamCloseReason): void {
    this.#closed = true;
    clearTimeout(this.#expiryTimer);
    this.#call?.unsubscribe();
    this.#call = undefined;
    this.#owner = undefined;
    if (this.#opened) this.#options.events.upstreamClosed?.(this.#endpoint, reason);
  }

  #rotate(owner: Member, cause: RotationCause): void {
    this.#call?.unsubscribe();
    this.#options.events.rotated?.(this.#endpoint, cause);
    this.open(owner);
  }
}
