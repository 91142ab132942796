import type { FuzzCase, FuzzContext, HttpCase } from "./cases.js";
import type { Finding } from "./fuzz-run.js";

/**
 * What the fuzzer finds and nobody has fixed yet, each entry written up in
 * /work/notes/fuzz-findings.md (seed, request, answer, area). The bounded test
 * (fuzz.test.ts) fails on any fuzz failure no entry explains, and on any entry whose example
 * request no longer fails: fixing one means deleting its entry here, so the list stays true.
 * The examples are fixed requests, not seeded cases: a new route changes what a seed generates.
 */
export interface KnownFinding {
  id: string;
  /** Where the cause lies, as far as the fuzzer can tell. */
  area: string;
  summary: string;
  matches(f: Finding): boolean;
  /** One request that shows it, judged as the fuzzer judges its cases. */
  example(ctx: FuzzContext): FuzzCase;
  /** A race: the example is tried up to this many times and still fails if any try fails (default 1). */
  attempts?: number;
}

/** Request bytes as written: what uWebSockets.js's own parser refuses. */
function rawCase(label: string, category: string, line: string, headers: string[] = []): HttpCase {
  const text = [line, "Host: 127.0.0.1", ...headers, "Connection: close", "", ""].join("\r\n");
  return {
    kind: "http",
    index: -1,
    category,
    label,
    route: "GET /livez",
    request: { method: "GET", target: "/livez", headers: [], raw: Buffer.from(text, "latin1") },
    expect: { mayClose: true },
  };
}

const NATIVE_PAGE = /uWebSockets\/\d+ Server/;

/** The length of a path or query the fuzzer made long, from its label (0 for others). */
function targetLength(f: Finding): number {
  if (f.category !== "path" && f.category !== "query") return 0;
  const characters = /of (\d+) characters/.exec(f.label);
  if (characters) return Number(characters[1]);
  const parameters = /(\d+) unknown parameters/.exec(f.label);
  return parameters ? Number(parameters[1]) * 8 : 0;
}

export const KNOWN_FINDINGS: readonly KnownFinding[] = [
  {
    id: "uws-505-for-malformed-request-line",
    area: "src/http (uWebSockets.js's own parser answers before the app)",
    summary:
      "a malformed request line (double spaces, no version, HTTPS/1.1, extra words, a target without '/', an empty line) gets 505 HTTP Version Not Supported instead of 400",
    matches: (f) => f.category === "request-line" && f.answer === "505" && !f.label.includes("HTTP/1.0"),
    example: () => rawCase('request line "GET  /livez  HTTP/1.1"', "request-line", "GET  /livez  HTTP/1.1"),
  },
  {
    id: "uws-505-for-http-1.0",
    area: "src/http (uWebSockets.js refuses HTTP/1.0)",
    summary: "a well-formed HTTP/1.0 request gets 505 ('This server does not support HTTP/1.0')",
    matches: (f) => f.answer === "505" && f.label.includes("HTTP/1.0"),
    example: () => rawCase('request line "GET /livez HTTP/1.0"', "request-line", "GET /livez HTTP/1.0"),
  },
  {
    id: "uws-505-for-long-request-target",
    area: "src/http (uWebSockets.js's own parser: request line past its buffer)",
    summary:
      "a request target past about 128 KB (a long path parameter or query) gets 505 HTTP Version Not Supported instead of 414 URI Too Long",
    // Or, as the connection is cut while the client still writes, no answer at all.
    matches: (f) =>
      (f.category !== "request-line" && f.answer === "505") ||
      (f.failure.startsWith("connection closed without an answer") && targetLength(f) > 50_000),
    example: () => ({
      kind: "http",
      index: -1,
      category: "path",
      label: "path: path parameter {user-id} of 200000 characters",
      route: "GET /v2/users/{user-id}",
      request: { method: "GET", target: `/v2/users/${"a".repeat(200_000)}`, headers: [] },
      expect: {},
    }),
  },
  {
    id: "uws-native-error-page",
    area: "src/http (uWebSockets.js answers 400/431 itself, with an HTML page)",
    summary:
      "requests uWebSockets.js refuses itself (headers over its size limit, malformed chunked bodies, long request lines) get an HTML page, not a JsCantonError",
    matches: (f) =>
      f.failure.startsWith("an error answer that is neither") && NATIVE_PAGE.test(f.detail ?? ""),
    example: () =>
      rawCase("headers: one header of 512000 bytes", "headers", "GET /livez HTTP/1.1", [
        `X-Fuzz: ${"v".repeat(512_000)}`,
      ]),
  },
  {
    id: "uws-holds-connection-after-malformed-headers",
    area: "src/http (uWebSockets.js drops the request without answering; the socket waits for its idle timeout)",
    summary:
      "a header line uWebSockets.js cannot parse (a name with a space or control character, obsolete line folding) or more headers than it keeps (~100 extra short ones) gets no answer at all: the connection is held ~10 s, then closed",
    matches: (f) => f.failure.startsWith("no answer and no close: the connection is held"),
    example: () =>
      rawCase("headers: malformed header name", "headers", "GET /livez HTTP/1.1", ["Bad Header: x"]),
  },
];

export function knownFindingOf(f: Finding): KnownFinding | undefined {
  return KNOWN_FINDINGS.find((known) => known.matches(f));
}
