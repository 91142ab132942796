import { randomUUID } from "node:crypto";
import type {
  AllocatePartyRequest__Output,
  AllocatePartyResponse,
  GetParticipantIdResponse,
  GetPartiesRequest__Output,
  GetPartiesResponse,
  ListKnownPartiesRequest__Output,
  ListKnownPartiesResponse,
  PartyDetails,
  UpdatePartyDetailsRequest__Output,
  UpdatePartyDetailsResponse,
  UpdatePartyIdentityProviderIdRequest__Output,
  UpdatePartyIdentityProviderIdResponse,
} from "../../proto/ledger-api-types.js";
import { mergeAnnotations, validateAnnotations, withinMaxAnnotationsSize } from "../annotations.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import {
  identifierError,
  partyAllocationSubmissionId,
  partyStringError,
  uniqueIdentifierError,
  userIdError,
} from "../identifiers.js";
import type { PartyRecord, SandboxStore } from "../ledger/sandbox-store.js";
import { isUpdateMaskError, parseUpdateMask, updateMaskErrorReason } from "../update-mask.js";
import { decodePartyPageToken, encodePartyPageToken } from "./party-page-token.js";
import {
  identityProviderMustExist,
  optionalIdentityProviderId,
  parseResourceVersion,
} from "./request-fields.js";
import { SANDBOX_LIMITS } from "./version-service.js";

/**
 * What party allocation needs from user management: AllocateParty's `user_id` gets act_as on
 * the new party. The identity issue provides it; without it such requests are UNIMPLEMENTED.
 */
export interface PartyAllocationUsers {
  /** Before allocating: throws a SandboxError (e.g. USER_NOT_FOUND) for an unknown user. */
  requireUser(userId: string, identityProviderId: string, context: CallContext): void;
  /** After allocating: grants the user act_as on the new party. */
  grantActAs(userId: string, party: string, identityProviderId: string, context: CallContext): void;
}

export interface PartyManagementOptions {
  readonly users?: PartyAllocationUsers;
  /** Whether an identity provider id names a configuration; default: only the default provider (""). */
  readonly identityProviderExists?: (identityProviderId: string) => boolean;
  /** The external-party methods (interactive/external-party-service.ts), served by this service. */
  readonly externalParties?: ServiceImplementation["unary"];
}

/** The party record fields an UpdatePartyDetails mask may name (Canton's PartyDetailsPaths). */
const UPDATABLE_PARTY_FIELDS = [
  "party",
  "is_local",
  "local_metadata.annotations",
  "local_metadata.resource_version",
  "identity_provider_id",
] as const;

/**
 * PartyManagementService with Canton's validation order and error codes. Authorization (admin
 * or identity provider admin rights) comes with the identity issue; the unsecured sandbox lets
 * every authenticated caller manage parties.
 */
export function partyManagementService(
  store: SandboxStore,
  options: PartyManagementOptions = {},
): ServiceImplementation {
  const idpExists = options.identityProviderExists ?? defaultProviderOnly;
  return {
    serviceName: "com.daml.ledger.api.v2.admin.PartyManagementService",
    unary: {
      // Authorization as Canton's PartyManagementServiceAuthorization.
      GetParticipantId: async (_request: object, context: CallContext): Promise<GetParticipantIdResponse> => {
        await context.authorize({ kind: "authenticated" });
        return { participantId: store.participant.participantId };
      },
      AllocateParty: async (request: AllocatePartyRequest__Output, context: CallContext) => {
        await context.authorize({
          kind: "self-or-idp-admin",
          userId: request.userId,
          identityProviderId: request.identityProviderId,
        });
        return allocateParty(store, options, request, context, idpExists);
      },
      GetParties: async (request: GetPartiesRequest__Output, context: CallContext) => {
        await context.authorize({
          kind: "admin-or-operate-as",
          parties: request.parties,
          identityProviderId: request.identityProviderId,
        });
        return getParties(store, request);
      },
      ListKnownParties: async (request: ListKnownPartiesRequest__Output, context: CallContext) => {
        await context.authorize({ kind: "idp-admin", identityProviderId: request.identityProviderId });
        return listKnownParties(store, request);
      },
      UpdatePartyDetails: async (request: UpdatePartyDetailsRequest__Output, context: CallContext) => {
        await context.authorize({
          kind: "idp-admin",
          identityProviderId: request.partyDetails?.identityProviderId ?? "",
        });
        return updatePartyDetails(store, idpExists, request);
      },
      UpdatePartyIdentityProviderId: async (
        request: UpdatePartyIdentityProviderIdRequest__Output,
        context: CallContext,
      ) => {
        await context.authorize({ kind: "admin" });
        return updatePartyIdentityProviderId(store, idpExists, request);
      },
      ...options.externalParties,
    },
  };
}

