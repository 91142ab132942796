import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { Observable } from "rxjs";
import { Relay } from "../../src/streams/relay.js";

describe("Relay", () => {
  it("relays values in order to its one listener, and none after it unsubscribed", () => {
    const relay = new Relay<string>();
    const seen: string[] = [];
    const listener = relay.subscribe({ next: (v) => seen.push(v) });
    relay.next("a");
    relay.next("b");
    listener.unsubscribe();
    relay.next("c");
    deepStrictEqual([seen, relay.listeners], [["a", "b"], 0]);
  });

  it("relays each value to every listener there when it is sent", () => {
    const relay = new Relay<number>();
    const seen: string[] = [];
    relay.next(0);
    const first = relay.subscribe({ next: (v) => seen.push(`first ${v}`) });
    relay.subscribe({ next: (v) => seen.push(`second ${v}`) });
    relay.next(1);
    first.unsubscribe();
    relay.next(2);
    relay.subscribe({ next: (v) => seen.push(`third ${v}`) });
    relay.next(3);
    deepStrictEqual(seen, ["first 1", "second 1", "second 2", "second 3", "third 3"]);
  });

  it("skips a listener that another one unsubscribes while a value is being relayed", () => {
    const relay = new Relay<number>();
    const seen: string[] = [];
    let second: { unsubscribe(): void } | undefined;
    relay.subscribe({
      next: (v) => {
        seen.push(`first ${v}`);
        second?.unsubscribe();
      },
    });
    second = relay.subscribe({ next: (v) => seen.push(`second ${v}`) });
    relay.next(1);
    relay.next(2);
    deepStrictEqual([seen, relay.listeners], [["first 1", "first 2"], 1]);
  });

  it("unsubscribing twice removes its listener once", () => {
    const relay = new Relay<number>();
    const first = relay.subscribe({ next: () => undefined });
    relay.subscribe({ next: () => undefined });
    first.unsubscribe();
    first.unsubscribe();
    deepStrictEqual(relay.listeners, 1);
  });

  it("completes every listener once, relays nothing after, and completes a later one at once", () => {
    const relay = new Relay<number>();
    const seen: string[] = [];
    const listen = (name: string) =>
      relay.subscribe({
        next: (v) => seen.push(`${name} ${v}`),
        complete: () => seen.push(`${name} complete`),
      });
    listen("first");
    listen("second");
    relay.next(1);
    relay.complete();
    relay.complete();
    relay.next(2);
    listen("late");
    deepStrictEqual(
      [seen, relay.listeners, relay.completed],
      [["first 1", "second 1", "first complete", "second complete", "late complete"], 0, true],
    );
  });

  it("feeds an Observable made over it, until its subscriber unsubscribes", () => {
    const relay = new Relay<string>();
    const seen: string[] = [];
    const subscription = new Observable<string>((subscriber) => relay.subscribe(subscriber)).subscribe((v) =>
      seen.push(v),
    );
    relay.next("a");
    subscription.unsubscribe();
    relay.next("b");
    deepStrictEqual([seen, relay.listeners], [["a"], 0]);
  });
});
