import http2, { type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import { status as GrpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { callError, errorOfHttpStatus, errorOfReset, errorOfTrailers } from "./grpc-call-error.js";
import type { Http2Connection } from "./http2-connection.js";

const END_STREAM = http2.constants.NGHTTP2_FLAG_END_STREAM;

/** What a call's stream said of its end so far, filled in as its headers and trailers arrive. */
export interface StatusSeen {
  /** The answer's HTTP status, 0 before its headers. */
  httpStatus: number;
  /** The trailers, or the headers of a trailers-only answer (a call that ends without a message). */
  fields: IncomingHttpHeaders | undefined;
}

/** Listens to `stream`'s headers and trailers, the same way for unary and streaming calls. */
export function watchStatus(stream: ClientHttp2Stream): StatusSeen {
  const seen: StatusSeen = { httpStatus: 0, fields: undefined };
  stream.on("response", (headers, flags) => {
    seen.httpStatus = Number(headers[":status"]);
    if (flags & END_STREAM) seen.fields = headers;
  });
  stream.on("trailers", (trailers) => {
    seen.fields = trailers;
  });
  return seen;
}

/**
 * The status a call's HTTP/2 stream ended with, read the same way for unary and streaming calls
 * (gRPC over HTTP/2): `undefined` for OK, else the error as grpc-js reports it.
 */
export function errorOfStatus(fields: IncomingHttpHeaders, httpStatus: number): ServiceError | undefined {
  const status = fields["grpc-status"];
  if (status === "0") return undefined;
  if (typeof status === "string") return errorOfTrailers(Number(status), fields);
  if (httpStatus !== 200) return errorOfHttpStatus(httpStatus);
  return callError(GrpcStatus.UNKNOWN, "No status information received", Metadata.fromHttp2Headers(fields));
}

/**
 * The error of a call whose stream closed without a gRPC status: an HTTP error, the session gone
 * (socket error, keepalive, GOAWAY: the ledger is away, not the call wrong, so UNAVAILABLE), or
 * a reset by its code.
 */
export function errorWithoutStatus(
  connection: Http2Connection,
  stream: ClientHttp2Stream,
  httpStatus: number,
  streamError: (Error & { code?: string }) | undefined,
): ServiceError {
  if (httpStatus !== 0 && httpStatus !== 200) return errorOfHttpStatus(httpStatus);
  if (!connection.usable || connection.session.destroyed || isSessionError(streamError)) {
    const reason = connection.endReason ?? streamError?.message ?? "Connection dropped";
    return callError(GrpcStatus.UNAVAILABLE, `Connection dropped: ${reason}`);
  }
  return errorOfReset(stream.rstCode);
}

/** Whether the ledger never saw the call (refused stream), so that it may go again. */
export const wasRefused = (stream: ClientHttp2Stream): boolean =>
  stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;

/** An error of the session (socket, TLS), as opposed to one of this stream (a reset). */
const isSessionError = (error: (Error & { code?: string }) | undefined) =>
  error !== undefined && error.code !== "ERR_HTTP2_STREAM_ERROR";
