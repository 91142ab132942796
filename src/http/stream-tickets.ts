import { randomBytes, timingSafeEqual } from "node:crypto";
import type { RenewalIntake } from "../endpoints/renewal-intake.js";
import { decodeTokenClaims, tokenExpiryMs, userKey } from "../jwt/bearer-token.js";

/**
 * Stream tickets: how a browser's `EventSource`, which can send no header, opens a stream
 * (docs/browsers.md; the threat model in docs/security.md, "Stream tickets"). A page asks for a
 * ticket with a normal authorized POST carrying the stream's request; the ticket is an opaque
 * random string that opens that stream once (`GET <path>?ticket=...`), within seconds, from the
 * same origin. The bearer token stays here, never in a URL: the stream runs on it, behind the
 * same gate as every subscriber, and ends when it expires unless renewed.
 *
 * The URL a ticket is in is spent at its first use. EventSource reconnects to the same URL by
 * itself, sending the id of the last event it got as `Last-Event-ID`: a ticket's stream ids are
 * `<resume key>.<offset>`, and a reconnect is let in only with its stream's resume key, which
 * travels in event ids and that header, never in a URL. One connection reads a stream at a time.
 */

/** What a GET shows of a ticket: where it asks, from where, and its resume key if it has one. */
export interface TicketShown {
  readonly path: string;
  readonly origin: string;
  /** `Last-Event-ID` ("" without one): `<resume key>.<id>` on a reconnect. */
  readonly lastEventId: string;
}

/** What a ticket opens, fixed when it is issued. */
export interface TicketedRequest {
  /** The stream endpoint's path (without the server's prefix). */
  readonly path: string;
  /** The endpoint's request, validated when the ticket was issued. */
  readonly request: unknown;
  /** The `Origin` of the ticket's POST ("" without one): only a GET with the same opens it. */
  readonly origin: string;
}

/** The connection that reads a ticket's stream now. */
export interface LiveReader {
  /** Ends this connection's answer: a reconnect of the same client took the stream over. */
  stop(): void;
  /** Puts a renewed token to the stream's gate: resolves with undefined once accepted, or the refusal. */
  renew(token: string): Promise<unknown | undefined>;
}

/** One ticket's stream, from its issue to its end, across its client's reconnects. */
export class TicketStream {
  /** The token the stream runs on (a renewal accepted by the ledger replaces it). */
  token: string;
  /** Set when the ticket is first used: what a reconnect must show. */
  resumeKey: string | undefined;
  live: LiveReader | undefined;
  /** It came to its end (a bounded request's): a reconnect is told to stop (204). */
  ended = false;
  /** When it is forgotten (epoch ms): a ticket not used in time, a stream not reconnected in time. */
  forgetAt: number;
  /** Its renewals' rate and checks, across its reconnects (made at its first renewal). */
  intake: RenewalIntake | undefined;

  constructor(
    readonly ticket: string,
    readonly asked: TicketedRequest,
    token: string,
    readonly user: string,
    forgetAt: number,
  ) {
    this.token = token;
    this.forgetAt = forgetAt;
  }
}

export type TicketOpening =
  /** Read it; `after`: the element id to continue after (a reconnect). */
  | { readonly kind: "open"; readonly stream: TicketStream; readonly after: string | undefined }
  /** It ended: the client is told to stop reconnecting. */
  | { readonly kind: "ended" }
  | { readonly kind: "refused" }
  /** Not held here (another worker thread may hold it: ticket-exchange.ts). */
  | { readonly kind: "unknown" };

/** A ticket and its stream as they move from one worker thread to another (structured-cloned). */
export interface MovedTicket {
  readonly ticket: string;
  readonly asked: TicketedRequest;
  readonly token: string;
  readonly user: string;
  readonly resumeKey: string | undefined;
  readonly ended: boolean;
  readonly forgetAt: number;
}

export interface StreamTicketsOptions {
  /** How long a ticket may wait for its first use, and a dropped stream for its reconnect. */
  readonly ticketTtlMs: number;
  /** Unused tickets one user may hold at once. */
  readonly pendingPerUser: number;
  readonly now?: () => number;
}

/** The tickets of one gateway (one worker thread), and the streams they opened. */
export class StreamTickets {
  readonly #streams = new Map<string, TicketStream>();
  /** Unused tickets per user. */
  readonly #pending = new Map<string, number>();
  readonly #options: StreamTicketsOptions;
  #sweptAt = 0;

  constructor(options: StreamTicketsOptions) {
    this.#options = options;
  }

