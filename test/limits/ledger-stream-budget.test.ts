import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import {
  LedgerStreamBudget,
  type LedgerStreamPurpose,
  type LedgerStreamRefusal,
  ledgerStreamBudgetBuffer,
} from "../../src/limits/ledger-stream-budget.js";
import { until } from "../support/until.js";
import { hammerBudget, IN_USE, userWord } from "./stream-budget-hammer.js";

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

function claimer(
  budget: LedgerStreamBudget,
  log: string[] = [],
  purpose?: LedgerStreamPurpose,
  user?: string,
) {
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
      purpose,
      user,
    );
    made.push(claim);
    return claim;
  };
}

/** Subscriptions may hold 2 of the 3 slots; the third is kept for authorization calls. */
const settings = { limit: 3, reservedForAuthorization: 1, queueLimit: 2, queueTimeoutMs: 60_000 };

describe("LedgerStreamBudget", () => {
  it("grants subscriptions their share at once, queues `queueLimit` more and refuses the next as queue-full", () => {
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
    assert.deepEqual(e?.refusal, {
      reason: "queue-full",
      purpose: "subscription",
      limit: 3,
      reservedForAuthorization: 1,
      queueLimit: 2,
      queueTimeoutMs: 60_000,
      perUser: 2 ** 31 - 1,
    });
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
      { limit: 2, reservedForAuthorization: 1, queueLimit: 5, queueTimeoutMs: 20 },
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
      limit: 2,
      reservedForAuthorization: 1,
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
    const lengths: string[] = [];
    const waits: string[] = [];
    const refusals: string[] = [];
    const budget = new LedgerStreamBudget(
      ledgerStreamBudgetBuffer(),
      { limit: 2, reservedForAuthorization: 1, queueLimit: 1, queueTimeoutMs: 60_000 },
      {
        queueLength: (n, purpose) => lengths.push(`${purpose} ${n}`),
        granted: (ms, purpose) => waits.push(`${purpose} ${ms >= 0}`),
        refused: (reason, _ms, purpose) => refusals.push(`${purpose} ${reason}`),
      },
    );
    const claim = claimer(budget);
    const a = claim("a");
    claim("b");
    claim("c");
    const authorization = claimer(budget, [], "authorization");
    authorization("r");
    authorization("s");
    authorization("t");
    a.end();
    assert.deepEqual(lengths, ["subscription 1", "authorization 1", "authorization 0"]);
    assert.deepEqual(waits, ["authorization true"]);
    assert.deepEqual(refusals, ["subscription queue-full", "authorization queue-full"]);
  });

  it("rejects a budget below 2 and a reserve that leaves either purpose no slot", () => {
    const buffer = ledgerStreamBudgetBuffer();
    for (const [limit, reservedForAuthorization] of [
      [0, 0],
      [1, 0],
      [1, 1],
      [3, 0],
      [3, 3],
      [3, 1.5],
    ] as const) {
      assert.throws(
        () => new LedgerStreamBudget(buffer, { ...settings, limit, reservedForAuthorization }),
        RangeError,
        `${limit} with ${reservedForAuthorization} reserved`,
      );
    }
  });
});

