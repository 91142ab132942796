import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import { IdleTimeoutError } from "../../src/streams/errors.js";
import { idleTimeout, idleTimeoutError } from "../../src/streams/idleTimeout.js";
import { testScheduler } from "./marbles.js";

describe("idleTimeout", () => {
  it("completes when nothing arrives within ms of subscription", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-------a|");
      expectObservable(source.pipe(idleTimeout(5))).toBe("-----|");
      expectSubscriptions(source.subscriptions).toBe("^----!");
    });
  });

  it("restarts the wait at each element and returns what was collected on a gap", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b------c|");
      expectObservable(source.pipe(idleTimeout(3))).toBe("a-b--|");
      expectSubscriptions(source.subscriptions).toBe("^----!");
    });
  });

  it("passes the source's own completion through when it comes in time", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b-|").pipe(idleTimeout(3))).toBe("a-b-|");
    });
  });

  it("passes source errors through unchanged", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const boom = new Error("boom");
      expectObservable(cold("a-#", undefined, boom).pipe(idleTimeout(3))).toBe("a-#", undefined, boom);
    });
  });

  it("tells onIdle why the stream ended, and only for an idle end", () => {
    const idle: IdleTimeoutError[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const onIdle = (e: IdleTimeoutError) => idle.push(e);
      expectObservable(cold("a-b-----|").pipe(idleTimeout(3, { onIdle }))).toBe("a-b--|");
      expectObservable(cold("a|").pipe(idleTimeout(3, { onIdle }))).toBe("a|");
    });
    deepStrictEqual(
      idle.map((e) => ({ reason: e.reason, ms: e.ms, seen: e.seen })),
      [{ reason: "idle", ms: 3, seen: 2 }],
    );
  });

  it("idleTimeoutError errors with a typed IdleTimeoutError and unsubscribes the source", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a--------b|");
      expectObservable(source.pipe(idleTimeoutError(4))).toBe("a---#", undefined, new IdleTimeoutError(4, 1));
      expectSubscriptions(source.subscriptions).toBe("^---!");
    });
  });

  it("rejects a negative wait", () => {
    throws(() => idleTimeout(-1), RangeError);
  });
});
