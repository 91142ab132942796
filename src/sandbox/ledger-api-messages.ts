/**
 * The request and response shapes the sandbox's handlers read and write, as @grpc/proto-loader
 * gives them with PROTO_OPTIONS (camelCase, defaults filled, absent messages null, enums as
 * names, int64 as strings on the way in). Only the fields the handlers use are declared.
 */

export interface ObjectMeta {
  resourceVersion: string;
  annotations: Record<string, string>;
}

export interface PartyDetails {
  party: string;
  isLocal: boolean;
  localMetadata: ObjectMeta | null;
  identityProviderId: string;
}

export interface AllocatePartyRequest {
  partyIdHint: string;
  localMetadata: ObjectMeta | null;
  identityProviderId: string;
  synchronizerId: string;
  userId: string;
}

export interface GetPartiesRequest {
  parties: string[];
  identityProviderId: string;
}

export interface ListKnownPartiesRequest {
  pageToken: string;
  pageSize: number;
  identityProviderId: string;
  filterParty: string;
}

export interface UpdatePartyDetailsRequest {
  partyDetails: PartyDetails | null;
  updateMask: { paths: string[] } | null;
}

export interface UpdatePartyIdentityProviderIdRequest {
  party: string;
  sourceIdentityProviderId: string;
  targetIdentityProviderId: string;
}

export interface GetConnectedSynchronizersRequest {
  party: string;
  participantId: string;
  identityProviderId: string;
}

export interface ConnectedSynchronizer {
  synchronizerAlias: string;
  synchronizerId: string;
  permission: string;
}
