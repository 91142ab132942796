import { deepStrictEqual, equal } from "node:assert/strict";
import { describe, it } from "node:test";
import { Subject } from "rxjs";
import { mapInOrder } from "../../src/streams/map-in-order.js";
import { testScheduler } from "./marbles.js";

const numbers = { a: 1, b: 2, c: 3, d: 4 };

/** A promise the test settles by hand: waits without timers. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Subscribes and records what arrives, for the tests whose function waits on a promise. */
function record<T>(source: Subject<number>, fn: (n: number) => T | undefined | Promise<T | undefined>) {
  const seen: (T | "complete" | { error: unknown })[] = [];
  source.pipe(mapInOrder(fn)).subscribe({
    next: (value) => seen.push(value),
    error: (error: unknown) => seen.push({ error }),
    complete: () => seen.push("complete"),
  });
  return seen;
}

describe("mapInOrder", () => {
  describe("synchronous function (marbles)", () => {
    it("maps each element in the frame it arrives and drops undefined results", () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const source = cold("a-b-c-d|", numbers);
        expectObservable(source.pipe(mapInOrder((n) => (n % 2 === 0 ? n * 10 : undefined)))).toBe(
          "--x---y|",
          {
            x: 20,
            y: 40,
          },
        );
      });
    });

    it("passes the source's completion and error through after the elements", () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const boom = new Error("upstream");
        expectObservable(cold<number>("---|").pipe(mapInOrder((n: number) => n))).toBe("---|");
        expectObservable(cold("a-b-#", numbers, boom).pipe(mapInOrder((n) => n * 10))).toBe(
          "x-y-#",
          { x: 10, y: 20 },
          boom,
        );
      });
    });

    it("errors with what the function throws and unsubscribes the source at once", () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const nope = new Error("nope");
        const source = cold("a-b-c|", numbers);
        const mapped = source.pipe(
          mapInOrder((n) => {
            if (n === 2) throw nope;
            return n;
          }),
        );
        expectObservable(mapped).toBe("a-#", numbers, nope);
        expectSubscriptions(source.subscriptions).toBe("^-!");
      });
    });

    it("unsubscribes the source when the consumer leaves (the gRPC call is cancelled)", () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold("a-b-c-d|", numbers);
        expectObservable(source.pipe(mapInOrder((n) => n)), "^--!").toBe("a-b", numbers);
        expectSubscriptions(source.subscriptions).toBe("^--!");
      });
    });
  });

  describe("function that sometimes waits", () => {
    it("holds the elements behind a waiting one and emits them in order once it settles", async () => {
      const source = new Subject<number>();
      const wait = deferred<number>();
      const seen = record(source, (n) => (n === 2 ? wait.promise : n * 10));
      for (const n of [1, 2, 3, 4]) source.next(n);
      source.complete();
      deepStrictEqual(seen, [10]);
      wait.resolve(20);
      await wait.promise;
      deepStrictEqual(seen, [10, 20, 30, 40, "complete"]);
    });

    it("drops a waited-for undefined and goes on", async () => {
      const source = new Subject<number>();
      const wait = deferred<number | undefined>();
      const seen = record(source, (n) => (n === 1 ? wait.promise : n));
      source.next(1);
      source.next(2);
      wait.resolve(undefined);
      await wait.promise;
      deepStrictEqual(seen, [2]);
    });

    it("delivers the elements received before a source error, then the error", async () => {
      const source = new Subject<number>();
      const wait = deferred<number>();
      const seen = record(source, (n) => (n === 1 ? wait.promise : n));
      const boom = new Error("boom");
      source.next(1);
      source.next(2);
      source.error(boom);
      deepStrictEqual(seen, []);
      wait.resolve(1);
      await wait.promise;
      deepStrictEqual(seen, [1, 2, { error: boom }]);
    });

    it("errors with the rejection, emits nothing after it and leaves the source", async () => {
      const source = new Subject<number>();
      const wait = deferred<number>();
      const seen = record(source, (n) => (n === 2 ? wait.promise : n));
      const nope = new Error("nope");
      source.next(1);
      source.next(2);
      source.next(3);
      wait.reject(nope);
      await wait.promise.catch(() => undefined);
      deepStrictEqual(seen, [1, { error: nope }]);
      equal(source.observed, false);
    });
  });
});
