import { createHash } from "node:crypto";
import { errors } from "../../errors.js";

/**
 * Opaque tokens for continuation and paging: a position plus a checksum of the request they
 * belong to, so a token replayed with another offset or format is rejected instead of silently
 * skipping the wrong elements.
 */
export function encodeToken<P extends object>(position: P, request: string): Buffer {
  return Buffer.from(JSON.stringify({ ...position, check: checksum(request) }));
}

/** The position in `token`; undefined when the request carries none (absent or empty). */
export function decodeToken<P extends object>(
  token: Buffer | null | undefined,
  request: string,
  what: string,
): P | undefined {
  if (token == null || token.length === 0) return undefined;
  let parsed: P & { check?: string };
  try {
    parsed = JSON.parse(token.toString("utf8")) as P & { check?: string };
  } catch {
    throw errors.invalidArgument(`Invalid ${what}: not a token this participant issued`);
  }
  if (parsed.check !== checksum(request)) {
    throw errors.invalidArgument(`Invalid ${what}: it was issued for a different request`);
  }
  return parsed;
}

function checksum(request: string): string {
  return createHash("sha256").update(request).digest("hex").slice(0, 32);
}
