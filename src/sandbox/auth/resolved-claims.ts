import { errors } from "../errors.js";
import { userIdError } from "../identifiers.js";
import { userErrors } from "../users/user-errors.js";
import type { UserStore } from "../users/user-store.js";
import type { AuthenticatedCaller } from "./authenticator.js";

/**
 * What a caller may do, resolved from its token and the user store on every call (Canton's
 * UserBasedClaimResolver): the user's rights as claims, its identity provider, and whether the
 * claims came from a user (which makes "the authenticated user" defaults possible).
 */
export interface ResolvedClaims {
  /** The token's user (or `actAs-<party>` subject); the default user id of requests. */
  readonly userId?: string;
  /** True for a ledger user; false for the sandbox's `actAs-<party>` testing tokens. */
  readonly resolvedFromUser: boolean;
  /** The identity provider the token was issued by; undefined = the default provider. */
  readonly identityProviderId?: string;
  readonly admin: boolean;
  readonly idpAdmin: boolean;
  readonly readAsAnyParty: boolean;
  readonly executeAsAnyParty: boolean;
  /** CanActAsAnyParty (Canton 3.6): acts, reads and executes as every party. */
  readonly actAsAnyParty: boolean;
  readonly actAs: ReadonlySet<string>;
  readonly readAs: ReadonlySet<string>;
  readonly executeAs: ReadonlySet<string>;
}

export interface ClaimsSource {
  readonly users: UserStore;
  /** Whether a party is allocated (the `actAs-<party>` testing subject needs it). */
  partyExists(party: string): boolean;
  /** Names a token's `aud` may use for this participant: its name and its full id. */
  readonly participantIds: readonly string[];
}

export type ClaimsResolver = (caller: AuthenticatedCaller) => ResolvedClaims;

const ACT_AS_PREFIX = "actAs-";

/** Resolves callers against `source`; throws PERMISSION_DENIED (or INVALID_TOKEN) as Canton does. */
export function claimsResolver(source: ClaimsSource): ClaimsResolver {
  return (caller) => {
    const claims = resolve(caller, source);
    // Canton's Authorizer.valid: a token restricted to another participant is no good here.
    const restrictedTo = caller.participantId;
    if (restrictedTo !== undefined && !source.participantIds.includes(restrictedTo)) {
      throw errors.permissionDenied(
        `Claims are only valid for participantId '${restrictedTo}', actual participantId is '${source.participantIds.at(-1)}'`,
      );
    }
    return claims;
  };
}

function resolve(caller: AuthenticatedCaller, source: ClaimsSource): ResolvedClaims {
  const userId = caller.userId ?? "";
  const identityProviderId = caller.identityProviderId ?? "";
  const found = source.users.lookup(userId);
  if (found === undefined && userId.startsWith(ACT_AS_PREFIX)) {
    const party = userId.slice(ACT_AS_PREFIX.length);
    if (!source.partyExists(party))
      throw errors.permissionDenied(`Party '${party}' of the token's subject is not allocated`);
    return { ...NO_RIGHTS, userId, resolvedFromUser: false, actAs: new Set([party]) };
  }
  const idError = userIdError(userId);
  if (idError !== undefined) throw userErrors.missingUserId(`token ${idError}`);
  const idpText = identityProviderId === "" ? "Default" : `Id(${identityProviderId})`;
  if (found === undefined) {
    throw errors.permissionDenied(
      `Could not resolve is_deactivated status for user '${userId}' and identity_provider_id '${idpText}' due to 'UserNotFound(${userId})'`,
    );
  }
  if (found.user.identityProviderId !== identityProviderId) {
    throw errors.permissionDenied(
      `Could not resolve is_deactivated status for user '${userId}' and identity_provider_id '${idpText}' due to 'PermissionDenied(${userId})'`,
    );
  }
  if (found.user.isDeactivated) throw errors.permissionDenied(`User ${userId} is deactivated`);
  const claims = {
    ...NO_RIGHTS,
    userId,
    resolvedFromUser: true,
    ...(caller.identityProviderId !== undefined ? { identityProviderId: caller.identityProviderId } : {}),
    actAs: new Set<string>(),
    readAs: new Set<string>(),
    executeAs: new Set<string>(),
  };
  for (const right of found.rights) {
    switch (right.kind) {
      case "ParticipantAdmin":
        claims.admin = true;
        break;
      case "IdentityProviderAdmin":
        claims.idpAdmin = true;
        break;
      case "CanReadAsAnyParty":
        claims.readAsAnyParty = true;
        break;
      case "CanExecuteAsAnyParty":
        claims.executeAsAnyParty = true;
        break;
      case "CanActAsAnyParty":
        claims.actAsAnyParty = true;
        break;
      case "CanActAs":
        claims.actAs.add(right.party);
        break;
      case "CanReadAs":
        claims.readAs.add(right.party);
        break;
      case "CanExecuteAs":
        claims.executeAs.add(right.party);
        break;
    }
  }
  return claims;
}

const NO_RIGHTS = {
  resolvedFromUser: false,
  admin: false,
  idpAdmin: false,
  readAsAnyParty: false,
  executeAsAnyParty: false,
  actAsAnyParty: false,
  actAs: new Set<string>(),
  readAs: new Set<string>(),
  executeAs: new Set<string>(),
};
