import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.js";
import { ACCOUNT, allocate, call, IOU, userFor, wildcard } from "./ledger-client.js";

type Json = Record<string, any>;

describe("commands through the gateway", () => {
  let stack: Stack;
  let bank: string;
  let alice: string;
  let bob: string;
  let bankToken: string;
  let aliceToken: string;
  let bothToken: string;

  const iou = (owner: string, amount: string) => ({
    CreateCommand: {
      templateId: IOU,
      createArguments: { issuer: bank, owner, currency: "EUR", amount, observers: [] },
    },
  });

  before(async () => {
    stack = await startStack();
    bank = await allocate(stack, "bank");
    alice = await allocate(stack, "alice");
    bob = await allocate(stack, "bob");
    bankToken = await userFor(stack, "bank-user", [bank]);
    aliceToken = await userFor(stack, "alice-user", [alice]);
    bothToken = await userFor(stack, "bank-alice-user", [bank, alice]);
  });
  after(() => stack.stop());

  it("submit-and-wait answers the update id and completion offset", async () => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      { commandId: "saw-1", actAs: [bank], commands: [iou(alice, "10")] },
      bankToken,
    );
    assert.equal(reply.status, 200);
    assert.match(reply.body.updateId, /^[0-9a-f]+$/);
    assert.equal(typeof reply.body.completionOffset, "number");
  });

  it("submit-and-wait-for-transaction answers the transaction with typed payloads", async () => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-transaction",
      { commands: { commandId: "sawt-1", actAs: [bank], commands: [iou(alice, "12.5")] } },
      bankToken,
    );
    assert.equal(reply.status, 200);
    const created = reply.body.transaction.events[0].CreatedEvent;
    assert.deepEqual(created.createArgument, {
      issuer: bank,
      owner: alice,
      currency: "EUR",
      amount: "12.5000000000",
      observers: [],
    });
    assert.match(created.templateId, /^[0-9a-f]{64}:Iou:Iou$/);
    assert.deepEqual(created.signatories, [bank]);
    assert.equal(reply.body.transaction.commandId, "sawt-1");
  });

  it("submit-and-wait-for-transaction-tree answers events by node id with choice results", async () => {
    const created = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-transaction",
      { commands: { commandId: "tree-setup", actAs: [bank], commands: [iou(alice, "100")] } },
      bankToken,
    );
    const contractId = created.body.transaction.events[0].CreatedEvent.contractId;
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-transaction-tree",
      {
        commandId: "tree-1",
        actAs: [alice],
        commands: [
          {
            ExerciseCommand: {
              templateId: IOU,
              contractId,
              choice: "Split",
              choiceArgument: { splitAmount: 30 },
            },
          },
        ],
      },
      aliceToken,
    );
    assert.equal(reply.status, 200);
    const tree = reply.body.transactionTree;
    const root = tree.eventsById["0"].ExercisedTreeEvent.value;
    assert.equal(root.choice, "Split");
    assert.deepEqual(root.choiceArgument, { splitAmount: "30.0000000000" });
    assert.deepEqual(Object.keys(root.exerciseResult).sort(), ["restCid", "splitCid"]);
    assert.equal(root.lastDescendantNodeId, 2);
    assert.ok(tree.eventsById["1"].CreatedTreeEvent && tree.eventsById["2"].CreatedTreeEvent);
  });

  it("submits several commands atomically for several parties", async () => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-transaction",
      {
        commands: {
          commandId: "multi-1",
          actAs: [bank, alice],
          commands: [
            iou(alice, "1"),
            {
              CreateAndExerciseCommand: {
                templateId: IOU,
                createArguments: { issuer: bank, owner: alice, currency: "USD", amount: "5", observers: [] },
                choice: "Transfer",
                choiceArgument: { newOwner: bob },
              },
            },
          ],
        },
        transactionFormat: {
          eventFormat: wildcard([bank, alice]),
          transactionShape: "TRANSACTION_SHAPE_LEDGER_EFFECTS",
        },
      },
      bothToken,
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const kinds = reply.body.transaction.events.map((e: Json) => Object.keys(e)[0]);
    assert.deepEqual(kinds, ["CreatedEvent", "CreatedEvent", "ExercisedEvent", "CreatedEvent"]);
  });

  it("refuses a command for a party the user may not act as (403 before the ledger runs it)", async () => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      { commandId: "denied-1", actAs: [bank], commands: [iou(alice, "1")] },
      aliceToken,
    );
    assert.equal(reply.status, 403);
  });

  it("rejects a command the model does not authorize, with the ledger's error", async () => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      // alice may act as alice, but an Iou needs its issuer's signature.
      {
        commandId: "unauthorized-1",
        actAs: [alice],
        commands: [
          {
            CreateCommand: {
              templateId: IOU,
              createArguments: { issuer: bank, owner: alice, currency: "EUR", amount: "1", observers: [] },
            },
          },
        ],
      },
      aliceToken,
    );
    assert.equal(reply.status, 400);
    assert.equal(reply.body.errorCategory, 8);
    assert.match(reply.body.code, /AUTHORIZATION/);
  });

  it("answers an ill-typed argument with 400 INVALID_ARGUMENT naming the JSON path", async () => {
    const reply = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      {
        commandId: "typed-1",
        actAs: [bank],
        commands: [
          {
            CreateCommand: {
              templateId: IOU,
              createArguments: { issuer: bank, owner: alice, currency: "EUR", amount: true, observers: [] },
            },
          },
        ],
      },
      bankToken,
    );
    assert.equal(reply.status, 400);
    assert.equal(reply.body.code, "INVALID_ARGUMENT");
    assert.match(
      reply.body.cause,
      /commands\[0\]\.CreateCommand\.createArguments\.amount: expected Numeric, got true/,
    );
  });

  const submit = (commandId: string, command: unknown) =>
    call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      { commandId, actAs: [bank], commands: [command] },
      bankToken,
    );
  /** The body with its trace id checked and put aside: the gateway's errors name the request's trace. */
  const untraced = (body: Json) => {
    assert.match(String(body.traceId), /^[0-9a-f]{32}$/);
    return { ...body, traceId: null };
  };
  const notFound = (id: string) => ({
    code: "TEMPLATES_OR_INTERFACES_NOT_FOUND",
    cause: `Templates do not exist: [${id}].`,
    correlationId: null,
    traceId: null,
    context: {},
    resources: [["TEMPLATE_ID", id]],
    errorCategory: 11,
    grpcCodeValue: 5,
    retryInfo: null,
    definiteAnswer: false,
  });

  it("answers a template its package does not define with 404 TEMPLATES_OR_INTERFACES_NOT_FOUND, naming the package id", async () => {
    const reply = await submit("unknown-1", {
      CreateCommand: { templateId: "#gateway-samples:Iou:Nope", createArguments: {} },
    });
    assert.equal(reply.status, 404);
    const packageId = /^([0-9a-f]{64}):/.exec(reply.body.resources?.[0]?.[1] ?? "")?.[1];
    assert.ok(packageId, JSON.stringify(reply.body));
    assert.deepEqual(untraced(reply.body), notFound(`${packageId}:Iou:Nope`));
  });

  it("answers a package the ledger does not have with 404 TEMPLATES_OR_INTERFACES_NOT_FOUND", async () => {
    const id = `${"ab".repeat(32)}:Iou:Iou`;
    const reply = await submit("unknown-2", { CreateCommand: { templateId: id, createArguments: {} } });
    assert.equal(reply.status, 404);
    assert.deepEqual(untraced(reply.body), notFound(id));
    const exercise = await submit("unknown-3", {
      ExerciseCommand: { templateId: id, contractId: "00aa", choice: "Archive", choiceArgument: {} },
    });
    assert.equal(exercise.status, 404);
    assert.deepEqual(untraced(exercise.body), notFound(id));
  });

  it("answers a key of a template without one with 404 TEMPLATES_OR_INTERFACES_NOT_FOUND", async () => {
    const reply = await submit("unknown-4", {
      ExerciseByKeyCommand: { templateId: IOU, contractKey: {}, choice: "Archive", choiceArgument: {} },
    });
    assert.equal(reply.status, 404);
    assert.equal(reply.body.code, "TEMPLATES_OR_INTERFACES_NOT_FOUND");
    assert.match(reply.body.cause, /^Templates do not exist: \[[0-9a-f]{64}:Iou:Iou\]\.$/);
  });

  it("answers an unknown choice, or a choice of an unknown template, with Canton's 400 wording", async () => {
    for (const [templateId, entity] of [
      [IOU, "Iou"],
      ["#gateway-samples:Iou:Nope", "Nope"],
    ] as const) {
      const reply = await submit(`unknown-choice-${entity}`, {
        ExerciseCommand: { templateId, contractId: "00aa", choice: "NoSuchChoice", choiceArgument: {} },
      });
      assert.equal(reply.status, 400);
      assert.equal(reply.body.code, "INVALID_ARGUMENT");
      assert.match(
        reply.body.cause,
        new RegExp(
          `^The submitted request has invalid arguments: Invalid template:[0-9a-f]{64}:Iou:${entity} or choice:NoSuchChoice$`,
        ),
      );
      assert.equal(reply.body.definiteAnswer, false);
    }
  });

  it("deduplicates a command id within its deduplication period", async () => {
    const body = { commandId: "dedup-1", actAs: [bank], commands: [iou(alice, "2")] };
    assert.equal((await call(stack, "POST", "/v2/commands/submit-and-wait", body, bankToken)).status, 200);
    const second = await call<Json>(stack, "POST", "/v2/commands/submit-and-wait", body, bankToken);
    assert.equal(second.status, 409);
    assert.equal(second.body.code, "DUPLICATE_COMMAND");
  });

  it("exercises by key and reads a contract and its events", async () => {
    const created = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-transaction",
      {
        commands: {
          commandId: "account-1",
          actAs: [bank],
          commands: [
            {
              CreateCommand: {
                templateId: ACCOUNT,
                createArguments: { bank, holder: alice, number: "A-1", balance: "0" },
              },
            },
          ],
        },
      },
      bankToken,
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const event = created.body.transaction.events[0].CreatedEvent;
    assert.deepEqual(event.contractKey, { bank, number: "A-1" });

    const deposit = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-transaction",
      {
        commands: {
          commandId: "deposit-1",
          actAs: [alice],
          commands: [
            {
              ExerciseByKeyCommand: {
                templateId: ACCOUNT,
                contractKey: { bank, number: "A-1" },
                choice: "Deposit",
                choiceArgument: { amount: "7" },
              },
            },
          ],
        },
      },
      bothToken,
    );
    assert.equal(deposit.status, 200, JSON.stringify(deposit.body));

    const events = await call<Json>(
      stack,
      "POST",
      "/v2/events/events-by-contract-id",
      { contractId: event.contractId, eventFormat: wildcard([alice]) },
      aliceToken,
    );
    assert.equal(events.status, 200);
    assert.equal(events.body.created.createdEvent.contractId, event.contractId);
    assert.equal(events.body.archived.archivedEvent.contractId, event.contractId);

    const contract = await call<Json>(
      stack,
      "POST",
      "/v2/contracts/contract-by-id",
      { contractId: event.contractId, queryingParties: [alice] },
      aliceToken,
    );
    assert.equal(contract.status, 200, JSON.stringify(contract.body));
    assert.equal(contract.body.createdEvent.createArgument.number, "A-1");

    const missing = await call<Json>(
      stack,
      "POST",
      "/v2/events/events-by-contract-id",
      { contractId: "00ff", eventFormat: wildcard([alice]) },
      aliceToken,
    );
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, "CONTRACT_EVENTS_NOT_FOUND");
  });

  it("async submit answers {} and the outcome shows on the completion stream", async () => {
    const ok = await call<Json>(
      stack,
      "POST",
      "/v2/commands/async/submit",
      { commandId: "async-ok", userId: "bank-user", actAs: [bank], commands: [iou(alice, "3")] },
      bankToken,
    );
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, {});
    // Interpretation fails the call itself, as on Canton.
    const missing = await call<Json>(
      stack,
      "POST",
      "/v2/commands/async/submit",
      {
        commandId: "async-missing",
        userId: "bank-user",
        actAs: [bank],
        commands: [
          {
            ExerciseCommand: { templateId: IOU, contractId: "00dead", choice: "Archive", choiceArgument: {} },
          },
        ],
      },
      bankToken,
    );
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, "CONTRACT_NOT_FOUND");
    // A rejection after acceptance (here: a duplicate) arrives as a failed completion.
    const duplicate = await call<Json>(
      stack,
      "POST",
      "/v2/commands/async/submit",
      { commandId: "async-ok", userId: "bank-user", actAs: [bank], commands: [iou(alice, "3")] },
      bankToken,
    );
    assert.equal(duplicate.status, 200);

    const completions = await call<Json[]>(
      stack,
      "POST",
      "/v2/commands/completions?stream_idle_timeout_ms=1000",
      { userId: "bank-user", parties: [bank], beginExclusive: 0 },
      bankToken,
    );
    assert.equal(completions.status, 200);
    const outcomes = completions.body
      .map((c) => c.completionResponse.Completion?.value)
      .filter((c) => c?.commandId === "async-ok");
    assert.equal(outcomes.length, 2);
    assert.match(outcomes[0].updateId, /^[0-9a-f]+$/);
    assert.equal(outcomes[0].status.code, 0);
    assert.equal(outcomes[1].status.code, 6, "ALREADY_EXISTS");
    assert.match(outcomes[1].status.message, /DUPLICATE_COMMAND/);
    assert.equal(outcomes[1].updateId ?? "", "");
    assert.ok(outcomes[1].status.details.length > 0, "the rejection carries Canton's error details");
  });

  it("passes the ledger's refusal of a reassignment through (400 with Canton's error)", async () => {
    const body = {
      reassignmentCommands: {
        commandId: "reassign-1",
        submitter: bank,
        commands: [
          { command: { UnassignCommand: { value: { contractId: "00ab", source: "s", target: "t" } } } },
        ],
      },
    };
    for (const path of [
      "/v2/commands/submit-and-wait-for-reassignment",
      "/v2/commands/async/submit-reassignment",
    ]) {
      const answer = await call<Json>(stack, "POST", path, body, bankToken);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.code, "INVALID_FIELD");
      assert.match(answer.body.cause, /Invalid field source/);
    }
  });
});
