import { defer, type MonoTypeOperatorFunction, Observable, tap } from "rxjs";
import {
  accessTokenExpiredError,
  isLedgerLost,
  isTokenRefusal,
  renewalUnconfirmedError,
  staleStreamAuthorizationError,
} from "../errors/index.js";
import { InFlightQuestions } from "../fanout/in-flight-questions.js";
import { tokenDigest } from "../fanout/subscription-key.js";
import { expiryTimer } from "../jwt/expiry-timer.js";
import type { TraceContext } from "../ledger/trace-context.js";
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

/** How long any question to the ledger may go unanswered before it counts as no answer. */
const QUESTION_DEADLINE_MS = 10_000;

/**
 * Elements a subscriber may hold while its grant waits for the ledger's yes (a re-check late
 * after the ledger came back): past it, the subscriber ends as stale rather than buffer more.
 */
const HOLD_LIMIT_CHARS = 16 * 1024 * 1024;

/** A new grant for a subscriber: staleness after twice the re-check interval (never with none). */
export function subscriberGrant(
  token: string | undefined,
  recheckIntervalMs: number,
  ledgerAwayGraceMs: number,
  now: () => number = Date.now,
): Grant {
  const staleAfterMs = recheckIntervalMs > 0 ? 2 * recheckIntervalMs : Number.POSITIVE_INFINITY;
  return new Grant(token, { staleAfterMs, ledgerAwayGraceMs }, now());
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
    readonly tokens$: Observable<string>;
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
        else if (grant.overdue(at)) end(staleStreamAuthorizationError());
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
            : expiryTimer(
                at,
                () => {
                  if (grant.everConfirmed) end(expired(now()));
                },
                now,
              );
      };
      watchExpiry();

      const recheck = () => {
        if (grant.overdue(now())) end(staleStreamAuthorizationError());
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
        return renewals.tokens$.subscribe(renew);
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
          if (heldChars > HOLD_LIMIT_CHARS) end(staleStreamAuthorizationError());
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

/** A question the ledger did not answer within its deadline: no yes, and no refusal either. */
export class UnansweredQuestion extends Error {
  constructor(ms: number) {
    super(`the ledger did not answer within ${ms} ms`);
    this.name = "UnansweredQuestion";
  }
}

/**
 * The ledger's answer about a token: `yes` to a call of the request (asked at `askedAt`), or, with
 * nothing yet to ask about (no offset past the ledger's begin), the token's claims resolved.
 */
interface LedgerAnswer {
  readonly yes: boolean;
  readonly askedAt: number;
}

/** Questions in flight, per endpoint (each gateway builds its own endpoints). */
const questionsByEndpoint = new WeakMap<StreamEndpoint, InFlightQuestions<LedgerAnswer>>();

function questionsOf(endpoint: StreamEndpoint): InFlightQuestions<LedgerAnswer> {
  let questions = questionsByEndpoint.get(endpoint);
  if (questions === undefined) {
    questions = new InFlightQuestions<LedgerAnswer>();
    questionsByEndpoint.set(endpoint, questions);
  }
  return questions;
}

/**
 * Asks the ledger whether `token` may read `request` from offset `from`: a probe of the request
 * where one can be asked, else (nothing past the ledger's begin yet) whether the token's claims
 * resolve. Subscribers asking the same question at the same time (one token, one request, one
 * offset: a crowd's re-checks, a client's sockets renewing together) share its one call, which is
 * not cancelled with any of them and ends by itself within the deadline. Rejects with the
 * ledger's refusal, or UnansweredQuestion.
 */
function askLedger(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  at: { readonly from: number; readonly trace: TraceContext | undefined; readonly now: () => number },
): Promise<LedgerAnswer> {
  const key = `${tokenDigest(token ?? "")} ${at.from} ${requestTextOf(request)}`;
  return questionsOf(endpoint).ask(key, async () => {
    const askedAt = at.now();
    const signal = deadline(QUESTION_DEADLINE_MS);
    if (!canProbe(endpoint, at.from)) {
      if (endpoint.admit === undefined) throw new UnansweredQuestion(0);
      await withDeadline(endpoint.admit(token, at.trace), signal);
      return { yes: false, askedAt };
    }
    await probeSubscriber(endpoint, request, token, { from: at.from, signal, trace: at.trace });
    return { yes: true, askedAt };
  });
}

const requestTexts = new WeakMap<object, string>();

function requestTextOf(request: unknown): string {
  if (typeof request !== "object" || request === null) return JSON.stringify(request);
  let text = requestTexts.get(request);
  if (text === undefined) {
    text = JSON.stringify(request);
    requestTexts.set(request, text);
  }
  return text;
}

/** Aborts after `ms` (a timer of its own, not AbortSignal.timeout: tests move timers). */
function deadline(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), ms).unref();
  return controller.signal;
}

function withDeadline<T>(answer: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timedOut = () => reject(new UnansweredQuestion(QUESTION_DEADLINE_MS));
    signal.addEventListener("abort", timedOut, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener("abort", timedOut));
  });
}

type JsonObject = Record<string, unknown>;

type ProbeKind = "updates" | "completions" | "snapshot";

/** The ledger's stream requests this module knows how to ask about cheaply. */
function probeKind(endpoint: StreamEndpoint): ProbeKind | undefined {
  switch (endpoint.requestSchema) {
    case "GetUpdatesRequest":
      return "updates";
    case "CompletionStreamRequest":
    case "GetCompletionsRequest":
      return "completions";
    case "GetActiveContractsRequest":
      return "snapshot";
    default:
      return undefined;
  }
}

