import { createSigner } from "fast-jwt";

/** A Ledger API token as clients send them; the unsecured sandbox does not check the signature. */
export function tokenFor(user = "participant_admin", extraClaims: Record<string, unknown> = {}): string {
  const sign = createSigner({ key: "any-secret-will-do", algorithm: "HS256", expiresIn: 3_600_000 });
  return sign({
    sub: user,
    aud: ["https://daml.com/jwt/aud/participant/sandbox"],
    scope: "daml_ledger_api",
    ...extraClaims,
  });
}
