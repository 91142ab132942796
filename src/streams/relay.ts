import type { Observer, Subscribable, Unsubscribable } from "rxjs";

/**
 * A Subject for events that are rare but must be listened for from the start (a subscriber's
 * token renewals): each listener costs one small object, where a Subject's subscription costs a
 * SafeSubscriber, its observer wrappers, a Subscription, its teardown closure and two arrays
 * grown to 16 slots (some 700 bytes retained per listener, for every subscriber of a reconnect
 * storm, that nearly all never renew; or a sink's readiness, src/streams/demand-gate.ts). No
 * errors: it relays values, in order, to the listeners there when each is sent, until it is
 * completed (once: every listener is told, and one that comes later is told at once).
 */
export class Relay<T> implements Subscribable<T> {
  /** The usual case, one listener, needs no array. */
  #first: RelayListener<T> | undefined;
  #more: RelayListener<T>[] | undefined;
  #completed = false;

  subscribe(observer: Partial<Observer<T>>): Unsubscribable {
    const listener = new RelayListener(this, observer);
    if (this.#completed) listener.complete();
    else if (this.#first === undefined && this.#more === undefined) this.#first = listener;
    else if (this.#more === undefined) this.#more = [listener];
    else this.#more.push(listener);
    return listener;
  }

  /** `value` to every listener subscribed now (one that unsubscribes meanwhile is skipped). */
  next(value: T): void {
    if (this.#more === undefined) {
      this.#first?.tell(value);
      return;
    }
    for (const listener of this.#listeners()) listener.tell(value);
  }

  /** Tells every listener the end, and forgets them; nothing is relayed after it. */
  complete(): void {
    if (this.#completed) return;
    this.#completed = true;
    const listeners = this.#listeners();
    this.#first = undefined;
    this.#more = undefined;
    for (const listener of listeners) listener.complete();
  }

  get completed(): boolean {
    return this.#completed;
  }

  /** Listeners subscribed now, for tests. */
  get listeners(): number {
    return (this.#first === undefined ? 0 : 1) + (this.#more?.length ?? 0);
  }

  /** @internal */
  remove(listener: RelayListener<T>): void {
    if (this.#first === listener) this.#first = undefined;
    else if (this.#more !== undefined) {
      const at = this.#more.indexOf(listener);
      if (at >= 0) this.#more.splice(at, 1);
    }
    if (this.#more?.length === 0) this.#more = undefined;
  }

  /** The listeners now, a copy (one may leave while they are told). */
  #listeners(): RelayListener<T>[] {
    if (this.#more === undefined) return this.#first === undefined ? [] : [this.#first];
    return this.#first === undefined ? [...this.#more] : [this.#first, ...this.#more];
  }
}

/** One subscription of a relay: its own Unsubscribable. */
class RelayListener<T> implements Unsubscribable {
  #relay: Relay<T> | undefined;
  readonly #observer: Partial<Observer<T>>;

  constructor(relay: Relay<T>, observer: Partial<Observer<T>>) {
    this.#relay = relay;
    this.#observer = observer;
  }

  tell(value: T): void {
    if (this.#relay !== undefined) this.#observer.next?.(value);
  }

  complete(): void {
    if (this.#relay === undefined) return;
    this.#relay = undefined;
    this.#observer.complete?.();
  }

  unsubscribe(): void {
    this.#relay?.remove(this);
    this.#relay = undefined;
  }
}
