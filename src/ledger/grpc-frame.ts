import { status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { callError } from "./grpc-call-error.js";

/**
 * gRPC's length-prefixed message framing: a flag byte (1 = compressed) and the 4-byte big-endian
 * length before the message bytes.
 */
export const PREFIX_BYTES = 5;

/** The request message framed, or RESOURCE_EXHAUSTED in grpc-js's words past `maxBytes` (a 413). */
export function frameMessage(message: Uint8Array, maxBytes: number): Buffer | ServiceError {
  if (message.length > maxBytes) {
    return callError(
      GrpcStatus.RESOURCE_EXHAUSTED,
      `Sent message larger than max (${message.length} vs. ${maxBytes})`,
    );
  }
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, PREFIX_BYTES);
  return frame;
}

/**
 * The length of the whole frame whose prefix starts at `head[at]` (PREFIX_BYTES there at least),
 * or why the call fails: checked as soon as the prefix is in, before the message is buffered.
 */
export function frameLength(head: Buffer, maxBytes: number, at = 0): number | ServiceError {
  // We never send grpc-accept-encoding, so a compressed message is the server's mistake.
  if (head[at] !== 0)
    return callError(GrpcStatus.INTERNAL, "Received a compressed message, none was accepted");
  const length = head.readUInt32BE(at + 1);
  if (length > maxBytes) {
    return callError(
      GrpcStatus.RESOURCE_EXHAUSTED,
      `Received message larger than max (${length} vs. ${maxBytes})`,
    );
  }
  return PREFIX_BYTES + length;
}

/** The message of a unary answer's body, `received` bytes in `chunks`, framed in `expected`. */
export function unframeMessage(chunks: Buffer[], received: number, expected: number): Buffer | ServiceError {
  if (received === 0) return callError(GrpcStatus.UNIMPLEMENTED, "No message received");
  if (received < expected) return callError(GrpcStatus.INTERNAL, "Received a truncated message");
  const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
  return body.subarray(PREFIX_BYTES);
}
