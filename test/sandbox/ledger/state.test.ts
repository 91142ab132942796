import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { rejection, SERVICES } from "../sandbox-client.js";
import {
  createdOf,
  createIou,
  exercise,
  IOU,
  type LedgerFixture,
  ledgerFixture,
  type Msg,
  readStream,
  submitTx,
  v,
  wildcard,
} from "./ledger-fixture.js";

describe("sandbox ledger: active contracts, events and contracts", () => {
  let f: LedgerFixture;
  let bank: string;
  let alice: string;
  let carol: string;
  let ious: Msg[];
  let archiveTx: Msg;
  before(async () => {
    f = await ledgerFixture();
    bank = await f.allocate("bank");
    alice = await f.allocate("alice");
    carol = await f.allocate("carol");
    ious = [];
    for (const amount of ["1", "2", "3", "4", "5"]) {
      ious.push(createdOf(await submitTx(f, [bank], [createIou(bank, alice, amount)]))[0]);
    }
    archiveTx = await submitTx(f, [bank], [exercise(IOU, ious[0].contractId, "Archive", v.unit())]);
  });
  after(() => f.close());

  const acs = (request: object, count?: number) =>
    readStream(f.sandbox.port, SERVICES.state, "GetActiveContracts", request, count);
  const ids = (messages: Msg[]) => messages.map((m) => m.activeContract.createdEvent.contractId);

  it("lists the active contracts at the ledger end and at an earlier offset", async () => {
    const end = (await f.state.GetLedgerEnd!({})).offset;
    const now = await acs({ activeAtOffset: end, eventFormat: wildcard([alice]) });
    deepStrictEqual(
      ids(now),
      ious.slice(1).map((i) => i.contractId),
    );
    const entry = now[0];
    strictEqual(entry.activeContract.reassignmentCounter, "0");
    strictEqual(entry.activeContract.createdEvent.offset, ious[1].offset);
    deepStrictEqual(entry.activeContract.createdEvent.witnessParties, [alice]);
    const before = await acs({
      activeAtOffset: String(Number(archiveTx.offset) - 1),
      eventFormat: wildcard([alice]),
    });
    deepStrictEqual(
      ids(before),
      ious.map((i) => i.contractId),
    );
    deepStrictEqual(await acs({ activeAtOffset: "0", eventFormat: wildcard([alice]) }), []);
    deepStrictEqual(await acs({ activeAtOffset: end, eventFormat: wildcard([carol]) }), []);
  });

  it("resumes a snapshot after the element a continuation token was read from", async () => {
    const end = (await f.state.GetLedgerEnd!({})).offset;
    const request = { activeAtOffset: end, eventFormat: wildcard([alice]) };
    const firstTwo = await acs(request, 2);
    const rest = await acs({ ...request, streamContinuationToken: firstTwo[1].streamContinuationToken });
    deepStrictEqual(
      [...ids(firstTwo), ...ids(rest)],
      ious.slice(1).map((i) => i.contractId),
    );
    const error = await rejection(
      acs({
        activeAtOffset: String(Number(end) - 1),
        eventFormat: wildcard([alice]),
        streamContinuationToken: firstTwo[1].streamContinuationToken,
      }),
    );
    strictEqual(error.status.errorInfos[0]?.reason, "INVALID_ARGUMENT");
  });

  it("rejects a snapshot offset after the ledger end", async () => {
    const error = await rejection(acs({ activeAtOffset: "100000", eventFormat: wildcard([alice]) }));
    strictEqual(error.status.errorInfos[0]?.reason, "OFFSET_AFTER_LEDGER_END");
  });

  it("pages the snapshot at the ledger end by default, reporting the offset", async () => {
    const end = (await f.state.GetLedgerEnd!({})).offset;
    const first = await f.state.GetActiveContractsPage!({ eventFormat: wildcard([alice]), maxPageSize: 3 });
    strictEqual(first.activeAtOffset, end);
    strictEqual((first.activeContracts as Msg[]).length, 3);
    ok(first.nextPageToken);
    const second = await f.state.GetActiveContractsPage!({
      eventFormat: wildcard([alice]),
      maxPageSize: 3,
      activeAtOffset: end,
      pageToken: first.nextPageToken,
    });
    deepStrictEqual(
      [...ids(first.activeContracts as Msg[]), ...ids(second.activeContracts as Msg[])],
      ious.slice(1).map((i) => i.contractId),
    );
    strictEqual(second.nextPageToken, undefined);
  });

  it("returns a contract's create and archive events, or CONTRACT_EVENTS_NOT_FOUND", async () => {
    const archived = await f.eventQuery.GetEventsByContractId!({
      contractId: ious[0].contractId,
      eventFormat: wildcard([alice]),
    });
    strictEqual((archived.created as Msg).createdEvent.contractId, ious[0].contractId);
    strictEqual((archived.archived as Msg).archivedEvent.offset, archiveTx.offset);
    const active = await f.eventQuery.GetEventsByContractId!({
      contractId: ious[1].contractId,
      eventFormat: wildcard([alice]),
    });
    strictEqual(active.archived, null);
    const error = await rejection(
      f.eventQuery.GetEventsByContractId!({ contractId: ious[1].contractId, eventFormat: wildcard([carol]) }),
    );
    strictEqual(error.status.errorInfos[0]?.reason, "CONTRACT_EVENTS_NOT_FOUND");
  });

  it("returns a contract by id for stakeholders, or CONTRACT_PAYLOAD_NOT_FOUND", async () => {
    const response = await f.contract.GetContract!({
      contractId: ious[2].contractId,
      queryingParties: [alice, carol],
    });
    const event = response.createdEvent as Msg;
    deepStrictEqual(event.witnessParties, [alice]);
    ok(event.createdEventBlob.length > 0);
    strictEqual(event.acsDelta, false);
    const error = await rejection(
      f.contract.GetContract!({ contractId: ious[2].contractId, queryingParties: [carol] }),
    );
    strictEqual(error.status.errorInfos[0]?.reason, "CONTRACT_PAYLOAD_NOT_FOUND");
  });
});
