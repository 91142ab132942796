/** setTimeout's limit; a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `expire` at `expiresAtMs` (epoch ms, as `now` reads the clock) unless cleared first: a
 * stream's end at its token's expiry, in the sandbox (Canton's ongoing stream authorization) and
 * in the gateway (each subscriber's own). Cleared when the stream ends however it ends, so a
 * stream that ended leaves nothing behind.
 */
export function expiryTimer(
  expiresAtMs: number,
  expire: () => void,
  now: () => number = Date.now,
): { clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const wait = expiresAtMs - now();
    if (wait <= 0) {
      timer = undefined;
      expire();
      return;
    }
    timer = setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
  };
  arm();
  return {
    clear() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** A subscriber ended at its token's expiry: its gate. */
export interface Expiring {
  expired(): void;
}

/** The subscribers due at one instant, and the one timer that ends them. */
interface ExpiryGroup {
  readonly due: Set<SharedExpiry>;
  timer: { clear(): void } | undefined;
}

/** Groups by clock (tests move time with clocks of their own), then by instant. */
const groups = new WeakMap<() => number, Map<number, ExpiryGroup>>();

/** One caller's place in its instant's group: told at the instant unless cleared first. */
class SharedExpiry {
  constructor(
    readonly target: Expiring,
    private readonly group: ExpiryGroup,
    private readonly instants: Map<number, ExpiryGroup>,
    private readonly at: number,
  ) {}

  clear(): void {
    const { group, instants, at } = this;
    if (!group.due.delete(this) || group.due.size > 0) return;
    group.timer?.clear();
    if (instants.get(at) === group) instants.delete(at);
  }
}

const PAST: { clear(): void } = { clear: () => undefined };

/**
 * {@link expiryTimer} with one timer for every caller due at the same instant (the same `exp`,
 * as `now` reads the clock): a crowd of subscribers on one token (a service's reconnecting
 * sockets) holds one timer, not one each, and each caller one small object (its place), no
 * closures. `target.expired()` is called at `expiresAtMs` unless cleared first; at once when that
 * is past already.
 */
export function sharedExpiryTimer(
  expiresAtMs: number,
  target: Expiring,
  now: () => number = Date.now,
): { clear(): void } {
  if (expiresAtMs - now() <= 0) {
    target.expired();
    return PAST;
  }
  let byInstant = groups.get(now);
  if (byInstant === undefined) {
    byInstant = new Map();
    groups.set(now, byInstant);
  }
  const instants = byInstant;
  let group = instants.get(expiresAtMs);
  if (group === undefined) {
    const created: ExpiryGroup = { due: new Set(), timer: undefined };
    created.timer = expiryTimer(
      expiresAtMs,
      () => {
        instants.delete(expiresAtMs);
        created.timer = undefined;
        for (const due of [...created.due]) due.target.expired();
      },
      now,
    );
    instants.set(expiresAtMs, created);
    group = created;
  }
  // Its own place: the same target given twice is told, and cleared, once each.
  const place = new SharedExpiry(target, group, instants, expiresAtMs);
  group.due.add(place);
  return place;
}
