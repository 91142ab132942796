import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SharedQuotas, sharedQuotaBuffer } from "../../src/limits/shared-quotas.js";
import { hammer } from "./quota-hammer.js";

/** A table on a clock the test moves. */
function table(slots = 64): { quotas: SharedQuotas; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  return { quotas: new SharedQuotas(sharedQuotaBuffer(slots), () => clock.now), clock };
}

describe("SharedQuotas counters", () => {
  it("gives `limit` slots of a key, refuses the next, and gives one again once released", () => {
    const { quotas } = table();
    for (let i = 0; i < 3; i++) assert.equal(quotas.acquire("a", 3), undefined);
    assert.deepEqual(quotas.acquire("a", 3), { reason: "limit", retryAfterMs: undefined });
    assert.equal(quotas.count("a"), 3);
    quotas.release("a");
    assert.equal(quotas.acquire("a", 3), undefined);
    assert.deepEqual(quotas.acquire("a", 3), { reason: "limit", retryAfterMs: undefined });
  });

  it("counts each key on its own", () => {
    const { quotas } = table();
    assert.equal(quotas.acquire("a", 1), undefined);
    assert.equal(quotas.acquire("b", 1), undefined);
    assert.equal(quotas.acquire("a", 1)?.reason, "limit");
    assert.equal(quotas.count("b"), 1);
  });

  it("frees a key's slot when its count is back to 0", () => {
    const { quotas } = table();
    quotas.acquire("a", 5);
    quotas.acquire("a", 5);
    assert.equal(quotas.size(), 1);
    quotas.release("a");
    quotas.release("a");
    assert.equal(quotas.size(), 0);
    assert.equal(quotas.count("a"), 0);
  });

  it("keeps every key's count through inserts and removals that shift slots (against a Map)", () => {
    const { quotas } = table(64);
    const model = new Map<string, number>();
    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let step = 0; step < 20_000; step++) {
      const key = `k${random(60)}`;
      const held = model.get(key) ?? 0;
      if (random(2) === 0 && held > 0) {
        quotas.release(key);
        if (held === 1) model.delete(key);
        else model.set(key, held - 1);
      } else if (quotas.acquire(key, 4) === undefined) {
        model.set(key, held + 1);
      } else {
        // Refused: at its limit, or the table (48 keys of 64 slots) is full.
        assert.ok(held === 4 || model.size === 48, `refused ${key} at ${held} with ${model.size} keys`);
      }
      if (step % 97 === 0) for (const [k, n] of model) assert.equal(quotas.count(k), n, k);
    }
    assert.equal(quotas.size(), model.size);
  });

  it("refuses a new key with `table-full` when 3/4 of the slots are held, and takes it once one is freed", () => {
    const { quotas } = table(4);
    for (const key of ["a", "b", "c"]) assert.equal(quotas.acquire(key, 1), undefined);
    assert.deepEqual(quotas.acquire("d", 1), { reason: "table-full", retryAfterMs: undefined });
    // Keys already held work as before.
    assert.equal(quotas.acquire("a", 2), undefined);
    quotas.release("b");
    assert.equal(quotas.acquire("d", 1), undefined);
  });
});

describe("SharedQuotas token buckets", () => {
  it("gives `burst` tokens at once, then one per 1/rate seconds, and says when the next is back", () => {
    const { quotas, clock } = table();
    for (let i = 0; i < 3; i++) assert.equal(quotas.take("u", 2, 3), undefined, `token ${i}`);
    assert.deepEqual(quotas.take("u", 2, 3), { reason: "limit", retryAfterMs: 500 });
    clock.now += 200;
    assert.deepEqual(quotas.take("u", 2, 3), { reason: "limit", retryAfterMs: 300 });
    clock.now += 300;
    assert.equal(quotas.take("u", 2, 3), undefined);
    assert.equal(quotas.take("u", 2, 3)?.reason, "limit");
    // Refilled to its burst, and no further.
    clock.now += 60_000;
    for (let i = 0; i < 3; i++) assert.equal(quotas.take("u", 2, 3), undefined);
    assert.equal(quotas.take("u", 2, 3)?.reason, "limit");
  });

  it("empties no bucket further when the clock is set back", () => {
    const { quotas, clock } = table();
    quotas.take("u", 1, 2);
    quotas.take("u", 1, 2);
    clock.now -= 3_600_000;
    assert.deepEqual(quotas.take("u", 1, 2), { reason: "limit", retryAfterMs: 1000 });
  });

  it("makes room in a full table by forgetting full buckets", () => {
    const { quotas, clock } = table(4);
    assert.equal(quotas.take("x", 10, 1), undefined);
    assert.equal(quotas.acquire("a", 1), undefined);
    assert.equal(quotas.acquire("b", 1), undefined);
    assert.equal(quotas.acquire("c", 1)?.reason, "table-full");
    clock.now += 100;
    assert.equal(quotas.acquire("c", 1), undefined);
    assert.equal(quotas.size(), 3);
  });
});

describe("SharedQuotas across worker threads", () => {
  it("loses no update when four threads acquire and release one key at once", async () => {
    const buffer = sharedQuotaBuffer(64);
    const granted = await Promise.all(
      Array.from({ length: 4 }, () =>
        hammer({ buffer, key: "k", limit: 1_000_000, rounds: 20_000, release: true }),
      ),
    );
    assert.deepEqual(granted, [20_000, 20_000, 20_000, 20_000]);
    const quotas = new SharedQuotas(buffer);
    assert.equal(quotas.count("k"), 0);
    assert.equal(quotas.size(), 0);
  });

  it("gives exactly `limit` slots of one key to four threads racing for them", async () => {
    const buffer = sharedQuotaBuffer(64);
    const granted = await Promise.all(
      Array.from({ length: 4 }, () =>
        hammer({ buffer, key: "k", limit: 5_000, rounds: 5_000, release: false }),
      ),
    );
    assert.equal(
      granted.reduce((a, b) => a + b, 0),
      5_000,
    );
    assert.equal(new SharedQuotas(buffer).count("k"), 5_000);
  });
});
