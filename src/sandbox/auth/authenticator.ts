import type { Metadata } from "@grpc/grpc-js";
import { bearerToken } from "../../jwt/bearer-token.js";

/**
 * Who is calling, as established by the auth step (a verified token). What the caller may do
 * is resolved from the user store when a requirement is checked (resolved-claims.ts), so a
 * change of rights takes effect on the next call.
 */
export interface AuthenticatedCaller {
  /** The raw JWT, for services that pass it on or audit it. */
  readonly token: string;
  /** The decoded payload (verified or not, depending on the authenticator). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** The `sub` claim: the ledger user id of user tokens. */
  readonly userId?: string;
  /** The participant the token is restricted to (its `aud`), when it names one. */
  readonly participantId?: string;
  /** The token's `exp` (epoch seconds): its streams end there (src/jwt/expiry-timer.ts). */
  readonly expiresAt?: number;
  /** Set when the token's issuer is an identity provider configuration's: the user lives there. */
  readonly identityProviderId?: string;
}

/**
 * The auth step every Ledger API call goes through before its handler runs. It resolves the
 * caller or throws a SandboxError (UNAUTHENTICATED in Canton's form).
 */
export interface Authenticator {
  authenticate(metadata: Metadata): Promise<AuthenticatedCaller>;
}

/** The token of `authorization: Bearer <jwt>` metadata; undefined when absent or malformed. */
export function bearerTokenOf(metadata: Metadata): string | undefined {
  const header = metadata.get("authorization")[0];
  return typeof header === "string" ? bearerToken(header) : undefined;
}
