/**
 * Canton's `ledger-api.max-token-lifetime` (default 5 minutes), checked as its
 * JwtVerifier.checkTokenLifeTime does after the signature and the expiry: on the token's
 * *remaining* lifetime (`exp` - now, not `exp` - `iat`), so a token minted long ago that expires
 * soon passes, and a token without `exp` is refused whenever a limit is set. The reason is for
 * the log (Canton's text); the caller gets the usual UNAUTHENTICATED.
 */
export const CANTON_MAX_TOKEN_LIFETIME_MS = 5 * 60_000;

/** Why a token's lifetime is refused under `maxLifetimeMs` (0: no limit), else undefined. */
export function tokenLifetimeRefusal(
  expiresAtSeconds: number | undefined,
  maxLifetimeMs: number,
  nowMs: number,
): string | undefined {
  if (maxLifetimeMs === 0) return undefined;
  if (expiresAtSeconds === undefined) return "token has no expiration time";
  const expiresAtMs = expiresAtSeconds * 1000;
  if (expiresAtMs - nowMs > maxLifetimeMs) return `token lifetime (${javaInstantText(expiresAtMs)}) too long`;
  return undefined;
}

/**
 * java.time.Instant#toString at millisecond precision, as Canton prints instants in its texts.
 * An instant past what a Date holds (a token's `exp` of 1e20, say) is written as its epoch
 * milliseconds rather than thrown about.
 */
export function javaInstantText(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return `${ms} ms after the epoch`;
  return date.toISOString().replace(".000Z", "Z");
}
