import {
  defer,
  type MonoTypeOperatorFunction,
  Observable,
  type Observer,
  type Subscribable,
  type Subscriber,
  type Subscription,
  tap,
  type Unsubscribable,
} from "rxjs";
import {
  accessTokenExpiredError,
  CantonHttpError,
  isLedgerLost,
  isTokenRefusal,
  renewalUnconfirmedError,
  staleStreamAuthorizationError,
  streamAdmissionUnansweredError,
} from "../errors/index.js";

import { type Expiring, sharedExpiryTimer } from "../jwt/expiry-timer.js";
import type { TraceContext } from "../ledger/trace-context.js";
import {
  askLedger,
  beginOf,
  type LedgerAnswer,
  offsetNumber,
  QUESTION_DEADLINE_MS,
  UnansweredQuestion,
} from "./ledger-questions.js";
import { type Rechecked, recheckClock } from "./recheck-clock.js";
import type { StreamEndpoint } from "./stream-endpoint.js";
import { type ConfirmationListener, Grant } from "./stream-grant.js";

/**
 * Authorization per subscriber, one piece for every transport (WebSocket, NDJSON, SSE) and every
 * path into a stream (own call, fan-out join, splice, catch-up, handover, re-check, renewal):
 * each path tells the subscriber's {@link Grant} what the ledger said, and the gate
 * ({@link authorizeSubscriber}) sends an element only while the grant says yes. The invariant
 * (docs/security.md): an element goes to a subscriber only if the ledger answered yes, on that
 * subscriber's own token, to a call covering the element's request and offset, and that yes (or a
 * later re-check's) is at most twice the re-check interval old. No rule of the ledger's is copied
 * here: every yes is the ledger's answer to a call of the subscriber's own request.
 *
 * What is a yes: a message from the ledger on such a call (an element, an OffsetCheckpoint, or
 * its end). What is not: silence, a question still queued or in flight, a deadline passed, a
 * refusal by the stream budget, the ledger away. Those leave the subscriber's elements waiting;
 * past twice the interval without an answer it ends with STALE_STREAM_AUTHORIZATION, as Canton
 * ends a stream whose user's rights it could not confirm.
 */

/**
 * Elements a subscriber may hold while its grant waits for the ledger's yes (a re-check late
 * after the ledger came back): past it, the subscriber ends as stale rather than buffer more.
 */
const HOLD_LIMIT_CHARS = 16 * 1024 * 1024;

/**
 * A new grant for a subscriber: staleness after twice the re-check interval (never with none).
 * `expiresAt`: the token's, when the caller decoded it already (absent: decoded here).
 */
export function subscriberGrant(
  token: string | undefined,
  recheckIntervalMs: number,
  ledgerAwayGraceMs: number,
  now: () => number = Date.now,
  expiresAt?: number,
): Grant {
  const staleAfterMs = recheckIntervalMs > 0 ? 2 * recheckIntervalMs : Number.POSITIVE_INFINITY;
  return new Grant(token, { staleAfterMs, ledgerAwayGraceMs }, now(), expiresAt);
}

/**
 * The grant of a call's subscriber confirmed by the call itself: a call opened on `token` for the
 * subscriber's own request whose first message arrived is the ledger's yes to that token, as of
 * when the call was asked for (its subscription: a call that waited for a budget slot was judged
 * later still). Before the gate, so that the element finds its grant confirmed.
 */
export function confirmedBy(
  grant: Grant,
  token: string | undefined,
  now: () => number = Date.now,
): MonoTypeOperatorFunction<string> {
  return (source) =>
    defer(() => {
      const askedAt = now();
      let first = true;
      return source.pipe(
        tap(() => {
          if (!first) return;
          first = false;
          grant.confirm(token, askedAt);
        }),
      );
    });
}

/** A subscriber's in-band renewals (SubscriberAuthorizationOptions.renewals). */
export interface SubscriberRenewals {
  readonly tokens$: Subscribable<string>;
  renewed(token: string): void;
  refused(error: unknown): void;
}

