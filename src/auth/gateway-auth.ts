import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { GatewayAuthConfig } from "../config/gateway-config.js";
import type { CantonHttpError } from "../errors/index.js";
import { missingTokenError } from "../errors/index.js";
import { createTokenVerifier, readVerificationFiles } from "../jwt/token-verifier.js";

/**
 * The check run before a request's body is read or a WebSocket is upgraded: undefined when the
 * caller may go on, else the 401 to answer. A missing token is refused too (the gateway verifies
 * tokens). `where` names the route for the log.
 */
export type GatewayTokenRefusal = (
  token: string | undefined,
  where: string,
) => Promise<CantonHttpError | undefined>;

export interface GatewayAuth {
  readonly refusal: GatewayTokenRefusal;
}

/**
 * Whether a token that reached a call passed the gateway's check of its signature (hs256,
 * rs256, es256): its claims are then its sender's. `unsafe-decode` checks only its form.
 */
export function gatewayVerifiesSignatures(config: GatewayAuthConfig): boolean {
  return config.mode !== "none" && config.mode !== "unsafe-decode";
}

/**
 * The gateway's own token check (auth.mode other than `none`) for HTTP routes and WebSocket
 * upgrades alike; undefined in mode `none`, where the ledger judges every request, token-less
 * ones too, as Canton's JSON API lets it.
 *
 * A refusal is Canton's UNAUTHENTICATED "The command is missing a (valid) JWT token" and
 * nothing more: Canton's category for it (AuthInterceptorInvalidAuthenticationCredentials)
 * redacts details on the API for security reasons, so the reason (expired, audience, signature)
 * is not in the answer. It goes to the log with a correlation id that the answer carries too,
 * so an operator finds the reason of a client's 401 from what the client got. Neither names the
 * token. Only a verified user id is logged.
 */
export function gatewayAuth(config: GatewayAuthConfig, log: Logger): GatewayAuth | undefined {
  if (config.mode === "none") return undefined;
  const { mode, ...files } = config;
  const verifier = createTokenVerifier(
    readVerificationFiles({ ...files, mode: mode === "unsafe-decode" ? "unsafe" : mode }),
  );
  const refusal: GatewayTokenRefusal = async (token, where) => {
    const result =
      token === undefined ? { ok: false as const, reason: "no bearer token" } : await verifier.verify(token);
    if (result.ok) {
      log.debug({ route: where, user: result.claims.userId }, "authenticated request");
      return undefined;
    }
    const correlationId = randomBytes(16).toString("hex");
    log.info({ route: where, reason: result.reason, correlationId }, "token rejected by the gateway");
    return missingTokenError(correlationId);
  };
  return { refusal };
}
