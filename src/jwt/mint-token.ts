import { createSigner } from "fast-jwt";

export type SigningAlgorithm = "HS256" | "RS256" | "ES256";

export interface MintOptions {
  /** Ledger user id, or `actAs-<party>` for quick tests. */
  user: string;
  /** HS256: the shared secret (the unsafe sandbox accepts any); RS256/ES256: a PEM private key. */
  secret: string;
  /** Lifetime in seconds. */
  expiresInSeconds: number;
  algorithm?: SigningAlgorithm;
  audience?: string;
  issuer?: string;
  /** Key id for JWKS-verified ledgers. */
  keyId?: string;
}

/** Audience a Canton participant expects by default for user tokens. */
const DEFAULT_AUDIENCE = "https://daml.com/jwt/aud/participant/sandbox";

/** A Ledger API user token (`sub`, `aud`, `scope: daml_ledger_api`, `exp`, optional `iss`). */
export function mintToken(options: MintOptions): string {
  const sign = createSigner({
    key: options.secret,
    algorithm: options.algorithm ?? "HS256",
    expiresIn: options.expiresInSeconds * 1000,
    ...(options.issuer !== undefined ? { iss: options.issuer } : {}),
    ...(options.keyId !== undefined ? { kid: options.keyId } : {}),
  });
  return sign({ sub: options.user, aud: options.audience ?? DEFAULT_AUDIENCE, scope: "daml_ledger_api" });
}
