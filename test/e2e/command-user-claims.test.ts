import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { allocate, call, IOU, userFor, wildcard } from "./ledger-client.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read freely
type Json = Record<string, any>;

/**
 * Issue 35, finding F2: the sandbox checks what Canton 3.5's Ledger API checks of a request's
 * user id and of a submission's transaction format (CommandCompletionServiceAuthorization,
 * RequiredClaims.submissionClaims, getSubmitAndWaitForTransactionClaims), seen through the
 * gateway as a client sees it: 403 (PERMISSION_DENIED, gRPC code 7) and nothing committed.
 */
describe("the ledger's user id and transaction format claims, through the gateway", () => {
  let stack: Stack;
  let alice: string;
  let bob: string;
  /** CanActAs bob. */
  let bobToken: string;
  /** CanReadAs bob: reads bob's data, not user bob-user's completions. */
  let eveToken: string;
  /** CanReadAsAnyParty. */
  let superToken: string;

  const createIou = (issuer: string, commandId: string, userId?: string) => ({
    commandId,
    ...(userId === undefined ? {} : { userId }),
    actAs: [issuer],
    commands: [
      {
        CreateCommand: {
          templateId: IOU,
          createArguments: { issuer, owner: issuer, currency: "EUR", amount: "1", observers: [] },
        },
      },
    ],
  });

  /** The command ids of `userId`'s completions for `parties`, read by `token`; or the refusal. */
  const completions = async (token: string, userId: string, parties: string[]) => {
    const reply = await call<Json[] | Json>(
      stack,
      "POST",
      "/v2/commands/completions?stream_idle_timeout_ms=500",
      { userId, parties, beginExclusive: 0 },
      token,
    );
    const ids = Array.isArray(reply.body)
      ? reply.body.flatMap((c) => {
          const completion = c.completionResponse?.Completion?.value;
          return completion ? [`${completion.userId}/${completion.commandId}`] : [];
        })
      : [];
    return { status: reply.status, body: reply.body, ids };
  };

  const refused = (reply: { status: number; body: unknown }, what: string) => {
    assert.equal(reply.status, 403, `${what}: ${JSON.stringify(reply.body)}`);
    assert.equal((reply.body as Json).grpcCodeValue, 7, what);
  };

  before(async () => {
    stack = await startStack();
    alice = await allocate(stack, "claims-alice");
    bob = await allocate(stack, "claims-bob");
    await userFor(stack, "alice-user", [alice]);
    bobToken = await userFor(stack, "bob-user", [bob]);
    eveToken = await userFor(stack, "eve", [], [bob]);
    const created = await call(stack, "POST", "/v2/users", {
      user: { id: "super-reader" },
      rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }],
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    superToken = tokenFor("super-reader");
    const committed = await call(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      createIou(bob, "bob-private", "bob-user"),
      bobToken,
    );
    assert.equal(committed.status, 200, JSON.stringify(committed.body));
  });
  after(() => stack.stop());

  it("refuses another user's completions to a reader of the parties (403), and serves its own", async () => {
    refused(await completions(eveToken, "bob-user", [bob]), "eve reading bob-user's completions");
    const own = await completions(eveToken, "eve", [bob]);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.deepEqual(own.ids, []);
    // An empty user id is the token's own user, not anyone else's.
    const defaulted = await completions(eveToken, "", [bob]);
    assert.equal(defaulted.status, 200, JSON.stringify(defaulted.body));
    assert.deepEqual(defaulted.ids, []);
    const bobs = await completions(bobToken, "bob-user", [bob]);
    assert.deepEqual(bobs.ids, ["bob-user/bob-private"]);
  });

  it("serves any user's completions to a reader of any party", async () => {
    const read = await completions(superToken, "bob-user", [bob]);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual(read.ids, ["bob-user/bob-private"]);
  });

  it("refuses a submission in another user's name on every command endpoint, and commits nothing", async () => {
    refused(
      await call(
        stack,
        "POST",
        "/v2/commands/submit-and-wait",
        createIou(bob, "as-alice-1", "alice-user"),
        bobToken,
      ),
      "submit-and-wait",
    );
    refused(
      await call(
        stack,
        "POST",
        "/v2/commands/async/submit",
        createIou(bob, "as-alice-2", "alice-user"),
        bobToken,
      ),
      "async submit",
    );
    refused(
      await call(
        stack,
        "POST",
        "/v2/commands/submit-and-wait-for-transaction",
        { commands: createIou(bob, "as-alice-3", "alice-user") },
        bobToken,
      ),
      "submit-and-wait-for-transaction",
    );
    const credited = await completions(superToken, "alice-user", [bob, alice]);
    assert.equal(credited.status, 200, JSON.stringify(credited.body));
    assert.deepEqual(credited.ids, []);
    const bobs = await completions(bobToken, "bob-user", [bob]);
    assert.deepEqual(bobs.ids, ["bob-user/bob-private"]);
  });

  it("refuses a transaction format with a party the submitter cannot read, or any party, before committing", async () => {
    const shape = "TRANSACTION_SHAPE_ACS_DELTA";
    const forAnyParty = {
      filtersForAnyParty: { cumulative: [{ identifierFilter: { WildcardFilter: { value: {} } } }] },
    };
    for (const [label, eventFormat] of [
      ["any-party", forAnyParty],
      ["alice", wildcard([alice])],
      ["bob-and-alice", wildcard([bob, alice])],
    ] as const) {
      refused(
        await call(
          stack,
          "POST",
          "/v2/commands/submit-and-wait-for-transaction",
          {
            commands: createIou(bob, `format-${label}`),
            transactionFormat: { eventFormat, transactionShape: shape },
          },
          bobToken,
        ),
        `a format on ${label}`,
      );
    }
    const bobs = await completions(bobToken, "bob-user", [bob]);
    assert.deepEqual(bobs.ids, ["bob-user/bob-private"]);
    const readable = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-transaction",
      {
        commands: createIou(bob, "format-bob"),
        transactionFormat: { eventFormat: wildcard([bob]), transactionShape: shape },
      },
      bobToken,
    );
    assert.equal(readable.status, 200, JSON.stringify(readable.body));
    assert.equal(readable.body.transaction.commandId, "format-bob");
  });
});
