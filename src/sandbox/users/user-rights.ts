import { type ApiVersion, type Availability, availableIn } from "../../proto/api-version.js";
import type { Right, Right__Output } from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import { partyStringError } from "../identifiers.js";

/** A user right (Canton's UserRight); party rights name their party. */
export type UserRight =
  | { readonly kind: "ParticipantAdmin" }
  | { readonly kind: "IdentityProviderAdmin" }
  | { readonly kind: "CanReadAsAnyParty" }
  | { readonly kind: "CanExecuteAsAnyParty" }
  /** Canton 3.6 on: act (and so read and execute) as any party. */
  | { readonly kind: "CanActAsAnyParty" }
  | { readonly kind: "CanActAs"; readonly party: string }
  | { readonly kind: "CanReadAs"; readonly party: string }
  | { readonly kind: "CanExecuteAs"; readonly party: string };

/** One string per distinct right: rights are a set, as in Canton. */
export function rightKey(right: UserRight): string {
  return "party" in right ? `${right.kind}:${right.party}` : right.kind;
}

/** Canton's fromProtoRight: a party right needs a valid party; an empty right is refused. */
function rightFromProto(proto: Right__Output): UserRight {
  switch (proto.kind) {
    case "participantAdmin":
      return { kind: "ParticipantAdmin" };
    case "identityProviderAdmin":
      return { kind: "IdentityProviderAdmin" };
    case "canReadAsAnyParty":
      return { kind: "CanReadAsAnyParty" };
    case "canExecuteAsAnyParty":
      return { kind: "CanExecuteAsAnyParty" };
    case "canActAsAnyParty":
      return { kind: "CanActAsAnyParty" };
    case "canActAs":
      return { kind: "CanActAs", party: validParty(proto.canActAs?.party) };
    case "canReadAs":
      return { kind: "CanReadAs", party: validParty(proto.canReadAs?.party) };
    case "canExecuteAs":
      return { kind: "CanExecuteAs", party: validParty(proto.canExecuteAs?.party) };
    default:
      throw errors.invalidArgument(
        "unknown kind of right - check that the Ledger API version of the server is recent enough",
      );
  }
}

function validParty(party = ""): string {
  const error = partyStringError(party);
  if (error !== undefined) throw errors.invalidArgument(error);
  return party;
}

/** The kinds of right that not every known release has (field names of Right's `kind`). */
const RIGHT_KIND_AVAILABILITY: Partial<Record<NonNullable<Right__Output["kind"]>, Availability>> = {
  canActAsAnyParty: { since: "3.6.0" },
};

/**
 * The rights of a request as a participant of `version` reads them: a kind its protos do not
 * have arrives as an unknown field, i.e. a right with no kind, which it then refuses as unknown.
 */
export function rightsOfRelease(rights: readonly Right__Output[], version: ApiVersion): Right__Output[] {
  return rights.map((right) =>
    right.kind !== undefined && !availableIn(RIGHT_KIND_AVAILABILITY[right.kind], version)
      ? ({ kind: undefined } as Right__Output)
      : right,
  );
}

/** The distinct rights of a request, in request order. */
export function rightsFromProto(protos: readonly Right__Output[]): UserRight[] {
  const rights = new Map<string, UserRight>();
  for (const proto of protos) {
    const right = rightFromProto(proto);
    rights.set(rightKey(right), right);
  }
  return [...rights.values()];
}

export function rightToProto(right: UserRight): Right {
  switch (right.kind) {
    case "ParticipantAdmin":
      return { participantAdmin: {} };
    case "IdentityProviderAdmin":
      return { identityProviderAdmin: {} };
    case "CanReadAsAnyParty":
      return { canReadAsAnyParty: {} };
    case "CanExecuteAsAnyParty":
      return { canExecuteAsAnyParty: {} };
    case "CanActAsAnyParty":
      return { canActAsAnyParty: {} };
    case "CanActAs":
      return { canActAs: { party: right.party } };
    case "CanReadAs":
      return { canReadAs: { party: right.party } };
    case "CanExecuteAs":
      return { canExecuteAs: { party: right.party } };
  }
}

/** The parties whose existence Canton checks when an idp admin grants rights (act and read). */
export function partiesOf(rights: readonly UserRight[]): string[] {
  const parties = rights.flatMap((r) => (r.kind === "CanActAs" || r.kind === "CanReadAs" ? [r.party] : []));
  return [...new Set(parties)];
}

/**
 * Whether granting or revoking `right` needs ParticipantAdmin rather than an identity provider's
 * admin: the rights over the whole participant (Canton 3.5.6 and later,
 * UserManagementServiceAuthorization.needsParticipantAdmin). Before 3.5.6 only ParticipantAdmin
 * did, so an identity provider's admin could give itself CanReadAsAnyParty and read every party.
 * Every kind is named: a new one fails to compile here until it is placed.
 */
export function needsParticipantAdmin(right: Right__Output): boolean {
  switch (right.kind) {
    case "participantAdmin":
    case "canReadAsAnyParty":
    case "canExecuteAsAnyParty":
    case "canActAsAnyParty":
      return true;
    case "canActAs":
    case "canReadAs":
    case "canExecuteAs":
    case "identityProviderAdmin":
    case undefined:
      return false;
  }
}
