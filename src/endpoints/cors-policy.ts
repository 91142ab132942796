/**
 * Which browser origins may call the gateway (server.cors.*), for the HTTP routes and the
 * WebSocket upgrades alike. Canton's JSON API has none and its docs send users to a reverse
 * proxy; here the operator lists the origins, and nothing is allowed by default.
 */
export interface CorsSettings {
  /** `scheme://host[:port]` as browsers send `Origin`; `*`: any. Empty: CORS off. */
  readonly allowedOrigins: readonly string[];
  /** The Access-Control-Allow-Methods of a preflight. */
  readonly allowedMethods: string;
  /** The Access-Control-Allow-Headers of a preflight. */
  readonly allowedHeaders: string;
  /** The Access-Control-Expose-Headers of every answer to an allowed origin; empty: none. */
  readonly exposedHeaders: string;
  /** How long a browser may cache a preflight's answer. */
  readonly maxAgeSeconds: number;
}

export class CorsPolicy {
  readonly #origins: ReadonlySet<string>;
  readonly #any: boolean;

  constructor(readonly settings: CorsSettings) {
    this.#origins = new Set(settings.allowedOrigins);
    this.#any = this.#origins.has("*");
  }

  /** Whether a request with this `Origin` (empty: none, not a browser's cross-origin call) may be served. */
  allows(origin: string): boolean {
    return origin === "" || this.#any || this.#origins.has(origin);
  }

  /** The headers of any answer to an allowed cross-origin request (none without `Origin`). */
  answerHeaders(origin: string): [string, string][] {
    if (origin === "") return [];
    // The answer depends on the Origin: caches must not hand one origin's answer to another.
    const headers: [string, string][] = [
      ["Access-Control-Allow-Origin", this.#any ? "*" : origin],
      ["Vary", "Origin"],
    ];
    // Browsers show a page only the few CORS-safelisted answer headers unless told.
    const { exposedHeaders } = this.settings;
    if (exposedHeaders !== "") headers.push(["Access-Control-Expose-Headers", exposedHeaders]);
    return headers;
  }

  /** What a preflight's answer adds to `answerHeaders` for an allowed origin. */
  preflightHeaders(): [string, string][] {
    const { allowedMethods, allowedHeaders, maxAgeSeconds } = this.settings;
    return [
      ["Access-Control-Allow-Methods", allowedMethods],
      ["Access-Control-Allow-Headers", allowedHeaders],
      ["Access-Control-Max-Age", String(maxAgeSeconds)],
    ];
  }
}
