import type { HttpResponse } from "uWebSockets.js";

export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

/**
 * Collects a request body. Must be called synchronously inside the uWS handler (before any
 * await), as uWS delivers body chunks only to a handler registered right away. uWS neuters
 * each chunk after the callback, so every chunk is copied.
 */
export function readBody(res: HttpResponse, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > maxBytes) {
        failed = true;
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
  });
}
