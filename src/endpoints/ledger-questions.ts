import type { Observable } from "rxjs";
import { isTokenRefusal } from "../errors/index.js";
import { InFlightQuestions } from "../fanout/in-flight-questions.js";
import { tokenDigest } from "../fanout/subscription-key.js";
import type { TraceContext } from "../ledger/trace-context.js";
import type { StreamEndpoint } from "./stream-endpoint.js";

/**
 * The questions stream authorization puts to the ledger, and only the ledger's own answers: a
 * probe of the subscriber's own request on its own token (the ledger sees the same gRPC request,
 * filter and parties; no rule of the ledger's is copied here), answered by the ledger's first
 * message on that call and never by silence; each with a deadline; the same question asked by
 * many at once asked once while in flight. The gate (stream-authorization.ts) decides what the
 * answers allow.
 */

/** How long any question to the ledger may go unanswered before it counts as no answer. */
export const QUESTION_DEADLINE_MS = 10_000;

/**
 * How long an empty completions answer's verdict waits for the probe's first word. The ledger
 * refuses a reader as the call opens; one it authorized hears nothing until the call has caught
 * up, which on a quiet ledger may not come at all (found from outside: on a sandbox at offset 0,
 * an authorized reader's empty list waited out the 10 s deadline).
 */
const SILENT_COMPLETIONS_MS = 1_000;

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
export interface LedgerAnswer {
  readonly yes: boolean;
  readonly askedAt: number;
}

/**
 * Questions in flight, per endpoint and request text, then keyed by token digest and offset: a
 * crowd's re-checks look their question up by the request's one text (whose hash the string
 * keeps), not by a key of some hundreds of characters made and hashed anew by every subscriber.
 */
const questionsByEndpoint = new WeakMap<StreamEndpoint, Map<string, InFlightQuestions<LedgerAnswer>>>();

function questionsOf(endpoint: StreamEndpoint, requestText: string): InFlightQuestions<LedgerAnswer> {
  let byRequest = questionsByEndpoint.get(endpoint);
  if (byRequest === undefined) {
    byRequest = new Map();
    questionsByEndpoint.set(endpoint, byRequest);
  }
  let questions = byRequest.get(requestText);
  if (questions === undefined) {
    // Let go once idle: an entry is replaced only after that, so this one is still the map's.
    const requests = byRequest;
    questions = new InFlightQuestions<LedgerAnswer>(() => requests.delete(requestText));
    requests.set(requestText, questions);
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
export function askLedger(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  at: {
    readonly from: number;
    readonly trace: TraceContext | undefined;
    readonly now: () => number;
    /** The token's digest (HeldTokens.digest: made once for a held token); absent: tokenDigest. */
    readonly digestOf?: (token: string) => string;
  },
): Promise<LedgerAnswer> {
  const digest = (at.digestOf ?? tokenDigest)(token ?? "");
  return questionsOf(endpoint, requestTextOf(request)).ask(`${digest} ${at.from}`, () =>
    underDeadline(async (signal) => {
      const askedAt = at.now();
      if (!canProbe(endpoint, at.from)) {
        if (endpoint.admit === undefined) throw new UnansweredQuestion(0);
        await withDeadline(endpoint.admit(token, at.trace), signal);
        return { yes: false, askedAt };
      }
      await probeSubscriber(endpoint, request, token, { from: at.from, signal, trace: at.trace });
      return { yes: true, askedAt };
    }),
  );
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

/**
 * Runs `ask` with a signal that aborts after QUESTION_DEADLINE_MS (a timer of its own, not
 * AbortSignal.timeout: tests move timers), cleared once `ask` settles: the timer of an answered
 * question aborted it all the same, 10 s later, a DOMException each (a storm's probes by the
 * thousand).
 */
async function underDeadline<T>(
  ask: (signal: AbortSignal) => Promise<T>,
  deadlineMs: number = QUESTION_DEADLINE_MS,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), deadlineMs);
  timer.unref();
  try {
    return await ask(controller.signal);
  } finally {
    clearTimeout(timer);
  }
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

export function beginOf(request: unknown): number {
  const begin = Number((request as JsonObject | null)?.beginExclusive ?? 0);
  return Number.isSafeInteger(begin) && begin > 0 ? begin : 0;
}

/**
 * The last element each endpoint read an offset of, and that offset: a crowd's re-checks each
 * ask from the newest element of the stream they share, one string, which is then read once, not
 * once per subscriber (reading it parses the element).
 */
const lastOffsets = new WeakMap<StreamEndpoint, { element: string; offset: number | undefined }>();

export function offsetNumber(endpoint: StreamEndpoint, element: string): number | undefined {
  const last = lastOffsets.get(endpoint);
  if (last !== undefined && last.element === element) return last.offset;
  const read = Number(endpoint.offsetOf?.(element));
  const offset = Number.isSafeInteger(read) ? read : undefined;
  lastOffsets.set(endpoint, { element, offset });
  return offset;
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
    await underDeadline((signal) =>
      probeSubscriber(endpoint, request, token, { reached, signal, ...(trace ? { trace } : {}) }),
    );
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
 * may end before the ledger's answer arrives (a `stream_idle_timeout_ms` of 0 or 1, a slow
 * ledger), and `200 []` must not be the answer to a reader the ledger refuses: Canton's is its
 * 401 or 403. A probe of the request (probeSubscriber) judges the token and the parties alike:
 * updates in an empty range (from 0, `(0, 1]`), the active contracts' snapshot, completions from
 * their begin (answered once the call caught up). Where the probe has no verdict to give, the
 * token's claims are asked instead: a ledger whose end is still 0 refuses `(0, 1]` as past its
 * end (it judges the parties first, as Canton's authorization wraps its services, so only a
 * reader it authorized gets there); a completion stream silent for a second (a refusal comes
 * as the call opens) leaves the parties unjudged, for an answer that reveals nothing. Rejects with
 * the ledger's error.
 */
export async function confirmEmptyAnswer(
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  signal: AbortSignal,
  trace?: TraceContext,
): Promise<void> {
  const kind = probeKind(endpoint);
  if (kind === undefined) {
    await endpoint.admit?.(token, trace);
    return;
  }
  // Updates from 0 are asked in (0, 1], which a ledger that has not reached offset 1 refuses.
  const pastTheEnd = kind === "updates" && beginOf(request) === 0;
  try {
    await underDeadline(
      (deadline) =>
        probeSubscriber(endpoint, request, token, {
          reached: 1,
          signal: AbortSignal.any([signal, deadline]),
          ...(trace ? { trace } : {}),
        }),
      kind === "completions" ? SILENT_COMPLETIONS_MS : QUESTION_DEADLINE_MS,
    );
  } catch (error) {
    if (signal.aborted || isTokenRefusal(error)) throw error;
    if (!(error instanceof UnansweredQuestion) && !pastTheEnd) throw error;
    await endpoint.admit?.(token, trace);
  }
}
