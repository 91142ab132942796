import {
  asyncScheduler,
  catchError,
  EMPTY,
  type MonoTypeOperatorFunction,
  type SchedulerLike,
  type TimeoutInfo,
  throwError,
  timeout,
} from "rxjs";
import { IdleTimeoutError } from "../errors/index.js";

export interface IdleTimeoutOptions {
  /** For tests (TestScheduler) and virtual time; defaults to `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /**
   * Called once when the stream is ended for idleness, before completion. This is how a caller
   * (metrics: end reason "idle") tells an idle end from the source's own completion, which
   * otherwise look the same downstream.
   */
  onIdle?: (info: IdleTimeoutError) => void;
}

function checkMs(ms: number): void {
  if (!Number.isFinite(ms) || ms < 0)
    throw new RangeError(`idle timeout must be a finite ms >= 0, got ${ms}`);
}

/**
 * Errors with {@link IdleTimeoutError} when no element arrived within `ms` of subscription or of
 * the previous element, and unsubscribes the source (which cancels a gRPC call).
 */
function idleTimeoutError<T>(
  ms: number,
  scheduler: SchedulerLike = asyncScheduler,
): MonoTypeOperatorFunction<T> {
  checkMs(ms);
  // `each` alone also bounds the wait for the first element, which is the list twin's rule:
  // the timer starts at subscription, not at the first element.
  return timeout({
    each: ms,
    scheduler,
    with: (info: TimeoutInfo<T>) => throwError(() => new IdleTimeoutError(ms, info.seen)),
  });
}

/**
 * Completes (does not error) when no element arrived within `ms` of subscription or of the
 * previous element: the HTTP list twin's wait, where Canton returns what was collected.
 *
 * @example
 * source$.pipe(idleTimeout(1000, { onIdle: () => ends.inc({ reason: "idle" }) }))
 */
export function idleTimeout<T>(ms: number, options: IdleTimeoutOptions = {}): MonoTypeOperatorFunction<T> {
  checkMs(ms);
  const { scheduler = asyncScheduler, onIdle } = options;
  return (source) =>
    source.pipe(
      idleTimeoutError<T>(ms, scheduler),
      catchError((err: unknown) => {
        // Only our own idle signal turns into completion; source errors pass through untouched.
        if (!(err instanceof IdleTimeoutError)) return throwError(() => err);
        onIdle?.(err);
        return EMPTY;
      }),
    );
}