describe("LedgerStreamBudget's reserve for authorization calls", () => {
  const authorizationOf = (budget: LedgerStreamBudget, log: string[] = []) =>
    claimer(budget, log, "authorization");

  it("never gives subscriptions the reserve, even with it free", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
      ...settings,
      limit: 5,
      reservedForAuthorization: 2,
    });
    const claims = ["a", "b", "c", "d"].map(claimer(budget));
    assert.deepEqual(
      claims.map((c) => c.granted),
      [true, true, true, false],
    );
    assert.equal(budget.held(), 3);
    assert.equal(budget.held("subscription"), 3);
    assert.equal(budget.waiting("subscription"), 1);
  });

  it("grants an authorization call at once while subscriptions fill their share and others wait", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), settings);
    const subscriptions = ["a", "b", "c", "d"].map(claimer(budget));
    assert.equal(budget.waiting("subscription"), 2);
    const probe = authorizationOf(budget)("probe");
    assert.equal(probe.granted, true);
    assert.deepEqual([budget.held(), budget.held("subscription"), budget.held("authorization")], [3, 2, 1]);
    // Authorization calls may take any free slot, the subscriptions' share included.
    subscriptions[0]?.end();
    subscriptions[1]?.end();
    for (const c of subscriptions.slice(2)) c.end();
    const more = ["q", "r", "s"].map(authorizationOf(budget));
    assert.deepEqual(
      more.map((c) => c.granted),
      [true, true, false],
    );
    assert.equal(budget.held("authorization"), 3);
  });

  it("serves waiting authorization calls before subscriptions that waited longer", () => {
    const log: string[] = [];
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), { ...settings, queueLimit: 10 });
    const subscribe = claimer(budget, log);
    const authorize = authorizationOf(budget, log);
    const [a, b] = ["a", "b"].map(subscribe);
    const r = authorize("r");
    const [c, d] = ["c", "d"].map(subscribe);
    const s = authorize("s");
    const t = authorize("t");
    assert.deepEqual(log, ["a", "b", "r"]);

    a?.end();
    assert.deepEqual(log, ["a", "b", "r", "s"], "the authorization call, not the older subscription");
    r.end();
    assert.deepEqual(log, ["a", "b", "r", "s", "t"]);
    // No authorization call waits: a slot freed goes to the subscriptions, in order.
    s.end();
    assert.deepEqual(log, ["a", "b", "r", "s", "t", "c"]);
    // b and c fill the subscriptions' share: the slot t frees is the reserve, not d's.
    t.end();
    assert.deepEqual(log, ["a", "b", "r", "s", "t", "c"], "the reserve freed is not the subscriptions'");
    assert.equal(budget.held(), 2);
    b?.end();
    assert.deepEqual(log, ["a", "b", "r", "s", "t", "c", "d"]);
    assert.equal(c?.granted && d?.granted, true);
  });

  it("queues a new subscription while an authorization call waits on another thread's view, and gives it the slot once that call is served", async () => {
    const buffer = ledgerStreamBudgetBuffer();
    const log: string[] = [];
    const one = new LedgerStreamBudget(buffer, { ...settings, queueLimit: 10 });
    const other = new LedgerStreamBudget(buffer, { ...settings, queueLimit: 10 });
    const [a] = ["a", "b"].map(claimer(one, log));
    authorizationOf(one, log)("r");
    const s = authorizationOf(other, log)("s");
    assert.equal(budget(one), "3 held, 1 waiting");

    a?.end();
    // The freed slot is the waiting authorization call's: `one` may not give it to a newcomer.
    const c = claimer(one, log)("c");
    assert.equal(c.granted, false);
    await until(() => s.granted);
    assert.deepEqual(log, ["a", "b", "r", "s"]);
    s.end();
    await until(() => c.granted);
    assert.deepEqual(log, ["a", "b", "r", "s", "c"]);
  });

  it("refuses an authorization call past its own queue's bound and wait, apart from the subscriptions' queue", async () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
      limit: 2,
      reservedForAuthorization: 1,
      queueLimit: 1,
      queueTimeoutMs: 20,
    });
    claimer(budget)("a");
    claimer(budget)("b");
    authorizationOf(budget)("r");
    assert.equal(budget.waiting("subscription"), 1);
    const refusal = await new Promise<LedgerStreamRefusal>((resolve) =>
      budget.claim(() => assert.fail("no slot was free"), resolve, "authorization"),
    );
    assert.equal(refusal.reason, "queue-timeout");
    assert.equal(refusal.purpose, "authorization");
    assert.equal(budget.waiting("authorization"), 0);
  });
});

