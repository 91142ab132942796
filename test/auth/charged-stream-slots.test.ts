import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chargedStreamSlots } from "../../src/auth/charged-stream-slots.js";
import { tokenDigest } from "../../src/fanout/subscription-key.js";
import { userKey } from "../../src/jwt/bearer-token.js";
import { HeldTokens } from "../../src/jwt/held-tokens.js";
import type { StreamPurpose } from "../../src/ledger/stream-slots.js";
import { LedgerStreamBudget, ledgerStreamBudgetBuffer } from "../../src/limits/ledger-stream-budget.js";
import { signToken } from "../jwt/test-tokens.js";

const ALICE = userKey({ subject: "alice" });
const GENUINE = signToken("alice", { key: "the-ledger-key" });
const FORGED = signToken("alice", { key: "an-attacker-key" });
/** Forged tokens naming nobody, each with an issuer of its own. */
const NOBODY = [1, 2, 3].map((n) =>
  signToken("", { key: "an-attacker-key", issuer: `made-up-${n}`, extra: { sub: undefined } }),
);
const REFUSED = new Set([FORGED, ...NOBODY, "not-a-jwt"]);
const UNAUTHENTICATED = Object.assign(new Error("UNAUTHENTICATED"), { code: 16 });

/** The ledger's admission of tokens, answered when the test says so; counts what it was asked. */
class Ledger {
  readonly asked: string[] = [];
  readonly #pending: { token: string; answer: (accepted: boolean) => void }[] = [];

  admission = (token: string): Promise<void> => {
    this.asked.push(token);
    return new Promise((resolve, reject) =>
      this.#pending.push({ token, answer: (accepted) => (accepted ? resolve() : reject(UNAUTHENTICATED)) }),
    );
  };

  /** Answers the oldest question about `token`: refused when it is a forged one, or no JWT. */
  answer(token: string): void {
    const at = this.#pending.findIndex((p) => p.token === token);
    assert.notEqual(at, -1, "a question about that token is in flight");
    this.#pending.splice(at, 1)[0]?.answer(!REFUSED.has(token));
  }

  get inFlight(): readonly string[] {
    return this.#pending.map((p) => p.token);
  }
}

interface Claim {
  granted: boolean;
  refusal: { reason: string; error?: unknown } | undefined;
  end(): void;
}

