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
