import http2, {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type OutgoingHttpHeaders,
  type SecureClientSessionOptions,
} from "node:http2";
import type { ServiceError } from "@grpc/grpc-js";
import { metadataTooLargeError } from "./grpc-call-error.js";
import { installLeanAsyncBind } from "./lean-async-bind.js";

// Every `session.request` binds a function with AsyncResource: without Node 20's deprecation
// wrappers there (lean-async-bind.ts). Once per thread that loads this module.
installLeanAsyncBind();

/** Why the gateway refused a call without sending it (a metric label). */
export type RefusedCallReason = "metadata_too_large";

export interface Http2ConnectionOptions {
  /** host:port */
  target: string;
  /** PEM contents; present = TLS (https), absent = cleartext HTTP/2. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  keepalive: { timeMs: number; timeoutMs: number };
  /** HTTP/2 flow-control window per stream and for the connection. */
  windowBytes: number;
  /** Largest header block a call may send, as HPACK counts it (ledger.max-metadata-bytes). */
  maxMetadataBytes: number;
  /** Told of every call refused before it was sent. */
  onRefused?: (reason: RefusedCallReason) => void;
  /** Told when the session is established (the ledger's first SETTINGS): a new connection to it. */
  onEstablished?: () => void;
}

/**
 * Trailer fields the session accepts in all. Canton keeps a status description within 4 KiB so
 * that its rich error (the text twice: `grpc-message` and inside `grpc-status-details-bin`) fits
 * the 8 KiB a Netty client takes; 64 KiB is ample room. (A single field past 64 KiB is another
 * matter: nghttp2's HPACK decoder refuses it and the session stops reading without closing; the
 * keepalive ping finds that out.)
 */
const MAX_HEADER_LIST_BYTES = 64 * 1024;

/** The ledger's GOAWAY debug data when it found our pings too frequent (grpc-java, grpc-js, C-core). */
const TOO_MANY_PINGS = Buffer.from("too_many_pings");
const NO_DATA = Buffer.alloc(0);

/**
 * A header field's size as HPACK counts it (RFC 7541, 4.1): its name, its value and 32 bytes,
 * whether or not it is compressed. SETTINGS_MAX_HEADER_LIST_SIZE, and Netty's header limit,
 * count a header block so, pseudo-headers included.
 */
const fieldBytes = (name: string, value: string): number => name.length + Buffer.byteLength(value) + 32;

/**
 * One HTTP/2 session to the ledger for its calls, unary and streaming, with its keepalive. It is `established` once
 * the ledger's SETTINGS arrived, the proof that an HTTP/2 server answers; `onGone` is told once,
 * when the session can take no new calls (GOAWAY, closed, failed, dropped by the keepalive), and
 * whether it was ever established: the channel backs off only after failures to connect.
 */
export class Http2Connection {
  readonly session: ClientHttp2Session;
  established = false;
  /** Calls open on this session: pings go out only while there are some (see keepalive). */
  private calls = 0;
  /** Why the session ended, for the calls it fails. */
  endReason: string | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  /** The ledger's GOAWAY said our pings came too often (ENHANCE_YOUR_CALM, `too_many_pings`). */
  tooManyPings = false;
  /** The header block every call sends whatever its path and token (pseudo-headers included). */
  private readonly fixedHeaderBytes: number;
  /** The smaller of ours and the one the ledger's SETTINGS announce (none before them). */
  private headerLimit: number;
  /** The header limit's source, for the refusal's text. */
  private headerLimitSource = "ledger.max-metadata-bytes";
  /** Calls waiting for the ledger's SETTINGS (whenReady). */
  private readonly waiting = new Set<() => void>();
  /** Told when the ledger closes the session gracefully (see onDrain). */
  private readonly draining = new Set<() => void>();

