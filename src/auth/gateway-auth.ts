import type { Logger } from "pino";
import type { GatewayAuthConfig } from "../config/gateway-config.js";
import type { Route } from "../endpoints/route.js";
import { missingTokenError } from "../errors/index.js";
import { createTokenVerifier, readVerificationFiles } from "../jwt/token-verifier.js";

/**
 * Puts token verification in front of every route that needs a token (in place: the route
 * table is the one list the app, docs and metrics share). A missing or rejected token is a 401
 * JsCantonError; the reason goes to the log, never the token. The user id of a verified token
 * is logged at debug level for audit, and never used as a metric label. Without verification
 * (mode `none`) nothing is put in front: the ledger judges every request, token-less ones too.
 */
export function applyGatewayAuth(routes: Route[], accepts: GatewayTokenCheck | undefined): void {
  if (accepts === undefined) return;
  routes.forEach((route, index) => {
    if (route.auth !== "token") return;
    routes[index] = {
      ...route,
      refusesMissingToken: true,
      handle: async (ctx) => {
        if (ctx.token === undefined || !(await accepts(ctx.token, `${route.method} ${route.path}`))) {
          throw missingTokenError();
        }
        return route.handle(ctx);
      },
    };
  });
}

/** Whether the gateway accepts a token, `where` naming the route for the log. */
export type GatewayTokenCheck = (token: string, where: string) => Promise<boolean>;

/**
 * The gateway's own token check for HTTP routes and WebSocket upgrades alike; undefined in mode
 * `none`. The reason of a rejection goes to the log, never the token.
 */
export function gatewayTokenCheck(config: GatewayAuthConfig, log: Logger): GatewayTokenCheck | undefined {
  if (config.mode === "none") return undefined;
  const { mode, ...files } = config;
  const verifier = createTokenVerifier(
    readVerificationFiles({ ...files, mode: mode === "unsafe-decode" ? "unsafe" : mode }),
  );
  return async (token, where) => {
    const result = await verifier.verify(token);
    if (!result.ok) {
      log.info({ route: where, reason: result.reason }, "token rejected by the gateway");
      return false;
    }
    log.debug({ route: where, user: result.claims.userId }, "authenticated request");
    return true;
  };
}
