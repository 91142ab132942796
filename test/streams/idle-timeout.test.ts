import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import type { IdleTimeoutError } from "../../src/errors/index.js";
import { idleTimeout } from "../../src/streams/idle-timeout.js";
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

  it("rejects a negative wait", () => {
    throws(() => idleTimeout(-1), RangeError);
  });
});