function requireParty(party: string): string {
  const error = partyStringError(party);
  if (error !== undefined) throw errors.invalidArgument(error);
  return party;
}

const defaultProviderOnly = (identityProviderId: string) => identityProviderId === "";

/** Canton refuses to touch a party whose record belongs to another identity provider. */
function partyMustBeInIdentityProvider(store: SandboxStore, party: string, identityProviderId: string): void {
  const record = store.party(party);
  if (record !== undefined && record.identityProviderId !== identityProviderId) {
    throw errors.permissionDenied(
      `Party ${party} belongs to an identity provider that differs from the one specified in the request`,
    );
  }
}

function allocateParty(
  store: SandboxStore,
  options: PartyManagementOptions,
  request: AllocatePartyRequest__Output,
  context: CallContext,
  idpExists: (id: string) => boolean,
): AllocatePartyResponse {
  if (request.partyIdHint !== "") requireParty(request.partyIdHint);
  const metadata = request.localMetadata ?? { resourceVersion: "", annotations: {} };
  if (metadata.resourceVersion !== "")
    throw errors.invalidArgument("field local_metadata.resource_version must be not set");
  validateAnnotations(metadata.annotations, false, "local_metadata.annotations");
  const identityProviderId = optionalIdentityProviderId(request.identityProviderId, "identity_provider_id");
  if (request.synchronizerId !== "") {
    const error = uniqueIdentifierError(request.synchronizerId);
    if (error !== undefined) throw errors.invalidField("synchronizer_id", error);
  }
  if (request.userId !== "") {
    const error = userIdError(request.userId);
    if (error !== undefined) throw errors.invalidField("user_id", error);
  }
  const name = request.partyIdHint !== "" ? request.partyIdHint : `party-${randomUUID()}`;
  const nameError = identifierError(name);
  if (nameError !== undefined) throw errors.invalidArgument(`Invalid party ID: ${nameError}`);
  const party = `${name}::${store.participant.fingerprint}`;

  identityProviderMustExist(idpExists, identityProviderId);
  if (request.userId !== "" && options.users === undefined) {
    throw errors.unsupported("AllocateParty with user_id (user management)");
  }
  if (request.userId !== "") options.users?.requireUser(request.userId, identityProviderId, context);
  partyMustBeInIdentityProvider(store, party, identityProviderId);
  const synchronizerIds = synchronizersFor(store, request.synchronizerId);
  const existing = store.party(party);
  if (
    existing !== undefined &&
    request.synchronizerId !== "" &&
    !existing.permissions.has(request.synchronizerId)
  ) {
    // A party of this participant allocated again on another synchronizer: it is hosted there too.
    store.hostParty(party, request.synchronizerId, "PARTICIPANT_PERMISSION_SUBMISSION");
    if (request.userId !== "") options.users?.grantActAs(request.userId, party, identityProviderId, context);
    return { partyDetails: toPartyDetails(store.party(party)!) };
  }
  if (existing !== undefined) {
    // Canton's topology manager answers ALREADY_EXISTS, which party allocation reports as an
    // invalid argument correlated by the allocation's submission id.
    throw errors.invalidArgument(
      `Party already exists: party ${party} is already allocated on this node`,
      partyAllocationSubmissionId(party, store.participant.participantId),
    );
  }
  if (!withinMaxAnnotationsSize(metadata.annotations)) throw errors.maxPartyAnnotationsSizeExceeded(party);
  const record = store.allocateParty(party, synchronizerIds, {
    identityProviderId,
    annotations: metadata.annotations,
  });
  if (request.userId !== "") options.users?.grantActAs(request.userId, party, identityProviderId, context);
  return { partyDetails: toPartyDetails(record) };
}

