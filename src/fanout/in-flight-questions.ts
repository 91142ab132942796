/**
 * Questions to the ledger that many subscribers ask at once with the same words (one token, one
 * request): asked once while in flight, its answer given to every asker. Nothing outlives the
 * call: a question asked after the answer came is asked again, so no token's answer is kept
 * (tokens are never cached). Keys name tokens by digest only (`tokenDigest`).
 */
export class InFlightQuestions<T = void> {
  readonly #inFlight = new Map<string, Promise<T>>();

  /** `idle`: told each time the last question in flight settles (its owner may let it go). */
  constructor(private readonly idle?: () => void) {}

  ask(key: string, question: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running !== undefined) return running;
    const call = question().finally(() => {
      this.#inFlight.delete(key);
      if (this.#inFlight.size === 0) this.idle?.();
    });
    this.#inFlight.set(key, call);
    return call;
  }

  /** Questions in flight, for tests. */
  get size(): number {
    return this.#inFlight.size;
  }
}
