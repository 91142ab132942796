import { type QuotaRefusalReason, SharedQuotas, sharedQuotaBuffer } from "./shared-quotas.js";

/** The caps per user and per client address (the limits.* keys); 0: no cap. */
export interface ClientLimits {
  readonly wsConnectionsPerUser: number;
  readonly wsConnectionsPerAddress: number;
  readonly streamsPerUser: number;
  readonly httpInFlightPerUser: number;
  readonly commandsPerSecondPerUser: number;
  /** The command bucket's size; 0: one second's worth (commandsPerSecondPerUser). */
  readonly commandsBurstPerUser: number;
}

/** Each cap by the name of its key (the `cap` label of the refusals' metric). */
export const QUOTA_CAPS = [
  "ws-connections-per-user",
  "ws-connections-per-address",
  "streams-per-user",
  "http-in-flight-per-user",
  "commands-per-second-per-user",
] as const;

type QuotaCap = (typeof QUOTA_CAPS)[number];

/** The caps that count what is open (the command rate aside). */
export type CountedCap = Exclude<QuotaCap, "commands-per-second-per-user">;

export const QUOTA_REFUSAL_REASONS: readonly QuotaRefusalReason[] = ["limit", "table-full"];

export interface QuotaRefusal {
  readonly cap: QuotaCap;
  readonly reason: QuotaRefusalReason;
  readonly limit: number;
  /** When asking again may succeed: a token's return for the rate, else unknown. */
  readonly retryAfterMs: number | undefined;
}

/** What one request or socket holds: its `release` gives it back, once however often it is called. */
export interface QuotaHold {
  readonly refusal: QuotaRefusal | undefined;
  release(): void;
}

/** A cap to count, and whose: its user (the token's subject) or address; undefined: not counted. */
export interface QuotaClaim {
  readonly cap: CountedCap;
  readonly who: string | undefined;
}

const NOTHING_HELD: QuotaHold = { refusal: undefined, release: () => undefined };

/**
 * The per-user and per-address caps over a table that every worker thread shares. A refusal is
 * told to `onRefusal` (the metric) and to the caller, who answers it; nothing is held for it.
 */
export class ClientQuotas {
  readonly #table: SharedQuotas | undefined;
  readonly #limits: ClientLimits;
  readonly #onRefusal: (refusal: QuotaRefusal) => void;

  constructor(
    limits: ClientLimits,
    /** From clientQuotaBuffer: the main thread's, shared with every worker. */
    buffer: SharedArrayBuffer | undefined,
    onRefusal: (refusal: QuotaRefusal) => void = () => undefined,
  ) {
    this.#limits = limits;
    this.#table = buffer === undefined ? undefined : new SharedQuotas(buffer);
    this.#onRefusal = onRefusal;
  }

  /** Whether a cap HTTP requests count is on (so that a request without one decodes no token). */
  get countsHttp(): boolean {
    const l = this.#limits;
    return l.httpInFlightPerUser > 0 || l.streamsPerUser > 0 || l.commandsPerSecondPerUser > 0;
  }

  /** Whether a cap WebSockets count is on. */
  get countsWebSockets(): boolean {
    const l = this.#limits;
    return l.wsConnectionsPerUser > 0 || l.wsConnectionsPerAddress > 0 || l.streamsPerUser > 0;
  }

  /** One slot of each claim whose cap is on and whose user or address is known: all of them, or none. */
  hold(claims: readonly QuotaClaim[]): QuotaHold {
    const table = this.#table;
    if (table === undefined) return NOTHING_HELD;
    const held: string[] = [];
    for (const { cap, who } of claims) {
      const limit = this.#countLimit(cap);
      if (limit === 0 || who === undefined) continue;
      const key = `${cap}\u0000${who}`;
      const refused = table.acquire(key, limit);
      if (refused !== undefined) {
        for (const k of held) table.release(k);
        return { refusal: this.#refused({ cap, limit, ...refused }), release: NOTHING_HELD.release };
      }
      held.push(key);
    }
    if (held.length === 0) return NOTHING_HELD;
    let released = false;
    return {
      refusal: undefined,
      release: () => {
        if (released) return;
        released = true;
        for (const key of held) table.release(key);
      },
    };
  }

  /** A command submission of `user` (none without a token): a token of its bucket, or the refusal. */
  command(user: string | undefined): QuotaRefusal | undefined {
    const perSecond = this.#limits.commandsPerSecondPerUser;
    if (this.#table === undefined || perSecond === 0 || user === undefined) return undefined;
    const burst = this.#limits.commandsBurstPerUser || perSecond;
    const refused = this.#table.take(`commands-per-second-per-user\u0000${user}`, perSecond, burst);
    return refused === undefined
      ? undefined
      : this.#refused({ cap: "commands-per-second-per-user", limit: perSecond, ...refused });
  }

  #countLimit(cap: CountedCap): number {
    switch (cap) {
      case "ws-connections-per-user":
        return this.#limits.wsConnectionsPerUser;
      case "ws-connections-per-address":
        return this.#limits.wsConnectionsPerAddress;
      case "streams-per-user":
        return this.#limits.streamsPerUser;
      case "http-in-flight-per-user":
        return this.#limits.httpInFlightPerUser;
    }
  }

  #refused(refusal: QuotaRefusal): QuotaRefusal {
    this.#onRefusal(refusal);
    return refusal;
  }
}

/** The table every thread of the gateway shares, or undefined when every cap is off. */
export function clientQuotaBuffer(limits: ClientLimits): SharedArrayBuffer | undefined {
  const { commandsBurstPerUser: _burst, ...caps } = limits;
  return Object.values(caps).some((value) => value > 0) ? sharedQuotaBuffer() : undefined;
}
