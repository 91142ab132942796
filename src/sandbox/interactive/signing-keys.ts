import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";

/**
 * Public signing keys and signatures as the Ledger API's crypto.proto describes them (key specs,
 * key formats, signature formats, signing algorithms), checked with node:crypto, and Canton's
 * hashes: SHA-256 over a 4-byte hash purpose and the content, as a multihash (`0x12 0x20`).
 */

type SigningKeySpec =
  | "SIGNING_KEY_SPEC_UNSPECIFIED"
  | "SIGNING_KEY_SPEC_EC_CURVE25519"
  | "SIGNING_KEY_SPEC_EC_P256"
  | "SIGNING_KEY_SPEC_EC_P384"
  | "SIGNING_KEY_SPEC_EC_SECP256K1";

export interface PublicKeyInput {
  readonly format: string;
  readonly keyData: Uint8Array;
  readonly keySpec: string;
}

export interface SignatureInput {
  readonly format: string;
  readonly signature: Uint8Array;
  readonly signedBy: string;
  readonly signingAlgorithmSpec: string;
}

/** A key this participant can verify with, and the fingerprint Canton gives it. */
export interface SigningKey {
  readonly fingerprint: string;
  readonly keySpec: SigningKeySpec;
  readonly format: string;
  readonly keyData: Buffer;
  readonly key: KeyObject;
}

/** Canton's HashPurpose ids used here. */
export const HASH_PURPOSE = {
  TopologyTransactionSignature: 11,
  PublicKeyFingerprint: 12,
  MultiTopologyTransaction: 55,
} as const;

/** Canton's `Hash.digest(purpose, content, Sha256)` in its multihash form (34 bytes). */
export function cantonHash(purpose: number, content: Buffer): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(purpose);
  const digest = createHash("sha256").update(prefix).update(content).digest();
  return Buffer.concat([Buffer.from([0x12, 0x20]), digest]);
}

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

const CURVES: Partial<Record<SigningKeySpec, string>> = {
  SIGNING_KEY_SPEC_EC_P256: "prime256v1",
  SIGNING_KEY_SPEC_EC_P384: "secp384r1",
};

/**
 * Parses a public key; a string says why it is not one. The fingerprint is Canton's: over the
 * key as given, except for Ed25519, where it is over the 32 raw bytes even when the key comes as
 * an X.509 SubjectPublicKeyInfo (Canton keeps the fingerprint of its former raw format).
 */
export function signingKey(input: PublicKeyInput): SigningKey | string {
  const data = Buffer.from(input.keyData);
  if (data.length === 0) return "the public key is empty";
  const spec = input.keySpec as SigningKeySpec;
  const spki = input.format === "CRYPTO_KEY_FORMAT_DER_X509_SUBJECT_PUBLIC_KEY_INFO";
  const der = input.format === "CRYPTO_KEY_FORMAT_DER";
  let key: KeyObject;
  let fingerprintData: Buffer;
  try {
    if (spec === "SIGNING_KEY_SPEC_EC_CURVE25519") {
      if (input.format === "CRYPTO_KEY_FORMAT_RAW") {
        if (data.length !== 32) return `an Ed25519 raw key has 32 bytes, not ${data.length}`;
        fingerprintData = data;
      } else if (spki) {
        if (data.length !== 44 || !data.subarray(0, 12).equals(ED25519_SPKI_PREFIX)) {
          return "the key is not an Ed25519 SubjectPublicKeyInfo";
        }
        fingerprintData = data.subarray(12);
      } else {
        return `key format ${input.format} is not supported for ${spec}`;
      }
      key = createPublicKey({
        key: Buffer.concat([ED25519_SPKI_PREFIX, fingerprintData]),
        format: "der",
        type: "spki",
      });
    } else if (CURVES[spec] !== undefined) {
      if (!spki && !der) return `key format ${input.format} is not supported for ${spec}`;
      key = createPublicKey({ key: data, format: "der", type: "spki" });
      if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== CURVES[spec]) {
        return `the key is not on the curve of ${spec}`;
      }
      fingerprintData = data;
    } else {
      return `key spec ${input.keySpec} is not supported`;
    }
  } catch (error) {
    return `the key cannot be parsed: ${(error as Error).message}`;
  }
  return {
    fingerprint: cantonHash(HASH_PURPOSE.PublicKeyFingerprint, fingerprintData).toString("hex"),
    keySpec: spec,
    format: input.format,
    keyData: data,
    key,
  };
}

const ALGORITHM_OF_SPEC: Partial<Record<SigningKeySpec, string>> = {
  SIGNING_KEY_SPEC_EC_CURVE25519: "SIGNING_ALGORITHM_SPEC_ED25519",
  SIGNING_KEY_SPEC_EC_P256: "SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_256",
  SIGNING_KEY_SPEC_EC_P384: "SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_384",
};

/**
 * Checks one signature over `data` with `key`; a string says why it does not hold. The
 * algorithm must fit the key (an unspecified one is the key's own); Ed25519 signatures are the
 * 64 bytes R||S (RAW or CONCAT); ECDSA ones DER (RAW is read as DER, as older clients send it)
 * or CONCAT (r||s, IEEE P1363).
 */
export function verifySignature(
  key: SigningKey,
  signature: SignatureInput,
  data: Buffer,
): string | undefined {
  const expected = ALGORITHM_OF_SPEC[key.keySpec];
  const algorithm =
    signature.signingAlgorithmSpec === "SIGNING_ALGORITHM_SPEC_UNSPECIFIED"
      ? expected
      : signature.signingAlgorithmSpec;
  if (algorithm !== expected) {
    return `signing algorithm ${signature.signingAlgorithmSpec} does not match key ${key.fingerprint} of spec ${key.keySpec}`;
  }
  const bytes = Buffer.from(signature.signature);
  try {
    let valid: boolean;
    if (key.keySpec === "SIGNING_KEY_SPEC_EC_CURVE25519") {
      if (!["SIGNATURE_FORMAT_RAW", "SIGNATURE_FORMAT_CONCAT"].includes(signature.format)) {
        return `signature format ${signature.format} is not supported for Ed25519`;
      }
      valid = verify(null, data, key.key, bytes);
    } else {
      const digest = key.keySpec === "SIGNING_KEY_SPEC_EC_P384" ? "sha384" : "sha256";
      const dsaEncoding =
        signature.format === "SIGNATURE_FORMAT_CONCAT"
          ? "ieee-p1363"
          : signature.format === "SIGNATURE_FORMAT_DER" || signature.format === "SIGNATURE_FORMAT_RAW"
            ? "der"
            : undefined;
      if (dsaEncoding === undefined) return `signature format ${signature.format} is not supported for ECDSA`;
      valid = verify(digest, data, { key: key.key, dsaEncoding }, bytes);
    }
    return valid ? undefined : `signature by ${key.fingerprint} does not verify`;
  } catch (error) {
    return `signature by ${key.fingerprint} cannot be checked: ${(error as Error).message}`;
  }
}