/**
 * Where a new party is hosted: the given synchronizer, or (none given) every connected one.
 * Canton refuses the latter on a participant connected to several synchronizers; the sandbox
 * hosts the party everywhere so that clients written for one synchronizer work unchanged.
 */
function synchronizersFor(store: SandboxStore, requested: string): readonly string[] {
  if (requested === "") return store.synchronizerIds;
  if (!store.isConnectedTo(requested)) throw errors.notConnectedToSynchronizer(requested);
  return [requested];
}

function getParties(store: SandboxStore, request: GetPartiesRequest__Output): GetPartiesResponse {
  const identityProviderId = optionalIdentityProviderId(request.identityProviderId, "identity_provider_id");
  const parties = request.parties.map(requireParty);
  const known = [...new Set(parties)].sort().flatMap((party) => store.party(party) ?? []);
  return { partyDetails: known.map((record) => blindedPartyDetails(record, identityProviderId)) };
}

function listKnownParties(
  store: SandboxStore,
  request: ListKnownPartiesRequest__Output,
): ListKnownPartiesResponse {
  const after = request.pageToken === "" ? undefined : decodePartyPageToken(request.pageToken);
  if (request.pageToken !== "" && after === undefined) throw errors.invalidArgument("Invalid page token");
  if (request.pageSize < 0) throw errors.invalidArgument("Page size must be non-negative");
  if (request.pageSize > SANDBOX_LIMITS.maxPartiesPageSize) {
    throw errors.invalidArgument(
      `Page size must not exceed the server's maximum of ${SANDBOX_LIMITS.maxPartiesPageSize}`,
    );
  }
  const identityProviderId = optionalIdentityProviderId(request.identityProviderId, "identity_provider_id");
  let prefix: string | undefined;
  if (request.filterParty !== "") {
    const error = partyStringError(request.filterParty) ?? string185Error(request.filterParty);
    if (error !== undefined) throw errors.invalidField("filterString", error);
    prefix = request.filterParty;
  }
  const pageSize = request.pageSize === 0 ? SANDBOX_LIMITS.maxPartiesPageSize : request.pageSize;
  const page = store.listParties(after, prefix, pageSize);
  // Like Canton, a full page always carries a token, even when nothing follows.
  const last = page.length < pageSize ? undefined : page[page.length - 1];
  return {
    partyDetails: page.map((record) => blindedPartyDetails(record, identityProviderId)),
    nextPageToken: last === undefined ? "" : encodePartyPageToken(last.party),
  };
}

