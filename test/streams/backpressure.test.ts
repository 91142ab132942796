import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import { DemandGate, demandFromLevel, holdWhilePaused } from "../../src/streams/backpressure.js";
import { SlowConsumerError } from "../../src/streams/errors.js";
import { testScheduler } from "./marbles.js";

const bool = { t: true, f: false };

describe("demandFromLevel", () => {
  it("emits false once above high-water and true once at or below low-water", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const levels = cold("a-b-c-d-e-f-g-h|", { a: 5, b: 11, c: 15, d: 5, e: 2, f: 1, g: 12, h: 10 });
      expectObservable(levels.pipe(demandFromLevel({ highWater: 10, lowWater: 2 }))).toBe(
        "--f-----t---f--|",
        bool,
      );
    });
  });

  it("emits nothing while the level stays at or under high-water", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const levels = cold("a-b-c|", { a: 0, b: 10, c: 3 });
      expectObservable(levels.pipe(demandFromLevel({ highWater: 10, lowWater: 2 }))).toBe("-----|", bool);
    });
  });

  it("rejects a low-water mark above the high-water mark", () => {
    throws(() => demandFromLevel({ highWater: 1, lowWater: 2 }), RangeError);
  });
});

describe("DemandGate", () => {
  it("replays its state to a subscriber, then emits edges only", () => {
    const gate = new DemandGate({ highWater: 100, lowWater: 10 });
    const seen: boolean[] = [];
    gate.ready$.subscribe((v) => seen.push(v));
    const results = [50, 150, 200, 50, 10, 120].map((level) => gate.update(level));
    gate.close();
    deepStrictEqual(results, [true, false, false, false, true, false]);
    deepStrictEqual(seen, [true, false, true, false]);
  });

  it("tells a late subscriber that it is not ready", () => {
    const gate = new DemandGate({ highWater: 1, lowWater: 0 });
    gate.update(5);
    const seen: boolean[] = [];
    gate.ready$.subscribe((v) => seen.push(v));
    deepStrictEqual([gate.ready, seen], [false, [false]]);
  });
});

describe("holdWhilePaused", () => {
  it("holds elements in order while not ready and flushes them on ready", () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const demand = hot("-f----t", bool);
      const source = cold("a-b-c-----d-|");
      expectObservable(source.pipe(holdWhilePaused(demand))).toBe("a-----(bc)d-|");
    });
  });

  it("delivers completion only after the held elements", () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const demand = hot("-f----t", bool);
      expectObservable(cold("a-b|").pipe(holdWhilePaused(demand))).toBe("a-----(b|)");
    });
  });

  it("delivers a source error only after the held elements", () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const boom = new Error("boom");
      const demand = hot("-f--t", bool);
      expectObservable(cold("a-b#", undefined, boom).pipe(holdWhilePaused(demand))).toBe(
        "a---(b#)",
        undefined,
        boom,
      );
    });
  });

  it("ends with SlowConsumerError instead of holding more than maxPending", () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const demand = hot("-f", bool);
      const source = cold("a-b-c-d|");
      expectObservable(source.pipe(holdWhilePaused(demand, { maxPending: 1 }))).toBe(
        "a---#",
        undefined,
        new SlowConsumerError(2, 1),
      );
      expectSubscriptions(source.subscriptions).toBe("^---!");
    });
  });

  it("ends when the demand signal errors", () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const lost = new Error("socket gone");
      const demand = hot("---#", bool, lost);
      expectObservable(cold("a-b-c-d|").pipe(holdWhilePaused(demand))).toBe("a-b#", undefined, lost);
    });
  });
});