  constructor(
    private readonly options: Http2ConnectionOptions,
    private readonly onGone: (connection: Http2Connection) => void,
  ) {
    const sessionOptions: SecureClientSessionOptions = {
      settings: {
        initialWindowSize: options.windowBytes,
        maxHeaderListSize: MAX_HEADER_LIST_BYTES,
        enablePush: false,
      },
      // In megabytes. nghttp2 refuses new streams past it (ENHANCE_YOUR_CALM), and a DAR upload
      // of up to 64 MiB is buffered here whole: as grpc-js does, take the limit out of the way;
      // what the gateway holds is bounded by its body limits, not by this session.
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
      // node refuses to send a header block past 64 KiB by default, and destroys the session for
      // it with every call on it. openCall refuses what the ledger would not take before that;
      // a larger limit configured than node's is the operator's to make.
      maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
      ...(options.tls ?? {}),
    };
    const url = new URL(`${options.tls ? "https" : "http"}://${options.target}`);
    const session = http2.connect(url, sessionOptions);
    this.session = session;
    // node adds :scheme and :authority (host:port, as it writes them) to every request.
    const authority = `${url.hostname.replace(/^\[|\]$/g, "")}:${url.port || (options.tls ? 443 : 80)}`;
    this.fixedHeaderBytes =
      fieldBytes(":method", "POST") +
      fieldBytes(":scheme", url.protocol.slice(0, -1)) +
      fieldBytes(":authority", authority) +
      fieldBytes("content-type", "application/grpc") +
      fieldBytes("te", "trailers");
    this.headerLimit = options.maxMetadataBytes;
    // Open calls keep the process alive (callStarted), an idle session must not.
    session.unref();
    session.on("remoteSettings", (settings) => {
      const announced = settings.maxHeaderListSize ?? Number.POSITIVE_INFINITY;
      this.headerLimit = Math.min(options.maxMetadataBytes, announced);
      this.headerLimitSource =
        announced < options.maxMetadataBytes
          ? "the ledger's SETTINGS_MAX_HEADER_LIST_SIZE"
          : "ledger.max-metadata-bytes";
      if (this.established) return;
      this.established = true;
      // The connection-level window: without it every answer shares 64 KiB between updates.
      session.setLocalWindowSize(options.windowBytes);
      this.release();
      options.onEstablished?.();
    });
    session.on("error", (error: Error) => this.gone(error.message));
    // A socket that fails while no stream is open (a TLS alert after the handshake: mTLS without
    // the client certificate) ends no session by itself: its waiting calls would wait for nothing.
    session.socket.on("error", (error: Error) => this.drop(error.message));
    session.once("goaway", (code: number, _lastStreamId: number, data?: Buffer) => {
      this.tooManyPings =
        code === http2.constants.NGHTTP2_ENHANCE_YOUR_CALM && TOO_MANY_PINGS.equals(data ?? NO_DATA);
      this.gone("The ledger closed the connection (GOAWAY)");
      for (const listener of [...this.draining]) listener();
    });
    session.once("close", () => {
      this.gone("Connection closed");
      clearTimeout(this.keepaliveTimer);
    });
    this.armKeepalive();
  }

  /** Whether a new call may go on this session. */
  get usable(): boolean {
    // destroyed/closed before the events that set endReason have been emitted
    return this.endReason === undefined && !this.session.destroyed && !this.session.closed;
  }

  /**
   * Runs `open` once the ledger's SETTINGS have arrived, as grpc-js and grpc-java open no call
   * before them: they carry the header limit that `openCall` keeps to. At once when they have,
   * or when the session is gone (`openCall` throws then, and the call may go elsewhere); at
   * `deadline` (epoch ms) at the latest, for the call to fail for its deadline. A waiting call
   * counts as open for the keepalive, which gives up a ledger that never answers.
   */
  whenReady(open: () => void, deadline?: number): void {
    if (this.established || this.endReason !== undefined) {
      open();
      return;
    }
    this.callStarted();
    let timer: NodeJS.Timeout | undefined;
    const start = () => {
      clearTimeout(timer);
      this.callEnded();
      open();
    };
    this.waiting.add(start);
    if (deadline !== undefined) {
      timer = setTimeout(() => this.waiting.delete(start) && start(), deadline - Date.now());
    }
  }

