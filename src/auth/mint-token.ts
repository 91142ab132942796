import { createSigner } from "fast-jwt";

export interface MintOptions {
  /** Ledger user id, or `actAs-<party>` for quick tests. */
  user: string;
  /** HMAC secret; the unsecured sandbox accepts any. */
  secret: string;
  /** Lifetime in seconds. */
  expiresInSeconds: number;
  audience?: string;
}

/** Audience a Canton participant expects by default for user tokens. */
export const DEFAULT_AUDIENCE = "https://daml.com/jwt/aud/participant/sandbox";

/** An HS256 Ledger API user token (`sub`, `aud`, `scope: daml_ledger_api`, `exp`). */
export function mintToken(options: MintOptions): string {
  const sign = createSigner({
    key: options.secret,
    algorithm: "HS256",
    expiresIn: options.expiresInSeconds * 1000,
  });
  return sign({ sub: options.user, aud: options.audience ?? DEFAULT_AUDIENCE, scope: "daml_ledger_api" });
}
