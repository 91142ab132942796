import type {
  AllocateExternalPartyRequest__Output,
  AllocateExternalPartyResponse,
  GenerateExternalPartyTopologyRequest__Output,
  GenerateExternalPartyTopologyResponse,
  Signature__Output,
} from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { identifierError, uniqueIdentifierError, userIdError } from "../identifiers.js";
import type { ParticipantPermission, SandboxStore } from "../ledger/sandbox-store.js";
import type { PartyAllocationUsers } from "../services/party-management-service.js";
import { identityProviderMustExist, optionalIdentityProviderId } from "../services/request-fields.js";
import type { ExternalParties } from "./external-parties.js";
import { interactiveErrors } from "./interactive-errors.js";
import { type SigningKey, signingKey, verifySignature } from "./signing-keys.js";
import {
  type OnboardingTransaction,
  PARTICIPANT_PERMISSION,
  parseOnboardingTransaction,
  partyToParticipantTransaction,
  multiHash as topologyMultiHash,
} from "./topology-transactions.js";

export interface ExternalPartyServiceDeps {
  readonly store: SandboxStore;
  readonly externalParties: ExternalParties;
  readonly users: PartyAllocationUsers | undefined;
  readonly identityProviderExists: (id: string) => boolean;
}

/**
 * PartyManagementService's external-party methods. GenerateExternalPartyTopology proposes the
 * PartyToParticipant Canton 3.5 proposes (party `hint::fingerprint`, this participant
 * confirming or observing, the key as namespace, protocol and proof-of-ownership key,
 * threshold 1). AllocateExternalParty checks every onboarding transaction's signatures (on the
 * transaction's hash, or on the multi-hash of them all): the namespace key and every party
 * signing key must have signed; then the party is hosted here with the permission its
 * PartyToParticipant gives this participant, its keys are registered for ExecuteSubmission, and
 * `user_id` gets act_as.
 */
export function externalPartyMethods(deps: ExternalPartyServiceDeps): ServiceImplementation["unary"] {
  return {
    GenerateExternalPartyTopology: async (
      request: GenerateExternalPartyTopologyRequest__Output,
      context: CallContext,
    ): Promise<GenerateExternalPartyTopologyResponse> => {
      await context.authorize({ kind: "authenticated" });
      return generateTopology(deps.store, request);
    },
    AllocateExternalParty: async (
      request: AllocateExternalPartyRequest__Output,
      context: CallContext,
    ): Promise<AllocateExternalPartyResponse> => {
      await context.authorize({
        kind: "self-or-idp-admin",
        userId: request.userId,
        identityProviderId: request.identityProviderId,
      });
      return allocate(deps, request, context);
    },
  };
}

function generateTopology(
  store: SandboxStore,
  request: GenerateExternalPartyTopologyRequest__Output,
): GenerateExternalPartyTopologyResponse {
  const reject = (reason: string) => errors.invalidArgument(reason);
  if (request.publicKey === null) throw reject("Field `public_key` is not set");
  const key = signingKey(request.publicKey);
  if (typeof key === "string") throw reject(key);
  const uidError = uniqueIdentifierError(request.synchronizer);
  if (uidError !== undefined) throw reject(uidError);
  if (!store.synchronizers.some((s) => s.id === request.synchronizer)) {
    throw reject(`Unknown or not connected synchronizer ${request.synchronizer}`);
  }
  if (request.partyHint === "") throw reject("Party hint is empty");
  const hintError = identifierError(request.partyHint);
  if (hintError !== undefined) throw reject(`party_hint: ${hintError}`);
  const self = store.participant.participantId;
  const others = [...request.otherConfirmingParticipantUids, ...request.observingParticipantUids];
  if (others.includes(self)) {
    throw reject(`This participant node (${self}) is also listed in the other participants of the request`);
  }
  if (new Set(others).size !== others.length) {
    throw reject("The request references some participant IDs multiple times");
  }
  const confirmers =
    (request.localParticipantObservationOnly ? 0 : 1) + request.otherConfirmingParticipantUids.length;
  if (request.confirmationThreshold < 0) throw reject("Negative confirmation threshold observed");
  if (request.confirmationThreshold > confirmers) {
    throw reject("Confirmation threshold exceeds number of confirming participants");
  }
  const party = `${request.partyHint}::${key.fingerprint}`;
  const participants = [
    {
      participantUid: self,
      permission: request.localParticipantObservationOnly
        ? PARTICIPANT_PERMISSION.observation
        : PARTICIPANT_PERMISSION.confirmation,
    },
    ...request.otherConfirmingParticipantUids.map((uid) => ({
      participantUid: uid,
      permission: PARTICIPANT_PERMISSION.confirmation,
    })),
    ...request.observingParticipantUids.map((uid) => ({
      participantUid: uid,
      permission: PARTICIPANT_PERMISSION.observation,
    })),
  ];
  const threshold = request.confirmationThreshold === 0 ? confirmers : request.confirmationThreshold;
  const transaction = partyToParticipantTransaction(party, threshold, participants, [key]);
  const parsed = parseOnboardingTransaction(transaction) as OnboardingTransaction;
  return {
    partyId: party,
    publicKeyFingerprint: key.fingerprint,
    topologyTransactions: [transaction],
    multiHash: topologyMultiHash([parsed.hash]),
  };
}

const PERMISSIONS: Record<number, ParticipantPermission> = {
  [PARTICIPANT_PERMISSION.submission]: "PARTICIPANT_PERMISSION_SUBMISSION",
  [PARTICIPANT_PERMISSION.confirmation]: "PARTICIPANT_PERMISSION_CONFIRMATION",
  [PARTICIPANT_PERMISSION.observation]: "PARTICIPANT_PERMISSION_OBSERVATION",
};

