import { decodeTokenClaims, type TokenClaims } from "./bearer-token.js";

/**
 * The tokens that a worker's open streams hold, each kept once with its claims decoded once for
 * all the streams that hold it, and its digest (what keys of shared questions name it by) made
 * once: a service's crowd of sockets reconnecting on one token decoded it once per socket, at its
 * upgrade and again for its stream (some 15 µs of a worker's CPU each time in a storm, for the
 * same answer), and hashed it for its admission and its join. Nothing outlives its holders: an
 * entry goes with the last stream that holds its token (which that stream holds anyway, for its
 * calls), so no token is kept beyond the requests that carry it. The claims are the token's
 * unverified contents, the same whoever decodes them: sharing them decides nothing (the ledger
 * judges every call).
 *
 * A held token may also be known as accepted by the ledger (`accept`): a WebSocket's at its
 * upgrade, a renewal's at the ledger's yes, any other once the ledger was asked about it at a
 * stream claim (see chargedStreamSlots). Its subject is then its sender's, which the stream
 * budget charges its claims to; and where the question's time is known (a WebSocket's
 * admission), an upgrade of the token within the re-check interval of it needs no question of
 * its own (ws-streams). That too goes with the last holder: a later request on the token is
 * asked again.
 */
export class HeldTokens {
  readonly #held = new Map<string, Held>();

  /** `digestOf`: what keys of shared questions name a token by (the fan-out's tokenDigest). */
  constructor(private readonly digestOf: (token: string) => string) {}

  /**
   * The copy of `token` that the streams holding it share (the first holder's), or `token` itself
   * while none holds it. A socket's token is a slice of its upgrade's whole Sec-WebSocket-Protocol
   * header, which it keeps alive: a crowd on one token kept one header per socket (some 400 bytes
   * each), where one copy serves them all.
   */
  shared(token: string): string {
    return this.#held.get(token)?.token ?? token;
  }

  /**
   * `token`'s claims, decoded: the held ones while a stream holds it, else decoded now (and not
   * kept). undefined when it is not a JWT at all.
   */
  claims(token: string): TokenClaims | undefined {
    const known = this.#held.get(token);
    return known === undefined ? decodeTokenClaims(token) : known.claims;
  }

  /** Whether `token` is held and known to be accepted by the ledger. */
  accepted(token: string): boolean {
    return this.#held.get(token)?.acceptedAt !== undefined;
  }

  /**
   * When the newest question the ledger accepted `token` on was asked (epoch ms), while it is
   * held: -Infinity when accepted at a time not told; undefined when not held, or not accepted.
   */
  acceptedAt(token: string): number | undefined {
    return this.#held.get(token)?.acceptedAt;
  }

  /**
   * The ledger accepted `token`, which the caller holds, on a question asked at `askedAt` (absent:
   * a time not told): known as long as a holder holds it.
   */
  accept(token: string, askedAt: number = Number.NEGATIVE_INFINITY): void {
    const known = this.#held.get(token);
    if (known !== undefined) known.acceptedAt = Math.max(known.acceptedAt ?? askedAt, askedAt);
  }

  /** `token`'s digest (`digestOf`): the held one while a stream holds it, else made now (and not kept). */
  digest(token: string): string {
    const known = this.#held.get(token);
    if (known === undefined) return this.digestOf(token);
    known.digest ??= this.digestOf(token);
    return known.digest;
  }

  /** `token`'s expiry (epoch ms; undefined: none, or not a JWT) for one more holder: release it once. */
  hold(token: string): number | undefined {
    const known = this.#held.get(token);
    if (known !== undefined) {
      known.holders += 1;
      return known.claims?.expiresAtMs;
    }
    const claims = decodeTokenClaims(token);
    this.#held.set(token, { token, claims, digest: undefined, holders: 1, acceptedAt: undefined });
    return claims?.expiresAtMs;
  }

  /** A holder of `token` let go of it. */
  release(token: string): void {
    const known = this.#held.get(token);
    if (known === undefined) return;
    known.holders -= 1;
    if (known.holders <= 0) this.#held.delete(token);
  }

  /** Distinct tokens held, for tests. */
  get size(): number {
    return this.#held.size;
  }
}

interface Held {
  /** The first holder's copy of the text, which every holder keeps. */
  readonly token: string;
  readonly claims: TokenClaims | undefined;
  /** Made when first asked for. */
  digest: string | undefined;
  holders: number;
  /** When the ledger accepted it (`accept`); undefined: not known to. */
  acceptedAt: number | undefined;
}

/**
 * One holder's hold of a token in a worker's held tokens: taken once, moved onto each renewed
 * token the ledger accepted (which the holder's calls carry from then on, so that they are
 * charged to its user without asking again), given back once.
 */
export class TokenHold {
  readonly #tokens: HeldTokens;
  #token: string | undefined;
  /** The first token's expiry (epoch ms; undefined: none, or not a JWT). */
  readonly expiresAt: number | undefined;

  /**
   * `accepted`: the ledger accepted `token` already (a WebSocket's upgrade was admitted), on a
   * question asked at `acceptedAt` (absent: a time not told, or the token's held acceptance was
   * what admitted it, which it does not renew).
   */
  constructor(tokens: HeldTokens, token: string, accepted: boolean, acceptedAt?: number) {
    this.#tokens = tokens;
    this.#token = token;
    this.expiresAt = tokens.hold(token);
    if (accepted) tokens.accept(token, acceptedAt);
  }

  /** The ledger accepted `token`, which replaces the one held. */
  renewed(token: string): void {
    const before = this.#token;
    if (before === undefined) return;
    this.#tokens.hold(token);
    this.#tokens.accept(token);
    this.#tokens.release(before);
    this.#token = token;
  }

  release(): void {
    if (this.#token !== undefined) this.#tokens.release(this.#token);
    this.#token = undefined;
  }
}