/**
 * Whether a question of the request can be put to the ledger from `from`: updates and completions
 * from an offset past the ledger's begin (from 0 an open-ended call may wait for ever on an empty
 * ledger), the active contracts always (a snapshot ends by itself).
 */
function canProbe(endpoint: StreamEndpoint, from: number): boolean {
  const kind = probeKind(endpoint);
  return kind === "snapshot" || (kind !== undefined && from > 0);
}

function beginOf(request: unknown): number {
  const begin = Number((request as JsonObject | null)?.beginExclusive ?? 0);
  return Number.isSafeInteger(begin) && begin > 0 ? begin : 0;
}

function offsetNumber(endpoint: StreamEndpoint, element: string): number | undefined {
  const offset = Number(endpoint.offsetOf?.(element));
  return Number.isSafeInteger(offset) ? offset : undefined;
}

/**
 * A joiner's admission to a running shared stream (ShareSpec.admit): its own probe from its
 * offset. Resolves with when it was asked once the ledger said yes, with undefined when the
 * ledger gave no answer within the deadline (the joiner then reads a call of its own); rejects
 * with the ledger's refusal or the stream budget's.
 */
export async function admitJoiner(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  reached: number,
  trace?: TraceContext,
  now: () => number = Date.now,
): Promise<number | undefined> {
  const askedAt = now();
  try {
    const signal = deadline(QUESTION_DEADLINE_MS);
    await probeSubscriber(endpoint, request, token, { reached, signal, ...(trace ? { trace } : {}) });
    return askedAt;
  } catch (error) {
    if (error instanceof UnansweredQuestion) return undefined;
    throw error;
  }
}

/** Where a probe asks from, and what bounds it. */
export interface ProbeOptions {
  /** The newest offset the subscriber stands at (default: its request's begin). */
  readonly from?: number;
  /** An offset the ledger is known to have reached (a shared stream read it): 0 when unknown. */
  readonly reached?: number;
  /** Aborts the probe: it rejects with UnansweredQuestion. */
  readonly signal?: AbortSignal;
  readonly trace?: TraceContext;
}

/**
 * Asks the ledger whether `token` may read `request` now: the endpoint's own call (so the ledger
 * sees the same gRPC request, filter and parties, with the subscriber's own token), made cheap
 * without changing what the ledger authorizes. Resolves at the ledger's first message on that
 * call (an element, a checkpoint, its end): its yes. Rejects with the ledger's error, or
 * UnansweredQuestion when `signal` aborts first. Never resolves on silence.
 * - updates (and flats, trees): the empty range `beginExclusive = endInclusive` at `from`: the
 *   ledger checks the filter's parties and ends the call at once, or refuses. From offset 0
 *   there is no empty range (an end must be positive): `(0, 1]` once the ledger is known to have
 *   `reached` offset 1, else the open-ended request (answered by its first message);
 * - completions: the request from `from`, open-ended (no end to bound it): answered by its first
 *   completion or OffsetCheckpoint, which the ledger sends once the call has caught up;
 * - active contracts: the request itself (a snapshot ends by itself).
 * The call is cancelled as soon as it has answered.
 */
export function probeSubscriber(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  options: ProbeOptions = {},
): Promise<void> {
  const kind = probeKind(endpoint);
  if (kind === undefined) return Promise.reject(new UnansweredQuestion(0));
  const asked = request as JsonObject;
  const from = options.from ?? beginOf(request);
  let probe: JsonObject = asked;
  if (kind === "updates" && from > 0) {
    probe = { ...asked, beginExclusive: from, endInclusive: from };
  } else if (kind === "updates" && (options.reached ?? 0) >= 1) {
    probe = { ...asked, beginExclusive: 0, endInclusive: 1 };
  } else if (kind !== "snapshot") {
    probe = { ...asked, beginExclusive: from };
    delete probe.endInclusive;
  }
  return firstAnswer(endpoint.probe(probe, token, options.trace), options.signal);
}

/** Resolves at the call's first message or its end; rejects with its error or at the abort. */
function firstAnswer(probe$: Observable<string>, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", aborted);
      // After subscribe() returned: a synchronous answer finds no subscription yet.
      queueMicrotask(() => subscription.unsubscribe());
      if (error === undefined) resolve();
      else reject(error);
    };
    const aborted = () => finish(new UnansweredQuestion(QUESTION_DEADLINE_MS));
    const subscription = probe$.subscribe({
      next: () => finish(),
      error: (error: unknown) => finish(error),
      complete: () => finish(),
    });
    if (signal?.aborted) aborted();
    else signal?.addEventListener("abort", aborted, { once: true });
  });
}

/**
 * The ledger's verdict on a reader before it is answered an empty list: a list twin's idle wait
 * may end before the ledger's refusal arrives (a 1 ms `stream_idle_timeout_ms`, a slow ledger),
 * and `200 []` must not be the answer to a token the ledger refuses. Updates from a positive
 * offset have an empty range to ask, which judges the token and the filter's parties alike;
 * the other requests have no bounded form, so the token's claims are asked (the caller's rights
 * on the parties then stay unjudged for an answer that reveals nothing). Rejects with the
 * ledger's error.
 */
export async function confirmEmptyAnswer(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  signal: AbortSignal,
  trace?: TraceContext,
): Promise<void> {
  if (probeKind(endpoint) === "updates" && beginOf(request) > 0) {
    await probeSubscriber(endpoint, request, token, { signal, ...(trace ? { trace } : {}) });
  } else {
    await endpoint.admit?.(token, trace);
  }
}
