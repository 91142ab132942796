import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { rejection } from "../sandbox-client.js";
import {
  ASSET,
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
  TICK,
  txFormat,
  v,
  wildcard,
} from "./ledger-fixture.js";

describe("sandbox ledger: updates", () => {
  let f: LedgerFixture;
  let bank: string;
  let alice: string;
  let bob: string;
  let carol: string;
  /** Offsets: the create (bank issues to alice, bob observes) and the split by alice. */
  let createTx: Msg;
  let splitTx: Msg;
  before(async () => {
    f = await ledgerFixture();
    bank = await f.allocate("bank");
    alice = await f.allocate("alice");
    bob = await f.allocate("bob");
    carol = await f.allocate("carol");
    createTx = await submitTx(f, [bank], [createIou(bank, alice, "100", "USD", [bob])]);
    const cid = createdOf(createTx)[0].contractId;
    splitTx = await submitTx(
      f,
      [alice],
      [exercise(IOU, cid, "Split", v.record({ splitAmount: v.numeric("40") }))],
    );
  });
  after(() => f.close());

  const updates = (request: object, count?: number) =>
    readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", request, count);
  const transactionsFor = (eventFormat: object, shape: string) => ({
    includeTransactions: txFormat(eventFormat, shape),
  });
  const bounded = (updateFormat: object, extra: object = {}) => ({
    beginExclusive: "0",
    endInclusive: String(splitTx.offset),
    updateFormat,
    ...extra,
  });
  const transactions = (messages: Msg[]) => messages.filter((m) => m.transaction).map((m) => m.transaction);
  const kinds = (tx: Msg) => tx.events.map((e: Msg) => e.event);

  it("ACS_DELTA: creates and archives for stakeholders, archived witnesses = stakeholders ∩ requested", async () => {
    const txs = transactions(
      await updates(bounded(transactionsFor(wildcard([bob]), "TRANSACTION_SHAPE_ACS_DELTA"))),
    );
    deepStrictEqual(
      txs.map((tx) => [tx.offset, kinds(tx)]),
      [
        [createTx.offset, ["created"]],
        [splitTx.offset, ["archived", "created", "created"]],
      ],
    );
    const archived = txs[1].events[0].archived;
    deepStrictEqual(archived.witnessParties, [bob]);
    strictEqual(archived.nodeId, 0);
    strictEqual(txs[1].events[1].created.nodeId, 1);
    strictEqual(txs[1].events[1].created.acsDelta, true);
    strictEqual(txs[1].commandId, "", "bob did not submit: no command id");
  });

  it("LEDGER_EFFECTS: exercises and creates with witnesses; non-stakeholder readers see nothing", async () => {
    const txs = transactions(
      await updates(bounded(transactionsFor(wildcard([alice, carol]), "TRANSACTION_SHAPE_LEDGER_EFFECTS"))),
    );
    strictEqual(txs.length, 2);
    const [exercised] = txs[1].events;
    strictEqual(exercised.exercised.choice, "Split");
    deepStrictEqual(exercised.exercised.witnessParties, [alice]);
    strictEqual(exercised.exercised.acsDelta, true);
    strictEqual(txs[1].commandId !== "", true, "alice submitted the split");
    const none = transactions(
      await updates(bounded(transactionsFor(wildcard([carol]), "TRANSACTION_SHAPE_ACS_DELTA"))),
    );
    deepStrictEqual(none, []);
  });

  it("filters by template, by interface with its view, for any party, and without labels unless verbose", async () => {
    const byTemplate = {
      filtersByParty: {
        [alice]: { cumulative: [{ templateFilter: { templateId: TICK, includeCreatedEventBlob: false } }] },
      },
    };
    deepStrictEqual(
      transactions(await updates(bounded(transactionsFor(byTemplate, "TRANSACTION_SHAPE_ACS_DELTA")))),
      [],
    );
    const byInterface = {
      filtersByParty: {
        [alice]: {
          cumulative: [
            {
              interfaceFilter: {
                interfaceId: ASSET,
                includeInterfaceView: true,
                includeCreatedEventBlob: true,
              },
            },
          ],
        },
      },
      verbose: false,
    };
    const [first] = transactions(
      await updates(bounded(transactionsFor(byInterface, "TRANSACTION_SHAPE_ACS_DELTA"))),
    );
    const created = first.events[0].created;
    strictEqual(created.interfaceViews.length, 1);
    deepStrictEqual(created.interfaceViews[0].interfaceId, ASSET);
    strictEqual(created.interfaceViews[0].viewStatus.code, 0);
    deepStrictEqual(
      created.interfaceViews[0].viewValue.fields.map((field: Msg) => [
        field.label,
        Object.values(field.value)[0],
      ]),
      [
        ["", alice],
        ["", `100.0000000000 USD issued by ${bank}`],
      ],
    );
    ok(created.createdEventBlob.length > 0);
    strictEqual(created.createArguments.fields[0].label, "");
    strictEqual(created.createArguments.recordId, null);
    const anyParty = {
      filtersForAnyParty: { cumulative: [{ wildcardFilter: { includeCreatedEventBlob: false } }] },
    };
    const all = transactions(
      await updates(bounded(transactionsFor(anyParty, "TRANSACTION_SHAPE_ACS_DELTA"))),
    );
    deepStrictEqual(all[0].events[0].created.witnessParties, [bank, alice, bob]);
    strictEqual(all[0].events[0].created.createdEventBlob.length, 0);
  });

  it("rejects a filter naming an unknown template with TEMPLATES_OR_INTERFACES_NOT_FOUND", async () => {
    const unknown = {
      filtersByParty: {
        [alice]: { cumulative: [{ templateFilter: { templateId: { ...TICK, entityName: "Nope" } } }] },
      },
    };
    const error = await rejection(updates(bounded(transactionsFor(unknown, "TRANSACTION_SHAPE_ACS_DELTA"))));
    strictEqual(error.status.errorInfos[0]?.reason, "TEMPLATES_OR_INTERFACES_NOT_FOUND");
  });

  it("includes topology events (party allocations) when asked", async () => {
    const messages = await updates(
      bounded({ includeTopologyEvents: { includeParticipantAuthorizationEvents: { parties: [alice] } } }),
    );
    strictEqual(messages.length, 1);
    const event = messages[0].topologyTransaction.events[0].participantAuthorizationAdded;
    strictEqual(event.partyId, alice);
    strictEqual(event.participantPermission, "PARTICIPANT_PERMISSION_SUBMISSION");
  });

  it("streams in descending order with endInclusive, and requires it", async () => {
    const format = transactionsFor(wildcard([alice]), "TRANSACTION_SHAPE_ACS_DELTA");
    const txs = transactions(await updates(bounded(format, { descendingOrder: true })));
    deepStrictEqual(
      txs.map((tx) => tx.offset),
      [splitTx.offset, createTx.offset],
    );
    const error = await rejection(
      updates({ beginExclusive: "0", updateFormat: format, descendingOrder: true }),
    );
    strictEqual(error.status.errorInfos[0]?.reason, "DESCENDING_ORDER_MISSING_END");
  });

  it("rejects offsets after the ledger end", async () => {
    const end = Number((await f.state.GetLedgerEnd!({})).offset);
    const format = transactionsFor(wildcard([alice]), "TRANSACTION_SHAPE_ACS_DELTA");
    const error = await rejection(updates({ beginExclusive: String(end + 5), updateFormat: format }));
    strictEqual(error.status.errorInfos[0]?.reason, "OFFSET_AFTER_LEDGER_END");
  });

  it("keeps an open-ended stream live: later transactions arrive, then checkpoints while idle", async () => {
    const end = (await f.state.GetLedgerEnd!({})).offset;
    const received = updates(
      {
        beginExclusive: end,
        updateFormat: transactionsFor(wildcard([carol]), "TRANSACTION_SHAPE_ACS_DELTA"),
      },
      2,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const tx = await submitTx(f, [bank], [createIou(bank, carol, "1")]);
    const [first, second] = await received;
    strictEqual(first.transaction.offset, tx.offset);
    strictEqual(second.offsetCheckpoint.offset, tx.offset);
    deepStrictEqual(
      second.offsetCheckpoint.synchronizerTimes.map((t: Msg) => t.synchronizerId),
      f.sandbox.store.synchronizerIds,
      "the time of each connected synchronizer",
    );
  });

  it("looks updates up by offset and by id, and answers UPDATE_NOT_FOUND when nothing is visible", async () => {
    const format = { includeTransactions: txFormat(wildcard([alice]), "TRANSACTION_SHAPE_LEDGER_EFFECTS") };
    const byOffset = await f.update.GetUpdateByOffset!({ offset: splitTx.offset, updateFormat: format });
    strictEqual((byOffset.transaction as Msg).updateId, splitTx.updateId);
    const byId = await f.update.GetUpdateById!({ updateId: createTx.updateId, updateFormat: format });
    strictEqual((byId.transaction as Msg).offset, createTx.offset);
    const hidden = { includeTransactions: txFormat(wildcard([carol]), "TRANSACTION_SHAPE_ACS_DELTA") };
    const error = await rejection(
      f.update.GetUpdateById!({ updateId: createTx.updateId, updateFormat: hidden }),
    );
    strictEqual(error.status.errorInfos[0]?.reason, "UPDATE_NOT_FOUND");
    const missing = await rejection(f.update.GetUpdateByOffset!({ offset: "999999", updateFormat: format }));
    strictEqual(missing.status.errorInfos[0]?.reason, "UPDATE_NOT_FOUND");
  });

  it("pages updates forwards and backwards with page tokens", async () => {
    const format = { includeTopologyEvents: { includeParticipantAuthorizationEvents: { parties: [] } } };
    const first = await f.update.GetUpdatesPage!({ maxPageSize: 3, updateFormat: format });
    strictEqual((first.updates as Msg[]).length, 3);
    ok(first.nextPageToken);
    const second = await f.update.GetUpdatesPage!({
      maxPageSize: 3,
      updateFormat: format,
      pageToken: first.nextPageToken,
    });
    const parties = [...(first.updates as Msg[]), ...(second.updates as Msg[])].map(
      (u) => u.topologyTransaction.events[0].participantAuthorizationAdded.partyId,
    );
    deepStrictEqual(parties, [bank, alice, bob, carol]);
    strictEqual(second.nextPageToken, undefined);
    const backwards = await f.update.GetUpdatesPage!({
      maxPageSize: 2,
      updateFormat: format,
      descendingOrder: true,
      endOffsetInclusive: "4",
    });
    deepStrictEqual(
      (backwards.updates as Msg[]).map((u) => u.topologyTransaction.offset),
      ["4", "3"],
    );
    strictEqual(backwards.lowestPageOffsetExclusive, "2");
    ok(backwards.nextPageToken);
  });

  it("answers SubmitAndWaitForTransaction in ACS_DELTA for actAs and readAs by default, verbose", async () => {
    const response = await f.command.SubmitAndWaitForTransaction!(
      commands([bank], [createIou(bank, alice, "2")], { readAs: [alice] }),
    );
    const created = (response.transaction as Msg).events[0].created;
    deepStrictEqual(created.witnessParties, [bank, alice]);
    strictEqual(created.createArguments.fields[0].label, "issuer");
  });
});
