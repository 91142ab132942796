import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { type Pace, UpgradePacer } from "../../src/ws/upgrade-pacer.js";

/** A pacer on a clock the test moves. */
function pacerAt(perSecond: number, maxWaitMs: number) {
  let now = 1_000;
  const pacer = new UpgradePacer(perSecond, maxWaitMs, () => now);
  return {
    take: (): Pace => pacer.take(),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("upgrade pacer", () => {
  it("lets a burst of 50 ms worth through at once, then spaces the rest one interval apart", () => {
    const pacer = pacerAt(100, 1_000); // 10 ms apart, a burst of 5
    const paces = Array.from({ length: 8 }, () => pacer.take());
    deepStrictEqual(paces, [
      { kind: "now" },
      { kind: "now" },
      { kind: "now" },
      { kind: "now" },
      { kind: "now" },
      { kind: "wait", ms: 10 },
      { kind: "wait", ms: 20 },
      { kind: "wait", ms: 30 },
    ]);
  });

  it("refuses with Retry-After once the wait would pass the bound, and a refusal takes no slot", () => {
    const pacer = pacerAt(10, 250); // 100 ms apart, a burst of 1 (50 ms of 10/s rounds down)
    deepStrictEqual(pacer.take(), { kind: "now" });
    deepStrictEqual(pacer.take(), { kind: "wait", ms: 100 });
    deepStrictEqual(pacer.take(), { kind: "wait", ms: 200 });
    deepStrictEqual(pacer.take(), { kind: "refuse", retryAfterSeconds: 1 });
    deepStrictEqual(pacer.take(), { kind: "refuse", retryAfterSeconds: 1 });
    // The refused took nothing: 100 ms on, the next slot is the one after the two waiting.
    pacer.advance(100);
    deepStrictEqual(pacer.take(), { kind: "wait", ms: 200 });
  });

  it("says in whole seconds how long a client should stay away, from the queue ahead of it", () => {
    const pacer = pacerAt(1, 0); // one a second, no waiting
    deepStrictEqual(pacer.take(), { kind: "now" });
    deepStrictEqual(pacer.take(), { kind: "refuse", retryAfterSeconds: 1 });
    pacer.advance(1_000);
    deepStrictEqual(pacer.take(), { kind: "now" });
  });

  it("admits at once again after a quiet spell: the pace is a rate, not a count", () => {
    const pacer = pacerAt(100, 0);
    for (let i = 0; i < 5; i++) deepStrictEqual(pacer.take(), { kind: "now" });
    deepStrictEqual(pacer.take().kind, "refuse");
    pacer.advance(60);
    for (let i = 0; i < 5; i++) deepStrictEqual(pacer.take(), { kind: "now" });
  });
});
