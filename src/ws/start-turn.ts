import type { StartTurn, StartWaiter } from "./stream-session.js";
import type { Ticket, TurnWaiter } from "./upgrade-pacer.js";

/**
 * A socket's turn in its worker's pace of stream starts (websocket-config.upgrades-per-second),
 * queued when the socket opens: its stream starts once both its turn and its query frame came,
 * whichever came last. A turn that comes before the query (a quiet worker's, at once) is spent
 * then, as an upgrade's was, so that a socket that never sends its query holds no one's share of
 * the pace; one that the slowed pace could not make within upgrade-max-wait ends the stream with
 * the refusal, at the query if that comes later. It is its ticket's waiter, and its session is
 * its own: no closures per socket, which a storm's sockets each kept for the seconds of their wait.
 */
export class QueuedStartTurn implements StartTurn, TurnWaiter {
  /**
   * Its place in the pace until its turn came or was refused; then nothing to give back, and let
   * go: a crowd's sockets outlive their turns.
   */
  #ticket: Ticket | undefined;
  readonly #refusal: (retryAfterSeconds: number) => unknown;
  #state: "waiting" | "came" | { readonly refused: unknown } = "waiting";
  /** The stream that waits for its turn, once its query came. */
  #waiter: StartWaiter | undefined;

  constructor(ticket: Ticket, refusal: (retryAfterSeconds: number) => unknown) {
    this.#ticket = ticket;
    this.#refusal = refusal;
  }

  /** The socket opened: its turn joins the queue. */
  queue(): void {
    this.#ticket?.release(this);
  }

  wait(waiter: StartWaiter): void {
    if (this.#state === "came") waiter.startNow();
    else if (this.#state === "waiting") this.#waiter = waiter;
    else waiter.startRefused(this.#state.refused);
  }

  /** The socket closed: a turn not yet come is given back, and nothing starts. Once it came, nothing. */
  giveBack(): void {
    this.#waiter = undefined;
    this.#ticket?.abandon();
  }

  /** TurnWaiter: its turn came. */
  turnCame(): void {
    this.#settle("came");
  }

  /** TurnWaiter: the slowed pace could not make it in time. */
  turnRefused(retryAfterSeconds: number): void {
    this.#settle({ refused: this.#refusal(retryAfterSeconds) });
  }

  #settle(state: "came" | { readonly refused: unknown }): void {
    this.#state = state;
    this.#ticket = undefined;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter !== undefined) this.wait(waiter);
  }
}
