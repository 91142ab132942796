import { defer, Observable, type Subscribable } from "rxjs";
import { isTokenRefusal } from "../errors/index.js";
import type { SharedStreams } from "../fanout/shared-streams.js";
import type { MemberRequest, UpstreamSource } from "../fanout/subscription.js";
import { tokenExpiryMs } from "../jwt/bearer-token.js";
import type { TraceContext } from "../ledger/trace-context.js";
import { Relay } from "../streams/relay.js";
import { authorizeSubscriber, confirmedBy, type SubscriberRenewals } from "./stream-authorization.js";
import type { StreamEndpoint } from "./stream-endpoint.js";
import type { Grant } from "./stream-grant.js";
import { isOffsetCheckpoint } from "./stream-position.js";

export interface SubscriberStreamOptions {
  readonly endpoint: StreamEndpoint;
  /** The request, validated. */
  readonly request: unknown;
  /** The subscriber's token when it subscribed (its grant's first). */
  readonly token: string | undefined;
  /** The subscriber's standing with the ledger: every element passes its gate. */
  readonly grant: Grant;
  readonly recheckIntervalMs: number;
  /** The sink's readiness. */
  readonly demand$: Subscribable<boolean>;
  /** The app's shared streams: a request the endpoint shares goes through them; absent: a call of its own. */
  readonly fanout?: SharedStreams;
  /** In-band renewals (WebSocket): confirmed ones move the subscriber's calls onto their token. */
  readonly renewals?: SubscriberRenewals;
  readonly trace?: TraceContext;
  /** For the lag metrics of a shared subscriber (MemberRequest.position). */
  readonly position?: MemberRequest["position"];
  /** Told where the elements come from, once known. */
  readonly upstream?: (upstream: "own" | "shared") => void;
  /** Epoch milliseconds; tests move time. */
  readonly now?: () => number;
  /** Told each time the subscriber's own call is sent (StreamEndpoint.open's `opened`); not for a fan-out membership. */
  readonly opened?: () => void;
  /** What its gate's questions name a token by (SubscriberAuthorizationOptions.digestOf). */
  readonly digestOf?: (token: string) => string;
}

/**
 * One subscriber's elements, whatever the transport (a WebSocket session, a streamed HTTP
 * answer): its own call, or its membership of the shared call of its request, behind its gate
 * (authorizeSubscriber). Every call opened on the subscriber's token confirms its grant with its
 * first message, and the fan-out's admission with its probe: so each path into the stream tells
 * the grant what the ledger said, and only the gate decides what is sent.
 */
export function subscriberStream(options: SubscriberStreamOptions): Observable<string> {
  const { endpoint, request, token, grant, trace } = options;
  const now = options.now ?? Date.now;
  // Confirmed renewals, for the calls to move onto (the gate tells them after the ledger's yes):
  // a relay, which a shared stream's member listens to for the cost of one small object.
  const renewed$ = new Relay<string>();
  const renewals = options.renewals;
  const source = defer(() => {
    const { fanout } = options;
    const share = fanout && endpoint.offsetOf ? endpoint.share?.(request, token, trace) : undefined;
    options.upstream?.(share === undefined ? "own" : "shared");
    if (fanout === undefined || share === undefined)
      return endpoint
        .open(
          request,
          token,
          options.demand$,
          // The own call's operators need an Observable: made only on this path.
          new Observable<string>((subscriber) => renewed$.subscribe(subscriber)),
          trace,
          options.opened,
        )
        .pipe(confirmedBy(grant, token, now));
    return fanout.open({
      endpoint: endpoint.path,
      share,
      token,
      renewed$,
      demand$: options.demand$,
      ...(options.position ? { position: options.position } : {}),
      ...(trace?.span ? { told: trace.span } : {}),
      source: new SubscriberSource(endpoint, grant, token, options.recheckIntervalMs, trace, now),
    });
  });
  return source.pipe(
    authorizeSubscriber(endpoint, request, {
      grant,
      recheckIntervalMs: options.recheckIntervalMs,
      now,
      ...(trace ? { trace } : {}),
      ...(renewals ? { renewals: new ConfirmedRenewals(renewals, renewed$) } : {}),
      ...(options.digestOf ? { digestOf: options.digestOf } : {}),
    }),
  );
}