/** A share of 1: half of it is 0, so every token not held as accepted is asked about. */
function setUp(verified = false, settings = { perUser: 1 }) {
  const budget = new LedgerStreamBudget(ledgerStreamBudgetBuffer(), {
    limit: 10,
    reservedForAuthorization: 2,
    queueLimit: 10,
    queueTimeoutMs: 60_000,
    subscriptionsPerUser: settings.perUser,
    authorizationsPerUser: settings.perUser,
  });
  const tokens = new HeldTokens(tokenDigest);
  const ledger = new Ledger();
  const slots = chargedStreamSlots(budget, tokens, verified ? "verified" : ledger.admission);
  const claim = (token: string | undefined, purpose: StreamPurpose = "subscription"): Claim => {
    const made: Claim = { granted: false, refusal: undefined, end: () => undefined };
    made.end = slots.claim(
      () => {
        made.granted = true;
      },
      (refusal) => {
        made.refusal = refusal;
      },
      purpose,
      token,
    );
    return made;
  };
  return { budget, tokens, ledger, claim };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("chargedStreamSlots", () => {
  it("charges a token nobody holds to its user only once the ledger accepted it, and holds the token while the claim lasts", async () => {
    const { budget, tokens, ledger, claim } = setUp();
    const first = claim(GENUINE);
    assert.equal(budget.heldBy(ALICE, "subscription"), 0, "nothing charged before the ledger's answer");
    assert.deepEqual(ledger.asked, [GENUINE]);
    ledger.answer(GENUINE);
    await settled();
    assert.equal(first.granted, true);
    assert.equal(budget.heldBy(ALICE, "subscription"), 1);
    assert.equal(tokens.accepted(GENUINE), true);
    // Held now: the stream's next claim (a re-check) is charged at once, unasked.
    const recheck = claim(GENUINE, "authorization");
    assert.equal(recheck.granted, true);
    assert.equal(budget.heldBy(ALICE, "authorization"), 1);
    assert.deepEqual(ledger.asked, [GENUINE]);
    recheck.end();
    first.end();
    assert.equal(tokens.accepted(GENUINE), false);
    assert.equal(budget.held(), 0);
  });

  it("refuses a token the ledger refuses with the ledger's error, charging nobody", async () => {
    const { budget, tokens, ledger, claim } = setUp();
    const forged = [claim(FORGED), claim(FORGED, "authorization"), claim(FORGED)];
    assert.deepEqual(ledger.asked, [FORGED], "one question for the claims of a token in flight together");
    ledger.answer(FORGED);
    await settled();
    for (const c of forged) {
      assert.equal(c.granted, false);
      assert.deepEqual(c.refusal, { reason: "token-refused", error: UNAUTHENTICATED });
    }
    assert.equal(budget.heldBy(ALICE, "subscription") + budget.heldBy(ALICE, "authorization"), 0);
    assert.equal(tokens.size, 0);
    const own = claim(GENUINE);
    ledger.answer(GENUINE);
    await settled();
    assert.equal(own.granted, true, "alice's own share is whole");
    own.end();
  });

  it("charges the first half of a user's share unasked, and the second half only to tokens the ledger accepted", async () => {
    const { budget, ledger, claim } = setUp(false, { perUser: 4 });
    // Forged tokens naming alice: the first two (half of 4) are charged at once, as a list
    // twin's token is while its user has room; the rest are asked about, and refused.
    const forged = Array.from({ length: 6 }, () => claim(FORGED));
    assert.deepEqual(
      forged.map((c) => c.granted),
      [true, true, false, false, false, false],
    );
    assert.deepEqual(ledger.asked, [FORGED]);
    ledger.answer(FORGED);
    await settled();
    assert.deepEqual(
      forged.slice(2).map((c) => c.refusal?.reason),
      ["token-refused", "token-refused", "token-refused", "token-refused"],
    );
    // Alice keeps the other half for tokens that are hers.
    const own = [claim(GENUINE), claim(GENUINE), claim(GENUINE)];
    ledger.answer(GENUINE);
    await settled();
    assert.deepEqual(
      own.map((c) => [c.granted, c.refusal?.reason]),
      [
        [true, undefined],
        [true, undefined],
        [false, "user-share"],
      ],
    );
    assert.equal(budget.heldBy(ALICE, "subscription"), 4);
    for (const c of [...forged, ...own]) c.end();
    assert.equal(budget.held(), 0);
  });

  it("charges at once, unasked, a token that a stream holds, and any token where the gateway verified it", () => {
    const held = setUp();
    held.tokens.hold(GENUINE);
    held.tokens.accept(GENUINE);
    assert.equal(held.claim(GENUINE).granted, true);
    assert.deepEqual(held.ledger.asked, []);

    const verified = setUp(true);
    assert.equal(verified.claim(FORGED).granted, true);
    assert.deepEqual(verified.ledger.asked, []);
    assert.equal(verified.budget.heldBy(ALICE, "subscription"), 1);
  });

  it("lets claims nobody judged hold at most half the budget's slots, however many users forged tokens make up", async () => {
    // Found from outside: forged tokens each naming a user of its own, each under half its
    // share, were all charged unasked and filled the budget. Subscriptions have 8 slots here.
    const { budget, ledger, claim } = setUp(false, { perUser: 4 });
    const madeUp = Array.from({ length: 10 }, (_, n) =>
      signToken(`made-up-${n}`, { key: "an-attacker-key" }),
    );
    for (const token of madeUp) REFUSED.add(token);
    const flood = madeUp.map((token) => claim(token));
    assert.equal(flood.filter((c) => c.granted).length, 4, "half of the 8 slots, unasked");
    assert.equal(ledger.asked.length, 6);
    for (const token of ledger.inFlight.slice()) ledger.answer(token);
    await settled();
    assert.equal(flood.filter((c) => c.refusal?.reason === "token-refused").length, 6);
    // The other half is for tokens the ledger accepted: alice's are asked about, and granted.
    const own = [claim(GENUINE), claim(GENUINE), claim(GENUINE), claim(GENUINE)];
    ledger.answer(GENUINE);
    await settled();
    assert.deepEqual(
      own.map((c) => c.granted),
      [true, true, true, true],
    );
    assert.equal(budget.held("subscription"), 8);
    for (const c of [...flood, ...own]) c.end();
    assert.equal(budget.held(), 0);
  });

  it("charges claims that name no user to one share: no token unasked, a token without a subject like any other", async () => {
    const { budget, ledger, claim } = setUp(false, { perUser: 4 });
    assert.equal(claim(undefined).granted, true, "the call itself asks the ledger");
    assert.deepEqual(ledger.asked, []);
    // Found from outside: forged tokens without a subject, each with an issuer of its own, were
    // charged at once, each to a share of its own. Now they share one: half of it (2) unasked,
    // the rest asked about and refused.
    const flood = [...NOBODY, "not-a-jwt"].map((token) => claim(token));
    assert.deepEqual(
      flood.map((c) => c.granted),
      [true, true, false, false],
    );
    for (const token of ledger.inFlight.slice()) ledger.answer(token);
    await settled();
    assert.deepEqual(
      flood.map((c) => c.refusal?.reason),
      [undefined, undefined, "token-refused", "token-refused"],
    );
    assert.equal(budget.heldBy(undefined, "subscription"), 3);
    // Accepted (a ledger without auth), tokens of two issuers without a subject are charged to
    // that one share too: the first takes its last place, the second finds it taken.
    const anonymous = [1, 2].map((n) => signToken("", { issuer: `iss-${n}`, extra: { sub: undefined } }));
    const accepted = anonymous.map((token) => claim(token));
    for (const token of anonymous) ledger.answer(token);
    await settled();
    assert.deepEqual(
      accepted.map((c) => [c.granted, c.refusal?.reason]),
      [
        [true, undefined],
        [false, "user-share"],
      ],
    );
  });

  it("charges nothing for a claim that ended while its token was asked about", async () => {
    const { budget, tokens, ledger, claim } = setUp();
    const gone = claim(GENUINE);
    gone.end();
    ledger.answer(GENUINE);
    await settled();
    assert.equal(gone.granted, false);
    assert.equal(budget.held(), 0);
    assert.equal(tokens.size, 0);
  });

  it("gives the token back when the budget refuses the claim as it is charged (the user's share taken)", async () => {
    const { budget, tokens, ledger, claim } = setUp(false, { perUser: 1 });
    tokens.hold(GENUINE);
    tokens.accept(GENUINE);
    const holder = claim(GENUINE);
    tokens.release(GENUINE);
    const other = signToken("alice", { key: "the-ledger-key", exp: Math.floor(Date.now() / 1000) + 200 });
    const past = claim(other);
    ledger.answer(other);
    await settled();
    assert.equal(past.refusal?.reason, "user-share");
    past.end();
    assert.equal(tokens.accepted(other), false);
    holder.end();
    assert.equal(budget.held(), 0);
  });

  it("lets claims on tokens the ledger did not accept hold at most half a user's share, in random interleavings of claims, answers, ends and streams' holds", async () => {
    // Model-based: a seeded random run. Alice's genuine tokens, a forged one naming her, and
    // bob's; claims of both purposes; the ledger's answers in any order; claims ended at any
    // point (before their answer too); WebSocket streams holding genuine tokens as accepted, and
    // requests holding any token unjudged, taking and dropping their holds; forged tokens of
    // made-up users too. At every step: forged claims hold at most half of alice's share (2 of
    // 4), so what she is charged is at most her live claims on genuine tokens and that half, and
    // all forged claims together at most half the slots; a token is held only while a claim or
    // a stream holds it. At the end, with everything ended, nothing is charged or held.
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const { budget, tokens, ledger, claim } = setUp(false, { perUser: 4 });
    const genuine = [
      GENUINE,
      signToken("alice", { key: "the-ledger-key", exp: Math.floor(Date.now() / 1000) + 250 }),
    ];
    const bobs = signToken("bob", { key: "the-ledger-key" });
    // Forged tokens of users made up, each a share of its own.
    const madeUp = [1, 2, 3].map((n) => signToken(`made-up-${n}`, { key: "an-attacker-key" }));
    for (const token of madeUp) REFUSED.add(token);
    const all = [...genuine, FORGED, bobs, ...madeUp];
    /** Half the slots of each purpose (8 for subscriptions, a reserve of 2). */
    const budgetHalf = { subscription: 4, authorization: 1 };
    const live: { token: string; purpose: StreamPurpose; claim: Claim }[] = [];
    const streams: string[] = [];
    const HALF = 2;
    let forgedGranted = 0;
    let forgedRefused = 0;
    for (let step = 0; step < 3_000; step++) {
      const roll = random();
      if (roll < 0.35) {
        const token = pick(all);
        const purpose = pick<StreamPurpose>(["subscription", "authorization"]);
        live.push({ token, purpose, claim: claim(token, purpose) });
      } else if (roll < 0.6 && ledger.inFlight.length > 0) {
        ledger.answer(pick(ledger.inFlight));
      } else if (roll < 0.85 && live.length > 0) {
        const ended = live.splice(Math.floor(random() * live.length), 1)[0];
        ended?.claim.end();
      } else if (roll < 0.9) {
        // A WebSocket stream: admitted at its upgrade, it holds its token as accepted.
        const token = pick(genuine);
        tokens.hold(token);
        tokens.accept(token);
        streams.push(token);
      } else if (roll < 0.95) {
        // A list twin's request: it holds its token, forged or not, as nobody has judged it.
        const token = pick(all);
        tokens.hold(token);
        streams.push(token);
      } else if (streams.length > 0) {
        tokens.release(streams.splice(Math.floor(random() * streams.length), 1)[0] as string);
      }
      await settled();
      for (const purpose of ["subscription", "authorization"] as const) {
        const honest = live.filter(
          (c) => c.purpose === purpose && genuine.includes(c.token) && c.claim.refusal === undefined,
        ).length;
        assert.ok(
          budget.heldBy(ALICE, purpose) <= honest + HALF,
          `step ${step}: alice charged past half her share for claims not hers`,
        );
        const unjudged = live.filter(
          (c) => c.purpose === purpose && (c.token === FORGED || madeUp.includes(c.token)) && c.claim.granted,
        );
        assert.ok(
          unjudged.length <= budgetHalf[purpose],
          `step ${step}: forged claims hold more than half the budget`,
        );
        const forgedHeld = live.filter((c) => c.purpose === purpose && c.token === FORGED && c.claim.granted);
        assert.ok(forgedHeld.length <= HALF, `step ${step}: forged claims hold more than half alice's share`);
        forgedGranted += forgedHeld.length;
      }
      forgedRefused = Math.max(
        forgedRefused,
        live.filter((c) => c.token === FORGED && c.claim.refusal?.reason === "token-refused").length,
      );
      for (const token of all) {
        const holders =
          streams.filter((t) => t === token).length + live.filter((c) => c.token === token).length;
        if (holders === 0)
          assert.equal(tokens.accepted(token), false, `step ${step}: a token held by nobody`);
      }
    }
    // Both paths were taken: forged claims charged within the first half, and refused past it.
    assert.ok(forgedGranted > 0 && forgedRefused > 0, `${forgedGranted} granted, ${forgedRefused} refused`);
    for (const c of live.splice(0)) c.claim.end();
    while (ledger.inFlight.length > 0) ledger.answer(ledger.inFlight[0] as string);
    await settled();
    for (const token of streams.splice(0)) tokens.release(token);
    assert.equal(budget.held(), 0);
    assert.equal(budget.waiting(), 0);
    assert.equal(tokens.size, 0);
  });
});
