import { createHmac } from "node:crypto";
import { AUDIENCE, signToken, unsignedToken } from "../jwt/test-tokens.js";
import { type ApiModel, instanceOf, type LedgerNames, type Operation, stringFor } from "./api-model.js";
import { HUGE_SIZES, hugeString, mutateText, mutateValue } from "./json-mutations.js";
import { Prng } from "./prng.js";
import type { RawRequest } from "./raw-http.js";

/**
 * One fuzz case per index: a request the route table allows (or nearly), then one mutation of
 * its body, path, query, headers, token, method or request line, or a WebSocket session with
 * mutated frames. A case depends only on (seed, index) and the ledger's names: any case can be
 * replayed alone.
 */
export interface Tokens {
  /** Secret the ledger (and the gateway, when it verifies) checks HS256 tokens with. */
  secret: string;
  /** Whether signatures are verified at all (hs256), or any is accepted (the unsafe sandbox). */
  verified: boolean;
  /** The fuzzer's own user: admin, acts as the fuzz parties. Never a target of the requests. */
  user: string;
}

export interface FuzzContext {
  model: ApiModel;
  names: LedgerNames;
  tokens: Tokens;
  /** Largest "huge" value sizes (the soak goes further than `make test`). */
  hugeSizes: readonly number[];
  /** WebSocket query frames up to this size for the "huge frame" cases. */
  hugeFrameBytes: number;
  /** The gateway's websocket-config.max-query-frame-bytes: larger frames are cut unread. */
  maxQueryFrameBytes: number;
}

export interface HttpExpectation {
  /** The only acceptable statuses (e.g. 401 for a token attack); else the general rules. */
  statuses?: readonly number[];
  /** Closing the connection without an answer is an acceptable refusal (bytes that are not HTTP). */
  mayClose?: boolean;
  /** 505 is right here: a well-formed request line with an HTTP version other than 1.x. */
  may505?: boolean;
  /**
   * The same request with the fuzzer's valid token. A token attack answered with a 4xx other
   * than `statuses` is still right when this request gets that same answer: the gateway judged
   * the request before the token, as Canton's JSON API does (e.g. a path and body that disagree).
   */
  withValidToken?: RawRequest;
}

export interface HttpCase {
  kind: "http";
  index: number;
  category: string;
  label: string;
  /** The route template the request was made from (a label of the figures, not of the request). */
  route: string;
  request: RawRequest;
  expect: HttpExpectation;
}

export interface WsFrame {
  data: string | Buffer;
  binary?: boolean;
}

export interface WsCase {
  kind: "ws";
  index: number;
  category: string;
  label: string;
  path: string;
  headers: Record<string, string>;
  protocols: string[];
  frames: WsFrame[];
  /**
   * An end without a close frame (1006) is fair here: a frame past
   * websocket-config.max-query-frame-bytes is cut unread (uWebSockets.js 3.0.6 sends no close
   * frame then); and a client still writing frames after the server ended the session can
   * have its socket reset, which discards what the server sent last.
   */
  mayDrop?: boolean;
  /** Bytes written on the socket after the frames, beyond the WebSocket protocol. */
  garbage?: Buffer;
  /** `end`: the server must end the session by itself; `open`: a live stream, closed by us. */
  expect: "end" | "open";
  /** The upgrade request carries a token attack: refused with one of these statuses, or an error frame. */
  refuse?: readonly number[];
}

export type FuzzCase = HttpCase | WsCase;

const CATEGORIES = [
  ["valid", 4],
  ["body", 26],
  ["path", 9],
  ["query", 10],
  ["headers", 12],
  ["token", 12],
  ["method", 4],
  ["request-line", 4],
  ["ws", 19],
] as const;

