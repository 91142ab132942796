/**
 * What a Ledger API access token says, read with Canton 3.5's rules (AuthServiceJWTCodec,
 * AuthServiceJWTBase). Pure: shared by the gateway's optional verification and the sandbox.
 *
 * - Without a configured target audience or scope, a token is either audience-based (an `aud`
 *   naming exactly one participant under `https://daml.com/jwt/aud/participant/`) or
 *   scope-based (`scope` / `scp` holding `daml_ledger_api`, `aud` empty or one participant id).
 *   Anything else is rejected ("unknown scope").
 * - With a target audience, `aud` (string or array) must contain it; with a target scope (and
 *   no audience), the space-separated scope must contain it.
 * - `sub` is required and names the ledger user; `exp` is epoch seconds when present.
 */

const LEDGER_API_SCOPE = "daml_ledger_api";
const PARTICIPANT_AUDIENCE_PREFIX = "https://daml.com/jwt/aud/participant/";

interface LedgerClaims {
  /** The `sub` claim: a ledger user id (or `actAs-<party>` on the sandbox). */
  readonly userId: string;
  /** The participant the token is restricted to, when it names one. */
  readonly participantId?: string;
  readonly issuer?: string;
  /** Expiry in epoch seconds. */
  readonly expiresAt?: number;
}

export interface ClaimRules {
  /** Canton's `target-audience`: audience-based tokens only, `aud` must contain it. */
  readonly audience?: string;
  /** Canton's `target-scope`: scope-based tokens only, `scope` must contain it. */
  readonly scope?: string;
}

export type ClaimsResult =
  | { readonly ok: true; readonly claims: LedgerClaims }
  | { readonly ok: false; readonly reason: string };

const fail = (reason: string): ClaimsResult => ({ ok: false, reason });

export function readLedgerClaims(payload: unknown, rules: ClaimRules = {}): ClaimsResult {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload))
    return fail("the token payload is not an object");
  const fields = payload as Record<string, unknown>;
  const sub = fields.sub;
  if (typeof sub !== "string") return fail("Could not read value for sub");
  const audiences = stringOrArray(fields.aud);
  if (audiences === undefined) return fail("Could not read aud as a string or an array of strings");
  const exp = fields.exp;
  if (exp !== undefined && exp !== null && (typeof exp !== "number" || !Number.isFinite(exp)))
    return fail("Could not read exp as epoch seconds");
  const iss = fields.iss;
  if (iss !== undefined && iss !== null && typeof iss !== "string")
    return fail("Could not read iss as string");
  const scopes = scopesOf(fields);
  const base = {
    userId: sub,
    ...(typeof exp === "number" ? { expiresAt: exp } : {}),
    ...(typeof iss === "string" ? { issuer: iss } : {}),
  };

  if (rules.audience !== undefined) {
    return audiences.includes(rules.audience)
      ? { ok: true, claims: base }
      : fail("Audience doesn't match the target value");
  }
  if (rules.scope !== undefined) {
    return scopes.includes(rules.scope)
      ? { ok: true, claims: base }
      : fail("Scope doesn't match the target value");
  }
  const participantAudiences = audiences.filter((aud) => aud.startsWith(PARTICIPANT_AUDIENCE_PREFIX));
  if (participantAudiences.length > 0) {
    const ids = participantAudiences
      .map((aud) => aud.slice(PARTICIPANT_AUDIENCE_PREFIX.length))
      .filter((id) => id);
    if (ids.length === 0)
      return fail(`\`aud\` must include participantId value prefixed by ${PARTICIPANT_AUDIENCE_PREFIX}`);
    if (ids.length > 1)
      return fail(
        `\`aud\` must include a single participantId value prefixed by ${PARTICIPANT_AUDIENCE_PREFIX}`,
      );
    return { ok: true, claims: { ...base, participantId: ids[0] as string } };
  }
  if (scopes.includes(LEDGER_API_SCOPE)) {
    if (audiences.length > 1) return fail("`aud` must be empty or a single participantId.");
    const [participantId] = audiences;
    return { ok: true, claims: participantId === undefined ? base : { ...base, participantId } };
  }
  return fail(`Access token with unknown scope "${scopes.join("")}"`);
}

function stringOrArray(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as string[];
  return undefined;
}

/** `scope` (space-separated, RFC 8693) first, else `scp` (a string or list). */
function scopesOf(fields: Record<string, unknown>): string[] {
  const scope = typeof fields.scope === "string" ? fields.scope.split(" ").filter((s) => s) : [];
  return scope.length > 0 ? scope : (stringOrArray(fields.scp) ?? []);
}
