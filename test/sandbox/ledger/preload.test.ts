import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SERVICES } from "../sandbox-client.js";
import {
  LEDGER_SERVICES,
  type LedgerFixture,
  ledgerFixture,
  type Msg,
  readStream,
  TICK,
  txFormat,
  wildcard,
} from "./ledger-fixture.js";

describe("sandbox ledger: tick preload", () => {
  let f: LedgerFixture;
  before(async () => {
    f = await ledgerFixture({ preload: { ticks: 500, payloadBytes: 16, party: "ticker" } });
  });
  after(() => f.close());

  it("creates one Bench:Tick transaction per tick, owned by the reported party", async () => {
    const preloaded = f.sandbox.preloaded!;
    strictEqual(preloaded.ticks, 500);
    strictEqual(preloaded.party.startsWith("ticker::1220"), true);
    deepStrictEqual([preloaded.firstOffset, preloaded.lastOffset], [2, 501]);
    deepStrictEqual(await f.state.GetLedgerEnd!({}), { offset: "501" });
  });

  it("streams the ticks as transactions and lists them as active contracts", async () => {
    const party = f.sandbox.preloaded!.party;
    const updates = await readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
      beginExclusive: "0",
      endInclusive: "501",
      updateFormat: { includeTransactions: txFormat(wildcard([party]), "TRANSACTION_SHAPE_ACS_DELTA") },
    });
    strictEqual(updates.length, 500);
    const last = updates[499].transaction.events[0].created;
    deepStrictEqual(last.templateId, TICK);
    deepStrictEqual(
      last.createArguments.fields.map((field: Msg) => Object.values(field.value)[0]),
      [party, "500", "x".repeat(16)],
    );
    // A second pass is served from the encoded cache: the same messages.
    const again = await readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
      beginExclusive: "0",
      endInclusive: "501",
      updateFormat: { includeTransactions: txFormat(wildcard([party]), "TRANSACTION_SHAPE_ACS_DELTA") },
    });
    deepStrictEqual(again, updates);
    const acs = await readStream(f.sandbox.port, SERVICES.state, "GetActiveContracts", {
      activeAtOffset: "501",
      eventFormat: wildcard([party]),
    });
    strictEqual(acs.length, 500);
  });
});

describe("sandbox ledger: tick preload, several per transaction", () => {
  let f: LedgerFixture;
  before(async () => {
    f = await ledgerFixture({
      preload: { ticks: 25, payloadBytes: 8, party: "batcher", perTransaction: 10 },
    });
  });
  after(() => f.close());

  it("groups the ticks into transactions of perTransaction create events (the last one shorter)", async () => {
    const { party, firstOffset, lastOffset } = f.sandbox.preloaded!;
    strictEqual(lastOffset - firstOffset + 1, 3);
    const updates = await readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
      beginExclusive: "0",
      endInclusive: String(lastOffset),
      updateFormat: { includeTransactions: txFormat(wildcard([party]), "TRANSACTION_SHAPE_ACS_DELTA") },
    });
    deepStrictEqual(
      updates.map((u: Msg) => u.transaction.events.length),
      [10, 10, 5],
    );
    deepStrictEqual(
      updates[2].transaction.events.map((e: Msg) => e.created.nodeId),
      [0, 1, 2, 3, 4],
    );
  });
});
