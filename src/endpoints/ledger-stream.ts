import { defer, map, merge, type Observable, Subject, type Subscribable, switchMap } from "rxjs";
import { InvalidValueError, isLedgerLost, ledgerLossCause } from "../errors/index.js";
import type { ShareSpec } from "../fanout/subscription.js";
import { subscriptionKey } from "../fanout/subscription-key.js";
import { callerAdmission } from "../ledger/caller-admission.js";
import type { StreamPurpose } from "../ledger/stream-slots.js";
import type { TraceContext } from "../ledger/trace-context.js";
import type { Availability } from "../proto/api-version.js";
import { mapInOrder } from "../streams/map-in-order.js";
import { resumeOnLoss, type StreamPosition } from "../streams/resume-on-loss.js";
import { admitJoiner } from "./ledger-questions.js";
import type { RouteDeps } from "./route-deps.js";
import type { StreamEndpoint } from "./stream-endpoint.js";

export interface LedgerStreamSpec {
  path: string;
  summary: string;
  service: string;
  rpc: string;
  requestSchema: string;
  responseSchema: string;
  deprecated?: boolean;
  /** The Canton releases that have the channel and its list twin; absent: every known one. */
  availability?: Availability;
  /** Rewrites legacy request forms into the 3.5 request JSON (default: as is). */
  toRequest?: (request: unknown) => unknown;
  /** Reshapes one element's JSON; undefined drops the element (default: as is). */
  toElement?: (json: unknown) => unknown;
  idleByDefault: (request: unknown) => boolean;
  offsetOf?: (element: string) => string | number | undefined;
  /** See StreamEndpoint.startAfter; default for streams with a `position`: `beginExclusive` = the id. */
  startAfter?: (request: unknown, id: string) => unknown;
  /**
   * Open-ended requests of this endpoint share one call per distinct request (src/fanout).
   * `updates`: a subscriber joins a running stream after an empty-range probe of its own
   * request (`endInclusive` = `beginExclusive`: the ledger admits its token or refuses it; from
   * offset 0, `(0, 1]`, see probeSubscriber);
   * `completions`: no bounded form to probe with, so a subscriber starts on its own call and
   * splices in once it delivered an element.
   */
  share?: "updates" | "completions";
  /**
   * The request's `userId`, when absent, is the token's user's (CompletionStream): such requests
   * share only with the same token. GetCompletions reads every user's completions and has none.
   */
  sharedPerUser?: boolean;
  /**
   * Where an element stands. Streams that have it outlive their calls: a call is reopened with
   * `beginExclusive` at the last delivered element when the ledger connection is lost or closing,
   * or the token renewed (src/streams/resume-on-loss.ts).
   */
  position?: (element: string) => StreamPosition | undefined;
}

type Json = Record<string, unknown>;

/** How one gRPC call of an endpoint runs: see ServerStreamOptions. */
interface CallOptions {
  demand$?: Subscribable<boolean>;
  trace?: TraceContext | undefined;
  draining?: (closing: unknown) => void;
  purpose?: StreamPurpose;
  /** Told each time the call is sent (StreamEndpoint.open's `opened`). */
  opened?: (() => void) | undefined;
  /**
   * Each message as "", not transcoded: an authorization probe needs only the ledger's first
   * message, not its JSON (a crowd's probes from offset 0 each read, and transcoded, the ledger's
   * first transaction only to drop it; an element naming a package not loaded yet would make the
   * answer wait for that package).
   */
  answersOnly?: boolean;
}

/** A probe's answer: that the ledger sent a message, not what it holds. */
const ANSWERED = "";

/** Elements as their wire bytes: transcoded straight to text. */
const RAW = { rawResponses: true } as const;

/** An update or completion request starting after `offset` instead of its own `beginExclusive`. */
const startingAfter = (request: unknown, offset: number): unknown => ({
  ...(request as Json),
  beginExclusive: offset,
});

/** An offset a client names by the element id it last had (`Last-Event-ID`). */
function offsetNamed(id: string): number {
  const offset = /^\d{1,16}$/.test(id) ? Number(id) : Number.NaN;
  if (!Number.isSafeInteger(offset)) {
    throw new InvalidValueError(
      "header Last-Event-ID",
      `expected an offset this stream sent, got ${JSON.stringify(id)}`,
    );
  }
  return offset;
}