function allocate(
  deps: ExternalPartyServiceDeps,
  request: AllocateExternalPartyRequest__Output,
  context: CallContext,
): AllocateExternalPartyResponse {
  const { store } = deps;
  if (!store.synchronizers.some((s) => s.id === request.synchronizer)) {
    throw errors.invalidArgument(
      `This node is not connected to the requested synchronizer ${request.synchronizer}.`,
    );
  }
  const transactions = request.onboardingTransactions.map((signed) => {
    const parsed = parseOnboardingTransaction(Buffer.from(signed.transaction));
    if (typeof parsed === "string") {
      throw errors.invalidField("onboarding_transactions.transaction", `Invalid transaction: ${parsed}`);
    }
    if (parsed.operation !== 1) {
      throw errors.invalidField(
        "onboarding_transactions.transaction",
        "Onboarding topology transactions must be Replace operations",
      );
    }
    if (parsed.serial !== 1) {
      throw errors.invalidField(
        "onboarding_transactions.transaction.serial",
        "Onboarding transaction serial must be 1",
      );
    }
    return { parsed, signatures: signed.signatures };
  });
  if (transactions.length === 0) {
    throw errors.invalidField("onboarding_transactions.transactions", "Transactions field is empty");
  }
  const identityProviderId = optionalIdentityProviderId(request.identityProviderId, "identity_provider_id");
  if (request.userId !== "") {
    const error = userIdError(request.userId);
    if (error !== undefined) throw errors.invalidField("user_id", error);
  }
  const p2ps = transactions.filter((t) => t.parsed.mapping.kind === "partyToParticipant");
  const p2p = p2ps[0]?.parsed.mapping;
  if (p2ps.length !== 1 || p2p?.kind !== "partyToParticipant") {
    throw errors.invalidArgument("Exactly one PartyToParticipant transaction must be provided");
  }
  const party = p2p.party;
  const namespace = party.split("::")[1] ?? "";
  const hosting = p2p.participants.find((p) => p.participantUid === store.participant.participantId);
  if (hosting === undefined) {
    throw errors.invalidArgument(
      `The PartyToParticipant does not host ${party} on this participant (${store.participant.participantId})`,
    );
  }
  const partyKeys = p2p.signingKeys?.keys.map((k) => parsedKey(k)) ?? [];
  if (p2p.signingKeys === undefined || partyKeys.length === 0) {
    throw errors.invalidArgument("The PartyToParticipant must register the party's signing keys");
  }
  if (p2p.signingKeys.threshold < 1 || p2p.signingKeys.threshold > partyKeys.length) {
    throw errors.invalidArgument("The signing key threshold must be between 1 and the number of keys");
  }
  const delegations = transactions.flatMap((t) =>
    t.parsed.mapping.kind === "namespaceDelegation" ? [t.parsed.mapping] : [],
  );
  const known = new Map<string, SigningKey>();
  for (const key of [...partyKeys, ...delegations.map((d) => parsedKey(d.key))])
    known.set(key.fingerprint, key);
  if (!known.has(namespace)) {
    throw interactiveErrors.unauthorizedTopology([namespace], []);
  }

  // Who signed what: each transaction's own signatures over its hash, and the multi-hash
  // signatures over the combined hash, which stand for every transaction.
  const hashes = transactions.map((t) => t.parsed.hash);
  const signedByAll = validSigners(request.multiHashSignatures, topologyMultiHash(hashes), known);
  for (const { parsed, signatures } of transactions) {
    const signers = new Set([...signedByAll, ...validSigners(signatures, parsed.hash, known)]);
    const required =
      parsed.mapping.kind === "partyToParticipant"
        ? [namespace, ...partyKeys.map((k) => k.fingerprint)]
        : [namespace];
    const missing = [...new Set(required)].filter((fingerprint) => !signers.has(fingerprint));
    if (missing.length > 0) {
      throw interactiveErrors.unauthorizedTopology(
        missing.includes(namespace) ? [namespace] : [],
        missing.filter((m) => m !== namespace),
      );
    }
  }

  identityProviderMustExist(deps.identityProviderExists, identityProviderId);
  if (request.userId !== "" && deps.users === undefined) {
    throw errors.unsupported("AllocateExternalParty with user_id (user management)");
  }
  if (request.userId !== "") deps.users?.requireUser(request.userId, identityProviderId, context);
  if (store.party(party) !== undefined) {
    throw errors.invalidArgument(`Party already exists: party ${party} is already allocated on this node`);
  }
  const permission = PERMISSIONS[hosting.permission] ?? "PARTICIPANT_PERMISSION_CONFIRMATION";
  store.allocateParty(party, [request.synchronizer], { identityProviderId, annotations: {} }, permission);
  deps.externalParties.register(party, { keys: partyKeys, threshold: p2p.signingKeys.threshold });
  if (request.userId !== "") deps.users?.grantActAs(request.userId, party, identityProviderId, context);
  return { partyId: party };
}

function parsedKey(input: Parameters<typeof signingKey>[0]): SigningKey {
  const key = signingKey(input);
  if (typeof key === "string") {
    throw errors.invalidField("onboarding_transactions.transaction", `Invalid signing key: ${key}`);
  }
  return key;
}

/** The fingerprints whose signatures over `hash` hold; any signature that does not is an alarm. */
function validSigners(
  signatures: readonly Signature__Output[],
  hash: Buffer,
  known: ReadonlyMap<string, SigningKey>,
): Set<string> {
  const signers = new Set<string>();
  for (const signature of signatures) {
    const key = known.get(signature.signedBy);
    if (key === undefined || verifySignature(key, signature, hash) !== undefined) {
      throw interactiveErrors.invalidTopologySignature();
    }
    signers.add(key.fingerprint);
  }
  return signers;
}
