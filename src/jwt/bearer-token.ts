import { createDecoder } from "fast-jwt";

/** `Authorization: Bearer <token>` -> the token; undefined when absent or not a bearer header. */
export function bearerToken(authorization: string): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}

const decode = createDecoder({ complete: false });

export interface TokenClaims {
  /** The ledger user (or `actAs-<party>` testing subject); logged, never put in metric labels. */
  subject?: string;
  /** `iss`: with the subject, which identity provider's user the token names. */
  issuer?: string;
  /** `exp` in epoch milliseconds: when the ledger stops accepting the token. */
  expiresAtMs?: number;
  /** Set when `aud` is absent or empty: a scope-based token, which Canton 3.7 refuses. */
  withoutAudience?: true;
}

/**
 * Decodes a JWT without checking its signature, for audit logs and a stream subscriber's expiry:
 * the ledger (or the optional gateway verification) decides whether it is valid. undefined when it is not a JWT at all.
 */
export function decodeTokenClaims(token: string): TokenClaims | undefined {
  try {
    const payload = decode(token) as Record<string, unknown>;
    const claims: TokenClaims = lacksAudience(payload) ? { withoutAudience: true } : {};
    if (typeof payload.sub === "string") claims.subject = payload.sub;
    if (typeof payload.iss === "string") claims.issuer = payload.iss;
    if (typeof payload.exp === "number" && Number.isFinite(payload.exp))
      claims.expiresAtMs = payload.exp * 1000;
    return claims;
  } catch {
    return undefined;
  }
}

/** Whether a JWT has no `aud` (absent, "" or []); false for what is not a JWT at all. */
export function tokenWithoutAudience(token: string): boolean {
  try {
    return lacksAudience(decode(token) as Record<string, unknown>);
  } catch {
    return false;
  }
}

function lacksAudience(payload: Record<string, unknown>): boolean {
  const aud = payload.aud;
  return aud === undefined || aud === null || aud === "" || (Array.isArray(aud) && aud.length === 0);
}

/**
 * The user claims name, as one key: its subject within its issuer (identity provider), so that
 * the same `sub` of another provider is another user.
 */
export function userKey(claims: TokenClaims): string {
  let key = userKeys.get(claims);
  if (key === undefined) {
    key = JSON.stringify([claims.issuer ?? null, claims.subject ?? null]);
    userKeys.set(claims, key);
  }
  return key;
}

/**
 * Each claims' key, made once: a worker's held tokens share one claims object a token, and a
 * crowd's starts each made and kept a copy of it (in their pace tickets and stream slots).
 */
const userKeys = new WeakMap<TokenClaims, string>();

/** When the ledger stops accepting `token` (its `exp`, epoch ms); undefined: none, or not a JWT. */
export function tokenExpiryMs(token: string | undefined): number | undefined {
  return token === undefined ? undefined : decodeTokenClaims(token)?.expiresAtMs;
}
