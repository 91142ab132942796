import type { GatewayTokenRefusal } from "../auth/gateway-auth.js";
import { renewalRateExceededError, tokenOfAnotherUserError } from "../errors/index.js";
import { decodeTokenClaims, userKey } from "../jwt/bearer-token.js";

export interface RenewalIntakeOptions {
  /** The gateway's own token check (auth.mode), the one the upgrade ran; absent in mode `none`. */
  readonly tokenRefusal?: GatewayTokenRefusal;
  /** Where, for the verifier's log line. */
  readonly where: string;
  /** Frames a minute, and at once (websocket-config.token-renewals-per-minute). */
  readonly perMinute: number;
  /** The token the stream was opened with (a socket's upgrade, a ticket's): a renewal must name the same user. */
  readonly upgradeToken: string | undefined;
  readonly now?: () => number;
}

/**
 * What a renewal's token (a WebSocket renewal frame's, or a ticket stream's renewal request's:
 * one intake per stream, whatever its transport) must pass before the ledger is asked about it, in this order: the
 * gateway's own verifier exactly as at the upgrade (signature, expiry, audience, lifetime), the
 * stream's user (the same `sub` and `iss`), and the stream's rate (a flood costs no ledger call).
 * The rate counts only tokens of the stream's own user that the verifier passed: whoever else
 * holds a way to send renewals (a ticket seen in a log) cannot spend the owner's allowance with
 * its own or forged tokens (in auth.mode `none` there is no verifier: a forged token of the same
 * `sub` is told apart by the ledger only). Resolves with undefined to go on, or the refusal for
 * its error frame; in arrival order, one at a time (a verifier may wait for keys).
 */
export class RenewalIntake {
  readonly #options: RenewalIntakeOptions;
  readonly #user: string | undefined;
  #allowance: number;
  #refilledAt: number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: RenewalIntakeOptions) {
    this.#options = options;
    this.#user = userOf(options.upgradeToken);
    this.#allowance = options.perMinute;
    this.#refilledAt = this.#now();
  }

  check(candidate: string): Promise<unknown | undefined> {
    const checked = this.#queue.then(() => this.#verify(candidate));
    this.#queue = checked.catch(() => undefined);
    return checked;
  }

  async #verify(candidate: string): Promise<unknown | undefined> {
    const refused = await this.#options.tokenRefusal?.(candidate, this.#options.where);
    if (refused !== undefined) return refused;
    const user = userOf(candidate);
    if (user === undefined || user !== this.#user) return tokenOfAnotherUserError();
    return this.#take() ? undefined : renewalRateExceededError(this.#options.perMinute);
  }

  /** A token bucket of `perMinute`, refilled continuously. */
  #take(): boolean {
    const now = this.#now();
    const { perMinute } = this.#options;
    this.#allowance = Math.min(perMinute, this.#allowance + ((now - this.#refilledAt) * perMinute) / 60_000);
    this.#refilledAt = now;
    if (this.#allowance < 1) return false;
    this.#allowance -= 1;
    return true;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

/** The user a token names; undefined without a subject. */
function userOf(token: string | undefined): string | undefined {
  const claims = token === undefined ? undefined : decodeTokenClaims(token);
  return claims?.subject === undefined ? undefined : userKey(claims);
}
