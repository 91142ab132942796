import { InvalidValueError } from "../errors/index.js";

/**
 * How deeply a request's JSON may nest: the bound JSON servers commonly use (Jackson's default
 * `StreamReadConstraints.maxNestingDepth`). A Daml value may nest 100 levels, each at most two
 * of JSON, inside some ten of envelope, so no real request comes near it; what does is refused
 * here, before the validator, the codec or the fan-out's key walk it recursively.
 */
export const MAX_REQUEST_JSON_DEPTH = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * A request's JSON text (an HTTP body, a WebSocket query frame) -> its value, refused as
 * `Invalid value for: <location> (...)` when it nests deeper than {@link MAX_REQUEST_JSON_DEPTH}
 * or is no JSON. The depth is read first, by a scan that stops at the bound: JSON.parse builds
 * every level of what it reads, and a megabyte of nested brackets cost a worker 50-80 ms that
 * way (a black-box test's denial of service: one user's frames held every other user's requests
 * for seconds).
 */
export function parseRequestJson(text: string, location = "body"): unknown {
  if (nestsDeeperThan(text, MAX_REQUEST_JSON_DEPTH)) {
    throw new InvalidValueError(location, `nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidValueError(location, (error as Error).message);
  }
}

/**
 * Whether JSON text opens more than `max` arrays and objects at once. A scan of the text, no
 * walk of a value: a loop, so no depth can overflow it, stopping at the bound, so that a deep
 * text costs no more than its first `max` levels; brackets in strings are skipped.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  // Each level opens with a character of its own: a shorter text cannot nest that deep.
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
