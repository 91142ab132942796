import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { QUESTION_DEADLINE_MS } from "../../src/endpoints/ledger-questions.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { updatesRequest } from "../support/update-requests.js";
import { allocate, call, userFor, wildcard } from "./ledger-client.js";

/**
 * A list twin whose idle wait ends before the ledger has judged the token must not answer
 * `200 []` (fuzz finding F12: a 1 ms `stream_idle_timeout_ms` answered any token, a garbage one
 * included). An empty answer waits for the ledger's verdict; a full one had it already.
 */
describe("an empty list twin answer waits for the ledger's verdict on the reader", () => {
  const TRIES = 10;
  let stack: Stack;
  let party: string;
  let reader: string;
  let stranger: string;
  let end: number;
  before(async () => {
    stack = await startStack();
    party = await allocate(stack, "verdict");
    reader = await userFor(stack, "verdict-reader", [], [party]);
    stranger = await userFor(stack, "verdict-stranger", [], []);
    end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;
  });
  after(() => stack.stop());

  const updatesAfter = (beginExclusive: number) => updatesRequest(wildcard([party]), beginExclusive);
  const statuses = async (body: unknown, token: string): Promise<number[]> => {
    const seen: number[] = [];
    for (let i = 0; i < TRIES; i++) {
      seen.push((await call(stack, "POST", "/v2/updates?stream_idle_timeout_ms=1", body, token)).status);
    }
    return seen;
  };

  it("refuses a garbage token and an unknown user from offset 0", async () => {
    strictEqual(end > 0, true, "the ledger has history to start after");
    deepStrictEqual(await statuses(updatesAfter(0), "garbage.x.y"), Array(TRIES).fill(401));
    deepStrictEqual(await statuses(updatesAfter(0), tokenFor("nobody-at-all")), Array(TRIES).fill(403));
  });

  it("refuses a user without rights on the filter's party, from offset 0 ((0, 1] is asked) and from a positive one (the empty range)", async () => {
    deepStrictEqual(await statuses(updatesAfter(0), stranger), Array(TRIES).fill(403));
    deepStrictEqual(await statuses(updatesAfter(end), stranger), Array(TRIES).fill(403));
  });

  it("judges the parties before the offsets, as Canton does: a reader of other parties is refused 403 past the end too", async () => {
    // Canton's *ServiceAuthorization wraps the service: a range past the end is the service's
    // OFFSET_AFTER_LEDGER_END only for a reader it authorized. The verdict of an empty answer
    // from offset 0 asks (0, 1], past the end of a ledger that has nothing yet.
    const past = end + 5;
    const updates = await call(
      stack,
      "POST",
      "/v2/updates",
      updatesRequest(wildcard([party]), past),
      stranger,
    );
    strictEqual(updates.status, 403, JSON.stringify(updates.body));
    const acs = { activeAtOffset: past, eventFormat: wildcard([party]) };
    const contracts = await call(stack, "POST", "/v2/state/active-contracts", acs, stranger);
    strictEqual(contracts.status, 403, JSON.stringify(contracts.body));
    const mine = await call(stack, "POST", "/v2/updates", updatesRequest(wildcard([party]), past), reader);
    strictEqual(mine.status, 400, JSON.stringify(mine.body));
  });

  it("answers [] to a reader the ledger admits", async () => {
    for (const begin of [0, end]) {
      const reply = await call(
        stack,
        "POST",
        "/v2/updates?stream_idle_timeout_ms=1",
        updatesAfter(begin),
        reader,
      );
      strictEqual(reply.status, 200);
      if (begin === end) deepStrictEqual(reply.body, []);
    }
  });
});

/**
 * Found from outside: on a ledger with nothing yet, an authorized reader's empty completions list
 * (`stream_idle_timeout_ms=0`) waited out the verdict's 10 s deadline, its probe hearing nothing
 * (no checkpoint before the ledger has an offset). A refusal comes as the call opens, so the
 * verdict waits a second for one, then asks the token's claims.
 */
describe("an empty completions list on a quiet ledger is answered without waiting out the question's deadline", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
    const rights = [{ kind: { CanReadAsAnyParty: { value: {} } } }];
    strictEqual((await call(stack, "POST", "/v2/users", { user: { id: "quiet" }, rights })).status, 200);
  });
  after(() => stack.stop());

  it("answers [] to an authorized reader well before QUESTION_DEADLINE_MS", async () => {
    strictEqual((await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset, 0);
    const asked = Date.now();
    const request = { userId: "quiet", parties: ["ghost::1220abcd"], beginExclusive: 0 };
    const reply = await call(
      stack,
      "POST",
      "/v2/commands/completions?stream_idle_timeout_ms=0",
      request,
      tokenFor("quiet"),
    );
    strictEqual(reply.status, 200, JSON.stringify(reply.body));
    deepStrictEqual(reply.body, []);
    // Not a speed target: the answer must not wait for a word that never comes.
    ok(Date.now() - asked < QUESTION_DEADLINE_MS / 2, `answered after ${Date.now() - asked} ms`);
  });
});
