import {
  asyncScheduler,
  catchError,
  EMPTY,
  type MonoTypeOperatorFunction,
  Observable,
  type SchedulerLike,
  type Subscription,
  type TimeoutInfo,
  take,
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
  /**
   * The wait starts when this first emits, or at the first element, instead of at subscription:
   * a ledger call that waits for a stream-budget slot has not started, so it is not idle (a list
   * twin would otherwise answer an empty list for a ledger that has elements).
   */
  startOn?: Observable<unknown>;
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

/** As idleTimeoutError, the first wait starting when `startOn` first emits (or at the first element). */
function idleTimeoutFrom<T>(
  ms: number,
  startOn: Observable<unknown>,
  scheduler: SchedulerLike,
): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let seen = 0;
      let timer: Subscription | undefined;
      const arm = () => {
        timer?.unsubscribe();
        timer = scheduler.schedule(() => subscriber.error(new IdleTimeoutError(ms, seen)), ms);
      };
      const started = startOn.pipe(take(1)).subscribe(() => {
        if (timer === undefined) arm();
      });
      const subscription = source.subscribe({
        next: (value) => {
          seen += 1;
          arm();
          subscriber.next(value);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => {
        timer?.unsubscribe();
        started.unsubscribe();
        subscription.unsubscribe();
      };
    });
}

/**
 * Completes (does not error) when no element arrived within `ms` of subscription (or of
 * `startOn`) or of the previous element: the HTTP list twin's wait, where Canton returns what was
 * collected.
 *
 * @example
 * source$.pipe(idleTimeout(1000, { onIdle: () => ends.inc({ reason: "idle" }) }))
 */
export function idleTimeout<T>(ms: number, options: IdleTimeoutOptions = {}): MonoTypeOperatorFunction<T> {
  checkMs(ms);
  const { scheduler = asyncScheduler, onIdle, startOn } = options;
  return (source) =>
    source.pipe(
      startOn === undefined ? idleTimeoutError<T>(ms, scheduler) : idleTimeoutFrom<T>(ms, startOn, scheduler),
      catchError((err: unknown) => {
        // Only our own idle signal turns into completion; source errors pass through untouched.
        if (!(err instanceof IdleTimeoutError)) return throwError(() => err);
        onIdle?.(err);
        return EMPTY;
      }),
    );
}
