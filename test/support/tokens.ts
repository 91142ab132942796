import { AUDIENCE, signToken } from "../jwt/test-tokens.js";

/** A Ledger API token as clients send them; the unsecured sandbox does not check the signature. */
export function tokenFor(user = "participant_admin", extraClaims: Record<string, unknown> = {}): string {
  return signToken(user, { key: "any-secret-will-do", audience: [AUDIENCE], extra: extraClaims });
}
