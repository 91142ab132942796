import type { HttpRequest } from "uWebSockets.js";

export type RequestFraming =
  /** `length`: the one Content-Length; undefined without one (no body, or chunked). */
  { kind: "ok"; length: number | undefined } | { kind: "ambiguous"; cause: string };

/**
 * How the request says its body is framed, from every header line (uWS's getHeader sees only the
 * first). RFC 9112 section 6.3: several Content-Length values that differ, or one that is no
 * number, make the message's length unknowable; a recipient must not guess. Identical repeats
 * (`5`, `5` or `5, 5`) are one length. uWS itself refuses Content-Length with Transfer-Encoding.
 */
export function requestFraming(req: HttpRequest): RequestFraming {
  // The usual request: no Content-Length, or one line of one value (uWS's getHeader sees the
  // first line; the scan of every line is what finds a second).
  let lines = 0;
  let line = "";
  req.forEach((name, value) => {
    if (name !== "content-length") return;
    lines++;
    line = value;
  });
  if (lines === 0) return NO_LENGTH;
  if (lines === 1 && DIGITS.test(line)) return { kind: "ok", length: Number(line) };
  return framingOfValues(req);
}

const NO_LENGTH: RequestFraming = { kind: "ok", length: undefined };
const DIGITS = /^\d{1,15}$/;

/** Content-Length in several lines, or a list, or no number: the whole judgement. */
function framingOfValues(req: HttpRequest): RequestFraming {
  const values: string[] = [];
  req.forEach((name, value) => {
    if (name === "content-length") values.push(...value.split(",").map((part) => part.trim()));
  });
  const distinct = new Set(values);
  const [only] = distinct;
  if (distinct.size > 1) {
    const shown = [...distinct].slice(0, 4).map(quoted);
    return { kind: "ambiguous", cause: `conflicting Content-Length values: ${shown.join(", ")}` };
  }
  if (only === undefined || !DIGITS.test(only)) {
    return { kind: "ambiguous", cause: `Content-Length is not a number of bytes: ${quoted(only ?? "")}` };
  }
  return { kind: "ok", length: Number(only) };
}

/** A client's header value in an error cause: quoted, and cut short. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 24 ? `${value.slice(0, 24)}...` : value);
}
