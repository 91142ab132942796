import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level: equal values, equal texts. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export interface KeyParts {
  /** The endpoint path: it sets the element shape (flats, trees and updates differ). */
  readonly path: string;
  /** The request in its current (3.5) form, legacy forms rewritten. */
  readonly request: Record<string, unknown>;
  /**
   * Set when the elements depend on the caller, not only on the request (completions without a
   * user id are the token's user's): the key then holds a digest of the token, so only the same
   * token shares. Never the token itself: keys may reach logs.
   */
  readonly token?: string | undefined;
}

/**
 * The key under which subscribers share one stream: the path and the normalized request minus
 * `beginExclusive` (subscribers from different offsets share and splice by offset).
 */
export function subscriptionKey({ path, request, token }: KeyParts): string {
  const { beginExclusive: _begin, ...rest } = request;
  const caller = token === undefined ? "" : ` caller:${tokenDigest(token)}`;
  return `${path} ${canonicalJson(rest)}${caller}`;
}

/** What keys hold of a token: a digest, never the token itself. */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}
