import type { ApiVersion } from "../../proto/api-version.js";
import type {
  CreateUserRequest__Output,
  CreateUserResponse,
  DeleteUserRequest__Output,
  DeleteUserResponse,
  GetUserRequest__Output,
  GetUserResponse,
  GrantUserRightsRequest__Output,
  GrantUserRightsResponse,
  ListUserRightsRequest__Output,
  ListUserRightsResponse,
  ListUsersRequest__Output,
  ListUsersResponse,
  RevokeUserRightsRequest__Output,
  RevokeUserRightsResponse,
  Right__Output,
  UpdateUserIdentityProviderIdRequest__Output,
  UpdateUserIdentityProviderIdResponse,
  UpdateUserRequest__Output,
  UpdateUserResponse,
  User,
} from "../../proto/ledger-api-types.js";
import { mergeAnnotations, validateAnnotations, withinMaxAnnotationsSize } from "../annotations.js";
import type { ClaimsResolver, ResolvedClaims } from "../auth/resolved-claims.js";
import { defaultedUserId, impliedIdentityProviderId } from "../auth/rights-authorizer.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { partyStringError, userIdError } from "../identifiers.js";
import { isUpdateMaskError, parseUpdateMask, updateMaskErrorReason } from "../update-mask.js";
import type { IdentityProviderStore } from "../users/identity-provider-store.js";
import { userErrors } from "../users/user-errors.js";
import { decodeUserPageToken, encodeUserPageToken } from "../users/user-page-token.js";
import {
  needsParticipantAdmin,
  partiesOf,
  rightsFromProto,
  rightsOfRelease,
  rightToProto,
  type UserRight,
} from "../users/user-rights.js";
import type { UserRecord, UserStore } from "../users/user-store.js";
import {
  identityProviderMustExist,
  optionalIdentityProviderId,
  parseResourceVersion,
} from "./request-fields.js";

/** A request that addresses one user (GetUser, DeleteUser, ListUserRights). */
type UserRequest = Pick<GetUserRequest__Output, "userId" | "identityProviderId">;

export interface UserManagementDeps {
  readonly users: UserStore;
  readonly idps: IdentityProviderStore;
  /** The identity provider of a party's record, undefined for an unknown party. */
  readonly partyIdentityProvider: (party: string) => string | undefined;
  readonly resolveClaims: ClaimsResolver;
  readonly maxUsersPageSize: number;
  /** The release the sandbox speaks: which kinds of right it knows. */
  readonly apiVersion: ApiVersion;
}

/** The fields an UpdateUser mask may name (Canton's UserPaths). */
const UPDATABLE_USER_FIELDS = [
  "id",
  "primary_party",
  "is_deactivated",
  "metadata.annotations",
  "metadata.resource_version",
  "identity_provider_id",
  "primary_party_authentication",
] as const;

/**
 * UserManagementService with Canton's authorization (UserManagementServiceAuthorization),
 * validation order, store semantics and error texts (ApiUserManagementService).
 */
