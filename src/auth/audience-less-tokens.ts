import type { Logger } from "pino";
import { tokenWithoutAudience } from "../jwt/bearer-token.js";
import type { GatewayMetrics } from "../metrics/gateway-metrics.js";

/** At most one warning in this long, with the count of the tokens seen since the last one. */
const WARNING_INTERVAL_MS = 10 * 60_000;

/** HTTP requests: one in this many tokens is looked at (each look decodes the token, ~1.5 µs). */
const HTTP_SAMPLE_EVERY = 64;

/**
 * Canton 3.7 refuses tokens without `aud` (scope-based: `scope: daml_ledger_api` and no
 * audience); 3.5 and 3.6 accept them. The gateway warns operators ahead of that: a warning at
 * the first such token, then at most one per interval counting those seen since, without the
 * token, its subject or the route (nothing a client sends goes into the log line), and a counter
 * without labels (ledger_gateway_tokens_without_audience_total). HTTP requests are sampled,
 * WebSocket upgrades (which decode the token anyway) all count.
 */
export class AudienceLessTokens {
  #seenSinceWarning = 0;
  #lastWarningAt: number | undefined;
  #httpRequests = 0;

  constructor(
    private readonly log: Logger,
    private readonly metrics?: GatewayMetrics,
    private readonly now: () => number = Date.now,
  ) {}

  /** An HTTP request's token: looked at once in HTTP_SAMPLE_EVERY requests. */
  sampleHttp(token: string): void {
    if (this.#httpRequests++ % HTTP_SAMPLE_EVERY !== 0) return;
    if (tokenWithoutAudience(token)) this.seen();
  }

  /** A token already decoded and found without an audience. */
  seen(): void {
    this.#seenSinceWarning += 1;
    this.metrics?.tokensWithoutAudience.inc();
    const at = this.now();
    if (this.#lastWarningAt !== undefined && at - this.#lastWarningAt < WARNING_INTERVAL_MS) return;
    this.log.warn(
      { tokensWithoutAudience: this.#seenSinceWarning, sampledHttpOneIn: HTTP_SAMPLE_EVERY },
      "clients use tokens without `aud` (scope-based): Canton 3.7 refuses them; issue audience-based tokens (aud https://daml.com/jwt/aud/participant/<participant id>)",
    );
    this.#lastWarningAt = at;
    this.#seenSinceWarning = 0;
  }
}
