/** Anything that can be pinged: a uWS WebSocket. */
export interface Pingable {
  ping(): number;
}

/**
 * How often a slice of the sockets is pinged. A ping is a write of its own (about 7-10 µs of a
 * worker's CPU with its syscall): 10,000 sockets pinged at once held a worker for 65-100 ms,
 * every stream's deliveries with it, once an interval. A slice every 50 ms is 0.4 ms for 10,000
 * sockets at Canton's 13 s.
 */
const SLICE_MS = 50;

/**
 * Keep-alive pings for every open stream socket (Canton pings every ~13 s; pongs are answered
 * by clients on their own), spread over the interval: a round of pings takes one interval, a
 * slice of it every SLICE_MS, on one timer for all sockets (none per socket). uWS's own automatic
 * pings are tied to its idle timeout and cannot be set to an interval, hence this.
 *
 * A round pings the sockets open when it began, in the order they opened, each once; a socket
 * that opens during a round waits for the next (its first ping within two intervals of its open,
 * as a stream's first ping is only ever a keep-alive).
 */
export class Pinger {
  readonly #sockets = new Set<Pingable>();
  readonly #slices: number;
  readonly #sliceMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** The round under way: where it stands in the set, and how many it pings. */
  #cursor: Iterator<Pingable> = this.#sockets.values();
  #roundSize = 0;
  #slice = 0;

  /** `intervalMs` 0 disables pinging. */
  constructor(intervalMs: number) {
    this.#slices = intervalMs > 0 ? Math.max(1, Math.round(intervalMs / SLICE_MS)) : 0;
    this.#sliceMs = intervalMs > 0 ? intervalMs / this.#slices : 0;
  }

  add(socket: Pingable): void {
    if (this.#slices === 0) return;
    this.#sockets.add(socket);
    if (this.#timer === undefined) {
      this.#startRound();
      this.#timer = setInterval(() => this.#pingSlice(), this.#sliceMs);
      this.#timer.unref();
    }
  }

  /** Must be called from the socket's close handler: a closed uWS socket may not be touched. */
  delete(socket: Pingable): void {
    this.#sockets.delete(socket);
    if (this.#sockets.size === 0) this.#stopTimer();
  }

  stop(): void {
    this.#stopTimer();
    this.#sockets.clear();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #startRound(): void {
    this.#cursor = this.#sockets.values();
    this.#roundSize = this.#sockets.size;
    this.#slice = 0;
  }

  /** This slice's share of the round: the round's sockets spread evenly over its slices. */
  #pingSlice(): void {
    const from = Math.floor((this.#slice * this.#roundSize) / this.#slices);
    this.#slice += 1;
    const to = Math.floor((this.#slice * this.#roundSize) / this.#slices);
    for (let i = from; i < to; i++) {
      const next = this.#cursor.next();
      if (next.done === true) break;
      next.value.ping();
    }
    if (this.#slice === this.#slices) this.#startRound();
  }
}
