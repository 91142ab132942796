import type { UpstreamSource } from "./subscription.js";

/**
 * Members kept per question, the latest to join: an admission's yes is fresh for the re-check
 * interval from its probe, and a joiner that found none fresh asks and is kept, so the kept ones
 * hold the newest yes there is. A few in an array, not every member in a set: a crowd of one
 * question is thousands, each of whose joins and leaves would hash it into a set, for an answer
 * the newest one gives. (Kept as the first to join, a crowd's first four, whose yeses aged,
 * crowded out every fresher one: a storm of 10,000 on 100 tokens probed at every join after its
 * first interval.)
 */
const KEPT = 4;

/** A question's text, kept once, and the members kept for it. */
interface Peers {
  readonly question: string;
  readonly members: UpstreamSource[];
}

/**
 * Some subscribers of a worker's shared streams by their admission question (request key, offset
 * and token digest: see SharedStreams): a joiner asking what one of them was answered yes to,
 * fresh, is admitted with that yes instead of a probe of its own. A crowd of one token joining
 * over the seconds of the pace asked the ledger again for each start that came after the last
 * answer. Only what the subscribers hold anyway is kept, and only while they do: their own
 * standing (SubscriberSource.freshYes), never a token or an answer of its own.
 */
export class QuestionPeers {
  readonly #peers = new Map<string, Peers>();

  /**
   * A member that joined with `question`: kept, in place of the earliest kept past KEPT. Answers
   * the question's text as kept here, for the member to hold instead of its own copy: a crowd's
   * members each built the same text (some 400 bytes), and each kept it for as long as it lived.
   */
  add(question: string, member: UpstreamSource): string {
    const peers = this.#peers.get(question);
    if (peers === undefined) {
      this.#peers.set(question, { question, members: [member] });
      return question;
    }
    if (peers.members.push(member) > KEPT) peers.members.shift();
    return peers.question;
  }

  remove(question: string, member: UpstreamSource): void {
    const members = this.#peers.get(question)?.members;
    const at = members === undefined ? -1 : members.indexOf(member);
    if (members === undefined || at === -1) return;
    members.splice(at, 1);
    if (members.length === 0) this.#peers.delete(question);
  }

  /**
   * When a kept peer's fresh yes on `token` to `question` was asked (the latest to join first),
   * or undefined: the joiner asks.
   */
  freshYes(question: string, token: string | undefined): number | undefined {
    const peers = this.#peers.get(question)?.members;
    if (peers === undefined) return undefined;
    for (let i = peers.length - 1; i >= 0; i -= 1) {
      const at = peers[i]?.freshYes?.(token);
      if (at !== undefined) return at;
    }
    return undefined;
  }

  /** Questions with peers kept, for tests. */
  get size(): number {
    return this.#peers.size;
  }
}
