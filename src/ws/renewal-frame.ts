import { MAX_REQUEST_JSON_DEPTH, nestsDeeperThan } from "../endpoints/request-json.js";
import { InvalidValueError } from "../errors/index.js";

/**
 * A frame after the query: a renewal frame (`{"token": "<JWT>"}`, with `"acknowledge": true` to
 * be told of its acceptance); an InvalidValueError for an object whose `token` is not a
 * non-empty string (its value is not echoed: it may be a secret); undefined for any other frame,
 * which is ignored. Only an object is parsed, and only one that nests no deeper than a request
 * may: every other frame is ignored unread, as parsing a megabyte of nested brackets cost a
 * worker 50-80 ms (a black-box test's denial of service, with frames the stream ignores anyway).
 */
export function renewalFrame(
  text: string,
): { token: string; acknowledge: boolean } | InvalidValueError | undefined {
  if (!opensAnObject(text) || nestsDeeperThan(text, MAX_REQUEST_JSON_DEPTH)) return undefined;
  // JSON text that opens an object parses to one.
  let frame: { token?: unknown; acknowledge?: unknown };
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!("token" in frame)) return undefined;
  const { token, acknowledge } = frame;
  if (typeof token === "string" && token.length > 0) return { token, acknowledge: acknowledge === true };
  const got = token === "" ? "an empty string" : token === null ? "null" : `a JSON ${jsonType(token)}`;
  return new InvalidValueError("token renewal frame", `token must be a non-empty string, got ${got}`);
}

/** Whether `text`'s first character past JSON's whitespace opens an object. */
function opensAnObject(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // JSON's whitespace: space, tab, line feed, carriage return.
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x7b;
  }
  return false;
}

function jsonType(value: unknown): string {
  return Array.isArray(value) ? "array" : typeof value === "object" ? "object" : typeof value;
}