  /**
   * The HTTP/2 stream of a new gRPC call to `path` (`/package.Service/Method`), or, without
   * sending anything, the refusal of a call whose header block is over the ledger's limit: the
   * smaller of `maxMetadataBytes` and the ledger's SETTINGS_MAX_HEADER_LIST_SIZE. The ledger would
   * refuse it too, but Netty closes the whole connection for a header block well past its limit
   * (GOAWAY PROTOCOL_ERROR), and with it every other call on it. Throws when the session is gone
   * (a GOAWAY read in this very tick), in which case nothing was sent either.
   */
  openCall(
    path: string,
    authorization: string | undefined,
    more?: OutgoingHttpHeaders,
  ): ClientHttp2Stream | ServiceError {
    if (!this.usable) throw new Error(this.endReason ?? "Connection closed");
    const headers: OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...more,
    };
    let bytes = this.fixedHeaderBytes + fieldBytes(":path", path);
    if (more !== undefined)
      for (const [name, value] of Object.entries(more)) bytes += fieldBytes(name, String(value));
    // node:http2 sends `authorization` never-indexed: HPACK keeps the token in neither side's table.
    if (authorization !== undefined) {
      headers.authorization = authorization;
      bytes += fieldBytes("authorization", authorization);
    }
    if (bytes > this.headerLimit) {
      this.options.onRefused?.("metadata_too_large");
      return metadataTooLargeError(bytes, this.headerLimit, this.headerLimitSource);
    }
    return this.session.request(headers);
  }

  /**
   * `listener` is told when the ledger sends GOAWAY: the calls open on the session go on for
   * its grace period, but a long stream is cut at its end, so it may move onto a new session
   * (the channel's next) before that. Returns the removal.
   */
  onDrain(listener: () => void): () => void {
    this.draining.add(listener);
    return () => this.draining.delete(listener);
  }

  /** A call opened a stream on this session. */
  callStarted(): void {
    if (this.calls++ === 0) this.session.ref();
  }

  /** A call's stream is over. */
  callEnded(): void {
    if (--this.calls === 0) this.session.unref();
  }

  /** Ends the session now: its calls fail (UNAVAILABLE), the channel makes a new one. */
  drop(reason: string): void {
    this.gone(reason);
    this.session.destroy();
  }

  private gone(reason: string): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    this.onGone(this);
    this.release();
  }

  /** Starts the calls waiting for the ledger's SETTINGS: they arrived, or the session is gone. */
  private release(): void {
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const start of waiting) start();
  }

  /**
   * A ping every `timeMs` while calls are open, and the session dropped when one is not answered
   * within `timeoutMs`: a frozen ledger, or a session that died without closing (an oversized
   * trailer field), holds its calls until their deadlines otherwise. Never without open calls:
   * Canton's Ledger API permits such pings only every 2 hours and closes the connection of a
   * client that pings more (see LedgerClientOptions.keepalive for the interval).
   */
  private armKeepalive(): void {
    const { timeMs, timeoutMs } = this.options.keepalive;
    this.keepaliveTimer = setTimeout(() => {
      if (this.session.destroyed) return;
      // Closed: a GOAWAY let the calls on it finish; they are the ledger's to end now.
      if (this.calls === 0 || this.session.closed) return this.armKeepalive();
      // Calls waiting, and no TCP/TLS connection after `timeMs` (a host that does not answer).
      if (this.session.connecting) return this.drop("No connection within the keepalive time");
      const timeout = setTimeout(() => this.drop("Keepalive ping not answered"), timeoutMs).unref();
      this.session.ping((error) => {
        clearTimeout(timeout);
        if (error) this.drop(`Keepalive ping failed: ${error.message}`);
        else this.armKeepalive();
      });
    }, timeMs).unref();
  }
}
