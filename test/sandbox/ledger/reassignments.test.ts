import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { rejection, serviceClient } from "../sandbox-client.js";
import {
  commandId,
  commands,
  createdOf,
  createIou,
  exercise,
  IOU,
  LEDGER_SERVICES,
  type LedgerFixture,
  ledgerFixture,
  type Msg,
  readStream,
  submitTx,
  v,
  wildcard,
} from "./ledger-fixture.js";

describe("sandbox ledger: two synchronizers and reassignments", () => {
  let f: LedgerFixture;
  let bank: string;
  let alice: string;
  let outsider: string;
  let sync1: string;
  let sync2: string;
  before(async () => {
    f = await ledgerFixture();
    [sync1, sync2] = f.sandbox.store.synchronizerIds as [string, string];
    bank = await f.allocate("bank");
    alice = await f.allocate("alice");
    outsider = await f.allocate("outsider");
  });
  after(() => f.close());

  const reassign = (submitter: string, command: object, eventFormat?: object) =>
    f.command.SubmitAndWaitForReassignment!<Msg>({
      reassignmentCommands: {
        userId: "alice-app",
        commandId: commandId("re"),
        submitter,
        commands: [command],
      },
      ...(eventFormat ? { eventFormat } : {}),
    });
  const unassign = (contractId: string, source = sync1, target = sync2) => ({
    unassignCommand: { contractId, source, target },
  });
  const assign = (reassignmentId: string, source = sync1, target = sync2) => ({
    assignCommand: { reassignmentId, source, target },
  });
  const acsAt = (offset: number, parties: string[]) =>
    readStream(f.sandbox.port, "com.daml.ledger.api.v2.StateService", "GetActiveContracts", {
      activeAtOffset: String(offset),
      eventFormat: wildcard(parties),
    });

  it("unassigns and assigns a contract: inactive in between, usable on the target after", async () => {
    const created = await submitTx(f, [bank], [createIou(bank, alice, "10")]);
    strictEqual(created.synchronizerId, sync1);
    const cid = createdOf(created)[0].contractId;

    const unassigned = (await reassign(alice, unassign(cid), wildcard([bank, alice]))).reassignment;
    strictEqual(unassigned.synchronizerId, sync1);
    strictEqual(unassigned.events.length, 1);
    const u = unassigned.events[0].unassigned;
    match(u.reassignmentId, /^00[0-9a-f]{64}$/);
    deepStrictEqual(
      [u.contractId, u.source, u.target, u.submitter, u.reassignmentCounter, u.offset, u.nodeId],
      [cid, sync1, sync2, alice, "1", unassigned.offset, 0],
    );
    deepStrictEqual([...u.witnessParties].sort(), [bank, alice].sort());

    // In flight: no synchronizer to use it on.
    const inFlight = await rejection(
      f.command.SubmitAndWait!(
        commands([alice], [exercise(IOU, cid, "Transfer", v.record({ newOwner: v.party(bank) }))]),
      ),
    );
    strictEqual(inFlight.code, grpc.status.FAILED_PRECONDITION);
    strictEqual(inFlight.status.errorInfos[0]?.reason, "UNKNOWN_CONTRACT_SYNCHRONIZERS");
    match(inFlight.details, /currently unknown due to ongoing contract reassignments/);

    // The ACS between the two halves: an IncompleteUnassigned entry.
    const between = await acsAt(Number(unassigned.offset), [alice]);
    const entry = between.find((e: Msg) => e.incompleteUnassigned?.createdEvent.contractId === cid);
    strictEqual(entry?.incompleteUnassigned.unassignedEvent.reassignmentId, u.reassignmentId);
    strictEqual(
      between.some((e: Msg) => e.activeContract?.createdEvent.contractId === cid),
      false,
    );

    const assigned = (await reassign(bank, assign(u.reassignmentId), wildcard([alice]))).reassignment;
    strictEqual(assigned.synchronizerId, sync2);
    const a = assigned.events[0].assigned;
    deepStrictEqual(
      [a.source, a.target, a.reassignmentId, a.submitter, a.reassignmentCounter],
      [sync1, sync2, u.reassignmentId, bank, "1"],
    );
    strictEqual(a.createdEvent.contractId, cid);
    strictEqual(a.createdEvent.offset, assigned.offset);

    const after = await acsAt(Number(assigned.offset), [alice]);
    const active = after.find((e: Msg) => e.activeContract?.createdEvent.contractId === cid)?.activeContract;
    deepStrictEqual(
      [active?.synchronizerId, active?.reassignmentCounter, active?.createdEvent.offset],
      [sync2, "1", assigned.offset],
      "the created event as the assignment (its last activation) showed it",
    );
    const before = await acsAt(Number(created.offset), [alice]);
    const then = before.find((e: Msg) => e.activeContract?.createdEvent.contractId === cid)?.activeContract;
    deepStrictEqual([then?.synchronizerId, then?.reassignmentCounter], [sync1, "0"]);

    // Usable again, on the target: the transaction lands there.
    const transfer = await submitTx(
      f,
      [alice],
      [exercise(IOU, cid, "Transfer", v.record({ newOwner: v.party(bank) }))],
    );
    strictEqual(transfer.synchronizerId, sync2);
    const assignedTwice = await rejection(reassign(bank, assign(u.reassignmentId)));
    match(assignedTwice.details, /Cannot assign `00[0-9a-f]+`: assignment has been completed/);
  });

  it("shows reassignments in the update stream, by id, and their completions", async () => {
    const created = await submitTx(f, [bank], [createIou(bank, alice, "11")]);
    const cid = createdOf(created)[0].contractId;
    const unassigned = (await reassign(alice, unassign(cid))).reassignment;
    strictEqual(unassigned.events.length, 0, "no event format: no events");
    const reassignmentId = (
      await f.update.GetUpdateById!<Msg>({
        updateId: unassigned.updateId,
        updateFormat: { includeReassignments: wildcard([alice]) },
      })
    ).reassignment.events[0].unassigned.reassignmentId;
    const assigned = (await reassign(alice, assign(reassignmentId))).reassignment;
    const stream = await readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
      beginExclusive: String(created.offset),
      endInclusive: String(assigned.offset),
      updateFormat: {
        includeTransactions: {
          eventFormat: wildcard([bank]),
          transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
        },
        includeReassignments: wildcard([bank]),
      },
    });
    deepStrictEqual(
      stream.map((m: Msg) => [m.update, m.reassignment?.events[0].event, m.reassignment?.commandId]),
      [
        ["reassignment", "unassigned", ""],
        ["reassignment", "assigned", ""],
      ],
      "bank sees both halves, without alice's command id",
    );
    const hidden = await rejection(
      f.update.GetUpdateByOffset!({
        offset: String(assigned.offset),
        updateFormat: { includeReassignments: wildcard([outsider]) },
      }),
    );
    strictEqual(hidden.status.errorInfos[0]?.reason, "UPDATE_NOT_FOUND");
    const completions = await readStream(
      f.sandbox.port,
      LEDGER_SERVICES.completion,
      "CompletionStream",
      { userId: "alice-app", parties: [alice], beginExclusive: String(created.offset) },
      2,
    );
    deepStrictEqual(
      completions.map((c: Msg) => [c.completion.updateId, c.completion.offset, c.completion.status.code]),
      [
        [unassigned.updateId, unassigned.offset, 0],
        [assigned.updateId, assigned.offset, 0],
      ],
    );
  });

  it("refuses a reassignment by a non-stakeholder, of an unknown contract, or to the same synchronizer", async () => {
    const created = await submitTx(f, [bank], [createIou(bank, alice, "12")]);
    const cid = createdOf(created)[0].contractId;
    const notStakeholder = await rejection(reassign(outsider, unassign(cid)));
    strictEqual(notStakeholder.code, grpc.status.INVALID_ARGUMENT);
    match(
      notStakeholder.details,
      new RegExp(`invalid arguments: For \`${cid}\`: submitter \`${outsider}\` is not a stakeholder\\.`),
    );
    const wrongSource = await rejection(reassign(alice, unassign(cid, sync2, sync1)));
    match(wrongSource.details, new RegExp(`Cannot unassign contract \`${cid}\`: unknown contract`));
    const same = await rejection(reassign(alice, unassign(cid, sync1, sync1)));
    match(same.details, /source and target synchronizers are the same/);
    const unknownAssignment = await rejection(reassign(alice, assign("00abcd")));
    match(unknownAssignment.details, /Cannot assign `00abcd`: unassignment data not found/);
  });

  it("routes a transaction where its informees are hosted; a prescribed synchronizer must hold its inputs", async () => {
    const onlyOn2 = (await f.parties.AllocateParty!<Msg>({ partyIdHint: "onlyOn2", synchronizerId: sync2 }))
      .partyDetails.party;
    const onlyOn1 = (await f.parties.AllocateParty!<Msg>({ partyIdHint: "onlyOn1", synchronizerId: sync1 }))
      .partyDetails.party;
    const routed = await submitTx(f, [onlyOn2], [createIou(onlyOn2, alice, "5")]);
    strictEqual(routed.synchronizerId, sync2);
    const none = await rejection(
      f.command.SubmitAndWait!(commands([onlyOn2], [createIou(onlyOn2, onlyOn1, "5")])),
    );
    strictEqual(none.status.errorInfos[0]?.reason, "NO_COMMON_SYNCHRONIZER");
    match(none.details, /There is no common synchronizer to which all submitters can submit/);
    const interactive = serviceClient(
      f.sandbox.port,
      "com.daml.ledger.api.v2.interactive.InteractiveSubmissionService",
    );
    const prepared = await interactive.PrepareSubmission!<Msg>({
      userId: "alice-app",
      commandId: commandId("prepare"),
      actAs: [onlyOn2],
      commands: [createIou(onlyOn2, alice, "6")],
    }).finally(() => interactive.close());
    strictEqual(
      prepared.preparedTransaction.metadata.synchronizerId,
      sync2,
      "prepared where it would be routed",
    );
    const cid = createdOf(routed)[0].contractId;
    const prescribed = await rejection(
      f.command.SubmitAndWait!(
        commands([alice], [exercise(IOU, cid, "Transfer", v.record({ newOwner: v.party(onlyOn2) }))], {
          synchronizerId: sync1,
        }),
      ),
    );
    strictEqual(prescribed.status.errorInfos[0]?.reason, "INVALID_PRESCRIBED_SYNCHRONIZER_ID");
    match(prescribed.details, new RegExp(`The needed input contracts are not on ${sync1}, but on ${sync2}`));
  });
});
