import type { Logger } from "pino";
import type { TokenVerificationOptions } from "../jwt/token-verifier.js";
import type { ApiVersion } from "../proto/api-version.js";
import type { Authenticator } from "./auth/authenticator.js";
import type { Authorizer } from "./auth/authorization.js";
import { jwtAuthenticator } from "./auth/jwt-authenticator.js";
import { type ClaimsResolver, claimsResolver } from "./auth/resolved-claims.js";
import { rightsAuthorizer } from "./auth/rights-authorizer.js";
import type { ServiceImplementation } from "./grpc-handler.js";
import type { SandboxStore } from "./ledger/sandbox-store.js";
import { identityProviderConfigService } from "./services/identity-provider-config-service.js";
import type { PartyAllocationUsers } from "./services/party-management-service.js";
import { userManagementService } from "./services/user-management-service.js";
import { SANDBOX_LIMITS } from "./services/version-service.js";
import { IdentityProviderStore, MAX_IDENTITY_PROVIDER_CONFIGS } from "./users/identity-provider-store.js";
import { UserStore } from "./users/user-store.js";

export interface IdentityAndAccessOptions {
  /** How tokens are verified; the unsafe development mode by default. */
  readonly verification?: TokenVerificationOptions;
  readonly maxIdentityProviderConfigs?: number;
  readonly log: Logger;
  /** The release the sandbox speaks (the kinds of right it knows). */
  readonly apiVersion: ApiVersion;
}

/** Everything the sandbox needs for users, rights and tokens, built on one participant store. */
export interface IdentityAndAccess {
  readonly users: UserStore;
  readonly idps: IdentityProviderStore;
  readonly resolveClaims: ClaimsResolver;
  readonly authenticator: Authenticator;
  readonly authorizer: Authorizer;
  /** UserManagementService and IdentityProviderConfigService. */
  readonly services: readonly ServiceImplementation[];
  /** AllocateParty's `user_id`: the user must exist in the provider and gets act_as. */
  readonly partyUsers: PartyAllocationUsers;
}

export function identityAndAccess(store: SandboxStore, options: IdentityAndAccessOptions): IdentityAndAccess {
  const users = new UserStore(SANDBOX_LIMITS.maxRightsPerUser);
  const idps = new IdentityProviderStore(options.maxIdentityProviderConfigs ?? MAX_IDENTITY_PROVIDER_CONFIGS);
  const resolveClaims = claimsResolver({
    users,
    partyExists: (party) => store.party(party) !== undefined,
    participantIds: [store.participant.name, store.participant.participantId],
  });
  return {
    users,
    idps,
    resolveClaims,
    authenticator: jwtAuthenticator({
      verification: options.verification ?? { mode: "unsafe" },
      identityProviderOf: (issuer) => idps.byIssuer(issuer),
      log: options.log,
    }),
    authorizer: rightsAuthorizer(resolveClaims),
    services: [
      userManagementService({
        users,
        idps,
        partyIdentityProvider: (party) => store.party(party)?.identityProviderId,
        resolveClaims,
        maxUsersPageSize: SANDBOX_LIMITS.maxUsersPageSize,
        apiVersion: options.apiVersion,
      }),
      identityProviderConfigService(idps),
    ],
    partyUsers: {
      requireUser: (userId, identityProviderId) => {
        users.get(userId, identityProviderId, "allocating party");
      },
      grantActAs: (userId, party, identityProviderId) => users.grantActAs(userId, party, identityProviderId),
    },
  };
}