function updatePartyDetails(
  store: SandboxStore,
  idpExists: (id: string) => boolean,
  request: UpdatePartyDetailsRequest__Output,
): UpdatePartyDetailsResponse {
  const details = request.partyDetails;
  if (details === null) throw errors.missingField("party_details");
  const party = requireParty(details.party);
  const metadata = details.localMetadata ?? { resourceVersion: "", annotations: {} };
  const resourceVersion =
    metadata.resourceVersion === ""
      ? undefined
      : parseResourceVersion(metadata.resourceVersion, "party_details.local_metadata");
  validateAnnotations(metadata.annotations, true, "party_details.local_metadata.annotations");
  if (request.updateMask === null) throw errors.missingField("update_mask");
  const identityProviderId = optionalIdentityProviderId(details.identityProviderId, "identity_provider_id");

  identityProviderMustExist(idpExists, identityProviderId);
  const mask = parseUpdateMask(request.updateMask.paths, UPDATABLE_PARTY_FIELDS);
  if (isUpdateMaskError(mask)) throw errors.invalidPartyDetailsUpdate(party, updateMaskErrorReason(mask));
  const annotationsMatch = mask.match("local_metadata.annotations");
  const hasAnnotations = Object.keys(metadata.annotations).length > 0;
  const annotationsUpdate =
    annotationsMatch === "exact" || (annotationsMatch === "parent" && hasAnnotations)
      ? metadata.annotations
      : undefined;
  const isLocalMatch = mask.match("is_local");
  const isLocalUpdate =
    isLocalMatch === "exact" || (isLocalMatch === "parent" && details.isLocal) ? details.isLocal : undefined;

  const record = store.party(party);
  if (record === undefined) throw errors.partyNotFound("updating a party record", party);
  if (isLocalUpdate !== undefined && isLocalUpdate !== record.isLocal) {
    throw errors.invalidPartyDetailsUpdate(
      party,
      "Update request attempted to modify not-modifiable 'is_local' attribute",
    );
  }
  partyMustBeInIdentityProvider(store, party, identityProviderId);
  if (resourceVersion !== undefined && resourceVersion !== record.resourceVersion)
    throw errors.concurrentPartyUpdate(party);
  const annotations =
    annotationsUpdate === undefined
      ? record.annotations
      : mergeAnnotations(record.annotations, annotationsUpdate);
  if (!withinMaxAnnotationsSize(annotations)) throw errors.maxPartyAnnotationsSizeExceeded(party);
  // As in Canton, every accepted update (a no-op included) moves the resource version.
  const updated = store.updatePartyRecord(party, {
    annotations,
    resourceVersion: record.resourceVersion + 1,
    identityProviderId,
  });
  return { partyDetails: toPartyDetails(updated) };
}

function updatePartyIdentityProviderId(
  store: SandboxStore,
  idpExists: (id: string) => boolean,
  request: UpdatePartyIdentityProviderIdRequest__Output,
): UpdatePartyIdentityProviderIdResponse {
  const party = requireParty(request.party);
  const source = optionalIdentityProviderId(request.sourceIdentityProviderId, "source_identity_provider_id");
  const target = optionalIdentityProviderId(request.targetIdentityProviderId, "target_identity_provider_id");
  identityProviderMustExist(idpExists, source);
  identityProviderMustExist(idpExists, target);
  const record = store.party(party);
  if (record === undefined) throw errors.partyNotFound("updating party's identity provider", party);
  if (record.identityProviderId !== source)
    throw errors.partyNotFound("updating party's identity provider", party);
  store.updatePartyRecord(party, { ...record, identityProviderId: target });
  return {};
}

/** Canton's String185 limit, applied to the party filter. */
function string185Error(s: string): string | undefined {
  return s.length <= 185
    ? undefined
    : `The given string has a maximum length of 185 but a string of length ${s.length} ('${s}') was given`;
}

function toPartyDetails(record: PartyRecord): PartyDetails {
  return {
    party: record.party,
    isLocal: record.isLocal,
    localMetadata: {
      resourceVersion: String(record.resourceVersion),
      annotations: { ...record.annotations },
    },
    identityProviderId: record.identityProviderId,
  };
}

/**
 * Canton shows a party's local record only to its own identity provider; the default provider
 * still sees whether the party is local, any other sees a bare non-local party.
 */
function blindedPartyDetails(record: PartyRecord, identityProviderId: string): PartyDetails {
  if (record.identityProviderId === identityProviderId) return toPartyDetails(record);
  const bare = { resourceVersion: "", annotations: {} };
  return {
    party: record.party,
    isLocal: identityProviderId === "" ? record.isLocal : false,
    localMetadata: bare,
    identityProviderId: "",
  };
}