export function fuzzCase(seed: number, index: number, ctx: FuzzContext): FuzzCase {
  const rng = new Prng(seed, index);
  const total = CATEGORIES.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = rng.int(total);
  let category: string = CATEGORIES[0][0];
  for (const [name, weight] of CATEGORIES) {
    if (roll < weight) {
      category = name;
      break;
    }
    roll -= weight;
  }
  if (category === "ws") return wsCase(rng, index, ctx);
  const op =
    category === "body"
      ? rng.pick(ctx.model.operations.filter((o) => o.body !== undefined))
      : category === "path"
        ? rng.pick(ctx.model.operations.filter((o) => o.pathParams.length > 0 || rng.chance(0.3)))
        : category === "query"
          ? rng.pick(ctx.model.operations.filter((o) => o.query.length > 0 || rng.chance(0.2)))
          : rng.pick(ctx.model.operations);
  const base = baseRequest(op, rng, ctx);
  const made: HttpCase = {
    kind: "http",
    index,
    category,
    label: "valid request",
    route: `${op.method} ${op.path}`,
    request: base,
    expect: {},
  };
  switch (category) {
    case "body":
      return mutateBody(made, op, rng, ctx);
    case "path":
      return mutatePath(made, op, rng, ctx);
    case "query":
      return mutateQuery(made, op, rng, ctx);
    case "headers":
      return mutateHeaders(made, rng, ctx);
    case "token":
      return op.open ? mutateHeaders(made, rng, ctx) : attackToken(made, rng, ctx);
    case "method":
      return mutateMethod(made, rng);
    case "request-line":
      return mutateRequestLine(made, rng);
    default:
      return made;
  }
}

export function bearer(ctx: FuzzContext, user = ctx.tokens.user): string {
  return signToken(user, { key: ctx.tokens.secret });
}

function baseRequest(op: Operation, rng: Prng, ctx: FuzzContext): RawRequest {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const param = op.pathParams.find((p) => p.name === name);
    return encodeURIComponent(paramValue(name, param?.type ?? "string", rng, ctx.names));
  });
  const query = new URLSearchParams();
  for (const param of op.query) {
    // List twins of open-ended streams end after their idle wait: keep it short.
    if (param.name === "stream_idle_timeout_ms") query.set(param.name, "100");
    else if (param.name === "limit") query.set(param.name, String(rng.between(1, 20)));
    else if (rng.chance(0.4)) query.append(param.name, paramValue(param.name, param.type, rng, ctx.names));
  }
  const target = query.size > 0 ? `${path}?${query}` : path;
  const headers: [string, string][] = [["Authorization", `Bearer ${bearer(ctx)}`]];
  let body: Buffer | undefined;
  if (op.body?.kind === "json") {
    body = Buffer.from(JSON.stringify(instanceOf(op.body.schema, ctx.model, ctx.names, rng)));
  } else if (op.body?.kind === "bytes") {
    headers.push(["Content-Type", "application/octet-stream"]);
    body = rng.chance(0.5) ? zipLike(rng) : rng.bytes(rng.between(0, 512));
  }
  return { method: op.method, target, headers, ...(body !== undefined ? { body } : {}) };
}

/** A ZIP local header and central directory end around junk: a DAR the reader must refuse. */
function zipLike(rng: Prng): Buffer {
  return Buffer.concat([
    Buffer.from("504b0304", "hex"),
    rng.bytes(rng.between(0, 200)),
    Buffer.from("504b0506", "hex"),
    rng.bytes(18),
  ]);
}

function paramValue(name: string, type: string, rng: Prng, names: LedgerNames): string {
  if (type === "int32" || type === "int64" || type === "integer")
    return String(rng.between(0, Math.max(1, names.ledgerEnd)));
  if (type === "boolean") return String(rng.chance(0.5));
  if (type === "array") return rng.pick(names.parties);
  return stringFor(name, undefined, names, rng);
}

