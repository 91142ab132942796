import { deepStrictEqual, throws } from "node:assert/strict";
import { describe, it } from "node:test";
import { DemandGate } from "../../src/streams/demand-gate.js";

describe("DemandGate", () => {
  it("replays its state to a subscriber, then emits edges only", () => {
    const gate = new DemandGate({ highWater: 100, lowWater: 10 });
    const seen: boolean[] = [];
    gate.ready$.subscribe({ next: (v) => seen.push(v) });
    const results = [50, 150, 200, 50, 10, 120].map((level) => gate.update(level));
    gate.close();
    deepStrictEqual(results, [true, false, false, false, true, false]);
    deepStrictEqual(seen, [true, false, true, false]);
  });

  it("tells a late subscriber that it is not ready", () => {
    const gate = new DemandGate({ highWater: 1, lowWater: 0 });
    gate.update(5);
    const seen: boolean[] = [];
    gate.ready$.subscribe({ next: (v) => seen.push(v) });
    deepStrictEqual([gate.ready, seen], [false, [false]]);
  });

  it("tells every listener each edge, none after it left, and completes each at the close (a later one at once)", () => {
    const gate = new DemandGate({ highWater: 1, lowWater: 0 });
    const seen: string[] = [];
    const listen = (name: string) =>
      gate.ready$.subscribe({
        next: (ready) => seen.push(`${name} ${ready}`),
        complete: () => seen.push(`${name} complete`),
      });
    const call = listen("call");
    // One that leaves while the edge is told: the other still hears it, and it hears no more.
    let member: { unsubscribe(): void } | undefined;
    member = gate.ready$.subscribe({
      next: (ready) => {
        seen.push(`member ${ready}`);
        if (!ready) member?.unsubscribe();
      },
    });
    gate.update(5);
    gate.update(0);
    call.unsubscribe();
    const last = listen("last");
    gate.update(5);
    gate.close();
    gate.update(0);
    listen("late");
    deepStrictEqual(seen, [
      "call true",
      "member true",
      "call false",
      "member false",
      "call true",
      "last true",
      "last false",
      "last complete",
      "late complete",
    ]);
    last.unsubscribe();
  });

  it("rejects a low-water mark above the high-water mark", () => {
    throws(() => new DemandGate({ highWater: 1, lowWater: 2 }), RangeError);
  });
});