  /**
   * A ticket for `asked` on `token`; undefined when the token's user already holds as many
   * unused ones as it may. It lives for the ticket TTL, and never past the token's expiry.
   */
  issue(asked: TicketedRequest, token: string): { ticket: string; expiresAt: number } | undefined {
    const now = this.#now();
    this.#sweep(now);
    const user = userOf(token);
    const pending = this.#pending.get(user) ?? 0;
    if (pending >= this.#options.pendingPerUser) return undefined;
    this.#pending.set(user, pending + 1);
    const ticket = randomBytes(24).toString("base64url");
    const expiresAt = Math.min(
      now + this.#options.ticketTtlMs,
      tokenExpiryMs(token) ?? Number.POSITIVE_INFINITY,
    );
    this.#streams.set(ticket, new TicketStream(ticket, asked, token, user, expiresAt));
    return { ticket, expiresAt };
  }

  /**
   * A GET with `ticket` on `path` from `origin`: its first use opens the stream; later ones are
   * the client's reconnects, let in with the stream's resume key in `lastEventId`
   * (`<key>.<id>`, the id to continue after). An unused ticket shown for another path or from
   * another origin is spent; a used one is refused and its stream goes on untouched (a URL seen
   * in a log must not end the stream of the page that holds it). A reconnect with the resume key
   * while a connection still reads the stream (one whose loss the gateway has not seen yet) takes
   * the stream over.
   */
  open(ticket: string, { path, origin, lastEventId }: TicketShown): TicketOpening {
    const now = this.#now();
    this.#sweep(now);
    const stream = this.#streams.get(ticket);
    if (stream === undefined) return UNKNOWN;
    if (now >= stream.forgetAt) {
      if (stream.live === undefined) this.#forget(stream);
      return REFUSED;
    }
    if (stream.asked.path !== path || stream.asked.origin !== origin) {
      if (stream.resumeKey === undefined) this.#forget(stream);
      return REFUSED;
    }
    if (stream.resumeKey === undefined) {
      this.#unpend(stream.user);
      stream.resumeKey = randomBytes(16).toString("base64url");
      stream.forgetAt = tokenExpiryMs(stream.token) ?? Number.POSITIVE_INFINITY;
      return { kind: "open", stream, after: undefined };
    }
    const dot = lastEventId.indexOf(".");
    if (dot < 0 || !sameKey(lastEventId.slice(0, dot), stream.resumeKey)) return REFUSED;
    if (stream.ended) return ENDED;
    const previous = stream.live;
    stream.live = undefined;
    previous?.stop();
    stream.forgetAt = tokenExpiryMs(stream.token) ?? Number.POSITIVE_INFINITY;
    return { kind: "open", stream, after: lastEventId.slice(dot + 1) };
  }

  /** `reader` reads `stream` now; the returned function says it stopped (`ended`: for good). */
  attach(stream: TicketStream, reader: LiveReader): (ended: boolean) => void {
    stream.live = reader;
    return (ended) => {
      if (stream.live !== reader) return;
      stream.live = undefined;
      if (ended) stream.ended = true;
      const expiry = tokenExpiryMs(stream.token) ?? Number.POSITIVE_INFINITY;
      stream.forgetAt = Math.min(this.#now() + this.#options.ticketTtlMs, expiry);
    };
  }

  /** A stream a renewal may be for: opened, not ended, not expired. */
  opened(ticket: string): TicketStream | undefined {
    const stream = this.#streams.get(ticket);
    if (stream === undefined || stream.resumeKey === undefined || stream.ended) return undefined;
    return this.#now() < stream.forgetAt ? stream : undefined;
  }

  /** The token the stream runs on from now on (the ledger accepted it). */
  renewed(stream: TicketStream, token: string): void {
    stream.token = token;
    if (stream.live !== undefined) stream.forgetAt = tokenExpiryMs(token) ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Hands the ticket over to another worker thread, which a GET showing `shown` reached, when
   * that GET would be let in here (the same path and origin; its resume key for a used ticket):
   * forgotten here, its connection (one whose loss was not seen yet) stopped, as a reconnect here
   * would. Any other GET takes nothing and stops nothing.
   */
  take(ticket: string, shown: TicketShown): MovedTicket | undefined {
    const stream = this.#streams.get(ticket);
    if (stream === undefined || !admits(stream, shown, this.#now())) return undefined;
    const previous = stream.live;
    stream.live = undefined;
    previous?.stop();
    this.#forget(stream);
    const { asked, token, user, resumeKey, ended, forgetAt } = stream;
    return { ticket, asked, token, user, resumeKey, ended, forgetAt };
  }

  /** A ticket another worker thread handed over, held here from now on. */
  adopt(moved: MovedTicket): void {
    const stream = new TicketStream(moved.ticket, moved.asked, moved.token, moved.user, moved.forgetAt);
    stream.resumeKey = moved.resumeKey;
    stream.ended = moved.ended;
    if (stream.resumeKey === undefined)
      this.#pending.set(stream.user, (this.#pending.get(stream.user) ?? 0) + 1);
    this.#streams.set(moved.ticket, stream);
  }

  #forget(stream: TicketStream): void {
    if (this.#streams.get(stream.ticket) !== stream) return;
    this.#streams.delete(stream.ticket);
    if (stream.resumeKey === undefined) this.#unpend(stream.user);
  }

  #unpend(user: string): void {
    const pending = (this.#pending.get(user) ?? 1) - 1;
    if (pending > 0) this.#pending.set(user, pending);
    else this.#pending.delete(user);
  }

  /** Forgets what is past its time, at most once a second (the map is walked whole). */
  #sweep(now: number): void {
    if (now - this.#sweptAt < 1_000) return;
    this.#sweptAt = now;
    for (const stream of this.#streams.values()) {
      if (now >= stream.forgetAt && stream.live === undefined) this.#forget(stream);
    }
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

const REFUSED: TicketOpening = { kind: "refused" };
const UNKNOWN: TicketOpening = { kind: "unknown" };
const ENDED: TicketOpening = { kind: "ended" };

/** Whether a GET showing `shown` would open `stream` (no side effect). */
function admits(stream: TicketStream, shown: TicketShown, now: number): boolean {
  if (now >= stream.forgetAt || stream.asked.path !== shown.path || stream.asked.origin !== shown.origin) {
    return false;
  }
  if (stream.resumeKey === undefined) return true;
  const dot = shown.lastEventId.indexOf(".");
  return dot >= 0 && sameKey(shown.lastEventId.slice(0, dot), stream.resumeKey);
}

/** In constant time: a key is a secret. */
function sameKey(shown: string, key: string): boolean {
  const a = Buffer.from(shown);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The user a token names, for the per-user count of tickets. */
function userOf(token: string): string {
  return userKey(decodeTokenClaims(token) ?? {});
}
