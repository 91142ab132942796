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
  it("lets a burst of 50 ms worth through at once, then the rest at the pace, on 20 ms turns", () => {
    const pacer = pacerAt(100, 1_000); // 10 ms apart, a burst of 5
    const paces = Array.from({ length: 9 }, () => pacer.take());
    deepStrictEqual(paces, [
      { kind: "now" },
      { kind: "now" },
      { kind: "now" },
      { kind: "now" },
      { kind: "now" },
      // Slots 10 and 20 ms on go on the 20 ms turn together, 30 and 40 on the 40 ms one.
      { kind: "wait", ms: 20 },
      { kind: "wait", ms: 20 },
      { kind: "wait", ms: 40 },
      { kind: "wait", ms: 40 },
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

  it("tells the refused to come back one slot apart, in whole seconds, so they return at the pace", () => {
    const pacer = pacerAt(2, 0); // 500 ms apart, no waiting
    deepStrictEqual(pacer.take(), { kind: "now" });
    const told = Array.from({ length: 4 }, () => pacer.take());
    deepStrictEqual(told, [
      { kind: "refuse", retryAfterSeconds: 1 }, // its slot 1 s on
      { kind: "refuse", retryAfterSeconds: 2 }, // 1.5 s
      { kind: "refuse", retryAfterSeconds: 2 }, // 2 s
      { kind: "refuse", retryAfterSeconds: 3 }, // 2.5 s
    ]);
    // The first refused, back after its Retry-After, finds its slot free.
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
