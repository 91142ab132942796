import { tokenExpiryMs } from "../jwt/bearer-token.js";

/**
 * What tells a client that the ledger accepted its renewed token (an extension of the gateway's,
 * `TokenRenewed` in the served AsyncAPI and OpenAPI): the stream goes on under the new token
 * until `expiresAt`, the token's own `exp` (absent: the token has none). The same object is a
 * WebSocket frame and the answer to a ticket stream's renewal request.
 */
export interface TokenRenewed {
  readonly tokenRenewed: { readonly expiresAt?: string };
}

export function tokenRenewed(token: string): TokenRenewed {
  const expiresAt = tokenExpiryMs(token);
  return { tokenRenewed: expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() } };
}
