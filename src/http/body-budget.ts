/** Bytes asked of a {@link BodyBudget}: granted once `granted` resolves; `release` in any state. */
export interface BodyGrant {
  readonly granted: Promise<void>;
  /** Gives the bytes back, or withdraws the request if it still waits. Idempotent. */
  release(): void;
}

/**
 * The bytes of request bodies one uWS app holds at once. A body is read only once its bytes are
 * granted; the others wait in arrival order with their sockets paused (TCP pushes back on their
 * clients), so many large uploads at once cost memory for a few of them, not for all.
 */
export class BodyBudget {
  private free: number;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.free = capacity;
  }

  /** Asks for `bytes` (at most the capacity: a body as large as the capacity waits for all of it). */
  acquire(bytes: number): BodyGrant {
    const wanted = Math.min(bytes, this.capacity);
    let state: "waiting" | "granted" | "released" = "waiting";
    let entry: { bytes: number; grant: () => void } | undefined;
    const granted = new Promise<void>((resolve) => {
      const grant = () => {
        this.free -= wanted;
        state = "granted";
        resolve();
      };
      if (this.waiting.length === 0 && wanted <= this.free) grant();
      else {
        entry = { bytes: wanted, grant };
        this.waiting.push(entry);
      }
    });
    return {
      granted,
      release: () => {
        if (state === "granted") {
          this.free += wanted;
          this.grantWaiting();
        } else if (state === "waiting" && entry) {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          this.grantWaiting();
        }
        state = "released";
      },
    };
  }

  private grantWaiting(): void {
    let next = this.waiting[0];
    while (next !== undefined && next.bytes <= this.free) {
      this.waiting.shift();
      next.grant();
      next = this.waiting[0];
    }
  }
}