describe("LedgerStreamBudget's share per user", () => {
  /** 6 slots for subscriptions, 2 of them (held and waiting) per user; authorization calls 3 per user. */
  const shared = {
    limit: 8,
    reservedForAuthorization: 2,
    queueLimit: 10,
    queueTimeoutMs: 60_000,
    subscriptionsPerUser: 2,
    authorizationsPerUser: 3,
  };

  it("refuses a user's claim past its share at once, whatever is free, and serves other users", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), shared);
    const [b1, b2, b3] = ["b1", "b2", "b3"].map(claimer(budget, [], "subscription", "bob")) as Claim[];
    assert.deepEqual(
      [b1, b2].map((c) => [c?.granted, c?.refusal]),
      [
        [true, undefined],
        [true, undefined],
      ],
    );
    assert.equal(b3?.granted, false);
    assert.deepEqual(b3?.refusal, {
      reason: "user-share",
      purpose: "subscription",
      limit: 8,
      reservedForAuthorization: 2,
      queueLimit: 10,
      queueTimeoutMs: 60_000,
      perUser: 2,
    });
    assert.equal(budget.waiting(), 0, "a refused claim takes no place in the queue");
    const alice = ["a1", "a2"].map(claimer(budget, [], "subscription", "alice"));
    assert.deepEqual(
      alice.map((c) => c.granted),
      [true, true],
    );
    assert.deepEqual([budget.heldBy("bob", "subscription"), budget.heldBy("alice", "subscription")], [2, 2]);
    // Bob's share is his again once one of his streams ends.
    b1?.end();
    assert.equal(claimer(budget, [], "subscription", "bob")("b4").granted, true);
    // His refused claim's end gives back nothing it did not hold.
    b3?.end();
    assert.equal(budget.heldBy("bob", "subscription"), 2);
  });

  it("counts a user's waiting claims against its share: one user cannot fill the queue", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), shared);
    for (const user of ["u1", "u2", "u3"]) ["x", "y"].map(claimer(budget, [], "subscription", user));
    assert.equal(budget.held("subscription"), 6, "the subscriptions' share is full");
    const [c1, c2] = ["c1", "c2"].map(claimer(budget, [], "subscription", "carol")) as Claim[];
    assert.deepEqual(
      [c1?.granted, c1?.refusal, c2?.granted, c2?.refusal],
      [false, undefined, false, undefined],
    );
    assert.equal(budget.waiting("subscription"), 2);
    assert.equal(claimer(budget, [], "subscription", "carol")("c3").refusal?.reason, "user-share");
    assert.equal(budget.waiting("subscription"), 2);
    c1?.end();
    assert.deepEqual([budget.heldBy("carol", "subscription"), budget.waiting("subscription")], [1, 1]);
  });

  it("bounds each user's authorization calls apart from its subscriptions", () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), shared);
    ["s1", "s2"].map(claimer(budget, [], "subscription", "bob"));
    const questions = ["q1", "q2", "q3", "q4"].map(claimer(budget, [], "authorization", "bob"));
    assert.deepEqual(
      questions.map((c) => c.refusal?.reason ?? c.granted),
      [true, true, true, "user-share"],
    );
    assert.equal(questions[3]?.refusal?.perUser, 3);
    assert.equal(claimer(budget, [], "authorization", "alice")("a").granted, true);
  });

  it("serves the users waiting in turn, not one user's crowd before another's one", () => {
    const log: string[] = [];
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
      ...shared,
      subscriptionsPerUser: 10,
      authorizationsPerUser: 10,
    });
    const holders = ["h1", "h2", "h3", "h4", "h5", "h6"].map(claimer(budget, log, "subscription", "holder"));
    ["b1", "b2", "b3", "b4"].map(claimer(budget, log, "subscription", "bob"));
    claimer(budget, log, "subscription", "alice")("a1");
    claimer(budget, log, "subscription", "carol")("c1");
    for (const holder of holders.slice(0, 4)) holder.end();
    assert.deepEqual(log.slice(6), ["b1", "a1", "c1", "b2"]);
  });

  it("serves the users' authorization calls in turn too", () => {
    const log: string[] = [];
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
      ...shared,
      limit: 3,
      reservedForAuthorization: 1,
      authorizationsPerUser: 10,
    });
    const held = ["h1", "h2", "h3"].map(claimer(budget, log, "authorization", "holder"));
    ["b1", "b2", "b3"].map(claimer(budget, log, "authorization", "bob"));
    claimer(budget, log, "authorization", "alice")("a1");
    held[0]?.end();
    held[1]?.end();
    assert.deepEqual(log.slice(3), ["b1", "a1"]);
  });

  it("gives back a user's place when its waiting claim times out", async () => {
    const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
      ...shared,
      limit: 2,
      reservedForAuthorization: 1,
      queueTimeoutMs: 20,
    });
    claimer(budget, [], "subscription", "holder")("h");
    const waiter = claimer(budget, [], "subscription", "bob")("b");
    assert.equal(budget.heldBy("bob", "subscription"), 1);
    await until(() => waiter.refusal !== undefined);
    assert.equal(waiter.refusal?.reason, "queue-timeout");
    assert.equal(budget.heldBy("bob", "subscription"), 0);
  });
});

/** A budget's shared counts, for assertion messages. */
function budget(view: LedgerStreamBudget): string {
  return `${view.held()} held, ${view.waiting()} waiting`;
}

