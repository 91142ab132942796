import * as crypto from "node:crypto";

/** What is left to write: a value, or text between values (brackets, commas, a key). */
type Pending = { value: unknown } | { text: string };

/**
 * JSON with object keys sorted at every level: equal values, equal texts. A loop over a stack of
 * what is left to write, not a recursion: a request nests as deeply as its client makes it, and
 * no depth may overflow the key (request-json.ts bounds requests; the key holds without it).
 */
function canonicalJson(root: unknown): string {
  let out = "";
  const pending: Pending[] = [{ value: root }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if ("text" in next) {
      out += next.text;
      continue;
    }
    const { value } = next;
    if (Array.isArray(value)) {
      pending.push({ text: "]" });
      for (let i = value.length - 1; i >= 0; i--) {
        pending.push({ value: value[i] });
        if (i > 0) pending.push({ text: "," });
      }
      pending.push({ text: "[" });
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      pending.push({ text: "}" });
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i] as [string, unknown];
        pending.push({ value: member });
        pending.push({ text: `${i > 0 ? "," : ""}${JSON.stringify(key)}:` });
      }
      pending.push({ text: "{" });
    } else {
      out += JSON.stringify(value) ?? "null";
    }
  }
  return out;
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
  return sha256(token);
}

/**
 * SHA-256 in base64url: one-shot `crypto.hash` where the runtime has it (Node 20.12 and later),
 * which makes no Hash object per digest (a WebSocket start takes two: its admission's and its
 * fan-out probe's; the objects were 2% of a reconnect storm's CPU); `createHash` before that.
 */
const sha256: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "base64url")
    : (text) => crypto.createHash("sha256").update(text).digest("base64url");
