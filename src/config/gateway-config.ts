import type { TokenVerificationFiles } from "../jwt/token-verifier.js";
import type { ApiVersion } from "../proto/api-version.js";

/**
 * `none`: the ledger alone judges tokens (the default, as Canton's JSON API does);
 * `unsafe-decode`: well-formed, unexpired Ledger API tokens only, signatures unchecked;
 * `hs256` / `rs256` / `es256`: verified as the ledger would, so bad tokens never reach it.
 */
export const GATEWAY_AUTH_MODES = ["none", "unsafe-decode", "hs256", "rs256", "es256"] as const;

export type GatewayAuthMode = (typeof GATEWAY_AUTH_MODES)[number];

/**
 * permessage-deflate on WebSocket streams (websocket-config.compression), for clients that offer
 * it: `on` deflates each message on its own, with no memory per socket (uWS's shared
 * compressor). uWS's compressors with a window per socket gave larger frames here (docs/configuration.md).
 */
export const WS_COMPRESSION_MODES = ["off", "on"] as const;

export type WsCompressionMode = (typeof WS_COMPRESSION_MODES)[number];

/** The gateway's own token check (src/auth/gateway-auth.ts). */
export interface GatewayAuthConfig extends Omit<TokenVerificationFiles, "mode"> {
  readonly mode: GatewayAuthMode;
}

/** The one typed configuration object, built once at start-up (see load-config.ts). */
export type LedgerTarget =
  /** `apiVersion`: the Canton release the embedded sandbox speaks (sandbox.api-version). */
  | { kind: "embedded"; sandboxPort: number; apiVersion: ApiVersion }
  | {
      kind: "remote";
      host: string;
      port: number;
      tls?: { caCert?: string; clientCert?: string; clientKey?: string };
    };

export interface GatewayConfig {
  server: {
    address: string;
    port: number;
    /** Normalised: empty, or starting with `/` and not ending with one. */
    pathPrefix: string;
    requestTimeoutMs: number;
    /** On SIGTERM: how long /readyz answers 503 before the graceful shutdown starts (0: none). */
    drainDelayMs: number;
    /** How long a request body may take to arrive (slow or abandoned uploads end there). */
    bodyReadTimeoutMs: number;
    maxBodyBytes: number;
    /** uWS apps in worker threads on one port; 1: the gateway runs on the main thread alone. */
    workers: number;
    /** server.http-compression: the smallest answer compressed; undefined: compression off. */
    httpCompression: { minBytes: number } | undefined;
    /** server.stream-ticket-ttl: a ticket's wait for its first use, and its stream's for a reconnect. */
    streamTicketTtlMs: number;
    /** Browser origins that may call the gateway (server.cors.*); undefined: none listed, CORS off. */
    cors:
      | {
          allowedOrigins: string[];
          allowedMethods: string;
          allowedHeaders: string;
          exposedHeaders: string;
          maxAgeSeconds: number;
        }
      | undefined;
  };
  websocket: {
    httpListMaxElementsLimit: number;
    httpListWaitTimeMs: number;
    /** Backpressure of WebSocket streams, in bytes buffered on the socket. */
    highWaterMark: number;
    lowWaterMark: number;
    hardLimit: number;
    writeDeadlineMs: number;
    /** Largest query frame, in bytes: uWS refuses a larger one on its header. */
    maxQueryFrameBytes: number;
    /** How long a stream socket may wait for its query frame (0: no limit). */
    queryFrameTimeoutMs: number;
    /** Upgrades each worker admits a second (0: unpaced), and how long one may wait for its turn. */
    upgradesPerSecond: number;
    upgradeMaxWaitMs: number;
    /** 0: no pings. */
    pingIntervalMs: number;
    /** How often each stream subscriber's authorization (WebSocket, NDJSON, SSE, a list waiting) is asked of the ledger again. */
    streamAuthorizationRecheckMs: number;
    /** How long a stream is reopened from its last offset after the ledger connection is lost (0: never). */
    resumeWindowMs: number;
    /** Renewal frames one WebSocket stream may send a minute (and at once). */
    tokenRenewalsPerMinute: number;
    /** Bytes of the latest elements each shared stream keeps for subscribers admitted within them (0: none). */
    fanoutHistoryBytes: number;
    compression: WsCompressionMode;
  };
  ledger: LedgerTarget;
  /**
   * ledger.api-version: the Canton release whose JSON API is served, `auto` for the
   * participant's own (asked at start and after every reconnect).
   */
  ledgerApiVersion: "auto" | ApiVersion;
  /** The one HTTP/2 connection to the ledger, whatever its target. */
  ledgerConnection: {
    /** Largest header block of a call, in HPACK bytes: larger ones are refused, never sent. */
    maxMetadataBytes: number;
    keepaliveIntervalMs: number;
    keepaliveTimeoutMs: number;
  };
  /** Caps per user and per client address (limits.*); 0: no cap. */
  quotas: {
    wsConnectionsPerUser: number;
    wsConnectionsPerAddress: number;
    streamsPerUser: number;
    httpInFlightPerUser: number;
    commandsPerSecondPerUser: number;
    /** 0: one second's worth (commandsPerSecondPerUser). */
    commandsBurstPerUser: number;
  };
  /**
   * The participant's stream budget (limits.ledger-streams*): server streams open on the ledger
   * at once, all workers together, the share of it subscriptions may not take (kept for
   * authorization calls: at least 1 and less than `limit` while the budget is on), and the queue
   * of those waiting for one. `limit` 0: no budget (and no reserve).
   */
  ledgerStreams: {
    limit: number;
    reservedForAuthorization: number;
    queueLimit: number;
    queueTimeoutMs: number;
    /**
     * Of the subscriptions' share (`limit - reservedForAuthorization`), the slots one user may
     * hold and wait for at once (limits.ledger-streams-per-user, at least 1 while the budget is on).
     */
    subscriptionsPerUser: number;
    /**
     * Authorization questions one user may have held and waiting at once: the same share of
     * what authorization calls are sure to find (the reserve and their queue), at least 1.
     */
    authorizationsPerUser: number;
  };
  metrics: { enabled: boolean };
  /** Token verification at the gateway (`none`: left to the ledger). */
  auth: GatewayAuthConfig;
  /** Token verification of the embedded sandbox (`unsafe` by default: any signature). */
  sandboxAuth: TokenVerificationFiles;
  log: { level: string };
}
