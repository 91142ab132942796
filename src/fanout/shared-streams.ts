import { Observable, type Subscriber, type Unsubscribable } from "rxjs";
import { InFlightQuestions } from "./in-flight-questions.js";
import type { Seat } from "./member.js";
import { QuestionPeers } from "./question-peers.js";
import { DeliverySlot, SharedStream } from "./shared-stream.js";
import type { FanoutEvents, MemberRequest } from "./subscription.js";
import { tokenDigest } from "./subscription-key.js";

export interface SharedStreamsOptions {
  /**
   * Shared elements a catching-up subscriber may hold while its own call reaches the shared
   * stream; past it, it stays on its own call until its socket is ready again.
   */
  catchUpBuffer: number;
  /**
   * Bytes of the latest shared elements each stream keeps for subscribers that join behind it
   * (while their admission was asked, or a crowd from the same offset): replayed from them, they
   * read the shared call at once instead of a call of their own
   * (websocket-config.fanout-history-bytes).
   */
  historyBytes: number;
  /**
   * A token's digest, which probe questions name it by (HeldTokens.digest shares those of the
   * worker's held tokens). Absent: made each time.
   */
  digestOf?: (token: string) => string;
  /**
   * Bytes a stream's history may grow by for each subscriber that lags (over its high-water mark)
   * or is being admitted (up to 8 of them), so that it is replayed from it instead of a call of
   * its own: the per-socket hard limit (websocket-config.hard-limit).
   */
  lagBytes: number;
  /**
   * How long before its token expires a shared call moves onto a member's token that expires
   * later.
   */
  rotateBeforeExpiryMs: number;
  events?: FanoutEvents;
}

/**
 * The shared streams of one uWS app (one worker): one per distinct request key, created by its
 * first subscriber and dropped with its last. Not a global: each app builds its own.
 *
 * @example
 * const fanout = new SharedStreams({
 *   historyBytes: 1024 * 1024, lagBytes: hardLimit, catchUpBuffer: 4096, rotateBeforeExpiryMs: 10_000,
 *   events: metrics.fanoutEvents(),
 * });
 * fanout.open({ endpoint: "/v2/updates", share, source, token, demand$: sink.demand$ })
 *   .subscribe((text) => sink.element(fanout.bytesOf(text) ?? Buffer.from(text)));
 */
export class SharedStreams {
  readonly #streams = new Map<string, SharedStream>();
  readonly #catchUpBuffer: number;
  readonly #historyBytes: number;
  readonly #lagBytes: number;
  readonly #rotateBeforeExpiryMs: number;
  readonly #events: FanoutEvents;
  readonly #digestOf: (token: string) => string;
  readonly #delivering = new DeliverySlot();
  /** Catch-up streams by request key (see #streamFor). */
  readonly #catchUps = new Map<string, Set<SharedStream>>();
  /** Admission probes in flight, by request key, offset and token digest (see #admit). */
  readonly #admissions = new InFlightQuestions<number | undefined>();
  /** Some joined subscribers of each admission question, whose fresh yes a joiner may share (see open). */
  readonly #peers = new QuestionPeers();

  constructor(options: SharedStreamsOptions) {
    this.#catchUpBuffer = options.catchUpBuffer;
    this.#historyBytes = options.historyBytes;
    this.#lagBytes = options.lagBytes;
    this.#rotateBeforeExpiryMs = options.rotateBeforeExpiryMs;
    this.#events = options.events ?? {};
    this.#digestOf = options.digestOf ?? tokenDigest;
  }

  /** Distinct shared streams running. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * The UTF-8 bytes of a shared element while its stream hands it to a member (synchronously,
   * from the member's `next`): one Buffer per element for every member's socket. Undefined for
   * anything else (a member's own call, an element held elsewhere): the caller encodes it.
   */
  bytesOf(text: string): Uint8Array | undefined {
    return this.#delivering.bytesOf(text);
  }

