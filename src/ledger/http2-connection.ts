import http2, {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type OutgoingHttpHeaders,
  type SecureClientSessionOptions,
} from "node:http2";

export interface Http2ConnectionOptions {
  /** host:port */
  target: string;
  /** PEM contents; present = TLS (https), absent = cleartext HTTP/2. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  keepalive: { timeMs: number; timeoutMs: number };
  /** HTTP/2 flow-control window per stream and for the connection. */
  windowBytes: number;
}

/**
 * Trailer fields the session accepts in all. Canton keeps a status description within 4 KiB so
 * that its rich error (the text twice: `grpc-message` and inside `grpc-status-details-bin`) fits
 * the 8 KiB a Netty client takes; 64 KiB is ample room. (A single field past 64 KiB is another
 * matter: nghttp2's HPACK decoder refuses it and the session stops reading without closing; the
 * keepalive ping finds that out.)
 */
const MAX_HEADER_LIST_BYTES = 64 * 1024;

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
      // it with every call on it: a client's 100 KB token must not do that. As grpc-js does, send
      // it and let the ledger answer (UNAUTHENTICATED, or its own header limit).
      maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
      ...(options.tls ?? {}),
    };
    const session = http2.connect(`${options.tls ? "https" : "http"}://${options.target}`, sessionOptions);
    this.session = session;
    // Open calls keep the process alive (callStarted), an idle session must not.
    session.unref();
    session.once("remoteSettings", () => {
      this.established = true;
      // The connection-level window: without it every answer shares 64 KiB between updates.
      session.setLocalWindowSize(options.windowBytes);
    });
    session.on("error", (error: Error) => this.gone(error.message));
    session.once("goaway", () => this.gone("The ledger closed the connection (GOAWAY)"));
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
   * The HTTP/2 stream of a new gRPC call to `path` (`/package.Service/Method`); throws when the
   * session closed under us (a GOAWAY read in this very tick), in which case nothing was sent.
   */
  openCall(path: string, authorization: string | undefined, more?: OutgoingHttpHeaders): ClientHttp2Stream {
    const headers: OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...more,
    };
    // node:http2 sends `authorization` never-indexed: HPACK keeps the token in neither side's table.
    if (authorization !== undefined) headers.authorization = authorization;
    return this.session.request(headers);
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
