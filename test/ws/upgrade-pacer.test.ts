import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { type Pace, UpgradePacer } from "../../src/ws/upgrade-pacer.js";

/** A pacer on a clock the test moves. */
function pacerAt(perSecond: number, maxWaitMs: number) {
  let now = 1_000;
  const pacer = new UpgradePacer(perSecond, maxWaitMs, () => now);
  return {
    take: (group?: string): Pace => pacer.take(group),
    groups: () => pacer.groups,
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

  it("puts a token's upgrades in the turn its first one waits for, a turn's worth at most, each taking a slot", () => {
    const pacer = pacerAt(100, 10_000); // 10 ms apart, a burst of 5, 2 a turn (20 ms)
    for (let i = 0; i < 5; i++) pacer.take("a");
    deepStrictEqual(pacer.take("a"), { kind: "wait", ms: 20 }); // slot 10 ms on, its turn at 20
    deepStrictEqual(pacer.take("b"), { kind: "wait", ms: 20 }); // slot 20 ms on
    deepStrictEqual(pacer.take("c"), { kind: "wait", ms: 40 }); // slot 30 ms on
    // Later upgrades of a and c join their turns; a's third is past a turn's worth: a turn of its own.
    deepStrictEqual(pacer.take("a"), { kind: "wait", ms: 20 });
    deepStrictEqual(pacer.take("c"), { kind: "wait", ms: 40 });
    deepStrictEqual(pacer.take("a"), { kind: "wait", ms: 60 }); // slot 60 ms on
    // Joined or not, each took a slot: the next one's is 70 ms on (the 80 ms turn).
    deepStrictEqual(pacer.take("d"), { kind: "wait", ms: 80 });
  });

  it("forgets a token's turn once it came: the groups it holds are the upgrades waiting", () => {
    const pacer = pacerAt(100, 10_000);
    for (let i = 0; i < 5; i++) pacer.take("a");
    pacer.take("a");
    pacer.take("b");
    deepStrictEqual(pacer.groups(), 2);
    pacer.advance(20);
    pacer.take("c");
    // a's and b's turn came; c waits for its own.
    deepStrictEqual(pacer.groups(), 1);
  });
});
