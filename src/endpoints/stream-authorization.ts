import { type MonoTypeOperatorFunction, Observable, of } from "rxjs";
import {
  accessTokenExpiredError,
  isTokenRefusal,
  staleStreamAuthorizationError,
  tokenOfAnotherUserError,
} from "../errors/index.js";
import { InFlightQuestions } from "../fanout/in-flight-questions.js";
import { tokenDigest } from "../fanout/subscription-key.js";
import { decodeTokenClaims, tokenExpiryMs } from "../jwt/bearer-token.js";
import { expiryTimer } from "../jwt/expiry-timer.js";
import type { TraceContext } from "../ledger/trace-context.js";
import { recheckClock } from "./recheck-clock.js";
import type { StreamEndpoint } from "./stream-endpoint.js";

/**
 * Authorization per subscriber (docs/architecture.md, "Shared streams"). A subscriber's elements
 * may come from a gRPC call opened with another subscriber's token, so each subscriber is judged
 * on its own, by the ledger, with its own token — no rule of the ledger's is copied here:
 * - admission: nothing reaches the subscriber before the ledger accepted its token for its
 *   request (`probeSubscriber`); a refusal ends it with the ledger's error;
 * - expiry: at the token's `exp` it ends with Canton's ACCESS_TOKEN_EXPIRED;
 * - re-check: every `recheckIntervalMs` the ledger is asked again; a refusal (UNAUTHENTICATED,
 *   PERMISSION_DENIED: a right revoked, the user deactivated) ends it with Canton's
 *   STALE_STREAM_AUTHORIZATION. Any other failure of the probe (UNAVAILABLE, a deadline, ...)
 *   says nothing about the token: the subscriber goes on and the next interval asks again.
 *
 * @example
 * elements$.pipe(authorizeSubscriber(endpoint, request, token, { recheckIntervalMs: 5000 }));
 */
export interface SubscriberAuthorizationOptions {
  /** 0: admission and expiry only. */
  readonly recheckIntervalMs: number;
  /**
   * The source already is the ledger's admission of this token for this request: its own call
   * on this token, or a fan-out membership (which reads shared elements only after the ledger
   * admitted the token: its own call first, or its empty-range probe). No admission probe then:
   * one per subscriber is enough; expiry and re-checks still apply.
   */
  readonly sourceAdmits?: boolean;
  /** Epoch milliseconds; tests move time. */
  readonly now?: () => number;
  /**
   * Tokens the client sent to renew its own (WebSocket renewal frames). Each is judged as the
   * first was: the same user, and the ledger admits it for this request from the newest offset
   * the subscriber has. Accepted, it is the subscriber's token from then on: its expiry and
   * re-checks follow it, and `renewed` is told (the stream's calls move onto it); refused, the
   * old token stays in force until its own expiry, and `refused` is told why.
   */
  readonly renewals?: {
    readonly tokens$: Observable<string>;
    renewed(token: string): void;
    refused(error: unknown): void;
  };
  /** The stream's trace: the probes' calls carry it. */
  readonly trace?: TraceContext;
}

/**
 * The subscriber's element stream under its own authorization. The source is subscribed at once
 * (its own call, or its share of another's, runs while the ledger is asked), but its elements
 * are held until the ledger admitted the subscriber; its end too. Errors of the source pass at
 * once: they carry no element.
 */
