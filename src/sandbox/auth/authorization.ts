import type { AuthenticatedCaller } from "./authenticator.js";

/**
 * What an operation needs of its caller, in the terms of the Ledger API's rights (the
 * description's table, section 5). Services state the requirement; an Authorizer decides.
 */
export type Requirement =
  /** Any valid token (version, preferred packages, vetting list, ...). */
  | { readonly kind: "authenticated" }
  /** ParticipantAdmin. */
  | { readonly kind: "admin" }
  /** ParticipantAdmin, or IdentityProviderAdmin of this identity provider ("" = default). */
  | { readonly kind: "idp-admin"; readonly identityProviderId: string }
  /** ParticipantAdmin, the provider's admin, or the authenticated user itself (e.g. own rights). */
  | { readonly kind: "self-or-idp-admin"; readonly userId: string; readonly identityProviderId: string }
  /** Submitting: CanActAs each of `actAs`, and CanReadAs (or CanActAs) each of `readAs`. */
  | { readonly kind: "act-as"; readonly actAs: readonly string[]; readonly readAs: readonly string[] }
  /** Reading as these parties: CanReadAs or CanActAs each, or CanReadAsAnyParty. */
  | { readonly kind: "read-as"; readonly parties: readonly string[] }
  /** Reading for any party (filtersForAnyParty, wildcard completions): CanReadAsAnyParty. */
  | { readonly kind: "read-as-any-party" }
  /** Interactive execute: CanActAs or CanExecuteAs each, or CanExecuteAsAnyParty. */
  | { readonly kind: "execute-as"; readonly parties: readonly string[] };

/**
 * Decides whether a caller meets a requirement; throws a SandboxError (PERMISSION_DENIED, or
 * UNAUTHENTICATED for a deactivated or unknown user) when it does not.
 */
export interface Authorizer {
  require(caller: AuthenticatedCaller, requirement: Requirement): Promise<void>;
}

/** The unsecured development ledger before user rights exist: every valid token may do anything. */
export function permissiveAuthorizer(): Authorizer {
  return { require: async () => undefined };
}
