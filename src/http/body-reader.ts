import type { HttpResponse } from "uWebSockets.js";
import type { BodyBudget, BodyGrant } from "./body-budget.js";
import type { UwsTimeoutHold } from "./uws-timeout-hold.js";

export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

export class BodyTimeoutError extends Error {
  override name = "BodyTimeoutError";
  constructor(readonly timeoutMs: number) {
    super(`request body not received within ${timeoutMs / 1000} s`);
  }
}

/** The client went away before its body arrived. Nobody answers it: it only settles the request. */
export class BodyAbortedError extends Error {
  override name = "BodyAbortedError";
}

export interface BodyLimits {
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /**
   * The app's body bytes at once: a body is read once its Content-Length (or, chunked, the limit)
   * is granted, and holds the grant until {@link BodyReader.release}.
   */
  readonly budget?: BodyBudget;
  /**
   * Keeps uWS's own HTTP timeout off while the body arrives, so that `timeoutMs` is the bound
   * that applies (with its 408) and not uWS's: it cuts, without an answer, a body that arrives
   * slower than 16 kB/s for 10 s. Absent: uWS's applies too.
   */
  readonly timeoutHold?: UwsTimeoutHold;
}

/**
 * A request body, read only once the request may have it. uWS delivers body chunks only to a
 * handler registered synchronously inside the request handler, so the reader registers at once;
 * a first chunk that is not the whole body pauses the socket unless the read has begun: what
 * the kernel holds stays there until {@link read} (after the token check, once the budget grants
 * it), and a refused request never costs more than the bytes uWS had already taken in. Not
 * paused up front: most bodies come whole with their headers, and a pause and its resume are two
 * system calls (epoll_ctl) per request for nothing.
 * Bytes are counted as they arrive against the limit, and the whole read is bounded in time by
 * `timeoutMs` alone (uWS's timeout is held meanwhile).
 * With a Content-Length the body is copied into one buffer of that size (no list of chunks to
 * concatenate); uWS neuters each chunk after its callback, so every chunk is copied.
 */
export class BodyReader {
  private buffer: Buffer | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private complete = false;
  private failure: Error | undefined;
  private settle: { resolve: (body: Buffer) => void; reject: (error: Error) => void } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private grant: BodyGrant | undefined;
  private releaseTimeoutHold: (() => void) | undefined;
  /** The read has begun (granted): chunks are taken as they come. */
  private started = false;
  /** The socket was paused for the read to begin. */
  private paused = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly declaredLength: number | undefined,
    private readonly limits: BodyLimits,
  ) {
    res.onData((chunk, isLast) => this.onChunk(chunk, isLast));
  }

  /** What Content-Length announced (undefined: chunked). */
  get declaredBytes(): number | undefined {
    return this.declaredLength;
  }

  /** The whole body arrived: nothing of it is left on the connection. */
  get done(): boolean {
    return this.complete;
  }

  /**
   * Resumes the socket once the budget grants the body's bytes, and resolves with the whole
   * body, or rejects past the limit or the timeout (waiting for the grant counts).
   */
  read(): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      if (this.complete) return resolve(this.body());
      this.settle = { resolve, reject };
      this.timer = setTimeout(
        () => this.fail(new BodyTimeoutError(this.limits.timeoutMs)),
        this.limits.timeoutMs,
      );
      this.grant = this.limits.budget?.acquire(this.declaredLength ?? this.limits.maxBytes);
      void (this.grant?.granted ?? Promise.resolve()).then(() => this.start());
    });
  }

  /** The body is no longer needed (parsed, or the request ended): its budget goes back. */
  release(): void {
    this.grant?.release();
  }

  private start(): void {
    if (this.failure || this.complete) return;
    // Allocated only now: a request refused or waiting before its body costs no buffer of its size.
    if (this.declaredLength !== undefined) {
      this.buffer = Buffer.allocUnsafe(this.declaredLength);
      let at = 0;
      for (const held of this.chunks.splice(0)) at += held.copy(this.buffer, at);
    }
    this.started = true;
    this.releaseTimeoutHold = this.limits.timeoutHold?.hold(this.res, () => false);
    this.resume();
  }

  /** The client went away: a pending read rejects, so the request is settled all the same. */
  abort(): void {
    this.fail(new BodyAbortedError("the client closed the connection before its body arrived"));
  }

  /** The request is answered without its body: what was held is dropped, nothing more is kept. */
  discard(): void {
    this.fail(new BodyAbortedError("body not read"));
  }

  private onChunk(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.failure || this.complete) return;
    this.size += chunk.byteLength;
    if (this.size > this.limits.maxBytes || this.size > (this.declaredLength ?? Number.POSITIVE_INFINITY)) {
      this.fail(new BodyTooLargeError(this.limits.maxBytes));
      return;
    }
    if (this.buffer) this.buffer.set(new Uint8Array(chunk), this.size - chunk.byteLength);
    else this.chunks.push(Buffer.from(chunk.slice(0)));
    if (!isLast) {
      // The rest waits in the kernel until the read begins.
      if (!this.started && !this.paused) {
        this.paused = true;
        this.res.pause();
      }
      return;
    }
    this.complete = true;
    clearTimeout(this.timer);
    this.stopHoldingTimeout();
    // Nothing of this request is left to hold back: the connection's next request may be read,
    // whether this body is read (`read`) or the request is answered without it (refused token).
    this.resume();
    this.settle?.resolve(this.body());
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.res.resume();
  }

  private body(): Buffer {
    if (this.buffer)
      return this.size === this.buffer.length ? this.buffer : this.buffer.subarray(0, this.size);
    return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
  }

  private fail(error: Error): void {
    if (this.failure || this.complete) return;
    this.failure = error;
    this.chunks.length = 0;
    this.buffer = undefined;
    clearTimeout(this.timer);
    // Before the answer is written or right at the abort, as UwsTimeoutHold needs.
    this.stopHoldingTimeout();
    this.release();
    this.settle?.reject(error);
  }

  private stopHoldingTimeout(): void {
    this.releaseTimeoutHold?.();
    this.releaseTimeoutHold = undefined;
  }
}