export interface SubscriberAuthorizationOptions {
  /** The subscriber's standing; its calls (`confirmedBy`) and the fan-out's admission feed it too. */
  readonly grant: Grant;
  /** 0: no re-checks (a yes lasts until the token expires). */
  readonly recheckIntervalMs: number;
  /** Epoch milliseconds; tests move time. */
  readonly now?: () => number;
  /**
   * Tokens the client sent to renew its own (WebSocket renewal frames), already checked by the
   * gateway's verifier as at the upgrade and found to name the stream's user. Each is put to the
   * ledger as the subscriber's request from where it stands; one at a time (a newer one replaces
   * one still waiting). Confirmed, it is the grant's token from then on (`renewed` is told: the
   * stream's calls move onto it); not, the stream keeps its token and `refused` is told why.
   */
  readonly renewals?: SubscriberRenewals;
  /** The stream's trace: the questions' calls carry it. */
  readonly trace?: TraceContext;
  /**
   * What the questions' keys name a token by: the worker's held tokens' digest (HeldTokens.digest,
   * made once for all the streams that hold the token, where each re-check hashed it anew);
   * absent: hashed per question.
   */
  readonly digestOf?: (token: string) => string;
}

/**
 * The gate: the subscriber's elements pass while its grant says yes, and wait otherwise while the
 * ledger is asked; an expired token ends it with ACCESS_TOKEN_EXPIRED, a refusal or an answer
 * overdue with STALE_STREAM_AUTHORIZATION. Every `recheckIntervalMs` the ledger is asked again,
 * from the newest offset the subscriber got. The source is subscribed at once; its errors pass
 * at once (they carry no element); its end waits for the elements held before it.
 */
export function authorizeSubscriber(
  endpoint: StreamEndpoint,
  request: unknown,
  options: SubscriberAuthorizationOptions,
): MonoTypeOperatorFunction<string> {
  return (source) =>
    new Observable<string>((subscriber) =>
      new SubscriberGate(endpoint, request, options, subscriber).start(source),
    );
}

/**
 * One subscriber's gate (see authorizeSubscriber): its state in fields and its steps in methods
 * of one object, where a closure per step and a context per scope cost every subscriber of a
 * reconnect storm some 1.3 KB retained and more allocated at its start. It is the observer of
 * its source (next, error, complete), the teardown of its subscriber (unsubscribe), and what its
 * grant, the re-check clock and its token's expiry tell (confirmed, recheck, expired).
 */
class SubscriberGate implements Observer<string>, Unsubscribable, ConfirmationListener, Rechecked, Expiring {
  readonly #endpoint: StreamEndpoint;
  readonly #request: unknown;
  readonly #options: SubscriberAuthorizationOptions;
  readonly #subscriber: Subscriber<string>;
  readonly #grant: Grant;
  readonly #now: () => number;
  readonly #begin: number;
  readonly #subscribedAt: number;
  /** Elements waiting for the grant's yes; made when the first one has to wait. */
  #held: string[] | undefined;
  #heldChars = 0;
  #heldComplete = false;
  /**
   * The newest element of the stream (sent or held): the ledger has reached its offset, which
   * a question asks from. Its offset is read only when asked: parsing each element would cost
   * every subscriber of a shared stream a parse per element.
   */
  #newestElement: string | undefined;
  #asking = false;
  /** Why the latest question had no answer: what a never-admitted subscriber is told. */
  #lastFailure: unknown;
  #expiry: { clear(): void } | undefined;
  #renewalSubscription: Unsubscribable | undefined;
  #sourceSubscription: Subscription | undefined;
  /** A renewal token being put to the ledger, and the newest one waiting for it to finish. */
  #renewing = false;
  #waitingRenewal: string | undefined;

  constructor(
    endpoint: StreamEndpoint,
    request: unknown,
    options: SubscriberAuthorizationOptions,
    subscriber: Subscriber<string>,
  ) {
    this.#endpoint = endpoint;
    this.#request = request;
    this.#options = options;
    this.#subscriber = subscriber;
    this.#grant = options.grant;
    this.#now = options.now ?? Date.now;
    this.#begin = beginOf(request);
    this.#subscribedAt = this.#now();
  }

