import { createHash } from "node:crypto";

/**
 * Canton's identifier grammar (facts: Daml-LF IdString, Canton UniqueIdentifier): validators
 * return an error text in Canton's wording, or undefined when the string is valid.
 */

const PARTY_CHARS = /^[A-Za-z0-9:\-_ ]*$/;
const LEDGER_STRING_CHARS = /^[A-Za-z0-9._:\-#/ ]*$/;
const USER_ID = /^[a-zA-Z0-9@^$.!`\-#+'~_|:()]{1,128}$/;
const FINGERPRINT = /^[0-9a-f]{68}$/;
const DELIMITER = "::";

/** Daml-LF ConcatenableMatchingString: non-empty US-ASCII of the allowed characters, bounded. */
function matchingString(
  description: string,
  chars: RegExp,
  maxLength: number,
  s: string,
): string | undefined {
  if (s.length === 0) return `${description} is empty`;
  if (s.length > maxLength) return `${description} is too long (max: ${maxLength})`;
  if (chars.test(s)) return undefined;
  for (const c of s) {
    const code = c.codePointAt(0) ?? 0;
    if (code > 0x7f || !chars.test(c))
      return `non expected character 0x${code.toString(16)} in ${description} "${s}"`;
  }
  return undefined;
}

/** Ref.Party: letters, digits, space, colon, minus, underscore; at most 255 characters. */
export const partyStringError = (s: string) => matchingString("Daml-LF Party", PARTY_CHARS, 255, s);

/** Ref.LedgerString (identity provider ids among others). */
export const ledgerStringError = (s: string) =>
  matchingString("Daml-LF Ledger String", LEDGER_STRING_CHARS, 255, s);

/** Ref.UserId. */
export const userIdError = (s: string) =>
  USER_ID.test(s) ? undefined : `User ID "${s}" does not match regex "${USER_ID.source.slice(1, -1)}"`;

/** The identifier part of a Canton unique identifier (a party hint): an LF party string, no `::`, ≤ 185. */
export function identifierError(id: string): string | undefined {
  const lf = partyStringError(id);
  if (lf !== undefined) return lf;
  if (id.includes(DELIMITER)) return `String contains reserved delimiter \`${DELIMITER}\`.`;
  if (id.length > 185) {
    return `The given string has a maximum length of 185 but a string of length ${id.length} ('${id}') was given`;
  }
  return undefined;
}

/** A `<identifier>::<fingerprint>` unique identifier (synchronizer and participant ids). */
export function uniqueIdentifierError(uid: string): string | undefined {
  const pos = uid.indexOf(DELIMITER);
  if (uid.length === 0) return "Empty string is not a valid unique identifier.";
  if (pos === 0) return `Invalid unique identifier \`${uid}\` with empty identifier.`;
  if (pos < 0) return `Invalid unique identifier \`${uid}\` with missing namespace.`;
  const idError = identifierError(uid.slice(0, pos));
  if (idError !== undefined) return `Identifier decoding of \`${uid.slice(0, 200)}\` failed with: ${idError}`;
  const fingerprint = uid.slice(pos + DELIMITER.length);
  if (!FINGERPRINT.test(fingerprint)) {
    return `Fingerprint decoding of \`${uid.slice(0, 200)}\` failed with: invalid fingerprint ${fingerprint}`;
  }
  return undefined;
}

/**
 * A stable namespace fingerprint for a name: Canton's fingerprints are SHA-256 multihashes
 * (`1220` + 64 hex) of a public key; the sandbox has no keys, so it hashes a seed instead, which
 * also keeps party ids stable across restarts.
 */
export function fingerprintOf(seed: string): string {
  return `1220${createHash("sha256").update(seed).digest("hex")}`;
}

/** Canton's party allocation submission id: a SHA-256 multihash of party, participant and event. */
export function partyAllocationSubmissionId(party: string, participantId: string): string {
  return fingerprintOf(`PartyUpdateId|${party}|${participantId}|Added(Submission)`);
}

const PACKAGE_ID_CHARS = /^[A-Za-z0-9\-_ ]+$/;

/** Ref.PackageId: 1 to 64 of letters, digits, `-`, `_` and space. */
export function packageIdError(id: string): string | undefined {
  if (id.length === 0) return "Daml-LF Package ID is empty";
  if (id.length > 64) return "Daml-LF Package ID is too long (max: 64)";
  return PACKAGE_ID_CHARS.test(id) ? undefined : `non expected character in Daml-LF Package ID "${id}"`;
}
