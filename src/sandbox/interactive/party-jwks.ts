import { createHash } from "node:crypto";
import type { SigningKey } from "./signing-keys.js";

/** The JWS algorithm of each key spec a party JWT may be signed with (Canton's JceJwks). */
const ALGORITHMS: Readonly<Record<string, string>> = {
  SIGNING_KEY_SPEC_EC_CURVE25519: "EdDSA",
  SIGNING_KEY_SPEC_EC_P256: "ES256",
  SIGNING_KEY_SPEC_EC_P384: "ES384",
  SIGNING_KEY_SPEC_EC_SECP256K1: "ES256K",
};

/**
 * A party's public signing key as a JWK (RFC 7517), as Canton's JoseService gives it: the key's
 * own members (`kty`, `crv`, `x`, `y`), its algorithm, `use: "sig"`, and as `kid` the key's JWK
 * thumbprint (RFC 7638: SHA-256 over the required members in lexicographic order, base64url).
 * Undefined for a key spec that has no JWK form.
 */
export function jwkOf(key: SigningKey): Record<string, string> | undefined {
  const alg = ALGORITHMS[key.keySpec];
  if (alg === undefined) return undefined;
  const exported = key.key.export({ format: "jwk" });
  const members: Record<string, string> = {};
  for (const name of ["crv", "kty", "x", "y"] as const) {
    const value = exported[name];
    if (typeof value === "string") members[name] = value;
  }
  const kid = createHash("sha256").update(JSON.stringify(members)).digest("base64url");
  return { ...members, alg, kid, use: "sig" };
}
