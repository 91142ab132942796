import http2, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { status as GrpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { callError, errorOfHttpStatus, errorOfReset, errorOfTrailers } from "./grpc-call-error.js";
import { frameLength, PREFIX_BYTES, unframeMessage } from "./grpc-frame.js";
import type { Http2Connection } from "./http2-connection.js";

export interface UnaryRequest {
  /** `/package.Service/Method` */
  path: string;
  /** The request message, framed (grpc-frame.ts). */
  frame: Buffer;
  /** `Bearer <token>`, for this call only. */
  authorization: string | undefined;
  /** Epoch milliseconds. */
  deadline: number;
  maxReceiveBytes: number;
}

/**
 * How a call ended: the answer's message bytes, or the error; `refused` when the ledger never
 * saw the call (the stream was refused or never left the session), so that it may go again.
 */
export type UnaryDone = (
  error: ServiceError | undefined,
  message: Buffer | undefined,
  refused: boolean,
) => void;

const END_STREAM = http2.constants.NGHTTP2_FLAG_END_STREAM;
const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

/**
 * One unary call as one HTTP/2 stream: the framed request with `grpc-timeout`, the answer's
 * headers, message and trailers read as gRPC over HTTP/2 says, and a local deadline timer that
 * cancels the stream (the ledger's own deadline may never fire if it is frozen). `done` is called
 * exactly once.
 */
export function startUnaryCall(connection: Http2Connection, request: UnaryRequest, done: UnaryDone): void {
  const remainingMs = request.deadline - Date.now();
  if (remainingMs <= 0) {
    done(callError(GrpcStatus.DEADLINE_EXCEEDED, "Deadline exceeded"), undefined, false);
    return;
  }
  const headers: OutgoingHttpHeaders = {
    ":method": "POST",
    ":path": request.path,
    "content-type": "application/grpc",
    te: "trailers",
    "grpc-timeout": grpcTimeout(remainingMs),
  };
  // node:http2 sends `authorization` never-indexed: HPACK keeps the token in neither side's table.
  if (request.authorization !== undefined) headers.authorization = request.authorization;
  let stream: http2.ClientHttp2Stream;
  try {
    stream = connection.session.request(headers);
  } catch (error) {
    // The session closed under us (GOAWAY read in this very tick): nothing was sent.
    done(callError(GrpcStatus.UNAVAILABLE, (error as Error).message), undefined, true);
    return;
  }
  connection.calls++;
  let settled = false;
  let httpStatus = 0;
  let trailers: IncomingHttpHeaders | undefined;
  const chunks: Buffer[] = [];
  let received = 0;
  let expected = Number.POSITIVE_INFINITY;
  let streamError: (Error & { code?: string }) | undefined;

  const finish = (error: ServiceError | undefined, message?: Buffer, refused = false) => {
    if (settled) return;
    settled = true;
    clearTimeout(deadlineTimer);
    connection.calls--;
    if (!stream.closed) stream.close(NGHTTP2_CANCEL);
    done(error, message, refused);
  };
  const deadlineTimer = setTimeout(
    () => finish(callError(GrpcStatus.DEADLINE_EXCEEDED, "Deadline exceeded")),
    remainingMs,
  );

  stream.on("response", (responseHeaders, flags) => {
    httpStatus = Number(responseHeaders[":status"]);
    // Trailers-only: an answer without a message, its status in the headers.
    if (flags & END_STREAM) trailers = responseHeaders;
  });
  stream.on("trailers", (responseTrailers) => {
    trailers = responseTrailers;
  });
  stream.on("data", (chunk: Buffer) => {
    if (settled) return;
    chunks.push(chunk);
    received += chunk.length;
    if (expected === Number.POSITIVE_INFINITY && received >= PREFIX_BYTES) {
      const length = frameLength(
        chunks.length === 1 ? chunk : Buffer.concat(chunks),
        request.maxReceiveBytes,
      );
      if (typeof length !== "number") return finish(length);
      expected = length;
    }
    if (received > expected) finish(callError(GrpcStatus.UNIMPLEMENTED, "Too many responses received"));
  });
  stream.on("error", (error) => {
    streamError = error;
  });
  stream.on("close", () => {
    if (settled) return;
    if (trailers !== undefined) {
      const outcome = outcomeOfStatus(trailers, httpStatus, chunks, received, expected);
      if (Buffer.isBuffer(outcome)) finish(undefined, outcome);
      else finish(outcome);
      return;
    }
    if (httpStatus !== 0 && httpStatus !== 200) return finish(errorOfHttpStatus(httpStatus));
    const refused = stream.rstCode === NGHTTP2_REFUSED_STREAM;
    // The session went (socket error, keepalive, GOAWAY): the ledger is away, not the call wrong.
    if (!connection.usable || connection.session.destroyed || isSessionError(streamError)) {
      const reason = connection.endReason ?? streamError?.message ?? "Connection dropped";
      return finish(callError(GrpcStatus.UNAVAILABLE, `Connection dropped: ${reason}`), undefined, refused);
    }
    finish(errorOfReset(stream.rstCode), undefined, refused);
  });
  stream.end(request.frame);
}

/** The message of an answer whose trailers (or trailers-only headers) are `fields`, or its error. */
function outcomeOfStatus(
  fields: IncomingHttpHeaders,
  httpStatus: number,
  chunks: Buffer[],
  received: number,
  expected: number,
): Buffer | ServiceError {
  const status = fields["grpc-status"];
  if (status === "0") return unframeMessage(chunks, received, expected);
  if (typeof status === "string") return errorOfTrailers(Number(status), fields);
  if (httpStatus !== 200) return errorOfHttpStatus(httpStatus);
  return callError(GrpcStatus.UNKNOWN, "No status information received", Metadata.fromHttp2Headers(fields));
}

/** An error of the session (socket, TLS), as opposed to one of this stream (a reset). */
const isSessionError = (error: (Error & { code?: string }) | undefined) =>
  error !== undefined && error.code !== "ERR_HTTP2_STREAM_ERROR";

/** `grpc-timeout`: at most 8 digits, in the finest unit that fits. */
function grpcTimeout(ms: number): string {
  if (ms < 1e8) return `${Math.ceil(ms)}m`;
  const seconds = Math.ceil(ms / 1000);
  return seconds < 1e8 ? `${seconds}S` : `${Math.ceil(seconds / 3600)}H`;
}
