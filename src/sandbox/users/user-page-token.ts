import { userIdError } from "../identifiers.js";

/**
 * ListUsers page tokens as Canton writes them: URL-safe base64 (Java's encoder, with padding)
 * of `ListUsersPageTokenPayload { string user_id_lower_bound_excl = 1; }`, meaning "the users
 * after this one".
 */
export function encodeUserPageToken(lastUserId: string): string {
  const id = Buffer.from(lastUserId, "utf8");
  const payload = Buffer.concat([Buffer.from([0x0a]), varint(id.length), id]);
  return payload.toString("base64").replace(/\+/g, "-").replace(/\//g, "_");
}

/** The user id a token continues after; undefined when the token is not one of ours. */
export function decodeUserPageToken(token: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(token)) return undefined;
  const bytes = Buffer.from(token.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (bytes.length === 0) return undefined;
  if (bytes[0] !== 0x0a) return undefined;
  let length = 0;
  let shift = 0;
  let pos = 1;
  for (;;) {
    const byte = bytes[pos++];
    if (byte === undefined || shift > 28) return undefined;
    length |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
    shift += 7;
  }
  if (pos + length !== bytes.length) return undefined;
  const id = bytes.subarray(pos).toString("utf8");
  return userIdError(id) === undefined ? id : undefined;
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let rest = n;
  while (rest > 0x7f) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
  return Buffer.from(out);
}