export function userManagementService(deps: UserManagementDeps): ServiceImplementation {
  const claimsOf = (context: CallContext) => deps.resolveClaims(context.caller);
  return {
    serviceName: "com.daml.ledger.api.v2.admin.UserManagementService",
    unary: {
      CreateUser: async (
        given: CreateUserRequest__Output,
        context: CallContext,
      ): Promise<CreateUserResponse> => {
        const request = { ...given, rights: rightsOfRelease(given.rights, deps.apiVersion) };
        await authorizeAdminOrIdpAdmin(context, request.user?.identityProviderId ?? "", request.rights);
        return { user: toProtoUser(createUser(deps, request, claimsOf(context))) };
      },
      GetUser: async (request: GetUserRequest__Output, context: CallContext): Promise<GetUserResponse> => {
        await context.authorize({ kind: "user-reader", ...request });
        const { userId, identityProviderId } = addressedUser(claimsOf(context), request);
        return { user: toProtoUser(deps.users.get(userId, identityProviderId, "getting user")) };
      },
      UpdateUser: async (
        request: UpdateUserRequest__Output,
        context: CallContext,
      ): Promise<UpdateUserResponse> => {
        await context.authorize({
          kind: "idp-admin",
          identityProviderId: request.user?.identityProviderId ?? "",
        });
        return { user: toProtoUser(updateUser(deps, request, claimsOf(context))) };
      },
      DeleteUser: async (
        request: DeleteUserRequest__Output,
        context: CallContext,
      ): Promise<DeleteUserResponse> => {
        await context.authorize({ kind: "idp-admin", identityProviderId: request.identityProviderId });
        const claims = claimsOf(context);
        const userId = requireUserId(request.userId, "user_id");
        const identityProviderId = addressedIdentityProvider(claims, request.identityProviderId);
        if (claims.resolvedFromUser && claims.userId === userId)
          throw errors.invalidArgument("Requesting user cannot delete itself");
        deps.users.delete(userId, identityProviderId, "deleting user");
        return {};
      },
      ListUsers: async (
        request: ListUsersRequest__Output,
        context: CallContext,
      ): Promise<ListUsersResponse> => {
        await context.authorize({ kind: "idp-admin", identityProviderId: request.identityProviderId });
        const after = request.pageToken === "" ? undefined : decodeUserPageToken(request.pageToken);
        if (request.pageToken !== "" && after === undefined)
          throw errors.invalidArgument("Invalid page token");
        if (request.pageSize < 0) throw errors.invalidArgument("Max page size must be non-negative");
        const identityProviderId = addressedIdentityProvider(claimsOf(context), request.identityProviderId);
        const pageSize =
          request.pageSize === 0 ? deps.maxUsersPageSize : Math.min(request.pageSize, deps.maxUsersPageSize);
        const page = deps.users.list(after, pageSize, identityProviderId);
        // As Canton: a full page carries a token even when nothing follows.
        const last = page.length < pageSize ? undefined : page[page.length - 1];
        return {
          users: page.map(toProtoUser),
          nextPageToken: last === undefined ? "" : encodeUserPageToken(last.id),
        };
      },
      GrantUserRights: async (
        given: GrantUserRightsRequest__Output,
        context: CallContext,
      ): Promise<GrantUserRightsResponse> => {
        const request = { ...given, rights: rightsOfRelease(given.rights, deps.apiVersion) };
        await authorizeAdminOrIdpAdmin(context, request.identityProviderId, request.rights);
        const { userId, rights, identityProviderId } = rightsChange(deps, request, claimsOf(context));
        const granted = deps.users.grant(userId, rights, identityProviderId, "grant user rights");
        return { newlyGrantedRights: granted.map(rightToProto) };
      },
      RevokeUserRights: async (
        given: RevokeUserRightsRequest__Output,
        context: CallContext,
      ): Promise<RevokeUserRightsResponse> => {
        const request = { ...given, rights: rightsOfRelease(given.rights, deps.apiVersion) };
        await authorizeAdminOrIdpAdmin(context, request.identityProviderId, request.rights);
        const claims = claimsOf(context);
        const { userId, rights, identityProviderId } = rightsChange(deps, request, claims, (id, parsed) => {
          if (claims.userId === id && parsed.some((r) => r.kind === "ParticipantAdmin"))
            throw errors.invalidArgument("Requesting user cannot remove own admin rights");
        });
        const revoked = deps.users.revoke(userId, rights, identityProviderId, "revoke user rights");
        return { newlyRevokedRights: revoked.map(rightToProto) };
      },
      ListUserRights: async (
        request: ListUserRightsRequest__Output,
        context: CallContext,
      ): Promise<ListUserRightsResponse> => {
        await context.authorize({ kind: "user-reader", ...request });
        const { userId, identityProviderId } = addressedUser(claimsOf(context), request);
        return {
          rights: deps.users.rights(userId, identityProviderId, "list user rights").map(rightToProto),
        };
      },
      UpdateUserIdentityProviderId: async (
        request: UpdateUserIdentityProviderIdRequest__Output,
        context: CallContext,
      ): Promise<UpdateUserIdentityProviderIdResponse> => {
        await context.authorize({ kind: "admin" });
        const userId = requireUserId(request.userId, "user_id");
        const source = optionalIdentityProviderId(
          request.sourceIdentityProviderId,
          "source_identity_provider_id",
        );
        const target = optionalIdentityProviderId(
          request.targetIdentityProviderId,
          "target_identity_provider_id",
        );
        identityProviderMustExist(deps.idps.exists, source);
        identityProviderMustExist(deps.idps.exists, target);
        deps.users.moveToIdentityProvider(userId, source, target, "update user identity provider");
        return {};
      },
    },
  };
}

