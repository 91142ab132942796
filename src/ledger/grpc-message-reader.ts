import type { ServiceError } from "@grpc/grpc-js";
import { frameLength, PREFIX_BYTES } from "./grpc-frame.js";

/**
 * The messages of a server stream's body, cut out of its DATA chunks as they come: a chunk may
 * hold several messages and a message may span chunks. A message inside one chunk is handed over
 * as a view of it, without a copy; only one that spans chunks is copied together, once.
 */
export class GrpcMessageReader {
  /** The start of a frame whose end has not come yet. */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** That frame's whole length, 0 while its prefix is incomplete. */
  private frameBytes = 0;

  constructor(private readonly maxMessageBytes: number) {}

  /** Whether a frame was begun and not finished: the body ended inside a message. */
  get midMessage(): boolean {
    return this.partBytes > 0;
  }

  /** Calls `deliver` with each message `chunk` completes, in order; stops at the first error. */
  read(chunk: Buffer, deliver: (message: Buffer) => void): ServiceError | undefined {
    let at = 0;
    if (this.partBytes > 0) {
      const taken = this.continueFrame(chunk, deliver);
      if (typeof taken !== "number") return taken;
      at = taken;
    }
    while (at < chunk.length) {
      if (chunk.length - at < PREFIX_BYTES) {
        this.keep(chunk.subarray(at));
        return undefined;
      }
      const length = frameLength(chunk, this.maxMessageBytes, at);
      if (typeof length !== "number") return length;
      if (at + length > chunk.length) {
        this.frameBytes = length;
        this.keep(chunk.subarray(at));
        return undefined;
      }
      deliver(chunk.subarray(at + PREFIX_BYTES, at + length));
      at += length;
    }
    return undefined;
  }

  /** Adds the head of `chunk` to the frame begun before it: how much of `chunk` it took. */
  private continueFrame(chunk: Buffer, deliver: (message: Buffer) => void): number | ServiceError {
    let taken = 0;
    if (this.frameBytes === 0) {
      taken = Math.min(PREFIX_BYTES - this.partBytes, chunk.length);
      this.keep(chunk.subarray(0, taken));
      if (this.partBytes < PREFIX_BYTES) return taken;
      const length = frameLength(Buffer.concat(this.parts, PREFIX_BYTES), this.maxMessageBytes);
      if (typeof length !== "number") return length;
      this.frameBytes = length;
    }
    const wanted = Math.min(this.frameBytes - this.partBytes, chunk.length - taken);
    this.keep(chunk.subarray(taken, taken + wanted));
    taken += wanted;
    if (this.partBytes < this.frameBytes) return taken;
    const frame = Buffer.concat(this.parts, this.frameBytes);
    this.parts = [];
    this.partBytes = 0;
    this.frameBytes = 0;
    deliver(frame.subarray(PREFIX_BYTES));
    return taken;
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return;
    this.parts.push(part);
    this.partBytes += part.length;
  }
}
