/** setTimeout's limit; a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `expire` at `expiresAtMs` (epoch ms) unless cleared first: a stream's end at its token's
 * expiry. One timer per stream, cleared when the stream ends however it ends, so a stream that
 * ended leaves nothing behind.
 */
export function expiryTimer(expiresAtMs: number, expire: () => void): { clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const wait = expiresAtMs - Date.now();
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
