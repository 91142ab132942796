import type { Logger } from "pino";
import { missingTokenError } from "../http/error-mapping.js";
import type { Route } from "../http/route.js";
import { createTokenVerifier, readVerificationFiles, type TokenVerificationFiles } from "./token-verifier.js";

/**
 * `none`: the ledger alone judges tokens (the default, as Canton's JSON API does);
 * `unsafe-decode`: well-formed, unexpired Ledger API tokens only, signatures unchecked;
 * `hs256` / `rs256` / `es256`: verified as the ledger would, so bad tokens never reach it.
 */
export type GatewayAuthMode = "none" | "unsafe-decode" | "hs256" | "rs256" | "es256";

export const GATEWAY_AUTH_MODES: readonly GatewayAuthMode[] = [
  "none",
  "unsafe-decode",
  "hs256",
  "rs256",
  "es256",
];

export interface GatewayAuthConfig extends Omit<TokenVerificationFiles, "mode"> {
  readonly mode: GatewayAuthMode;
}

/**
 * Puts token verification in front of every route that needs a token (in place: the route
 * table is the one list the app, docs and metrics share). A rejected token is a 401
 * JsCantonError; the reason goes to the log, never the token. The user id of a verified token
 * is logged at debug level for audit, and never used as a metric label.
 */
export function applyGatewayAuth(routes: Route[], config: GatewayAuthConfig, log: Logger): void {
  if (config.mode === "none") return;
  const { mode, ...files } = config;
  const verifier = createTokenVerifier(
    readVerificationFiles({ ...files, mode: mode === "unsafe-decode" ? "unsafe" : mode }),
  );
  routes.forEach((route, index) => {
    if (route.auth !== "token") return;
    routes[index] = {
      ...route,
      handle: async (ctx) => {
        // A missing token is answered by the app before any handler runs.
        if (ctx.token !== undefined) {
          const result = await verifier.verify(ctx.token);
          if (!result.ok) {
            log.info({ route: route.path, reason: result.reason }, "token rejected by the gateway");
            throw missingTokenError();
          }
          log.debug(
            { route: route.path, method: route.method, user: result.claims.userId },
            "authenticated request",
          );
        }
        return route.handle(ctx);
      },
    };
  });
}
