/**
 * Upgrades run a bounded batch per event-loop turn (each batch in its own setImmediate): the
 * ledger's answer to one admission question admits every upgrade of its token that arrived while
 * it was asked, thousands in a reconnect storm, and upgrading them in one go held a worker for a
 * hundred ms and more, the established streams' elements and the ledger's answers waiting behind
 * it. Between batches the event loop reads its sockets and runs its timers.
 */
export class UpgradeBatches {
  readonly #perTurn: number;
  readonly #queue: (() => void)[] = [];
  #scheduled = false;

  constructor(perTurn: number) {
    this.#perTurn = perTurn;
  }

  /** `upgrade` in this turn's batch, or a later one's. */
  run(upgrade: () => void): void {
    this.#queue.push(upgrade);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#batch);
  }

  /** Upgrades waiting for their batch, for tests. */
  get waiting(): number {
    return this.#queue.length;
  }

  readonly #batch = (): void => {
    const now = this.#queue.splice(0, this.#perTurn);
    this.#scheduled = this.#queue.length > 0;
    if (this.#scheduled) setImmediate(this.#batch);
    for (const upgrade of now) upgrade();
  };
}
