import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { sharedExpiryTimer } from "../../src/jwt/expiry-timer.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A subscriber whose expiry pushes `name`. */
const expiring = (expired: unknown[], name: unknown) => ({ expired: () => expired.push(name) });
const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

describe("sharedExpiryTimer", () => {
  it("holds one timer for every caller due at the same instant, and calls each caller not cleared", async () => {
    const before = timers();
    const at = Date.now() + 40;
    const expired: number[] = [];
    const entries = Array.from({ length: 100 }, (_, i) => sharedExpiryTimer(at, expiring(expired, i)));
    strictEqual(timers() - before, 1);
    for (const entry of entries.slice(10)) entry.clear();
    await sleep(120);
    deepStrictEqual(expired, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    strictEqual(timers(), before);
  });

  it("lets go of the timer once every caller of its instant cleared, and keeps other instants apart", async () => {
    const before = timers();
    const soon = Date.now() + 30;
    const expired: string[] = [];
    const a = sharedExpiryTimer(soon, expiring(expired, "a"));
    const b = sharedExpiryTimer(soon, expiring(expired, "b"));
    sharedExpiryTimer(soon + 20, expiring(expired, "later"));
    strictEqual(timers() - before, 2);
    a.clear();
    b.clear();
    // Clearing twice does not take another caller's entry.
    a.clear();
    strictEqual(timers() - before, 1);
    await sleep(120);
    deepStrictEqual(expired, ["later"]);
  });

  it("calls at once an expiry already past, and the same subscriber given twice once per entry", async () => {
    const expired: string[] = [];
    sharedExpiryTimer(Date.now() - 1, expiring(expired, "past"));
    deepStrictEqual(expired, ["past"]);
    const at = Date.now() + 20;
    const twice = expiring(expired, "twice");
    sharedExpiryTimer(at, twice);
    sharedExpiryTimer(at, twice).clear();
    await sleep(80);
    deepStrictEqual(expired, ["past", "twice"]);
  });
});