/**
 * Creating a user with rights, granting and revoking: the provider's admin for the rights on its
 * own parties, a participant admin for the participant-wide ones (needsParticipantAdmin), asked
 * first as Canton's claims are, so such a request fails whole before anything changes.
 */
async function authorizeAdminOrIdpAdmin(
  context: CallContext,
  identityProviderId: string,
  rights: readonly Right__Output[],
): Promise<void> {
  if (rights.some(needsParticipantAdmin)) await context.authorize({ kind: "admin" });
  await context.authorize({ kind: "idp-admin", identityProviderId });
}

function createUser(
  deps: UserManagementDeps,
  request: CreateUserRequest__Output,
  claims: ResolvedClaims,
): UserRecord {
  const user = request.user;
  if (user === null) throw errors.missingField("user");
  const id = requireUserId(user.id, "id");
  const metadata = user.metadata ?? { resourceVersion: "", annotations: {} };
  if (metadata.resourceVersion !== "")
    throw errors.invalidArgument("field user.metadata.resource_version must be not set");
  validateAnnotations(metadata.annotations, false, "user.metadata.annotations");
  const primaryParty = optionalParty(user.primaryParty);
  const rights = rightsFromProto(request.rights);
  const identityProviderId = addressedIdentityProvider(claims, user.identityProviderId);
  identityProviderMustExist(deps.idps.exists, identityProviderId);
  partiesMustExistInIdp(deps, rights, identityProviderId, claims);
  if (!withinMaxAnnotationsSize(metadata.annotations)) throw userErrors.maxUserAnnotationsSizeExceeded(id);
  return deps.users.create(
    {
      id,
      primaryParty,
      isDeactivated: user.isDeactivated,
      annotations: { ...metadata.annotations },
      identityProviderId,
      primaryPartyAuthentication: user.primaryPartyAuthentication,
    },
    rights,
    "creating user",
  );
}

