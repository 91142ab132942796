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

/** A question's offset and token as first joined with (kept once), and the members kept for it. */
interface Peers {
  readonly asked: string;
  readonly members: UpstreamSource[];
}

/**
 * Some subscribers of a worker's shared streams by their admission question: the request's key,
 * then its offset and token digest (see SharedStreams). A joiner asking what one of them was
 * answered yes to, fresh, is admitted with that yes instead of a probe of its own. A crowd of one
 * token joining over the seconds of the pace asked the ledger again for each start that came
 * after the last answer. Only what the subscribers hold anyway is kept, and only while they do:
 * their own standing (SubscriberSource.freshYes), never a token or an answer of its own.
 *
 * Two levels, not one text: a request's key is one string for a crowd that sent the same query
 * frame (SharedQueries, shareSpec), whose hash V8 keeps, where a text joined per start (some 450
 * characters) was copied and hashed anew at each lookup, a µs or more of every start.
 */
export class QuestionPeers {
  /** By request key, then by `${offset} ${digest}` (SharedStreams' joiners). */
  readonly #peers = new Map<string, Map<string, Peers>>();

  /**
   * A member that joined with question `asked` of request `key`: kept, in place of the earliest
   * kept past KEPT. Answers `asked` as kept here, for the member to hold instead of its own copy.
   */
  add(key: string, asked: string, member: UpstreamSource): string {
    let questions = this.#peers.get(key);
    if (questions === undefined) {
      questions = new Map();
      this.#peers.set(key, questions);
    }
    const peers = questions.get(asked);
    if (peers === undefined) {
      questions.set(asked, { asked, members: [member] });
      return asked;
    }
    if (peers.members.push(member) > KEPT) peers.members.shift();
    return peers.asked;
  }

  remove(key: string, asked: string, member: UpstreamSource): void {
    const questions = this.#peers.get(key);
    const members = questions?.get(asked)?.members;
    const at = members === undefined ? -1 : members.indexOf(member);
    if (questions === undefined || members === undefined || at === -1) return;
    members.splice(at, 1);
    if (members.length > 0) return;
    questions.delete(asked);
    if (questions.size === 0) this.#peers.delete(key);
  }

  /**
   * When a kept peer's fresh yes on `token` to question `asked` of request `key` was asked (the
   * latest to join first), or undefined: the joiner asks.
   */
  freshYes(key: string, asked: string, token: string | undefined): number | undefined {
    const peers = this.#peers.get(key)?.get(asked)?.members;
    if (peers === undefined) return undefined;
    for (let i = peers.length - 1; i >= 0; i -= 1) {
      const at = peers[i]?.freshYes?.(token);
      if (at !== undefined) return at;
    }
    return undefined;
  }

  /** Questions with peers kept, for tests. */
  get size(): number {
    let size = 0;
    for (const questions of this.#peers.values()) size += questions.size;
    return size;
  }
}
