import {
  BehaviorSubject,
  distinctUntilChanged,
  type MonoTypeOperatorFunction,
  Observable,
  type OperatorFunction,
  scan,
  skip,
  startWith,
} from "rxjs";
import { SlowConsumerError } from "./errors.js";

/*
 * Flow control for a push-only library. RxJS cannot ask a source to slow down, so demand
 * travels on a second channel, `Observable<boolean>` (true: ready, false: not ready), from the
 * sink back to the source (`serverStream` pauses its gRPC call on false). The helpers here turn
 * a sink's buffer level into that signal and let a stage hold elements while it is false.
 */

export interface Watermarks {
  /** Not ready once the level goes strictly above this. */
  highWater: number;
  /** Ready again once the level is at or below this (so 0 means "fully drained"). */
  lowWater: number;
}

function checkWatermarks({ highWater, lowWater }: Watermarks): void {
  if (!(lowWater >= 0 && highWater >= lowWater && Number.isFinite(highWater))) {
    throw new RangeError(`need 0 <= lowWater <= highWater, got low ${lowWater}, high ${highWater}`);
  }
}

/**
 * Buffered-amount readings -> edge-triggered readiness with hysteresis, like nats.js's
 * slow-consumer status: `false` once when the level crosses above `highWater`, `true` once when
 * it drops to `lowWater` or below, nothing in between. The state starts ready and the start
 * itself is not emitted: consumers treat "no value yet" as ready. The gap between the marks
 * keeps a level hovering around one mark from toggling the gRPC call on every frame.
 */
export function demandFromLevel(marks: Watermarks): OperatorFunction<number, boolean> {
  checkWatermarks(marks);
  const { highWater, lowWater } = marks;
  return (levels) =>
    levels.pipe(
      scan((ready: boolean, level: number) => (ready ? level <= highWater : level <= lowWater), true),
      // scan does not emit its seed; prefixing it makes a leading "still ready" a non-edge.
      startWith(true),
      distinctUntilChanged(),
      skip(1),
    );
}

/**
 * Imperative face of {@link demandFromLevel} for sinks that poll a buffer (a WebSocket's
 * `getBufferedAmount()` after each send and on `drain`). Pure state: no timers, no I/O.
 */
export class DemandGate {
  readonly #marks: Watermarks;
  readonly #ready = new BehaviorSubject<boolean>(true);

  constructor(marks: Watermarks) {
    checkWatermarks(marks);
    this.#marks = { ...marks };
  }

  /** Current readiness. */
  get ready(): boolean {
    return this.#ready.value;
  }

  /**
   * The current readiness on subscription, then each edge; fit for `serverStream`'s demand
   * parameter. A late subscriber must learn "not ready" at once, hence the replayed state.
   */
  readonly ready$: Observable<boolean> = this.#ready.asObservable();

  /** Report the sink's buffered amount; returns the readiness after this reading. */
  update(level: number): boolean {
    const ready = this.#ready.value;
    const next = ready ? level <= this.#marks.highWater : level <= this.#marks.lowWater;
    if (next !== ready) this.#ready.next(next);
    return next;
  }

  /** The sink is gone: completes `ready$`. */
  close(): void {
    this.#ready.complete();
  }
}

export interface HoldWhilePausedOptions {
  /**
   * Most elements held while not ready; one more ends the stream with {@link SlowConsumerError}
   * rather than dropping anything. Defaults to unbounded.
   */
  maxPending?: number;
}

/**
 * Passes elements through while `demand$` is ready (true, or no value yet) and holds them in
 * order while it is false; `true` flushes them. The source keeps running: pair it with a source
 * that honours demand itself (`serverStream`) so that only the elements already in flight are
 * held. Source completion or error is delivered after the held elements, so nothing is lost or
 * reordered; it therefore waits for demand. An error of `demand$` ends the stream.
 */
export function holdWhilePaused<T>(
  demand$: Observable<boolean>,
  options: HoldWhilePausedOptions = {},
): MonoTypeOperatorFunction<T> {
  const maxPending = options.maxPending ?? Number.POSITIVE_INFINITY;
  if (!(maxPending >= 0)) throw new RangeError(`maxPending must be >= 0, got ${maxPending}`);
  return (source) =>
    new Observable<T>((subscriber) => {
      let ready = true;
      const pending: T[] = [];
      // How the source ended, kept until the held elements are out.
      let end: { error: unknown } | "complete" | undefined;

      const flush = (): void => {
        while (ready && pending.length > 0 && !subscriber.closed) subscriber.next(pending.shift() as T);
        if (!ready || pending.length > 0 || end === undefined) return;
        if (end === "complete") subscriber.complete();
        else subscriber.error(end.error);
      };

      const demandSub = demand$.subscribe({
        next: (value) => {
          ready = value;
          flush();
        },
        error: (err: unknown) => subscriber.error(err),
      });
      const sourceSub = source.subscribe({
        next: (value) => {
          if (ready && pending.length === 0) {
            subscriber.next(value);
            return;
          }
          if (pending.length >= maxPending) {
            subscriber.error(new SlowConsumerError(pending.length + 1, maxPending));
            return;
          }
          pending.push(value);
        },
        error: (error: unknown) => {
          end = { error };
          flush();
        },
        complete: () => {
          end = "complete";
          flush();
        },
      });
      return () => {
        sourceSub.unsubscribe();
        demandSub.unsubscribe();
      };
    });
}
