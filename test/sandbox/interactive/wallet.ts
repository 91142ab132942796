import { createHash, generateKeyPairSync, sign } from "node:crypto";

/**
 * A wallet as a test plays it: it holds a private key (node:crypto) and signs hashes; the
 * ledger only ever sees its public key and signatures. The fingerprint is computed here on
 * its own (Canton's rule: SHA-256 over purpose 12 and the key, as a multihash; Ed25519 over the
 * raw key), not with the sandbox's code.
 */
export interface Wallet {
  readonly keySpec: string;
  readonly fingerprint: string;
  /** The public key as crypto.proto's SigningPublicKey (bytes as Buffer). */
  readonly publicKey: { format: string; keyData: Buffer; keySpec: string };
  /** crypto.proto's Signature of `data`. */
  sign(data: Buffer): { format: string; signature: Buffer; signedBy: string; signingAlgorithmSpec: string };
}

export function ed25519Wallet(): Wallet {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const spki = publicKey.export({ format: "der", type: "spki" });
  const raw = spki.subarray(spki.length - 32);
  return wallet({
    keySpec: "SIGNING_KEY_SPEC_EC_CURVE25519",
    publicKey: {
      format: "CRYPTO_KEY_FORMAT_DER_X509_SUBJECT_PUBLIC_KEY_INFO",
      keyData: spki,
      keySpec: "SIGNING_KEY_SPEC_EC_CURVE25519",
    },
    fingerprintData: raw,
    signWith: (data) => ({
      format: "SIGNATURE_FORMAT_CONCAT",
      signature: sign(null, data, privateKey),
      signingAlgorithmSpec: "SIGNING_ALGORITHM_SPEC_ED25519",
    }),
  });
}

export function p256Wallet(): Wallet {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const spki = publicKey.export({ format: "der", type: "spki" });
  return wallet({
    keySpec: "SIGNING_KEY_SPEC_EC_P256",
    publicKey: {
      format: "CRYPTO_KEY_FORMAT_DER_X509_SUBJECT_PUBLIC_KEY_INFO",
      keyData: spki,
      keySpec: "SIGNING_KEY_SPEC_EC_P256",
    },
    fingerprintData: spki,
    signWith: (data) => ({
      format: "SIGNATURE_FORMAT_DER",
      signature: sign("sha256", data, privateKey),
      signingAlgorithmSpec: "SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_256",
    }),
  });
}

function wallet(parts: {
  keySpec: string;
  publicKey: Wallet["publicKey"];
  fingerprintData: Buffer;
  signWith: (data: Buffer) => { format: string; signature: Buffer; signingAlgorithmSpec: string };
}): Wallet {
  const purpose = Buffer.from([0, 0, 0, 12]);
  const fingerprint = `1220${createHash("sha256").update(purpose).update(parts.fingerprintData).digest("hex")}`;
  return {
    keySpec: parts.keySpec,
    fingerprint,
    publicKey: parts.publicKey,
    sign: (data) => ({ ...parts.signWith(data), signedBy: fingerprint }),
  };
}

/** Canton's multi-hash of topology transactions, worked out by the wallet itself. */
export function topologyMultiHash(transactions: readonly Buffer[]): Buffer {
  const cantonHash = (purpose: number, content: Buffer) => {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(purpose);
    return Buffer.concat([
      Buffer.from([0x12, 0x20]),
      createHash("sha256").update(prefix).update(content).digest(),
    ]);
  };
  const hashes = transactions
    .map((t) => cantonHash(11, t))
    .sort((a, b) => a.toString("hex").localeCompare(b.toString("hex")));
  const int32 = (n: number) => {
    const out = Buffer.alloc(4);
    out.writeInt32BE(n);
    return out;
  };
  return cantonHash(
    55,
    Buffer.concat([int32(hashes.length), ...hashes.flatMap((h) => [int32(h.length), h])]),
  );
}
