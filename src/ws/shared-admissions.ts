import { tokenDigest } from "../fanout/subscription-key.js";

/**
 * The ledger's admission of a WebSocket caller, asked once for the upgrades that carry the same
 * token to the same endpoint while that question is in flight: a service's sockets reconnecting
 * together (a gateway restart, a balancer's failover) cost one call, not one per socket. Each
 * call's garbage (an HTTP/2 stream and its buffers, held for the call's round trip) was most of
 * what 10,000 idle sockets grew the gateway's RSS by. Nothing outlives the call: an upgrade that
 * comes after its answer asks again, so no token's answer is kept (tokens are never cached).
 */
export class SharedAdmissions {
  /** By endpoint and token digest (never the token itself). */
  readonly #inFlight = new Map<string, Promise<void>>();

  admit(endpoint: string, token: string, ask: () => Promise<void>): Promise<void> {
    const key = `${endpoint} ${tokenDigest(token)}`;
    const running = this.#inFlight.get(key);
    if (running !== undefined) return running;
    const call = ask().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, call);
    return call;
  }

  /** Questions in flight, for tests. */
  get size(): number {
    return this.#inFlight.size;
  }
}
