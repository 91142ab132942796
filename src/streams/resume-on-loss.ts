import { asyncScheduler, Observable, type SchedulerLike, type Subscription } from "rxjs";

/** Where an element stands in its stream: its offset, and whether it is an offset checkpoint. */
export interface StreamPosition {
  readonly offset: number;
  readonly checkpoint: boolean;
}

/**
 * Whether an element at `next` comes after `last`: a later offset, or a checkpoint at `last`'s
 * offset when `last` was not one (a checkpoint may carry the offset of the element before it).
 */
function isAfter(next: StreamPosition, last: StreamPosition): boolean {
  return next.offset > last.offset || (next.offset === last.offset && next.checkpoint && !last.checkpoint);
}

export interface ResumeOnLossOptions<T> {
  /** The element's position; undefined for an element without one (it passes as it is). */
  position(element: T): StreamPosition | undefined;
  /** Whether the error is the connection's (the ledger went away), to resume from, not the request's. */
  isLoss(error: unknown): boolean;
  /** How long the stream may be without a call that holds, from the loss on; 0: never resume. */
  windowMs: number;
  /** Told once a reopened call held (an element, or no failure for the longest retry delay). */
  onResume?(lost: unknown, downMs: number): void;
  /**
   * Asks for the call to be moved now: cancelled and reopened after the last element, with no
   * error in between (`open` may use another token by then). A value is the loss the move
   * forestalls (the ledger closing the connection: GOAWAY), told to `onResume` once the new call
   * holds; undefined is a plain move (a renewed token). Ignored while a reopen waits for its retry.
   */
  moves$?: Observable<unknown>;
  /** For tests (TestScheduler) and virtual time; defaults to `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** The first retry comes this soon after a loss, and each next one twice as late, up to the longest. */
const FIRST_RETRY_MS = 100;
const LONGEST_RETRY_MS = 1_000;

/**
 * A stream that outlives its calls: `open(undefined)` is the stream as asked, `open(after)` the
 * same request starting after a position. When a call fails with a loss (the ledger connection
 * went away: GOAWAY, reset, keepalive, restart), the stream is reopened after the last element it
 * delivered, with retries (100 ms, doubling to 1 s) for `windowMs` from the loss: the subscriber
 * sees no error, no gap and no duplicate (elements not after the last one, by offset and
 * checkpoint, are skipped; a reopened call starts at the same offset, so only its first elements
 * can be). Past the window, the last loss is the stream's error; so is a reopened call's refusal
 * (the offset is gone); any other error is the stream's at once.
 *
 * A reopened call that fails at once (the ledger still away: the channel fails fast) continues
 * the same loss; one that held for the longest retry delay or delivered an element was a resume,
 * and a later failure is a new loss with a window of its own.
 *
 * `moves$` reopens it the same way before anything is lost: onto a renewed token, or off a
 * connection the ledger is closing gracefully, while the old call still works.
 */
export function resumeOnLoss<T>(
  open: (after: StreamPosition | undefined) => Observable<T>,
  options: ResumeOnLossOptions<T>,
): Observable<T> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return new Observable<T>((subscriber) => {
    /** The last element delivered: its position is read only when a call is lost. */
    let last: { element: T } | undefined;
    /** Where the current call starts: its elements up to there were delivered already. */
    let after: StreamPosition | undefined;
    let skipping = false;
    let loss: { error: unknown; since: number; retries: number } | undefined;
    let call: Subscription | undefined;
    let timer: Subscription | undefined;

    const resumed = (startedAt: number): void => {
      if (loss === undefined) return;
      timer?.unsubscribe();
      options.onResume?.(loss.error, startedAt - loss.since);
      loss = undefined;
    };

    /** The next call starts after the last element delivered; its first ones may repeat it. */
    const reopenAfterLast = (): void => {
      if (last !== undefined) {
        after = options.position(last.element) ?? after;
        last = undefined;
      }
      skipping = after !== undefined;
    };

    const subscribe = (): void => {
      const startedAt = scheduler.now();
      // A reopened call that holds this long reached the ledger, elements or not.
      if (loss !== undefined) timer = scheduler.schedule(() => resumed(startedAt), LONGEST_RETRY_MS);
      call = open(after).subscribe({
        next: (element) => {
          if (skipping) {
            const position = options.position(element);
            if (position !== undefined && after !== undefined && !isAfter(position, after)) return;
            skipping = false;
          }
          resumed(startedAt);
          last = { element };
          subscriber.next(element);
        },
        error: (error: unknown) => {
          timer?.unsubscribe();
          const now = scheduler.now();
          if (!options.isLoss(error) || options.windowMs <= 0) {
            // A reopened call refused before it held: the ledger no longer has the offset (pruned,
            // a ledger that lost its state, its parties and users gone with it). The stream ends
            // with the loss it was resuming from, so the client is told to resume from its offset,
            // and learns why when it does.
            subscriber.error(loss !== undefined ? loss.error : error);
            return;
          }
          loss ??= { error, since: now, retries: 0 };
          loss.error = error;
          const left = loss.since + options.windowMs - now;
          if (left <= 0) {
            subscriber.error(error);
            return;
          }
          reopenAfterLast();
          const delay = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** loss.retries, left);
          loss.retries += 1;
          timer = scheduler.schedule(subscribe, delay);
        },
        complete: () => subscriber.complete(),
      });
    };

    const moves = options.moves$?.subscribe((lost) => {
      if (loss !== undefined && call?.closed) return;
      call?.unsubscribe();
      timer?.unsubscribe();
      if (lost !== undefined) loss ??= { error: lost, since: scheduler.now(), retries: 0 };
      reopenAfterLast();
      subscribe();
    });
    subscribe();
    return () => {
      moves?.unsubscribe();
      timer?.unsubscribe();
      call?.unsubscribe();
    };
  });
}
