/**
 * The pace at which a worker starts WebSocket streams (websocket-config.upgrades-per-second), so
 * that a reconnect storm (every subscriber of a restarted gateway or a moved balancer at once)
 * cannot take the worker's CPU from the subscribers that are already streaming: each start costs
 * the worker some hundred µs, and 10,000 at once a second or more.
 *
 * Two steps. At arrival of the upgrade request (`arrive`), a generic cell rate algorithm decides
 * whether it is taken: one per `1 / rate` s, a burst of 50 ms worth; one that would wait longer
 * than `maxWaitMs` for its slot is refused (503 with Retry-After) and takes no slot, the refused
 * told to come back one slot apart, in the order refused, so that they return at the pace rather
 * than at once. A taken upgrade's ledger admission is asked at once (so that the upgrades of a
 * token in flight together share one question), and once admitted it is upgraded at once, its
 * socket's turn queued (`Ticket.release`, see start-turn.ts); the streams start in turn from the
 * queue, a burst of 50 ms worth at most. The socket waits upgraded, so that no handshake timeout
 * runs and `maxWaitMs` is not bounded by uWS's 10 s for an unanswered request: a crowd of a user
 * is refused only past what the pace starts within it.
 *
 * Once the pace is spent, the turns released meanwhile come at the next turn together rather than
 * one by one as it refills: their streams' probes of the ledger (one per token, query and offset
 * while in flight) are shared by a turn's starts instead of asked by nearly each. A start waits
 * at most a turn longer for it; a quiet worker's streams still start at once.
 *
 * The rate is what the worker can afford, up to `perSecond`: the queue is served in turns on a
 * timer, and a turn that comes more than LAG_LIMIT_MS late found the worker (or its cores) too
 * busy to serve anything on time, the established subscribers' elements included: the rate then
 * drops by a third (to a tenth of `perSecond` at the least), and climbs back by a twentieth of it
 * with each turn on time, or each turn's time with nothing waiting. A start the slowed pace could
 * not make within `maxWaitMs` of its upgrade's arrival is refused at its turn as it would have
 * been at arrival, so that no client waits past what it was promised.
 *
 * A taken upgrade whose stream never starts (its token refused, its client gone before its turn)
 * gives its slot back, so that upgrades refused by their admission (forged tokens, each of another
 * made-up user) take nothing of the pace once answered; and a refused upgrade is told to come back
 * at most `maxWaitMs` + 5 s after the pace's last slot, so that a flood of refusals cannot push
 * honest clients' Retry-After out by minutes.
 *
 * Shared fairly between users (the token's subject): one user's upgrades may hold at most half
 * of what the pace can take within `maxWaitMs`, so that one caller's flood of upgrades (or one
 * application's crowd) leaves the other half to everyone else, and the queue is served a user at
 * a time in turn, so that another user's stream never waits behind a flood. The user is read
 * from the token unverified: it only orders and shares the pace; each upgrade's token is still
 * checked (and the ledger asked) before it is upgraded.
 */
export type Arrival =
  | { readonly kind: "taken"; readonly ticket: Ticket }
  | { readonly kind: "refuse"; readonly retryAfterSeconds: number };

/** What a released upgrade is told when its turn comes: to start, or that the slowed pace missed it. */
export interface TurnWaiter {
  turnCame(): void;
  /** Its turn would have come after `maxWaitMs`: the Retry-After to answer. */
  turnRefused(retryAfterSeconds: number): void;
}

