import { createSigner } from "fast-jwt";

export const AUDIENCE = "https://daml.com/jwt/aud/participant/sandbox";

export interface TestTokenOptions {
  key?: string;
  algorithm?: "HS256" | "RS256" | "ES256";
  audience?: string | string[] | null;
  /**
   * Epoch seconds; default five minutes from now (Canton's max-token-lifetime: the longest a
   * verifying sandbox accepts); null: no `exp` claim.
   */
  exp?: number | null;
  issuer?: string;
  kid?: string;
  extra?: Record<string, unknown>;
}

/** A Ledger API token signed as a test needs it (a wrong key, a past expiry, another audience...). */
export function signToken(user: string, options: TestTokenOptions = {}): string {
  const sign = createSigner({
    key: options.key ?? "test-secret",
    algorithm: options.algorithm ?? "HS256",
    ...(options.kid !== undefined ? { kid: options.kid } : {}),
  });
  return sign({
    sub: user,
    ...(options.audience === null ? {} : { aud: options.audience ?? AUDIENCE }),
    scope: "daml_ledger_api",
    ...(options.exp === null ? {} : { exp: options.exp ?? Math.floor(Date.now() / 1000) + 300 }),
    ...(options.issuer !== undefined ? { iss: options.issuer } : {}),
    ...options.extra,
  });
}

/** An unsigned token (`alg: none`): header and payload, empty signature. */
export function unsignedToken(user: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part({ sub: user, aud: AUDIENCE, scope: "daml_ledger_api" })}.`;
}