function mutateBody(made: HttpCase, op: Operation, rng: Prng, ctx: FuzzContext): HttpCase {
  const original = made.request.body ?? Buffer.alloc(0);
  if (op.body?.kind === "bytes") {
    const size = rng.pick([0, 1, 4, 1_000, 100_000, 1_000_000]);
    const body = rng.chance(0.5)
      ? Buffer.concat([Buffer.from("504b0304", "hex"), rng.bytes(size)])
      : rng.bytes(size);
    return { ...made, label: `DAR body of ${body.length} random bytes`, request: { ...made.request, body } };
  }
  if (rng.chance(0.6)) {
    const { text, label } = mutateValue(JSON.parse(original.toString("utf8")), rng, ctx.hugeSizes);
    const body = Buffer.from(text);
    // A ticket's body is bounded by max-query-frame-bytes: past it the gateway answers 413 and
    // closes while the client still writes, and the client's kernel may drop that answer on the
    // reset that the unread rest of the body brings (seen on CI as EPIPE, no answer).
    const cut = made.route.endsWith("/stream-ticket") && body.length > ctx.maxQueryFrameBytes;
    return {
      ...made,
      label: `body: ${label}`,
      request: { ...made.request, body },
      ...(cut && { expect: { ...made.expect, mayClose: true } }),
    };
  }
  const { bytes, label } = mutateText(original.toString("utf8"), rng);
  return { ...made, label: `body: ${label}`, request: { ...made.request, body: bytes } };
}

const ODD_SEGMENTS = [
  "",
  ".",
  "..",
  "%2e%2e",
  "%2F",
  "%",
  "%zz",
  "%00",
  "%ff%fe",
  "%C0%AF",
  "%F0%9D%95%8F",
  "-1",
  "18446744073709551616",
  "1e3",
  "0x10",
  " ",
  "%20",
  "a;b=c",
  "participant_admin%00",
  "%E2%80%AE",
];

function mutatePath(made: HttpCase, op: Operation, rng: Prng, ctx: FuzzContext): HttpCase {
  const [path, query] = splitTarget(made.request.target);
  const segments = path.split("/");
  const paramAt = op.path.split("/").flatMap((segment, i) => (segment.startsWith("{") ? [i] : []));
  let label: string;
  if (paramAt.length > 0 && rng.chance(0.75)) {
    const at = rng.pick(paramAt);
    if (rng.chance(0.45)) {
      const size = rng.pick(ctx.hugeSizes);
      segments[at] = encodeURIComponent(hugeString(rng, size));
      label = `path parameter ${op.path.split("/")[at]} of ${size} characters`;
    } else {
      segments[at] = rng.pick(ODD_SEGMENTS);
      label = `path parameter ${op.path.split("/")[at]} = ${JSON.stringify(segments[at])}`;
    }
  } else {
    switch (rng.int(5)) {
      case 0:
        segments.push(rng.pick(ODD_SEGMENTS));
        label = `extra segment ${JSON.stringify(segments[segments.length - 1])}`;
        break;
      case 1:
        segments.splice(rng.between(1, segments.length - 1), 0, "");
        label = "empty segment (double slash)";
        break;
      case 2:
        label = "upper-case path";
        segments.forEach((s, i) => {
          segments[i] = s.toUpperCase();
        });
        break;
      case 3:
        segments.push("");
        label = "trailing slash";
        break;
      default: {
        const at = rng.between(1, segments.length - 1);
        segments[at] = encodeURIComponent(segments[at] ?? "");
        segments[at] = (segments[at] ?? "").replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
        label = `percent-encoded letter in segment ${at}`;
      }
    }
  }
  const target = segments.join("/") + (query === undefined ? "" : `?${query}`);
  return { ...made, label: `path: ${label}`, request: { ...made.request, target } };
}

function splitTarget(target: string): [string, string | undefined] {
  const q = target.indexOf("?");
  return q < 0 ? [target, undefined] : [target.slice(0, q), target.slice(q + 1)];
}

const ODD_QUERY_VALUES = [
  "",
  "abc",
  "-1",
  "1.5",
  "3000000000",
  "2147483648",
  "18446744073709551616",
  "1e400",
  "NaN",
  "true",
  "%",
  "%zz",
  "%00",
  "%ff",
  "%C0%80",
  "a=b",
  "+",
  "%2B1",
  "[]",
  "{}",
];

