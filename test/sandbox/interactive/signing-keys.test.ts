import { strictEqual } from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import { describe, it } from "node:test";
import {
  cantonHash,
  type SigningKey,
  signingKey,
  verifySignature,
} from "../../../src/sandbox/interactive/signing-keys.js";

/** RFC 8032, section 7.1, TEST 1: an Ed25519 key and its signature of the empty message. */
const RFC8032_PUBLIC = Buffer.from("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "hex");
const RFC8032_SIGNATURE = Buffer.from(
  "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  "hex",
);
/*
 * Canton's fingerprint (Hash.digest(HashPurpose.PublicKeyFingerprint = 12, raw key, Sha256) as
 * a multihash), worked once with Python's hashlib: "1220" + sha256(0000000c || key).hex().
 */
const RFC8032_FINGERPRINT = "1220035a791d845bbb8195615e7eccd7a57c2ec4075c2e88695f194bab4e0194a889";

const key = (input: Parameters<typeof signingKey>[0]): SigningKey => {
  const parsed = signingKey(input);
  if (typeof parsed === "string") throw new Error(parsed);
  return parsed;
};
const signature = (bytes: Buffer, format: string, algorithm: string, signedBy = "") => ({
  format,
  signature: bytes,
  signedBy,
  signingAlgorithmSpec: algorithm,
});

describe("signing keys and signatures (crypto.proto, node:crypto)", () => {
  it("gives an Ed25519 key Canton's fingerprint, raw or as SubjectPublicKeyInfo", () => {
    const raw = key({
      format: "CRYPTO_KEY_FORMAT_RAW",
      keyData: RFC8032_PUBLIC,
      keySpec: "SIGNING_KEY_SPEC_EC_CURVE25519",
    });
    strictEqual(raw.fingerprint, RFC8032_FINGERPRINT);
    const spki = key({
      format: "CRYPTO_KEY_FORMAT_DER_X509_SUBJECT_PUBLIC_KEY_INFO",
      keyData: raw.key.export({ format: "der", type: "spki" }),
      keySpec: "SIGNING_KEY_SPEC_EC_CURVE25519",
    });
    strictEqual(spki.fingerprint, RFC8032_FINGERPRINT);
    strictEqual(
      cantonHash(11, Buffer.from("abc")).toString("hex"),
      "1220118011a82e79b5c12c7edc776b3bc1285aefb8a6b8eee34bde8c2381fa329455",
    );
  });

  it("verifies RFC 8032's Ed25519 signature and refuses it over other data or with another algorithm", () => {
    const ed = key({
      format: "CRYPTO_KEY_FORMAT_RAW",
      keyData: RFC8032_PUBLIC,
      keySpec: "SIGNING_KEY_SPEC_EC_CURVE25519",
    });
    const good = signature(RFC8032_SIGNATURE, "SIGNATURE_FORMAT_CONCAT", "SIGNING_ALGORITHM_SPEC_ED25519");
    strictEqual(verifySignature(ed, good, Buffer.alloc(0)), undefined);
    strictEqual(verifySignature(ed, { ...good, format: "SIGNATURE_FORMAT_RAW" }, Buffer.alloc(0)), undefined);
    strictEqual(typeof verifySignature(ed, good, Buffer.from("x")), "string");
    const wrongAlgorithm = { ...good, signingAlgorithmSpec: "SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_256" };
    strictEqual(typeof verifySignature(ed, wrongAlgorithm, Buffer.alloc(0)), "string");
  });

  for (const [spec, curve, algorithm, hash] of [
    ["SIGNING_KEY_SPEC_EC_P256", "prime256v1", "SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_256", "sha256"],
    ["SIGNING_KEY_SPEC_EC_P384", "secp384r1", "SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_384", "sha384"],
  ] as const) {
    it(`verifies ECDSA ${curve} signatures in DER and CONCAT form and refuses a tampered one`, () => {
      const pair = generateKeyPairSync("ec", { namedCurve: curve });
      const der = pair.publicKey.export({ format: "der", type: "spki" });
      const ec = key({
        format: "CRYPTO_KEY_FORMAT_DER_X509_SUBJECT_PUBLIC_KEY_INFO",
        keyData: der,
        keySpec: spec,
      });
      strictEqual(ec.fingerprint, cantonHash(12, der).toString("hex"));
      const data = Buffer.from("prepared transaction hash");
      const derSig = sign(hash, data, pair.privateKey);
      const concatSig = sign(hash, data, { key: pair.privateKey, dsaEncoding: "ieee-p1363" });
      strictEqual(verifySignature(ec, signature(derSig, "SIGNATURE_FORMAT_DER", algorithm), data), undefined);
      strictEqual(
        verifySignature(ec, signature(concatSig, "SIGNATURE_FORMAT_CONCAT", algorithm), data),
        undefined,
      );
      const tampered = Buffer.from(concatSig);
      tampered[5] = (tampered[5] as number) ^ 1;
      strictEqual(
        typeof verifySignature(ec, signature(tampered, "SIGNATURE_FORMAT_CONCAT", algorithm), data),
        "string",
      );
    });
  }

  it("refuses a key that does not match its spec or format", () => {
    const p256 = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).publicKey.export({
      format: "der",
      type: "spki",
    });
    strictEqual(
      signingKey({
        format: "CRYPTO_KEY_FORMAT_DER_X509_SUBJECT_PUBLIC_KEY_INFO",
        keyData: p256,
        keySpec: "SIGNING_KEY_SPEC_EC_P384",
      }),
      "the key is not on the curve of SIGNING_KEY_SPEC_EC_P384",
    );
    strictEqual(
      signingKey({
        format: "CRYPTO_KEY_FORMAT_RAW",
        keyData: Buffer.alloc(31),
        keySpec: "SIGNING_KEY_SPEC_EC_CURVE25519",
      }),
      "an Ed25519 raw key has 32 bytes, not 31",
    );
    strictEqual(
      signingKey({
        format: "CRYPTO_KEY_FORMAT_RAW",
        keyData: Buffer.alloc(32),
        keySpec: "SIGNING_KEY_SPEC_EC_SECP256K1",
      }),
      "key spec SIGNING_KEY_SPEC_EC_SECP256K1 is not supported",
    );
  });
});