/**
 * The subscriber's renewals as its gate sees them: the transport's, and each one the ledger
 * confirmed also told to its calls (`renewed$`), which move onto it. One object with methods,
 * kept by the gate, where an object of closures kept the whole scope of the subscriber's start.
 */
class ConfirmedRenewals implements SubscriberRenewals {
  readonly #renewals: SubscriberRenewals;
  readonly #renewed$: Relay<string>;

  constructor(renewals: SubscriberRenewals, renewed$: Relay<string>) {
    this.#renewals = renewals;
    this.#renewed$ = renewed$;
  }

  get tokens$(): SubscriberRenewals["tokens$"] {
    return this.#renewals.tokens$;
  }

  renewed(token: string): void {
    this.#renewals.renewed(token);
    this.#renewed$.next(token);
  }

  refused(error: unknown): void {
    this.#renewals.refused(error);
  }
}

/**
 * How the fan-out opens a subscriber's calls (its catch-up, or the shared call while it owns it):
 * one object with methods, kept by its membership, where an object of five closures and their
 * contexts was made per subscriber.
 */
class SubscriberSource implements UpstreamSource {
  readonly #endpoint: StreamEndpoint;
  readonly #grant: Grant;
  /** The subscriber's token when it subscribed: the one its admission asks about. */
  readonly #token: string | undefined;
  readonly #recheckIntervalMs: number;
  readonly #trace: TraceContext | undefined;
  readonly #now: () => number;
  /**
   * The token and ask time of its fan-out admission's yes (its probe's from its offset, or one
   * shared with it): what a joiner of the same question may share. Not its re-checks', which ask
   * from where the stream stands and say nothing of its offset (pruned since, say).
   */
  #admittedOn: string | undefined;
  #admittedAt: number | undefined;

  constructor(
    endpoint: StreamEndpoint,
    grant: Grant,
    token: string | undefined,
    recheckIntervalMs: number,
    trace: TraceContext | undefined,
    now: () => number,
  ) {
    this.#endpoint = endpoint;
    this.#grant = grant;
    this.#token = token;
    this.#recheckIntervalMs = recheckIntervalMs;
    this.#trace = trace;
    this.#now = now;
  }

  /**
   * A call on this subscriber's token confirms its grant (its own call, or the shared one while
   * it owns it); the shared call carries the trace of the subscriber that opens it.
   */
  open(request: unknown, token: string | undefined, demand$: Subscribable<boolean>): Observable<string> {
    return this.#endpoint
      .open(request, token, demand$, undefined, this.#trace)
      .pipe(confirmedBy(this.#grant, token, this.#now));
  }

  offsetOf(element: string): number | undefined {
    const offset = Number(this.#endpoint.offsetOf?.(element));
    return Number.isFinite(offset) ? offset : undefined;
  }

  isCheckpoint(element: string): boolean {
    return isOffsetCheckpoint(element);
  }

  isTokenRefusal(error: unknown): boolean {
    return isTokenRefusal(error);
  }

  /**
   * The grant decoded its token already: a member's own token (the one it joins with, or a
   * renewal the grant took first) is not decoded again.
   */
  expiryOf(token: string | undefined): number | undefined {
    return token === this.#grant.token ? this.#grant.expiresAt : tokenExpiryMs(token);
  }

  /**
   * The fan-out admitted it on its token: the ledger said yes to its request and offset, asked at
   * `askedAt`. Its grant is told first, which its gate reads.
   */
  admitted(askedAt: number): void {
    this.#grant.confirm(this.#token, askedAt);
    this.#admittedOn = this.#token;
    this.#admittedAt = askedAt;
  }

  /**
   * Its admission's yes, while `token` is still its grant's (not renewed away, not expired) and
   * that yes younger than the re-check interval: within it, a yes is what the gate lets elements
   * through on without asking again, so a joiner admitted with it is asked again no later than
   * this subscriber. With re-checks off (0), none is shared.
   */
  freshYes(token: string | undefined): number | undefined {
    const at = this.#admittedAt;
    if (at === undefined || this.#recheckIntervalMs <= 0) return undefined;
    if (token !== this.#admittedOn || token !== this.#grant.token) return undefined;
    const now = this.#now();
    const expiresAt = this.#grant.expiresAt;
    if (now - at > this.#recheckIntervalMs || (expiresAt !== undefined && now >= expiresAt)) return undefined;
    return at;
  }
}