function mutateQuery(made: HttpCase, op: Operation, rng: Prng, ctx: FuzzContext): HttpCase {
  const [path, query] = splitTarget(made.request.target);
  const pairs = query === undefined || query === "" ? [] : query.split("&");
  const names = op.query.map((p) => p.name);
  const name =
    names.length > 0 && rng.chance(0.8) ? rng.pick(names) : rng.pick(["unknown", "", "pageSize", "a[]"]);
  let label: string;
  switch (rng.int(6)) {
    case 0: {
      const value = rng.pick(ODD_QUERY_VALUES);
      pairs.push(`${name}=${value}`);
      label = `${name}=${value}`;
      break;
    }
    case 1: {
      const size = rng.pick(ctx.hugeSizes);
      pairs.push(`${name}=${encodeURIComponent(hugeString(rng, size))}`);
      label = `${name} of ${size} characters`;
      break;
    }
    case 2:
      pairs.push(`${name}=1`, `${name}=2`, `${name}=abc`);
      label = `${name} three times`;
      break;
    case 3:
      pairs.push(name);
      label = `${name} without a value`;
      break;
    case 4: {
      const count = rng.pick([100, 1_000, 10_000]);
      for (let i = 0; i < count; i++) pairs.push(`p${i}=${i}`);
      label = `${count} unknown parameters`;
      break;
    }
    default:
      pairs.push(rng.pick(["&&&", "=", "==", "?", "#frag", ";a=b", "%26%3D"]));
      label = `stray ${pairs[pairs.length - 1]}`;
  }
  return {
    ...made,
    label: `query: ${label}`,
    request: { ...made.request, target: `${path}?${pairs.join("&")}` },
  };
}

function mutateHeaders(made: HttpCase, rng: Prng, ctx: FuzzContext): HttpCase {
  const request = { ...made.request, headers: [...made.request.headers] };
  const body = request.body ?? Buffer.alloc(0);
  const expect: HttpExpectation = {};
  let label: string;
  switch (rng.int(13)) {
    case 0:
      request.headers.push(["Authorization", `Bearer ${rng.pick(["garbage", bearer(ctx, "nobody")])}`]);
      label = "a second, different Authorization";
      break;
    case 1:
      // RFC 9112 6.3: differing Content-Length values must be refused (else request smuggling).
      request.headers.push(
        ["Content-Length", String(body.length)],
        ["Content-Length", String(body.length + 5)],
      );
      expect.statuses = [400];
      expect.mayClose = true;
      label = "two different Content-Length headers";
      break;
    case 2: {
      const size = rng.pick([4_000, 16_000, 64_000, 512_000]);
      request.headers.push([rng.pick(["X-Fuzz", "Accept", "User-Agent", "Cookie"]), "v".repeat(size)]);
      expect.mayClose = true;
      label = `one header of ${size} bytes`;
      break;
    }
    case 3: {
      const count = rng.pick([100, 500, 2_000]);
      for (let i = 0; i < count; i++) request.headers.push([`X-Fuzz-${i}`, String(i)]);
      expect.mayClose = true;
      label = `${count} extra headers`;
      break;
    }
    case 4: {
      const value = Buffer.from(rng.bytes(16).map((b) => 0x80 | b)).toString("latin1");
      request.headers.push(["X-Fuzz", value]);
      label = "header value of bytes 0x80-0xff";
      break;
    }
    case 5: {
      const type = rng.pick([
        "application/xml",
        "text/plain",
        "multipart/form-data; boundary=x",
        "application/json; charset=utf-16",
        "application/x-www-form-urlencoded",
        "",
        "application/json, application/json",
      ]);
      request.headers.push(["Content-Type", type]);
      label = `Content-Type ${JSON.stringify(type)}`;
      break;
    }
    case 6:
      request.headers.push(["Content-Encoding", rng.pick(["gzip", "br", "deflate", "identity, gzip"])]);
      label = "Content-Encoding on a plain body";
      break;
    case 7: {
      request.headers.push(["Transfer-Encoding", "chunked"]);
      request.body = chunkedBody(body);
      label = "chunked body";
      break;
    }
    case 8:
      request.headers.push(["Transfer-Encoding", "chunked"]);
      request.body = Buffer.from(`zz\r\n${body.toString("latin1")}\r\n0\r\n\r\n`, "latin1");
      expect.mayClose = true;
      label = "chunked body with a malformed chunk size";
      break;
    case 9:
      request.headers.push(["Content-Length", String(body.length)], ["Transfer-Encoding", "chunked"]);
      request.body = chunkedBody(body);
      expect.mayClose = true;
      label = "Content-Length and Transfer-Encoding together";
      break;
    case 10:
      request.headers.push(["Expect", "100-continue"]);
      label = "Expect: 100-continue";
      break;
    case 11:
      request.headers.push([rng.pick(["Bad Header", "X:Colon", "X\u0001", "(", ""]), "x"]);
      expect.mayClose = true;
      label = "malformed header name";
      break;
    default:
      request.headers.push(["X-Folded", "a\r\n continued"]);
      expect.mayClose = true;
      label = "obsolete line folding";
  }
  return { ...made, category: "headers", label: `headers: ${label}`, request, expect };
}

