import { InFlightQuestions } from "../fanout/in-flight-questions.js";
import { tokenDigest } from "../fanout/subscription-key.js";

/**
 * The ledger's admission of a WebSocket caller, asked once for the upgrades that carry the same
 * token to the same endpoint while that question is in flight: a service's sockets reconnecting
 * together (a gateway restart, a balancer's failover) cost one call, not one per socket. Each
 * call's garbage (an HTTP/2 stream and its buffers, held for the call's round trip) was most of
 * what 10,000 idle sockets grew the gateway's RSS by. An upgrade that comes after the answer
 * asks again, unless the worker holds its token for an open socket, accepted within the re-check
 * interval (ws-streams' `admission`): each answer tells when its question was asked, which that
 * hold keeps.
 */
export class SharedAdmissions {
  readonly #questions = new InFlightQuestions<number>();

  /** `digestOf`: the token's digest (HeldTokens.digest shares those of the worker's held tokens). */
  constructor(
    private readonly digestOf: (token: string) => string = tokenDigest,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves with when the question was asked (epoch ms) once the ledger admitted the token. */
  admit(endpoint: string, token: string, ask: () => Promise<void>): Promise<number> {
    return this.#questions.ask(`${endpoint} ${this.digestOf(token)}`, () => {
      const askedAt = this.now();
      return ask().then(() => askedAt);
    });
  }

  /** Questions in flight, for tests. */
  get size(): number {
    return this.#questions.size;
  }
}
