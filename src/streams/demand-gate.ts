import { BehaviorSubject, type Observable } from "rxjs";

/*
 * Flow control for a push-only library. RxJS cannot ask a source to slow down, so demand
 * travels on a second channel, `Observable<boolean>` (true: ready, false: not ready), from the
 * sink back to the source (`serverStream` pauses its gRPC call on false). The gate here turns
 * a sink's buffer level into that signal.
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
 * slow-consumer status: not ready once the level crosses above `highWater`, ready again once it
 * drops to `lowWater` or below, nothing in between (the gap keeps a level hovering around one
 * mark from toggling the gRPC call on every frame). For sinks that poll a buffer (a WebSocket's
 * `getBufferedAmount()` after each send and on `drain`). Pure state: no timers, no I/O.
 */
export class DemandGate {
  // The marks as numbers of its own, not a copy of the object: a gate per subscriber.
  readonly #highWater: number;
  readonly #lowWater: number;
  readonly #ready = new BehaviorSubject<boolean>(true);

  constructor(marks: Watermarks) {
    checkWatermarks(marks);
    this.#highWater = marks.highWater;
    this.#lowWater = marks.lowWater;
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
    const next = ready ? level <= this.#highWater : level <= this.#lowWater;
    if (next !== ready) this.#ready.next(next);
    return next;
  }

  /** The sink is gone: completes `ready$`. */
  close(): void {
    this.#ready.complete();
  }
}
