/** Anything that can be pinged: a uWS WebSocket. */
export interface Pingable {
  ping(): number;
}

/**
 * Keep-alive pings for every open stream socket (Canton pings every ~13 s; pongs are answered
 * by clients on their own). One timer for all sockets instead of one per socket, so that
 * thousands of streams cost one wake-up per interval. uWS's own automatic pings are tied to its
 * idle timeout and cannot be set to an interval, hence this.
 */
export class Pinger {
  readonly #sockets = new Set<Pingable>();
  readonly #timer: NodeJS.Timeout | undefined;

  /** `intervalMs` 0 disables pinging. */
  constructor(intervalMs: number) {
    if (intervalMs > 0) {
      this.#timer = setInterval(() => {
        for (const socket of this.#sockets) socket.ping();
      }, intervalMs);
      this.#timer.unref();
    }
  }

  add(socket: Pingable): void {
    this.#sockets.add(socket);
  }

  /** Must be called from the socket's close handler: a closed uWS socket may not be touched. */
  delete(socket: Pingable): void {
    this.#sockets.delete(socket);
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#sockets.clear();
  }
}