  /** The stream of a key, for tests and introspection. */
  stream(key: string): SharedStream | undefined {
    return this.#streams.get(key);
  }

  /**
   * One subscriber's elements, cold: subscribing joins the stream of its key (after its
   * admission, when the request has one), unsubscribing leaves it. Errors with the ledger's
   * error, its own call's or the shared call's.
   */
  open(request: MemberRequest): Observable<string> {
    return new Observable<string>((subscriber) =>
      new SharedStreams.#Joiner(this, request, subscriber).start(),
    );
  }

  /**
   * One subscriber's way into its request's shared stream: its admission, its join, its seat
   * (the stream it is a member of may change, from a catch-up stream to the main one) and its
   * teardown. One object, where a scope of eight variables and two closures were every
   * subscriber's.
   */
  static readonly #Joiner = class Joiner implements Seat {
    place: { leave(): void } | undefined = undefined;
    /** What the running stream keeps for it while its admission is asked. */
    #release: (() => void) | undefined;
    #gone = false;
    /**
     * What it would ask the ledger before joining besides its request (its offset and token: see
     * #askedBy), and whose fresh yes may answer it.
     */
    #asked: string | undefined;

    constructor(
      private readonly streams: SharedStreams,
      private readonly request: MemberRequest,
      private readonly subscriber: Subscriber<string>,
    ) {}