  /** Listens to the grant, the expiry, the re-checks and the renewals, then subscribes the source. */
  start(source: Observable<string>): Unsubscribable {
    this.#grant.onConfirmed(this);
    this.#watchExpiry();
    const { recheckIntervalMs, renewals } = this.#options;
    if (recheckIntervalMs > 0) recheckClock(recheckIntervalMs).every(this, this.#phaseGroup());
    if (renewals !== undefined)
      this.#renewalSubscription = renewals.tokens$.subscribe(
        new SubscriberGate.#RenewalListener(this, renewals),
      );
    this.#sourceSubscription = source.subscribe(this);
    return this;
  }

  /**
   * What the re-check clock phases this subscriber by: its token, as its questions name it, so
   * that the subscribers of one token come due together and share their questions.
   */
  #phaseGroup(): string | undefined {
    const token = this.#grant.token;
    if (token === undefined) return undefined;
    return this.#options.digestOf?.(token) ?? token;
  }

  next(element: string): void {
    this.#newestElement = element;
    if ((this.#held === undefined || this.#held.length === 0) && this.#admits()) {
      this.#subscriber.next(element);
      return;
    }
    if (this.#subscriber.closed) return;
    this.#held ??= [];
    this.#held.push(element);
    this.#heldChars += element.length;
    if (this.#heldChars > HOLD_LIMIT_CHARS) this.#end(this.#overdueError());
  }

  error(error: unknown): void {
    this.#end(error);
  }

  complete(): void {
    this.#heldComplete = true;
    if (this.#held === undefined || this.#held.length === 0) this.#subscriber.complete();
  }

  /** The renewal frames' tokens, each put to the ledger (#renew): one object, no closure or scope. */
  static readonly #RenewalListener = class RenewalListener {
    constructor(
      private readonly gate: SubscriberGate,
      private readonly renewals: SubscriberRenewals,
    ) {}

    next(candidate: string): void {
      this.gate.#renew(this.renewals, candidate);
    }
  };

  /** The subscriber's teardown. */
  unsubscribe(): void {
    this.#sourceSubscription?.unsubscribe();
    this.#renewalSubscription?.unsubscribe();
    const { recheckIntervalMs } = this.#options;
    if (recheckIntervalMs > 0) recheckClock(recheckIntervalMs).stop(this);
    this.#grant.offConfirmed(this);
    this.#expiry?.clear();
    this.#held = undefined;
  }

  #newest(): number {
    const element = this.#newestElement;
    return Math.max(this.#begin, element === undefined ? 0 : (offsetNumber(this.#endpoint, element) ?? 0));
  }

  #end(error: unknown): void {
    if (!this.#subscriber.closed) this.#subscriber.error(error);
  }

  #expired(at: number): CantonHttpError {
    return accessTokenExpiredError(this.#grant.expiresAt ?? at, at);
  }

  /**
   * The end of a subscriber whose grant is overdue: STALE_STREAM_AUTHORIZATION once the ledger
   * had said yes; never admitted, there was no yes to go stale: the budget's refusal of its
   * question (429 MAXIMUM_NUMBER_OF_STREAMS), else that its admission went unanswered (503).
   */
  #overdueError(): unknown {
    if (this.#grant.everConfirmed) return staleStreamAuthorizationError();
    if (isStreamBudgetRefusal(this.#lastFailure)) return this.#lastFailure;
    return streamAdmissionUnansweredError(this.#now() - this.#subscribedAt);
  }

  /** The ledger's answer whether `token` may read this request from where the stream stands. */
  #askAbout(token: string | undefined): Promise<LedgerAnswer> {
    return askLedger(this.#endpoint, this.#request, token, {
      from: this.#newest(),
      trace: this.#options.trace,
      now: this.#now,
      digestOf: this.#options.digestOf,
    });
  }

  /** Asks the ledger about the grant's token for this request from where the stream stands. */
  #ask(): void {
    if (this.#asking || this.#subscriber.closed) return;
    this.#asking = true;
    const grant = this.#grant;
    const token = grant.token;
    // Never admitted: a refusal is the ledger's own answer to this request, told as it is.
    const admitting = !grant.everConfirmed;
    // One reaction for each outcome, no `finally` (a crowd's re-checks each made three promises);
    // still asking while the answer is told, as nothing it sets off may ask again meanwhile.
    this.#askAbout(token).then(
      (answer) => {
        try {
          if (answer.yes) grant.confirm(token, answer.askedAt);
          else grant.answered(token, answer.askedAt);
        } finally {
          this.#asking = false;
        }
      },
      (error: unknown) => {
        try {
          this.#failed(error, admitting);
        } finally {
          this.#asking = false;
        }
      },
    );
  }

  /** A question of the grant's token that found no yes: the ledger's refusal, or no answer. */
  #failed(error: unknown, admitting: boolean): void {
    const grant = this.#grant;
    if (!isTokenRefusal(error)) {
      this.#lastFailure = error;
      // Never admitted, and the stream budget refused to ask (this user's share of
      // questions taken, or the queue full): a clear 429 now, not a wait for a yes
      // that cannot come.
      if (admitting && isStreamBudgetRefusal(error)) {
        this.#end(error);
        return;
      }
      grant.unanswered(isLedgerLost(error));
      return;
    }
    if (admitting) {
      this.#end(error);
      return;
    }
    // A question asked just before `exp` may be refused just after it: the expiry's.
    const at = this.#now();
    this.#end(
      grant.expiresAt !== undefined && at >= grant.expiresAt
        ? this.#expired(at)
        : staleStreamAuthorizationError(),
    );
  }

  /** Whether an element may go now; if not, the ledger is asked (or the subscriber ends). */
  #admits(): boolean {
    const at = this.#now();
    const verdict = this.#grant.verdict(at);
    if (verdict === "yes") return true;
    if (verdict === "expired") this.#end(this.#expired(at));
    else if (this.#grant.overdue(at)) this.#end(this.#overdueError());
    else this.#ask();
    return false;
  }

  /** ConfirmationListener: a new yes; what waited for it may go. */
  confirmed(): void {
    const held = this.#held;
    while (held !== undefined && held.length > 0 && !this.#subscriber.closed) {
      if (!this.#admits()) return;
      const element = held.shift() as string;
      this.#heldChars -= element.length;
      this.#subscriber.next(element);
    }
    if (this.#heldComplete && (held === undefined || held.length === 0)) this.#subscriber.complete();
  }

  #watchExpiry(): void {
    this.#expiry?.clear();
    const at = this.#grant.expiresAt;
    // A subscriber the ledger never admitted is refused by the ledger itself (an expired
    // token: UNAUTHENTICATED, as Canton answers it); one it admitted ends at `exp` as Canton's.
    this.#expiry = at === undefined ? undefined : sharedExpiryTimer(at, this, this.#now);
  }

  /** Expiring: its token's `exp`. */
  expired(): void {
    if (this.#grant.everConfirmed) this.#end(this.#expired(this.#now()));
  }

  /** Rechecked: the re-check clock's tick. */
  recheck(): void {
    if (this.#grant.overdue(this.#now())) this.#end(this.#overdueError());
    else this.#ask();
  }

  #renew(renewals: SubscriberRenewals, candidate: string): void {
    if (this.#renewing) {
      this.#waitingRenewal = candidate;
      return;
    }
    this.#renewing = true;
    this.#askAbout(candidate)
      .then(
        (answer) => {
          if (this.#subscriber.closed) return;
          if (!answer.yes) {
            renewals.refused(renewalUnconfirmedError(QUESTION_DEADLINE_MS));
            return;
          }
          this.#grant.renew(candidate, answer.askedAt);
          this.#watchExpiry();
          renewals.renewed(candidate);
        },
        (error: unknown) => {
          if (this.#subscriber.closed) return;
          renewals.refused(
            error instanceof UnansweredQuestion ? renewalUnconfirmedError(QUESTION_DEADLINE_MS) : error,
          );
        },
      )
      .finally(() => {
        this.#renewing = false;
        const next = this.#waitingRenewal;
        this.#waitingRenewal = undefined;
        if (next !== undefined && !this.#subscriber.closed) this.#renew(renewals, next);
      });
  }
}

/** The stream budget's refusal (MAXIMUM_NUMBER_OF_STREAMS): a question it gave no slot. */
function isStreamBudgetRefusal(error: unknown): error is CantonHttpError {
  return error instanceof CantonHttpError && error.body.code === "MAXIMUM_NUMBER_OF_STREAMS";
}
