import { errors } from "../errors.js";
import { ledgerStringError } from "../identifiers.js";
import { userErrors } from "../users/user-errors.js";
import type { Authorizer, Requirement } from "./authorization.js";
import type { ClaimsResolver, ResolvedClaims } from "./resolved-claims.js";

/**
 * The secured participant's Authorizer: resolves the caller's user rights, then checks the
 * requirement with Canton's rules and texts (Authorizer.authorizeRequiredClaim, ClaimSet).
 */
export function rightsAuthorizer(resolve: ClaimsResolver): Authorizer {
  return {
    async require(caller, requirement) {
      checkRequirement(resolve(caller), requirement);
    },
  };
}

const denied = (reason: string) => errors.permissionDenied(reason);
const MISSING_ADMIN = "Claims do not authorize the use of administrative services.";

export function checkRequirement(claims: ResolvedClaims, requirement: Requirement): void {
  switch (requirement.kind) {
    case "authenticated":
      return;
    case "admin":
      if (!claims.admin) throw denied(MISSING_ADMIN);
      return;
    case "idp-admin":
      requireAdminOrIdpAdmin(claims);
      matchIdentityProvider(claims, requirement.identityProviderId);
      return;
    case "self-or-idp-admin": {
      const self =
        claims.resolvedFromUser && requirement.userId !== "" && requirement.userId === claims.userId;
      if (!self) requireAdminOrIdpAdmin(claims);
      matchIdentityProvider(claims, requirement.identityProviderId);
      return;
    }
    case "user-reader":
      if (!isSelf(claims, requirement.userId)) requireAdminOrIdpAdmin(claims);
      matchIdentityProvider(claims, requirement.identityProviderId);
      return;
    case "admin-or-operate-as":
      if (!(claims.admin || claims.idpAdmin) && requirement.parties.length > 0) {
        for (const party of requirement.parties) {
          if (!canOperateAs(claims, party)) {
            throw denied(
              `Claims do not authorize the use of administrative services nor authorize to operate for party '${party}'`,
            );
          }
        }
      } else {
        requireAdminOrIdpAdmin(claims);
      }
      matchIdentityProvider(claims, requirement.identityProviderId);
      return;
    case "own-user-id":
      requireOwnUserId(claims, requirement.userId, requirement.unlessReadsAsAnyParty === true);
      return;
    case "act-as":
      for (const party of requirement.actAs)
        if (!(claims.actAsAnyParty || claims.actAs.has(party)))
          throw denied(`Claims do not authorize to act as party '${party}'`);
      for (const party of requirement.readAs) requireReadAs(claims, party);
      return;
    case "read-as":
      for (const party of requirement.parties) requireReadAs(claims, party);
      return;
    case "read-as-any-party":
      if (!readsAsAnyParty(claims))
        throw denied("Claims do not authorize to read data as any party (super-reader wildcard)");
      return;
    case "some-readable-party":
      if (!(readsAsAnyParty(claims) || claims.actAs.size > 0 || claims.readAs.size > 0)) {
        throw denied(
          "Claims do not authorize reading data: neither a read-as-any-party wildcard nor any party-specific read/act claim is present",
        );
      }
      return;
    case "execute-as":
      for (const party of requirement.parties) {
        if (
          !(
            claims.actAsAnyParty ||
            claims.executeAsAnyParty ||
            claims.actAs.has(party) ||
            claims.executeAs.has(party)
          )
        )
          throw denied(`Claims do not authorize to execute for party '${party}'`);
      }
      return;
  }
}

/**
 * The identity provider a request addresses (Canton's implyIdentityProviderIdFromClaims): an
 * empty id from a non-admin means the caller's own provider.
 */
export function impliedIdentityProviderId(claims: ResolvedClaims, requested: string): string {
  return requested === "" && !claims.admin ? (claims.identityProviderId ?? "") : requested;
}

/**
 * The user a user-management read addresses (Canton's defaultToAuthenticatedUser): an empty id
 * means the authenticated user; a token without a user cannot default it.
 */
export function defaultedUserId(claims: ResolvedClaims, requested: string): string {
  if (requested !== "") return requested;
  if (claims.resolvedFromUser && claims.userId !== undefined) return claims.userId;
  throw userErrors.missingUserId(
    "requests with an empty user-id are only supported if there is an authenticated user",
  );
}

function isSelf(claims: ResolvedClaims, userId: string): boolean {
  if (!claims.resolvedFromUser) {
    if (userId === "") defaultedUserId(claims, userId);
    return false;
  }
  return userId === "" || userId === claims.userId;
}

/** Canton's Authorizer for RequiredClaim.MatchUserId: the request's user, defaulted, must be the token's. */
function requireOwnUserId(claims: ResolvedClaims, requested: string, unlessReadsAsAnyParty: boolean): void {
  const userId = requested !== "" ? requested : (claims.userId ?? "");
  if (userId === "") {
    throw userErrors.missingUserId(
      "Cannot default user_id field because claims do not specify an user-id. Is authentication turned on?",
    );
  }
  if (unlessReadsAsAnyParty && readsAsAnyParty(claims)) return;
  if (claims.userId !== undefined && claims.userId !== userId)
    throw denied(`Claims are only valid for userId '${claims.userId}', actual userId is '${userId}'`);
}

function requireAdminOrIdpAdmin(claims: ResolvedClaims): void {
  if (!(claims.admin || claims.idpAdmin)) throw denied(MISSING_ADMIN);
}

function requireReadAs(claims: ResolvedClaims, party: string): void {
  if (!(readsAsAnyParty(claims) || claims.actAs.has(party) || claims.readAs.has(party)))
    throw denied(`Claims do not authorize to read data for party '${party}'`);
}

function canOperateAs(claims: ResolvedClaims, party: string): boolean {
  return (
    readsAsAnyParty(claims) ||
    claims.executeAsAnyParty ||
    claims.actAs.has(party) ||
    claims.readAs.has(party) ||
    claims.executeAs.has(party)
  );
}

/** CanReadAsAnyParty, or CanActAsAnyParty which includes it (Canton's ClaimSet.canReadAsAnyParty). */
function readsAsAnyParty(claims: ResolvedClaims): boolean {
  return claims.readAsAnyParty || claims.actAsAnyParty;
}

function matchIdentityProvider(claims: ResolvedClaims, requested: string): void {
  const implied = impliedIdentityProviderId(claims, requested);
  const error = implied === "" ? undefined : ledgerStringError(implied);
  if (error !== undefined) throw userErrors.invalidTokenField("identity_provider_id", error);
  if (claims.identityProviderId !== undefined && implied !== claims.identityProviderId) {
    throw denied(
      `identity_provider_id from the request \`${implied === "" ? "<empty>" : implied}\` does not match the one provided in the authorization claims`,
    );
  }
}
