import protobuf from "protobufjs";
import { cantonHash, HASH_PURPOSE, type PublicKeyInput, type SigningKey } from "./signing-keys.js";

/**
 * The topology transactions of external party onboarding in Canton's wire form: a
 * TopologyTransaction (com.digitalasset.canton.protocol.v30) inside an UntypedVersionedMessage,
 * with only the mappings onboarding uses (PartyToParticipant with the party's signing keys, and
 * NamespaceDelegation). Field numbers are Canton's; enums travel as their numbers.
 */
const SCHEMA = `
syntax = "proto3";
message UntypedVersionedMessage { oneof wrapper { bytes data = 1; } int32 version = 2; }
message SigningPublicKey { int32 format = 2; bytes public_key = 3; int32 scheme = 4; repeated int32 usage = 5; int32 key_spec = 6; }
message SigningKeysWithThreshold { repeated SigningPublicKey keys = 1; uint32 threshold = 2; }
message HostingParticipant { string participant_uid = 1; int32 permission = 2; }
message PartyToParticipant {
  string party = 1; uint32 threshold = 2; repeated HostingParticipant participants = 3;
  SigningKeysWithThreshold party_signing_keys = 6;
}
message NamespaceDelegation { string namespace = 1; SigningPublicKey target_key = 2; }
message TopologyMapping {
  oneof mapping { NamespaceDelegation namespace_delegation = 1; PartyToParticipant party_to_participant = 9; }
}
message TopologyTransaction { int32 operation = 1; uint32 serial = 2; TopologyMapping mapping = 3; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: false }).root;
const Versioned = root.lookupType("UntypedVersionedMessage");
const Transaction = root.lookupType("TopologyTransaction");
const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, defaults: true, arrays: true };

/** Canton's proto version of TopologyTransaction on protocol version 34. */
const PROTO_VERSION = 30;
const ADD_REPLACE = 1;
const USAGE = { namespace: 1, protocol: 4, proofOfOwnership: 5 } as const;
/** The Ledger API's CryptoKeyFormat names and their numbers in Canton's crypto.v30. */
const KEY_FORMATS: Record<string, number> = {
  CRYPTO_KEY_FORMAT_DER: 2,
  CRYPTO_KEY_FORMAT_RAW: 3,
  CRYPTO_KEY_FORMAT_DER_X509_SUBJECT_PUBLIC_KEY_INFO: 4,
};
const KEY_SPECS: Record<string, number> = {
  SIGNING_KEY_SPEC_EC_CURVE25519: 1,
  SIGNING_KEY_SPEC_EC_P256: 2,
  SIGNING_KEY_SPEC_EC_P384: 3,
  SIGNING_KEY_SPEC_EC_SECP256K1: 4,
};
export const PARTICIPANT_PERMISSION = { submission: 1, confirmation: 2, observation: 3 } as const;

export interface HostingParticipant {
  readonly participantUid: string;
  readonly permission: number;
}

type OnboardingMapping =
  | {
      readonly kind: "partyToParticipant";
      readonly party: string;
      readonly threshold: number;
      readonly participants: readonly HostingParticipant[];
      readonly signingKeys:
        | { readonly keys: readonly PublicKeyInput[]; readonly threshold: number }
        | undefined;
    }
  | { readonly kind: "namespaceDelegation"; readonly namespace: string; readonly key: PublicKeyInput };

export interface OnboardingTransaction {
  readonly operation: number;
  readonly serial: number;
  readonly mapping: OnboardingMapping;
  /** Canton's hash of the serialized transaction (TopologyTransactionSignature purpose). */
  readonly hash: Buffer;
}

/**
 * A serialized PartyToParticipant hosting `party` on `participants`, with its signing keys
 * (each usable for the namespace, the protocol and proofs of ownership) and their threshold:
 * what GenerateExternalPartyTopology proposes, with one key and threshold 1.
 */
export function partyToParticipantTransaction(
  party: string,
  threshold: number,
  participants: readonly HostingParticipant[],
  keys: readonly SigningKey[],
  keysThreshold = 1,
): Buffer {
  const signingKeys = keys.map((key) => ({
    format: KEY_FORMATS[key.format] ?? 0,
    publicKey: key.keyData,
    usage: [USAGE.namespace, USAGE.protocol, USAGE.proofOfOwnership],
    keySpec: KEY_SPECS[key.keySpec] ?? 0,
  }));
  const transaction = Transaction.encode(
    Transaction.fromObject({
      operation: ADD_REPLACE,
      serial: 1,
      mapping: {
        partyToParticipant: {
          party,
          threshold,
          participants,
          partySigningKeys: { keys: signingKeys, threshold: keysThreshold },
        },
      },
    }),
  ).finish();
  return Buffer.from(
    Versioned.encode(Versioned.fromObject({ data: transaction, version: PROTO_VERSION })).finish(),
  );
}

function transactionHash(serialized: Buffer): Buffer {
  return cantonHash(HASH_PURPOSE.TopologyTransactionSignature, serialized);
}

/**
 * Canton's combined hash of several topology transactions: their hashes sorted by hex, counted
 * and each length-prefixed (4-byte big-endian), under the MultiTopologyTransaction purpose.
 */
export function multiHash(hashes: readonly Buffer[]): Buffer {
  const sorted = [...new Set(hashes.map((h) => h.toString("hex")))].sort().map((h) => Buffer.from(h, "hex"));
  const int32 = (n: number) => {
    const out = Buffer.alloc(4);
    out.writeInt32BE(n);
    return out;
  };
  const combined = Buffer.concat([int32(sorted.length), ...sorted.flatMap((h) => [int32(h.length), h])]);
  return cantonHash(HASH_PURPOSE.MultiTopologyTransaction, combined);
}

interface DecodedKey {
  readonly format: number;
  readonly publicKey: Uint8Array;
  readonly keySpec: number;
}

/** A decoded TopologyTransaction (toObject with defaults: every plain field present). */
interface DecodedTransaction {
  readonly operation: number;
  readonly serial: number;
  readonly mapping?: {
    readonly partyToParticipant?: {
      readonly party: string;
      readonly threshold: number;
      readonly participants: readonly HostingParticipant[];
      readonly partySigningKeys?: { readonly keys: readonly DecodedKey[]; readonly threshold: number };
    };
    readonly namespaceDelegation?: { readonly namespace: string; readonly targetKey?: DecodedKey };
  };
}

/** Reads one serialized onboarding transaction; a string says why it is not one. */
export function parseOnboardingTransaction(serialized: Buffer): OnboardingTransaction | string {
  let decoded: DecodedTransaction;
  try {
    const versioned = Versioned.toObject(Versioned.decode(serialized), TO_OBJECT);
    if (versioned.version !== PROTO_VERSION) return `unsupported proto version ${versioned.version}`;
    decoded = Transaction.toObject(
      Transaction.decode(versioned.data ?? Buffer.alloc(0)),
      TO_OBJECT,
    ) as DecodedTransaction;
  } catch (error) {
    return `cannot be deserialized: ${(error as Error).message}`;
  }
  const hash = transactionHash(serialized);
  const common = { operation: decoded.operation, serial: decoded.serial, hash };
  const mapping = decoded.mapping ?? {};
  if (mapping.partyToParticipant) {
    const p2p = mapping.partyToParticipant;
    const keys = p2p.partySigningKeys;
    return {
      ...common,
      mapping: {
        kind: "partyToParticipant",
        party: p2p.party,
        threshold: p2p.threshold,
        participants: p2p.participants.map((p) => ({
          participantUid: p.participantUid,
          permission: p.permission,
        })),
        signingKeys: keys ? { keys: keys.keys.map(ledgerKey), threshold: keys.threshold } : undefined,
      },
    };
  }
  if (mapping.namespaceDelegation) {
    const delegation = mapping.namespaceDelegation;
    if (!delegation.targetKey) return "the namespace delegation has no target key";
    return {
      ...common,
      mapping: {
        kind: "namespaceDelegation",
        namespace: delegation.namespace,
        key: ledgerKey(delegation.targetKey),
      },
    };
  }
  return "only PartyToParticipant and NamespaceDelegation mappings can onboard an external party";
}

/** A Canton crypto.v30 key in the Ledger API's terms (names of its format and spec). */
function ledgerKey(key: DecodedKey): PublicKeyInput {
  const name = (table: Record<string, number>, n: number) =>
    Object.entries(table).find(([, v]) => v === n)?.[0] ?? "UNSPECIFIED";
  return {
    format: name(KEY_FORMATS, key.format),
    keyData: Buffer.from(key.publicKey ?? []),
    keySpec: name(KEY_SPECS, key.keySpec),
  };
}
