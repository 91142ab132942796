import { tokenExpiryMs } from "./bearer-token.js";

/**
 * The `exp` of the tokens that a worker's open streams hold, decoded once for all the streams
 * that hold the same token: a service's crowd of sockets reconnecting on one token decoded it
 * once per socket. Nothing outlives its holders: an entry goes with the last stream that holds
 * its token (which that stream holds anyway, for its calls), so no token is kept beyond the
 * requests that carry it.
 */
export class HeldTokenExpiries {
  readonly #held = new Map<
    string,
    { readonly token: string; readonly expiresAtMs: number | undefined; holders: number }
  >();

  /**
   * The copy of `token` that the streams holding it share (the first holder's), or `token` itself
   * while none holds it. A socket's token is a slice of its upgrade's whole Sec-WebSocket-Protocol
   * header, which it keeps alive: a crowd on one token kept one header per socket (some 400 bytes
   * each), where one copy serves them all.
   */
  shared(token: string): string {
    return this.#held.get(token)?.token ?? token;
  }

  /** `token`'s expiry (epoch ms; undefined: none, or not a JWT) for one more holder: release it once. */
  hold(token: string): number | undefined {
    const known = this.#held.get(token);
    if (known !== undefined) {
      known.holders += 1;
      return known.expiresAtMs;
    }
    const expiresAtMs = tokenExpiryMs(token);
    this.#held.set(token, { token, expiresAtMs, holders: 1 });
    return expiresAtMs;
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
