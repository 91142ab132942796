import http2 from "node:http2";
import { status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { errorOfStatus, errorWithoutStatus, wasRefused, watchStatus } from "./call-end.js";
import { callError } from "./grpc-call-error.js";
import { frameLength, PREFIX_BYTES, unframeMessage } from "./grpc-frame.js";
import type { Http2Connection } from "./http2-connection.js";
import { type TraceContext, traceHeaders } from "./trace-context.js";

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
  /** The request's trace, for the ledger's logs and errors. */
  trace?: TraceContext;
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

const { NGHTTP2_CANCEL } = http2.constants;

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
  let stream: http2.ClientHttp2Stream;
  try {
    const opened = connection.openCall(request.path, request.authorization, {
      "grpc-timeout": grpcTimeout(remainingMs),
      ...traceHeaders(request.trace),
    });
    // Refused before sending (headers over the ledger's limit): no other session would take it.
    if (opened instanceof Error) {
      done(opened, undefined, false);
      return;
    }
    stream = opened;
  } catch (error) {
    // The session closed under us: nothing was sent.
    done(callError(GrpcStatus.UNAVAILABLE, (error as Error).message), undefined, true);
    return;
  }
  connection.callStarted();
  let settled = false;
  const status = watchStatus(stream);
  const chunks: Buffer[] = [];
  let received = 0;
  let expected = Number.POSITIVE_INFINITY;
  let streamError: (Error & { code?: string }) | undefined;

  const finish = (error: ServiceError | undefined, message?: Buffer, refused = false) => {
    if (settled) return;
    settled = true;
    clearTimeout(deadlineTimer);
    connection.callEnded();
    if (!stream.closed) stream.close(NGHTTP2_CANCEL);
    done(error, message, refused);
  };
  const deadlineTimer = setTimeout(
    () => finish(callError(GrpcStatus.DEADLINE_EXCEEDED, "Deadline exceeded")),
    remainingMs,
  );

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
    if (status.fields === undefined) {
      const { httpStatus } = status;
      const refused = (httpStatus === 0 || httpStatus === 200) && wasRefused(stream);
      return finish(errorWithoutStatus(connection, stream, httpStatus, streamError), undefined, refused);
    }
    const error = errorOfStatus(status.fields, status.httpStatus);
    if (error !== undefined) return finish(error);
    const message = unframeMessage(chunks, received, expected);
    if (Buffer.isBuffer(message)) finish(undefined, message);
    else finish(message);
  });
  stream.end(request.frame);
}

/** `grpc-timeout`: at most 8 digits, in the finest unit that fits. */
function grpcTimeout(ms: number): string {
  if (ms < 1e8) return `${Math.ceil(ms)}m`;
  const seconds = Math.ceil(ms / 1000);
  return seconds < 1e8 ? `${seconds}S` : `${Math.ceil(seconds / 3600)}H`;
}
