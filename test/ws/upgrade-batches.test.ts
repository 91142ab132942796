import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { UpgradeBatches } from "../../src/ws/upgrade-batches.js";

describe("upgrade batches", () => {
  it("runs at most a batch an event-loop turn, in the order queued, the rest in the turns after", async () => {
    const batches = new UpgradeBatches(3);
    const ran: number[] = [];
    for (let i = 0; i < 7; i++) batches.run(() => ran.push(i));
    // Nothing before the turn's check phase: an admission's answer never upgrades in its own callback.
    deepStrictEqual([...ran], []);
    await nextTurn();
    deepStrictEqual([...ran], [0, 1, 2]);
    await nextTurn();
    deepStrictEqual([...ran], [0, 1, 2, 3, 4, 5]);
    await nextTurn();
    deepStrictEqual([...ran], [0, 1, 2, 3, 4, 5, 6]);
    strictEqual(batches.waiting, 0);
    // Idle, then one more: its own batch at the next turn.
    batches.run(() => ran.push(7));
    await nextTurn();
    strictEqual(ran.at(-1), 7);
  });

  it("queues what a batch's upgrades queue behind the rest", async () => {
    const batches = new UpgradeBatches(2);
    const ran: string[] = [];
    batches.run(() => {
      ran.push("a");
      batches.run(() => ran.push("c"));
    });
    batches.run(() => ran.push("b"));
    await nextTurn();
    deepStrictEqual([...ran], ["a", "b"]);
    await nextTurn();
    deepStrictEqual([...ran], ["a", "b", "c"]);
  });
});
