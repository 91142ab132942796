import { defer, type MonoTypeOperatorFunction, Observable, type Subscribable, tap } from "rxjs";
import {
  accessTokenExpiredError,
  CantonHttpError,
  isLedgerLost,
  isTokenRefusal,
  renewalUnconfirmedError,
  staleStreamAuthorizationError,
  streamAdmissionUnansweredError,
} from "../errors/index.js";

import { sharedExpiryTimer } from "../jwt/expiry-timer.js";
import type { TraceContext } from "../ledger/trace-context.js";
import {
  askLedger,
  beginOf,
  offsetNumber,
  QUESTION_DEADLINE_MS,
  UnansweredQuestion,
} from "./ledger-questions.js";
import { recheckClock } from "./recheck-clock.js";
import type { StreamEndpoint } from "./stream-endpoint.js";
import { Grant } from "./stream-grant.js";

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
  readonly renewals?: {
    readonly tokens$: Subscribable<string>;
    renewed(token: string): void;
    refused(error: unknown): void;
  };
  /** The stream's trace: the questions' calls carry it. */
  readonly trace?: TraceContext;
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
  const now = options.now ?? Date.now;
  const { grant } = options;
  const begin = beginOf(request);
  return (source) =>
    new Observable<string>((subscriber) => {
      let held: string[] = [];
      let heldChars = 0;
      let heldComplete = false;
      /**
       * The newest element of the stream (sent or held): the ledger has reached its offset, which
       * a question asks from. Its offset is read only when asked: parsing each element would cost
       * every subscriber of a shared stream a parse per element.
       */
      let newestElement: string | undefined;
      const newest = () =>
        Math.max(begin, newestElement === undefined ? 0 : (offsetNumber(endpoint, newestElement) ?? 0));
      let asking = false;
      const end = (error: unknown) => {
        if (!subscriber.closed) subscriber.error(error);
      };
      const expired = (at: number) => accessTokenExpiredError(grant.expiresAt ?? at, at);
      const subscribedAt = now();
      /** Why the latest question had no answer: what a never-admitted subscriber is told. */
      let lastFailure: unknown;
      /**
       * The end of a subscriber whose grant is overdue: STALE_STREAM_AUTHORIZATION once the ledger
       * had said yes; never admitted, there was no yes to go stale: the budget's refusal of its
       * question (429 MAXIMUM_NUMBER_OF_STREAMS), else that its admission went unanswered (503).
       */
      const overdueError = () => {
        if (grant.everConfirmed) return staleStreamAuthorizationError();
        if (isStreamBudgetRefusal(lastFailure)) return lastFailure;
        return streamAdmissionUnansweredError(now() - subscribedAt);
      };

      /** Asks the ledger about the grant's token for this request from where the stream stands. */
      const ask = () => {
        if (asking || subscriber.closed) return;
        asking = true;
        const token = grant.token;
        // Never admitted: a refusal is the ledger's own answer to this request, told as it is.
        const admitting = !grant.everConfirmed;
        askLedger(endpoint, request, token, { from: newest(), trace: options.trace, now })
          .then(
            (answer) => {
              if (answer.yes) grant.confirm(token, answer.askedAt);
              else grant.answered(token, answer.askedAt);
            },
            (error: unknown) => {
              if (!isTokenRefusal(error)) {
                lastFailure = error;
                // Never admitted, and the stream budget refused to ask (this user's share of
                // questions taken, or the queue full): a clear 429 now, not a wait for a yes
                // that cannot come.
                if (admitting && isStreamBudgetRefusal(error)) {
                  end(error);
                  return;
                }
                grant.unanswered(isLedgerLost(error));
                return;
              }
              if (admitting) {
                end(error);
                return;
              }
              // A question asked just before `exp` may be refused just after it: the expiry's.
              const at = now();
              end(
                grant.expiresAt !== undefined && at >= grant.expiresAt
                  ? expired(at)
                  : staleStreamAuthorizationError(),
              );
            },
          )
          .finally(() => {
            asking = false;
          });
      };

      /** Whether an element may go now; if not, the ledger is asked (or the subscriber ends). */
      const admits = (): boolean => {
        const at = now();
        const verdict = grant.verdict(at);
        if (verdict === "yes") return true;
        if (verdict === "expired") end(expired(at));
        else if (grant.overdue(at)) end(overdueError());
        else ask();
        return false;
      };

      const release = () => {
        while (held.length > 0 && !subscriber.closed) {
          if (!admits()) return;
          const element = held.shift() as string;
          heldChars -= element.length;
          subscriber.next(element);
        }
        if (heldComplete && held.length === 0) subscriber.complete();
      };
      const stopReleases = grant.onConfirmed(release);

      let expiry: { clear(): void } | undefined;
      const watchExpiry = () => {
        expiry?.clear();
        const at = grant.expiresAt;
        // A subscriber the ledger never admitted is refused by the ledger itself (an expired
        // token: UNAUTHENTICATED, as Canton answers it); one it admitted ends at `exp` as Canton's.
        expiry =
          at === undefined
            ? undefined
            : sharedExpiryTimer(
                at,
                () => {
                  if (grant.everConfirmed) end(expired(now()));
                },
                now,
              );
      };
      watchExpiry();

      const recheck = () => {
        if (grant.overdue(now())) end(overdueError());
        else ask();
      };
      const stopRechecks =
        options.recheckIntervalMs > 0 ? recheckClock(options.recheckIntervalMs).every(recheck) : undefined;

      const renewalSubscription = options.renewals && renewalsOf(options.renewals);
      function renewalsOf(renewals: NonNullable<SubscriberAuthorizationOptions["renewals"]>) {
        let renewing = false;
        let waiting: string | undefined;
        const renew = (candidate: string): void => {
          if (renewing) {
            waiting = candidate;
            return;
          }
          renewing = true;
          askLedger(endpoint, request, candidate, { from: newest(), trace: options.trace, now })
            .then(
              (answer) => {
                if (subscriber.closed) return;
                if (!answer.yes) {
                  renewals.refused(renewalUnconfirmedError(QUESTION_DEADLINE_MS));
                  return;
                }
                grant.renew(candidate, answer.askedAt);
                watchExpiry();
                renewals.renewed(candidate);
              },
              (error: unknown) => {
                if (subscriber.closed) return;
                renewals.refused(
                  error instanceof UnansweredQuestion ? renewalUnconfirmedError(QUESTION_DEADLINE_MS) : error,
                );
              },
            )
            .finally(() => {
              renewing = false;
              const next = waiting;
              waiting = undefined;
              if (next !== undefined && !subscriber.closed) renew(next);
            });
        };
        return renewals.tokens$.subscribe({ next: renew });
      }

      const sourceSubscription = source.subscribe({
        next: (element) => {
          newestElement = element;
          if (held.length === 0 && admits()) {
            subscriber.next(element);
            return;
          }
          if (subscriber.closed) return;
          held.push(element);
          heldChars += element.length;
          if (heldChars > HOLD_LIMIT_CHARS) end(overdueError());
        },
        error: (error: unknown) => end(error),
        complete: () => {
          heldComplete = true;
          if (held.length === 0) subscriber.complete();
        },
      });

      return () => {
        sourceSubscription.unsubscribe();
        renewalSubscription?.unsubscribe();
        stopRechecks?.();
        stopReleases();
        expiry?.clear();
        held = [];
      };
    });
}

/** The stream budget's refusal (MAXIMUM_NUMBER_OF_STREAMS): a question it gave no slot. */
function isStreamBudgetRefusal(error: unknown): error is CantonHttpError {
  return error instanceof CantonHttpError && error.body.code === "MAXIMUM_NUMBER_OF_STREAMS";
}