/**
 * A server-streaming gRPC method as a StreamEndpoint: request JSON -> gRPC request (with the
 * package signatures its commands need) -> pull-based call -> one JSON text per element.
 * Elements arrive as their wire bytes and are transcoded straight to text (no decoded object,
 * no JSON object: those layers and their garbage were most of the stream's CPU). An element
 * naming a package not loaded yet waits for it, which happens only the first time a package
 * appears; every other element goes through synchronously.
 */
export function ledgerStream(deps: RouteDeps, spec: LedgerStreamSpec): StreamEndpoint {
  const method = deps.protos.method(spec.service, spec.rpc);
  if (!method.serverStreaming)
    throw new Error(`${spec.service}/${spec.rpc} is not a server-streaming method`);
  const { requestTypeName: requestType, responseTypeName: responseType } = method;
  const toRequest = spec.toRequest ?? ((request: unknown) => request);
  const request$ = (request: unknown, token: string | undefined) =>
    defer(() => deps.json.fromJson(requestType, toRequest(request), token));

  const reshape = spec.toElement;
  // Compiled at the first call: an endpoint nobody opens costs no writers.
  let toText: ReturnType<RouteDeps["json"]["wireText"]> | undefined;
  const { service, rpc } = spec;
  /** One gRPC call of the endpoint; `options.draining` is told when the ledger closes its connection gracefully. */
  const call = (request: unknown, token: string | undefined, options: CallOptions): Observable<string> => {
    toText ??= deps.json.wireText(responseType);
    const text = toText;
    const { demand$, trace, draining, purpose, opened } = options;
    const messages$ = request$(request, token).pipe(
      switchMap((grpcRequest) =>
        deps.ledger.serverStream<Buffer>(service, rpc, grpcRequest as object, token, {
          ...RAW,
          ...(demand$ ? { demand$ } : {}),
          ...(trace ? { trace } : {}),
          ...(draining ? { onDraining: draining } : {}),
          ...(purpose ? { purpose } : {}),
          ...(opened ? { onOpen: opened } : {}),
        }),
      ),
    );
    if (options.answersOnly) return messages$.pipe(map(() => ANSWERED));
    const elements$ = messages$.pipe(mapInOrder((bytes) => text(bytes, token)));
    return reshape ? elements$.pipe(mapInOrder(reshaped(reshape))) : elements$;
  };
  const position = spec.position;
  const { resume } = deps;
  /**
   * A stream whose elements have a position outlives its calls (resumeOnLoss): reopened after
   * its last element when the connection is lost, moved onto a new connection when the ledger
   * closes its one gracefully (both unless the resume window is 0), and onto each renewed token.
   */
  const open: StreamEndpoint["open"] =
    position === undefined
      ? (request, token, demand$, _renewed$, trace, opened) =>
          call(request, token, { demand$, trace, opened })
      : (request, token, demand$, renewed$, trace, opened) =>
          defer(() => {
            let current = token;
            const drains = new Subject<unknown>();
            const renewals = renewed$?.pipe(
              map((renewed) => {
                current = renewed;
                return undefined;
              }),
            );
            return resumeOnLoss(
              (after) =>
                call(after === undefined ? request : startingAfter(request, after.offset), current, {
                  demand$,
                  trace,
                  opened,
                  ...(resume.windowMs > 0 ? { draining: (closing: unknown) => drains.next(closing) } : {}),
                }),
              {
                position,
                isLoss: isLedgerLost,
                windowMs: resume.windowMs,
                moves$: renewals === undefined ? drains : merge(drains, renewals),
                onResume: (lost, downMs) => {
                  const cause = ledgerLossCause(lost);
                  resume.onResume?.(spec.path, cause, downMs / 1000);
                  trace?.span?.event("resume", { cause, "down.seconds": downMs / 1000 });
                },
              },
            );
          });

  const startAfter =
    spec.startAfter ??
    (position === undefined
      ? undefined
      : (request: unknown, id: string) => startingAfter(request, offsetNamed(id)));
  const sharedForms: SharedForms = new WeakMap();
  const endpoint: StreamEndpoint = {
    path: spec.path,
    summary: spec.summary,
    requestSchema: spec.requestSchema,
    responseSchema: spec.responseSchema,
    ...(spec.deprecated ? { deprecated: true } : {}),
    ...(spec.availability ? { availability: spec.availability } : {}),
    ...(spec.offsetOf ? { offsetOf: spec.offsetOf } : {}),
    ...(startAfter ? { startAfter } : {}),
    idleByDefault: spec.idleByDefault,
    open,
    // Demand always true, no resume, no renewals: the call's own answer is the verdict.
    probe: (request, token, trace) =>
      call(request, token, { trace, purpose: "authorization", answersOnly: true }),
    ...(position ? { renewable: true } : {}),
    admit: (token, trace) => callerAdmission(deps.ledger, token, trace),
    ...(spec.share
      ? {
          share: (request: unknown, token: string | undefined, trace?: TraceContext) =>
            shareSpec(spec, toRequest, endpoint, request, token, trace, sharedForms),
        }
      : {}),
  };
  return endpoint;
}

