import { bearerToken, decodeTokenClaims, type TokenClaims } from "../jwt/bearer-token.js";

/** The subprotocol that carries the token, in Canton's spelling and the description's. */
const AUTH_SUBPROTOCOLS = ["daml.ws.auth", "ledger.ws.auth"] as const;

const TOKEN_PREFIX = "jwt.token.";

export interface WsAuth {
  /** The caller's JWT, used for this socket's gRPC call only. */
  token: string;
  /**
   * What the 101 answer selects: `daml.ws.auth` if offered, else `ledger.ws.auth` if offered,
   * else none. Clients built on the `ws` package fail the handshake when they offered
   * subprotocols and the server selects none, so the auth subprotocol must be echoed.
   */
  protocol: string;
  /**
   * The token's claims, decoded once for all that reads them at the upgrade (its user, its
   * expiry, whether it has no `aud`): not verified.
   */
  claims: TokenClaims;
}

/**
 * Canton's order: the `Authorization: Bearer` header first; else the first
 * `Sec-WebSocket-Protocol` entry starting with `jwt.token.` (browsers cannot set headers on a
 * WebSocket). undefined when there is no token or it is not a JWT at all: such a client gets a
 * plain HTTP 401 before any socket exists. Signature and rights are the ledger's to check.
 */
export function wsAuth(
  authorization: string,
  secWebSocketProtocol: string,
  /** A token's claims, shared with the worker's open streams that hold it (HeldTokens.claims). */
  claimsOf: (token: string) => TokenClaims | undefined = decodeTokenClaims,
): WsAuth | undefined {
  const offered = secWebSocketProtocol
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const token =
    bearerToken(authorization) ?? offered.find((p) => p.startsWith(TOKEN_PREFIX))?.slice(TOKEN_PREFIX.length);
  const claims = token === undefined || token === "" ? undefined : claimsOf(token);
  if (token === undefined || claims === undefined) return undefined;
  return { token, protocol: authSubprotocol(offered), claims };
}

/**
 * The auth subprotocol a 101 selects among those offered (`daml.ws.auth` first), or "" for none:
 * a browser fails a handshake whose answer selects none of the subprotocols it offered, so a
 * socket upgraded only to be refused on it selects one too, with or without a usable token.
 */
export function authSubprotocol(offered: string | readonly string[]): string {
  const list =
    typeof offered === "string"
      ? offered
          .split(",")
          .map((p) => p.trim())
          .filter((p) => p !== "")
      : offered;
  return AUTH_SUBPROTOCOLS.find((p) => list.includes(p)) ?? "";
}