function chunkedBody(body: Buffer): Buffer {
  const last = Buffer.from("0\r\n\r\n");
  if (body.length === 0) return last;
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n"), last]);
}

/**
 * Token attacks. `refused`: the request must get 401 (the gateway's or the ledger's); a
 * well-signed token of an unknown user may get 403 instead (the ledger knows no such user).
 */
function attackToken(made: HttpCase, rng: Prng, ctx: FuzzContext): HttpCase {
  const request = {
    ...made.request,
    headers: made.request.headers.filter(([name]) => name !== "Authorization"),
  };
  const { header, label, statuses } = tokenAttack(rng, ctx);
  if (header !== undefined) request.headers.unshift(["Authorization", header]);
  return {
    ...made,
    label: `token: ${label}`,
    request,
    expect: statuses === undefined ? {} : { statuses, withValidToken: made.request },
  };
}

/** An HS256 token of any claims, odd ones included (the signing library refuses those). */
function handSigned(claims: Record<string, unknown>, secret: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part({ aud: AUDIENCE, scope: "daml_ledger_api", ...claims })}`;
  return `${unsigned}.${createHmac("sha256", secret).update(unsigned).digest("base64url")}`;
}

export function tokenAttack(
  rng: Prng,
  ctx: FuzzContext,
): { header: string | undefined; label: string; statuses?: number[] } {
  const user = ctx.tokens.user;
  const hour = Math.floor(Date.now() / 1000) + 3600;
  const refused = [401];
  switch (rng.int(14)) {
    case 0:
      return { header: undefined, label: "none", statuses: refused };
    case 1:
      return { header: "Bearer", label: "scheme without token", statuses: refused };
    case 2:
      return { header: "Basic dXNlcjpwYXNz", label: "Basic credentials", statuses: refused };
    case 3:
      return {
        header: `Bearer ${rng.string(rng.between(1, 200), "abcdefghijklmnopqrstuvwxyz.-_=")}`,
        label: "garbage",
        statuses: refused,
      };
    case 4:
      return { header: `Bearer ${unsignedToken(user)}`, label: "alg none", statuses: refused };
    case 5:
      return {
        header: `Bearer ${signToken(user, { key: "not-the-secret" })}`,
        label: "wrong signature",
        // The unsafe sandbox accepts any signature by design (docs/identity-and-access.md).
        ...(ctx.tokens.verified ? { statuses: refused } : {}),
      };
    case 6:
      return {
        header: `Bearer ${signToken(user, { key: ctx.tokens.secret, exp: Math.floor(Date.now() / 1000) - 3600 })}`,
        label: "expired",
        statuses: refused,
      };
    case 7: {
      const size = rng.pick([10_000, 100_000]);
      return {
        header: `Bearer ${signToken(user, { key: ctx.tokens.secret, extra: { pad: "x".repeat(size) } })}`,
        label: `well signed, with a claim of ${size} characters`,
      };
    }
    case 8: {
      const size = rng.pick([10_000, 100_000]);
      return {
        header: `Bearer ${"e".repeat(size)}.${"f".repeat(10)}.g`,
        label: `garbage of ${size} characters`,
        statuses: [401, 400, 431],
      };
    }
    case 9:
      return {
        header: `Bearer ${signToken(`nobody-${rng.int(1000)}`, { key: ctx.tokens.secret })}`,
        label: "unknown user",
        statuses: [401, 403],
      };
    case 10: {
      const sub = rng.pick<unknown>([123, null, ["a"], { a: 1 }, "", "x".repeat(300)]);
      return {
        header: `Bearer ${handSigned({ sub, exp: hour }, ctx.tokens.secret)}`,
        label: `sub ${JSON.stringify(sub).slice(0, 40)}`,
        statuses: [401, 403],
      };
    }
    case 11: {
      const exp = rng.pick<unknown>(["soon", -1, 1e20, null, "9999999999"]);
      return {
        header: `Bearer ${handSigned({ sub: user, exp }, ctx.tokens.secret)}`,
        label: `exp ${JSON.stringify(exp)}`,
      };
    }
    case 12: {
      const [head, payload, signature] = bearer(ctx).split(".");
      const broken = rng.pick([
        `${head}.${payload}`,
        `${head}..${signature}`,
        `${head}.${payload}.${signature}.x`,
        `!${head}.${payload}.${signature}`,
        `${head}.${payload}.${signature}=`,
      ]);
      return { header: `Bearer ${broken}`, label: "malformed JWT structure", statuses: refused };
    }
    default:
      return {
        header: `Bearer ${handSigned({ sub: user, exp: hour, nbf: hour }, ctx.tokens.secret)}`,
        label: "not valid before an hour from now",
      };
  }
}

const METHODS = [
  "PUT",
  "DELETE",
  "OPTIONS",
  "HEAD",
  "TRACE",
  "CONNECT",
  "FOO",
  "get",
  "PROPFIND",
  "PATCH",
  "POST",
  "GET",
];

function mutateMethod(made: HttpCase, rng: Prng): HttpCase {
  const method = rng.pick(METHODS);
  return {
    ...made,
    label: `method ${method}`,
    request: { ...made.request, method },
    expect: { mayClose: method === "CONNECT" },
  };
}

function mutateRequestLine(made: HttpCase, rng: Prng): HttpCase {
  const { target } = made.request;
  const line = rng.pick([
    `GET ${target} HTTP/2.0`,
    `GET ${target} HTTP/9.9`,
    `GET ${target} HTTP/1.1 extra`,
    `GET  ${target}  HTTP/1.1`,
    `GET ${target}`,
    `GET ${target} HTTP/1.`,
    `GET ${target} HTTPS/1.1`,
    `GET http://127.0.0.1${target} HTTP/1.1`,
    `GET ${target.slice(1)} HTTP/1.1`,
    `GET /${"a".repeat(100_000)} HTTP/1.1`,
    `GET ${target}\u0000 HTTP/1.1`,
    "GARBAGE",
    "",
    ` ${target} HTTP/1.1`,
    `GET ${target} HTTP/1.0`,
  ]);
  const raw = Buffer.from(`${line}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, "latin1");
  return {
    ...made,
    label: `request line ${JSON.stringify(line.length > 80 ? `${line.slice(0, 60)}...(${line.length})` : line)}`,
    request: { ...made.request, raw },
    // Only a well-formed line with another major version earns a 505.
    expect: { mayClose: true, may505: /^GET \S+ HTTP\/[2-9]\.\d$/.test(line) },
  };
}

const COMMAND_COMPLETIONS = "/v2/commands/command-completions";

function wsCase(rng: Prng, index: number, ctx: FuzzContext): WsCase {
  const made = wsSession(rng, index, ctx);
  const largest = Math.max(0, ...made.frames.map((f) => Buffer.byteLength(f.data)));
  return largest > ctx.maxQueryFrameBytes ? { ...made, mayDrop: true } : made;
}

function wsSession(rng: Prng, index: number, ctx: FuzzContext): WsCase {
  const stream = rng.pick(ctx.model.streams);
  const valid = instanceOf(stream.schema, ctx.model, ctx.names, rng) as Record<string, unknown>;
  // Updates end at `endInclusive`, the ACS at its offset; completions never end, and
  // GetCompletions takes a query without parties too (every party's, for a reader of any party).
  const updates = stream.path.startsWith("/v2/updates");
  const completions = stream.path === "/v2/commands/completions" || stream.path === COMMAND_COMPLETIONS;
  const bounded = updates ? { ...valid, endInclusive: ctx.names.ledgerEnd } : valid;
  const endless = completions || (updates && !("endInclusive" in valid));
  const boundedEnds = completions ? "open" : "end";
  const token = bearer(ctx);
  const made: WsCase = {
    kind: "ws",
    index,
    category: "ws",
    label: "",
    path: stream.path,
    headers: {},
    protocols: ["daml.ws.auth", `jwt.token.${token}`],
    frames: [],
    expect: "end",
  };
  switch (rng.int(11)) {
    case 0:
      return {
        ...made,
        label: "ws: valid bounded query",
        frames: [{ data: JSON.stringify(bounded) }],
        expect: boundedEnds,
      };
    case 1:
      return {
        ...made,
        label: "ws: valid query",
        frames: [{ data: JSON.stringify(valid) }],
        expect: endless ? "open" : "end",
      };
    case 2: {
      const { text, label } = mutateValue(valid, rng, ctx.hugeSizes);
      return { ...made, label: `ws: query frame ${label}`, frames: [{ data: text }], expect: "open" };
    }
    case 3: {
      const { bytes, label } = mutateText(JSON.stringify(valid), rng);
      return {
        ...made,
        label: `ws: query frame ${label}`,
        frames: [{ data: bytes.toString("utf8") }],
        expect: "open",
      };
    }
    case 4:
      return {
        ...made,
        label: "ws: binary query frame",
        frames: [{ data: rng.bytes(rng.between(0, 2048)), binary: true }],
      };
    case 5: {
      const size = rng.between(ctx.hugeFrameBytes / 4, ctx.hugeFrameBytes);
      const data = `{"beginExclusive":0,"x":"${"a".repeat(size)}"}`;
      return {
        ...made,
        label: `ws: query frame of ${data.length} bytes`,
        frames: [{ data }],
        ...(stream.path === COMMAND_COMPLETIONS ? { expect: "open" as const } : {}),
      };
    }
    case 6: {
      const count = rng.pick([10, 100, 1_000]);
      const frames = [
        { data: JSON.stringify(bounded) },
        ...Array.from({ length: count }, () => ({ data: rng.pick(["{}", "garbage", "x".repeat(1000)]) })),
      ];
      return {
        ...made,
        label: `ws: query then ${count} more frames`,
        frames,
        expect: boundedEnds,
        mayDrop: true,
      };
    }
    case 7: {
      const { header, label, statuses } = tokenAttack(rng, ctx);
      const jwt = header?.replace(/^Bearer ?/, "");
      const refuse = statuses?.includes(401) ? statuses : undefined;
      const protocols =
        jwt === undefined || jwt === "" || header?.startsWith("Basic")
          ? ["daml.ws.auth"]
          : ["daml.ws.auth", `jwt.token.${jwt}`];
      return {
        ...made,
        label: `ws: token ${label}`,
        protocols,
        frames: [{ data: JSON.stringify(bounded) }],
        // A refused token: 401 before the upgrade, or the ledger's error frame after it.
        ...(refuse ? { refuse } : {}),
        expect: refuse ? "end" : "open",
      };
    }
    case 8: {
      const garbage = rng.bytes(rng.between(1, 64));
      return {
        ...made,
        label: `ws: ${garbage.length} bytes outside the WebSocket protocol`,
        garbage,
        expect: "end",
      };
    }
    case 9:
      return {
        ...made,
        label: `ws: query frame ${JSON.stringify("garbage")}`,
        frames: [{ data: rng.pick(["garbage", "", "null", "[]", "1", '"x"']) }],
      };
    default: {
      const path = rng.pick([`${stream.path}/x`, "/v2/version", "/v2/nope", `${stream.path.toUpperCase()}`]);
      return { ...made, path, label: `ws: upgrade on ${path}`, frames: [{ data: JSON.stringify(bounded) }] };
    }
  }
}

export { HUGE_SIZES };
