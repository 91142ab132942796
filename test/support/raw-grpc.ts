import http2, { type ClientHttp2Session, type ClientHttp2Stream, type Settings } from "node:http2";

/**
 * gRPC over node:http2 with nothing in between, for tests that look at what a server does at
 * the HTTP/2 level (SETTINGS, GOAWAY, RST_STREAM, a 431) where a gRPC client would hide it.
 */

export const GET_LEDGER_API_VERSION = "/com.daml.ledger.api.v2.VersionService/GetLedgerApiVersion";
export const GET_UPDATES = "/com.daml.ledger.api.v2.UpdateService/GetUpdates";

/** One length-prefixed, uncompressed gRPC message. */
export function grpcFrame(message: Uint8Array = new Uint8Array()): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

export interface Goaway {
  code: number;
  lastStreamId: number;
  debug: string;
  /** Milliseconds since the session was opened. */
  atMs: number;
}

/** A client session and what its server did to it. */
export interface WatchedSession {
  readonly session: ClientHttp2Session;
  /** Resolves with the server's first SETTINGS. */
  readonly settings: Promise<Settings>;
  readonly goaways: Goaway[];
  /** Resolves with the first GOAWAY. */
  readonly goaway: Promise<Goaway>;
  /** Resolves once the session closed, with its error's message if it had one. */
  readonly closed: Promise<string | undefined>;
  /** Milliseconds since the session was opened. */
  elapsedMs(): number;
}

export function rawSession(port: number): WatchedSession {
  const opened = performance.now();
  const elapsedMs = () => performance.now() - opened;
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const goaways: Goaway[] = [];
  let error: string | undefined;
  session.on("error", (e: Error) => {
    error = e.message;
  });
  return {
    session,
    settings: new Promise((resolve) => session.once("remoteSettings", resolve)),
    goaways,
    goaway: new Promise((resolve) =>
      session.on("goaway", (code: number, lastStreamId: number, data?: Buffer) => {
        const goaway = { code, lastStreamId, debug: data?.toString("utf8") ?? "", atMs: elapsedMs() };
        goaways.push(goaway);
        resolve(goaway);
      }),
    ),
    closed: new Promise((resolve) => session.once("close", () => resolve(error))),
    elapsedMs,
  };
}

/** How a raw call ended. */
export interface RawCallEnd {
  /** The HTTP status of its response headers, if any came. */
  status: number | undefined;
  /** grpc-status from the trailers (or from trailers-only response headers). */
  grpcStatus: string | undefined;
  grpcMessage: string | undefined;
  /** Bytes of DATA received. */
  bytes: number;
  /** The RST_STREAM code it closed with (0: none, ended normally). */
  rstCode: number;
  /** The stream's error, if any (a session closed under it, for one). */
  error: string | undefined;
}

export interface RawCall {
  readonly stream: ClientHttp2Stream;
  /** Resolves when the stream closed, however it did. */
  readonly ended: Promise<RawCallEnd>;
}

/**
 * Opens a call of `path` with the request headers sent and the request (`message`, framed)
 * written but not ended unless `end`: a test ends it when it wants the server to answer.
 */
export function rawCall(
  session: ClientHttp2Session,
  path: string,
  options: { token?: string; headers?: Record<string, string>; message?: Uint8Array; end?: boolean } = {},
): RawCall {
  const stream = session.request({
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
    ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    ...options.headers,
  });
  const end: RawCallEnd = {
    status: undefined,
    grpcStatus: undefined,
    grpcMessage: undefined,
    bytes: 0,
    rstCode: 0,
    error: undefined,
  };
  const status = (headers: http2.IncomingHttpHeaders) => {
    if (headers["grpc-status"] !== undefined) end.grpcStatus = String(headers["grpc-status"]);
    if (headers["grpc-message"] !== undefined) end.grpcMessage = String(headers["grpc-message"]);
  };
  stream.on("response", (headers) => {
    end.status = Number(headers[":status"]);
    status(headers);
  });
  stream.on("trailers", status);
  stream.on("data", (chunk: Buffer) => {
    end.bytes += chunk.length;
  });
  stream.on("error", (e: Error) => {
    end.error = e.message;
  });
  const ended = new Promise<RawCallEnd>((resolve) =>
    stream.once("close", () => {
      end.rstCode = stream.rstCode ?? 0;
      resolve(end);
    }),
  );
  const frame = grpcFrame(options.message);
  if (options.end) stream.end(frame);
  else stream.write(frame);
  return { stream, ended };
}