/** A taken upgrade's place: released once (its stream to start in its turn) or abandoned. */
export interface Ticket {
  /**
   * Queues the start: `waiter` is told in its turn (now if the pace has room and nothing waits)
   * that it came, or that it is refused, when the pace slowed so that its turn came after
   * `maxWaitMs`.
   */
  release(waiter: TurnWaiter): void;
  /**
   * The upgrade will not happen (refused, or its client left before its turn): its share and its
   * slot are given back. Once its turn came, nothing.
   */
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
/** A turn this late slows the pace: what an established subscriber's element waited too. */
const LAG_LIMIT_MS = 50;
/** How far past the pace's last slot a refused upgrade may be told to come back, besides `maxWaitMs`. */
const RETRY_SPREAD_MS = 5_000;
/** The share of the pace's horizon one user's upgrades may hold (as limits.ledger-streams-per-user's default). */
const USER_SHARE = 0.5;

/** One user's upgrades: taken and not yet out (queued or awaiting their admission), and queued. */
interface UserUpgrades {
  held: number;
  readonly queued: QueuedTicket[];
}

/** A released ticket in its user's queue (UpgradePacer's PacedTicket). */
interface QueuedTicket {
  state: TicketState;
  readonly arrivedAt: number;
  retryAfterSeconds: number | undefined;
  /** Its turn came: its waiter is told (to start, or its refusal when `retryAfterSeconds` is set). */
  tell(): void;
}

/** A ticket's state: taken, released to its queue (its waiter told in its turn), or done with. */
type TicketState = "held" | "queued" | "settled";

export class UpgradePacer {
  readonly #maxWaitMs: number;
  readonly #perSecond: number;
  /** The most upgrades one user may hold at once. */
  readonly #perUser: number;
  readonly #now: () => number;
  /** The upgrades a second the worker affords now: `#perSecond` unless turns came late. */
  #rate: number;
  /** When the next upgrade's slot is due, were there no burst (the algorithm's theoretical arrival time). */
  #due = Number.NEGATIVE_INFINITY;
  /** The slot the last refused upgrade was told to come back for: the next refused, one later. */
  #told = Number.NEGATIVE_INFINITY;
  /** Users holding upgrades, by user. */
  readonly #users = new Map<string, UserUpgrades>();
  /** Users with queued upgrades, in the order they are served (one upgrade each per round). */
  #turns: string[] = [];
  #waiting = 0;
  /** Upgrades the release may make now (a token bucket of a burst), as of `#filledAt`. */
  #allowance: number;
  #filledAt: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /**
   * The last serving spent the pace: until a turn leaves some of it unspent, released upgrades
   * wait for the next turn (a timer is due) rather than go out one by one as the pace refills.
   */
  #saturated = false;
  /** When the queue was last served: the idle time since counts as turns on time (see #recover). */
  #lastTurnAt: number;

  constructor(perSecond: number, maxWaitMs: number, now: () => number = performance.now.bind(performance)) {
    this.#perSecond = perSecond;
    this.#rate = perSecond;
    this.#maxWaitMs = maxWaitMs;
    const horizon = burstOf(perSecond) + Math.floor((maxWaitMs * perSecond) / 1000);
    this.#perUser = Math.max(1, Math.floor(USER_SHARE * horizon));
    this.#now = now;
    this.#allowance = burstOf(perSecond);
    this.#filledAt = now();
    this.#lastTurnAt = this.#filledAt;
  }

