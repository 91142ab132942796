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
