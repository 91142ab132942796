import { BehaviorSubject, distinctUntilChanged, type Subscriber, Subscription } from "rxjs";
import { Member, type MemberStart, type Seat } from "./member.js";
import { ReplayHistory, type SharedElement } from "./replay-history.js";
import type {
  CatchUpCause,
  FanoutEvents,
  MemberMode,
  MemberRequest,
  SharedPosition,
  SharedPositionReader,
  UpstreamCloseReason,
} from "./subscription.js";
import { UpstreamCall } from "./upstream-call.js";

export interface SharedStreamOptions {
  /** Shared elements a catching-up member may hold before it stays on its own call instead. */
  readonly catchUpBuffer: number;
  /**
   * Bytes the history may grow by past `historyBytes` for each member that lags and each
   * admission asked (up to MAX_HELD_READERS of them): the elements after its offset are kept for
   * it (the per-socket hard limit: what its socket alone might have buffered).
   */
  readonly lagBytes: number;
  /**
   * Bytes of the latest shared elements the stream keeps, so that an admitted subscriber whose
   * offset they cover (one that joined while its admission was asked, or a crowd replaying from
   * the same offset) is replayed from them and reads the shared call at once instead of catching
   * up on a call of its own, and a member that lags for a while (its socket over its high-water
   * mark) is replayed from them once it drains. At most `lagBytes`.
   */
  readonly historyBytes: number;
  readonly events: FanoutEvents;
  /** Called once the stream has no member and no upstream left. */
  readonly onClosed: () => void;
  /** Where the stream puts each shared element's bytes while it hands the element to a member. */
  readonly delivering: DeliverySlot;
  /**
   * How long before its token expires the shared call moves onto a member's token that expires
   * later (the ledger ends a call when its token expires).
   */
  readonly rotateBeforeExpiryMs: number;
  /**
   * Set on a catch-up stream (one call shared by subscribers that joined too far behind the main
   * stream's history): the main stream of its request, if one runs, to which each member moves
   * once the main stream's history covers it. Its call counts as a catch-up, not an upstream.
   */
  readonly catchUpOf?: () => SharedStream | undefined;
}

/** A held element's text again, for a replay (the history holds bytes only: HeldElement). */
function textOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

/**
 * Bytes of the history a member is replayed in one turn: a socket's high-water mark's worth
 * (websocket-config.high-water-mark's default, 1 MiB) would let its demand pause it only after
 * the whole of it was queued; a quarter of it keeps the socket's buffer below the mark while the
 * replay runs, at a turn per 256 KiB (some 200 elements of 1.3 KB).
 */
const REPLAY_TURN_BYTES = 256 * 1024;

/**
 * The UTF-8 bytes of the shared element being handed to a member right now, so that the member's
 * socket sends the Buffer the stream encoded once instead of encoding the text again (see
 * SharedStreams.bytesOf). Set around each synchronous `next`; the text is the key, so a stale or
 * foreign lookup can only miss, never return another element's bytes.
 */
export class DeliverySlot {
  text: string | undefined;
  bytes: Uint8Array | undefined;

  bytesOf(text: string): Uint8Array | undefined {
    return text === this.text ? this.bytes : undefined;
  }
}

