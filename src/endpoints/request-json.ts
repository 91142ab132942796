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
 * `Invalid value for: <location> (...)` when it is no JSON or nests deeper than
 * {@link MAX_REQUEST_JSON_DEPTH}. V8's JSON.parse does not recurse, so parsing first is safe.
 */
export function parseRequestJson(text: string, location = "body"): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidValueError(location, (error as Error).message);
  }
  // Each level opens with a character of its own: a shorter text cannot nest that deep.
  if (text.length > MAX_REQUEST_JSON_DEPTH && nestsDeeperThan(text, MAX_REQUEST_JSON_DEPTH)) {
    throw new InvalidValueError(location, `nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`);
  }
  return json;
}

/**
 * Whether valid JSON text opens more than `max` arrays and objects at once. A scan of the text,
 * no walk of the value: a loop, so no depth can overflow it, and brackets in strings are skipped.
 */
function nestsDeeperThan(text: string, max: number): boolean {
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
