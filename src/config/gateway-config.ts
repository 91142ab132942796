import type { GatewayAuthConfig } from "../auth/gateway-auth.js";
import type { TokenVerificationFiles } from "../jwt/token-verifier.js";

/** The one typed configuration object, built once at start-up (see load-config.ts). */
export type LedgerTarget =
  | { kind: "embedded"; sandboxPort: number }
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
    maxBodyBytes: number;
  };
  websocket: {
    httpListMaxElementsLimit: number;
    httpListWaitTimeMs: number;
    /** Backpressure of WebSocket streams, in bytes buffered on the socket. */
    highWaterMark: number;
    lowWaterMark: number;
    hardLimit: number;
    writeDeadlineMs: number;
    /** 0: no pings. */
    pingIntervalMs: number;
  };
  ledger: LedgerTarget;
  metrics: { enabled: boolean };
  /** Token verification at the gateway (`none`: left to the ledger). */
  auth: GatewayAuthConfig;
  /** Token verification of the embedded sandbox (`unsafe` by default: any signature). */
  sandboxAuth: TokenVerificationFiles;
  log: { level: string };
}
