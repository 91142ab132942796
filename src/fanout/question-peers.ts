import type { UpstreamSource } from "./subscription.js";

/**
 * Members looked at for a fresh yes, of the oldest of a question's: a yes is fresh for a
 * subscriber's re-check interval, which re-checks renew, so the first is almost always one;
 * where none of these is (the ledger away), the joiner asks, and a crowd's join stays O(1).
 */
const LOOKED_AT = 4;

/**
 * The subscribers of a worker's shared streams by their admission question (request key, offset
 * and token digest: see SharedStreams): a joiner asking what one of them was answered yes to,
 * fresh, is admitted with that yes instead of a probe of its own. A crowd of one token joining
 * over the seconds of the pace asked the ledger again for each start that came after the last
 * answer. Only what the subscribers hold anyway is kept, and only while they do: their own
 * standing (SubscriberSource.freshYes), never a token or an answer of its own.
 */
export class QuestionPeers {
  readonly #peers = new Map<string, Set<UpstreamSource>>();

  add(question: string, member: UpstreamSource): void {
    const peers = this.#peers.get(question);
    if (peers === undefined) this.#peers.set(question, new Set([member]));
    else peers.add(member);
  }

  remove(question: string, member: UpstreamSource): void {
    const peers = this.#peers.get(question);
    if (peers?.delete(member) && peers.size === 0) this.#peers.delete(question);
  }

  /**
   * When a peer's fresh yes on `token` to `question` was asked (the newest of those looked at),
   * or undefined: the joiner asks.
   */
  freshYes(question: string, token: string | undefined): number | undefined {
    const peers = this.#peers.get(question);
    if (peers === undefined) return undefined;
    let newest: number | undefined;
    let looked = 0;
    for (const peer of peers) {
      const at = peer.freshYes?.(token);
      if (at !== undefined && (newest === undefined || at > newest)) newest = at;
      if (++looked === LOOKED_AT) break;
    }
    return newest;
  }

  /** Questions with peers, for tests. */
  get size(): number {
    return this.#peers.size;
  }
}