/** The fan-out's view of one request; undefined when it is not shared (see LedgerStreamSpec.share). */
function shareSpec(
  spec: LedgerStreamSpec,
  toRequest: (request: unknown) => unknown,
  endpoint: StreamEndpoint,
  request: unknown,
  token: string | undefined,
  trace: TraceContext | undefined,
  sharedForms: SharedForms,
): ShareSpec | undefined {
  const form = sharedFormOf(spec, toRequest, request, sharedForms);
  if (form === undefined) return undefined;
  const { normalized, key } = form;
  if (normalized.endInclusive !== undefined && normalized.endInclusive !== null) return undefined;
  const begin = Number(normalized.beginExclusive ?? 0);
  if (!Number.isSafeInteger(begin) || begin < 0) return undefined;
  const byToken = spec.sharedPerUser === true && !normalized.userId;
  const shareKey = byToken
    ? subscriptionKey({ path: spec.path, request: normalized, token: token ?? "" })
    : key;
  // From offset 0 there is no empty range (an end of 0 reads as none): the probe reads offset 1
  // once the shared stream showed that the ledger has it (probeSubscriber).
  return spec.share === "updates"
    ? new ProbedShare(shareKey, begin, request, endpoint, token, trace)
    : new LedgerShare(shareKey, begin, request);
}

/**
 * One subscriber's request as the fan-out sees it (ShareSpec): one object a subscriber keeps,
 * where two closures and their scope were.
 */
class LedgerShare implements ShareSpec {
  constructor(
    readonly key: string,
    readonly begin: number,
    protected readonly request: unknown,
  ) {}

  from(offset: number): unknown {
    return startingAfter(this.request, offset);
  }
}

/** An updates request's, whose joiner the ledger is asked about first (ShareSpec.admit). */
class ProbedShare extends LedgerShare {
  constructor(
    key: string,
    begin: number,
    request: unknown,
    private readonly endpoint: StreamEndpoint,
    private readonly token: string | undefined,
    private readonly trace: TraceContext | undefined,
  ) {
    super(key, begin, request);
  }

  admit(reached: number): Promise<number | undefined> {
    return admitJoiner(this.endpoint, this.from(this.begin), this.token, reached, this.trace);
  }
}

/**
 * A request's normalized form and its key (the token's part apart), per request object: the
 * sockets of a crowd that sent the same query frame share one frozen request (SharedQueries), so
 * its rewrite and its canonical key are made once for all of them. Null: a form the endpoint
 * refuses (its own call reports it).
 */
type SharedForms = WeakMap<object, { normalized: Json; key: string } | null>;

function sharedFormOf(
  spec: LedgerStreamSpec,
  toRequest: (request: unknown) => unknown,
  request: unknown,
  sharedForms: SharedForms,
): { normalized: Json; key: string } | undefined {
  const memo = typeof request === "object" && request !== null ? request : undefined;
  const known = memo === undefined ? undefined : sharedForms.get(memo);
  if (known !== undefined) return known ?? undefined;
  let form: { normalized: Json; key: string } | null;
  try {
    const normalized = toRequest(request) as Json;
    form = { normalized, key: subscriptionKey({ path: spec.path, request: normalized }) };
  } catch {
    form = null;
  }
  if (memo !== undefined) sharedForms.set(memo, form);
  return form ?? undefined;
}

/**
 * For endpoints that reshape elements (the deprecated trees): the element's text parsed,
 * reshaped and written again; undefined drops the element. Rare and deprecated, so the extra
 * parse is cheaper than a second decoding path.
 */
function reshaped(reshape: (json: unknown) => unknown): (text: string) => string | undefined {
  return (text) => {
    const element = reshape(JSON.parse(text));
    return element === undefined ? undefined : JSON.stringify(element);
  };
}
