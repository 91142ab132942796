import { AUDIENCE, signToken } from "../jwt/test-tokens.js";

/**
 * A Ledger API token as clients send them; the unsecured sandbox does not check the signature,
 * and accepts any lifetime: an hour, so that no test file outlives the tokens it minted first.
 */
export function tokenFor(user = "participant_admin", extraClaims: Record<string, unknown> = {}): string {
  return signToken(user, {
    key: "any-secret-will-do",
    audience: [AUDIENCE],
    exp: Math.floor(Date.now() / 1000) + 3600,
    extra: extraClaims,
  });
}