/**
 * One ledger stream for every subscriber of the same request.
 *
 * - The upstream (one gRPC call) runs on its owner's token from the first member's offset; each
 *   element's text is parsed (offset, checkpoint) and encoded to UTF-8 once, and goes to every
 *   member in shared mode whose last offset is before it: the same string to all (transcoded
 *   once), its one Buffer in the delivery slot, which their sockets send (encoded once).
 * - The stream keeps its latest `historyBytes` of elements (with their offsets, checkpoint flags
 *   and Buffers): an admitted member whose offset they cover gets the ones after its offset (same
 *   rules as the splice) and reads the shared call at once, with no call of its own.
 * - Admitted subscribers behind the history share a catch-up stream: a stream like this one
 *   (`catchUpOf` set, see SharedStreams) on the first one's token from its offset, which others
 *   from the offsets it has not passed (or still holds) join; each of its members moves to the
 *   main stream once the main history covers it, replayed from there, and the catch-up call ends
 *   with its last member.
 * - A member behind the history that was not admitted (a request with no probe), or that fell
 *   behind it, catches up on its own call from its offset while it buffers the shared elements
 *   (bounded); when its own call reaches the position the buffer
 *   started at, the own call is cancelled and the buffer is replayed from after the member's last
 *   offset: by offset, so no gap and no duplicate (a checkpoint at a transaction's offset is not
 *   replayed twice: only offsets strictly after the last one go out). Past the bound it stays
 *   on its own call and registers again when its socket is ready.
 * - A member over its high-water mark lags: it is skipped while the others go on, and replayed
 *   from the history when its socket drains. While it lags (and while an admission is asked),
 *   the history keeps the elements after its offset, `lagBytes` for each such reader (so that a
 *   replay crowd read at one client's pace stays on the shared call); a member the history no
 *   longer covers is detached onto its own call from its last offset. The upstream pauses only
 *   when no shared member is ready.
 * - When the owner leaves, the upstream is cancelled at once and reopened from the shared
 *   position on another member's token once the members that leave in the same turn are gone (a
 *   client closing many sockets costs one reopen); the members see nothing of it. When the ledger
 *   refuses the owner's token, the members on that very token end with the refusal and the call
 *   moves the same way; the others see nothing of it.
 * - Nothing here decides what a member may read: each member's elements pass its own gate
 *   (src/endpoints/stream-authorization.ts), which the admission probe and the member's own calls
 *   only inform.
 * - The ledger ends a call when the token it was opened with expires: the upstream moves (is
 *   reopened from the shared position) onto its owner's renewed token, and, shortly before the
 *   owner's token expires, onto the member's token that expires last, if later. The members see
 *   nothing of it either.
 */
export class SharedStream {
  readonly #options: SharedStreamOptions;
  readonly #members = new Set<Member>();
  readonly #demand = new BehaviorSubject<boolean>(true);
  readonly #upstream: UpstreamCall;
  /** Offset of the last shared element (or the upstream's begin). */
  #position = 0;
  readonly #history: ReplayHistory;
  /** Shared members over their high-water mark, skipped until they drain. */
  readonly #lagging = new Set<Member>();
  /** The member whose join runs: not handed off before it is a member in full. */
  #joining: Member | undefined;
  /** Admissions being asked: the stream stays for them when its members are gone. */
  #reservations = 0;
  #closed = false;

