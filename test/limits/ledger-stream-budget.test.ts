import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import {
  LedgerStreamBudget,
  type LedgerStreamRefusal,
  ledgerStreamBudgetBuffer,
} from "../../src/limits/ledger-stream-budget.js";
import { hammerBudget } from "./stream-budget-hammer.js";

/** One claim's story: what it was told, and its end. */
interface Claim {
  readonly name: string;
  granted: boolean;
  refusal: LedgerStreamRefusal | undefined;
  end(): void;
}

/** Every claim of a test, ended after it: no waiter's timer outlives its test. */
const made: Claim[] = [];
afterEach(() => {
  for (const claim of made.splice(0)) claim.end();
});

function claimer(budget: LedgerStreamBudget, log: string[] = []) {
  return (name: string): Claim => {
    const claim: Claim = { name, granted: false, refusal: undefined, end: () => undefined };
    claim.end = budget.claim(
      () => {
        claim.granted = true;
        log.push(name);
      },
      (refusal) => {
        claim.refusal = refusal;
      },
    );
    made.push(claim);
    return claim;
  };
}

const settings = { limit: 2, queueLimit: 2, queueTimeoutMs: 60_000 };

describe("LedgerStreamBudget", () => {
  it("grants `limit` slots at once, queues `queueLimit` more and refuses the next as queue-full", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), settings);
    const claim = claimer(budget);
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(claim) as Claim[];
    assert.deepEqual(
      [a, b, c, d].map((x) => [x?.granted, x?.refusal]),
      [
        [true, undefined],
        [true, undefined],
        [false, undefined],
        [false, undefined],
      ],
    );
    assert.deepEqual(e?.refusal, { reason: "queue-full", limit: 2, queueLimit: 2, queueTimeoutMs: 60_000 });
    assert.equal(budget.held(), 2);
    assert.equal(budget.waiting(), 2);
    for (const x of [a, b, c, d, e]) x?.end();
    assert.equal(budget.held(), 0);
    assert.equal(budget.waiting(), 0);
  });

  it("gives freed slots to the waiters in arrival order", () => {
    const log: string[] = [];
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), { ...settings, queueLimit: 10 });
    const claim = claimer(budget, log);
    const claims = ["a", "b", "c", "d", "e"].map(claim);
    assert.deepEqual(log, ["a", "b"]);
    claims[1]?.end();
    assert.deepEqual(log, ["a", "b", "c"]);
    claims[0]?.end();
    claims[2]?.end();
    assert.deepEqual(log, ["a", "b", "c", "d", "e"]);
    assert.equal(budget.held(), 2);
    assert.equal(budget.queueLength(), 0);
  });

  it("queues a newcomer behind earlier waiters even when a slot is free at that moment", () => {
    const log: string[] = [];
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), { ...settings, queueLimit: 10 });
    const claim = claimer(budget, log);
    const [a] = ["a", "b", "c"].map(claim);
    a?.end();
    claim("d");
    assert.deepEqual(log, ["a", "b", "c"]);
    assert.equal(budget.queueLength(), 1);
  });

  it("gives a slot back once however often its claim is ended", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), settings);
    const claim = claimer(budget);
    const a = claim("a");
    claim("b");
    a.end();
    a.end();
    a.end();
    assert.equal(budget.held(), 1);
  });

  it("takes a waiter that leaves out of the queue, freeing its place", () => {
    const log: string[] = [];
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), settings);
    const claim = claimer(budget, log);
    const [a, , c, d] = ["a", "b", "c", "d"].map(claim);
    c?.end();
    assert.equal(budget.waiting(), 1);
    const e = claim("e");
    assert.equal(e.refusal, undefined, "a place was free again");
    a?.end();
    assert.deepEqual(log, ["a", "b", "d"]);
    assert.equal(c?.granted, false);
    assert.equal(d?.granted, true);
  });

  it("refuses a waiter past the longest wait as queue-timeout, holding nothing for it", async () => {
    const refused: string[] = [];
    const budget = new LedgerStreamBudget(
      ledgerStreamBudgetBuffer(),
      { limit: 1, queueLimit: 5, queueTimeoutMs: 20 },
      { refused: (reason) => refused.push(reason) },
    );
    budget.claim(
      () => undefined,
      () => undefined,
    );
    const refusal = await new Promise<LedgerStreamRefusal>((resolve) =>
      budget.claim(() => assert.fail("no slot was free"), resolve),
    );
    assert.equal(refusal.reason, "queue-timeout");
    assert.deepEqual(refused, ["queue-timeout"]);
    assert.equal(budget.waiting(), 0);
    assert.equal(budget.held(), 1);
  });

  it("refuses at once with no queue (queueLimit 0)", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), { ...settings, queueLimit: 0 });
    const claim = claimer(budget);
    claim("a");
    claim("b");
    assert.equal(claim("c").refusal?.reason, "queue-full");
  });

  it("serves a waiter when a holder ends its claim inside its own grant", () => {
    const log: string[] = [];
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
      limit: 1,
      queueLimit: 5,
      queueTimeoutMs: 60_000,
    });
    const a = claimer(budget, log)("a");
    // b's call fails as it opens: it ends its claim from within the grant.
    let endB: () => void = () => undefined;
    endB = budget.claim(
      () => {
        log.push("b");
        queueMicrotask(() => endB());
      },
      () => assert.fail("b waits"),
    );
    claimer(budget, log)("c");
    a.end();
    return new Promise<void>((resolve) =>
      queueMicrotask(() => {
        assert.deepEqual(log, ["a", "b", "c"]);
        assert.equal(budget.held(), 1);
        resolve();
      }),
    );
  });

  it("tells its queue's length, the waits and the refusals", () => {
    const lengths: number[] = [];
    const waits: number[] = [];
    const refusals: string[] = [];
    const budget = new LedgerStreamBudget(
      ledgerStreamBudgetBuffer(),
      { limit: 1, queueLimit: 1, queueTimeoutMs: 60_000 },
      {
        queueLength: (n) => lengths.push(n),
        granted: (ms) => waits.push(ms),
        refused: (reason) => refusals.push(reason),
      },
    );
    const claim = claimer(budget);
    const a = claim("a");
    claim("b");
    claim("c");
    a.end();
    assert.deepEqual(lengths, [1, 0]);
    assert.equal(waits.length, 1);
    assert.ok((waits[0] as number) >= 0);
    assert.deepEqual(refusals, ["queue-full"]);
  });

  it("rejects a budget that is not a positive integer", () => {
    assert.throws(
      () => new LedgerStreamBudget(ledgerStreamBudgetBuffer(), { ...settings, limit: 0 }),
      RangeError,
    );
  });
});

describe("LedgerStreamBudget across worker threads", () => {
  it("never holds more than the budget while four threads contend, and loses no slot", async () => {
    const buffer = ledgerStreamBudgetBuffer();
    const inUse = new SharedArrayBuffer(8);
    const limit = 7;
    const results = await Promise.all(
      Array.from({ length: 4 }, () => hammerBudget({ buffer, inUse, limit, claims: 2_000 })),
    );
    assert.deepEqual(
      results.map((r) => r.granted),
      [2_000, 2_000, 2_000, 2_000],
    );
    assert.deepEqual(
      results.map((r) => r.refused),
      [0, 0, 0, 0],
    );
    const seen = new Int32Array(inUse);
    assert.ok((seen[1] as number) <= limit, `at most ${limit} held at once, saw ${seen[1]}`);
    assert.equal(seen[1], limit, "the threads filled the budget");
    const budget = new LedgerStreamBudget(buffer, { limit, queueLimit: 0, queueTimeoutMs: 1 });
    assert.equal(budget.held(), 0);
    assert.equal(budget.waiting(), 0);
  });
});
