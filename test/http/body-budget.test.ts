import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BodyBudget } from "../../src/http/body-budget.js";

const settled = async (promise: Promise<void>): Promise<boolean> => {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe("BodyBudget", () => {
  it("grants within its capacity at once and makes the rest wait in arrival order", async () => {
    const budget = new BodyBudget(100);
    const a = budget.acquire(60);
    const b = budget.acquire(60);
    const c = budget.acquire(10);
    assert.equal(await settled(a.granted), true);
    assert.equal(await settled(b.granted), false);
    assert.equal(await settled(c.granted), false, "no overtaking: the small one waits behind the large");
    a.release();
    assert.equal(await settled(b.granted), true);
    assert.equal(await settled(c.granted), true);
  });

  it("withdraws a waiting request on release, and lets the next one through", async () => {
    const budget = new BodyBudget(100);
    const a = budget.acquire(100);
    const b = budget.acquire(100);
    const c = budget.acquire(50);
    b.release();
    a.release();
    assert.equal(await settled(c.granted), true);
    assert.equal(await settled(b.granted), false);
    c.release();
    c.release();
    const d = budget.acquire(100);
    assert.equal(await settled(d.granted), true, "a double release gives nothing back twice");
    const e = budget.acquire(1);
    assert.equal(await settled(e.granted), false);
  });

  it("grants a request larger than its capacity as the whole capacity", async () => {
    const budget = new BodyBudget(10);
    assert.equal(await settled(budget.acquire(1_000).granted), true);
  });
});