describe("LedgerStreamBudget across worker threads", () => {
  const limit = 7;
  const reservedForAuthorization = 2;

  it("never gives subscriptions more than their share while four threads contend, and loses no slot", async () => {
    const buffer = ledgerStreamBudgetBuffer();
    const inUse = new SharedArrayBuffer(IN_USE.words * Int32Array.BYTES_PER_ELEMENT);
    const common = { buffer, inUse, limit, reservedForAuthorization, claims: 2_000, leaverShare: 0 };
    const results = await Promise.all(
      [1, 2, 3, 4].map((seed) => hammerBudget({ ...common, authorizationShare: 0, seed })),
    );
    assert.deepEqual(
      results.map((r) => [r.granted.subscription, r.refused, r.violations, r.firstViolation]),
      [
        [2_000, 0, 0, undefined],
        [2_000, 0, 0, undefined],
        [2_000, 0, 0, undefined],
        [2_000, 0, 0, undefined],
      ],
    );
    const seen = new Int32Array(inUse);
    assert.equal(
      seen[IN_USE.mostSubscriptions],
      limit - reservedForAuthorization,
      "the threads filled their share",
    );
    assertEmpty(buffer);
  });

  it("keeps both bounds at every step of a random walk of claims, ends and leavers of both purposes on two threads", async () => {
    const buffer = ledgerStreamBudgetBuffer();
    const inUse = new SharedArrayBuffer(IN_USE.words * Int32Array.BYTES_PER_ELEMENT);
    const seed = Math.floor(Math.random() * 2 ** 31);
    const results = await Promise.all(
      [seed, seed + 1].map((threadSeed) =>
        hammerBudget({
          buffer,
          inUse,
          limit,
          reservedForAuthorization,
          claims: 3_000,
          authorizationShare: 0.4,
          leaverShare: 0.1,
          seed: threadSeed,
        }),
      ),
    );
    const walk = `seeds ${seed} and ${seed + 1}: ${JSON.stringify(results)}`;
    for (const r of results) {
      assert.equal(r.violations, 0, walk);
      assert.equal(r.refused, 0, walk);
      assert.equal(r.granted.subscription + r.granted.authorization + r.left, 3_000, walk);
      assert.ok(r.granted.authorization > 0 && r.granted.subscription > 0, walk);
    }
    const seen = new Int32Array(inUse);
    assert.ok((seen[IN_USE.mostTotal] as number) <= limit, walk);
    assert.equal(seen[IN_USE.mostTotal], limit, `the threads filled the budget; ${walk}`);
    assert.ok((seen[IN_USE.mostSubscriptions] as number) <= limit - reservedForAuthorization, walk);
    assertEmpty(buffer);
  });

  it("keeps every user within its share, held and waiting, at every step of a walk of three users on four threads, and loses no place", async () => {
    const buffer = ledgerStreamBudgetBuffer();
    const users = 3;
    const perUser = 2;
    const inUse = new SharedArrayBuffer((IN_USE.words + 2 * users) * Int32Array.BYTES_PER_ELEMENT);
    const seed = Math.floor(Math.random() * 2 ** 31);
    const results = await Promise.all(
      [0, 1, 2, 3].map((thread) =>
        hammerBudget({
          buffer,
          inUse,
          limit,
          reservedForAuthorization,
          claims: 1_500,
          authorizationShare: 0.4,
          leaverShare: 0.1,
          seed: seed + thread,
          users,
          perUser,
        }),
      ),
    );
    const walk = `seeds from ${seed}: ${JSON.stringify(results)}`;
    for (const r of results) {
      assert.equal(r.violations, 0, walk);
      assert.deepEqual(Object.keys(r.refusedFor), r.refused > 0 ? ["user-share"] : [], walk);
      assert.equal(r.granted.subscription + r.granted.authorization + r.left + r.refused, 1_500, walk);
    }
    // A thread whose claims all came after the others' took every share may get none: the
    // threads together get both purposes.
    assert.ok(
      results.some((r) => r.granted.authorization > 0) && results.some((r) => r.granted.subscription > 0),
      walk,
    );
    assert.ok(
      results.some((r) => r.refused > 0),
      `four threads' claims of three users passed a share of 2 somewhere; ${walk}`,
    );
    const seen = new Int32Array(inUse);
    for (let user = 0; user < users; user++)
      for (const purpose of ["subscription", "authorization"] as const)
        assert.equal(seen[userWord(user, purpose)], 0, `u${user}'s ${purpose} slots all given back`);
    assertEmpty(buffer, users);
  });

  /** Every slot given back and no place in either queue, nor in any user's share, left taken. */
  function assertEmpty(buffer: SharedArrayBuffer, users = 0): void {
    const view = new LedgerStreamBudget(buffer, {
      limit,
      reservedForAuthorization,
      queueLimit: 0,
      queueTimeoutMs: 1,
    });
    assert.deepEqual([view.held(), view.held("subscription"), view.waiting()], [0, 0, 0]);
    for (let user = 0; user < users; user++)
      assert.deepEqual(
        [view.heldBy(`u${user}`, "subscription"), view.heldBy(`u${user}`, "authorization")],
        [0, 0],
      );
  }
});
