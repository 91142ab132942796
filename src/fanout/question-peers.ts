import type { UpstreamSource } from "./subscription.js";

/**
 * Members kept per question: a yes is fresh for a subscriber's re-check interval, which re-checks
 * renew, so the first is almost always one; where none of these is (the ledger away), the joiner
 * asks. A few in an array, not every member in a set: a crowd of one question is thousands, each
 * of whose joins and leaves would hash it into a set, for an answer the first one gives.
 */
const KEPT = 4;

/**
 * Some subscribers of a worker's shared streams by their admission question (request key, offset
 * and token digest: see SharedStreams): a joiner asking what one of them was answered yes to,
 * fresh, is admitted with that yes instead of a probe of its own. A crowd of one token joining
 * over the seconds of the pace asked the ledger again for each start that came after the last
 * answer. Only what the subscribers hold anyway is kept, and only while they do: their own
 * standing (SubscriberSource.freshYes), never a token or an answer of its own.
 */
export class QuestionPeers {
  readonly #peers = new Map<string, UpstreamSource[]>();

  /** A member that joined with `question`: kept if its question has fewer than KEPT. */
  add(question: string, member: UpstreamSource): void {
    const peers = this.#peers.get(question);
    if (peers === undefined) this.#peers.set(question, [member]);
    else if (peers.length < KEPT) peers.push(member);
  }

  remove(question: string, member: UpstreamSource): void {
    const peers = this.#peers.get(question);
    const at = peers === undefined ? -1 : peers.indexOf(member);
    if (peers === undefined || at === -1) return;
    peers.splice(at, 1);
    if (peers.length === 0) this.#peers.delete(question);
  }

  /** When a kept peer's fresh yes on `token` to `question` was asked, or undefined: the joiner asks. */
  freshYes(question: string, token: string | undefined): number | undefined {
    const peers = this.#peers.get(question);
    if (peers === undefined) return undefined;
    for (const peer of peers) {
      const at = peer.freshYes?.(token);
      if (at !== undefined) return at;
    }
    return undefined;
  }

  /** Questions with peers kept, for tests. */
  get size(): number {
    return this.#peers.size;
  }
}
