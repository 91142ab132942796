import type { IncomingHttpHeaders } from "node:http2";
import { constants as h2 } from "node:http2";
import { status as GrpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { METADATA_TOO_LARGE } from "../errors/index.js";

/**
 * The failure of a unary call made by the lean client (unary-call.ts), shaped as grpc-js shapes
 * it: an Error with the numeric `code`, the `details` text and the trailers as a real
 * `grpc.Metadata`, so that `isGrpcError` and the error mapping (rich status in
 * `grpc-status-details-bin`) read it as they read grpc-js's. The Metadata is built here, on
 * failures only: the success path never pays for it.
 */
export function callError(code: GrpcStatus, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${GrpcStatus[code]}: ${details}`), { code, details, metadata });
}

/** The error a `grpc-status` other than 0 stands for, with the trailers as its metadata. */
export function errorOfTrailers(code: GrpcStatus, trailers: IncomingHttpHeaders): ServiceError {
  const metadata = Metadata.fromHttp2Headers(trailers);
  metadata.remove("grpc-status");
  metadata.remove("grpc-message");
  const message = trailers["grpc-message"];
  return callError(code, typeof message === "string" ? decodeGrpcMessage(message) : "", metadata);
}

/**
 * `grpc-message` is percent-encoded on the wire (gRPC over HTTP/2: every byte outside printable
 * ASCII, and `%` itself, as %XX of its UTF-8). A malformed escape is taken as it stands, as the
 * spec asks of clients, rather than losing the message.
 */
function decodeGrpcMessage(text: string): string {
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * An answer without a gRPC status but with an HTTP status other than 200 (a proxy, or something
 * that is not a gRPC server): gRPC's table of HTTP status to status code, as grpc-js applies it.
 */
export function errorOfHttpStatus(httpStatus: number): ServiceError {
  if (httpStatus === 431) {
    // Netty's answer to a header block over its limit (not in gRPC's table, which says UNKNOWN):
    // the request's fault, answered as the gateway refuses one it sees is too large itself.
    return callError(
      GrpcStatus.RESOURCE_EXHAUSTED,
      `${METADATA_TOO_LARGE}: the ledger answered HTTP status 431 (Request Header Fields Too Large)`,
    );
  }
  return callError(HTTP_TO_GRPC[httpStatus] ?? GrpcStatus.UNKNOWN, `Received HTTP status code ${httpStatus}`);
}

/** A call refused before it was sent: its header block (`bytes`, as HPACK counts it) is over `limit`. */
export function metadataTooLargeError(bytes: number, limit: number, limitSource: string): ServiceError {
  return callError(
    GrpcStatus.RESOURCE_EXHAUSTED,
    `${METADATA_TOO_LARGE}: the call's headers, the token included, take ${bytes} bytes as HPACK counts them, over the ledger's limit of ${limit} bytes (${limitSource})`,
  );
}

const HTTP_TO_GRPC: Record<number, GrpcStatus> = {
  400: GrpcStatus.INTERNAL,
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.UNIMPLEMENTED,
  429: GrpcStatus.UNAVAILABLE,
  502: GrpcStatus.UNAVAILABLE,
  503: GrpcStatus.UNAVAILABLE,
  504: GrpcStatus.UNAVAILABLE,
};

/**
 * A stream reset before any status arrived, by its RST_STREAM code, as grpc-js reports it
 * (REFUSED_STREAM is not here: the channel retries it, the server never saw the call).
 */
export function errorOfReset(rstCode: number): ServiceError {
  switch (rstCode) {
    case h2.NGHTTP2_CANCEL:
      return callError(GrpcStatus.CANCELLED, "Call cancelled");
    case h2.NGHTTP2_REFUSED_STREAM:
      return callError(GrpcStatus.UNAVAILABLE, "Stream refused by server");
    case h2.NGHTTP2_ENHANCE_YOUR_CALM:
      return callError(GrpcStatus.RESOURCE_EXHAUSTED, "Bandwidth exhausted or memory limit exceeded");
    case h2.NGHTTP2_INADEQUATE_SECURITY:
      return callError(GrpcStatus.PERMISSION_DENIED, "Protocol not secure enough");
    case h2.NGHTTP2_NO_ERROR:
      return callError(GrpcStatus.INTERNAL, "Call ended without gRPC status");
    default:
      return callError(GrpcStatus.INTERNAL, `Received RST_STREAM with code ${rstCode}`);
  }
}