export function authorizeSubscriber(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  options: SubscriberAuthorizationOptions,
): MonoTypeOperatorFunction<string> {
  const now = options.now ?? Date.now;
  return (source) =>
    new Observable<string>((subscriber) => {
      // Renewals replace it (options.renewals).
      let current = token;
      let stopRechecks: (() => void) | undefined;
      const probes = new Set<AbortController>();
      const probed = !options.sourceAdmits && probeKind(endpoint) !== undefined;
      let admitted = !probed;
      let held: string[] = [];
      let heldComplete = false;
      /** The newest element delivered: the re-check asks from its offset. */
      let last: string | undefined;

      /** The ledger asked whether `asked` (the subscriber's token, or a renewal's) may read from `last`. */
      const ask = (asked = current): Promise<void> => {
        const controller = new AbortController();
        probes.add(controller);
        return probeSubscriber(endpoint, request, asked, last, controller.signal, options.trace).finally(() =>
          probes.delete(controller),
        );
      };
      const deliver = (element: string) => {
        last = element;
        subscriber.next(element);
      };

      let expiry: number | undefined;
      let expiryWatch: { clear(): void } | undefined;
      /** At the token's `exp` the subscriber ends with ACCESS_TOKEN_EXPIRED. */
      const watchExpiry = (watched: string | undefined) => {
        expiryWatch?.clear();
        expiry = tokenExpiryMs(watched);
        const at = expiry;
        expiryWatch =
          at === undefined
            ? undefined
            : expiryTimer(at, () => subscriber.error(accessTokenExpiredError(at, now())), now);
      };
      watchExpiry(token);

      let checking = false;
      let requestText: string | undefined;
      const recheck = () => {
        if (checking || subscriber.closed) return;
        checking = true;
        // The same question as the crowd's (one token, one request, from one offset) shares
        // their probe; it is not cancelled with this subscriber: it ends by itself, soon.
        requestText ??= JSON.stringify(request);
        const from = last === undefined ? "" : String(endpoint.offsetOf?.(last) ?? "");
        const asked = current;
        recheckQuestionsOf(endpoint)
          .ask(`${tokenDigest(asked ?? "")} ${from} ${requestText}`, () =>
            probeSubscriber(endpoint, request, asked, last, undefined, options.trace),
          )
          .then(
            () => {
              checking = false;
            },
            (error: unknown) => {
              checking = false;
              if (!isTokenRefusal(error)) return;
              // A re-check asked just before `exp` may be answered just after it: that refusal
              // is the expiry's (the timer due at `exp` may not have run yet), not a stale right.
              const at = now();
              subscriber.error(
                expiry !== undefined && at >= expiry
                  ? accessTokenExpiredError(expiry, at)
                  : staleStreamAuthorizationError(),
              );
            },
          );
      };

      if (!probed && options.recheckIntervalMs > 0 && probeKind(endpoint) !== undefined) {
        stopRechecks = recheckClock(options.recheckIntervalMs).every(recheck);
      } else if (probed) {
        ask().then(
          () => {
            if (subscriber.closed) return;
            admitted = true;
            const elements = held;
            held = [];
            for (const element of elements) deliver(element);
            if (heldComplete) subscriber.complete();
            else if (options.recheckIntervalMs > 0) {
              stopRechecks = recheckClock(options.recheckIntervalMs).every(recheck);
            }
          },
          (error: unknown) => subscriber.error(error),
        );
      }

      const renewals = options.renewals;
      const renewalSubscription = renewals?.tokens$.subscribe((candidate) => {
        const user = (t: string | undefined) => (t === undefined ? undefined : decodeTokenClaims(t)?.subject);
        if (user(candidate) === undefined || user(candidate) !== user(current)) {
          renewals.refused(tokenOfAnotherUserError());
          return;
        }
        ask(candidate).then(
          () => {
            if (subscriber.closed) return;
            current = candidate;
            watchExpiry(candidate);
            renewals.renewed(candidate);
          },
          (error: unknown) => {
            if (!subscriber.closed) renewals.refused(error);
          },
        );
      });

      const sourceSubscription = source.subscribe({
        next: (element) => {
          if (admitted) deliver(element);
          else held.push(element);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          if (admitted) subscriber.complete();
          else heldComplete = true;
        },
      });

      return () => {
        sourceSubscription.unsubscribe();
        renewalSubscription?.unsubscribe();
        stopRechecks?.();
        expiryWatch?.clear();
        for (const controller of probes) controller.abort();
        held = [];
      };
    });
}

/**
 * How long an open-ended probe (completions, or updates from offset 0) that neither failed nor
 * sent anything counts as admitted. Such a request has no empty range to ask for, and a ledger
 * sends a stream's headers only with its first message (grpc-java's ServerCalls, hence Canton;
 * grpc-js, hence the sandbox), which may be long in coming. But a ledger authorizes a stream when
 * it opens it, before it waits for anything (Canton's Authorizer fails the call before the
 * service runs; the sandbox before it reads its store): a refusal comes at once.
 */
const OPEN_ENDED_PROBE_SETTLE_MS = 1000;

type JsonObject = Record<string, unknown>;

type ProbeKind = "updates" | "completions" | "snapshot";

