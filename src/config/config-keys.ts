import { DEFAULT_API_VERSION, KNOWN_API_VERSIONS } from "../proto/api-version.js";
import { GATEWAY_AUTH_MODES, WS_COMPRESSION_MODES } from "./gateway-config.js";

/**
 * Every configuration key the gateway knows, with its type and default. Key names follow
 * Canton's JSON API (`server.port`, `websocket-config.http-list-wait-time`) so an operator's
 * knowledge carries over. Adding a key here makes it settable from file, env and CLI.
 */
export type KeyType =
  | { kind: "string" }
  | { kind: "int"; min: number; max: number }
  | { kind: "bool" }
  | { kind: "duration" }
  | { kind: "ledger" }
  | { kind: "enum"; values: readonly string[] }
  /** A count, or a whole percentage of another key's count (`50`, `10%`): see resolveShare. */
  | { kind: "share" };

export interface KeySpec {
  readonly type: KeyType;
  readonly default: string | number | boolean | undefined;
  readonly doc: string;
}

const int = (min: number, max: number): KeyType => ({ kind: "int", min, max });

export const CONFIG_KEYS = {
  "server.address": { type: { kind: "string" }, default: "127.0.0.1", doc: "address to listen on" },
  "server.port": { type: int(0, 65535), default: 7575, doc: "port to listen on; 0 picks an ephemeral port" },
  "server.path-prefix": { type: { kind: "string" }, default: "", doc: "prefix of every route, e.g. /api" },
  "server.request-timeout": {
    type: { kind: "duration" },
    default: "20s",
    doc: "deadline of unary ledger calls; a graceful shutdown waits up to this long for requests in flight",
  },
  "server.drain-delay": {
    type: { kind: "duration" },
    default: "5s",
    doc: "on SIGTERM, how long /readyz answers 503 while requests are still served, before new ones are refused (lame duck: load balancers stop routing first); 0s: refuse at once",
  },
  "server.body-read-timeout": {
    type: { kind: "duration" },
    default: "60s",
    doc: "longest time a request body may take to arrive; past it the request is answered 408 and its connection closed",
  },
  "server.workers": {
    type: int(1, 1024),
    default: undefined,
    doc: "uWS apps in worker threads sharing the port (SO_REUSEPORT), each with its own ledger channel; 1 = one thread; default: half the cores the process may run on, 1 to 4 (docs/performance.md, Worker threads)",
  },
  "server.cors.allowed-origins": {
    type: { kind: "string" },
    default: "",
    doc: "comma-separated origins (scheme://host[:port]) from which browsers may call the gateway, `*` for any; their preflights are answered and their WebSocket upgrades accepted (an upgrade whose Origin is not listed is refused: after the upgrade, with a CORS_ORIGIN_NOT_ALLOWED frame and close 4403, as browsers hide a refused upgrade's status). Empty: CORS off, WebSocket origins unchecked",
  },
  "server.cors.allowed-methods": {
    type: { kind: "string" },
    default: "GET, POST, PUT, PATCH, DELETE",
    doc: "Access-Control-Allow-Methods of an answered preflight",
  },
  "server.cors.allowed-headers": {
    type: { kind: "string" },
    default: "Authorization, Content-Type, Last-Event-ID, traceparent, tracestate",
    doc: "Access-Control-Allow-Headers of an answered preflight: what a page may send besides the headers every browser may (by default the token, the JSON body's type, a server-sent events resume and the W3C trace context)",
  },
  "server.cors.exposed-headers": {
    type: { kind: "string" },
    default: "Canton-Package-Hash, Ledger-Package-Hash",
    doc: "Access-Control-Expose-Headers of every answer to a listed origin: the gateway's own answer headers a page may read (browsers hide any other but a few standard ones); empty: none",
  },
  "server.cors.max-age": {
    type: { kind: "duration" },
    default: "10m",
    doc: "Access-Control-Max-Age of an answered preflight: how long browsers may cache it",
  },
  "server.stream-ticket-ttl": {
    type: { kind: "duration" },
    default: "30s",
    doc: "how long a stream ticket (the GET form of a stream, for a browser's EventSource: docs/browsers.md) may wait for its first use, and how long its stream waits for the client to reconnect after a drop; never past the ticket's token's expiry",
  },
  "server.http-compression": {
    type: { kind: "enum", values: ["off", "on"] },
    default: "on",
    doc: "HTTP answers of at least server.http-compression-min-bytes go out brotli- (quality 1) or gzip-compressed (level 1) to clients whose Accept-Encoding takes one, brotli first; streamed list twins and package downloads as they are; `off`: every answer as is",
  },
  "server.http-compression-min-bytes": {
    type: int(0, 2 ** 31 - 1),
    default: 4096,
    doc: "smallest answer compressed: below it the fixed cost of compressing (about 20 µs) buys less than 2 KB",
  },
  "server.max-body-bytes": {
    type: int(1, 2 ** 31 - 1),
    default: 64 * 1024 * 1024,
    doc: "largest request body accepted (DAR uploads included)",
  },
  "max-inbound-message-size": {
    type: int(1, 2 ** 31 - 1),
    default: undefined,
    doc: "Canton 3.6's http-ledger-api.max-inbound-message-size under its own name: when set, the largest request body, in place of server.max-body-bytes",
  },
  "websocket-config.http-list-max-elements-limit": {
    type: int(1, 2 ** 31 - 1),
    default: 1024,
    doc: "most elements an HTTP list twin of a stream returns; more is a 413",
  },
  "websocket-config.http-list-wait-time": {
    type: { kind: "duration" },
    default: "1s",
    doc: "how long an HTTP list twin waits for the next element",
  },
  "websocket-config.high-water-mark": {
    type: int(0, 2 ** 31 - 1),
    default: 1024 * 1024,
    doc: "bytes buffered on a WebSocket above which its gRPC stream is paused",
  },
  "websocket-config.low-water-mark": {
    type: int(0, 2 ** 31 - 1),
    default: 256 * 1024,
    doc: "bytes buffered on a paused WebSocket at or below which its gRPC stream resumes",
  },
  "websocket-config.hard-limit": {
    type: int(1, 2 ** 31 - 1),
    default: 16 * 1024 * 1024,
    doc: "bytes buffered on a WebSocket past which it is closed as a slow consumer (never dropping frames)",
  },
  "websocket-config.write-deadline": {
    type: { kind: "duration" },
    default: "60s",
    doc: "how long a paused WebSocket may make no progress draining before it is told it is a slow consumer (a frame with its resume offset), and then how long it has to read that frame before it is closed",
  },
  "websocket-config.max-query-frame-bytes": {
    type: int(1, 2 ** 31 - 1),
    default: 1024 * 1024,
    doc: "largest WebSocket query frame; a larger one is refused on its header, before it is read, and the connection is closed",
  },
  "websocket-config.query-frame-timeout": {
    type: { kind: "duration" },
    default: "30s",
    doc: "how long a WebSocket stream may wait for its query frame after the upgrade before it is ended with an INVALID_ARGUMENT error frame; 0s: no limit",
  },
  "websocket-config.upgrades-per-second": {
    type: int(0, 1_000_000),
    default: 1000,
    doc: "WebSocket streams each worker starts a second (a burst of 50 ms worth at once), so that a reconnect storm (every subscriber of a restarted gateway at once) leaves the worker time for the streams already open: an upgrade is admitted by the ledger and upgraded at once, and its stream (its query frame, its call or its place in a shared one) starts in its turn, served a user at a time (once the pace is spent, what comes meanwhile starts together at the next turn, every 50 ms); one user (a token's issuer and subject) may hold at most half of what the pace starts within websocket-config.upgrade-max-wait; the pace slows (to a tenth at the least) while the worker lags (a turn over 50 ms late) and climbs back when it does not; an upgrade whose stream the pace cannot start within websocket-config.upgrade-max-wait is refused at arrival, 503 WEBSOCKET_UPGRADES_PACED with Retry-After (docs/operations.md, Reconnect storms); 0: unpaced",
  },
  "websocket-config.upgrade-max-wait": {
    type: { kind: "duration" },
    default: "30s",
    doc: "longest a WebSocket stream may wait for its turn to start under websocket-config.upgrades-per-second, from its upgrade request: an upgrade that would wait longer is refused at arrival (503 with Retry-After), and a stream that the slowed pace could not start in time is ended at its turn with a WEBSOCKET_UPGRADES_PACED error frame; the socket is upgraded meanwhile, so no handshake timeout runs; 0s: refused at once past the burst",
  },
  "websocket-config.ping-interval": {
    type: { kind: "duration" },
    default: "13s",
    doc: "interval of keep-alive pings on WebSocket streams (Canton's); 0s disables them",
  },
  "websocket-config.stream-authorization-recheck-interval": {
    type: { kind: "duration" },
    default: "5s",
    doc: "how often the ledger is asked again whether each stream subscriber's token (WebSocket, NDJSON, SSE) may still read its stream (Canton's user-management cache-expiry-after-write-in-seconds, 5 s); an element goes out only while the ledger's latest yes is at most twice this old; refused, or unanswered for twice this long: STALE_STREAM_AUTHORIZATION (docs/security.md); 0s: admission and expiry only. Also how long an admission's yes is shared with the same token's next upgrades and joins of the same request and offset (docs/security.md, shared-yes); 0s: only while in flight",
  },
  "websocket-config.token-renewals-per-minute": {
    type: int(1, 600),
    default: 6,
    doc: 'renewal frames (`{"token": ...}`) one WebSocket stream may send a minute, a burst of as many at once; past it each is refused with a TOKEN_RENEWAL_RATE_EXCEEDED error frame before the ledger is asked (the stream keeps its token). A client renews once per token lifetime (minutes); 6 leaves room for retries',
  },
  "websocket-config.resume-window": {
    type: { kind: "duration" },
    default: "30s",
    doc: "how long an update or completion stream (WebSocket or list twin) is reopened from its last delivered offset after the ledger connection is lost (GOAWAY, reset, keepalive, restart) before the client gets the error frame with its resume offset; 0s: never",
  },
  "websocket-config.compression": {
    type: { kind: "enum", values: WS_COMPRESSION_MODES },
    default: "off",
    doc: "permessage-deflate on WebSocket streams for clients that offer it (`on`: each message deflated on its own, no memory per socket); `off`: frames as Canton sends them",
  },
  "websocket-config.fanout-history-bytes": {
    type: int(0, 2 ** 31 - 1),
    default: 1024 * 1024,
    doc: "bytes of the latest elements each shared WebSocket stream keeps (at most the hard limit; every distinct shared stream holds its own), so that a subscriber admitted within them is replayed from them and reads the shared call without a call of its own (subscribers admitted behind them share a catch-up call); more are held, up to the hard limit for each subscriber being admitted or lagging (8 at most), while they are; 0 disables",
  },
  "websocket-config.fanout-history-elements": {
    type: int(0, 2 ** 31 - 1),
    default: undefined,
    doc: "deprecated, replaced by websocket-config.fanout-history-bytes (a count says nothing of what the history costs or a replay sends): still accepted so that existing configurations start; 0 still turns the history off, any other value is ignored",
  },
  "ledger.target": {
    type: { kind: "ledger" },
    default: "embedded",
    doc: "`embedded` (sandbox participant started with the gateway) or HOST:PORT of a gRPC Ledger API",
  },
  "ledger.max-metadata-bytes": {
    type: int(1, 2 ** 31 - 1),
    default: 8 * 1024,
    doc: "largest header block of a ledger call (the token included), as HPACK counts it (each field's name and value and 32 bytes); a request past it, or past the ledger's own SETTINGS_MAX_HEADER_LIST_SIZE, is refused at the gateway with 431 REQUEST_HEADERS_TOO_LARGE and never sent (Canton's max-inbound-metadata-size)",
  },
  "ledger.keepalive-interval": {
    type: { kind: "duration" },
    default: "15s",
    doc: "interval of HTTP/2 pings to the ledger while calls are open (Canton's Ledger API permits one every 10 s); doubled for later connections when the ledger answers GOAWAY too_many_pings, as grpc-js does",
  },
  "ledger.keepalive-timeout": {
    type: { kind: "duration" },
    default: "10s",
    doc: "how long a ping to the ledger may wait for its answer before the connection is dropped and made anew",
  },
  "ledger.api-version": {
    type: { kind: "enum", values: ["auto", ...KNOWN_API_VERSIONS] },
    default: "auto",
    doc: "the Canton release whose JSON API the gateway serves (its operations, shapes and documents): `auto` asks the participant (GetLedgerApiVersion) at start and after every reconnect and serves the nearest known release to its answer; a release pins it whatever the participant says (docs/canton-versions.md)",
  },
  "ledger.tls.enabled": { type: { kind: "bool" }, default: false, doc: "use TLS to the ledger" },
  "ledger.tls.ca-cert": { type: { kind: "string" }, default: undefined, doc: "PEM file of the ledger's CA" },
  "ledger.tls.client-cert": {
    type: { kind: "string" },
    default: undefined,
    doc: "PEM client certificate (mTLS)",
  },
  "ledger.tls.client-key": { type: { kind: "string" }, default: undefined, doc: "PEM client key (mTLS)" },
  "sandbox.port": {
    type: int(0, 65535),
    default: 0,
    doc: "gRPC port of the embedded sandbox; 0 = ephemeral",
  },
  "sandbox.api-version": {
    type: { kind: "enum", values: KNOWN_API_VERSIONS },
    default: DEFAULT_API_VERSION,
    doc: "the Canton release the embedded sandbox speaks and reports (docs/canton-versions.md)",
  },
  "auth.mode": {
    type: { kind: "enum", values: GATEWAY_AUTH_MODES },
    default: "none",
    doc: "token verification at the gateway; `none` leaves it to the ledger",
  },
  "auth.secret": { type: { kind: "string" }, default: undefined, doc: "HS256 secret (auth.mode hs256)" },
  "auth.public-key-file": {
    type: { kind: "string" },
    default: undefined,
    doc: "PEM public key file (auth.mode rs256/es256)",
  },
  "auth.jwks-file": {
    type: { kind: "string" },
    default: undefined,
    doc: "JWKS file (auth.mode rs256/es256)",
  },
  "auth.audience": {
    type: { kind: "string" },
    default: undefined,
    doc: "target audience: tokens' aud must contain it (Canton's audience-based tokens)",
  },
  "auth.issuer": { type: { kind: "string" }, default: undefined, doc: "required iss of tokens" },
  "sandbox.auth.mode": {
    type: { kind: "enum", values: ["unsafe", "hs256", "rs256", "es256"] },
    default: "unsafe",
    doc: "token verification of the embedded sandbox; `unsafe` accepts any signature (loopback only)",
  },
  "sandbox.auth.secret": { type: { kind: "string" }, default: undefined, doc: "HS256 secret of the sandbox" },
  "sandbox.auth.public-key-file": {
    type: { kind: "string" },
    default: undefined,
    doc: "PEM public key file of the sandbox (rs256/es256)",
  },
  "sandbox.auth.jwks-file": {
    type: { kind: "string" },
    default: undefined,
    doc: "JWKS file of the sandbox (rs256/es256)",
  },
  "sandbox.auth.audience": {
    type: { kind: "string" },
    default: undefined,
    doc: "target audience of the sandbox",
  },
  "sandbox.auth.issuer": { type: { kind: "string" }, default: undefined, doc: "required iss at the sandbox" },
  "sandbox.auth.max-token-lifetime": {
    type: { kind: "duration" },
    default: "5m",
    doc: "Canton's ledger-api.max-token-lifetime: in the verifying modes (hs256, rs256, es256) the sandbox refuses tokens that expire further ahead than this, or never; `unsafe` accepts any lifetime; 0s: no limit",
  },
  "limits.ws-connections-per-user": {
    type: int(0, 2 ** 31 - 1),
    default: 0,
    doc: "most WebSocket connections one user (the token's subject) holds open at once, all workers together; past it the socket gets a MAXIMUM_NUMBER_OF_STREAMS error frame and close 1013; 0: no cap. With auth.mode none the subject is not verified at the gateway (docs/operations.md, Quotas)",
  },
  "limits.ws-connections-per-address": {
    type: int(0, 2 ** 31 - 1),
    default: 0,
    doc: "most WebSocket connections one client address (the socket's peer: behind a proxy, the proxy's) holds open at once, all workers together; 0: no cap. Off by default: behind nginx every socket comes from one address, and a default would cap the whole deployment",
  },
  "limits.streams-per-user": {
    type: int(0, 2 ** 31 - 1),
    default: 0,
    doc: "most streams one user has open at once: WebSocket subscriptions and HTTP list twins (arrays and streamed answers) until their answer ends; past it 429 MAXIMUM_NUMBER_OF_STREAMS (a WebSocket: the error frame, close 1013); 0: no cap",
  },
  "limits.http-in-flight-per-user": {
    type: int(0, 2 ** 31 - 1),
    default: 0,
    doc: "most HTTP requests of one user being served at once (list twins until their answer ends); past it 429 PARTICIPANT_BACKPRESSURE; 0: no cap",
  },
  "limits.commands-per-second-per-user": {
    type: int(0, 2 ** 31 - 1),
    default: 0,
    doc: "command submissions (/v2/commands/*, /v2/interactive-submission/execute*) one user may make per second, on average (a token bucket of limits.commands-burst-per-user); past it 429 PARTICIPANT_BACKPRESSURE whose retryInfo says when a token is back; 0: no cap",
  },
  "limits.commands-burst-per-user": {
    type: int(0, 2 ** 31 - 1),
    default: 0,
    doc: "the command bucket's size: how many submissions one user may make at once before limits.commands-per-second-per-user paces them; 0: one second's worth",
  },
  "limits.ledger-streams": {
    type: int(0, 2 ** 31 - 1),
    default: 500,
    doc: "most server streams the gateway opens on the ledger at once, all workers together: WebSocket streams, HTTP list twins, fan-out upstream calls and the short authorization probes (these with a share of their own, limits.ledger-streams-reserved-for-authorization); past it new ones wait in a queue (limits.ledger-streams-queue). 500: half of Canton's max-streams default (1,000 per participant, shared with its other clients, which the gateway cannot read); the sum over the gateway replicas of one participant should stay under its max-streams; 0: no budget",
  },
  "limits.ledger-streams-reserved-for-authorization": {
    type: { kind: "share" },
    default: "10%",
    doc: "of limits.ledger-streams, the streams subscriptions may not take (a count, or a whole percentage of the budget, rounded up): kept for the gateway's authorization calls (the short probes that admit a subscriber and re-check its rights), which may take any free slot and wait in a queue of their own served first, so that streams a client opens cannot starve the checks that would refuse it or close a revoked reader. At least 1 and less than limits.ledger-streams while the budget is on: a budget of 1 is refused at start, as it leaves subscriptions no stream. Taken from the budget, not added to it: limits.ledger-streams stays the most streams the gateway opens on the participant",
  },
  "limits.ledger-streams-per-user": {
    type: { kind: "share" },
    default: "50%",
    doc: "of the streams subscriptions may hold (limits.ledger-streams less its reserve for authorization), those one user (a token's subject within its issuer) may hold and wait for at once, all workers together (a count, or a whole percentage, rounded up; a count past the subscriptions' streams lets the rest wait); the same share of the reserve and queue bounds the user's authorization questions. A fan-out's one ledger call counts against the user whose token it runs on; where the gateway does not verify tokens (auth.mode none, unsafe-decode) the second half of a user's share goes only to tokens the ledger accepted. Past it the user's new stream is refused with 429 MAXIMUM_NUMBER_OF_STREAMS at once, whatever other users hold: one user cannot take the budget from the others, however many distinct queries or tokens it opens streams with. 50%: a single-user application keeps half the budget, and the other half of the subscriptions' streams stays for the other users whatever this one opens. Must be at least 1 stream while the budget is on",
  },
  "limits.ledger-streams-queue": {
    type: int(0, 2 ** 31 - 1),
    default: 1000,
    doc: "most subscriptions waiting at once for a slot of limits.ledger-streams, all workers together, and as many authorization calls in their own queue; past it 429 MAXIMUM_NUMBER_OF_STREAMS (a WebSocket: the error frame); 0: none waits",
  },
  "limits.ledger-streams-queue-timeout": {
    type: { kind: "duration" },
    default: "10s",
    doc: "longest a subscription waits for a slot of limits.ledger-streams before it is refused with 429 MAXIMUM_NUMBER_OF_STREAMS; must be more than 0",
  },
  "metrics.enabled": { type: { kind: "bool" }, default: true, doc: "serve Prometheus metrics at /metrics" },
  "log.level": {
    type: { kind: "enum", values: ["trace", "debug", "info", "warn", "error", "fatal", "silent"] },
    default: "info",
    doc: "log level",
  },
} as const satisfies Record<string, KeySpec>;

export type ConfigKey = keyof typeof CONFIG_KEYS;
