/**
 * The pace at which a worker upgrades WebSockets (websocket-config.upgrades-per-second), so that
 * a reconnect storm (every subscriber of a restarted gateway or a moved balancer at once) cannot
 * take the worker's CPU from the subscribers that are already streaming: each start costs the
 * worker a few hundred µs, most of it the upgrade itself, and 10,000 at once seconds.
 *
 * Two steps. At arrival (`arrive`), a generic cell rate algorithm decides whether the upgrade is
 * taken: one per `1 / perSecond` s, a burst of 50 ms worth; one that would wait longer than
 * `maxWaitMs` for its slot is refused (503 with Retry-After) and takes no slot, the refused told
 * to come back one slot apart, in the order refused, so that they return at the pace rather than
 * at once. A taken upgrade's ledger admission is asked at once (so that the upgrades of a token
 * in flight together share one question). Then the upgrades themselves (`Ticket.release`) go out
 * at the pace from a queue, a burst of 50 ms worth at most, whatever batch the ledger's answers
 * came in: a shared answer admits hundreds at once, and upgrading them in one go is what stalls a
 * worker.
 *
 * Shared fairly between users (the token's subject): one user's upgrades may hold at most half
 * of what the pace can take within `maxWaitMs`, so that one caller's flood of upgrades (or one
 * application's crowd) leaves the other half to everyone else, and the queue is served a user at
 * a time in turn, so that another user's upgrade never waits behind a flood. The user is read
 * from the token unverified: it only orders and shares the pace; each upgrade's token is still
 * checked (and the ledger asked) before it is upgraded.
 */
export type Arrival =
  | { readonly kind: "taken"; readonly ticket: Ticket }
  | { readonly kind: "refuse"; readonly retryAfterSeconds: number };

/** A taken upgrade's place: released once (to be upgraded in its turn) or abandoned. */
export interface Ticket {
  /** Runs `upgrade` at the pace: now if the allowance has room and nothing waits, else in its turn. */
  release(upgrade: () => void): void;
  /** The upgrade will not happen (refused, or its client left before its admission was answered). */
  abandon(): void;
}

/** The burst a pacer lets through at once: this long's worth of its rate. */
const BURST_MS = 50;
/**
 * How often a queue of upgrades is served while it waits: a turn's upgrades go out together (a
 * burst's worth), so that their query frames join their streams together and share the
 * ledger's admission of each token and query.
 */
const TURN_MS = 50;
/** The share of the pace's horizon one user's upgrades may hold (as limits.ledger-streams-per-user's default). */
const USER_SHARE = 0.5;

/** One user's upgrades: taken and not yet out (queued or awaiting their admission), and queued. */
interface UserUpgrades {
  held: number;
  readonly queued: (() => void)[];
}

export class UpgradePacer {
  readonly #intervalMs: number;
  readonly #toleranceMs: number;
  readonly #maxWaitMs: number;
  readonly #burst: number;
  readonly #perSecond: number;
  /** The most upgrades one user may hold at once. */
  readonly #perUser: number;
  readonly #now: () => number;
  /** When the next upgrade's slot is due, were there no burst (the algorithm's theoretical arrival time). */
  #due = Number.NEGATIVE_INFINITY;
  /** The slot the last refused upgrade was told to come back for: the next refused, one later. */
  #told = Number.NEGATIVE_INFINITY;
  /** Users holding upgrades, by user. */
  readonly #users = new Map<string, UserUpgrades>();
  /** Users with queued upgrades, in the order they are served (one upgrade each per round). */
  #turns: string[] = [];
  #waiting = 0;
  /** Upgrades the release may make now (a token bucket of `#burst`), as of `#filledAt`. */
  #allowance: number;
  #filledAt: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(perSecond: number, maxWaitMs: number, now: () => number = performance.now.bind(performance)) {
    this.#perSecond = perSecond;
    this.#intervalMs = 1000 / perSecond;
    this.#burst = Math.max(1, Math.floor((perSecond * BURST_MS) / 1000));
    this.#toleranceMs = (this.#burst - 1) * this.#intervalMs;
    this.#maxWaitMs = maxWaitMs;
    this.#perUser = Math.max(
      1,
      Math.floor(USER_SHARE * (this.#burst + Math.floor(maxWaitMs / this.#intervalMs))),
    );
    this.#now = now;
    this.#allowance = this.#burst;
    this.#filledAt = now();
  }

  /**
   * An upgrade of `user` arrives: taken (it will go out within `maxWaitMs`), or refused with
   * when to come back (past the pace, or past the user's share of it).
   */
  arrive(user: string): Arrival {
    const now = this.#now();
    const due = Math.max(this.#due, now);
    const upgrades = this.#users.get(user);
    if (due - now - this.#toleranceMs > this.#maxWaitMs || (upgrades?.held ?? 0) >= this.#perUser) {
      this.#told = Math.max(this.#told, due) + this.#intervalMs;
      return { kind: "refuse", retryAfterSeconds: Math.max(1, Math.ceil((this.#told - now) / 1000)) };
    }
    this.#due = due + this.#intervalMs;
    const held = upgrades ?? { held: 0, queued: [] };
    held.held++;
    this.#users.set(user, held);
    return { kind: "taken", ticket: this.#ticket(user, held) };
  }

  /** Upgrades waiting to go out, for tests. */
  get waiting(): number {
    return this.#waiting;
  }

  #ticket(user: string, upgrades: UserUpgrades): Ticket {
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      return true;
    };
    return {
      release: (upgrade) => {
        if (!settle()) return;
        upgrades.queued.push(() => {
          this.#letGo(user, upgrades);
          upgrade();
        });
        this.#waiting++;
        if (upgrades.queued.length === 1) this.#turns.push(user);
        this.#serve();
      },
      abandon: () => {
        if (settle()) this.#letGo(user, upgrades);
      },
    };
  }

  /** One of `user`'s upgrades is out (or will never be): it holds one less. */
  #letGo(user: string, upgrades: UserUpgrades): void {
    upgrades.held--;
    if (upgrades.held === 0 && this.#users.get(user) === upgrades) this.#users.delete(user);
  }

  #serve(): void {
    const now = this.#now();
    this.#allowance = Math.min(
      this.#burst,
      this.#allowance + ((now - this.#filledAt) * this.#perSecond) / 1000,
    );
    this.#filledAt = now;
    const due: (() => void)[] = [];
    // A round takes one upgrade of each user in turn; a user with more goes to the back.
    while (this.#turns.length > 0 && this.#allowance >= 1) {
      const user = this.#turns.shift() as string;
      const queued = this.#users.get(user)?.queued ?? [];
      const upgrade = queued.shift();
      if (upgrade === undefined) continue;
      if (queued.length > 0) this.#turns.push(user);
      this.#allowance -= 1;
      this.#waiting--;
      due.push(upgrade);
    }
    if (this.#turns.length > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#serve();
      }, TURN_MS);
    }
    for (const upgrade of due) upgrade();
  }
}
