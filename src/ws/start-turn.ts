import type { StartTurn } from "./stream-session.js";
import type { Ticket } from "./upgrade-pacer.js";

/**
 * A socket's turn in its worker's pace of stream starts (websocket-config.upgrades-per-second),
 * queued when the socket opens: its stream starts once both its turn and its query frame came,
 * whichever came last. A turn that comes before the query (a quiet worker's, at once) is spent
 * then, as an upgrade's was, so that a socket that never sends its query holds no one's share of
 * the pace; one that the slowed pace could not make within upgrade-max-wait ends the stream with
 * the refusal, at the query if that comes later.
 */
export class QueuedStartTurn implements StartTurn {
  /**
   * Its place in the pace until its turn came or was refused; then nothing to give back, and let
   * go: a crowd's sockets outlive their turns, and each ticket held its pacer's closures.
   */
  #ticket: Ticket | undefined;
  readonly #refusal: (retryAfterSeconds: number) => unknown;
  #state: "waiting" | "came" | { readonly refused: unknown } = "waiting";
  #pending: { readonly start: () => void; readonly refused: (error: unknown) => void } | undefined;

  constructor(ticket: Ticket, refusal: (retryAfterSeconds: number) => unknown) {
    this.#ticket = ticket;
    this.#refusal = refusal;
  }

  /** The socket opened: its turn joins the queue. */
  queue(): void {
    this.#ticket?.release(
      () => this.#settle("came"),
      (retryAfterSeconds) => this.#settle({ refused: this.#refusal(retryAfterSeconds) }),
    );
  }

  wait(start: () => void, refused: (error: unknown) => void): void {
    if (this.#state === "came") start();
    else if (this.#state === "waiting") this.#pending = { start, refused };
    else refused(this.#state.refused);
  }

  /** The socket closed: a turn not yet come is given back, and nothing starts. Once it came, nothing. */
  giveBack(): void {
    this.#pending = undefined;
    this.#ticket?.abandon();
  }

  #settle(state: "came" | { readonly refused: unknown }): void {
    this.#state = state;
    this.#ticket = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.wait(pending.start, pending.refused);
  }
}
