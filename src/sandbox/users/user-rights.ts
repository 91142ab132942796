import { errors } from "../errors.js";
import { partyStringError } from "../identifiers.js";

/** A user right (Canton's UserRight); party rights name their party. */
export type UserRight =
  | { readonly kind: "ParticipantAdmin" }
  | { readonly kind: "IdentityProviderAdmin" }
  | { readonly kind: "CanReadAsAnyParty" }
  | { readonly kind: "CanExecuteAsAnyParty" }
  | { readonly kind: "CanActAs"; readonly party: string }
  | { readonly kind: "CanReadAs"; readonly party: string }
  | { readonly kind: "CanExecuteAs"; readonly party: string };

/** The proto-loader shape of `Right` (oneof `kind` names the field that is set). */
export interface ProtoRight {
  kind?: string;
  participantAdmin?: object | null;
  identityProviderAdmin?: object | null;
  canReadAsAnyParty?: object | null;
  canExecuteAsAnyParty?: object | null;
  canActAs?: { party: string } | null;
  canReadAs?: { party: string } | null;
  canExecuteAs?: { party: string } | null;
}

/** One string per distinct right: rights are a set, as in Canton. */
export function rightKey(right: UserRight): string {
  return "party" in right ? `${right.kind}:${right.party}` : right.kind;
}

const PARTY_KINDS = { canActAs: "CanActAs", canReadAs: "CanReadAs", canExecuteAs: "CanExecuteAs" } as const;
const PLAIN_KINDS = {
  participantAdmin: "ParticipantAdmin",
  identityProviderAdmin: "IdentityProviderAdmin",
  canReadAsAnyParty: "CanReadAsAnyParty",
  canExecuteAsAnyParty: "CanExecuteAsAnyParty",
} as const;

/** Canton's fromProtoRight: a party right needs a valid party; an empty right is refused. */
export function rightFromProto(proto: ProtoRight): UserRight {
  const kind = proto.kind ?? "";
  if (kind in PLAIN_KINDS) return { kind: PLAIN_KINDS[kind as keyof typeof PLAIN_KINDS] };
  if (kind in PARTY_KINDS) {
    const party = (proto[kind as keyof typeof PARTY_KINDS] as { party: string } | null)?.party ?? "";
    const error = partyStringError(party);
    if (error !== undefined) throw errors.invalidArgument(error);
    return { kind: PARTY_KINDS[kind as keyof typeof PARTY_KINDS], party };
  }
  throw errors.invalidArgument(
    "unknown kind of right - check that the Ledger API version of the server is recent enough",
  );
}

/** The distinct rights of a request, in request order. */
export function rightsFromProto(protos: readonly ProtoRight[]): UserRight[] {
  const rights = new Map<string, UserRight>();
  for (const proto of protos) {
    const right = rightFromProto(proto);
    rights.set(rightKey(right), right);
  }
  return [...rights.values()];
}

export function rightToProto(right: UserRight): ProtoRight {
  switch (right.kind) {
    case "ParticipantAdmin":
      return { participantAdmin: {} };
    case "IdentityProviderAdmin":
      return { identityProviderAdmin: {} };
    case "CanReadAsAnyParty":
      return { canReadAsAnyParty: {} };
    case "CanExecuteAsAnyParty":
      return { canExecuteAsAnyParty: {} };
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
