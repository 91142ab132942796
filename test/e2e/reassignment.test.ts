import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { assertCantonShape } from "./canton-shapes.js";
import { allocate, call, createIouTransaction, IOU, userFor, wildcard } from "./ledger-client.js";
import { openStream } from "./open-stream.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads JSON answers loosely
type Json = Record<string, any>;

const fits = assertCantonShape;

/** What an update frame is: its kind and, for a reassignment, its event kinds. */
const describeUpdate = (frame: Json): string | undefined => {
  const update = frame.update;
  if (update?.Transaction) return "Transaction";
  if (update?.Reassignment) {
    return `Reassignment(${update.Reassignment.value.events.map((e: Json) => Object.keys(e)[0]).join(",")})`;
  }
  if (update?.TopologyTransaction) return "TopologyTransaction";
  return undefined;
};

describe("two synchronizers through the gateway: reassignment and topology events", () => {
  let stack: Stack;
  let bank: string;
  let alice: string;
  let bankToken: string;
  let aliceToken: string;
  let readerToken: string;
  let sync1: string;
  let sync2: string;

  before(async () => {
    stack = await startStack();
    bank = await allocate(stack, "bank");
    alice = await allocate(stack, "alice");
    bankToken = await userFor(stack, "bank-user", [bank]);
    aliceToken = await userFor(stack, "alice-user", [alice]);
    await call(stack, "POST", "/v2/users", {
      user: { id: "topology-reader" },
      rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }],
    });
    readerToken = tokenFor("topology-reader");
    const connected = await call<Json>(stack, "GET", "/v2/state/connected-synchronizers");
    [sync1, sync2] = connected.body.connectedSynchronizers.map((s: Json) => s.synchronizerId);
  });
  after(() => stack.stop());

  const updatesFor = (party: string, beginExclusive: number) => ({
    beginExclusive,
    updateFormat: {
      includeTransactions: {
        eventFormat: wildcard([party]),
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
      includeReassignments: wildcard([party]),
    },
  });

  it("lists both synchronizers, and a party's permission on each", async () => {
    const connected = await call<Json>(
      stack,
      "GET",
      `/v2/state/connected-synchronizers?party=${encodeURIComponent(alice)}`,
    );
    assert.deepEqual(
      connected.body.connectedSynchronizers.map((s: Json) => [s.synchronizerAlias, s.permission]),
      [
        ["synchronizer-1", "PARTICIPANT_PERMISSION_SUBMISSION"],
        ["synchronizer-2", "PARTICIPANT_PERMISSION_SUBMISSION"],
      ],
    );
  });

  it("moves a contract from one synchronizer to the other, seen in order on every stakeholder's WebSocket stream", async () => {
    const start = (await call<Json>(stack, "GET", "/v2/state/ledger-end")).body.offset as number;
    const bankStream = await openStream(stack, "/v2/updates", updatesFor(bank, start), bankToken);
    const aliceStream = await openStream(stack, "/v2/updates", updatesFor(alice, start), aliceToken);

    const created = await createIouTransaction(stack, bankToken, "reassign-create", {
      issuer: bank,
      owner: alice,
      currency: "CHF",
      amount: "7",
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.transaction.synchronizerId, sync1);
    const contractId = created.body.transaction.events[0].CreatedEvent.contractId as string;

    const peeking = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-reassignment",
      {
        reassignmentCommands: {
          commandId: "reassign-peek",
          submitter: alice,
          commands: [
            { command: { UnassignCommand: { value: { contractId, source: sync1, target: sync2 } } } },
          ],
        },
        eventFormat: wildcard([bank]),
      },
      aliceToken,
    );
    assert.equal(peeking.status, 403, "reading bank's events needs a right on bank");

    const unassigned = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait-for-reassignment",
      {
        reassignmentCommands: {
          commandId: "reassign-out",
          submitter: alice,
          commands: [
            { command: { UnassignCommand: { value: { contractId, source: sync1, target: sync2 } } } },
          ],
        },
        eventFormat: wildcard([alice]),
      },
      aliceToken,
    );
    assert.equal(unassigned.status, 200, JSON.stringify(unassigned.body));
    fits("JsSubmitAndWaitForReassignmentResponse", unassigned.body);
    const reassignment = unassigned.body.reassignment;
    assert.equal(reassignment.synchronizerId, sync1);
    assert.equal(reassignment.commandId, "reassign-out");
    const event = reassignment.events[0].JsUnassignedEvent.value;
    assert.deepEqual(
      [event.contractId, event.source, event.target, event.submitter, event.reassignmentCounter],
      [contractId, sync1, sync2, alice, 1],
    );
    assert.equal(event.templateId.endsWith(":Iou:Iou"), true, event.templateId);

    // The ACS between the two halves: the contract is an incomplete unassignment.
    const between = await call<Json[]>(
      stack,
      "POST",
      "/v2/state/active-contracts",
      { activeAtOffset: reassignment.offset, eventFormat: wildcard([alice]) },
      aliceToken,
    );
    assert.equal(between.status, 200, JSON.stringify(between.body));
    for (const element of between.body) fits("JsGetActiveContractsResponse", element);
    const entry = between.body.find(
      (e) => e.contractEntry.JsIncompleteUnassigned?.createdEvent.contractId === contractId,
    );
    assert.ok(entry, JSON.stringify(between.body));
    assert.equal(
      entry.contractEntry.JsIncompleteUnassigned.unassignedEvent.reassignmentId,
      event.reassignmentId,
    );

    const assign = await call<Json>(
      stack,
      "POST",
      "/v2/commands/async/submit-reassignment",
      {
        reassignmentCommands: {
          commandId: "reassign-in",
          submitter: bank,
          commands: [
            {
              command: {
                AssignCommand: {
                  value: { reassignmentId: event.reassignmentId, source: sync1, target: sync2 },
                },
              },
            },
          ],
        },
      },
      bankToken,
    );
    assert.equal(assign.status, 200, JSON.stringify(assign.body));
    assert.deepEqual(assign.body, {});
    fits("SubmitReassignmentResponse", assign.body);

    const expected = ["Transaction", "Reassignment(JsUnassignedEvent)", "Reassignment(JsAssignmentEvent)"];
    for (const stream of [bankStream, aliceStream]) {
      const frames = await stream.waitFor((f) => f.map(describeUpdate).filter(Boolean).length >= 3);
      stream.close();
      assert.deepEqual(frames.map(describeUpdate).filter(Boolean), expected);
      for (const frame of frames) fits("JsGetUpdatesResponse", frame);
      const assigned = frames.find((f) => describeUpdate(f) === expected[2])!.update.Reassignment.value;
      const a = assigned.events[0].JsAssignmentEvent;
      assert.deepEqual(
        [assigned.synchronizerId, a.source, a.target, a.reassignmentId, a.submitter, a.reassignmentCounter],
        [sync2, sync1, sync2, event.reassignmentId, bank, 1],
      );
      assert.equal(a.createdEvent.contractId, contractId);
      assert.equal(a.createdEvent.createArgument.amount, "7.0000000000");
    }

    const now = await call<Json[]>(
      stack,
      "POST",
      "/v2/state/active-contracts",
      {
        activeAtOffset: (await call<Json>(stack, "GET", "/v2/state/ledger-end")).body.offset,
        eventFormat: wildcard([alice]),
      },
      aliceToken,
    );
    for (const element of now.body) fits("JsGetActiveContractsResponse", element);
    const active = now.body.find(
      (e) => e.contractEntry.JsActiveContract?.createdEvent.contractId === contractId,
    )?.contractEntry.JsActiveContract;
    assert.deepEqual([active?.synchronizerId, active?.reassignmentCounter], [sync2, 1]);

    // The same reassignment by id, in the deprecated tree stream, and as completions.
    const byId = await call<Json>(
      stack,
      "POST",
      "/v2/updates/update-by-id",
      { updateId: reassignment.updateId, updateFormat: { includeReassignments: wildcard([bank]) } },
      bankToken,
    );
    assert.equal(byId.status, 200, JSON.stringify(byId.body));
    fits("JsGetUpdateResponse", byId.body);
    assert.equal(
      byId.body.update.Reassignment.value.events[0].JsUnassignedEvent.value.reassignmentId,
      event.reassignmentId,
    );
    const end = (await call<Json>(stack, "GET", "/v2/state/ledger-end")).body.offset as number;
    const trees = await call<Json[]>(
      stack,
      "POST",
      "/v2/updates/trees",
      {
        beginExclusive: start,
        endInclusive: end,
        filter: { filtersByParty: wildcard([bank]).filtersByParty },
      },
      bankToken,
    );
    assert.equal(trees.status, 200, JSON.stringify(trees.body));
    for (const element of trees.body) fits("JsGetUpdateTreesResponse", element);
    assert.deepEqual(
      trees.body.map((f) => Object.keys(f.update)[0]),
      ["TransactionTree", "Reassignment", "Reassignment"],
    );
    const completions = await call<Json[]>(
      stack,
      "POST",
      "/v2/commands/completions",
      { userId: "bank-user", parties: [bank], beginExclusive: start },
      bankToken,
    );
    for (const element of completions.body) fits("CompletionStreamResponse", element);
    const assignedCompletion = completions.body
      .map((c) => c.completionResponse.Completion?.value)
      .find((c) => c?.commandId === "reassign-in");
    assert.equal(assignedCompletion?.status?.code, 0, JSON.stringify(completions.body));
    assert.equal(assignedCompletion?.synchronizerTime.synchronizerId, sync2);

    // Used on the source synchronizer, named explicitly: Canton's routing error.
    const wrong = await call<Json>(
      stack,
      "POST",
      "/v2/commands/submit-and-wait",
      {
        commandId: "reassign-wrong-synchronizer",
        actAs: [alice],
        synchronizerId: sync1,
        commands: [
          {
            ExerciseCommand: {
              templateId: IOU,
              contractId,
              choice: "Transfer",
              choiceArgument: { newOwner: bank },
            },
          },
        ],
      },
      aliceToken,
    );
    assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
    fits("JsCantonError", wrong.body);
    assert.equal(wrong.body.code, "INVALID_PRESCRIBED_SYNCHRONIZER_ID");
    assert.match(
      wrong.body.cause,
      new RegExp(`The needed input contracts are not on ${sync1}, but on ${sync2}`),
    );
  });

  it("delivers a party allocation as a topology event on a stream that asks for them", async () => {
    const start = (await call<Json>(stack, "GET", "/v2/state/ledger-end")).body.offset as number;
    const stream = await openStream(
      stack,
      "/v2/updates",
      {
        beginExclusive: start,
        updateFormat: { includeTopologyEvents: { includeParticipantAuthorizationEvents: { parties: [] } } },
      },
      readerToken,
    );
    const newcomer = await allocate(stack, "newcomer");
    const frames = await stream.waitFor((f) =>
      f.some((frame) => describeUpdate(frame) === "TopologyTransaction"),
    );
    stream.close();
    for (const frame of frames) fits("JsGetUpdatesResponse", frame);
    const topology = frames.find((f) => describeUpdate(f) === "TopologyTransaction")!.update
      .TopologyTransaction.value;
    assert.equal(topology.synchronizerId, sync1);
    assert.deepEqual(topology.events, [
      {
        event: {
          ParticipantAuthorizationAdded: {
            value: {
              partyId: newcomer,
              participantId: (await call<Json>(stack, "GET", "/v2/parties/participant-id")).body
                .participantId,
              participantPermission: "PARTICIPANT_PERMISSION_SUBMISSION",
            },
          },
        },
      },
    ]);
  });
});
