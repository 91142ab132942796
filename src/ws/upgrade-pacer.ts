/**
 * The pace at which a worker admits WebSocket upgrades (websocket-config.upgrades-per-second),
 * so that a reconnect storm (every subscriber of a restarted gateway or a moved balancer at
 * once) cannot take the worker's CPU from the subscribers that are already streaming: each start
 * costs the worker a few hundred µs, 10,000 of them at once seconds. A generic cell rate
 * algorithm: one upgrade per `1 / perSecond` s, a burst of 50 ms worth at once. An upgrade past
 * that waits for its slot, at most `maxWaitMs`; the waits end on 20 ms turns, and an upgrade of a
 * group (its token's digest) that already has a turn ahead joins that turn while it holds fewer
 * than a turn's worth, so that upgrades of one token go on together and share their ledger
 * questions (a token's admission is asked once for those in flight together). Every upgrade
 * takes a slot of the pace, joined or not. One that would wait longer than `maxWaitMs` is
 * refused (503 with Retry-After) and takes no slot; the refused are told to come back one slot
 * apart, in the order they were refused, so that they return at the pace rather than at once.
 * The groups held are those with a turn ahead, each for the upgrades waiting in it.
 */
export type Pace =
  | { readonly kind: "now" }
  | { readonly kind: "wait"; readonly ms: number }
  | { readonly kind: "refuse"; readonly retryAfterSeconds: number };

const NOW: Pace = { kind: "now" };

/** The burst a pacer lets through at once: this long's worth of its rate. */
const BURST_MS = 50;
/** Waits end on turns of this length: a turn's upgrades go on together. */
const TURN_MS = 20;

interface GroupTurn {
  /** When the turn comes (the pacer's clock). */
  readonly at: number;
  /** Upgrades of the group in it. */
  count: number;
}

export class UpgradePacer {
  readonly #intervalMs: number;
  readonly #toleranceMs: number;
  readonly #maxWaitMs: number;
  /** Upgrades a turn holds at the pace: a group joins its turn up to this many. */
  readonly #perTurn: number;
  readonly #now: () => number;
  /** When the next upgrade's slot is due, were there no burst (the algorithm's theoretical arrival time). */
  #due = Number.NEGATIVE_INFINITY;
  /** The slot the last refused upgrade was told to come back for: the next refused, one later. */
  #told = Number.NEGATIVE_INFINITY;
  /** Each group's turn ahead. */
  readonly #turns = new Map<string, GroupTurn>();

  constructor(perSecond: number, maxWaitMs: number, now: () => number = performance.now.bind(performance)) {
    this.#intervalMs = 1000 / perSecond;
    this.#toleranceMs = Math.max(0, Math.floor((perSecond * BURST_MS) / 1000) - 1) * this.#intervalMs;
    this.#perTurn = Math.max(1, Math.floor((perSecond * TURN_MS) / 1000));
    this.#maxWaitMs = maxWaitMs;
    this.#now = now;
  }

  /** Takes the next slot for an upgrade of `group`: now, after a wait, or none (refused). */
  take(group?: string): Pace {
    const now = this.#now();
    this.#forgetPast(now);
    const due = Math.max(this.#due, now);
    const wait = due - now - this.#toleranceMs;
    if (wait > this.#maxWaitMs) {
      this.#told = Math.max(this.#told, due) + this.#intervalMs;
      return { kind: "refuse", retryAfterSeconds: Math.max(1, Math.ceil((this.#told - now) / 1000)) };
    }
    this.#due = due + this.#intervalMs;
    if (wait <= 0) return NOW;
    const turn = group === undefined ? undefined : this.#turnOf(group, now);
    if (turn !== undefined && turn.count < this.#perTurn) {
      turn.count++;
      return { kind: "wait", ms: turn.at - now };
    }
    const ms = Math.ceil(wait / TURN_MS) * TURN_MS;
    if (group !== undefined) {
      // Deleted first: the map stays in the order of its turns (#forgetPast reads it from the front).
      this.#turns.delete(group);
      this.#turns.set(group, { at: now + ms, count: 1 });
    }
    return { kind: "wait", ms };
  }

  /** Turns come by the front: their groups are forgotten (turns are set in the order they come). */
  #forgetPast(now: number): void {
    for (const [group, turn] of this.#turns) {
      if (turn.at > now) return;
      this.#turns.delete(group);
    }
  }

  /** The group's turn if it is still ahead (one that came is forgotten). */
  #turnOf(group: string, now: number): GroupTurn | undefined {
    const turn = this.#turns.get(group);
    if (turn === undefined || turn.at > now) return turn;
    this.#turns.delete(group);
    return undefined;
  }

  /** Groups with a turn ahead, for tests. */
  get groups(): number {
    return this.#turns.size;
  }
}
