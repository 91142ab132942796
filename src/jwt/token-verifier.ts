import { createPublicKey, type JsonWebKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { createDecoder, createVerifier, type DecodedJwt } from "fast-jwt";
import { type ClaimsResult, readLedgerClaims } from "./ledger-claims.js";
import { tokenLifetimeRefusal } from "./token-lifetime.js";

/**
 * Access token verification with the options a Canton participant offers (HMAC-256 secret, RSA
 * or EC public key, JWKS), plus `unsafe`: the development ledger that accepts any signature but
 * still wants a well-formed, unexpired token. Shared by the sandbox and the gateway's optional
 * verification: one code path, so both reject exactly the same tokens.
 */
export type VerificationMode = "unsafe" | "hs256" | "rs256" | "es256";

export const VERIFICATION_MODES: readonly VerificationMode[] = ["unsafe", "hs256", "rs256", "es256"];

export interface TokenVerificationOptions {
  readonly mode: VerificationMode;
  /** HS256 shared secret. */
  readonly secret?: string;
  /** RS256/ES256: a PEM public key (SPKI or certificate)... */
  readonly publicKeyPem?: string;
  /** ...or a JWKS document (JSON text); the token's `kid` picks the key. */
  readonly jwks?: string;
  /** Canton's target audience: audience-based tokens whose `aud` contains it. */
  readonly audience?: string;
  /** Canton's target scope (when no audience is set). */
  readonly scope?: string;
  /** When set, `iss` must equal it. */
  readonly issuer?: string;
  /**
   * Canton's `max-token-lifetime`: a token whose `exp` is further than this from now, or that
   * has no `exp`, is refused (token-lifetime.ts). Absent or 0: no limit.
   */
  readonly maxTokenLifetimeMs?: number;
}

/** File-based key options, as config and CLI flags name them. */
export interface TokenVerificationFiles extends Omit<TokenVerificationOptions, "publicKeyPem" | "jwks"> {
  readonly publicKeyFile?: string;
  readonly jwksFile?: string;
}

export interface TokenVerifier {
  readonly mode: VerificationMode;
  /** Never throws: a rejection carries a reason for the log (never the token itself). */
  verify(token: string): Promise<ClaimsResult>;
}

const ALGORITHMS = { hs256: "HS256", rs256: "RS256", es256: "ES256" } as const;

/** Reads the key files named by `files` (at start-up, so a bad path fails early). */
export function readVerificationFiles(files: TokenVerificationFiles): TokenVerificationOptions {
  const { publicKeyFile, jwksFile, ...rest } = files;
  return {
    ...rest,
    ...(publicKeyFile !== undefined ? { publicKeyPem: readFileSync(publicKeyFile, "utf8") } : {}),
    ...(jwksFile !== undefined ? { jwks: readFileSync(jwksFile, "utf8") } : {}),
  };
}

export function createTokenVerifier(options: TokenVerificationOptions): TokenVerifier {
  const rules = {
    ...(options.audience !== undefined ? { audience: options.audience } : {}),
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
  };
  const lifetimeChecked = withLifetimeLimit(options.maxTokenLifetimeMs ?? 0);
  if (options.mode === "unsafe") return lifetimeChecked(unsafeVerifier(rules, options.issuer));
  const algorithm = ALGORITHMS[options.mode];
  const keyFor = keySource(options, algorithm);
  const verifier = createVerifier({
    algorithms: [algorithm],
    key: async (decoded: DecodedJwt) => keyFor(decoded.header.kid),
    ...(options.issuer !== undefined ? { allowedIss: options.issuer } : {}),
    cache: false,
  });
  return lifetimeChecked({
    mode: options.mode,
    async verify(token) {
      let payload: unknown;
      try {
        payload = await verifier(token);
      } catch (error) {
        return { ok: false, reason: `Could not verify JWT token: ${(error as Error).message}` };
      }
      return readLedgerClaims(payload, rules);
    },
  });
}

/** The verifier with Canton's lifetime check after its own (a valid token only). */
function withLifetimeLimit(maxLifetimeMs: number): (verifier: TokenVerifier) => TokenVerifier {
  if (maxLifetimeMs === 0) return (verifier) => verifier;
  return (verifier) => ({
    mode: verifier.mode,
    async verify(token) {
      const result = await verifier.verify(token);
      if (!result.ok) return result;
      const refusal = tokenLifetimeRefusal(result.claims.expiresAt, maxLifetimeMs, Date.now());
      return refusal === undefined ? result : { ok: false, reason: `Could not verify JWT token: ${refusal}` };
    },
  });
}

function unsafeVerifier(
  rules: { audience?: string; scope?: string },
  issuer: string | undefined,
): TokenVerifier {
  const decode = createDecoder({ complete: true });
  return {
    mode: "unsafe",
    async verify(token) {
      let decoded: DecodedJwt;
      try {
        decoded = decode(token) as DecodedJwt;
      } catch (error) {
        return { ok: false, reason: `Could not decode JWT token: ${(error as Error).message}` };
      }
      // Even an unsafe ledger refuses unsigned tokens: `none` says nobody vouched for the claims.
      const alg = decoded.header.alg as unknown;
      if (typeof alg !== "string" || alg.toLowerCase() === "none" || decoded.signature === "")
        return { ok: false, reason: "Could not verify JWT token: unsigned token (alg none)" };
      const payload = decoded.payload as Record<string, unknown>;
      if (typeof payload.exp === "number" && payload.exp * 1000 <= Date.now())
        return { ok: false, reason: "Could not verify JWT token: The token has expired" };
      if (issuer !== undefined && payload.iss !== issuer)
        return { ok: false, reason: "Could not verify JWT token: The iss claim value is not allowed." };
      return readLedgerClaims(payload, rules);
    },
  };
}

/** The verification key for a token's `kid`: the one PEM key, or the JWKS entry. */
function keySource(
  options: TokenVerificationOptions,
  algorithm: string,
): (kid: string | undefined) => string {
  if (algorithm === "HS256") {
    if (options.secret === undefined || options.secret === "") throw new Error("hs256 needs a secret");
    const secret = options.secret;
    return () => secret;
  }
  if (options.publicKeyPem !== undefined) {
    const pem = createPublicKey(options.publicKeyPem).export({ type: "spki", format: "pem" }).toString();
    return () => pem;
  }
  if (options.jwks === undefined) throw new Error(`${options.mode} needs a public key file or a JWKS file`);
  const keys = jwksKeys(options.jwks, algorithm === "RS256" ? "RSA" : "EC", algorithm);
  if (keys.size === 0) throw new Error(`the JWKS holds no ${algorithm} key`);
  return (kid) => {
    const key = kid !== undefined ? keys.get(kid) : keys.size === 1 ? [...keys.values()][0] : undefined;
    if (key === undefined) throw new Error(`no JWKS key for kid ${kid ?? "(none)"}`);
    return key;
  };
}

function jwksKeys(text: string, kty: string, algorithm: string): Map<string, string> {
  const document = JSON.parse(text) as { keys?: (JsonWebKey & { kid?: string; alg?: string })[] };
  if (!Array.isArray(document.keys)) throw new Error("a JWKS document needs a `keys` array");
  const keys = new Map<string, string>();
  document.keys.forEach((jwk, index) => {
    if (jwk.kty !== kty || (jwk.alg !== undefined && jwk.alg !== algorithm)) return;
    const pem = createPublicKey({ key: jwk, format: "jwk" })
      .export({ type: "spki", format: "pem" })
      .toString();
    keys.set(jwk.kid ?? `#${index}`, pem);
  });
  return keys;
}