    /** Joins at once, on a peer's fresh yes, or once the ledger admitted it; returns its teardown. */
    start(): Unsubscribable {
      const { streams, request } = this;
      // A method of the share's (a class's, called apart from it below).
      const admit = request.share.admit?.bind(request.share);
      this.#asked = admit === undefined ? undefined : streams.#askedBy(request);
      const asked = this.#asked;
      const { key } = request.share;
      const running = streams.#streams.get(key);
      // Only a stream someone already reads is worth a probe: the first subscriber opens it.
      if (admit === undefined || asked === undefined || running === undefined || running.closed) {
        this.#join(false);
        return this;
      }
      const peersYes = streams.#peers.freshYes(key, asked, request.token);
      if (peersYes !== undefined) {
        // Another subscriber of the same token, request and offset was admitted on the ledger's
        // yes within its re-check interval: the answer its probe would get, as one asked while
        // that was in flight shares it.
        streams.#events.sharedAdmission?.(request.endpoint);
        request.source.admitted?.(peersYes);
        request.told?.event("admission", { outcome: "admitted", at: "fanout", shared: true });
        this.#join(true);
        return this;
      }
      // While the ledger is asked, the stream keeps what comes after the subscriber's offset,
      // and so does a catch-up stream that covers it, should the main one not.
      this.#release = streams.#reserve(running, request.share);
      streams
        .#admit(request, `${asked} ${key}`, () => admit(running.position))
        .then(
          (askedAt) => {
            // No answer in time: its own call, which the ledger judges itself.
            if (askedAt === undefined) this.#join(false);
            else if (!this.#gone) {
              request.source.admitted?.(askedAt);
              this.#join(true);
            }
            this.#release?.();
          },
          (error: unknown) => {
            this.#release?.();
            if (!this.#gone) this.subscriber.error(error);
          },
        );
      return this;
    }

    #join(admitted: boolean): void {
      if (this.#gone) return;
      const { streams, request } = this;
      streams.#streamFor(request, admitted).join(request, this.subscriber, admitted, this);
      if (this.#asked !== undefined)
        this.#asked = streams.#peers.add(request.share.key, this.#asked, request.source);
    }

    /** The subscriber's teardown. */
    unsubscribe(): void {
      this.#gone = true;
      this.#release?.();
      this.place?.leave();
      if (this.#asked !== undefined)
        this.streams.#peers.remove(this.request.share.key, this.#asked, this.request.source);
    }
  };

  /**
   * Keeps what comes after the subscriber's offset in the running stream, and in the catch-up
   * streams that cover it, while its admission is asked; returns the release of all of them.
   */
  #reserve(running: SharedStream, share: MemberRequest["share"]): () => void {
    const kept = running.reserve(share.begin);
    const catchUps = this.#catchUps.get(share.key);
    if (catchUps === undefined) return kept;
    const from = { offset: share.begin, checkpoint: false };
    const releases = [kept];
    for (const stream of catchUps) if (stream.covers(from)) releases.push(stream.reserve(share.begin));
    return () => {
      for (const released of releases) released();
    };
  }

  /**
   * The ledger's answer for this subscriber's token and request. Subscribers that ask the same
   * question at the same time (same request, offset and token: a client opening many sockets)
   * share one probe: the ledger's answer for that token, asked once while it is in flight, not
   * remembered after it (a later subscriber asks again, unless a member's admission to the same
   * question is fresh: see open).
   */
  #admit(
    request: MemberRequest,
    question: string,
    admit: () => Promise<number | undefined>,
  ): Promise<number | undefined> {
    const answer = this.#admissions.ask(question, () =>
      admit().then(
        (askedAt) => {
          this.#events.admission?.(request.endpoint, askedAt === undefined ? "unanswered" : "admitted");
          return askedAt;
        },
        (error: unknown) => {
          this.#events.admission?.(request.endpoint, "refused");
          throw error;
        },
      ),
    );
    const { told } = request;
    // Its span's events, with tracing on: no continuation per start without one.
    if (told !== undefined)
      answer.then(
        (askedAt) =>
          told.event("admission", {
            outcome: askedAt === undefined ? "unanswered" : "admitted",
            at: "fanout",
          }),
        () => told.event("admission", { outcome: "refused", at: "fanout" }),
      );
    return answer;
  }

  /** A subscriber's admission question besides its request: its offset and token (by digest). */
  #askedBy(request: MemberRequest): string {
    const token = request.token === undefined ? "" : this.#digestOf(request.token);
    return `${request.share.begin} ${token}`;
  }

  /**
   * The stream a subscriber joins: its request's main stream, unless it was admitted from an
   * offset behind the main stream's history. Such subscribers share a catch-up stream: one that
   * covers their offset (same offset, or one it has not passed yet), else a new one from theirs,
   * so that a crowd behind the history costs one catch-up call, not one each.
   */
  #streamFor(request: MemberRequest, admitted: boolean): SharedStream {
    const { key, begin } = request.share;
    const main = this.#streams.get(key);
    if (main === undefined || main.closed) {
      const created = this.#stream(() => {
        if (this.#streams.get(key) === created) this.#streams.delete(key);
      });
      this.#streams.set(key, created);
      return created;
    }
    const from = { offset: begin, checkpoint: false };
    // Not admitted (no probe for its request): the main stream gives it a call of its own.
    if (!admitted || !main.opened || main.covers(from)) return main;
    let catchUps = this.#catchUps.get(key);
    for (const running of this.#catchUpsOf(key)) if (running.covers(from)) return running;
    if (catchUps === undefined) {
      catchUps = new Set();
      this.#catchUps.set(key, catchUps);
    }
    const all = catchUps;
    const created = this.#stream(
      () => {
        all.delete(created);
        if (all.size === 0 && this.#catchUps.get(key) === all) this.#catchUps.delete(key);
      },
      () => {
        const current = this.#streams.get(key);
        return current?.closed ? undefined : current;
      },
    );
    all.add(created);
    return created;
  }

  #catchUpsOf(key: string): Iterable<SharedStream> {
    return this.#catchUps.get(key) ?? [];
  }

  #stream(onClosed: () => void, catchUpOf?: () => SharedStream | undefined): SharedStream {
    return new SharedStream({
      catchUpBuffer: this.#catchUpBuffer,
      historyBytes: this.#historyBytes,
      lagBytes: this.#lagBytes,
      rotateBeforeExpiryMs: this.#rotateBeforeExpiryMs,
      events: this.#events,
      delivering: this.#delivering,
      onClosed,
      ...(catchUpOf === undefined ? {} : { catchUpOf }),
    });
  }
}
