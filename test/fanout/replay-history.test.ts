import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type HeldElement, MAX_HELD_READERS, ReplayHistory } from "../../src/fanout/replay-history.js";

/** An element at `offset` of `size` bytes (8 unless a test needs otherwise). */
const element = (offset: number, checkpoint: boolean, size = 8): HeldElement => ({
  text: undefined,
  bytes: new Uint8Array(size),
  offset,
  checkpoint,
});
const tx = (offset: number, size?: number) => element(offset, false, size);
const cp = (offset: number) => element(offset, true);

/** Elements as `2` (a transaction) and `2c` (a checkpoint), to compare in one assertion. */
const labels = (elements: Iterable<HeldElement>) =>
  [...elements].map(({ offset, checkpoint }) => (checkpoint ? `${offset}c` : `${offset}`));
const held = (history: ReplayHistory) => labels(history.atOrAfter(Number.NEGATIVE_INFINITY));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}`);

/** A history of `bytes` (8 per element of the default size) and `heldBytes` while held. */
function history(bytes: number, heldBytes = 0, startAfter = 0): ReplayHistory {
  const created = new ReplayHistory({ bytes, heldBytes });
  created.startAfter(startAfter);
  return created;
}

const at = (offset: number, checkpoint = false) => ({ offset, checkpoint });

describe("ReplayHistory", () => {
  it("holds nothing when empty and covers exactly the readers at or after its start", () => {
    const empty = history(3 * 8, 0, 5);
    assert.deepEqual(held(empty), []);
    assert.deepEqual(labels(empty.atOrAfter(0)), []);
    assert.equal(empty.covers(at(4)), false, "before the start: a gap");
    assert.equal(empty.covers(at(5)), true);
    assert.equal(empty.covers(at(5, true)), true);
    assert.equal(empty.covers(at(6)), true, "ahead of the call: still to come");
  });

  it("keeps the latest elements up to its byte limit, dropping the oldest first", () => {
    const h = history(3 * 8);
    const moved: boolean[] = [];
    const after: string[][] = [];
    for (let offset = 1; offset <= 6; offset += 1) {
      moved.push(h.remember(tx(offset)));
      after.push(held(h));
    }
    assert.deepEqual(moved, [false, false, false, true, true, true], "the start moves once it is full");
    assert.deepEqual(after, [["1"], ["1", "2"], range(1, 3), range(2, 4), range(3, 5), range(4, 6)]);
    assert.equal(h.covers(at(3)), true);
    assert.equal(h.covers(at(2)), false, "3 was dropped: a reader at 2 would miss it");
  });

  it("holds as many elements as its bytes allow, whatever their count, and never fewer than the newest", () => {
    const h = history(64);
    for (let offset = 1; offset <= 8; offset += 1) h.remember(tx(offset));
    assert.deepEqual(held(h), range(1, 8), "8 elements of 8 bytes");
    h.remember(tx(9, 32));
    assert.deepEqual(held(h), range(5, 9), "32 bytes more: the 4 oldest went");
    assert.equal(h.remember(tx(10, 100)), true);
    assert.deepEqual(held(h), ["10"], "past the limit alone, it still stays");
    assert.equal(h.covers(at(9)), true, "a reader at the shared position misses nothing");
  });

  it("with a byte limit of 0 holds nothing, not even for a hold, and its start follows every element", () => {
    const h = history(0, 1000);
    h.hold({ last: 0 });
    assert.equal(h.remember(tx(1)), true);
    assert.equal(h.remember(tx(2)), true);
    assert.deepEqual(held(h), []);
    assert.equal(h.covers(at(1)), false);
    assert.equal(h.covers(at(2)), true);
  });

  it("keeps the elements from a held reader's offset on past the byte limit, up to the held bytes", () => {
    // Room for 5 elements of 8 bytes while held; 2 otherwise.
    const h = history(2 * 8, 5 * 8);
    h.hold({ last: 1 });
    const moved = [1, 2, 3, 4, 5].map((offset) => h.remember(tx(offset)));
    assert.deepEqual(moved, [false, false, false, false, false]);
    assert.deepEqual(held(h), range(1, 5));

    assert.equal(h.remember(tx(6)), true, "48 bytes: over, the oldest goes");
    assert.deepEqual(held(h), range(2, 6));
    assert.equal(h.covers(at(1)), true, "the reader at 1 still has everything after it");
    assert.equal(h.remember(tx(7)), true);
    assert.deepEqual(held(h), range(3, 7));
    assert.equal(h.covers(at(1)), false, "2 is gone: the held reader is no longer covered");
  });

  it("keeps the held bytes for each reader held for, up to MAX_HELD_READERS of them", () => {
    // 5 elements of 8 bytes per held reader; 2 otherwise.
    const h = history(2 * 8, 5 * 8);
    const slowest = { last: 1 };
    const releases = [h.hold(slowest), h.hold({ last: 3 })];
    for (let offset = 1; offset <= 10; offset += 1) h.remember(tx(offset));
    assert.deepEqual(held(h), range(1, 10), "two readers: 80 bytes");
    assert.equal(h.remember(tx(11)), true, "88 bytes: over, the oldest goes");
    assert.equal(h.covers(at(1)), true);
    assert.equal(h.remember(tx(12)), true);
    assert.equal(h.covers(at(1)), false, "2 is gone: the slowest is no longer covered");

    for (const release of releases) release();
    const crowd = history(2 * 8, 5 * 8);
    for (let i = 0; i < MAX_HELD_READERS + 3; i += 1) crowd.hold({ last: 0 });
    for (let offset = 1; offset <= 5 * MAX_HELD_READERS + 1; offset += 1) crowd.remember(tx(offset));
    assert.equal(held(crowd).length, 5 * MAX_HELD_READERS, "more readers than that hold no more");
    assert.equal(crowd.covers(at(0)), false);
  });

  it("counts bytes, not elements: one large element pushes the held ones out, and the newest always stays", () => {
    const h = history(8, 24);
    h.hold({ last: 0 });
    h.remember(tx(1));
    h.remember(tx(2));
    assert.deepEqual(held(h), ["1", "2"]);
    assert.equal(h.remember(tx(3, 100)), true);
    assert.deepEqual(held(h), ["3"], "over the held bytes alone: the newest stays");
  });

  it("drops the elements before the lowest held offset as if nothing were held", () => {
    const h = history(2 * 8, 1000);
    h.hold({ last: 3 });
    for (let offset = 1; offset <= 6; offset += 1) h.remember(tx(offset));
    assert.deepEqual(held(h), range(3, 6));
    assert.equal(h.covers(at(2)), true);
    assert.equal(h.covers(at(1)), false);
  });

  it("keeps holding while any hold is left, and trims back to its byte limit once the last ends", () => {
    const h = history(2 * 8, 1000);
    const first = h.hold({ last: 1 });
    const second = h.hold({ last: 1 });
    for (let offset = 1; offset <= 5; offset += 1) h.remember(tx(offset));
    first();
    first();
    h.remember(tx(6));
    assert.deepEqual(held(h), range(1, 6), "a second release of the first hold does not end the second");
    second();
    assert.equal(h.remember(tx(7)), true);
    assert.deepEqual(held(h), ["6", "7"], "every element past the limit goes at once");
  });

  it("follows the lowest of its holds, reading where a held reader stands when a hold ends", () => {
    const h = history(8, 1000);
    const reader = { last: 2 };
    h.hold(reader);
    h.hold({ last: 3 });
    const other = h.hold({ last: 4 });
    for (let offset = 1; offset <= 5; offset += 1) h.remember(tx(offset));
    assert.deepEqual(held(h), range(2, 5));

    reader.last = 4;
    h.remember(tx(6));
    assert.deepEqual(held(h), range(2, 6), "read as the hold started");
    other();
    h.remember(tx(7));
    assert.deepEqual(held(h), range(3, 7), "read again as another hold ended: now 4, and 3 is the lowest");
  });

  it("starts after a dropped checkpoint: a reader at its offset is covered only if it had that checkpoint", () => {
    const h = history(2 * 8, 0, 1);
    h.remember(tx(2));
    h.remember(cp(2));
    h.remember(tx(3));
    assert.deepEqual(held(h), ["2c", "3"]);
    assert.equal(h.covers(at(2)), true, "the checkpoint at 2 is still held");

    h.remember(tx(4));
    assert.deepEqual(held(h), ["3", "4"]);
    assert.equal(h.covers(at(2)), false, "the checkpoint at 2 is gone");
    assert.equal(h.covers(at(2, true)), true, "a reader that had it misses nothing");
    assert.equal(h.covers(at(3)), true);
  });

  it("still counts a dropped checkpoint at its start when a later element at that offset is dropped", () => {
    const h = history(8, 0, 1);
    h.remember(cp(2));
    h.remember(tx(2));
    h.remember(tx(3));
    assert.deepEqual(held(h), ["3"]);
    assert.equal(h.covers(at(2)), false);
    assert.equal(h.covers(at(2, true)), true);

    h.remember(tx(4));
    assert.equal(h.covers(at(3)), true, "a start at a new offset carries no checkpoint of its own");
  });

  it("looks up a position before, inside, between and after what it holds, every element at the offset included", () => {
    const h = history(4 * 8);
    for (const e of [tx(1), tx(2), cp(2), tx(3), tx(5)]) h.remember(e);
    assert.deepEqual(held(h), ["2", "2c", "3", "5"]);
    assert.deepEqual(labels(h.atOrAfter(0)), ["2", "2c", "3", "5"], "before: everything held");
    assert.deepEqual(labels(h.atOrAfter(2)), ["2", "2c", "3", "5"], "both elements at 2");
    assert.deepEqual(labels(h.atOrAfter(3)), ["3", "5"]);
    assert.deepEqual(labels(h.atOrAfter(4)), ["5"], "between two offsets: the next one on");
    assert.deepEqual(labels(h.atOrAfter(5)), ["5"]);
    assert.deepEqual(labels(h.atOrAfter(6)), [], "after the newest: nothing");
  });

  it("keeps its order and its lookups across many elements", () => {
    const h = history(3 * 8);
    for (let offset = 1; offset <= 1000; offset += 1) h.remember(tx(offset));
    assert.deepEqual(held(h), ["998", "999", "1000"]);
    assert.deepEqual(labels(h.atOrAfter(999)), ["999", "1000"]);
    assert.deepEqual(labels(h.atOrAfter(500)), ["998", "999", "1000"]);
    assert.equal(h.covers(at(997)), true);
    assert.equal(h.covers(at(996)), false);
  });

  it("lets go of every element and of their bytes when cleared", () => {
    const h = history(8, 16);
    h.hold({ last: 0 });
    h.remember(tx(1));
    h.remember(tx(2));
    h.clear();
    assert.deepEqual(held(h), []);
    h.remember(tx(3));
    h.remember(tx(4));
    assert.deepEqual(held(h), ["3", "4"], "16 bytes since the clear: within the held bytes");
  });
});
