import type { Observer, Subscribable, Unsubscribable } from "rxjs";
import { Relay } from "./relay.js";

/*
 * Flow control for a push-only library. RxJS cannot ask a source to slow down, so demand
 * travels on a second channel, a `Subscribable<boolean>` (true: ready, false: not ready), from
 * the sink back to the source (`serverStream` pauses its gRPC call on false). The gate here turns
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
  readonly #readiness = new Readiness();

  constructor(marks: Watermarks) {
    checkWatermarks(marks);
    this.#highWater = marks.highWater;
    this.#lowWater = marks.lowWater;
  }

  /** Current readiness. */
  get ready(): boolean {
    return this.#readiness.value;
  }

  /**
   * The current readiness on subscription, then each edge; fit for `serverStream`'s demand
   * parameter. A late subscriber must learn "not ready" at once, hence the replayed state.
   */
  get ready$(): Subscribable<boolean> {
    return this.#readiness;
  }

  /** Report the sink's buffered amount; returns the readiness after this reading. */
  update(level: number): boolean {
    const ready = this.#readiness.value;
    const next = ready ? level <= this.#highWater : level <= this.#lowWater;
    if (next !== ready) this.#readiness.set(next);
    return next;
  }

  /** The sink is gone: completes `ready$`. */
  close(): void {
    this.#readiness.complete();
  }
}

/**
 * What a BehaviorSubject of booleans did for the gate, at the cost of one small object per
 * listener (a Relay's): a Subject's subscription cost its listener (a fan-out member, a gRPC call)
 * a SafeSubscriber, its observer wrapper, a teardown Subscription and closure, and a finalizers
 * array of 17 slots, some 400 bytes kept by every subscriber of a reconnect storm. Tells a new
 * listener the current value at once, then every change, in order; completes once (a listener
 * that comes later is told so at once); never errors.
 */
class Readiness implements Subscribable<boolean> {
  readonly #relay = new Relay<boolean>();
  #value = true;

  get value(): boolean {
    return this.#value;
  }

  subscribe(observer: Partial<Observer<boolean>>): Unsubscribable {
    const listener = this.#relay.subscribe(observer);
    if (!this.#relay.completed) observer.next?.(this.#value);
    return listener;
  }

  set(value: boolean): void {
    this.#value = value;
    this.#relay.next(value);
  }

  complete(): void {
    this.#relay.complete();
  }
}
