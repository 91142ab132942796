import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SharedAdmissions } from "../../src/ws/shared-admissions.js";

/** A question the test answers when it chooses, counting how often it was asked. */
function ledger() {
  const answers: { resolve: () => void; reject: (error: Error) => void }[] = [];
  return {
    answers,
    ask: () => new Promise<void>((resolve, reject) => answers.push({ resolve, reject })),
  };
}

describe("SharedAdmissions", () => {
  it("asks once for the upgrades of one token and endpoint in flight together", async () => {
    const admissions = new SharedAdmissions();
    const { answers, ask } = ledger();
    const waiting = [1, 2, 3].map(() => admissions.admit("/v2/updates", "token-a", ask));
    assert.equal(answers.length, 1);
    answers[0]?.resolve();
    await Promise.all(waiting);
    assert.equal(admissions.size, 0);
  });

  it("asks again once the answer came: no token's answer outlives its call", async () => {
    const admissions = new SharedAdmissions();
    const { answers, ask } = ledger();
    const first = admissions.admit("/v2/updates", "token-a", ask);
    answers[0]?.resolve();
    await first;
    const second = admissions.admit("/v2/updates", "token-a", ask);
    assert.equal(answers.length, 2);
    answers[1]?.resolve();
    await second;
  });

  it("tells every upgrade of a shared question when that question was asked, not when it came", async () => {
    let clock = 1_000;
    const admissions = new SharedAdmissions(undefined, () => clock);
    const { answers, ask } = ledger();
    const first = admissions.admit("/v2/updates", "token-a", ask);
    clock = 1_500;
    const joined = admissions.admit("/v2/updates", "token-a", ask);
    answers[0]?.resolve();
    assert.deepEqual(await Promise.all([first, joined]), [1_000, 1_000]);
  });

  it("keeps other tokens and other endpoints apart", async () => {
    const admissions = new SharedAdmissions();
    const { answers, ask } = ledger();
    const waiting = [
      admissions.admit("/v2/updates", "token-a", ask),
      admissions.admit("/v2/updates", "token-b", ask),
      admissions.admit("/v2/commands/completions", "token-a", ask),
    ];
    assert.equal(answers.length, 3);
    for (const answer of answers) answer.resolve();
    await Promise.all(waiting);
  });

  it("gives every waiter the refusal, then forgets it", async () => {
    const admissions = new SharedAdmissions();
    const { answers, ask } = ledger();
    const waiting = [1, 2].map(() => admissions.admit("/v2/updates", "token-a", ask));
    answers[0]?.reject(new Error("PERMISSION_DENIED"));
    for (const w of waiting) await assert.rejects(w, /PERMISSION_DENIED/);
    assert.equal(admissions.size, 0);
    const again = admissions.admit("/v2/updates", "token-a", ask);
    assert.equal(answers.length, 2);
    answers[1]?.resolve();
    await again;
  });
});
