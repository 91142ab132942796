/**
 * The query-frame deadline of every socket still waiting for its query, on one timer for all of
 * them instead of a timer (and its closure) per socket: idle sockets hold nothing but their entry
 * here. Every socket waits as long, so the order they were added in is the order their deadlines
 * fall in; the timer is armed for the oldest, and on firing ends every socket past its deadline
 * and is armed again for the next.
 */
export class QueryDeadlines<S> {
  readonly #waitMs: number;
  readonly #expired: (socket: S) => void;
  /** Waiting sockets by the time (performance.now()) their deadline falls, oldest first. */
  readonly #waiting = new Map<S, number>();
  #timer: NodeJS.Timeout | undefined;

  /** `waitMs` 0: no deadline, nothing is kept. `expired` is called once per socket past it. */
  constructor(waitMs: number, expired: (socket: S) => void) {
    this.#waitMs = waitMs;
    this.#expired = expired;
  }

  /** A socket now waiting for its query frame. */
  add(socket: S): void {
    if (this.#waitMs <= 0) return;
    this.#waiting.set(socket, performance.now() + this.#waitMs);
    if (this.#timer === undefined) this.#arm(this.#waitMs);
  }

  /** Its query came, or it closed: no deadline any more. */
  delete(socket: S): void {
    this.#waiting.delete(socket);
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#waiting.clear();
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#sweep(), Math.max(0, Math.ceil(ms)));
    this.#timer.unref();
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const [socket, deadline] of this.#waiting) {
      if (deadline > now) {
        this.#arm(deadline - now);
        return;
      }
      this.#waiting.delete(socket);
      this.#expired(socket);
    }
  }
}
