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
}

/**
 * Decodes a JWT without checking its signature, for audit logs: the ledger (or the optional
 * gateway verification) decides whether it is valid. undefined when it is not a JWT at all.
 */
export function decodeTokenClaims(token: string): TokenClaims | undefined {
  try {
    const payload = decode(token) as Record<string, unknown>;
    return typeof payload.sub === "string" ? { subject: payload.sub } : {};
  } catch {
    return undefined;
  }
}
