import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InFlightQuestions } from "../../src/fanout/in-flight-questions.js";

/** A question the test answers (or refuses) when it says so, counting how often it was asked. */
function question() {
  let asked = 0;
  let settle: ((ok: boolean) => void) | undefined;
  const ask = () => {
    asked++;
    return new Promise<number>((resolve, reject) => {
      settle = (ok) => (ok ? resolve(asked) : reject(new Error("refused")));
    });
  };
  return { ask, asked: () => asked, settle: (ok: boolean) => settle?.(ok) };
}

describe("questions in flight", () => {
  it("asks once while in flight, again once answered, and tells its owner each time none is left", async () => {
    let idle = 0;
    const questions = new InFlightQuestions<number>(() => idle++);
    const a = question();
    const b = question();
    const first = [questions.ask("a", a.ask), questions.ask("a", a.ask), questions.ask("b", b.ask)];
    assert.equal(a.asked(), 1);
    assert.equal(questions.size, 2);
    a.settle(true);
    assert.deepEqual(await Promise.all(first.slice(0, 2)), [1, 1]);
    // "b" still in flight: not idle yet.
    assert.equal(idle, 0);
    assert.equal(questions.size, 1);
    b.settle(false);
    await assert.rejects(first[2] as Promise<number>, /refused/);
    assert.equal(idle, 1);
    assert.equal(questions.size, 0);
    // Nothing was kept: the same words are asked anew.
    const again = questions.ask("a", a.ask);
    assert.equal(a.asked(), 2);
    a.settle(true);
    assert.equal(await again, 2);
    assert.equal(idle, 2);
  });
});