  /**
   * An upgrade of `user` arrives: taken (it will go out within `maxWaitMs`), or refused with
   * when to come back (past the pace, or past the user's share of it).
   */
  arrive(user: string): Arrival {
    const now = this.#now();
    this.#recover(now);
    const interval = 1000 / this.#rate;
    const due = Math.max(this.#due, now);
    const upgrades = this.#users.get(user);
    const tolerance = (burstOf(this.#rate) - 1) * interval;
    if (due - now - tolerance > this.#maxWaitMs || (upgrades?.held ?? 0) >= this.#perUser)
      return { kind: "refuse", retryAfterSeconds: this.#tell(now, due, interval) };
    this.#due = due + interval;
    const held = upgrades ?? { held: 0, queued: [] };
    held.held++;
    this.#users.set(user, held);
    return { kind: "taken", ticket: this.#ticket(user, held, now) };
  }

  /** Upgrades waiting to go out, for tests. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Upgrades a second the pace makes now. */
  get rate(): number {
    return this.#rate;
  }

  /** When a refused upgrade should come back: one slot after the last one told, in whole seconds. */
  #tell(now: number, due: number, interval: number): number {
    this.#told = Math.min(Math.max(this.#told, due) + interval, due + this.#maxWaitMs + RETRY_SPREAD_MS);
    return Math.max(1, Math.ceil((this.#told - now) / 1000));
  }

  #ticket(user: string, upgrades: UserUpgrades, arrivedAt: number): Ticket {
    return new UpgradePacer.#PacedTicket(this, user, upgrades, arrivedAt);
  }

  /**
   * A taken upgrade's place, and once released its place in its user's queue: one object, where
   * a scope and two closures for the ticket, two more for its release and a record in the queue
   * were every socket's until its turn, seconds into a storm (promoted by then, and so work for
   * the old generation's collector too).
   */
  static readonly #PacedTicket = class PacedTicket implements Ticket, QueuedTicket {
    state: TicketState = "held";
    waiter: TurnWaiter | undefined;
    /** Set when its turn came too late: the Retry-After it is refused with. */
    retryAfterSeconds: number | undefined;

    constructor(
      private readonly pacer: UpgradePacer,
      private readonly user: string,
      private readonly upgrades: UserUpgrades,
      readonly arrivedAt: number,
    ) {}

    release(waiter: TurnWaiter): void {
      if (this.state !== "held") return;
      const { pacer, upgrades } = this;
      this.state = "queued";
      this.waiter = waiter;
      upgrades.queued.push(this);
      pacer.#waiting++;
      if (upgrades.queued.length === 1) pacer.#turns.push(this.user);
      if (pacer.#saturated) return;
      pacer.#recover(pacer.#now());
      pacer.#serve();
    }

    abandon(): void {
      if (this.state === "settled") return;
      const { pacer, upgrades, user } = this;
      if (this.state === "queued") {
        // Queued: withdrawn, unless its turn already came.
        const at = upgrades.queued.indexOf(this);
        if (at === -1) return;
        upgrades.queued.splice(at, 1);
        pacer.#waiting--;
        // Its user's last: out of the round too, or a later release would put it there twice.
        const turn = pacer.#turns.indexOf(user);
        if (upgrades.queued.length === 0 && turn !== -1) pacer.#turns.splice(turn, 1);
      }
      this.state = "settled";
      this.waiter = undefined;
      pacer.#letGo(user, upgrades);
      // Its slot, never used, is the next arrival's.
      pacer.#due -= 1000 / pacer.#rate;
    }

    /** Its turn: the waiter is told, and let go. */
    tell(): void {
      const waiter = this.waiter;
      this.waiter = undefined;
      if (this.retryAfterSeconds === undefined) waiter?.turnCame();
      else waiter?.turnRefused(this.retryAfterSeconds);
    }
  };

  /** One of `user`'s upgrades is out (or will never be): it holds one less. */
  #letGo(user: string, upgrades: UserUpgrades): void {
    upgrades.held--;
    if (upgrades.held === 0 && this.#users.get(user) === upgrades) this.#users.delete(user);
  }

  /** A turn `lateMs` past its time: the pace slows when the worker could not keep it. */
  #adapt(lateMs: number): void {
    this.#rate =
      lateMs > LAG_LIMIT_MS
        ? Math.max(this.#perSecond / 10, (this.#rate * 2) / 3)
        : Math.min(this.#perSecond, this.#rate + this.#perSecond / 20);
  }

  /**
   * A slowed pace climbs back while the worker is idle too: each turn's time with no turn due
   * (nothing waiting) counts as a turn on time, so that a storm after a quiet spell does not
   * start at the last storm's slowest.
   */
  #recover(now: number): void {
    if (this.#timer !== undefined || this.#rate === this.#perSecond) return;
    const idleTurns = Math.floor((now - this.#lastTurnAt) / TURN_MS);
    if (idleTurns > 0)
      this.#rate = Math.min(this.#perSecond, this.#rate + (idleTurns * this.#perSecond) / 20);
  }

  #serve(): void {
    const now = this.#now();
    this.#lastTurnAt = now;
    this.#allowance = Math.min(
      burstOf(this.#rate),
      this.#allowance + ((now - this.#filledAt) * this.#rate) / 1000,
    );
    this.#filledAt = now;
    const out: QueuedTicket[] = [];
    // A round takes one upgrade of each user in turn; a user with more goes to the back. One
    // that waited past its promise is refused, which takes nothing of the pace.
    while (this.#turns.length > 0 && this.#allowance >= 1) {
      const user = this.#turns.shift() as string;
      const upgrades = this.#users.get(user);
      const next = upgrades?.queued.shift();
      if (upgrades === undefined || next === undefined) continue;
      if (upgrades.queued.length > 0) this.#turns.push(user);
      this.#waiting--;
      this.#letGo(user, upgrades);
      // Out of the queue: its turn came, whatever it is told; an abandon now changes nothing.
      next.state = "settled";
      if (now - next.arrivedAt > this.#maxWaitMs) {
        next.retryAfterSeconds = this.#tell(now, Math.max(this.#due, now), 1000 / this.#rate);
        out.push(next);
        continue;
      }
      this.#allowance -= 1;
      out.push(next);
    }
    this.#saturated = this.#allowance < 1;
    if ((this.#turns.length > 0 || this.#saturated) && this.#timer === undefined) {
      const dueAt = now + TURN_MS;
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#adapt(this.#now() - dueAt);
        this.#serve();
      }, TURN_MS);
    }
    for (const ticket of out) ticket.tell();
  }
}

/** A burst: 50 ms worth of `rate`, at least one. */
function burstOf(rate: number): number {
  return Math.max(1, Math.floor((rate * BURST_MS) / 1000));
}
