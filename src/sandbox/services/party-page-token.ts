import { partyStringError } from "../identifiers.js";

/**
 * ListKnownParties page tokens as Canton writes them: URL-safe base64 (with padding) of a
 * `ListPartiesPageTokenPayload { string party_id_lower_bound_excl = 1; }` protobuf message, so a
 * token is opaque to clients and means "the parties after this one".
 */

export function encodePartyPageToken(lastParty: string): string {
  const party = Buffer.from(lastParty, "utf8");
  const payload = Buffer.concat([Buffer.from([0x0a]), varint(party.length), party]);
  // Java's URL encoder keeps the `=` padding that Node's base64url drops.
  return payload.toString("base64").replaceAll("+", "-").replaceAll("/", "_");
}

/** The party after which the page starts; undefined for an invalid token. */
export function decodePartyPageToken(token: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(token)) return undefined;
  const bytes = Buffer.from(token, "base64url");
  let pos = 0;
  let party: string | undefined;
  while (pos < bytes.length) {
    const tag = readVarint(bytes, pos);
    if (tag === undefined) return undefined;
    pos = tag.next;
    if (tag.value !== 0x0a) return undefined;
    const length = readVarint(bytes, pos);
    if (length === undefined || length.next + length.value > bytes.length) return undefined;
    party = bytes.subarray(length.next, length.next + length.value).toString("utf8");
    pos = length.next + length.value;
  }
  return party !== undefined && partyStringError(party) === undefined ? party : undefined;
}

function varint(value: number): Buffer {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

function readVarint(bytes: Buffer, start: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let pos = start, shift = 0; pos < bytes.length && shift < 35; pos++, shift += 7) {
    const byte = bytes[pos]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, next: pos + 1 };
  }
  return undefined;
}