/** The ledger's stream requests this module knows how to make cheap; others are not probed. */
function probeKind(endpoint: StreamEndpoint): ProbeKind | undefined {
  switch (endpoint.requestSchema) {
    case "GetUpdatesRequest":
      return "updates";
    case "CompletionStreamRequest":
      return "completions";
    case "GetActiveContractsRequest":
      return "snapshot";
    default:
      return undefined;
  }
}

/** Re-check probes in flight, per endpoint (each gateway builds its own endpoints). */
const recheckQuestions = new WeakMap<StreamEndpoint, InFlightQuestions>();

function recheckQuestionsOf(endpoint: StreamEndpoint): InFlightQuestions {
  let questions = recheckQuestions.get(endpoint);
  if (questions === undefined) {
    questions = new InFlightQuestions();
    recheckQuestions.set(endpoint, questions);
  }
  return questions;
}

/**
 * Asks the ledger whether `token` may read `request` now: the endpoint's own call (so the ledger
 * sees the same gRPC request, filter and parties, with the subscriber's own token), made cheap
 * without changing what the ledger authorizes. Resolves when admitted, rejects with the ledger's
 * error. `last` is the newest element the subscriber got, if any.
 * - updates (and flats, trees): the empty range `beginExclusive = endInclusive` at the newest
 *   offset the subscriber has (its last element's, else its request's begin): the ledger checks
 *   the filter's parties and answers an empty stream, or refuses. From offset 0 there is no
 *   empty range (an end must be positive): the range `(0, 1]` once the ledger is known to have
 *   `reached` offset 1 (an end past the ledger's is refused), which reads one offset at most;
 *   else the open-ended request, as completions;
 * - completions: the request from that offset (no end to bound it): admitted at its first
 *   element or end, or after `OPEN_ENDED_PROBE_SETTLE_MS` without a refusal;
 * - active contracts: the request itself (a snapshot ends by itself): admitted at its first
 *   element or end.
 * The probe's call is cancelled as soon as it has answered, and when `signal` aborts.
 */
export function probeSubscriber(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  last: string | undefined,
  signal?: AbortSignal,
  trace?: TraceContext,
  /** An offset the ledger is known to have reached (a shared stream read it): 0 when unknown. */
  reached = 0,
): Promise<void> {
  const kind = probeKind(endpoint);
  if (kind === undefined) return Promise.resolve();
  const asked = request as JsonObject;
  const lastOffset = last === undefined ? undefined : endpoint.offsetOf?.(last);
  const from = Number(lastOffset ?? asked.beginExclusive ?? 0);
  let probe: JsonObject = asked;
  let settleMs: number | undefined;
  if (hasEmptyRange(kind, from)) {
    probe = { ...asked, beginExclusive: from, endInclusive: from };
  } else if (kind === "updates" && from === 0 && reached >= 1) {
    probe = { ...asked, beginExclusive: 0, endInclusive: 1 };
  } else if (kind !== "snapshot") {
    probe = { ...asked, beginExclusive: Number.isSafeInteger(from) ? from : asked.beginExclusive };
    delete probe.endInclusive;
    settleMs = OPEN_ENDED_PROBE_SETTLE_MS;
  }
  return firstAnswer(endpoint.open(probe, token, of(true), undefined, trace), settleMs, signal);
}

/** Whether a request of `kind` read after `from` can be asked over an empty range (an end must be positive). */
function hasEmptyRange(kind: ProbeKind | undefined, from: number): boolean {
  return kind === "updates" && Number.isSafeInteger(from) && from > 0;
}

/**
 * Resolves at the stream's first element, its end, or `settleMs` of silence; rejects with its
 * error; unsubscribes (cancelling the call) either way.
 */
function firstAnswer(
  probe$: Observable<string>,
  settleMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
      // After subscribe() returned: a synchronous answer finds no subscription yet.
      queueMicrotask(() => subscription.unsubscribe());
      if (error === undefined) resolve();
      else reject(error);
    };
    const aborted = () => finish(signal?.reason ?? new Error("probe aborted"));
    const subscription = probe$.subscribe({
      next: () => finish(),
      error: (error: unknown) => finish(error),
      complete: () => finish(),
    });
    if (settleMs !== undefined && !settled) timer = setTimeout(() => finish(), settleMs);
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
  if (hasEmptyRange(probeKind(endpoint), Number((request as JsonObject).beginExclusive ?? 0))) {
    await probeSubscriber(endpoint, request, token, undefined, signal, trace);
  } else if (token !== undefined) {
    await endpoint.admit?.(token, trace);
  }
}