  constructor(options: SharedStreamOptions) {
    this.#options = options;
    // A stream keeps no more for everyone than it may keep for one lagging member.
    this.#history = new ReplayHistory({
      bytes: Math.min(options.historyBytes, options.lagBytes),
      heldBytes: options.lagBytes,
    });
    const { upstreamOpened: _opened, upstreamClosed: _closed, ...catchUpEvents } = options.events;
    this.#upstream = new UpstreamCall({
      members: this.#members,
      position: () => this.#position,
      demand$: this.#demand.pipe(distinctUntilChanged()),
      observer: {
        next: (text) => this.#shared(text),
        error: (error: unknown) => this.#upstreamFailed(error),
        complete: () => this.#upstreamCompleted(),
      },
      // A catch-up stream's call is counted as the catch-up it is (see join).
      events: options.catchUpOf === undefined ? options.events : catchUpEvents,
      rotateBeforeExpiryMs: options.rotateBeforeExpiryMs,
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Its call was opened: it has a position and a history. */
  get opened(): boolean {
    return this.#upstream.opened;
  }

  /** The offset of the last shared element (or the upstream's begin): the ledger has reached it. */
  get position(): number {
    return this.#position;
  }

  /**
   * Whether a subscriber admitted for this request from `position` would read everything after it
   * here, from the history or the call still to come, with no call of its own.
   */
  covers(position: { readonly offset: number; readonly checkpoint: boolean }): boolean {
    return !this.#closed && this.#upstream.opened && this.#history.covers(position);
  }

  /** Members by mode, for tests and logs. */
  members(): Record<MemberMode, number> {
    const counts: Record<MemberMode, number> = { shared: 0, catching_up: 0, own: 0 };
    for (const member of this.#members) counts[member.mode] += 1;
    return counts;
  }

  /**
   * Keeps the elements after `begin` in the history while a subscriber's admission is asked
   * (bounded by `lagBytes`), so that it joins from them instead of catching up on a call of
   * its own; returns the release. Nothing to keep when `begin` is already behind the history.
   */
  reserve(begin: number): () => void {
    if (this.#closed || !this.#history.covers({ offset: begin, checkpoint: false })) return () => undefined;
    const release = this.#history.hold({ last: begin });
    this.#reservations += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      this.#reservations -= 1;
      // The stream outlived its members for this admission: refused or gone, nobody needs it.
      if (this.#members.size === 0 && this.#reservations === 0) this.#close("last_member_left");
    };
  }

  /**
   * Adds a subscriber; its seat holds its place (its way out) from then on. `admitted`: the ledger
   * admitted its token for this request, so it may read shared elements without a call of its
   * own. `start`: a member handed over from a catch-up stream, where it stands there.
   */
  join(
    request: MemberRequest,
    subscriber: Subscriber<string>,
    admitted: boolean,
    seat: Seat,
    start?: MemberStart,
  ): void {
    const member = new Member(request, subscriber, seat, start);
    this.#members.add(member);
    this.#joining = member;
    if (!this.#upstream.opened) {
      this.#setMode(member, "shared", undefined);
      this.#position = member.last;
      this.#history.startAfter(member.last);
      this.#upstream.open(member);
      if (this.#options.catchUpOf === undefined) this.#joined(request, "direct");
      else this.#caughtUpFor(request, "late_join");
    } else if (admitted && this.#history.covers(member.position())) {
      // Everything after its offset is at hand: the history's rest, then the shared call.
      this.#replay(member);
      this.#setMode(member, "shared", undefined);
      if (this.#options.catchUpOf !== undefined)
        request.told?.event("fanout.catch_up", { cause: "late_join" });
      else this.#joined(request, start === undefined ? "direct" : "splice");
      this.#updateDemand();
    } else {
      this.#catchUp(member, "late_join", undefined);
    }
    // Every member had left while this one was being admitted: the call resumes on its token.
    this.#upstream.resumeOn(member);
    const place = new SharedStream.#Place(this, member);
    member.demand = request.demand$.subscribe(place);
    member.renewals = request.renewed$?.subscribe(new SharedStream.#Renewals(this, member));
    request.position?.followShared(place);
    this.#upstream.checkExpiry();
    seat.place = place;
    this.#joining = undefined;
    // Replayed to where the main stream may cover it: a catch-up stream's member moves now.
    this.#handOffCovered();
  }

  /**
   * A member's place in this stream, for one join: what its demand tells the stream (its
   * readiness, its failure), its seat's way out, and where it stands, for its sink. One object,
   * where four closures, their scope and an observer object were every subscriber's.
   */
  static readonly #Place = class MemberPlace implements SharedPositionReader {
    constructor(
      private readonly stream: SharedStream,
      private readonly member: Member,
    ) {}

    next(ready: boolean): void {
      this.stream.#readiness(this.member, ready);
    }

    error(error: unknown): void {
      this.stream.#fail(this.member, error);
    }

    leave(): void {
      this.stream.#leave(this.member);
    }

    /** A catch-up stream's members are behind the main stream, not only behind their own call. */
    sharedPosition(): SharedPosition {
      const { stream } = this;
      return {
        last: this.member.last,
        newest: Math.max(stream.#position, stream.#options.catchUpOf?.()?.position ?? 0),
      };
    }
  };

  /** A member's confirmed renewals, told to this stream: one object, no closure. */
  static readonly #Renewals = class MemberRenewals {
    constructor(
      private readonly stream: SharedStream,
      private readonly member: Member,
    ) {}

    next(token: string): void {
      this.stream.#renewed(this.member, token);
    }
  };

  /**
   * A catch-up stream's members that the main stream's history covers move to it (each in its
   * seat, admitted as they were): replayed from there, they read the main call, and this one
   * ends with its last member.
   */
  #handOffCovered(): void {
    const main = this.#options.catchUpOf?.();
    if (main === undefined || this.#closed) return;
    for (const member of [...this.#members]) {
      // One that is joining moves once it is a member in full (its subscriptions, its seat).
      if (member === this.#joining || member.mode !== "shared" || member.lagging !== undefined) continue;
      const position = member.position();
      if (!main.covers(position)) continue;
      this.#leave(member);
      main.join(member.request, member.subscriber, true, member.seat, { position, token: member.token });
    }
  }

  #shared(text: string): void {
    const source = this.#upstream.owner?.request.source;
    const offset = source?.offsetOf(text);
    if (source === undefined || offset === undefined) return;
    const checkpoint = source.isCheckpoint(text);
    const bytes = Buffer.from(text, "utf8");
    const element: SharedElement = { text, bytes, offset, checkpoint };
    this.#position = offset;
    // Its own object, without the text (see HeldElement): the splice buffers hold the element.
    if (this.#history.remember({ bytes, offset, checkpoint, text: undefined })) this.#detachUncovered();
    for (const member of this.#members) {
      if (member.mode === "shared") {
        if (member.lagging === undefined && member.lacks(offset, checkpoint))
          this.#deliver(member, text, bytes, offset, checkpoint);
      } else if (member.buffer !== undefined) {
        if (member.buffer.length >= this.#options.catchUpBuffer) {
          // Too far behind to hold the difference: it stays on its own call for now.
          member.buffer = undefined;
          this.#setMode(member, "own", member.mode);
          this.#updateDemand();
        } else {
          member.buffer.push(element);
        }
      }
    }
    this.#handOffCovered();
  }

  /**
   * The history's elements after the member's last offset, to the member, `REPLAY_TURN_BYTES`
   * (at most a quarter of `lagBytes`, the hard limit) per turn: its socket sends them after this
   * turn, so that its demand can only say stop between turns. Until the rest is replayed the member lags (skipped by the shared elements,
   * the history held for it), and goes on at the next turn while its socket is ready, else when
   * it drains.
   */
  #replay(member: Member): void {
    // A quarter of the hard limit at most, so that a socket below its high-water mark takes a
    // turn's worth without reaching it; one element at least, so that every turn moves.
    const turn = Math.min(REPLAY_TURN_BYTES, this.#options.lagBytes / 4);
    let replayed = 0;
    const history = this.#history;
    for (
      let i = history.indexAtOrAfter(member.last), held = history.at(i);
      held !== undefined;
      held = history.at(++i)
    ) {
      const { bytes, offset, checkpoint } = held;
      if (!member.lacks(offset, checkpoint)) continue;
      if (replayed > 0 && replayed >= turn) {
        this.#replayNextTurn(member);
        return;
      }
      held.text ??= textOf(bytes);
      this.#deliver(member, held.text, bytes, offset, checkpoint);
      replayed += bytes.byteLength;
    }
    // Replayed to the end: where it stands, the main stream may cover it now.
    this.#handOffCovered();
  }

  #replayNextTurn(member: Member): void {
    this.#lag(member);
    setImmediate(() => {
      if (this.#closed || member.mode !== "shared" || member.lagging === undefined || !member.ready) return;
      if (!this.#members.has(member)) return;
      this.#stopLagging(member);
      this.#replay(member);
    });
  }

  #deliver(
    member: Member,
    text: string,
    bytes: Uint8Array | undefined,
    offset: number,
    checkpoint: boolean,
  ): void {
    member.last = offset;
    member.lastCheckpoint = checkpoint;
    const slot = this.#options.delivering;
    slot.text = text;
    slot.bytes = bytes;
    try {
      member.subscriber.next(text);
    } finally {
      slot.text = undefined;
      slot.bytes = undefined;
    }
  }

  /** Moves a member onto its own call from after its last offset, registered for a splice. */
  #catchUp(member: Member, cause: CatchUpCause, previous: MemberMode | undefined): void {
    this.#setMode(member, "catching_up", previous);
    this.#caughtUpFor(member.request, cause);
    this.#register(member);
    const { source, share, demand$ } = member.request;
    const { token } = member;
    // Assigned before subscribing: a splice during a synchronous first emission must find it.
    const own = new Subscription();
    member.own = own;
    own.add(
      source.open(share.from(member.last), token, demand$).subscribe({
        next: (text) => this.#own(member, text),
        error: (error: unknown) => this.#fail(member, error),
        complete: () => this.#completeMember(member),
      }),
    );
    this.#updateDemand();
  }

  #register(member: Member): void {
    member.buffer = [];
    member.spliceAt = this.#position;
  }

  #own(member: Member, text: string): void {
    const { source } = member.request;
    const offset = source.offsetOf(text);
    if (offset === undefined) {
      member.subscriber.next(text);
      return;
    }
    // The member's own element: its socket encodes it (no other member gets it).
    this.#deliver(member, text, undefined, offset, source.isCheckpoint(text));
    if (member.buffer !== undefined && offset >= member.spliceAt && !this.#closed) this.#splice(member);
  }

  /** The own call reached the shared stream: the buffered rest, then shared elements only. */
  #splice(member: Member): void {
    const buffer = member.buffer ?? [];
    member.buffer = undefined;
    member.own?.unsubscribe();
    member.own = undefined;
    for (const { text, bytes, offset, checkpoint } of buffer) {
      if (member.lacks(offset, checkpoint)) this.#deliver(member, text, bytes, offset, checkpoint);
    }
    this.#setMode(member, "shared", member.mode);
    this.#joined(member.request, "splice");
    this.#updateDemand();
    this.#upstream.checkExpiry();
  }

  #readiness(member: Member, ready: boolean): void {
    const drained = ready && !member.ready;
    member.ready = ready;
    if (this.#closed) return;
    if (member.mode === "shared") {
      if (!ready) this.#lag(member);
      // Lagging while ready: a replay goes on at the next turn (#replayNextTurn).
      else if (drained && member.lagging !== undefined) {
        this.#stopLagging(member);
        // What it missed is still in the history (else it was detached): replayed, it reads on.
        this.#replay(member);
      }
    } else if (member.mode === "own" && ready) {
      // On its own call and reading again: hold shared elements for a splice once more.
      this.#register(member);
      this.#setMode(member, "catching_up", "own");
      this.#caughtUpFor(member.request, "rejoin");
    }
    this.#updateDemand();
  }

  #lag(member: Member): void {
    if (member.lagging !== undefined) return;
    member.lagging = this.#history.hold(member);
    this.#lagging.add(member);
  }

  #stopLagging(member: Member): void {
    const release = member.lagging;
    if (release === undefined) return;
    member.lagging = undefined;
    this.#lagging.delete(member);
    release();
  }

  /** Lagging members the history no longer covers go onto their own call. */
  #detachUncovered(): void {
    for (const member of this.#lagging) {
      if (!this.#history.covers(member.position())) this.#detach(member);
    }
  }

  #detach(member: Member): void {
    this.#stopLagging(member);
    this.#options.events.detached?.(member.request.endpoint);
    member.request.told?.event("fanout.detach");
    this.#catchUp(member, "detach", member.mode);
    // A slow reader would only fill a buffer it cannot splice from soon: it registers again
    // when it is ready.
    member.buffer = undefined;
    this.#setMode(member, "own", member.mode);
    this.#updateDemand();
  }

  /**
   * The demand follows the members' readiness: the upstream flows while a shared member is
   * ready; with shared members that are all slow it pauses (detaching them would serve nobody
   * faster). With no shared member it flows for the catching-up members' splice buffers
   * (bounded).
   */
  #updateDemand(): void {
    if (this.#closed) return;
    const demand = this.#wantsDemand();
    if (this.#demand.value !== demand) this.#demand.next(demand);
  }

  /**
   * Stops at the first ready shared member, which decides it: every join, leave and readiness
   * change asks, and a crowd of N joining a stream whose members read would otherwise walk them
   * all each time (N² in a reconnect storm: about 1 s of a worker's CPU at 10,000).
   */
  #wantsDemand(): boolean {
    let shared = false;
    let buffering = false;
    for (const member of this.#members) {
      if (member.mode === "shared") {
        if (member.ready) return true;
        shared = true;
      } else if (member.buffer !== undefined) {
        buffering = true;
      }
    }
    return !shared && buffering;
  }

  /**
   * A member's renewed token: the ledger ends a call when the token it was opened with expires,
   * so the member's calls move onto the new one now, each from where it is (its elements go by
   * offset, so nothing is repeated or skipped): the shared call when the member owns it, and its
   * own call.
   */
  #renewed(member: Member, token: string): void {
    member.token = token;
    member.expiresAt = member.request.source.expiryOf(token) ?? Number.POSITIVE_INFINITY;
    if (this.#closed) return;
    this.#upstream.renewed(member);
    if (member.own !== undefined) {
      const { mode } = member;
      const registered = member.buffer !== undefined;
      member.own.unsubscribe();
      member.own = undefined;
      this.#catchUp(member, "rejoin", mode);
      if (!registered) {
        // A reader on its own call because it is slow stays there, as before the renewal.
        member.buffer = undefined;
        this.#setMode(member, "own", member.mode);
        this.#updateDemand();
      }
    }
  }

  #leave(member: Member): void {
    if (!this.#members.delete(member)) return;
    this.#stopLagging(member);
    member.demand?.unsubscribe();
    member.renewals?.unsubscribe();
    member.own?.unsubscribe();
    this.#options.events.memberMode?.(member.request.endpoint, undefined, this.#told(member.mode));
    if (this.#closed) return;
    if (member === this.#upstream.owner) this.#upstream.handOver();
    // An admission being asked keeps the stream (its history, its position) for that subscriber.
    if (this.#members.size === 0 && this.#reservations === 0) this.#close("last_member_left");
    else this.#updateDemand();
  }

  /**
   * The ledger refused the token the call ran on (expired, a right revoked, the user's rights
   * changed: Canton's STALE_STREAM_AUTHORIZATION): that is the error of every member holding that
   * very token, the owner and those that share it, and of no other. They end with the ledger's
   * error; the call moves from the shared position onto a remaining member's token (the owner's
   * leave hands it over), where a refusal in turn does the same again. The others see nothing.
   * With no member left on another token, or any other failure, the stream ends for all.
   */
  #upstreamFailed(error: unknown): void {
    const owner = this.#upstream.owner;
    if (owner?.request.source.isTokenRefusal(error)) {
      const refused = [...this.#members].filter((member) => member.token === owner.token);
      if (refused.length < this.#members.size) {
        this.#upstream.dropped();
        for (const member of refused) this.#fail(member, error);
        return;
      }
    }
    this.#close("error");
    for (const member of [...this.#members]) member.subscriber.error(error);
  }

  #upstreamCompleted(): void {
    this.#close("completed");
    for (const member of [...this.#members]) {
      // Members on their own call finish it; the shared ones have everything.
      if (member.mode === "shared") member.subscriber.complete();
      else member.buffer = undefined;
    }
  }

  /** One member's own error (its call, its demand, its token as owner): it alone ends. */
  #fail(member: Member, error: unknown): void {
    member.subscriber.error(error);
    this.#leave(member);
  }

  #completeMember(member: Member): void {
    member.subscriber.complete();
    this.#leave(member);
  }

  #close(reason: UpstreamCloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#upstream.close(reason);
    this.#history.clear();
    this.#demand.complete();
    this.#options.onClosed();
  }

  #setMode(member: Member, mode: MemberMode, previous: MemberMode | undefined): void {
    member.mode = mode;
    if (mode !== "shared") this.#stopLagging(member);
    else if (!member.ready) this.#lag(member);
    this.#options.events.memberMode?.(member.request.endpoint, this.#told(mode), this.#told(previous));
  }

  /** A member's mode as the metrics see it: reading a catch-up stream is catching up. */
  #told<M extends MemberMode | undefined>(mode: M): M | "catching_up" {
    return mode === "shared" && this.#options.catchUpOf !== undefined ? "catching_up" : mode;
  }

  /** A member reads the shared call now: the metrics and the member's own events are told. */
  #joined(request: MemberRequest, how: "direct" | "splice"): void {
    this.#options.events.joined?.(request.endpoint, how);
    request.told?.event("fanout.join", { how });
  }

  /** A member gets a call of its own to catch up on: told as {@link #joined} is. */
  #caughtUpFor(request: MemberRequest, cause: CatchUpCause): void {
    this.#options.events.catchUp?.(request.endpoint, cause);
    request.told?.event("fanout.catch_up", { cause });
  }
}
