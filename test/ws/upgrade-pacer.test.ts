import { deepStrictEqual } from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { type Arrival, UpgradePacer } from "../../src/ws/upgrade-pacer.js";

/** A pacer on a clock the test moves, with node's timers mocked to move with it. */
function pacerAt(perSecond: number, maxWaitMs: number) {
  let now = 1_000;
  const pacer = new UpgradePacer(perSecond, maxWaitMs, () => now);
  return {
    pacer,
    arrive: (): Arrival => pacer.arrive(),
    advance: (ms: number) => {
      now += ms;
      mock.timers.tick(ms);
    },
  };
}

describe("upgrade pacer", () => {
  it("takes a burst of 50 ms worth and what the pace upgrades within the longest wait, refuses the rest", () => {
    const { arrive } = pacerAt(100, 30); // 10 ms apart, a burst of 5, 30 ms of waiting: 3 more
    const arrivals = Array.from({ length: 10 }, () => arrive().kind);
    deepStrictEqual(arrivals, [...Array(8).fill("taken"), "refuse", "refuse"]);
  });

  it("tells the refused to come back one slot apart, in whole seconds, and a refusal takes no slot", (t) => {
    mock.timers.enable({ apis: ["setTimeout"] });
    t.after(() => mock.timers.reset());
    const { arrive, advance } = pacerAt(2, 0); // 500 ms apart, a burst of 1, no waiting
    deepStrictEqual(arrive(), { kind: "taken" });
    const told = Array.from({ length: 4 }, () => arrive());
    deepStrictEqual(told, [
      { kind: "refuse", retryAfterSeconds: 1 }, // its slot 1 s on
      { kind: "refuse", retryAfterSeconds: 2 }, // 1.5 s
      { kind: "refuse", retryAfterSeconds: 2 }, // 2 s
      { kind: "refuse", retryAfterSeconds: 3 }, // 2.5 s
    ]);
    // The first refused, back after its Retry-After, finds a slot: the refusals took none.
    advance(1_000);
    deepStrictEqual(arrive(), { kind: "taken" });
  });

  it("upgrades a burst at once and the rest at the pace, however many were admitted together", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const { pacer, advance } = pacerAt(100, 10_000); // a burst of 5, then one per 10 ms
      const upgraded: number[] = [];
      for (let i = 0; i < 12; i++) pacer.release(() => upgraded.push(i));
      deepStrictEqual(upgraded, [0, 1, 2, 3, 4]);
      // Served every 50 ms, a turn's worth together (5 at 100 a second).
      advance(30);
      deepStrictEqual(upgraded.length, 5);
      advance(20);
      deepStrictEqual(upgraded.length, 10);
      advance(50);
      deepStrictEqual(upgraded, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      deepStrictEqual(pacer.waiting, 0);
    } finally {
      mock.timers.reset();
    }
  });

  it("upgrades at once again after a quiet spell: the pace is a rate, not a count", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const { pacer, advance } = pacerAt(100, 10_000);
      let upgraded = 0;
      for (let i = 0; i < 5; i++) pacer.release(() => upgraded++);
      advance(60);
      for (let i = 0; i < 5; i++) pacer.release(() => upgraded++);
      deepStrictEqual(upgraded, 10);
      deepStrictEqual(pacer.waiting, 0);
    } finally {
      mock.timers.reset();
    }
  });
});
