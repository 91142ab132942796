import { tokenExpiryMs } from "../jwt/bearer-token.js";

/**
 * What the ledger has said about one subscriber, the only thing that decides whether an element
 * may be sent to it (docs/security.md, "The authorization invariant"): an element goes out only
 * while the ledger's latest yes, on the subscriber's current token, for its own request, is at
 * most `staleAfterMs` old. A question not yet answered, queued, timed out, refused by a budget or
 * lost with the ledger is no yes; nothing here turns silence into one.
 */
export type GrantVerdict =
  /** The ledger's yes is fresh: elements may go. */
  | "yes"
  /** No yes yet on the current token: elements wait. */
  | "unconfirmed"
  /** The latest yes is older than `staleAfterMs`: elements wait for a fresh one. */
  | "stale"
  /** Past the token's `exp`: the subscriber ends (ACCESS_TOKEN_EXPIRED). */
  | "expired";

export interface GrantPolicy {
  /**
   * How old a yes may be when an element goes out: twice the re-check interval, as Canton's
   * ongoing stream authorization allows; infinity when re-checks are off.
   */
  readonly staleAfterMs: number;
  /**
   * How much longer a subscriber whose re-checks failed because the ledger was away may stay
   * open, elements held, before it is closed: its stream's resume window (the ledger connection
   * may come back; the first element after it waits for a fresh yes).
   */
  readonly ledgerAwayGraceMs: number;
}

/** Told after each new yes on the subscriber's token (its gate: a held element may go then). */
export interface ConfirmationListener {
  confirmed(): void;
}

/**
 * One subscriber's standing, per token: whom the ledger said yes to and when (when the question
 * was asked, not answered: the yes holds for the state the ledger had then at the latest).
 * Pure state: the questions are asked by stream-authorization.ts, which every path into a
 * stream (own call, fan-out join, re-check, renewal) feeds here.
 */
export class Grant {
  #token: string | undefined;
  #expiresAt: number | undefined;
  /** The newest yes on the current token (when asked); undefined: none yet. */
  #confirmedAt: number | undefined;
  /**
   * The newest answer of any kind about the current token, a yes or "nothing to read yet" (see
   * `answered`): what keeps an idle subscriber open.
   */
  #answeredAt: number;
  #ledgerAway = false;
  /**
   * Told after each new yes. A subscriber has one gate, its one listener, which needs no set: a
   * Set and its table were some 110 bytes of every subscriber. More are kept in one made for them.
   */
  #listener: ConfirmationListener | undefined;
  #moreListeners: Set<ConfirmationListener> | undefined;

  constructor(
    token: string | undefined,
    readonly policy: GrantPolicy,
    createdAt: number,
    /** The token's expiry when the caller decoded it already (see HeldTokens). */
    expiresAt: number | undefined = tokenExpiryMs(token),
  ) {
    this.#token = token;
    this.#expiresAt = expiresAt;
    this.#answeredAt = createdAt;
  }

  /** The token the subscriber's calls and questions use now. */
  get token(): string | undefined {
    return this.#token;
  }

  /** Whether the ledger has said yes to the subscriber at all (on any of its tokens). */
  get everConfirmed(): boolean {
    return this.#confirmedAt !== undefined;
  }

  /** When the ledger stops accepting the current token (epoch ms); undefined: never. */
  get expiresAt(): number | undefined {
    return this.#expiresAt;
  }

  /**
   * The ledger said yes, on `token`, to a call for the subscriber's request asked at `askedAt`:
   * an admission probe, a re-check, or a call of the subscriber's own that delivered a message.
   * A yes for a token the subscriber no longer holds says nothing.
   */
  confirm(token: string | undefined, askedAt: number): void {
    if (token !== this.#token) return;
    const fresher = this.#confirmedAt === undefined || askedAt > this.#confirmedAt;
    if (fresher) this.#confirmedAt = askedAt;
    this.#answered(askedAt);
    if (fresher) this.#changed();
  }

  /**
   * The ledger answered about `token` without a yes for the request, because there was nothing
   * to read yet (the subscriber has no offset past the ledger's begin to ask about): the token's
   * claims resolve. It keeps an idle subscriber open; it lets no element through.
   */
  answered(token: string | undefined, at: number): void {
    if (token === this.#token) this.#answered(at);
  }

  /** A question about the current token failed: `away` when it was the ledger connection's fault. */
  unanswered(away: boolean): void {
    this.#ledgerAway = away;
  }

  /** The ledger admitted `token`, asked at `askedAt`, in place of the current one (in-band renewal). */
  renew(token: string, askedAt: number): void {
    this.#token = token;
    this.#expiresAt = tokenExpiryMs(token);
    this.#confirmedAt = askedAt;
    this.#answered(askedAt);
    this.#changed();
  }

  verdict(now: number): GrantVerdict {
    if (this.#expiresAt !== undefined && now >= this.#expiresAt) return "expired";
    if (this.#confirmedAt === undefined) return "unconfirmed";
    return now - this.#confirmedAt > this.policy.staleAfterMs ? "stale" : "yes";
  }

  /**
   * Whether the subscriber is to be closed with STALE_STREAM_AUTHORIZATION: the ledger has not
   * answered about its token for longer than `staleAfterMs` (plus the grace while it was away).
   */
  overdue(now: number): boolean {
    const { staleAfterMs, ledgerAwayGraceMs } = this.policy;
    const grace = this.#ledgerAway ? Math.max(0, ledgerAwayGraceMs - staleAfterMs) : 0;
    return now - this.#answeredAt > staleAfterMs + grace;
  }

  /**
   * Tells `listener` after each new yes, until `offConfirmed`: an object, not a callback, so that
   * a gate listens for the price of none (a closure and its removal's were some 110 bytes).
   */
  onConfirmed(listener: ConfirmationListener): void {
    // A listener given twice is told once, and its first removal removes it (as a set's member).
    if (this.#listener === listener) return;
    if (this.#listener === undefined && this.#moreListeners === undefined) this.#listener = listener;
    else if (this.#moreListeners === undefined) this.#moreListeners = new Set([listener]);
    else this.#moreListeners.add(listener);
  }

  offConfirmed(listener: ConfirmationListener): void {
    if (this.#listener === listener) this.#listener = undefined;
    else this.#moreListeners?.delete(listener);
  }

  #answered(at: number): void {
    if (at > this.#answeredAt) this.#answeredAt = at;
    this.#ledgerAway = false;
  }

  #changed(): void {
    // Those listening when the yes came, in the order they came (one removed meanwhile is still told).
    const first = this.#listener;
    const more = this.#moreListeners === undefined ? undefined : [...this.#moreListeners];
    first?.confirmed();
    if (more !== undefined) for (const listener of more) listener.confirmed();
  }
}
