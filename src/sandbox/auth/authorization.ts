import type { AuthenticatedCaller } from "./authenticator.js";

/**
 * What an operation needs of its caller, in the terms of the Ledger API's rights (Canton's
 * RequiredClaim). Services state the requirement; an Authorizer decides. Every kind that names
 * an identity provider also checks that an identity provider's token only reaches its own.
 */
export type Requirement =
  /** Any valid token of a known, active user (version, ledger end, preferred packages, ...). */
  | { readonly kind: "authenticated" }
  /** ParticipantAdmin. */
  | { readonly kind: "admin" }
  /** ParticipantAdmin, or IdentityProviderAdmin of this identity provider ("" = the caller's). */
  | { readonly kind: "idp-admin"; readonly identityProviderId: string }
  /**
   * ParticipantAdmin, the provider's admin, or the authenticated user named by `userId` (Canton's
   * AdminOrIdpAdminOrSelfAdmin: allocating a party for oneself). An empty `userId` names nobody.
   */
  | { readonly kind: "self-or-idp-admin"; readonly userId: string; readonly identityProviderId: string }
  /**
   * Reading a user (GetUser, ListUserRights): the authenticated user itself (`userId` empty or
   * its own), else ParticipantAdmin or the provider's admin.
   */
  | { readonly kind: "user-reader"; readonly userId: string; readonly identityProviderId: string }
  /** ParticipantAdmin, the provider's admin, or any right (act, read, execute) on each party. */
  | {
      readonly kind: "admin-or-operate-as";
      readonly parties: readonly string[];
      readonly identityProviderId: string;
    }
  /**
   * The request's user id is the token's (Canton's MatchUserId), an empty one standing for it: a
   * token acts, executes and reads completions for its own user only, admins included.
   * `unlessReadsAsAnyParty`: a CanReadAsAnyParty token may name any user (the completion stream).
   */
  | { readonly kind: "own-user-id"; readonly userId: string; readonly unlessReadsAsAnyParty?: boolean }
  /** Submitting: CanActAs each of `actAs`, and CanReadAs (or CanActAs) each of `readAs`. */
  | { readonly kind: "act-as"; readonly actAs: readonly string[]; readonly readAs: readonly string[] }
  /** Reading as these parties: CanReadAs or CanActAs each, or CanReadAsAnyParty. */
  | { readonly kind: "read-as"; readonly parties: readonly string[] }
  /** Reading for any party (filtersForAnyParty, wildcard completions): CanReadAsAnyParty. */
  | { readonly kind: "read-as-any-party" }
  /**
   * Reading as some party: CanReadAsAnyParty, or a CanReadAs or CanActAs right on any party
   * (Canton's MatchReadAsParties, which narrows a lookup to the parties the caller reads as).
   */
  | { readonly kind: "some-readable-party" }
  /** Interactive execute: CanActAs or CanExecuteAs each, or CanExecuteAsAnyParty. */
  | { readonly kind: "execute-as"; readonly parties: readonly string[] };

/**
 * Decides whether a caller meets a requirement; throws a SandboxError when it does not:
 * PERMISSION_DENIED for missing rights and for unknown or deactivated users (as a secured Canton
 * participant answers), INVALID_TOKEN when a request needs a user id the token lacks.
 */
export interface Authorizer {
  require(caller: AuthenticatedCaller, requirement: Requirement): Promise<void>;
}

/** Every authenticated caller may do anything: for tests that are not about rights. */
export function permissiveAuthorizer(): Authorizer {
  return { require: async () => undefined };
}