function updateUser(
  deps: UserManagementDeps,
  request: UpdateUserRequest__Output,
  claims: ResolvedClaims,
): UserRecord {
  const user = request.user;
  if (user === null) throw errors.missingField("user");
  const id = requireUserId(user.id, "user.id");
  const metadata = user.metadata ?? { resourceVersion: "", annotations: {} };
  if (request.updateMask === null) throw errors.missingField("update_mask");
  const primaryParty = optionalParty(user.primaryParty);
  const identityProviderId = addressedIdentityProvider(claims, user.identityProviderId);
  const resourceVersion =
    metadata.resourceVersion === ""
      ? undefined
      : parseResourceVersion(metadata.resourceVersion, "user.metadata.resource_version");
  validateAnnotations(metadata.annotations, true, "user.metadata.annotations");

  const mask = parseUpdateMask(request.updateMask.paths, UPDATABLE_USER_FIELDS);
  if (isUpdateMaskError(mask)) throw userErrors.invalidUserUpdate(id, updateMaskErrorReason(mask));
  // Top-level fields only match exactly; annotations also through `metadata` when not empty.
  const annotationsMatch = mask.match("metadata.annotations");
  const annotations =
    annotationsMatch === "exact" ||
    (annotationsMatch === "parent" && Object.keys(metadata.annotations).length > 0)
      ? metadata.annotations
      : undefined;
  const deactivate = mask.match("is_deactivated") === "exact" ? user.isDeactivated : undefined;
  identityProviderMustExist(deps.idps.exists, identityProviderId);
  if (claims.resolvedFromUser && claims.userId === id && deactivate === true)
    throw errors.invalidArgument("Requesting user cannot self-deactivate");

  return deps.users.update(
    { id, identityProviderId, ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
    "updating user",
    (existing) => {
      const merged =
        annotations === undefined
          ? existing.annotations
          : mergeAnnotations(existing.annotations, annotations);
      if (!withinMaxAnnotationsSize(merged)) throw userErrors.maxUserAnnotationsSizeExceeded(id);
      return {
        ...existing,
        annotations: merged,
        ...(mask.match("primary_party") === "exact" ? { primaryParty } : {}),
        ...(deactivate !== undefined ? { isDeactivated: deactivate } : {}),
        ...(mask.match("primary_party_authentication") === "exact"
          ? { primaryPartyAuthentication: user.primaryPartyAuthentication }
          : {}),
      };
    },
  );
}

function rightsChange(
  deps: UserManagementDeps,
  request: GrantUserRightsRequest__Output | RevokeUserRightsRequest__Output,
  claims: ResolvedClaims,
  extraCheck?: (userId: string, rights: readonly UserRight[]) => void,
): { userId: string; rights: UserRight[]; identityProviderId: string } {
  const userId = requireUserId(request.userId, "user_id");
  const rights = rightsFromProto(request.rights);
  const identityProviderId = addressedIdentityProvider(claims, request.identityProviderId);
  extraCheck?.(userId, rights);
  partiesMustExistInIdp(deps, rights, identityProviderId, claims);
  return { userId, rights, identityProviderId };
}

/** GetUser / ListUserRights: an empty user id is the authenticated user. */
function addressedUser(claims: ResolvedClaims, request: UserRequest): UserRequest {
  const userId = requireUserId(defaultedUserId(claims, request.userId), "user_id");
  return {
    userId,
    identityProviderId: addressedIdentityProvider(claims, request.identityProviderId),
  };
}

/** The identity provider a request names, validated; for a non-admin naming none, the caller's own. */
function addressedIdentityProvider(claims: ResolvedClaims, requested: string): string {
  return impliedIdentityProviderId(claims, optionalIdentityProviderId(requested));
}

/** An identity provider admin may only hand out rights on parties its provider knows. */
function partiesMustExistInIdp(
  deps: UserManagementDeps,
  rights: readonly UserRight[],
  identityProviderId: string,
  claims: ResolvedClaims,
): void {
  if (claims.admin) return;
  const unknown = partiesOf(rights).filter(
    (party) => deps.partyIdentityProvider(party) !== identityProviderId,
  );
  if (unknown.length > 0) throw userErrors.partiesNotFound(unknown, identityProviderId);
}

function requireUserId(id: string, fieldName: string): string {
  if (id === "") throw errors.missingField(fieldName);
  const error = userIdError(id);
  if (error !== undefined) throw errors.invalidField(fieldName, error);
  return id;
}

function optionalParty(party: string): string {
  if (party === "") return "";
  const error = partyStringError(party);
  if (error !== undefined) throw errors.invalidArgument(error);
  return party;
}

function toProtoUser(user: UserRecord): User {
  return {
    id: user.id,
    primaryParty: user.primaryParty,
    isDeactivated: user.isDeactivated,
    metadata: { resourceVersion: String(user.resourceVersion), annotations: { ...user.annotations } },
    identityProviderId: user.identityProviderId,
    primaryPartyAuthentication: user.primaryPartyAuthentication,
  };
}
