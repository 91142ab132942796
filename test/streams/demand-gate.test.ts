import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import { DemandGate } from "../../src/streams/demand-gate.js";

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

  it("rejects a low-water mark above the high-water mark", () => {
    throws(() => new DemandGate({ highWater: 1, lowWater: 2 }), RangeError);
  });
});
